#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# make check: set-up, build, static checks, host tests, VM selftests, the
# hostile suites on the debug kernel when it is built, two guests.
# make check-debug (--debug): set-up, the debug kernel (built if not
# cached), user space, xiw.ko for it, every VM selftest on it.
# Every check is one or more named results; the last line is the total:
#   N passed, N failed[, N skipped]
#
#   scripts/check.sh [--debug]
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
debug_only=
case ${1:-} in
'') ;;
--debug) debug_only=1 ;;
*) echo "usage: $0 [--debug]" >&2; exit 2 ;;
esac
# The selftests make check also runs on the debug kernel, when it is
# cached: those that feed the kernel hostile input or tear objects down
# mid-flight, where memory and locking bugs hide. One without a source
# file (not built) is left out.
DEBUG_SUITES="xiw_peer xiw_scribble xiw_link xiw_module xiw_teardown xiw_fault"
# Selftests that only a kernel with fault injection can run: left out of
# the stock kernel's run (every test of theirs would skip there).
DEBUG_ONLY="xiw_fault"
# The whole guest run on the debug kernel: DEBUG_SUITES, and every
# selftest for make check-debug.
DEBUG_VM_TIMEOUT=${XIW_DEBUG_VM_TIMEOUT:-3600}
DEBUG_ALL_VM_TIMEOUT=${XIW_DEBUG_VM_TIMEOUT:-7200}
# Lockdep reports once per boot, then turns itself off. The kernel's siw,
# the peer these load, has a lock inversion lockdep reports
# (siw_cm_llp_data_ready() read-locks sk_callback_lock with softirqs on
# when siw's accept work runs TCP's backlog): make check-debug runs them
# last, so that lockdep still watches every other program.
SIW_SUITES="xiw_interop xiw_tools"
if [ -n "$debug_only" ]; then
	logs=$repo/build/check-debug
else
	logs=$repo/build/check
	# Everything is built from clean (before logs/ exists: clean removes
	# build/). make check-debug keeps the tree: it builds the user-space
	# parts only, and its module in build/debug.
	make -s clean > /dev/null 2>&1
fi
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

# The TAP results of one guest's output, as named results "PREFIX: ..."
# (default "vm"); sets ntap. A selftest that reports fewer results than its
# plan fails as well.
tap_results() {	# tap_results OUTPUT-LOG [PREFIX]
	local out=$1 cur= line plan= got=0
	tp=${2:-vm}
	ntap=0
	[ -s "$out" ] || return 0
	while IFS= read -r line; do
		case $line in
		"# selftest: "*)
			tap_plan_check "$cur" "$plan" "$got"
			cur=${line#\# selftest: } plan= got=0 ;;
		1..[0-9]*) plan=${line#1..} ;;
		"ok "*"# SKIP"*) result skip "$tp: $cur: $(cut -d' ' -f3 <<< "$line")"; ntap=$((ntap + 1)); got=$((got + 1)) ;;
		"ok "*) result pass "$tp: $cur: $(cut -d' ' -f3 <<< "$line")"; ntap=$((ntap + 1)); got=$((got + 1)) ;;
		"not ok "*) result fail "$tp: $cur: $(cut -d' ' -f4 <<< "$line")"; ntap=$((ntap + 1)); got=$((got + 1)) ;;
		"Bail out!"*) result fail "$tp: $cur: $line" ;;
		"# exit: "*)
			set -- ${line#\# exit: }
			[ "$2" = 0 ] || [ "$2" = 4 ] ||
				grep -q "^not ok" <(sed -n "/^# selftest: $1\$/,/^# exit: $1 /p" "$out") ||
				result fail "$tp: $1 exited $2 without a failed test" ;;
		esac
	done < "$out"
	tap_plan_check "$cur" "$plan" "$got"
}
tap_plan_check() {	# tap_plan_check SELFTEST PLAN RESULTS
	[ -n "$1" ] && [ -n "$2" ] && [ "$3" -lt "$2" ] &&
		result fail "$tp: $1: $3 results of the $2 planned"
	return 0
}
# The debug kernel's lane: xiw.ko built for it, its module tree, the
# given selftests in one guest (selftests/run_vm.sh adds a kernel log and
# a kmemleak result after each), the guest's whole kernel log. Results are
# named "vm debug: ...", logs in build/vm/debug.
debug_lane() {	# debug_lane KDIR VM-TIMEOUT SELFTEST...
	local kdir=$1 vm_timeout=$2 dkrel rc
	shift 2
	dkrel=$(cat "$kdir/release")
	rm -f build/debug/xiw.ko
	step "vm debug: build: xiw.ko against $dkrel (W=1, make module-debug)" \
		no_diagnostics "$logs/kbuild-debug.out" make module-debug DEBUG_KDIR="$kdir"
	[ -e build/debug/xiw.ko ] || return 0
	if ! XIW_VM_KDIR=$kdir scripts/vm-modules.sh "$dkrel" build/debug/modroot \
		> "$logs/vm-debug-modules.log" 2>&1; then
		result fail "vm debug: module index for the guest" "$logs/vm-debug-modules.log"
		return 0
	fi
	XIW_VM_KDIR=$kdir scripts/vm-run.sh -n debug -t "$vm_timeout" -- \
		selftests/run_vm.sh "$@" > "$logs/vm-debug.log" 2>&1
	rc=$?
	tap_results build/vm/debug/output.log "vm debug"
	[ "$ntap" -gt 0 ] || result fail "vm debug: no selftest result" "$logs/vm-debug.log"
	case $rc in
	0|1) result pass "vm debug: kernel log clean (no WARNING/BUG/Oops/hung task, KASAN/UBSAN/lockdep/ODEBUG/kmemleak report)" ;;
	*) result fail "vm debug: run failed (vm-run.sh exit $rc; logs in build/vm/debug)" "$logs/vm-debug.log" ;;
	esac
}

