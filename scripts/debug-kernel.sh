#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# The debug kernel (KASAN, lockdep, kmemleak, object debugging, UBSAN,
# fault injection) that make check-debug boots: Debian's linux-source-6.1
# configured by defconfig, kvm_guest.config and scripts/debug-kernel.config,
# built once per machine and cached under /var/cache/xiw, keyed by the
# source package's version, a hash of the fragment and RECIPE below (raise
# it when a change to this script changes what it builds).
#
#   scripts/debug-kernel.sh            build it if it is not cached; print
#                                      its directory on the last line
#   scripts/debug-kernel.sh --cached   print the directory if it is cached,
#                                      else exit 1 (builds nothing)
#
# The directory holds vmlinuz, release (its uname -r), build/ (the tree
# out-of-tree modules build against: make -C DIR/build M=...) and
# root/lib/modules/RELEASE (its modules, for the guest).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
frag=$here/debug-kernel.config
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) || {
	echo "debug-kernel: linux-source-6.1 not installed: run scripts/setup.sh" >&2
	exit 1
}
RECIPE=1
key=$( (cat "$frag"; echo "recipe $RECIPE") | sha256sum | cut -c1-12)
dir=/var/cache/xiw/debug-kernel-$srcver-$key

if [ -e "$dir/.complete" ]; then
	echo "$dir"
	exit 0
fi
[ "${1:-}" = --cached ] && exit 1

log() { echo "debug-kernel: $*" >&2; }
start=$(date +%s)
# What building a kernel needs beyond scripts/setup.sh's packages.
BUILD_PACKAGES=(flex bison bc libelf-dev libssl-dev)
xiw_install_packages debug-kernel "${BUILD_PACKAGES[@]}"
if [ ! -e "$dir/src/.unpacked" ]; then
	rm -rf "$dir"
	mkdir -p "$dir/src"
	# Another configuration's unpacked tree serves as well (same source).
	old=$(ls -d /var/cache/xiw/debug-kernel-"$srcver"-*/src/.unpacked \
		2>/dev/null | head -n 1 || true)
	if [ -n "$old" ]; then
		log "moving the unpacked source from ${old%/src/.unpacked}"
		rmdir "$dir/src"
		mv "${old%/.unpacked}" "$dir/src"
		rm -rf "${old%/src/.unpacked}"
	else
		log "unpacking linux-source-$srcver into $dir/src"
		tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$dir/src" \
			--strip-components=1
		touch "$dir/src/.unpacked"
	fi
fi
rm -rf "$dir/build" "$dir/root"
mkdir -p "$dir/build"

cd "$dir/src"
make -s O="$dir/build" defconfig kvm_guest.config >&2
# Each NAME=value line of the fragment, through scripts/config.
args=()
while IFS= read -r line; do
	case $line in ''|'#'*) continue ;; esac
	name=${line%%=*} val=${line#*=}
	case $val in
	y) args+=(--enable "$name") ;;
	m) args+=(--module "$name") ;;
	n) args+=(--disable "$name") ;;
	\"*\") v=${val#\"}; args+=(--set-str "$name" "${v%\"}") ;;
	*) args+=(--set-val "$name" "$val") ;;
	esac
done < "$frag"
scripts/config --file "$dir/build/.config" "${args[@]}"
make -s O="$dir/build" olddefconfig >&2
# olddefconfig drops what a dependency forbids: say so rather than build
# a kernel that silently lacks a debug feature.
missing=
while IFS= read -r line; do
	case $line in ''|'#'*) continue ;; esac
	name=${line%%=*} val=${line#*=}
	case $val in
	n) grep -q "^CONFIG_$name=" "$dir/build/.config" && missing="$missing $name=n" ;;
	*) grep -qx "CONFIG_$name=$val" "$dir/build/.config" || missing="$missing $name=$val" ;;
	esac
done < "$frag"
if [ -n "$missing" ]; then
	log "options the configuration did not take:$missing"
	exit 1
fi

log "building (make -j$(nproc)); this takes a while once per machine"
make -s O="$dir/build" -j"$(nproc)" bzImage modules >&2
make -s O="$dir/build" INSTALL_MOD_PATH="$dir/root" INSTALL_MOD_STRIP=1 \
	modules_install >&2
cp "$dir/build/arch/x86/boot/bzImage" "$dir/vmlinuz"
make -s O="$dir/build" kernelrelease > "$dir/release"
# Out-of-tree builds need only build/ and the source it points at; the
# objects are kept (modpost reads vmlinux's symbols from Module.symvers).
rm -f "$dir/root/lib/modules/$(cat "$dir/release")"/{build,source}
log "built $(cat "$dir/release") in $(( $(date +%s) - start )) s"
touch "$dir/.complete"
echo "$dir"
