#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Install already built xiw artifacts: the module under the kernel's
# updates/ directory (then depmod, so "rdma link add ... type xiw" can
# autoload it), the provider and its libibverbs driver file.
#   scripts/install.sh [KREL]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
krel=${1:-$("$repo/scripts/kernel-release.sh")}
ko=$repo/drivers/infiniband/sw/xiw/xiw.ko

[ -e "$ko" ] || { echo "install: $ko not built; run make" >&2; exit 1; }
install -D -m 0644 "$ko" "/lib/modules/$krel/updates/xiw.ko"
depmod -a "$krel"
cmake --install "$repo/build/userspace" >/dev/null
