#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs inside the test VM (scripts/vm-run.sh): installs the freshly built
# module and provider into the guest's RAM overlay, then runs every
# selftest binary given (default: all of build/selftests), each under a
# timeout. The kselftest TAP output is the result; scripts/check.sh counts it.
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${XIW_IN_VM:-}" ]; then
	echo "run_vm.sh: runs inside the test VM; use make check" >&2
	exit 2
fi
"$repo/scripts/install.sh" --prepared "$repo/build/vm/modroot" ||
	{ echo "Bail out! install failed"; exit 1; }
modprobe -a ib_uverbs iw_cm rdma_ucm dummy tun ||
	{ echo "Bail out! base modules"; exit 1; }

tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=("$repo"/build/selftests/xiw_*)
rc=0
for t in "${tests[@]}"; do
	echo "# selftest: $(basename "$t")"
	timeout -k 5 900 "$t"
	st=$?
	echo "# exit: $(basename "$t") $st"
	# kselftest exit codes: 0 pass, 4 skip; anything else fails.
	[ $st -eq 0 ] || [ $st -eq 4 ] || rc=1
done
exit $rc
