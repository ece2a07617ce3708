#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Runs inside the VM for "make check-deb" (scripts/deb.sh --check): the
# packages of build/deb installed the way a user installs them, on a
# system where xiw is not installed, then used, then purged.
#
# - no xiw anywhere first: a module or provider the host got from
#   "make install" is removed from the guest's overlay (and named), so that
#   only the packages can provide them;
# - apt-get install ./build/deb/*.deb (XIW_DEB_DIR: another directory of
#   the repository), offline (every dependency is installed on the host,
#   scripts/deb.sh --setup, or in the Debian 13 root);
# - DKMS built and installed xiw.ko for the running kernel (dkms status,
#   modinfo's path under updates/dkms);
# - modprobe xiw, rdma link add xiw0 on a dummy netdev, ibv_devices and
#   ibv_devinfo see xiw0 through the packaged provider (the file libibverbs
#   loads, LD_DEBUG=files, is the one dpkg says the package owns);
# - rping with data verification and ib_write_bw -R over xiw0, server and
#   client here;
# - apt-get purge leaves no module, DKMS tree, source or provider behind.
#
# Output is TAP (one program, xiw_deb), read by scripts/check.sh --parse.
set -u
. "$(dirname "$0")/../lib.sh"
xiw_guest_only xiw_deb.sh "make check-deb"
name=xiw_deb
krel=$(uname -r)
# The packages: build/deb, or XIW_DEB_DIR (relative to the repository).
debdir=${XIW_DEB_DIR:-build/deb}
debs=("$XIW_REPO/$debdir"/*.deb)
provider=/usr/lib/x86_64-linux-gnu/libibverbs/libxiw-rdmav34.so
driver=/etc/libibverbs.d/xiw.driver
PKGS="xiw-dkms ibverbs-provider-xiw"
n=0
fails=0
log=$(mktemp)
t00=$SECONDS

# check NAME COMMAND...: ok iff COMMAND exits 0. Its output goes to the
# log; the comments before a result line are that result's (check.sh
# prints them under a FAIL): the time it took, the log's lines matching
# $show (when set, as "show=REGEX check ..."), and the log's end if it
# failed.
check() {
	local t=$1 t0=$SECONDS rc=0
	shift
	"$@" > "$log" 2>&1 || rc=$?
	echo "# time: $t $((SECONDS - t0)) s"
	[ -z "${show:-}" ] || grep -E -- "$show" "$log" | sed 's/^/# /' | head -n 30
	n=$((n + 1))
	if [ $rc -eq 0 ]; then
		echo "ok $n $t"
	else
		fails=$((fails + 1))
		sed 's/^/# /' "$log" | tail -n 40
		echo "not ok $n $t"
	fi
}
bail() { echo "Bail out! $*"; echo "# exit: $name 1"; exit 1; }

echo "# selftest: $name"
echo "1..12"
[ -e "${debs[0]}" ] || bail "no package in $debdir: make deb first"
printf '# package: %s\n' "${debs[@]##*/}"

# dkms reads its own output through <(...), which needs /dev/fd: udev
# makes it on a booted system; the test VM's devtmpfs has none.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd

# What a "make install" on the host left would shadow the packages.
for f in /lib/modules/"$krel"/updates/xiw.ko /lib/modules/"$krel"/extra/xiw.ko \
	 "$provider" "$driver" /usr/local/lib/libibverbs/libxiw-rdmav34.so; do
	if [ -e "$f" ] && ! dpkg -S "$f" > /dev/null 2>&1; then
		echo "# removed from the guest's overlay (not from a package): $f"
		rm -f "$f"
		depmod -a "$krel"
	fi
done

not_installed() {
	local p st
	for p in $PKGS; do
		st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null) || continue
		case $st in
		u*|n*|"") ;;
		*) echo "$p: dpkg status '$st'"; return 1 ;;
		esac
	done
	! lsmod | grep -q '^xiw ' || { echo "xiw is loaded"; return 1; }
	! modinfo -n xiw 2> /dev/null || { echo "a xiw module is installed"; return 1; }
	! ls -d /var/lib/dkms/xiw /usr/src/xiw-* 2> /dev/null || return 1
	for f in "$provider" "$driver"; do
		[ ! -e "$f" ] || { echo "$f exists"; return 1; }
	done
}
check "no xiw installed before the packages" not_installed

# apt-get resolves the dependencies from the host's package lists; with
# nothing to download no network is touched.
install() {
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		-o Acquire::http::Timeout=5 -o Acquire::Retries=0 "${debs[@]}"
}
# The install's own output: DKMS says what it built and for which kernel.
show='Building|Loading|Installing|Done|dkms|xiw' \
	check "apt-get install ./$debdir/*.deb (DKMS builds xiw.ko)" install

