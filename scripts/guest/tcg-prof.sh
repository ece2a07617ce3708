#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs inside the test VM for scripts/tcg-prof.sh, whose QEMU carries the
# tbprof plugin (scripts/tcg-prof/tbprof.c). Sets up xiw0 on dummy netdev
# d0 (MPA CRC off, as siw has it by default) and siw0 on d1 (with
# PROF_CRC=1 both with CRC on: xiw's default, siw's CRC build), then for each
# perftest latency program and each device runs server and client in
# this guest twice, with N1 and N2 iterations, between two snapshots of
# the plugin's counts. The host subtracts the N1 run from the N2 run: what
# is left is what N2 - N1 iterations cost, without the set-up, the
# connection and perftest's clock calibration. Writes OUTDIR/kallsyms
# (to name kernel addresses), OUTDIR/DEV-PROG-N.{server,client},
# OUTDIR/setup and OUTDIR/done; the plugin writes OUTDIR/snap-*.tsv.
#
#   scripts/guest/tcg-prof.sh OUTDIR
#
# Environment: PROF_TESTS (default "ib_send_lat ib_write_lat
# ib_read_lat"), PROF_N1 and PROF_N2 (default 1000 and 5000), PROF_SIZE
# (bytes, default 64), PROF_QPS (perftest's -q, default 1: with more,
# an iteration is one message on each QP), PROF_CRC (0, or 1 for CRC on
# at both ends). PROF_TESTS may name cmtime (rdmacm-utils): its
# iterations are connections, made at once and then torn down, so give it
# PROF_N1 and PROF_N2 of its own, at most about 70 (siw's limit per
# process), for example PROF_TESTS=cmtime PROF_N1=2 PROF_N2=64. The
# cmtime client runs with build/cmtime-steps.so preloaded (make
# tcg-prof-plugin; scripts/tcg-prof/cmtime-steps.c), which makes its
# polling sleep and asks for two snapshots more, mid-* and end-*, around
# its disconnect step. A latency program's server and client run with
# build/lat-window.so preloaded (scripts/tcg-prof/lat-window.c); in the
# N2 run the client asks for snapshots from-* and to-* just before its
# doorbells N1 and N2: N2 - N1 steady round trips of one run, without
# the start-up and exit the subtraction leaves as noise. Address-space
# randomisation is off and both ends load the same objects, so that both
# map each at the same address; OUTDIR/DEV-PROG-N.maps keeps the
# server's mappings, for the host to name the user-space code too.
set -u
. "$(dirname "$0")/../lib.sh"
xiw_guest_only tcg-prof.sh scripts/tcg-prof.sh
out=${1:?usage: tcg-prof.sh OUTDIR}
tests=${PROF_TESTS:-ib_send_lat ib_write_lat ib_read_lat}
n1=${PROF_N1:-1000} n2=${PROF_N2:-5000} size=${PROF_SIZE:-64}
qps=${PROF_QPS:-1} crc=${PROF_CRC:-0}
[ "$n2" -gt "$n1" ] || { echo "tcg-prof: PROF_N2 must exceed PROF_N1" >&2; exit 2; }
case $qps in '' | 0* | *[!0-9]*) echo "tcg-prof: PROF_QPS must be a count" >&2; exit 2 ;; esac
case $crc in 0 | 1) ;; *) echo "tcg-prof: PROF_CRC must be 0 or 1" >&2; exit 2 ;; esac
qa=()	# perftest's latency programs take no -q
[ "$qps" -gt 1 ] && qa=(-q "$qps")

die() { echo "tcg-prof: $*" >&2; exit 1; }

if [ "$crc" = 1 ]; then
	xiw_guest_xiw_siw crc || die "setting up xiw0 and siw0 failed (above)"
else
	xiw_guest_xiw_siw || die "setting up xiw0 and siw0 failed (above)"
fi
# Addresses of the kernel's and the modules' functions, for the host;
# user space at the same addresses in every process of one program.
echo 0 > /proc/sys/kernel/kptr_restrict
echo 0 > /proc/sys/kernel/randomize_va_space || die "randomize_va_space"
cp /proc/kallsyms "$out/kallsyms" || die "kallsyms"

# Ask the plugin (on the host, watching this share) for a snapshot NAME
# and wait until it has written it. The request file is removed here, not
# by the host (see scripts/tcg-prof/tbprof.c).
snap() {	# snap NAME
	local i
	rm -f "$out/snap-$1.tsv"	# a retried window's old one
	echo "$1" > "$out/snap" || die "snapshot $1: cannot write"
	for i in $(seq 600); do
		if [ -e "$out/snap-$1.tsv" ]; then
			rm -f "$out/snap"
			return 0
		fi
		sleep 0.1
	done
	die "snapshot $1: the plugin did not answer (is QEMU running it?)"
}

