#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Boot the installed Debian kernel (or the debug kernel, below) under QEMU
# with this machine's root file system (read-only over 9p, an overlay in
# guest RAM on top so the guest can install modules and providers), run
# one command as root inside, and return its exit status.
#
#   scripts/vm-run.sh [-n NAME] [-t SECONDS] [-m MEM] -- COMMAND [ARG...]
#
# The command runs with the repository as working directory. Its exit
# status travels out of band: the guest writes it to a shared directory,
# the console is only kept as a log. Everything lands in build/vm/NAME/:
#   console.log  the serial console        dmesg.txt   the guest's dmesg
#   output.log   the command's output      rc          its exit status
#   qemu.pid     QEMU's process id (vm-pair.sh kills a guest with it)
#
# XIW_VM_APPEND adds to the guest kernel's command line (for example
# slub_debug=FZPU to catch heap corruption where it happens). XIW_VM_NET
# replaces the default "-nic none" with QEMU network options (vm-pair.sh
# joins two guests this way). XIW_VM_QEMU_ARGS adds QEMU options (for
# example a TCG plugin: -plugin FILE.so,ARG=VALUE).
#
# XIW_VM_ROOT=DIR boots another root file system than this machine's
# (the Debian 13 of scripts/debian13-root.sh), with this machine's kernel:
# the guest mounts two more shares into it, each with a RAM overlay on
# top, this repository at its own path and /lib/modules/KREL. With
# XIW_VM_ROOT_KERNEL=KREL as well it boots that root's own kernel instead,
# DIR/boot/vmlinuz-KREL with the modules of DIR/lib/modules/KREL.
#
# XIW_VM_KDIR=DIR boots the debug kernel of scripts/debug-kernel.sh
# instead: DIR/vmlinuz, release DIR/release, everything the boot needs
# built in (so an initramfs without modules), 3G of memory by default
# (KASAN's shadow takes an eighth of it) and a larger kernel log buffer.
# The guest's command then sees XIW_VM_KDIR, so that
# scripts/guest/run_vm.sh checks the kernel log after each program.
#
# Exit status: the command's own, unless the run itself failed:
#   124 whole-run timeout, 125 the guest died before reporting (panic,
#   including panic_on_warn), 126 a kernel report found in the logs
#   (xiw_klog_scan of scripts/lib.sh: any but siw's known one).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
repo=$XIW_REPO
name=run
timeout_s=${XIW_VM_TIMEOUT:-900}
mem=${XIW_VM_MEM:-2G}
kdir=${XIW_VM_KDIR:-}
modbase=	# where /lib/modules/KREL is: this machine's, or a root's
if [ -n "$kdir" ]; then
	mem=${XIW_VM_MEM:-3G}
fi
while getopts "n:t:m:" opt; do
	case $opt in
	n) name=$OPTARG ;;
	t) timeout_s=$OPTARG ;;
	m) mem=$OPTARG ;;
	*) echo "usage: $0 [-n NAME] [-t SECONDS] [-m MEM] -- COMMAND..." >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "vm-run: no command given" >&2; exit 2; }

# What the initramfs needs to reach the 9p root and build the overlay;
# modprobe resolves their dependencies for the kernel booted (which are
# built in and which modules differs between kernels).
INITRD_MODULES="virtio_pci 9pnet_virtio 9p overlay"
CPU=max
APPEND="console=ttyS0 loglevel=4 panic=-1 panic_on_warn=1 oops=panic softlockup_panic=1 hung_task_panic=1 printk.devkmsg=on"
# tsc=unstable: under TCG 6.12 takes the guest's TSC for a stable clock
# (6.1 finds it unsynchronized at boot and uses the HPET), so it turns
# the static key sched_clock_cpu() tests on late in its boot and off
# again when the clocksource watchdog later judges the TSC unstable.
# Either change patches a function every CPU runs all the time, and TCG
# has let the other vCPU run the patch's int3 after the patch was over:
# an int3 Oops in sched_clock_cpu() 359 s into a 6.12 run (and, likely
# the same, the int3 Oops 1.3 s into a 6.12 boot that the boot retry
# below was made for). With the TSC unstable from the start the key never
# changes, and every kernel keeps time on the HPET, as 6.1 already did.
APPEND="$APPEND tsc=unstable"
if [ -n "$kdir" ]; then
	[ -e "$kdir/.complete" ] ||
		{ echo "vm-run: $kdir is not a built debug kernel" >&2; exit 2; }
	krel=$(cat "$kdir/release")
	kernel=$kdir/vmlinuz
	# The debug kernel has virtio, 9p and overlay built in.
	INITRD_MODULES=
	# kmemleak reports at KERN_INFO, which loglevel=4 keeps off the
	# console, and scripts/guest/run_vm.sh reads each program's reports from
	# dmesg: the default 256 KiB buffer would let a chatty test push a
	# report out before it is read.
	APPEND="$APPEND log_buf_len=16M"
	# With 5-level paging (-cpu max offers LA57 under TCG) an interrupt
	# that arrives while identify_cpu() re-reads the CPU's features sees
	# LA57 clear for a moment, and KASAN reports the access to the
	# interrupt's descriptor as a wild access: a panic in 2 boots of 8
	# here, none in 11 without LA57.
	CPU=max,la57=off
