#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# Second stage inside the VM, as PID 1 in the overlay root: finish the
# mounts, run the command, report its status through the shared directory
# and power off.
#
# PID 1 must never exit: the kernel panics ("Attempted to kill init"),
# and the run fails on that line in its log. This script lives on the 9p
# share, which the power-off shuts down while PID 1 still runs, and bash
# reads a script as it goes: so the whole of it is one function, read
# before any of it runs, and after the power-off request PID 1 waits in
# a builtin only, on a FIFO in RAM that nothing writes, until the kernel
# stops the machine.
main() {
	out=/mnt/xiw-out
	export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	export HOME=/root LANG=C.UTF-8 XIW_IN_VM=1
	cwd=$(cat $out/cwd)
	# Fresh scratch directories, except one that holds the repository (a CI
	# clone may live in /tmp): the overlay already makes it writable.
	for d in /tmp /run /var/tmp; do
		case $cwd/ in
		"$d"/*) ;;
		*) mount -t tmpfs -o mode=1777 tmpfs "$d" ;;
		esac
	done
	mkdir -p /dev/pts /dev/shm
	mount -t devpts devpts /dev/pts
	mount -t tmpfs tmpfs /dev/shm
	hostname xiw-vm
	ip link set lo up
	echo 30 > /proc/sys/kernel/hung_task_timeout_secs

	cd "$cwd" || echo 127 > $out/rc
	if [ ! -s $out/rc ]; then
		eval "$(cat $out/cmd)" > $out/output.log 2>&1 < /dev/null
		rc=$?
		dmesg > $out/dmesg.txt
		echo $rc > $out/rc
	fi
	mkfifo /dev/shm/xiw-hold
	sync
	echo o > /proc/sysrq-trigger
	while :; do
		read -r -t 3600 _ <> /dev/shm/xiw-hold
	done
}
main
