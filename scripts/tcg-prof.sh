#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# make tcg-prof: where one round trip of perftest's latency programs goes,
# xiw against siw, counted by QEMU itself rather than sampled. Under TCG a
# sampling profiler cannot see inside code that runs with interrupts or
# softirqs off (the whole receive path), so this counts instead: a TCG
# plugin (scripts/tcg-prof/tbprof.c, make tcg-prof-plugin) counts every
# translated block the guest runs, and the guest
# (scripts/guest/tcg-prof.sh) takes snapshots around each run.
# scripts/tcg-prof-report.py turns them into instructions, blocks,
# interrupt enables, locked operations, context switches and work items
# per iteration, and the functions that differ most.
#
#   make tcg-prof          (or scripts/tcg-prof.sh)
#
# Boots the newest installed kernel, as make bench does (KREL to choose
# another); PROF_TESTS, PROF_N1, PROF_N2, PROF_SIZE, PROF_QPS and PROF_CRC
# go to the guest (scripts/guest/tcg-prof.sh says what they mean).
# Needs a QEMU built with plugin support (Debian 12's is) and the plugin
# API version 1 (QEMU 7.2). Output: build/tcg-prof/report.txt, and the
# snapshots in build/vm/tcg-prof/.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
out=build/tcg-prof
xiw_prepare_vs_siw "$out"
if [ "${PROF_CRC:-0}" = 1 ]; then
	scripts/siw-build.sh "$krel" crc > /dev/null
fi
make -s tcg-prof-plugin
echo "== boot $krel under QEMU with the tbprof plugin"
vm_rc=0
XIW_VM_QEMU_ARGS="-plugin $XIW_REPO/build/tbprof.so,dir=$XIW_REPO/build/vm/tcg-prof" \
	scripts/vm-run.sh -n tcg-prof -t "${PROF_VM_TIMEOUT:-1800}" -- \
	env ${PROF_TESTS:+PROF_TESTS="$PROF_TESTS"} \
	${PROF_N1:+PROF_N1="$PROF_N1"} ${PROF_N2:+PROF_N2="$PROF_N2"} \
	${PROF_SIZE:+PROF_SIZE="$PROF_SIZE"} \
	${PROF_QPS:+PROF_QPS="$PROF_QPS"} ${PROF_CRC:+PROF_CRC="$PROF_CRC"} \
	scripts/guest/tcg-prof.sh /mnt/xiw-out || vm_rc=$?
if [ "$vm_rc" -ne 0 ]; then
	echo "tcg-prof: VM run failed (vm-run.sh exit $vm_rc; logs in build/vm/tcg-prof)" >&2
	tail -n 20 build/vm/tcg-prof/output.log >&2 || true
	exit 1
fi
python3 scripts/tcg-prof-report.py build/vm/tcg-prof > "$out/report.txt"
cat "$out/report.txt"
