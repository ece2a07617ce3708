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
step rdma link delete xiw0
step rmmod xiw
