#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# Print the release of the newest installed Debian kernel that has both a
# bootable image and headers to build against. KREL in the environment wins.
#   scripts/kernel-release.sh [--series X.Y]
# --series X.Y: the newest of series X.Y only (make check's lanes: 6.1,
# Debian 12's kernel; 6.12, Debian 13's and Debian 12's backports'); KREL
# is not consulted then, since a lane's kernel is not the user's choice.
set -eu
series=
if [ "${1:-}" = --series ]; then
	series=$2
elif [ -n "${KREL:-}" ]; then
	echo "$KREL"
	exit 0
fi
best=
for d in /lib/modules/*/; do
	r=$(basename "$d")
	case $r in
	"$series".*) ;;
	*) [ -z "$series" ] || continue ;;
	esac
	[ -e "/boot/vmlinuz-$r" ] && [ -e "/lib/modules/$r/build/Makefile" ] || continue
	best="$best$r
"
done
best=$(printf '%s' "$best" | sort -V | tail -n 1)
if [ -z "$best" ]; then
	echo "kernel-release: no ${series:+$series }kernel with image and headers installed;" \
	     "run scripts/setup.sh (make check does)" >&2
	exit 1
fi
echo "$best"
