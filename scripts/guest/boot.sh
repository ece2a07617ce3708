#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# Second stage inside the VM, as PID 1 in the overlay root: finish the
# mounts, run the command, report its status through the shared directory
# and power off.
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
sync
echo o > /proc/sysrq-trigger
sleep 30
