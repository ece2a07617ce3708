#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Install already built xiw artifacts: the module under the kernel's
# updates/ directory (then depmod, so "rdma link add ... type xiw" can
# autoload it), the provider and its libibverbs driver file.
#   scripts/install.sh [--prepared DIR] [KREL]
# --prepared DIR takes the module index from a tree made by
# scripts/vm-modules.sh instead of running depmod (used in the test VM).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
prepared=
if [ "${1:-}" = --prepared ]; then
	prepared=$2
	shift 2
fi
krel=${1:-$("$repo/scripts/kernel-release.sh")}
ko=$repo/drivers/infiniband/sw/xiw/xiw.ko

[ -e "$ko" ] || { echo "install: $ko not built; run make" >&2; exit 1; }
install -D -m 0644 "$ko" "/lib/modules/$krel/updates/xiw.ko"
if [ -n "$prepared" ]; then
	for f in "$prepared/lib/modules/$krel"/modules.*; do
		[ -L "$f" ] || cp "$f" "/lib/modules/$krel/"
	done
else
	depmod -a "$krel"
fi
cmake --install "$repo/build/userspace" >/dev/null