elif [ -n "${XIW_VM_ROOT_KERNEL:-}" ]; then
	krel=$XIW_VM_ROOT_KERNEL
	[ -n "${XIW_VM_ROOT:-}" ] && [ -e "$XIW_VM_ROOT/boot/vmlinuz-$krel" ] ||
		{ echo "vm-run: XIW_VM_ROOT has no kernel $krel" >&2; exit 2; }
	kernel=$XIW_VM_ROOT/boot/vmlinuz-$krel
	modbase=$XIW_VM_ROOT
else
	krel=$("$here/kernel-release.sh")
	kernel=/boot/vmlinuz-$krel
fi
root_share=/
shares=()
if [ -n "${XIW_VM_ROOT:-}" ]; then
	[ -z "$kdir" ] ||
		{ echo "vm-run: XIW_VM_ROOT and XIW_VM_KDIR do not go together" >&2; exit 2; }
	[ -x "$XIW_VM_ROOT/bin/bash" ] ||
		{ echo "vm-run: $XIW_VM_ROOT is not a root file system" >&2; exit 2; }
	root_share=$XIW_VM_ROOT
	shares=(-virtfs "local,path=$repo,mount_tag=xiwrepo,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=$modbase/lib/modules/$krel,mount_tag=xiwmods,security_model=none,readonly=on,multidevs=remap")
fi
vmdir=$repo/build/vm
out=$vmdir/$name
initrd=$vmdir/initramfs-$krel.cpio.gz

build_initrd() {
	local tmp m f what
	tmp=$(mktemp -d)
	mkdir -p "$tmp/bin" "$tmp/mod" "$tmp/proc" "$tmp/sys" "$tmp/dev" \
		"$tmp/lower" "$tmp/rw" "$tmp/newroot"
	cp /bin/busybox "$tmp/bin/busybox"
	ln -s busybox "$tmp/bin/sh"
	: > "$tmp/mod/order"	# stays empty for the debug kernel
	if [ -n "$INITRD_MODULES" ]; then
		# "insmod PATH" in load order, "builtin NAME" for built-ins;
		# a module shared by two of them is listed twice.
		modprobe ${modbase:+-d "$modbase"} -S "$krel" --show-depends \
			-a $INITRD_MODULES > "$tmp/deps" ||
			{ echo "vm-run: modules for the initramfs missing for $krel" >&2; exit 1; }
		while read -r what f; do
			[ "$what" = insmod ] || continue
			m=${f##*/}
			m=${m%%.ko*}
			[ ! -e "$tmp/mod/$m.ko" ] || continue
			case $f in
			*.ko) cp "$f" "$tmp/mod/$m.ko" ;;
			*.ko.xz) xz -dc "$f" > "$tmp/mod/$m.ko" ;;
			*) echo "vm-run: cannot read module $f" >&2; exit 1 ;;
			esac
			echo "$m" >> "$tmp/mod/order"
		done < "$tmp/deps"
		rm "$tmp/deps"
	fi
	cp "$here/guest/initramfs-init" "$tmp/init"
	chmod +x "$tmp/init"
	mkdir -p "$vmdir"	# two runs may build at once (vm-pair.sh): own temp file
	(cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) > "$initrd.$$.tmp"
	mv "$initrd.$$.tmp" "$initrd"
	rm -rf "$tmp"
}

