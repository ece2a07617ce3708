#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# make check: set-up, build, static checks, host tests, VM selftests, the
# hostile suites on the debug kernel when it is built, two guests.
# make check-debug (--debug): set-up, the debug kernel (built if not
# cached), user space, xiw.ko for it, every VM selftest on it.
# Every check is one or more results, each naming its test. A skip
# counts only if scripts/expected-skips lists it with its reason; any
# other skip fails. A run that was run again (the listen race, see
# scripts/lib.sh) is named on the line before the last, which is the
# total:
#   N reruns[: NAME (WHY); ...]
#   N passed, N failed, N skipped
#
#   scripts/check.sh [--debug]
#   scripts/check.sh --parse TAP-LOG PREFIX   (only read one guest's TAP)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
repo=$XIW_REPO
cd "$repo"
debug_only= parse_only=
case ${1:-} in
'') ;;
--debug) debug_only=1 ;;
--parse) parse_only=1 ;;
*) echo "usage: $0 [--debug | --parse TAP-LOG PREFIX]" >&2; exit 2 ;;
esac
# The selftests make check also runs on the debug kernel, when it is
# cached: hostile input from the wire and from user space, and objects
# torn down mid-flight, where memory and locking bugs hide. One without
# a source file (not built) is left out. The lane has a budget
# (DEBUG_LANE_TIMEOUT): with xiw_link, xiw_module, xiw_netns and
# xiw_fault too it ran past an hour on a 2-core TCG host and took the
# whole make check past 90 minutes; make check-debug runs those.
# xiw_modfault (the module's init with each allocation failing): 55-67 s.
DEBUG_SUITES="xiw_peer xiw_scribble xiw_teardown xiw_modfault"
# Selftests that only a kernel with fault injection can run: left out of
# the stock kernel's run (every test of theirs would skip there).
DEBUG_ONLY="xiw_fault xiw_modfault"
# Selftests whose leak check reads the allocation site of every live
# object (slub_debug=U, which SLUB then records): a boot of their own on
# Debian's kernel, apart from the programs whose speed it would change.
TRACED_SUITES="xiw_scribble"
# The whole guest run on the debug kernel: make check's lane
# (DEBUG_SUITES: guest programs 134 + 173 + 181 s, the lane about 15
# minutes with its build, on 2026-12-04), a program in a boot of its own and
# every other selftest for make check-debug.
DEBUG_LANE_TIMEOUT=${XIW_DEBUG_LANE_TIMEOUT:-1500}
DEBUG_VM_TIMEOUT=${XIW_DEBUG_VM_TIMEOUT:-3600}
DEBUG_ALL_VM_TIMEOUT=${XIW_DEBUG_VM_TIMEOUT:-7200}
# Lockdep reports once per boot, then turns itself off. The kernel's siw,
# the peer these load, has a lock inversion lockdep reports
# (siw_cm_llp_data_ready() read-locks sk_callback_lock with softirqs on
# when siw's accept work runs TCP's backlog; scripts/lib.sh knows that
# report): make check-debug runs each in a boot of its own after all the
# others, so that lockdep watches every program that does not load siw,
# and each of these up to siw's report.
SIW_SUITES="xiw_interop xiw_tools"
# What the 6.12 lane's guest (Debian 13's user space) runs: about half of
# the stock run's time, chosen to cover what the kernel interfaces that
# differ reach (CQ creation, zero-copy transmit), the kernel's own pieces
# under xiw (rdma_cm, iw_cm, TCP, netdev, namespaces and module life, a
# kernel ULP) and Debian 13's own programs (rping, ucmatose, perftest,
# qperf; against 6.12's siw too).
LANE2_SUITES=${XIW_LANE2_SUITES:-"xiw_verbs xiw_uverbs xiw_counters xiw_rdma xiw_link xiw_module xiw_teardown xiw_netns xiw_nvme xiw_tools"}
EXPECTED_SKIPS=${XIW_EXPECTED_SKIPS:-$repo/scripts/expected-skips}
if [ -n "$parse_only" ]; then
	:
