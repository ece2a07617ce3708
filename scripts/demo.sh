#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs inside the VM for "make run": the steps a user takes on a real
# machine, with a dummy netdev standing in for an Ethernet NIC.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${XIW_IN_VM:-}" ]; then
	echo "demo.sh: runs inside the test VM; use make run" >&2
	exit 2
fi
"$repo/scripts/install.sh" --prepared "$repo/build/vm/modroot"
step() { echo; echo "\$ $*"; "$@"; }
step modprobe -a ib_uverbs rdma_ucm dummy
step ip link add eth9 type dummy
step ip addr add 10.99.0.1/24 dev eth9
step ip link set eth9 up
# No modprobe xiw: rdma link add loads the installed module by itself.
step rdma link add xiw0 type xiw netdev eth9
step rdma link show
step ibv_devices
step ibv_devinfo -d xiw0
step ibv_devinfo -v -d xiw0

# Real RDMA traffic on xiw0: server and client in this one machine, the
# TCP stream between them over loopback.
bg() { echo; echo "\$ $* &"; "$@" & }
bg rping -s -a 10.99.0.1 -C 10 -v
srv=$!
sleep 1
step timeout 60 rping -c -a 10.99.0.1 -C 10 -v
wait $srv
# perftest -R can lose a race of its own (its client may connect before
# its server listens the second time; Debian 12's perftest then crashes
# instead of retrying): such a run is started once more.
for attempt in 1 2; do
	bg ib_write_bw -d xiw0 -R -s 65536 -n 2000 --report_gbits
	srv=$!
	sleep 2
	rc=0
	out=$(mktemp)
	step timeout 120 ib_write_bw -d xiw0 -R -s 65536 -n 2000 --report_gbits 10.99.0.1 2>&1 | tee "$out" || rc=$?
	kill $srv 2>/dev/null || true
	wait $srv 2>/dev/null || true
	race=0
	grep -q 'RDMA_CM_EVENT_REJECTED; error: -111' "$out" && race=1
	rm -f "$out"
	[ $rc -ne 0 ] && [ $race -eq 1 ] && [ $attempt -eq 1 ] && continue
	break
done
[ $rc -eq 0 ] || exit $rc
step rdma res show
step rdma link delete xiw0
step rmmod xiw
