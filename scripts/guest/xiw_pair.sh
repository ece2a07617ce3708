#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Two guests, one link (scripts/vm-pair.sh): xiw on a virtio-net NIC in
# each, the standard RDMA tools across the link, then the two ways a peer
# goes away without closing its connections. Role "a" (10.98.0.1) runs the
# servers, role "b" (10.98.0.2) the clients. The roles meet on a control
# port (9000) before each step, so no client races its server.
#
# In order:
# - rping with data validation, ib_{write,read,send}_bw -R at 64 KiB,
#   ib_write_lat -R, ib_atomic_{bw,lat} -R (RFC 7306 atomics across the
#   link),
#   qperf -cm1 rc_bw/rc_lat/rc_rdma_{read,write}_bw;
# - NFS over RDMA across the link: a's nfsd on rdma 20049 exports a tmpfs,
#   b mounts it with NFSv4.2 and NFSv3 (proto=rdma), and files written at
#   each end are read at the other, checked byte for byte (sha256);
# - the same but qperf with the kernel's siw serving on a
#   (build/siw/KREL/siw.ko): xiw and siw across a real link, xiw's
#   p2p_rtr 0 (siw's RTR race, admin-guide.rst);
# - the link pulled on a under an rping stream: both ends fail the stream
#   and drop their QPs within the bound of admin-guide.rst (V-06),
#   ka_idle_s + 15 s, with ka_idle_s = 5 here;
# - guest a killed (QEMU SIGKILL) under an rping stream: b fails it within
#   the same bound (V-06).
#
# Output is TAP, one stream per guest, read by scripts/check.sh.
set -u
. "$(dirname "$0")/../lib.sh"
xiw_guest_only xiw_pair.sh "scripts/vm-pair.sh -- scripts/guest/xiw_pair.sh"
role=${1:?role a or b}
A=10.98.0.1
B=10.98.0.2
KA=5			# ka_idle_s for the loss tests
BOUND=$((KA + 15 + 15))	# the documented bound plus start-up slack
out=/mnt/xiw-out
name=xiw_pair_$role
n=0
fails=0

# A result's diagnostics come before its line, as in kselftest's TAP:
# scripts/check.sh shows a failure with the "#" lines that precede it.
ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() {
	[ -n "${2:-}" ] && [ -s "$2" ] && sed 's/^/# /' "$2" | tail -n 30
	n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n $1"
}
check() {	# check NAME LOG COMMAND...: ok iff COMMAND exits 0
	local t=$1 log=$2
	shift 2
	if "$@"; then ok "$t"; else not_ok "$t" "$log"; fi
}
bail() { echo "Bail out! $*"; echo "# exit: $name 1"; exit 1; }
logged() { "$@" > "$log" 2>&1; }	# run into this step's log

