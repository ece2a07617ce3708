#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# make bench: set up, build xiw and the siw reference, boot one VM and run
# perftest on xiw0 and siw0 side by side plus an iperf3 TCP baseline
# (scripts/guest/bench.sh), then print the table of medians
# (scripts/bench-report.py). Results land in build/bench/:
#   results.tsv  one line per run       table.txt  the table printed here
#   raw/         every client's and server's output
# Knobs (environment): BENCH_RUNS (default 3), BENCH_DEVICES (default
# "xiw xiwnc siw siwcrc"; xiwnc is xiw with MPA CRC off, siwcrc is siw
# built with MPA CRC required), BENCH_DURATION,
# BENCH_LAT_ITERS, BENCH_CONNS, BENCH_CONN_BATCH, BENCH_MEM_CONNS,
# BENCH_MEM_PER_PROC, BENCH_TESTS, BENCH_XIW_PARAMS, BENCH_VM_TIMEOUT;
# see Documentation/performance.rst.
#
# Exit status: non-zero if any xiw run failed or the VM run itself failed
# (timeout, panic, kernel warning); the table is printed either way.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export BENCH_RUNS=${BENCH_RUNS:-3}
export BENCH_DEVICES=${BENCH_DEVICES:-xiw xiwnc siw siwcrc}
t0=$(date +%s)
xiw_prepare
scripts/siw-build.sh "$krel"
case " $BENCH_DEVICES " in *" siwcrc "*) scripts/siw-build.sh "$krel" crc ;; esac

out=build/bench
rm -rf "$out"
mkdir -p "$out"
echo "== boot $krel under QEMU: $BENCH_RUNS round(s) on: $BENCH_DEVICES, tcp"
# vm-run.sh shares build/vm/bench with the guest as /mnt/xiw-out.
vm_rc=0
# The guest's limit: a round of every test on four devices took up to 11
# minutes on an idle 2-core host (2026-12-06), so 20 per round and 10 for
# boot and set-up. Each perftest, cmtime and connscale run has its own
# timeout; this one is for the guest as a whole.
vm_timeout=${BENCH_VM_TIMEOUT:-$((600 + 1200 * BENCH_RUNS))}
scripts/vm-run.sh -n bench -t "$vm_timeout" -- \
	env BENCH_RUNS="$BENCH_RUNS" BENCH_DEVICES="$BENCH_DEVICES" \
	${BENCH_DURATION:+BENCH_DURATION="$BENCH_DURATION"} \
	${BENCH_LAT_ITERS:+BENCH_LAT_ITERS="$BENCH_LAT_ITERS"} \
	${BENCH_CONNS:+BENCH_CONNS="$BENCH_CONNS"} \
	${BENCH_CONN_BATCH:+BENCH_CONN_BATCH="$BENCH_CONN_BATCH"} \
	${BENCH_MEM_CONNS:+BENCH_MEM_CONNS="$BENCH_MEM_CONNS"} \
	${BENCH_MEM_PER_PROC:+BENCH_MEM_PER_PROC="$BENCH_MEM_PER_PROC"} \
	${BENCH_TESTS:+BENCH_TESTS="$BENCH_TESTS"} \
	${BENCH_XIW_PARAMS:+BENCH_XIW_PARAMS="$BENCH_XIW_PARAMS"} \
	scripts/guest/bench.sh /mnt/xiw-out/bench || vm_rc=$?
if [ -d build/vm/bench/bench ]; then
	cp -r build/vm/bench/bench/. "$out"/
fi
[ -s "$out/crc32c.txt" ] && echo "== the guest's $(cat "$out/crc32c.txt")"
if [ "$vm_rc" -ne 0 ]; then
	echo "bench: VM run failed (vm-run.sh exit $vm_rc; logs in build/vm/bench)" >&2
	tail -n 20 build/vm/bench/output.log >&2 || true
fi
echo "== results (raw: $out/results.tsv, $out/raw/)"
report_rc=0
if [ -s "$out/results.tsv" ]; then
	python3 scripts/bench-report.py table "$out/results.tsv" "$BENCH_DEVICES" \
		> "$out/table.txt" || report_rc=$?
	cat "$out/table.txt"
else
	echo "bench: no results" | tee "$out/table.txt"
	report_rc=1
fi
echo "== make bench took $(( $(date +%s) - t0 )) s"
[ "$vm_rc" -eq 0 ] && [ "$report_rc" -eq 0 ]
