#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A Debian 13 (trixie) root file system with rdma-core 56, made with
# debootstrap from the Debian mirror this machine's apt sources name (never
# one written here), and cached in /var/cache/xiw by its suite and package
# list: made once per machine (about 90 s here, 700 MB).
#
#   scripts/debian13-root.sh            make it if needed, print its path
#   scripts/debian13-root.sh --cached   print its path if made, else fail
#   scripts/debian13-root.sh --run CMD...
#         run CMD as root inside it (chroot), in this repository, which is
#         bound at the same path, with /proc; the mounts live in a mount
#         namespace of their own and end with CMD
#   scripts/debian13-root.sh --deb [--cached | --run CMD...]
#         the same for a second root that also has Debian 13's own kernel
#         with its headers, DKMS and the packaging tools (about 1.3 GB)
#
# make check builds and tests the provider in the first against rdma-core
# 56; make check-deb builds the packages in the second and boots its
# kernel to install them (scripts/deb.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
repo=$XIW_REPO

PACKAGES=(
	g++ make cmake pkg-config
	libibverbs-dev librdmacm-dev libgtest-dev googletest
	ibverbs-providers ibverbs-utils rdmacm-utils perftest qperf
	iproute2 kmod procps nvme-cli
)

if [ "${1:-}" = --deb ]; then
	shift
	PACKAGES+=(
		build-essential dpkg-dev debhelper dh-dkms dkms fakeroot
		linux-image-amd64 linux-headers-amd64
	)
fi

# What the root is made of names its cache: the suite, the variant and
# the packages (the debootstrap line below uses these three).
SUITE=trixie VARIANT=minbase
key=$(echo "$SUITE $VARIANT ${PACKAGES[*]}" | sha256sum | cut -c1-12)
root=/var/cache/xiw/debian13-root-$key

case ${1:-} in
--cached)
	[ -e "$root/.complete" ] && echo "$root" && exit 0
	exit 1 ;;
--run)
	shift
	[ -e "$root/.complete" ] ||
		{ echo "debian13-root: not made: run scripts/debian13-root.sh" >&2; exit 1; }
	mkdir -p "$root$repo"
	exec unshare -m bash -c '
		set -e
		repo=$1 root=$2
		shift 2
		mount --make-rprivate /
		mount --bind "$repo" "$root$repo"
		mount -t proc proc "$root/proc"
		exec chroot "$root" /bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$repo" "$@"' \
		sh "$repo" "$root" "$@" ;;
'') ;;
*) echo "usage: $0 [--deb] [--cached | --run COMMAND...]" >&2; exit 2 ;;
esac

if [ -e "$root/.complete" ]; then
	echo "$root"
	exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "debian13-root: needs root (debootstrap)" >&2; exit 1; }
xiw_install_packages debian13-root debootstrap debian-archive-keyring
# The machine's own Debian mirror: the first deb.debian.org-style URI of
# its main archive in the apt sources (one-line or deb822 format).
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
	/etc/apt/sources.list.d/*.sources 2>/dev/null |
	grep -oE '(^deb +(\[[^]]*\] +)?|^URIs: *)[a-z]+://[^ ]+/debian/?( |$)' |
	grep -oE '[a-z]+://[^ ]+' | head -n 1 || true)
[ -n "$mirror" ] ||
	{ echo "debian13-root: no Debian mirror in the apt sources" >&2; exit 1; }
echo "debian13-root: debootstrap $SUITE from $mirror into $root" >&2
rm -rf "$root"
include=$(IFS=,; echo "${PACKAGES[*]}")
debootstrap --variant="$VARIANT" --include="$include" "$SUITE" "$root" "$mirror" >&2
touch "$root/.complete"
echo "$root"