echo "== set-up"
if ! ksrc=$(scripts/setup.sh 2> "$logs/setup.log" | tail -n 1); then
	result fail "set-up (scripts/setup.sh)" "$logs/setup.log"
	summary
fi
krel=$(scripts/kernel-release.sh)
export KSRC=$ksrc KREL=$krel

if [ -n "$debug_only" ]; then
	echo "== debug kernel (scripts/debug-kernel.sh)"
	scripts/debug-kernel.sh --cached > /dev/null ||
		echo "building it: about 13 minutes on 2 cores, once per machine" \
			"(log: build/check-debug/debug-kernel.log)"
	if dkdir=$(scripts/debug-kernel.sh 2> "$logs/debug-kernel.log" | tail -n 1) &&
	   [ -e "$dkdir/.complete" ]; then
		result pass "debug kernel: $dkdir"
	else
		result fail "debug kernel (scripts/debug-kernel.sh)" "$logs/debug-kernel.log"
		summary
	fi
	echo "== build"
	step "build: provider libxiw-rdmav34.so (-Werror)" make provider
	step "build: selftests" make selftests
	if [ "$fail" -gt 0 ]; then
		summary
	fi
	echo "== VM selftests on the debug kernel (QEMU, panic_on_warn=1)"
	progs=()
	for t in build/selftests/xiw_*; do
		case " $SIW_SUITES " in
		*" ${t##*/} "*) ;;
		*) progs+=("$t") ;;
		esac
	done
	for s in $SIW_SUITES; do
		[ -e "build/selftests/$s" ] && progs+=("build/selftests/$s")
	done
	debug_lane "$dkdir" "$DEBUG_ALL_VM_TIMEOUT" "${progs[@]}"
	echo "== logs: build/check-debug, build/vm/debug"
	summary
fi

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
# Nothing refers outside the tree; requirement IDs resolve (requirements.rst).
step "lint: references (scripts/check-refs.py)" scripts/check-refs.py

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
stock=()
for t in build/selftests/xiw_*; do
	case " $DEBUG_ONLY " in
	*" ${t##*/} "*) ;;
	*) stock+=("$t") ;;
	esac
done
scripts/vm-run.sh -n selftests -t 2400 -- selftests/run_vm.sh "${stock[@]}" \
	> "$logs/vm.log" 2>&1
vm_rc=$?
tap_results build/vm/selftests/output.log
[ "$ntap" -gt 0 ] || result fail "vm: no selftest result" "$logs/vm.log"
# The run itself: timeout, a guest that died, or a kernel warning.
case $vm_rc in
0|1) result pass "vm: kernel log clean (no WARNING/BUG/Oops/hung task)" ;;
*) result fail "vm: run failed (vm-run.sh exit $vm_rc; logs in build/vm/selftests)" "$logs/vm.log" ;;
esac

echo "== hostile suites on the debug kernel (KASAN, lockdep, kmemleak)"
if dkdir=$(scripts/debug-kernel.sh --cached 2> /dev/null); then
	suites=()
	for s in $DEBUG_SUITES; do
		[ -e "selftests/$s.c" ] && suites+=("build/selftests/$s")
	done
	debug_lane "$dkdir" "$DEBUG_VM_TIMEOUT" "${suites[@]}"
else
	echo "debug kernel not built, lane skipped: make check-debug builds it (once) and runs every selftest on it"
fi

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
