#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# make run: set up, build, boot a test VM, create xiw0 on a dummy netdev
# and show it through the standard rdma-core tools.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
echo "== set-up (scripts/setup.sh)"
ksrc=$(scripts/setup.sh | tail -n 1)
krel=$(scripts/kernel-release.sh)
echo "== build"
make -s KSRC="$ksrc" KREL="$krel" all
scripts/vm-modules.sh "$krel" build/vm/modroot
echo "== boot $krel under QEMU and run scripts/demo.sh inside"
rc=0
scripts/vm-run.sh -n run -t 600 -- scripts/demo.sh || rc=$?
cat build/vm/run/output.log
echo "== logs in build/vm/run (exit $rc)"
exit $rc
