#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs inside the VM for "make run": the steps a user takes on a real
# machine, with a dummy netdev standing in for an Ethernet NIC.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
xiw_guest_only demo.sh "make run"
step() { echo; echo "\$ $*"; "$@"; }
echo "\$ modprobe -a ib_uverbs rdma_ucm dummy    (after installing xiw)"
xiw_guest_install ib_uverbs rdma_ucm dummy
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
# perftest -R can lose a race of its own (scripts/lib.sh, "the listen
# race"): such a run is started again, as lib.sh's policy allows.
attempt=1
while :; do
	bg ib_write_bw -d xiw0 -R -s 65536 -n 2000 --report_gbits
	srv=$!
	sleep 2
	rc=0
	echo; echo "\$ timeout 120 ib_write_bw -d xiw0 -R -s 65536 -n 2000 --report_gbits 10.99.0.1"
	xiw_listen_race_client $attempt ib_write_bw -- timeout 120 \
		ib_write_bw -d xiw0 -R -s 65536 -n 2000 --report_gbits 10.99.0.1 || rc=$?
	kill $srv 2>/dev/null || true
	wait $srv 2>/dev/null || true
	[ $rc -eq "$XIW_LISTEN_RACE_EXIT" ] || break
	attempt=$((attempt + 1))
done
[ $rc -eq 0 ] || exit $rc
step rdma res show
step rdma link delete xiw0
step rmmod xiw