elif [ -n "$debug_only" ]; then
	logs=$repo/build/check-debug
else
	logs=$repo/build/check
	# Everything is built from clean (before logs/ exists: clean removes
	# build/). make check-debug keeps the tree: it builds the user-space
	# parts only, and its module in build/debug.
	make -s clean > /dev/null 2>&1
fi
[ -n "$parse_only" ] || mkdir -p "$logs"
pass=0 fail=0 skip=0
reruns=()

result() {	# result pass|fail NAME [DETAIL-FILE]; result skip NAME REASON
	case $1 in
	pass) pass=$((pass + 1)); echo "PASS: $2" ;;
	skip)
		if expected_skip "$2" "$3"; then
			skip=$((skip + 1)); echo "SKIP: $2 # $3"
		else
			fail=$((fail + 1))
			echo "FAIL: $2: skipped, and not an expected skip (scripts/expected-skips): ${3:-no reason given}"
		fi ;;
	*) fail=$((fail + 1)); echo "FAIL: $2"
	   [ -n "${3:-}" ] && [ -s "$3" ] && sed 's/^/    /' "$3" | tail -n 40 ;;
	esac
}

# Is "NAME # SKIP REASON" in the list of expected skips?
expected_skip() {	# expected_skip NAME REASON
	local line pat rpat
	[ -r "$EXPECTED_SKIPS" ] || return 1
	while IFS= read -r line; do
		case $line in '#'*|'') continue ;; esac
		pat=${line%% # SKIP *} rpat=${line#* # SKIP }
		[ "$pat" != "$line" ] || continue
		# shellcheck disable=SC2053
		[[ $1 == $pat && $2 == $rpat ]] && return 0
	done < "$EXPECTED_SKIPS"
	return 1
}