if [ ! -e "$initrd" ] || [ "$here/guest/initramfs-init" -nt "$initrd" ] ||
   [ "$0" -nt "$initrd" ]; then
	build_initrd
fi

rm -rf "$out"
mkdir -p "$out"
cp "$here/guest/boot.sh" "$out/guest.sh"
printf '%s\n' "$repo" > "$out/cwd"
if [ -n "$kdir" ]; then
	printf 'export XIW_VM_KDIR=%q; ' "$kdir" > "$out/cmd"
fi
printf '%q ' "$@" >> "$out/cmd"

boot() {	# boot [EXTRA-KERNEL-ARGS]
	qemu_rc=0
	timeout -k 10 "$timeout_s" qemu-system-x86_64 \
		-accel "${XIW_VM_ACCEL:-tcg}" -machine q35 -cpu "$CPU" -smp 2 -m "$mem" \
		-nodefaults -no-user-config -display none -monitor none -no-reboot \
		-serial "file:$out/console.log" -pidfile "$out/qemu.pid" \
		-kernel "$kernel" -initrd "$initrd" \
		-append "$APPEND ${XIW_VM_APPEND:-} ${1:-}" \
		-virtfs "local,path=$root_share,mount_tag=host,security_model=none,readonly=on,multidevs=remap" \
		"${shares[@]}" \
		-virtfs "local,path=$out,mount_tag=xiwout,security_model=none,multidevs=remap" \
		${XIW_VM_NET:--nic none} ${XIW_VM_QEMU_ARGS:-} > "$out/qemu.log" 2>&1 ||
		qemu_rc=$?
}
# XIW_VM_FIRST_APPEND: kernel arguments for the first boot only, to
# test the retry below (rdinit=/bin/false kills the guest in its boot).
boot "${XIW_VM_FIRST_APPEND:-}"
# A guest that died before its command started (guest.sh creates
# output.log as it starts the command) died in its own boot, before xiw or
# anything of ours was loaded: under TCG, 6.12 has been seen to take an
# int3 Oops while patching its code on a secondary CPU. Boot once more,
# keep the first console as console-boot1.log and say so on a
# "vm-run: ... booting once more" line, which make check counts as a
# rerun. A second such death is reported as any other.
if [ "$qemu_rc" -ne 124 ] && [ "$qemu_rc" -ne 137 ] && [ ! -s "$out/rc" ] &&
   [ ! -e "$out/output.log" ]; then
	why=$(grep -m 1 -E "$XIW_KLOG_BAD" "$out/console.log" | sed 's/^\[[ 0-9.]*\] //')
	echo "vm-run: $name: the guest died while booting, before the command started (${why:-no kernel report}); booting once more" >&2
	mv "$out/console.log" "$out/console-boot1.log"
	boot
fi

# Anything xiw_klog_scan calls bad means the kernel is unhealthy,
# whatever the command said; siw's known report is only mentioned.
bad= known=
for f in "$out/console.log" "$out/dmesg.txt"; do
	[ -e "$f" ] || continue
	if ! xiw_klog_check < "$f"; then
		bad=$(head -n 20 <<< "$klog_bad")
		break
	fi
	[ -z "$klog_known" ] || known=$klog_known
done
[ -z "$known" ] || echo "vm-run: $name: known report, not xiw's: $known" >&2

if [ "$qemu_rc" -eq 124 ] || [ "$qemu_rc" -eq 137 ]; then
	echo "vm-run: $name: timed out after ${timeout_s}s (logs in $out)" >&2
	tail -n 30 "$out/console.log" >&2 || true
	exit 124
fi
if [ ! -s "$out/rc" ]; then
	echo "vm-run: $name: guest died without reporting (qemu rc $qemu_rc; logs in $out)" >&2
	tail -n 40 "$out/console.log" >&2 || true
	exit 125
fi
if [ -n "$bad" ]; then
	echo "vm-run: $name: kernel warnings in the logs ($out):" >&2
	echo "$bad" >&2
	exit 126
fi
exit "$(cat "$out/rc")"
