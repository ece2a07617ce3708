#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# make check: set-up, build, static checks, host tests, VM selftests.
# Every check is one or more named results; the last line is the total:
#   N passed, N failed[, N skipped]
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
logs=$repo/build/check
# Everything is built from clean (before logs/ exists: clean removes build/).
make -s clean > /dev/null 2>&1
mkdir -p "$logs"
pass=0 fail=0 skip=0

result() {	# result pass|fail|skip NAME [DETAIL-FILE]
	case $1 in
	pass) pass=$((pass + 1)); echo "PASS: $2" ;;
	skip) skip=$((skip + 1)); echo "SKIP: $2" ;;
	*) fail=$((fail + 1)); echo "FAIL: $2"
	   [ -n "${3:-}" ] && [ -s "$3" ] && sed 's/^/    /' "$3" | tail -n 40 ;;
	esac
}

summary() {
	if [ "$skip" -gt 0 ]; then
		echo "$pass passed, $fail failed, $skip skipped"
	else
		echo "$pass passed, $fail failed"
	fi
	[ "$fail" -eq 0 ]
	exit
}

# A check that runs a command; "pass" iff it exits 0.
step() {	# step NAME COMMAND...
	local name=$1 log
	shift
	log=$logs/$(echo "$name" | tr -c 'A-Za-z0-9_.\n-' '_').log
	if "$@" > "$log" 2>&1; then result pass "$name"
	else result fail "$name" "$log"; fi
}

# Lines naming a compiler/sparse diagnostic; any is a failure.
no_diagnostics() {	# no_diagnostics LOG COMMAND...
	local log=$1
	shift
	"$@" > "$log" 2>&1 || return 1
	! grep -E '(warning|error):' "$log"
}

echo "== set-up"
if ! ksrc=$(scripts/setup.sh 2> "$logs/setup.log" | tail -n 1); then
	result fail "set-up (scripts/setup.sh)" "$logs/setup.log"
	summary
fi
krel=$(scripts/kernel-release.sh)
export KSRC=$ksrc KREL=$krel

echo "== build"
step "build: xiw.ko with W=1, no warnings" \
	no_diagnostics "$logs/kbuild-w1.out" make module
step "build: provider libxiw-rdmav34.so (-Werror)" make provider
step "build: selftests" make selftests
# The interoperability selftests need the in-tree siw, built out of tree.
step "build: siw.ko (reference peer, scripts/siw-build.sh)" \
	scripts/siw-build.sh "$krel"
if [ "$fail" -gt 0 ]; then
	summary
fi

echo "== static checks"
# sparse over every driver file (C=2 checks even up-to-date objects).
step "lint: sparse (make C=2)" no_diagnostics "$logs/sparse.out" \
	make -C "/lib/modules/$krel/build" M="$repo" C=2 CHECK=sparse W=1 modules
for f in $(git ls-files 'drivers/infiniband/sw/xiw/*.[ch]' include/uapi/rdma/); do
	step "lint: checkpatch --strict $f" perl "$ksrc/scripts/checkpatch.pl" \
		--no-tree --strict --show-types --terse -f "$f"
done
step "lint: clang-tidy (userspace)" cmake --build build/userspace --target tidy

echo "== host tests (ctest)"
ctest --test-dir build/userspace --output-on-failure > "$logs/ctest.log" 2>&1
while IFS= read -r line; do
	name=$(sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) .*/\1/' <<< "$line")
	case $line in
	*" Passed"*) result pass "host: $name" ;;
	*"Not Run"*|*Skipped*) result skip "host: $name" ;;
	*) result fail "host: $name" "$logs/ctest.log" ;;
	esac
done < <(grep -E '^ *[0-9]+/[0-9]+ Test +#' "$logs/ctest.log")
grep -qE '^ *[0-9]+/[0-9]+ Test +#' "$logs/ctest.log" ||
	result fail "host: ctest ran no test" "$logs/ctest.log"

echo "== VM selftests (QEMU, panic_on_warn=1)"
scripts/vm-modules.sh "$krel" build/vm/modroot > "$logs/vm-modules.log" 2>&1 ||
	result fail "vm: module index for the guest" "$logs/vm-modules.log"
scripts/vm-run.sh -n selftests -t 2400 -- selftests/run_vm.sh \
	> "$logs/vm.log" 2>&1
vm_rc=$?
# The TAP results of one guest's output, as named results; sets ntap.
# A selftest that reports fewer results than its plan fails as well.
tap_results() {	# tap_results OUTPUT-LOG
	local out=$1 cur= line plan= got=0
	ntap=0
	[ -s "$out" ] || return 0
	while IFS= read -r line; do
		case $line in
		"# selftest: "*)
			tap_plan_check "$cur" "$plan" "$got"
			cur=${line#\# selftest: } plan= got=0 ;;
		1..[0-9]*) plan=${line#1..} ;;
		"ok "*"# SKIP"*) result skip "vm: $cur: $(cut -d' ' -f3 <<< "$line")"; ntap=$((ntap + 1)); got=$((got + 1)) ;;
		"ok "*) result pass "vm: $cur: $(cut -d' ' -f3 <<< "$line")"; ntap=$((ntap + 1)); got=$((got + 1)) ;;
		"not ok "*) result fail "vm: $cur: $(cut -d' ' -f4 <<< "$line")"; ntap=$((ntap + 1)); got=$((got + 1)) ;;
		"Bail out!"*) result fail "vm: $cur: $line" ;;
		"# exit: "*)
			set -- ${line#\# exit: }
			[ "$2" = 0 ] || [ "$2" = 4 ] ||
				grep -q "^not ok" <(sed -n "/^# selftest: $1\$/,/^# exit: $1 /p" "$out") ||
				result fail "vm: $1 exited $2 without a failed test" ;;
		esac
	done < "$out"
	tap_plan_check "$cur" "$plan" "$got"
}
tap_plan_check() {	# tap_plan_check SELFTEST PLAN RESULTS
	[ -n "$1" ] && [ -n "$2" ] && [ "$3" -lt "$2" ] &&
		result fail "vm: $1: $3 results of the $2 planned"
	return 0
}
tap_results build/vm/selftests/output.log
[ "$ntap" -gt 0 ] || result fail "vm: no selftest result" "$logs/vm.log"
# The run itself: timeout, a guest that died, or a kernel warning.
case $vm_rc in
0|1) result pass "vm: kernel log clean (no WARNING/BUG/Oops/hung task)" ;;
*) result fail "vm: run failed (vm-run.sh exit $vm_rc; logs in build/vm/selftests)" "$logs/vm.log" ;;
esac

echo "== two guests on one link (QEMU, panic_on_warn=1)"
scripts/vm-pair.sh -t 900 -- selftests/xiw_pair.sh > "$logs/vm-pair.log" 2>&1
pair_rc=$?
tap_results build/vm/pair-a/output.log
na=$ntap
tap_results build/vm/pair-b/output.log
[ $((na + ntap)) -gt 0 ] || result fail "vm pair: no result" "$logs/vm-pair.log"
case $pair_rc in
0|1) result pass "vm pair: kernel logs clean (no WARNING/BUG/Oops/hung task)" ;;
*) result fail "vm pair: run failed (vm-pair.sh exit $pair_rc; logs in build/vm/pair-{a,b})" "$logs/vm-pair.log" ;;
esac
echo "== logs: build/check, build/vm/selftests, build/vm/pair-{a,b}"
summary
