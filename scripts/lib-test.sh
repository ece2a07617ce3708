#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Host test of the kernel-log verdict of scripts/lib.sh (xiw_klog_scan),
# of scripts/check.sh's reading of TAP (check.sh --parse) and of the
# guest's module check (xiw_ko_for), and of bench-ab.sh: its refusals
# of what it cannot compare, and its loop and report with a stand-in
# bench: each case is an input and what the verdict must be. scripts/testdata/klog-siw-lockdep.txt
# is the known siw report as a debug-kernel guest logged it. Prints TAP;
# exits non-zero if any case fails. make check runs it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
sample=$here/testdata/klog-siw-lockdep.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0 i=0

ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() { sed 's/^/# /' "$2"; n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n $1"; }

# case_klog NAME WANT-RC WANT-REGEX LOG: xiw_klog_check on LOG, as the
# callers use it, must return WANT-RC; with WANT-RC 1 the report it gives
# (klog_bad) must match the regex, with 0 the known reason (klog_known)
# must ("^$": none).
case_klog() {
	local name=$1 want=$2 re=$3 log=$4 rc got
	xiw_klog_check < "$log"
	rc=$?
	got=$([ "$want" -eq 1 ] && echo "$klog_bad" || echo "$klog_known")
	if [ "$rc" -eq "$want" ] &&
	   { [ "$want" -eq 1 ] || [ -z "$klog_bad" ]; } &&
	   if [ "$re" = '^$' ]; then [ -z "$got" ]; else grep -q -E -e "$re" <<< "$got"; fi; then
		ok "$name"
	else
		{ echo "want rc $want and /$re/, got rc $rc"
		  echo "klog_known: $klog_known"; echo "klog_bad:"; echo "$klog_bad"; } > "$tmp/out"
		not_ok "$name" "$tmp/out"
	fi
}

clean=$tmp/clean
cat > "$clean" <<'EOF'
[    1.000000] Linux version 6.1.192-xiwdebug
[ 1076.031848] xiw-run_vm: begin 4 xiw_interop
[ 1082.001971] SoftiWARP attached
[ 1085.484728] xr1 speed is unknown, defaulting to 1000
[ 1090.000000] traps: ib_send_bw[812] general protection fault ip:7f0 sp:7ff error:0 in libc.so.6
EOF
kasan=$tmp/kasan
cat > "$kasan" <<'EOF'
[  300.100000] ==================================================================
[  300.100001] BUG: KASAN: slab-use-after-free in xiw_rx_fpdu+0x1a2/0x9c0 [xiw]
[  300.100002] Read of size 4 at addr ffff88810d2dd978 by task kworker/u4:4/742
[  300.100003] Call Trace:
[  300.100004]  <TASK>
[  300.100005]  xiw_rx_fpdu+0x1a2/0x9c0 [xiw]
[  300.100006]  </TASK>
EOF

state='just changed the state of lock:'
lock='at: siw_cm_llp_data_ready+0x16\/0xe0 \[siw\]'
sed "/$lock/s/siw_cm_llp_data_ready+0x16\/0xe0 \[siw\]/xiw_sk_data_ready+0x16\/0xe0 [xiw]/" \
	"$sample" > "$tmp/xiw-lock"
sed "/$lock/s/\[siw\]\$/[siw] xiw_conn_work+0x6f0\/0x1fd0 [xiw]/" "$sample" > "$tmp/xiw-frame"
sed "s/kworker\/u4:4\/742 $state/xiw_conn_work\/742 $state/" "$sample" > "$tmp/xiw-state"
sed "s/possible irq lock inversion dependency detected/possible circular locking dependency detected/" \
	"$sample" > "$tmp/circular"
sed '/<\/TASK>/,$d' "$sample" > "$tmp/truncated"
cat "$sample" "$kasan" > "$tmp/siw-then-kasan"
cat "$kasan" "$sample" > "$tmp/kasan-then-siw"
cat "$sample" "$sample" > "$tmp/siw-twice"
for r in 'UBSAN: shift-out-of-bounds in drivers/infiniband/sw/xiw/xiw_rx.c:90:3' \
	 'ODEBUG: free active (active state 0) object: ffff888 object type: timer_list' \
	 'list_del corruption. next->prev should be ffff888, but was dead000000000122' \
	 'kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)' \
	 'WARNING: CPU: 1 PID: 742 at drivers/infiniband/sw/xiw/xiw_qp.c:100 xiw_qp_modify+0x10/0x20 [xiw]'; do
	f=$tmp/one-$((++i))
	{ cat "$sample"; echo "[ 2000.000000] $r"; } > "$f"
	case_klog "the siw report, then: ${r%%:*}" 1 "${r%%:*}" "$f"
done

case_klog "clean log" 0 '^$' "$clean"
case_klog "the known siw report" 0 "^siw's own lockdep report \\(sk_callback_lock" "$sample"
# The same siw flaw reached from siw_post_send: lockdep's other form.
qp=$here/testdata/klog-siw-lockdep-qp.txt
qp_first='^\[ *[0-9.]+\] WARNING: inconsistent lock state$'
case_klog "the known siw report, inconsistent-state form" 0 \
	"^siw's own lockdep report \\(sk_callback_lock" "$qp"
sed 's/at: siw_qp_llp_data_ready+0x6a\/0x1f0 \[siw\]/at: xiw_sk_data_ready+0x6a\/0x1f0 [xiw]/' \
	"$qp" > "$tmp/qp-xiw"
case_klog "inconsistent-state form taken at an xiw function" 1 "$qp_first" "$tmp/qp-xiw"
sed 's/ takes:$/ takes: xiw_rx_read+0x10\/0x20 [xiw]/' "$qp" > "$tmp/qp-xiw-takes"
case_klog "inconsistent-state form, xiw in the 'takes' line" 1 "$qp_first" "$tmp/qp-xiw-takes"
sed 's/{IN-SOFTIRQ-W} -> {SOFTIRQ-ON-R}/{HARDIRQ-ON-W} -> {IN-HARDIRQ-W}/' "$qp" > "$tmp/qp-other"
case_klog "inconsistent-state form, another usage" 1 "$qp_first" "$tmp/qp-other"
cat "$qp" "$kasan" > "$tmp/qp-then-kasan"
case_klog "the inconsistent-state form, then KASAN" 1 "BUG: KASAN" "$tmp/qp-then-kasan"
cat "$sample" "$qp" > "$tmp/both"
case_klog "both forms in one log" 1 "$qp_first" "$tmp/both"
# The report must come back from its first line on (as the guest and
# vm-run.sh print it).
lockdep_first='^\[ *[0-9.]+\] WARNING: possible irq lock inversion dependency detected$'
case_klog "xiw function where the state changed" 1 "$lockdep_first" "$tmp/xiw-lock"
case_klog "xiw frame in the lock line of the state change" 1 "$lockdep_first" "$tmp/xiw-frame"
case_klog "xiw in the 'just changed the state' line" 1 "$lockdep_first" "$tmp/xiw-state"
case_klog "another lockdep report, same body" 1 "possible circular locking" "$tmp/circular"
case_klog "the siw report cut short" 1 "$lockdep_first" "$tmp/truncated"
case_klog "KASAN report" 1 "BUG: KASAN: slab-use-after-free" "$kasan"
case_klog "the siw report, then KASAN" 1 "BUG: KASAN" "$tmp/siw-then-kasan"
case_klog "KASAN, then the siw report" 1 "BUG: KASAN" "$tmp/kasan-then-siw"
case_klog "the siw report twice" 1 "$lockdep_first" "$tmp/siw-twice"
# The first line of the report given is the report's first line.
xiw_klog_check < "$kasan"
if [ "$(head -n 1 <<< "$klog_bad")" = "[  300.100001] BUG: KASAN: slab-use-after-free in xiw_rx_fpdu+0x1a2/0x9c0 [xiw]" ]; then
	ok "the report given starts at its first line"
else
	echo "$klog_bad" > "$tmp/o"; not_ok "the report given starts at its first line" "$tmp/o"
fi

# check.sh --parse: a kselftest program's TAP, as check.sh names it.
cat > "$tmp/tap" <<'EOF'
# selftest: xiw_demo
TAP version 13
1..4
#  RUN           fx.first ...
#            OK  fx.first
ok 1 fx.first
#  RUN           fx.second ...
#      SKIP      no netem on lo
ok 2 # SKIP no netem on lo
#  RUN           tool.ib_send_bw ...
# RERUN: ib_send_bw: refused while its server did not listen (the listen race), run 2
ok 3 tool.ib_send_bw
#  RUN           fx.fourth ...
# xiw_demo.c:42:fourth:Expected 0 (0) == run() (1)
not ok 4 fx.fourth
# exit: xiw_demo 1
# selftest: xiw_demo.kernel
1..2
ok 1 kernel_log_clean # SKIP siw's own lockdep report (sk_callback_lock read-locked with softirqs on in siw's data_ready callbacks)
ok 2 kmemleak_clean
EOF
# parsed LIST: check.sh --parse of the TAP above, expected skips from LIST.
parsed() { XIW_EXPECTED_SKIPS=$1 "$here/check.sh" --parse "$tmp/tap" "vm debug" > "$tmp/parsed" 2>&1; }
# case_parsed NAME REGEX: a line of check.sh's output must match.
case_parsed() {
	if grep -q -E -e "$2" "$tmp/parsed"; then ok "check.sh --parse: $1"
	else not_ok "check.sh --parse: $1" "$tmp/parsed"; fi
}
parsed "$tmp/none"
want=(
	'^PASS: vm debug: xiw_demo: fx.first$'
	'^FAIL: vm debug: xiw_demo: fx.second: skipped, and not an expected skip.*no netem on lo'
	'^PASS: vm debug: xiw_demo: tool.ib_send_bw$'
	'^FAIL: vm debug: xiw_demo: fx.fourth$'
	'^    # xiw_demo.c:42:fourth:Expected 0 \(0\) == run\(\) \(1\)$'
	'^FAIL: vm debug: xiw_demo.kernel: kernel_log_clean: skipped, and not an expected skip'
	'^PASS: vm debug: xiw_demo.kernel: kmemleak_clean$'
	'^1 reruns: vm debug: xiw_demo: tool.ib_send_bw \(ib_send_bw: refused'
	'^3 passed, 3 failed, 0 skipped$'
)
for re in "${want[@]}"; do
	case_parsed "/$re/" "$re"
done
tail -n 1 "$tmp/parsed" > "$tmp/last"
mv "$tmp/last" "$tmp/parsed"
case_parsed "the totals are the last line" '^3 passed, 3 failed, 0 skipped$'
# The checked-in list accepts the known report's skip in siw's programs
# only, and a skip whose reason differs from the list's not at all.
sed -i 's/xiw_demo/xiw_interop/' "$tmp/tap"
parsed "$here/expected-skips"
case_parsed "the known report's skip is expected in xiw_interop" \
	"^SKIP: vm debug: xiw_interop.kernel: kernel_log_clean # siw's own lockdep"
case_parsed "an unlisted skip fails" \
	"^FAIL: vm debug: xiw_interop: fx.second: skipped, and not an expected skip"
sed -i 's/kernel_log_clean # SKIP .*/kernel_log_clean # SKIP some other reason/' "$tmp/tap"
parsed "$here/expected-skips"
case_parsed "a listed skip for another reason fails" \
	"^FAIL: vm debug: xiw_interop.kernel: kernel_log_clean: skipped, and not an expected skip"

# xiw_ko_for: the guest refuses a module built for another kernel, and
# one it cannot read, with a reason; it takes one built for its own.
fake_ko() {	# fake_ko FILE VERMAGIC: an object with just that .modinfo
	printf 'vermagic=%s\0' "$2" > "$tmp/modinfo" &&
	echo 'int xiw_fake;' | cc -c -x c - -o "$tmp/fake.o" &&
	objcopy --add-section .modinfo="$tmp/modinfo" "$tmp/fake.o" "$1"
}
case_ko() {	# case_ko NAME KO KREL WANT-RC WANT-REGEX
	local rc out
	out=$(xiw_ko_for "$2" "$3")
	rc=$?
	if [ "$rc" -eq "$4" ] && grep -q -E -e "$5" <<< "$out"; then
		ok "$1"
	else
		echo "want rc $4 and /$5/, got rc $rc: $out" > "$tmp/out"
		not_ok "$1" "$tmp/out"
	fi
}
if fake_ko "$tmp/a.ko" "6.1.0-57-amd64 SMP preempt mod_unload modversions "; then
	case_ko "a module for this kernel" "$tmp/a.ko" 6.1.0-57-amd64 0 '^$'
	case_ko "a module for another kernel" "$tmp/a.ko" 6.12.118+deb12-amd64 1 \
		'^xiw.ko is built for 6.1.0-57-amd64, not 6.12.118\+deb12-amd64: rebuild'
	case_ko "a release that only starts the same" "$tmp/a.ko" 6.1.0-57 1 \
		'built for 6.1.0-57-amd64, not 6.1.0-57:'
else
	echo "cannot make a test module (cc, objcopy)" > "$tmp/out"
	not_ok "xiw_ko_for: test module" "$tmp/out"
fi
case_ko "no module" "$tmp/none.ko" 6.1.0-57-amd64 1 '^no xiw.ko with a vermagic at '

# make bench-ab, in a repository of its own under $tmp (so that a real
# bench-ab in this one neither disturbs these cases nor is disturbed):
# bench-ab.sh, bench-report.py, and a stand-in for make bench (AB_BENCH)
# that writes one xiw/siw round and an iperf3 row from the tree's
# value.txt ("VALUE EXIT", VALUE "none" for no results) and appends
# VALUE to $AB_TEST_ORDER, so that the order of the runs shows.
ab=$tmp/abrepo
mkdir -p "$ab/scripts"
cp "$here/bench-ab.sh" "$here/bench-report.py" "$ab/scripts/"
cat > "$ab/bench" <<'STANDIN'
#!/bin/bash
read -r v rc < value.txt
echo "$v" >> "$AB_TEST_ORDER"
mkdir -p build/bench
[ "$v" = none ] && exit "$rc"
row() { local IFS=$'\t'; echo "$*"; }
{ row round device test metric unit value status attempts seconds log
  row 1 xiw w bw Gb/s "$v" ok 1 5 x
  row 1 siw w bw Gb/s 1.0 ok 1 5 x
  row 1 tcp tcp bw Gb/s 3.0 ok 1 5 x
} > build/bench/results.tsv
exit "$rc"
STANDIN
chmod +x "$ab/bench"
echo "1.0 0" > "$ab/value.txt"
echo build/ > "$ab/.gitignore"
git -C "$ab" init -q && git -C "$ab" add -A &&
	git -C "$ab" -c user.name=t -c user.email=t@t commit -q -m base ||
	echo "# cannot make the test repository" >&2

# bench-ab refuses what it cannot compare before it builds or checks
# anything out: exit 2 and why.
case_ab() {	# case_ab NAME WANT-REGEX ENV... -- ARGS...
	local name=$1 re=$2 rc=0
	shift 2
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" "$ab/scripts/bench-ab.sh" "$@" > "$tmp/out" 2>&1 || rc=$?
	if [ "$rc" -eq 2 ] && grep -q -E -e "$re" "$tmp/out" &&
	   ! [ -e "$ab/build/bench-ab/base-tree" ]; then
		ok "$name"
	else
		echo "want exit 2 and /$re/, got $rc" >> "$tmp/out"
		not_ok "$name" "$tmp/out"
	fi
}
case_ab "bench-ab: no base" '^usage: ' -- 
case_ab "bench-ab: no pairs" '^usage: ' AB_PAIRS=0 -- HEAD
case_ab "bench-ab: pairs not a number" '^usage: ' AB_PAIRS=x -- HEAD
case_ab "bench-ab: no such revision" 'no-such-rev-x is no commit' \
	-- no-such-rev-x

# case_ab_run NAME VALUE PAIRS WANT-RC WANT-ORDER WANT-RUNS WANT-REPORT:
# with value.txt edited to VALUE (the change) against HEAD (the base),
# bench-ab must exit WANT-RC (0, or 1 for any failure), run the sides
# in WANT-ORDER (their values, space-separated), record WANT-RUNS in
# runs.txt (its "SIDE N exit RC" parts, "; "-separated), print lines
# matching each regex of WANT-REPORT (one a line), and leave no
# worktree behind.
case_ab_run() {
	local name=$1 value=$2 pairs=$3 want=$4 order=$5 runs=$6 report=$7
	local rc=0 got_order got_runs re bad=
	echo "$value" > "$ab/value.txt"
	rm -f "$tmp/order"
	AB_PAIRS=$pairs AB_BENCH=./bench AB_TEST_ORDER=$tmp/order \
		"$ab/scripts/bench-ab.sh" HEAD > "$tmp/out" 2>&1 < /dev/null || rc=$?
	[ "$rc" -eq 0 ] || rc=1
	got_order=$(paste -sd ' ' "$tmp/order" 2>/dev/null)
	got_runs=$(sed -E 's/^([a-z]+ [0-9]+ exit [0-9]+).*/\1/' \
		"$ab/build/bench-ab/runs.txt" 2>/dev/null | paste -sd ';' |
		sed 's/;/; /g')
	[ "$rc" -eq "$want" ] || bad+="exit $rc, want $want; "
	[ "$got_order" = "$order" ] || bad+="order '$got_order', want '$order'; "
	[ "$got_runs" = "$runs" ] || bad+="runs '$got_runs', want '$runs'; "
	while IFS= read -r re; do
		grep -q -E -e "$re" "$tmp/out" || bad+="no /$re/ in the output; "
	done <<< "$report"
	! [ -e "$ab/build/bench-ab/base-tree" ] || bad+="the worktree is left; "
	[ "$(git -C "$ab" worktree list | wc -l)" -eq 1 ] ||
		bad+="a worktree is still registered; "
	git -C "$ab" checkout -q -- value.txt
	if [ -z "$bad" ]; then
		ok "$name"
	else
		echo "$bad" >> "$tmp/out"
		not_ok "$name" "$tmp/out"
	fi
}
case_ab_run "bench-ab: two pairs, alternately, and the report" "2.0 0" 2 0 \
	"1.0 2.0 2.0 1.0" \
	"base 1 exit 0; change 1 exit 0; change 2 exit 0; base 2 exit 0" \
	"with edits to tracked files, 2 pair\(s\)$
^make bench-ab: 2 run\(s\) of the base tree, 2 of the change
^w +ratio +xiw/siw +1\.00 \(2\) +2\.00 \(2\) +2\.00$
^tcp +Gb/s +iperf3 +3\.00 \[3\.00-3\.00\] +3\.00 \[3\.00-3\.00\] +1\.00$"
case_ab_run "bench-ab: a failed run fails, the report printed" "2.0 1" 1 1 \
	"1.0 2.0" "base 1 exit 0; change 1 exit 1" \
	"^w +ratio +xiw/siw +1\.00 \(1\) +2\.00 \(1\) +2\.00$"
case_ab_run "bench-ab: exit 0 without results fails" "none 0" 1 1 \
	"1.0 none" "base 1 exit 0; change 1 exit 1" \
	"^note: no change-N.tsv in build/bench-ab$"

echo "1..$n"
[ "$fails" -eq 0 ]