# The control port: a announces step N, b waits for it.
ready() {	# ready N (role a)
	timeout 300 python3 -c '
import socket, sys
s = socket.create_server((sys.argv[1], 9000))
c, _ = s.accept()
c.sendall(sys.argv[2].encode())
c.close()' "$A" "$1" || bail "control: step $1 not taken by b"
}
await() {	# await N (role b)
	local i got
	for i in $(seq 600); do
		got=$( (exec 3<>"/dev/tcp/$A/9000" && cat <&3) 2>/dev/null)
		[ "$got" = "$1" ] && return 0
		[ -n "$got" ] && bail "control: expected step $1, a says $got"
		sleep 0.5
	done
	bail "control: step $1 never announced"
}
# b's word on a perftest step, back to a on port 9001: "again" when the
# client lost perftest's listen race (scripts/lib.sh) and may run once
# more, a then restarting its server and announcing the step again;
# "done" otherwise.
verdict() {	# verdict WORD (role b)
	local i
	for i in $(seq 600); do
		(exec 3<>"/dev/tcp/$A/9001" && printf '%s\n' "$1" >&3) \
			2>/dev/null && return 0
		sleep 0.5
	done
	bail "control: a never took the verdict $1"
}
hear_verdict() {	# hear_verdict (role a): print b's word
	timeout 300 python3 -c '
import socket, sys
s = socket.create_server((sys.argv[1], 9001))
c, _ = s.accept()
print(c.makefile().readline().strip())
c.close()' "$A"
}
listening() {	# listening PORT: wait until a server listens on it
	local i
	for i in $(seq 120); do
		ss -Hltn "sport = :$1" | grep -q . && return 0
		sleep 0.5
	done
	return 1
}
established() {	# established PORT: wait for a connection on it
	local i
	for i in $(seq 120); do
		ss -Htn state established "( sport = :$1 or dport = :$1 )" |
			grep -q . && return 0
		sleep 0.5
	done
	return 1
}
# An rping without -C streams until its connection breaks, and then exits
# after a DISCONNECTED event (with status 0, rping's choice): it must not
# have been stopped by timeout(1), and must have ended within the bound.
broke_in() {	# broke_in RC SECONDS BOUND
	[ "$1" -ne 124 ] && [ "$1" -ne 137 ] && [ "$2" -le "$3" ] &&
		grep -q "DISCONNECT EVENT" "$log"
}
no_qps() {	# no xiw QP left on xiw0
	! rdma res show qp link xiw0/1 2>/dev/null | grep -q lqpn
}

# NFS over RDMA: a's nfsd on rdma $NFS_PORT exports a tmpfs (nfsd cannot
# export the guest's 9p root or its overlay) as the NFSv4 root, with
# rpcbind and rpc.mountd for NFSv3; the grace period cut to its minimum.
NFS_PORT=20049
EXPORT=/srv/xiw-pair
MNT=/mnt/xiw-pair
nfs_server_up() {
	modprobe -a nfsd rpcrdma nfsv3 nfsv4 &&
	mkdir -p $EXPORT /var/lib/nfs/v4recovery /run/rpcbind &&
	{ mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd; } &&
	mount -t tmpfs -o size=64m xiw_pair $EXPORT &&
	echo 10 > /proc/fs/nfsd/nfsv4gracetime &&
	echo 10 > /proc/fs/nfsd/nfsv4leasetime &&
	timeout 60 sh -c "rpcbind -w &&
		exportfs -o rw,no_root_squash,insecure,fsid=0 '*:$EXPORT' &&
		rpc.mountd && rpc.nfsd 4 &&
		echo 'rdma $NFS_PORT' > /proc/fs/nfsd/portlist" &&
	grep -q "rdma $NFS_PORT" /proc/fs/nfsd/portlist
}
# A file of random bytes and, next to it, its sha256.
nfs_put() {	# nfs_put FILE
	head -c $((4 << 20)) /dev/urandom > "$1" &&
		sha256sum < "$1" > "$1.sha256"
}
nfs_same() {	# nfs_same FILE: its bytes are what its .sha256 says
	[ "$(sha256sum < "$1")" = "$(cat "$1.sha256")" ]
}

