#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# make soak: teardown under traffic on the debug kernel (KASAN, lockdep,
# kmemleak). Set up, build, boot one VM with the cached debug kernel
# (scripts/debug-kernel.sh --cached; make check-debug builds it) and run
# selftests/xiw_soak with XIW_SOAK_ROUNDS (default 100) rounds of each
# of its ten tests: 64 KiB Writes, Reads and Sends on XIW_SOAK_QPS
# (default 8) connections, xiw to xiw and xiw to xiw-wirepeer, torn down
# by rdma link delete, netdev removal, rmmod, network namespace exit and
# kill -9. scripts/guest/run_vm.sh adds the kernel log and kmemleak
# verdict after the program. Output: build/vm/soak/output.log.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$XIW_REPO"
rounds=${XIW_SOAK_ROUNDS:-100}
qps=${XIW_SOAK_QPS:-8}
if ! kdir=$(scripts/debug-kernel.sh --cached 2> /dev/null); then
	echo "soak: the debug kernel is not built (make check-debug builds it, once)"
	exit 1
fi
xiw_prepare
make -s module-debug DEBUG_KDIR="$kdir"
XIW_VM_KDIR=$kdir scripts/vm-modules.sh "$(cat "$kdir/release")" build/debug/modroot
# A round took 30-70 s on the debug kernel under TCG; the program's
# own limit (each test: 60 s + 120 s a round) stays inside these.
prog_timeout=${XIW_SOAK_TIMEOUT:-$((600 + rounds * 10 * 130))}
echo "== soak: $rounds rounds of each test, $qps connections (debug kernel, QEMU, panic_on_warn=1)"
export XIW_VM_KDIR=$kdir
xiw_vm_campaign soak $((prog_timeout + 900)) "^(ok|not ok) |^# time:" \
	"$rounds rounds each, kernel log and kmemleak clean" -- \
	env XIW_SOAK_ROUNDS="$rounds" XIW_SOAK_QPS="$qps" \
	XIW_TEST_TIMEOUT="$prog_timeout" \
	scripts/guest/run_vm.sh build/selftests/xiw_soak