summary() {
	local r line="${#reruns[@]} reruns" sep=": "
	for r in "${reruns[@]}"; do
		line+="$sep$r" sep="; "
	done
	echo "$line"
	echo "$pass passed, $fail failed, $skip skipped"
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

# The TAP results of one guest's output, as named results "PREFIX:
# PROGRAM: TEST"; sets ntap. kselftest's harness names a skipped test
# only in its "#  RUN" line ("ok N # SKIP reason"): the name comes from
# there. A result no name can be found for fails, and so does a selftest
# that reports fewer results than its plan. "# RERUN:" lines before a
# result are that test's reruns. A failed test's own lines (from its
# "#  RUN" on) are printed under its FAIL line: a CI log then says why.
tap_results() {	# tap_results OUTPUT-LOG PREFIX
	local out=$1 cur= line plan= got=0 run= pending=() re
	body=()
	tp=$2
	ntap=0
	[ -s "$out" ] || return 0
	re='^(not )?ok ([0-9]+) *([^#]*)(# *(SKIP|skip) *(.*))?$'
	while IFS= read -r line; do
		case $line in
		"# selftest: "*)
			tap_plan_check "$cur" "$plan" "$got"
			cur=${line#\# selftest: } plan= got=0 run= pending=() ;;
		"#  RUN "*)
			run=${line#\#  RUN }
			run=${run#"${run%%[! ]*}"}
			run=${run% ...} body=() ;;
		"# RERUN: "*) pending+=("${line#\# RERUN: }") ;;
		1..[0-9]*) plan=${line#1..} ;;
		"ok "*|"not ok "*)
			ntap=$((ntap + 1)) got=$((got + 1))
			if ! [[ $line =~ $re ]]; then
				result fail "$tp: $cur: result $got: cannot read: $line"
				continue
			fi
			tap_one "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" \
				"${BASH_REMATCH[3]}" "${BASH_REMATCH[5]}" \
				"${BASH_REMATCH[6]}" "$run"
			run= pending=() body=() ;;
		"Bail out!"*) result fail "$tp: $cur: $line" ;;
		"# exit: "*)
			set -- ${line#\# exit: }
			[ "$2" = 0 ] || [ "$2" = 4 ] ||
				grep -q "^not ok" <(sed -n "/^# selftest: $1\$/,/^# exit: $1 /p" "$out") ||
				result fail "$tp: $1 exited $2 without a failed test" ;;
		"#"*) body+=("$line") ;;
		esac
	done < "$out"
	tap_plan_check "$cur" "$plan" "$got"
}
# One result line: NOT ("not " or empty), its number, the name it gives,
# SKIP (or empty) and the reason, and the name of the last "#  RUN".
tap_one() {	# tap_one NOT N NAME SKIP REASON RUN-NAME
	local name=$3 r
	name=${name%"${name##*[! ]}"}
	[ -n "$name" ] || name=$6
	if [ -z "$name" ]; then
		result fail "$tp: $cur: result $2 names no test"
		return
	fi
	for r in "${pending[@]}"; do
		reruns+=("$tp: $cur: $name ($r)")
	done
	if [ -n "$1" ]; then
		local detail
		detail=$(mktemp)
		printf '%s\n' "${body[@]}" > "$detail"
		result fail "$tp: $cur: $name" "$detail"
		rm -f "$detail"
	elif [ -n "$4" ]; then
		result skip "$tp: $cur: $name" "$5"
	else
		result pass "$tp: $cur: $name"
	fi
}
tap_plan_check() {	# tap_plan_check SELFTEST PLAN RESULTS
	[ -n "$1" ] && [ -n "$2" ] && [ "$3" -lt "$2" ] &&
		result fail "$tp: $1: $3 results of the $2 planned"
	return 0
}
if [ -n "$parse_only" ]; then
	[ $# -eq 3 ] || { echo "usage: $0 --parse TAP-LOG PREFIX" >&2; exit 2; }
	tap_results "$2" "$3"
	summary
fi
# The debug kernel's lane: xiw.ko built for it and its module tree
# (debug_prepare), then the given selftests in one guest (debug_boot;
# scripts/guest/run_vm.sh adds a kernel log and a kmemleak result after
# each), the guest's whole kernel log. Results are named "vm debug: ...",
# logs in build/vm/NAME.
debug_prepare() {	# debug_prepare KDIR
	local kdir=$1 dkrel
	dkrel=$(cat "$kdir/release")
	rm -f build/debug/xiw.ko
	step "vm debug: build: xiw.ko against $dkrel (W=1, make module-debug)" \
		no_diagnostics "$logs/kbuild-debug.out" make module-debug DEBUG_KDIR="$kdir"
	[ -e build/debug/xiw.ko ] || return 1
	if ! XIW_VM_KDIR=$kdir scripts/vm-modules.sh "$dkrel" build/debug/modroot \
		> "$logs/vm-debug-modules.log" 2>&1; then
		result fail "vm debug: module index for the guest" "$logs/vm-debug-modules.log"
		return 1
	fi
}
# vm-run.sh boots a guest once more when the first boot died before its
# command began (in the kernel's own boot, nothing of ours loaded): a
# rerun, named with what the first boot logged.
boot_reruns() {	# boot_reruns PREFIX LOG
	local line
	while IFS= read -r line; do
		line=${line#vm-run: }
		reruns+=("$1: ${line%; booting once more}")
	done < <(grep -E '^vm-run: .*; booting once more$' "$2")
}

debug_boot() {	# debug_boot KDIR NAME VM-TIMEOUT SELFTEST...
	local kdir=$1 name=$2 vm_timeout=$3 rc
	shift 3
	XIW_VM_KDIR=$kdir scripts/vm-run.sh -n "$name" -t "$vm_timeout" -- \
		scripts/guest/run_vm.sh "$@" > "$logs/vm-$name.log" 2>&1
	rc=$?
	boot_reruns "vm debug" "$logs/vm-$name.log"
	tap_results "build/vm/$name/output.log" "vm debug"
	[ "$ntap" -gt 0 ] || result fail "vm debug: $name: no selftest result" "$logs/vm-$name.log"
	case $rc in
	0|1) result pass "vm debug: $name: kernel log clean (no WARNING/BUG/Oops/hung task, KASAN/UBSAN/lockdep/ODEBUG/kmemleak report but siw's known one)" ;;
	*) result fail "vm debug: $name: run failed (vm-run.sh exit $rc; logs in build/vm/$name)" "$logs/vm-$name.log" ;;
	esac
}

