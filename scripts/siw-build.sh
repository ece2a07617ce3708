#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Build the in-tree siw driver out of tree, from the source of the kernel
# series built against (linux-source-6.1 or -6.12, unpacked by
# scripts/setup.sh; Debian ships siw disabled in both), into
# build/siw/KREL/. build/siw/siw.ko links to the one built last. Used as
# the reference peer by the interoperability tests and make bench.
#
#   scripts/siw-build.sh [KREL]     prints the path of siw.ko
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
krel=${1:-$("$repo/scripts/kernel-release.sh")}
series=$(echo "$krel" | cut -d. -f1-2)
ver=$(dpkg-query -W -f='${Version}' "linux-source-$series" 2>/dev/null) ||
	{ echo "siw-build: linux-source-$series not installed: run scripts/setup.sh" >&2; exit 1; }
src=/var/cache/xiw/linux-source-$ver/drivers/infiniband/sw/siw
out=$repo/build/siw/$krel
[ -d "$src" ] || { echo "siw-build: $src missing: run scripts/setup.sh" >&2; exit 1; }
mkdir -p "$out"
# Copy, so the kernel build writes its objects under build/, not the cache.
cp -u "$src"/*.[ch] "$out"/
echo "obj-m := siw.o" >"$out/Kbuild"
echo "siw-y := $(cd "$out" && ls siw_*.c | sed 's/\.c$/.o/' | tr '\n' ' ')" >>"$out/Kbuild"
make -s -C "/lib/modules/$krel/build" M="$out" CONFIG_RDMA_SIW=m modules >&2
ln -sfn "$krel/siw.ko" "$repo/build/siw/siw.ko"
echo "$out/siw.ko"
