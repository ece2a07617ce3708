#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Install everything xiw's build, lint and tests need on Debian 12, and
# unpack the parts of the kernel source tree we use. Idempotent: a second
# run only checks, which takes a few seconds. Needs root (apt-get).
#
# Two kernels: Debian 12's own 6.1, and the 6.12 series Debian 13 ships
# and Debian 12 carries too (bookworm-security, bookworm-backports): its
# newest image and headers, unless a 6.12 kernel with headers is already
# installed, and its source's siw (make check's second lane).
#
# Prints the cache directory holding the unpacked kernel source on its
# last line of stdout, for the Makefile.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PACKAGES=(
	build-essential g++ cmake pkg-config make perl xz-utils
	linux-image-amd64 linux-headers-amd64 linux-source-6.1
	qemu-system-x86 busybox-static cpio kmod iproute2
	rdma-core ibverbs-providers libibverbs-dev librdmacm-dev
	ibverbs-utils rdmacm-utils perftest qperf iperf3 nvme-cli ethtool
	libfabric-dev libfabric-bin python3-pyverbs
	sparse clang-tidy libgtest-dev googletest nfs-kernel-server nfs-common
)

# Kernel source files we take at build time: the kselftest harness,
# checkpatch with its data files, and siw (test peer in later work).
SRC_PATHS=(
	tools/testing/selftests/kselftest_harness.h
	tools/testing/selftests/kselftest.h
	scripts/checkpatch.pl
	scripts/spelling.txt
	scripts/const_structs.checkpatch
	drivers/infiniband/sw/siw
)

log() { echo "setup: $*" >&2; }

xiw_install_packages setup "${PACKAGES[@]}"

# Whether apt can install PACKAGE (madison lists only real versions: a
# name that is only referred to prints nothing).
installable() { [ -n "$(apt-cache madison "$1" 2>/dev/null)" ]; }

# The 6.12 kernel: an installed one, else the newest apt offers with both
# headers and an image. The security archive publishes a release's
# headers and unsigned image before its signed image, so a release can
# have headers but no linux-image-RELEASE for a while; its -unsigned
# image is the same kernel (the guest boots it unsigned anyway).
pick612() {	# sets krel612 and image612, or fails
	local r image
	for r in $(apt-cache pkgnames linux-headers-6.12. |
		grep -E '^linux-headers-6\.12\.[0-9]+\+deb[0-9]+-amd64$' |
		sed 's/^linux-headers-//' | sort -rV); do
		installable "linux-headers-$r" || continue
		for image in "linux-image-$r" "linux-image-$r-unsigned"; do
			if installable "$image"; then
				krel612=$r image612=$image
				return 0
			fi
		done
	done
	return 1
}
image612=
if ! krel612=$("$(dirname "$0")/kernel-release.sh" --series 6.12 2>/dev/null); then
	if ! pick612; then
		# A machine whose package lists were never fetched.
		DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
		pick612 ||
			{ log "no 6.12 kernel with headers and an image in the apt sources"; exit 1; }
	fi
fi
[ -n "$image612" ] || image612=linux-image-$krel612
if [ -n "$(xiw_missing_packages "$image612")" ] &&
	[ -z "$(xiw_missing_packages "$image612-unsigned")" ]; then
	image612=$image612-unsigned	# installed unsigned earlier
fi
xiw_install_packages setup "$image612" "linux-headers-$krel612" \
	linux-source-6.12
log "kernel releases $("$(dirname "$0")/kernel-release.sh" --series 6.1)" \
	"and $krel612"

# Unpack PATH... of linux-source-SERIES into /var/cache/xiw (once per
# source version) and print the directory.
unpack() {	# unpack SERIES PATH...
	local series=$1 srcver cache
	shift
	srcver=$(dpkg-query -W -f='${Version}' "linux-source-$series")
	cache=/var/cache/xiw/linux-source-$srcver
	if [ ! -e "$cache/.complete" ]; then
		log "unpacking kernel source parts into $cache"
		rm -rf "$cache"
		mkdir -p "$cache"
		tar -xJf "/usr/src/linux-source-$series.tar.xz" -C "$cache" \
			--strip-components=1 \
			"${@/#/linux-source-$series/}" >&2
		touch "$cache/.complete"
	fi
	echo "$cache"
}
unpack 6.12 drivers/infiniband/sw/siw > /dev/null
unpack 6.1 "${SRC_PATHS[@]}"
