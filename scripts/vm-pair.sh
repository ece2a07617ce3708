#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Boot two guests (scripts/vm-run.sh) joined by one Ethernet link, a QEMU
# UDP socket netdev between two virtio-net NICs, and run the same command
# in both with the role as last argument: "a" (10.98.0.1, the servers) and
# "b" (10.98.0.2, the clients).
#
#   scripts/vm-pair.sh [-t SECONDS] -- COMMAND [ARG...]
#
# Logs land in build/vm/pair-a and build/vm/pair-b as for vm-run.sh. A
# guest may ask for its peer to be killed mid-run, the way a machine dies
# without closing its connections: it creates kill-peer in its shared
# directory (/mnt/xiw-out), and this script kills the other guest's QEMU
# with SIGKILL and writes peer-killed back. Exit status: 0 when both guests
# reported 0 (a guest killed on request counts as having reported), else
# the first non-zero vm-run.sh status.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
repo=$XIW_REPO
timeout_s=900
while getopts "t:" opt; do
	case $opt in
	t) timeout_s=$OPTARG ;;
	*) echo "usage: $0 [-t SECONDS] -- COMMAND..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "vm-pair: no command given" >&2; exit 2; }

# Two fixed UDP ports on the host's loopback carry the link; a second pair
# run at the same time would need others (XIW_PAIR_PORT).
port=${XIW_PAIR_PORT:-47110}
net() {		# net LOCAL-PORT REMOTE-PORT MAC
	echo "-netdev socket,id=n0,udp=127.0.0.1:$2,localaddr=127.0.0.1:$1" \
	     "-device virtio-net-pci,netdev=n0,mac=$3"
}
vm=$repo/build/vm
rm -rf "$vm/pair-a" "$vm/pair-b"

XIW_VM_NET=$(net "$port" $((port + 1)) 52:54:00:98:00:01) \
	"$here/vm-run.sh" -n pair-a -t "$timeout_s" -- "$@" a &
pid_a=$!
XIW_VM_NET=$(net $((port + 1)) "$port" 52:54:00:98:00:02) \
	"$here/vm-run.sh" -n pair-b -t "$timeout_s" -- "$@" b &
pid_b=$!

# Serve kill requests until both runs have ended.
killed=
while kill -0 "$pid_a" 2>/dev/null || kill -0 "$pid_b" 2>/dev/null; do
	for r in a b; do
		o=$([ $r = a ] && echo b || echo a)
		if [ -e "$vm/pair-$r/kill-peer" ] && [ -z "$killed" ] &&
		   [ -s "$vm/pair-$o/qemu.pid" ]; then
			if kill -KILL "$(cat "$vm/pair-$o/qemu.pid")"; then
				killed=$o
				echo "vm-pair: killed guest $o on guest $r's request"
			fi
			# The requester learns the kill happened (or failed).
			echo "${killed:-none}" > "$vm/pair-$r/peer-killed"
		fi
	done
	sleep 0.2
done
wait "$pid_a"; rc_a=$?
wait "$pid_b"; rc_b=$?
# A guest killed on request ends as a vm-run.sh timeout (124); it still
# fails on a kernel report its console caught before the kill
# (xiw_klog_scan of scripts/lib.sh, as vm-run.sh checks the others).
for g in a b; do
	[ "$killed" = $g ] || continue
	rc=$([ $g = a ] && echo "$rc_a" || echo "$rc_b")
	[ "$rc" -eq 124 ] || continue
	if xiw_klog_check < "$vm/pair-$g/console.log"; then rc=0; else rc=126; fi
	[ $g = a ] && rc_a=$rc || rc_b=$rc
done
[ "$rc_a" -ne 0 ] && exit "$rc_a"
exit "$rc_b"