# One guest's results on Debian's kernel, and the run itself: timeout, a
# guest that died, or a kernel warning.
stock_verdict() {	# stock_verdict PREFIX NAME VM-RUN-EXIT LOG
	boot_reruns "$1" "$4"
	tap_results "build/vm/$2/output.log" "$1"
	[ "$ntap" -gt 0 ] || result fail "$1: no selftest result" "$4"
	case $3 in
	0|1) result pass "$1: kernel log clean (no WARNING/BUG/Oops/hung task)" ;;
	*) result fail "$1: run failed (vm-run.sh exit $3; logs in build/vm/$2)" "$4" ;;
	esac
}

# The provider's host tests (CTest over BUILD-DIR), one result each named
# "PREFIX: TEST". -V: a skipped test's reason is in its output (gtest:
# "FILE:LINE: Skipped" and the message), which ctest prints as "N: ..."
# lines. A test ctest could not run ("Not Run": its executable is
# missing) fails. CTEST-COMMAND runs ctest elsewhere (a chroot).
ctest_results() {	# ctest_results BUILD-DIR PREFIX LOG [CTEST-COMMAND...]
	local dir=$1 prefix=$2 log=$3 line num name why
	shift 3
	[ $# -gt 0 ] || set -- ctest
	"$@" --test-dir "$dir" -V --output-on-failure > "$log" 2>&1
	while IFS= read -r line; do
		num=$(sed -E 's/^ *[0-9]+\/[0-9]+ Test +#([0-9]+):.*/\1/' <<< "$line")
		name=$(sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) .*/\1/' <<< "$line")
		case $line in
		*" Passed"*) result pass "$prefix: $name" ;;
		*Skipped*)
			why=$(sed -n "/^$num: .*: Skipped\$/{n;s/^$num: //p;q}" "$log")
			result skip "$prefix: $name" "$why" ;;
		*) result fail "$prefix: $name" "$log" ;;
		esac
	done < <(grep -E '^ *[0-9]+/[0-9]+ Test +#' "$log")
	grep -qE '^ *[0-9]+/[0-9]+ Test +#' "$log" ||
		result fail "$prefix: ctest ran no test" "$log"
}

echo "== set-up"
if ! ksrc=$(scripts/setup.sh 2> "$logs/setup.log" | tail -n 1); then
	result fail "set-up (scripts/setup.sh)" "$logs/setup.log"
	summary
fi
# Two kernels (scripts/setup.sh installs both): Debian 12's own 6.1,
# where everything runs, and the 6.12 series of Debian 13 and of Debian
# 12's backports (LANE2_SUITES, below).
if ! krel=$(scripts/kernel-release.sh --series 6.1 2> "$logs/krel.log") ||
   ! krel2=$(scripts/kernel-release.sh --series 6.12 2>> "$logs/krel.log"); then
	result fail "set-up: the 6.1 and 6.12 kernels (scripts/kernel-release.sh)" "$logs/krel.log"
	summary
