#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# make run: set up, build, boot a test VM, create xiw0 on a dummy netdev
# and show it through the standard rdma-core tools.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
xiw_prepare
echo "== boot $krel under QEMU and run scripts/guest/demo.sh inside"
rc=0
scripts/vm-run.sh -n run -t 600 -- scripts/guest/demo.sh || rc=$?
cat build/vm/run/output.log
echo "== logs in build/vm/run (exit $rc)"
exit $rc
