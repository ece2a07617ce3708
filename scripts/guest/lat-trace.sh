#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs inside the test VM for scripts/lat-trace.sh. Sets up xiw0 on dummy
# netdev d0 (MPA CRC off, as siw has it by default) and siw0 on d1, turns
# on ftrace once for the whole boot (the function tracer on a few points
# of the data path, write() entry and exit, the monotonic clock), then
# runs each perftest latency program on each device, server and client
# in this guest, LAT_ROUNDS times, and keeps each run's trace as
# OUTDIR/trace-PROG-DEV-ROUND.txt. Tracing is switched on and off with
# tracing_on only: code is patched once, at the start (on 6.12 under TCG
# a second round of patching tracepoints in one boot has oopsed).
#
#   scripts/guest/lat-trace.sh OUTDIR
#
# Environment: LAT_TESTS (default "ib_send_lat ib_write_lat ib_read_lat"),
# LAT_N (iterations, default 3000), LAT_ROUNDS (default 2), LAT_SIZE
# (bytes, default 64).
set -u
. "$(dirname "$0")/../lib.sh"
xiw_guest_only lat-trace.sh scripts/lat-trace.sh
out=${1:?usage: lat-trace.sh OUTDIR}
tests=${LAT_TESTS:-ib_send_lat ib_write_lat ib_read_lat}
n=${LAT_N:-3000} rounds=${LAT_ROUNDS:-2} size=${LAT_SIZE:-64}
T=/sys/kernel/tracing

die() { echo "lat-trace: $*" >&2; exit 1; }

xiw_guest_xiw_siw || die "setting up xiw0 and siw0 failed (above)"

[ -d $T/events ] || mount -t tracefs nodev $T || die "no tracefs"
echo 0 > $T/tracing_on
echo mono > $T/trace_clock || die "no mono trace clock"
echo 16384 > $T/buffer_size_kb || die "trace buffer"
# The points scripts/lat-trace-report.py reads; every one must exist.
for f in xiw_post_send siw_post_send __tcp_transmit_skb tcp_v4_rcv \
	xiw_sk_data_ready siw_qp_llp_data_ready xiw_cq_add \
	siw_sqe_complete siw_rqe_complete; do
	echo "$f" >> $T/set_ftrace_filter || die "cannot trace $f"
done
for e in sys_enter sys_exit; do
	echo 'id == 1' > $T/events/raw_syscalls/$e/filter &&
		echo 1 > $T/events/raw_syscalls/$e/enable || die "raw_syscalls:$e"
done
echo function > $T/current_tracer || die "function tracer"

# One traced server and client pair. A client that finds no listener
# (the last server's still closing, the new one not yet up) is refused;
# the run is then taken again, up to three times.
measure() {	# measure PROG DEV ROUND
	local t=$1 dev=$2 r=$3 base=$out/$1-$2-$3 try sp
	for try in 1 2 3; do
		xiw_port_free 18515 || true
		timeout 300 "$t" -d "$dev" -R -F -s "$size" -n "$n" \
			> "$base.server" 2>&1 &
		sp=$!
		xiw_wait_listen 18515 "$sp"
		echo > $T/trace
		echo 1 > $T/tracing_on
		if timeout 300 "$t" -d "$dev" -R -F -s "$size" -n "$n" \
			"${addr[$dev]}" > "$base.client" 2>&1 && wait "$sp"; then
			echo 0 > $T/tracing_on
			cat $T/trace > "$out/trace-$t-$dev-$r.txt"
			grep -q 'entries-in-buffer/entries-written: \([0-9]*\)/\1 ' \
				"$out/trace-$t-$dev-$r.txt" ||
				die "$t on $dev, round $r: trace buffer overran"
			return 0
		fi
		echo 0 > $T/tracing_on
		echo "lat-trace: $t on $dev, round $r: attempt $try failed"
		tail -n 3 "$base.client"
		xiw_stop_server "$sp"
		sleep 1
	done
	die "$t on $dev, round $r: failed three times"
}

declare -A addr=([xiw0]=10.99.0.1 [siw0]=10.99.1.1)
for r in $(seq "$rounds"); do
	for t in $tests; do
		for dev in xiw0 siw0; do
			measure "$t" "$dev" "$r"
		done
	done
done
echo nop > $T/current_tracer
echo "$n $rounds $size $tests" > "$out/done"