fi
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
	debug_prepare "$dkdir" || summary
	progs=()
	for t in build/selftests/xiw_*; do
		case " $SIW_SUITES " in
		*" ${t##*/} "*) ;;
		*) progs+=("$t") ;;
		esac
	done
	debug_boot "$dkdir" debug "$DEBUG_ALL_VM_TIMEOUT" "${progs[@]}"
	echo "== the programs that load siw, a boot each (lockdep: see SIW_SUITES)"
	for s in $SIW_SUITES; do
		if [ -e "build/selftests/$s" ]; then
			debug_boot "$dkdir" "debug-$s" "$DEBUG_VM_TIMEOUT" "build/selftests/$s"
		else
			result fail "vm debug: $s not built"
		fi
	done
	echo "== logs: build/check-debug, build/vm/debug, build/vm/debug-xiw_*"
	summary
fi

echo "== build"
step "build: xiw.ko with W=1, no warnings" \
	no_diagnostics "$logs/kbuild-w1.out" make module
step "build: provider libxiw-rdmav34.so (-Werror)" make provider
step "build: selftests" make selftests
# make tcg-prof's QEMU plugin and the libraries it preloads into cmtime
# and perftest (only compiled here).
step "build: tcg-prof plugin and preload libraries (scripts/tcg-prof, -Werror)" \
	make tcg-prof-plugin
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

echo "== host tests (ctest, scripts/*-test.*)"
ctest_results build/userspace host "$logs/ctest.log"
step "host: kernel-log verdict and TAP reading (scripts/lib-test.sh)" scripts/lib-test.sh
step "host: make bench's parser (scripts/bench-report-test.py)" \
	python3 scripts/bench-report-test.py
step "host: make tcg-prof's report (scripts/tcg-prof-report-test.py)" \
	python3 scripts/tcg-prof-report-test.py
step "host: make lat-trace's report (scripts/lat-trace-report-test.py)" \
	python3 scripts/lat-trace-report-test.py

echo "== VM selftests (QEMU, panic_on_warn=1)"
scripts/vm-modules.sh "$krel" build/vm/modroot > "$logs/vm-modules.log" 2>&1 ||
	result fail "vm: module index for the guest" "$logs/vm-modules.log"
stock=()
for t in build/selftests/xiw_*; do
	case " $DEBUG_ONLY $TRACED_SUITES " in
	*" ${t##*/} "*) ;;
	*) stock+=("$t") ;;
	esac
done
# xiw_soak runs one round of each teardown here (about 70 s under TCG);
# make soak runs 100 on the debug kernel.
scripts/vm-run.sh -n selftests -t 2400 -- env XIW_SOAK_ROUNDS=1 \
	scripts/guest/run_vm.sh "${stock[@]}" > "$logs/vm.log" 2>&1
stock_verdict vm selftests $? "$logs/vm.log"

echo "== allocation sites traced (QEMU, slub_debug=U, panic_on_warn=1)"
traced=()
for s in $TRACED_SUITES; do
	[ -e "selftests/$s.c" ] && traced+=("build/selftests/$s")
done
XIW_VM_APPEND="slub_debug=U" scripts/vm-run.sh -n traced -t 900 -- \
	scripts/guest/run_vm.sh "${traced[@]}" > "$logs/vm-traced.log" 2>&1
stock_verdict "vm traced" traced $? "$logs/vm-traced.log"

echo "== hostile suites on the debug kernel (KASAN, lockdep, kmemleak)"
if dkdir=$(scripts/debug-kernel.sh --cached 2> /dev/null); then
	suites=()
	for s in $DEBUG_SUITES; do
		[ -e "selftests/$s.c" ] && suites+=("build/selftests/$s")
	done
	debug_prepare "$dkdir" &&
		debug_boot "$dkdir" debug "$DEBUG_LANE_TIMEOUT" "${suites[@]}"
else
	echo "debug kernel not built, lane skipped: make check-debug builds it (once) and runs every selftest on it"
fi