# One server and client pair between two snapshots. A client that finds
# no listener (the last server's still closing, the new one not yet up)
# is refused; the whole window is then taken again, up to three times.
measure() {	# measure PROG DEV N
	local t=$1 dev=$2 n=$3 base=$out/$2-$1-$3 try sp
	for try in 1 2 3; do
		xiw_port_free 18515 7471 || true
		snap "pre-$dev-$t-$n"
		if [ "$t" = cmtime ]; then
			# The server serves until stopped; give it a second to
			# finish the disconnects the client saw complete.
			timeout 300 cmtime -b "${addr[$dev]}" -p 7471 \
				> "$base.server" 2>&1 &
			sp=$!
			xiw_wait_listen 7471 "$sp"
			rm -f "$out/snap-mid-$dev-$t-$n.tsv" \
				"$out/snap-end-$dev-$t-$n.tsv"
			# cmtime carries on past a connection that failed
			# ("failure ...", or "event: ..._REJECTED, error: N"),
			# so either word makes the window void, as in
			# scripts/bench-report.py.
			if LD_PRELOAD=$steps TCG_PROF_DIR=$out \
				TCG_PROF_SNAP=$dev-$t-$n timeout 300 \
				cmtime -s "${addr[$dev]}" -p 7471 -c "$n" \
				> "$base.client" 2>&1 &&
				[ -e "$out/snap-mid-$dev-$t-$n.tsv" ] &&
				[ -e "$out/snap-end-$dev-$t-$n.tsv" ] &&
				! grep -q -i -E "fail|error" "$base.client"; then
				sleep 1
				xiw_stop_server "$sp"
				snap "post-$dev-$t-$n"
				return 0
			fi
		else
			# Both ends preload the window's library, so that
			# both map every object at the same address.
			LD_PRELOAD=$window timeout 300 "$t" -d "$dev" -R -F \
				-s "$size" -n "$n" "${qa[@]}" \
				> "$base.server" 2>&1 &
			sp=$!
			xiw_wait_listen 18515 "$sp"
			cat "/proc/$(pgrep -o -P "$sp")/maps" > "$base.maps" ||
				echo "tcg-prof: no maps of $t's server"
			rm -f "$out/snap-from-$dev-$t-$n.tsv" \
				"$out/snap-to-$dev-$t-$n.tsv"
			win=()
			[ "$n" = "$n2" ] && win=(TCG_PROF_DIR="$out"
				TCG_PROF_SNAP="$dev-$t-$n"
				TCG_PROF_FROM="$n1" TCG_PROF_TO="$n2")
			if env LD_PRELOAD="$window" "${win[@]}" timeout 300 \
				"$t" -d "$dev" -R -F -s "$size" -n "$n" \
				"${qa[@]}" "${addr[$dev]}" \
				> "$base.client" 2>&1 && wait "$sp"; then
				snap "post-$dev-$t-$n"
				[ "$n" != "$n2" ] ||
					[ -e "$out/snap-to-$dev-$t-$n.tsv" ] ||
					echo "tcg-prof: $t on $dev: no steady window (fewer than $n2 doorbells)"
				return 0
			fi
		fi
		echo "tcg-prof: $t on $dev, $n iterations: attempt $try failed"
		[ "$t" != cmtime ] || grep -h "cmtime-steps" "$base.client" || true
		tail -n 3 "$base.client"
		xiw_stop_server "$sp"
		sleep 1
	done
	die "$t on $dev, $n iterations: failed three times"
}

declare -A addr=([xiw0]=10.99.0.1 [siw0]=10.99.1.1)
steps=$XIW_REPO/build/cmtime-steps.so window=$XIW_REPO/build/lat-window.so
[ -e "$window" ] || die "$window missing (make tcg-prof-plugin)"
case " $tests " in
*" cmtime "*)
	[ -e "$steps" ] || die "$steps missing (make tcg-prof-plugin)" ;;
esac
for t in $tests; do
	for dev in xiw0 siw0; do
		measure "$t" "$dev" "$n1"
		measure "$t" "$dev" "$n2"
	done
done
echo "qps=$qps crc=$crc" > "$out/setup"
echo "$n1 $n2 $size $tests" > "$out/done"
