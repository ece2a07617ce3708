#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Build the in-tree siw driver out of tree, from the source of the kernel
# series built against (linux-source-6.1 or -6.12, unpacked by
# scripts/setup.sh; Debian ships siw disabled in both), into
# build/siw/KREL/. build/siw/siw.ko links to the one built last. Used as
# the reference peer by the interoperability tests and make bench.
#
# With "crc", the same siw with MPA CRC required, into build/siw/KREL-crc/
# (linked as build/siw/siw-crc.ko): siw takes that setting from a
# compile-time constant (mpa_crc_required in siw_main.c, false upstream),
# so comparing xiw's default (CRC on) with siw like for like needs a
# second build. It is still called siw: load one or the other.
#
#   scripts/siw-build.sh [KREL] [crc]     prints the path of siw.ko
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
krel=${1:-$("$repo/scripts/kernel-release.sh")}
variant=${2:-}
case $variant in
"" | crc) ;;
*) echo "usage: siw-build.sh [KREL] [crc]" >&2; exit 2 ;;
esac
series=$(echo "$krel" | cut -d. -f1-2)
ver=$(dpkg-query -W -f='${Version}' "linux-source-$series" 2>/dev/null) ||
	{ echo "siw-build: linux-source-$series not installed: run scripts/setup.sh" >&2; exit 1; }
src=/var/cache/xiw/linux-source-$ver/drivers/infiniband/sw/siw
out=$repo/build/siw/$krel${variant:+-$variant}
[ -d "$src" ] || { echo "siw-build: $src missing: run scripts/setup.sh" >&2; exit 1; }
mkdir -p "$out"
# Copy, so the kernel build writes its objects under build/, not the cache.
cp -u "$src"/*.[ch] "$out"/
if [ "$variant" = crc ]; then
	sed -i 's/^const bool mpa_crc_required;$/const bool mpa_crc_required = true;/' \
		"$out/siw_main.c"
	grep -qx 'const bool mpa_crc_required = true;' "$out/siw_main.c" ||
		{ echo "siw-build: no mpa_crc_required constant in $src/siw_main.c" >&2; exit 1; }
fi
echo "obj-m := siw.o" >"$out/Kbuild"
echo "siw-y := $(cd "$out" && ls siw_*.c | sed 's/\.c$/.o/' | tr '\n' ' ')" >>"$out/Kbuild"
make -s -C "/lib/modules/$krel/build" M="$out" CONFIG_RDMA_SIW=m modules >&2
ln -sfn "$krel${variant:+-$variant}/siw.ko" "$repo/build/siw/siw${variant:+-$variant}.ko"
echo "$out/siw.ko"