echo "TAP version 13"
echo "# selftest: $name"
why=$(xiw_guest_install ib_uverbs iw_cm rdma_ucm virtio_net) || bail "$why"
nic=
for d in /sys/class/net/*; do
	[ -e "$d/device" ] && nic=$(basename "$d") && break
done
[ -n "$nic" ] || bail "no NIC in the guest"
me=$([ "$role" = a ] && echo $A || echo $B)
ip addr add "$me/24" dev "$nic" && ip link set "$nic" up || bail "addr"
rdma link add xiw0 type xiw netdev "$nic" || bail "rdma link add"
echo $KA > /sys/module/xiw/parameters/ka_idle_s || bail "ka_idle_s"
# a is killed after its 15 results; b has 21.
echo "1..$([ "$role" = a ] && echo 15 || echo 21)"
log=$(mktemp)

perf_steps="ib_write_bw:18515 ib_read_bw:18516 ib_send_bw:18517 ib_write_lat:18518"
# RFC 7306 atomics: xiw serving only (siw has none).
atomic_steps="ib_atomic_bw:18519 ib_atomic_lat:18520"
step=0

# The message size each perftest program is run with.
size_of() {
	case $1 in
	ib_write_lat) echo 64 ;;
	ib_atomic_*) echo 8 ;;
	*) echo 65536 ;;
	esac
}

# Role a: rping and the perftest servers on device $1; results tagged $2;
# $3: more perftest steps.
serve() {
	local dev=$1 tag=$2 p prog port size word
	timeout 180 rping -s -a $A -p 7174 -C 200 -S 16384 > "$log" 2>&1 &
	srv=$!
	listening 7174 || bail "rping server does not listen"
	ready $((++step))
	check "rping_server$tag" "$log" wait $srv
	for p in $perf_steps ${3:-}; do
		prog=${p%:*} port=${p#*:}
		size=$(size_of "$prog")
		step=$((step + 1))
		while :; do
			timeout 180 "$prog" -R -F -d "$dev" -p "$port" -n 200 \
				-s $size > "$log" 2>&1 &
			srv=$!
			listening "$port" || bail "$prog does not listen"
			ready $step
			word=$(hear_verdict) || bail "control: no verdict on step $step"
			[ "$word" = again ] || break
			kill "$srv" 2>/dev/null
			wait "$srv" 2>/dev/null
		done
		check "${prog}_server$tag" "$log" wait $srv
	done
}

# xiw0's port counters that are not zero, as one line: what a failed
# client's log then says of Terminates sent or received, CRC errors,
# flushes and failed connections (xiw logs none of them by default).
xiw_counters_note() {
	local out
	out=$(rdma statistic show link xiw0/1 2>&1) ||
		{ echo "xiw0 counters: $out"; return; }
	awk '{ for (i = 3; i < NF; i += 2)
		   if ($(i + 1) != "0") s = s " " $i " " $(i + 1) }
	     END { print "xiw0 counters not zero:" s }' <<< "$out"
}

# Role b: the matching clients, on xiw0 ($2: as serve's $3).
clients() {
	local tag=$1 p prog port size attempt before rc
	await $((++step))
	check "rping_200x16k_validated$tag" "$log" logged timeout 180 \
		rping -c -a $A -p 7174 -C 200 -S 16384 -v -V
	for p in $perf_steps ${2:-}; do
		prog=${p%:*} port=${p#*:}
		size=$(size_of "$prog")
		step=$((step + 1))
		for attempt in 1 2; do
			await $step
			before=$(xiw_tcp_attempt_fails)
			timeout 180 "$prog" -R -F -d xiw0 -p "$port" -n 200 \
				-s $size $A > "$log" 2>&1
			rc=$?
			if xiw_listen_race "$rc" "$log" "$before" &&
			   xiw_rerun "$attempt" "$prog$tag"; then
				verdict again
				continue
			fi
			verdict done
			break
		done
		if [ "$rc" -eq 0 ] && grep -q "^ *$size " "$log"; then
			grep "^ *$size " "$log" | sed 's/^/# /'
			ok "$prog$tag"
		else
			xiw_counters_note >> "$log"
			not_ok "$prog$tag" "$log"
		fi
	done
}

if [ "$role" = a ]; then
	serve xiw0 "" "$atomic_steps"
	# qperf's server runs until b says it is done.
	qperf > "$log" 2>&1 &
	srv=$!
	listening 19765 || bail "qperf does not listen"
	ready $((++step))
	ready $((++step))
	kill $srv; wait $srv 2>/dev/null
	# NFS over RDMA: b reads a's file and writes its own, with NFSv4.2
	# and NFSv3; a then checks b's.
	logged nfs_server_up || bail "NFS server on rdma $NFS_PORT: $(tail -n 3 "$log")"
	nfs_put $EXPORT/from-a || bail "NFS: cannot write the export"
	ready $((++step))
	ready $((++step))
	check "nfs_rdma_file_from_b_intact" /dev/null nfs_same $EXPORT/from-b
	(rpc.nfsd 0; exportfs -ua; kill $(pidof rpc.mountd) $(pidof rpcbind)
	 umount $EXPORT) > /dev/null 2>&1
	# The same programs with the kernel's siw as the server (xiw the
	# client): interoperability across a real link.
	rdma link delete xiw0 || bail "rdma link delete xiw0"
	why=$(xiw_guest_siw) || bail "$why"
	rdma link add siw0 type siw netdev "$nic" || bail "rdma link add siw0"
	serve siw0 "_siw_server"
	rdma link delete siw0 || bail "rdma link delete siw0"
	rdma link add xiw0 type xiw netdev "$nic" || bail "rdma link add xiw0"
	# The link goes down under a running stream.
	timeout 180 rping -s -a $A -p 7174 -S 4096 > "$log" 2>&1 &
	srv=$!
	listening 7174 || bail "rping server does not listen"
	ready $((++step))
	established 7174 || bail "no rping connection"
	sleep 3
	ip link set "$nic" down
	t0=$(date +%s)
	wait $srv
	rc=$?
	dt=$(($(date +%s) - t0))
	echo "# rping server exit $rc ${dt}s after the link went down"
	check "link_down_local_fails_in_bound" "$log" broke_in $rc $dt $BOUND
	ip link set "$nic" up
	check "link_down_local_leaves_no_qp" "$log" no_qps
	# b asks for this guest to be killed under the next stream; the
	# step is b's to pass, ending here would be a failure.
	timeout 300 rping -s -a $A -p 7174 -S 4096 > "$log" 2>&1 &
	srv=$!
	listening 7174 || bail "rping server does not listen"
	ready $((++step))
	wait $srv
	bail "still alive: b never had this guest killed"
fi

# Zero-copy transmit (tx_zcopy=1, the default) is for routes that leave
# the host through a device that offloads the checksum. QEMU's
# virtio-net over a socket backend offers no offload, so here the 64 KiB
# Sends, Writes and Read Responses above must have been copied; with
# tx-checksumming on (another backend) they must have gone zero-copy.
zc_count() {
	cat /sys/class/infiniband/xiw0/ports/1/hw_counters/tx_zcopy_messages \
		2>/dev/null || echo -1
}
zc_rule() {	# zc_rule NAME BEFORE
	local now csum
	now=$(zc_count)
	csum=$(ethtool -k "$nic" 2>/dev/null | sed -n 's/^tx-checksumming: \([a-z]*\).*/\1/p')
	echo "# $nic tx-checksumming: ${csum:-unknown}; tx_zcopy_messages $2 -> $now"
	if [ "$2" -ge 0 ] && { { [ "$csum" = on ] && [ "$now" -gt "$2" ]; } ||
				{ [ "$csum" = off ] && [ "$now" -eq "$2" ]; }; }; then
		ok "$1"
	else
		not_ok "$1" /dev/null
	fi
}