echo "== two guests on one link (QEMU, panic_on_warn=1)"
scripts/vm-pair.sh -t 900 -- scripts/guest/xiw_pair.sh > "$logs/vm-pair.log" 2>&1
pair_rc=$?
boot_reruns "vm pair" "$logs/vm-pair.log"
# Each guest must report: its plan is checked, and a guest with no result
# at all fails.
for g in a b; do
	tap_results "build/vm/pair-$g/output.log" "vm pair $g"
	[ "$ntap" -gt 0 ] || result fail "vm pair $g: no result" "$logs/vm-pair.log"
done
case $pair_rc in
0|1) result pass "vm pair: kernel logs clean (no WARNING/BUG/Oops/hung task)" ;;
*) result fail "vm pair: run failed (vm-pair.sh exit $pair_rc; logs in build/vm/pair-{a,b})" "$logs/vm-pair.log" ;;
esac
echo "== the 6.12 kernel ($krel2) and Debian 13: build, lint, host tests, VM selftests"
# The kernel interfaces xiw uses changed between 6.1 and 6.12
# (xiw_compat.h): the module must build clean against both and work on
# both. The guest boots 6.12 with Debian 13's root and runs LANE2_SUITES
# with the provider built against its rdma-core 56; the module tree goes
# next to 6.1's in build/vm/modroot.
k2=build/k$krel2
step "6.12: build: xiw.ko against $krel2 (W=1, no warnings)" \
	no_diagnostics "$logs/kbuild-6.12.out" \
	make module-at AT_KDIR="/lib/modules/$krel2/build" AT_OUT="$k2"
step "6.12: lint: sparse (make C=2)" no_diagnostics "$logs/sparse-6.12.out" \
	make -C "/lib/modules/$krel2/build" M="$repo/$k2/xiw-src" C=2 CHECK=sparse W=1 modules
step "6.12: build: siw.ko (scripts/siw-build.sh, linux-source-6.12)" \
	scripts/siw-build.sh "$krel2"
# Debian 13's user space: the provider built, and its host tests run,
# against rdma-core 56 in a Debian 13 root (scripts/debian13-root.sh,
# made once per machine).
d13=
if d13=$(scripts/debian13-root.sh 2> "$logs/debian13-root.log" | tail -n 1) &&
   [ -n "$d13" ]; then
	result pass "debian 13: root with rdma-core 56 ($d13)"
	step "debian 13: build: provider against rdma-core 56 (-Werror)" \
		scripts/debian13-root.sh --run sh -c \
		'cmake -S userspace -B build/d13/userspace -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
		 cmake --build build/d13/userspace -j2'
	ctest_results build/d13/userspace "debian 13" "$logs/ctest-d13.log" \
		scripts/debian13-root.sh --run ctest
else
	result fail "debian 13: root (scripts/debian13-root.sh)" "$logs/debian13-root.log"
fi
if [ -e "$k2/xiw.ko" ] &&
   scripts/vm-modules.sh "$krel2" build/vm/modroot "$k2/xiw.ko" > "$logs/vm-modules-6.12.log" 2>&1; then
	lane2=()
	for s in $LANE2_SUITES; do
		[ -e "selftests/$s.c" ] && lane2+=("build/selftests/$s")
	done
	if [ -n "$d13" ] && [ -e build/d13/userspace/libxiw-rdmav34.so ]; then
		KREL=$krel2 XIW_VM_ROOT=$d13 scripts/vm-run.sh -n selftests-6.12 -t 1800 -- \
			env XIW_PROVIDER_BUILD=build/d13/userspace XIW_SOAK_ROUNDS=1 \
			scripts/guest/run_vm.sh "${lane2[@]}" > "$logs/vm-6.12.log" 2>&1
		stock_verdict "vm 6.12" selftests-6.12 $? "$logs/vm-6.12.log"
	else
		result fail "vm 6.12: no Debian 13 root with the provider built for it (above)"
	fi
else
	result fail "vm 6.12: module index for the guest" "$logs/vm-modules-6.12.log"
fi

echo "== logs: build/check, build/vm/selftests, build/vm/traced, build/vm/selftests-6.12, build/vm/pair-{a,b}"
summary
