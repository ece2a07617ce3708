#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Install everything xiw's build, lint and tests need on Debian 12, and
# unpack the parts of the kernel source tree we use. Idempotent: a second
# run only checks, which takes a few seconds. Needs root (apt-get).
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
	libfabric-dev libfabric-bin
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

KREL=$("$(dirname "$0")/kernel-release.sh")
log "kernel release $KREL"

srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
cache=/var/cache/xiw/linux-source-$srcver
if [ ! -e "$cache/.complete" ]; then
	log "unpacking kernel source parts into $cache"
	rm -rf "$cache"
	mkdir -p "$cache"
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$cache" \
		--strip-components=1 \
		"${SRC_PATHS[@]/#/linux-source-6.1/}" >&2
	touch "$cache/.complete"
fi
echo "$cache"
