#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Host side of installing xiw into a test VM: a module tree that mirrors
# /lib/modules/KREL through symlinks, plus updates/xiw.ko, indexed by a
# native depmod. depmod inside the emulated guest reads every module over
# 9p and takes minutes; here it takes a second. The guest then copies the
# index files (scripts/install.sh --prepared DIR).
#   scripts/vm-modules.sh KREL OUTDIR
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
krel=$1
root=$2
mods=$root/lib/modules/$krel
rm -rf "$root"
mkdir -p "$mods/updates"
for f in /lib/modules/"$krel"/*; do
	case ${f##*/} in
	# depmod's outputs: regenerated below, not linked.
	modules.dep|modules.dep.bin|modules.alias|modules.alias.bin|\
	modules.softdep|modules.weakdep|modules.symbols|modules.symbols.bin|\
	modules.builtin.bin|modules.builtin.alias.bin|modules.devname|updates)
		;;
	*) ln -s "$f" "$mods/" ;;
	esac
done
cp "$repo/drivers/infiniband/sw/xiw/xiw.ko" "$mods/updates/"
depmod -b "$root" "$krel"
