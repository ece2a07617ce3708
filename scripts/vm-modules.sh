#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Host side of installing xiw into a test VM: a module tree that mirrors
# /lib/modules/KREL through symlinks, plus updates/xiw.ko, indexed by a
# native depmod. depmod inside the emulated guest reads every module over
# 9p and takes minutes; here it takes a second. The guest then copies the
# index files (scripts/install.sh --prepared DIR).
#   scripts/vm-modules.sh KREL OUTDIR [XIW-KO]
#
# XIW-KO is the module to install, built for KREL (default: the tree's,
# drivers/infiniband/sw/xiw/xiw.ko). OUTDIR may hold the trees of several
# releases (make check's two kernels); only KREL's is replaced.
#
# With XIW_VM_KDIR=DIR (the debug kernel of scripts/debug-kernel.sh) the
# tree mirrors DIR/root/lib/modules/KREL instead and updates/xiw.ko is
# build/debug/xiw.ko (make module-debug). The guest sees the host's root
# at the same paths, so the absolute symlinks resolve there as well.
#
# updates/xiw.ko is a symlink to the built module, so that install.sh
# --prepared installs whatever make built last, as it did when it took the
# module from the source tree.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
krel=$1
root=$2
ko=${3:-}
mods=$root/lib/modules/$krel
if [ -n "${XIW_VM_KDIR:-}" ]; then
	src=$XIW_VM_KDIR/root/lib/modules/$krel
	ko=${ko:-$repo/build/debug/xiw.ko}
else
	src=/lib/modules/$krel
	ko=${ko:-$repo/drivers/infiniband/sw/xiw/xiw.ko}
fi
ko=$(realpath -m "$ko")
[ -d "$src" ] || { echo "vm-modules: $src missing" >&2; exit 1; }
[ -e "$ko" ] || { echo "vm-modules: $ko not built" >&2; exit 1; }
rm -rf "$mods"
mkdir -p "$mods/updates"
for f in "$src"/*; do
	case ${f##*/} in
	# depmod's outputs: regenerated below, not linked.
	modules.dep|modules.dep.bin|modules.alias|modules.alias.bin|\
	modules.softdep|modules.weakdep|modules.symbols|modules.symbols.bin|\
	modules.builtin.bin|modules.builtin.alias.bin|modules.devname|updates)
		;;
	*) ln -s "$f" "$mods/" ;;
	esac
done
ln -s "$ko" "$mods/updates/xiw.ko"
depmod -b "$root" "$krel"