# Role b: the clients.
zc0=$(zc_count)
clients "" "$atomic_steps"
zc_rule tx_zcopy_follows_offload "$zc0"
# One client per test, the server running on: each test's connection
# has qperf's listen race (scripts/lib.sh), and only that test runs again.
# Its output is line-buffered, so a run timeout(1) stops shows how far it
# got.
await $((++step))
qperf_all() {
	local t attempt before rc
	for t in rc_bw rc_lat rc_rdma_read_bw rc_rdma_write_bw; do
		for attempt in 1 2; do
			before=$(xiw_tcp_attempt_fails)
			timeout 180 stdbuf -oL qperf -cm1 -t 3 -m 65536 $A $t \
				> "$log.1" 2>&1
			rc=$?
			cat "$log.1" >> "$log"
			xiw_listen_race "$rc" "$log.1" "$before" &&
				xiw_rerun "$attempt" "qperf $t" || break
		done
		[ "$rc" -eq 0 ] || { echo "qperf $t: exit $rc" >> "$log"; return 1; }
	done
	rm -f "$log.1"
	[ "$(grep -c -E '^ *(bw|latency) +=' "$log")" -eq 4 ]
}
: > "$log"
if qperf_all; then
	sed 's/^/# /' "$log"
	ok "qperf_rc"