dkms_installed() {
	dkms status xiw
	# The release is matched as a string: 6.12's holds a "+".
	dkms status xiw | grep '^xiw/' | grep -F ", $krel, " | grep -qE ': installed( |$)'
}
check "dkms status: xiw installed for $krel" dkms_installed

modinfo_path() {
	local p
	p=$(modinfo -n xiw) || return 1
	echo "$p"
	case $p in
	/lib/modules/"$krel"/updates/dkms/xiw.ko*) ;;
	*) echo "not DKMS's"; return 1 ;;
	esac
	modinfo -F vermagic xiw | grep "^$krel "
}
show=. check "modinfo xiw: /lib/modules/$krel/updates/dkms" modinfo_path

check "modprobe xiw" modprobe -a xiw ib_uverbs rdma_ucm dummy

link_add() {
	ip link add eth9 type dummy &&
	ip addr add 10.99.0.1/24 dev eth9 &&
	ip link set eth9 up &&
	rdma link add xiw0 type xiw netdev eth9 &&
	rdma link show
}
check "rdma link add xiw0 type xiw netdev eth9" link_add

provider_loaded() {
	dpkg -S "$provider" "$driver" &&
	[ "$(dpkg -S "$provider" | cut -d: -f1)" = ibverbs-provider-xiw ] || return 1
	LD_DEBUG=files ibv_devinfo -d xiw0 > "$log.ld" 2>&1
	grep -q "file=$provider \[0\];  dynamically loaded" "$log.ld" ||
		{ echo "libibverbs did not load $provider:"; grep -i xiw "$log.ld"; return 1; }
	echo "libibverbs loaded $provider"
	ibv_devices | tee "$log.dev"
	grep -qE '^ +xiw0 ' "$log.dev" || return 1
	ibv_devinfo -d xiw0 | tee "$log.info"
	grep -qE 'transport:[[:space:]]+iWARP' "$log.info" &&
		grep -qE 'state:[[:space:]]+PORT_ACTIVE' "$log.info"
}
show=. check "ibv_devices, ibv_devinfo: xiw0 through the packaged provider" provider_loaded
rm -f "$log.ld" "$log.dev" "$log.info"

ping() {
	local srv rc=0
	rping -s -a 10.99.0.1 -C 10 -v -V &
	srv=$!
	sleep 1
	timeout 60 rping -c -a 10.99.0.1 -C 10 -v -V || rc=$?
	# The server ends with its client; one still there 10 s later failed.
	for _ in $(seq 10); do
		kill -0 $srv 2> /dev/null || break
		sleep 1
	done
	kill $srv 2> /dev/null && { echo "rping server still running"; rc=1; }
	wait $srv || rc=1
	return $rc
}
check "rping -C 10 -V over xiw0" ping

# perftest through rdma_cm: 200 RDMA Writes of 64 KiB, and its result line
# ("#bytes #iterations ..."). The rates are not checked: under emulation
# perftest's guess of the CPU clock may fail (-F goes on) and print 0.00.
write_bw() {
	local srv rc=0
	ib_write_bw -R -F -d xiw0 -s 65536 -n 200 &
	srv=$!
	sleep 2
	timeout 120 ib_write_bw -R -F -d xiw0 -s 65536 -n 200 10.99.0.1 \
		> "$log.bw" 2>&1 || rc=$?
	cat "$log.bw"
	timeout 20 tail --pid=$srv -f /dev/null || { kill $srv; rc=1; }
	wait $srv || rc=1
	grep -qE '^ *65536 +200 ' "$log.bw" || { echo "no result line"; rc=1; }
	rm -f "$log.bw"
	return $rc
}
check "ib_write_bw -R -s 65536 -n 200 over xiw0" write_bw

teardown() {
	rdma link delete xiw0 && ip link del eth9 && rmmod xiw
}
check "rdma link delete xiw0, rmmod xiw" teardown

purge() {
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get purge -y $PKGS
}
check "apt-get purge $PKGS" purge

removed() {
	local p left
	for p in $PKGS; do
		if dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^[ic]'; then
			echo "$p still known to dpkg"; return 1
		fi
	done
	[ -z "$(dkms status xiw)" ] || { dkms status xiw; return 1; }
	! modinfo -n xiw 2> /dev/null || { echo "a xiw module is still installed"; return 1; }
	left=$(find /lib/modules -name 'xiw.ko*' 2>/dev/null; ls -d /var/lib/dkms/xiw /usr/src/xiw-* \
		"$provider" "$driver" 2> /dev/null)
	[ -z "$left" ] || { echo "left behind: $left"; return 1; }
}
check "purged: no module, DKMS tree, source, provider or driver file left" removed

echo "# time: $name $((SECONDS - t00)) s"
rm -f "$log"
echo "# exit: $name $((fails > 0))"
[ $fails -eq 0 ]
