#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs inside the test VM (scripts/vm-run.sh): installs the freshly built
# module and provider into the guest's RAM overlay, then runs every
# selftest binary given (default: all of build/selftests), each under a
# timeout (XIW_TEST_TIMEOUT seconds; default 900, 1800 on the debug
# kernel). The kselftest TAP output is the result; scripts/check.sh counts
# it; a "# time:" line after each program says how long it took.
#
# On the debug kernel (vm-run.sh passes XIW_VM_KDIR) each program is
# followed by one more TAP block, "# selftest: NAME.kernel": whether the
# kernel log lines it caused hold a report (xiw_klog_scan of
# scripts/lib.sh; siw's one known report makes kernel_log_clean a skip
# with its reason, which scripts/expected-skips lists for siw's
# programs), and whether kmemleak finds a leak once it has ended. The
# kernel's own siw.ko and the module tree of build/debug/modroot are used
# there.
set -u
. "$(dirname "$0")/../lib.sh"
xiw_guest_only run_vm.sh "make check"
repo=$XIW_REPO
debug=${XIW_VM_KDIR:-}
timeout_s=${XIW_TEST_TIMEOUT:-900}
if [ -n "$debug" ]; then
	# Under TCG the debug kernel took up to twice as long per program
	# (xiw_fault, the longest, 704 s).
	timeout_s=${XIW_TEST_TIMEOUT:-1800}
fi
export XIW_SIW_KO=${XIW_SIW_KO:-$(xiw_siw_ko)}
why=$(xiw_guest_install ib_uverbs iw_cm rdma_ucm dummy tun) ||
	{ echo "Bail out! $why"; exit 1; }

kmemleak=/sys/kernel/debug/kmemleak
# Objects younger than 5 s at a scan are never reported (MSECS_MIN_AGE in
# mm/kmemleak.c), and one that changed since the previous scan is given
# another: two scans at least 6 s apart report what a program left behind.
# (Under TCG one scan takes about 14 s by itself.)
kmemleak_scan() {
	local t0=$SECONDS
	echo scan > $kmemleak || return
	[ $((SECONDS - t0)) -ge 6 ] || sleep $((6 - (SECONDS - t0)))
	echo scan > $kmemleak
}
if [ -n "$debug" ]; then
	mountpoint -q /sys/kernel/debug ||
		mount -t debugfs debugfs /sys/kernel/debug
	# What boot and the module loads above left is nobody's test's.
	if [ -e $kmemleak ] && kmemleak_scan; then
		boot_leaks=$(grep -c '^unreferenced object' $kmemleak)
		echo "# kmemleak: $boot_leaks objects suspected before the first selftest, cleared"
		echo clear > $kmemleak
	else
		echo "# kmemleak: not available; every kmemleak_clean will fail"
	fi
fi

# The kernel checks after program number N, as TAP.
kernel_checks() {	# kernel_checks NAME N
	local log reports= known= leaks= n
	# The program's part of the log starts at its marker; a marker pushed
	# out of the buffer leaves the whole buffer (a report then may be an
	# earlier program's).
	log=$(dmesg | sed -n "/xiw-run_vm: begin $2 $1\$/,\$p")
	[ -n "$log" ] || log=$(dmesg)
	# The first report and what follows it (its stack, mostly), or
	# the known one's reason.
	xiw_klog_check <<< "$log" || reports=$klog_bad
	known=$klog_known
	if kmemleak_scan; then
		n=$(grep -c '^unreferenced object' $kmemleak)
		[ "$n" -eq 0 ] ||
			leaks=$(echo "$n unreferenced objects; the first:"; head -n 40 $kmemleak)
		echo clear > $kmemleak
	else
		leaks="kmemleak scan failed (kmemleak is off: its reason is in dmesg)"
	fi
	echo "# selftest: $1.kernel"
	echo "1..2"
	if [ -z "$reports" ] && [ -n "$known" ]; then
		echo "ok 1 kernel_log_clean # SKIP $known"
	elif [ -z "$reports" ]; then
		echo "ok 1 kernel_log_clean"
	else
		sed 's/^/# /' <<< "$reports"
		echo "not ok 1 kernel_log_clean"
	fi
	if [ -z "$leaks" ]; then
		echo "ok 2 kmemleak_clean"
	else
		sed 's/^/# /' <<< "$leaks"
		echo "not ok 2 kmemleak_clean"
	fi
	[ -z "$reports" ] && [ -z "$leaks" ]
}

tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=("$repo"/build/selftests/xiw_*)
rc=0
i=0
for t in "${tests[@]}"; do
	name=$(basename "$t")
	i=$((i + 1))
	[ -z "$debug" ] || echo "xiw-run_vm: begin $i $name" > /dev/kmsg
	t0=$SECONDS
	echo "# selftest: $name"
	timeout -k 5 "$timeout_s" "$t"
	st=$?
	echo "# exit: $name $st"
	echo "# time: $name $((SECONDS - t0)) s"
	# kselftest exit codes: 0 pass, 4 skip; anything else fails.
	[ $st -eq 0 ] || [ $st -eq 4 ] || rc=1
	if [ -n "$debug" ]; then
		kernel_checks "$name" "$i" || rc=1
	fi
done
exit $rc