else
	not_ok "qperf_rc" "$log"
fi
# NFS over RDMA from a, once a stopped qperf and its nfsd is up: NFSv4.2
# reads a's file and writes one for a to check, then NFSv3 reads both;
# each mount is undone.
await $((++step))
await $((++step))
mkdir -p $MNT
modprobe -a rpcrdma nfsv3 nfsv4
nfs_v4() {
	timeout -k 5 120 mount -t nfs4 -o vers=4.2,proto=rdma,port=$NFS_PORT \
		$A:/ $MNT && nfs_same $MNT/from-a && nfs_put $MNT/from-b &&
		timeout -k 5 60 umount $MNT
}
nfs_v3() {
	# nolock: NLM would need rpcbind and rpc.statd in this guest too.
	timeout -k 5 120 mount -t nfs -o vers=3,proto=rdma,port=$NFS_PORT,nolock \
		$A:$EXPORT $MNT && nfs_same $MNT/from-b && nfs_same $MNT/from-a &&
		timeout -k 5 60 umount $MNT
}
check "nfs4.2_rdma_mount_read_write" "$log" logged nfs_v4
mountpoint -q $MNT && umount -f $MNT
check "nfs3_rdma_mount_read" "$log" logged nfs_v3
mountpoint -q $MNT && umount -f $MNT
await $((++step))
zc0=$(zc_count)
# Towards siw without a peer-to-peer RTR, as admin-guide.rst advises: siw
# as responder loses an RTR that arrives before it has switched its
# socket callbacks, then reports CLOSE for an id iw_cm still holds in
# CONN_RECV, and a's kernel hits the BUG() in iwcm.c (testing.rst).
echo 0 > /sys/module/xiw/parameters/p2p_rtr || bail "p2p_rtr 0"
clients "_to_siw"
echo 2 > /sys/module/xiw/parameters/p2p_rtr || bail "p2p_rtr 2"
zc_rule tx_zcopy_follows_offload_to_siw "$zc0"
# a pulls its link under this stream.
await $((++step))
t0=$(date +%s)
timeout 180 rping -c -a $A -p 7174 -S 4096 > "$log" 2>&1
rc=$?
dt=$(($(date +%s) - t0))
echo "# rping client exit $rc ${dt}s after connecting; a pulled its link 3 s in"
grep -m1 "completion\|error\|DISCONNECT" "$log" | sed 's/^/# /'
check "link_down_remote_fails_in_bound" "$log" broke_in $rc $dt $((BOUND + 3))
check "link_down_remote_leaves_no_qp" "$log" no_qps
# Have a killed under this stream.
await $((++step))
timeout 300 rping -c -a $A -p 7174 -S 4096 > "$log" 2>&1 &
cli=$!
established 7174 || bail "no rping connection"
sleep 2
touch $out/kill-peer
for i in $(seq 100); do [ -s $out/peer-killed ] && break; sleep 0.2; done
[ "$(cat $out/peer-killed 2>/dev/null)" = a ] || bail "a was not killed"
t0=$(date +%s)
wait $cli
rc=$?
dt=$(($(date +%s) - t0))
echo "# rping client exit $rc ${dt}s after a was killed"
grep -m1 "completion\|error\|DISCONNECT" "$log" | sed 's/^/# /'
check "peer_killed_fails_in_bound" "$log" broke_in $rc $dt $BOUND
check "peer_killed_leaves_no_qp" "$log" no_qps
echo "# exit: $name $((fails > 0))"
[ $fails -eq 0 ]
