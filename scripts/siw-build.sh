#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Build the in-tree siw driver of linux-source-6.1 out of tree, against
# the installed kernel (Debian 12 ships it disabled), into build/siw/.
# Used as the reference peer by the interoperability tests and make bench.
#
#   scripts/siw-build.sh [KREL]     prints the path of siw.ko
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
krel=${1:-$("$repo/scripts/kernel-release.sh")}
ver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
src=/var/cache/xiw/linux-source-$ver/drivers/infiniband/sw/siw
out=$repo/build/siw
[ -d "$src" ] || { echo "siw-build: $src missing: run scripts/setup.sh" >&2; exit 1; }
mkdir -p "$out"
# Copy, so the kernel build writes its objects under build/, not the cache.
cp -u "$src"/*.[ch] "$out"/
echo "obj-m := siw.o" >"$out/Kbuild"
echo "siw-y := $(cd "$out" && ls siw_*.c | sed 's/\.c$/.o/' | tr '\n' ' ')" >>"$out/Kbuild"
make -s -C "/lib/modules/$krel/build" M="$out" CONFIG_RDMA_SIW=m modules >&2
echo "$out/siw.ko"
