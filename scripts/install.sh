#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Install already built xiw artifacts: the module under the kernel's
# updates/ directory (then depmod, so "rdma link add ... type xiw" can
# autoload it), the provider and its libibverbs driver file.
#   scripts/install.sh [--prepared DIR] [KREL]
# --prepared DIR takes the module and its index from a tree made by
# scripts/vm-modules.sh instead of running depmod (used in the test VM).
#
# XIW_PROVIDER_BUILD names the provider's CMake build directory to install
# from (default build/userspace; make check's Debian 13 guest installs
# build/d13/userspace, built against rdma-core 56).
#
# KREL defaults to the newest installed kernel, but inside the test VM
# (XIW_IN_VM) to the running one: the guest may have booted another
# kernel than the host's newest, the debug kernel for one.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
prepared=
if [ "${1:-}" = --prepared ]; then
	prepared=$2
	shift 2
fi
if [ -n "${1:-}" ]; then
	krel=$1
elif [ -n "${XIW_IN_VM:-}" ]; then
	krel=$(uname -r)
else
	krel=$("$repo/scripts/kernel-release.sh")
fi
mods=/lib/modules/$krel
ko=$repo/drivers/infiniband/sw/xiw/xiw.ko
if [ -n "$prepared" ]; then
	# vm-modules.sh links the module it indexed (for the debug kernel,
	# build/debug/xiw.ko).
	pmods=$prepared/lib/modules/$krel
	[ -d "$pmods" ] ||
		{ echo "install: $pmods missing: run scripts/vm-modules.sh $krel $prepared" >&2; exit 1; }
	ko=$pmods/updates/xiw.ko
fi

[ -e "$ko" ] || { echo "install: $ko not built; run make" >&2; exit 1; }
if [ -n "$prepared" ] && [ ! -e "$mods" ]; then
	# A kernel this machine has not installed (the debug kernel): the
	# prepared tree becomes its module directory, its symlinks to the
	# modules kept as they are.
	mkdir -p "$mods"
	for f in "$pmods"/*; do
		[ "${f##*/}" = updates ] || cp -P "$f" "$mods/"
	done
fi
install -D -m 0644 "$ko" "$mods/updates/xiw.ko"
if [ -n "$prepared" ]; then
	for f in "$pmods"/modules.*; do
		[ -L "$f" ] || cp "$f" "$mods/"
	done
else
	depmod -a "$krel"
fi
cmake --install "$repo/${XIW_PROVIDER_BUILD:-build/userspace}" >/dev/null
