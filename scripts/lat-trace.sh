#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# make lat-trace: where the time of one latency round trip goes, xiw
# against siw. make tcg-prof counts the instructions of a round trip but
# cannot say which of them the peer waits for; this times the path
# instead. The guest (scripts/guest/lat-trace.sh) traces, with ftrace's
# function tracer and the monotonic clock, a few points every message
# passes: the doorbell's write(), the driver's post_send, TCP's transmit
# and receive, the driver's data_ready, the completion, and the peer's
# next doorbell. scripts/lat-trace-report.py cuts each message's way into
# those segments and prints each device's median and middle mean.
#
#   make lat-trace         (or scripts/lat-trace.sh)
#
# Boots the newest installed kernel, as make bench does (KREL to choose
# another); LAT_TESTS, LAT_N, LAT_ROUNDS and LAT_SIZE go to the guest.
# Tracing adds about a microsecond at each point it records: compare the
# segments, not the totals with perftest's own figures. Output:
# build/lat-trace/report.txt, the traces in build/vm/lat-trace/.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
out=build/lat-trace
xiw_prepare_vs_siw "$out"
echo "== boot $krel under QEMU, tracing"
vm_rc=0
scripts/vm-run.sh -n lat-trace -t "${LAT_VM_TIMEOUT:-1800}" -- \
	env ${LAT_TESTS:+LAT_TESTS="$LAT_TESTS"} ${LAT_N:+LAT_N="$LAT_N"} \
	${LAT_ROUNDS:+LAT_ROUNDS="$LAT_ROUNDS"} \
	${LAT_SIZE:+LAT_SIZE="$LAT_SIZE"} \
	scripts/guest/lat-trace.sh /mnt/xiw-out || vm_rc=$?
if [ "$vm_rc" -ne 0 ] || [ ! -e build/vm/lat-trace/done ]; then
	echo "lat-trace: VM run failed (vm-run.sh exit $vm_rc; logs in build/vm/lat-trace)" >&2
	tail -n 20 build/vm/lat-trace/output.log >&2 || true
	exit 1
fi
python3 scripts/lat-trace-report.py build/vm/lat-trace > "$out/report.txt"
cat "$out/report.txt"
