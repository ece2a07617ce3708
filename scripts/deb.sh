#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# make deb: the Debian packages of xiw, built with Debian's own tools
# (dpkg-buildpackage, debhelper, dh-dkms) from debian/:
#   xiw-dkms              the module's source; DKMS builds xiw.ko
#   ibverbs-provider-xiw  libxiw-rdmav34.so and /etc/libibverbs.d/xiw.driver
# The .debs land in build/deb/, with lintian's verdict on them in
# build/deb/lintian.txt when lintian is installed.
#
#   scripts/deb.sh              set up, build, lint (make deb)
#   scripts/deb.sh --check      the same, then install, use and purge the
#                               packages in a VM on 6.1 and one on 6.12,
#                               and build them again in Debian 13 and do
#                               the same in a Debian 13 VM booted on its
#                               own kernel (make check-deb;
#                               scripts/guest/xiw_deb.sh)
#   scripts/deb.sh --setup      only install what building and testing the
#                               packages needs (scripts/setup.sh's packages,
#                               debhelper, dh-dkms, dkms, lintian)
#
# The build runs in a copy of the tracked files (build/deb/src/), so that
# neither debhelper's work files nor dpkg-buildpackage's output (written
# next to the source tree) land in the repository. DEB_BUILD_OPTIONS is
# passed on, with noautodbgsym added: "apt install ./build/deb/*.deb" then
# installs the two packages and nothing else.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$XIW_REPO"

# On top of scripts/setup.sh's: what dpkg-buildpackage, debhelper's dkms
# add-on and the install test need (dkms itself is what xiw-dkms depends
# on; the VM test installs the packages offline, so it must be here).
DEB_PACKAGES=(dpkg-dev debhelper dh-dkms dkms fakeroot lintian)

deb_setup() {
	scripts/setup.sh > /dev/null
	xiw_install_packages deb "${DEB_PACKAGES[@]}"
}

mode=${1:-}
case $mode in
''|--check|--setup) ;;
*) echo "usage: $0 [--check | --setup]" >&2; exit 2 ;;
esac
echo "== set-up (scripts/setup.sh, packaging tools)"
deb_setup
[ "$mode" != --setup ] || exit 0

version=$(dpkg-parsechangelog -S Version)
export DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:+$DEB_BUILD_OPTIONS }noautodbgsym"

# copy_source OUT: the source files into OUT/src/xiw-VERSION (made anew).
copy_source() {
	local src=$1/src/xiw-$version
	rm -rf "$1"
	mkdir -p "$src"
	echo "== copy the source files to ${src#"$XIW_REPO"/}"
	if git -C "$XIW_REPO" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
		# The files git tracks or would track, as they are in the work
		# tree; one deleted but not yet committed is left out.
		git ls-files -z --cached --others --exclude-standard |
			while IFS= read -r -d '' f; do
				[ ! -e "$f" ] || printf '%s\0' "$f"
			done | tar -c --null -T - | tar -x -C "$src"
	else
		tar -c --exclude=./build --exclude=./.git . | tar -x -C "$src"
	fi
}

# build_debs OUT [RUNNER...]: dpkg-buildpackage -b of OUT's copy, run
# through RUNNER (the Debian 13 root's --run), the packages into OUT.
build_debs() {
	local out=$1 src=$1/src/xiw-$version
	shift
	echo "== dpkg-buildpackage -b${1:+ in Debian 13} (log in ${out#"$XIW_REPO"/}/build.log)"
	if ! "$@" sh -c 'cd "$1" && exec dpkg-buildpackage -b -us -uc' sh "$src" \
		> "$out/build.log" 2>&1; then
		tail -n 40 "$out/build.log"
		echo "deb: dpkg-buildpackage failed; the whole log is ${out#"$XIW_REPO"/}/build.log" >&2
		return 1
	fi
	mv "$out"/src/*.deb "$out"/src/*.changes "$out"/src/*.buildinfo "$out/"
}

out=$XIW_REPO/build/deb
copy_source "$out"
build_debs "$out"

echo "== packages in build/deb"
for d in "$out"/*.deb; do
	printf '%-28s %-10s %-6s %8s bytes  %s\n' \
		"$(dpkg-deb -f "$d" Package)" "$(dpkg-deb -f "$d" Version)" \
		"$(dpkg-deb -f "$d" Architecture)" "$(stat -c %s "$d")" "${d##*/}"
done
for d in "$out"/*.deb; do
	echo "-- $(dpkg-deb -f "$d" Package): Depends: $(dpkg-deb -f "$d" Depends)"
	dpkg-deb -c "$d" | awk '$1 !~ /^d/ { print "   " $NF }'
done

if command -v lintian > /dev/null; then
	echo "== lintian (build/deb/lintian.txt)"
	rc=0
	# Every tag down to info, pedantic and experimental ones. (Run as
	# root, lintian says on stderr that it would rather not be.)
	lintian --info --display-experimental --pedantic "$out"/*.changes \
		> "$out/lintian.txt" 2> "$out/lintian.err" || rc=$?
	grep -v '^running with root privileges is not recommended!$' "$out/lintian.err" >&2 || true
	if [ -s "$out/lintian.txt" ]; then
		cat "$out/lintian.txt"
	else
		echo "lintian: no tags"
	fi
	# lintian exits non-zero for an error tag (or when it fails).
	[ $rc -eq 0 ] || { echo "deb: lintian failed or reports errors (exit $rc)" >&2; exit 1; }
else
	echo "== lintian not installed: not run"
fi
[ "$mode" = --check ] || exit 0

# The packages installed as a user installs them, in a guest booted on
# each of the two kernels make check knows (Debian 12's 6.1, and 6.12 as
# Debian 12 with backports has it; XIW_DEB_SERIES picks some): DKMS
# builds xiw.ko there for every kernel with headers (under TCG, most of
# the run's time).
#
# Then Debian 13 (series d13): the packages built again in its root (with
# rdma-core 56, so the provider package depends on that), and a guest of
# that root booted on Debian 13's own kernel, for which DKMS builds inside.
rc=0
for series in ${XIW_DEB_SERIES:-6.1 6.12 d13}; do
	debs=build/deb
	env=()
	if [ "$series" = d13 ]; then
		echo "== Debian 13 root with its kernel (scripts/debian13-root.sh --deb)"
		d13=$(scripts/debian13-root.sh --deb) ||
			{ echo "FAIL: vm deb d13: no Debian 13 root"; rc=1; continue; }
		copy_source "$XIW_REPO/build/deb-d13"
		build_debs "$XIW_REPO/build/deb-d13" scripts/debian13-root.sh --deb --run ||
			{ echo "FAIL: vm deb d13: the packages did not build"; rc=1; continue; }
		krel=$(ls "$d13/lib/modules" | head -n 1)
		debs=build/deb-d13
		env=(XIW_VM_ROOT="$d13" XIW_VM_ROOT_KERNEL="$krel")
	else
		krel=$(scripts/kernel-release.sh --series "$series") ||
			{ echo "FAIL: vm deb $series: no $series kernel installed"; rc=1; continue; }
		env=(KREL="$krel")
	fi
	echo "== VM on $krel: install, use and purge the packages of $debs (scripts/guest/xiw_deb.sh)"
	t0=$SECONDS
	vm_rc=0
	env "${env[@]}" scripts/vm-run.sh -n "deb-$series" -t 2400 -- \
		env XIW_DEB_DIR="$debs" scripts/guest/xiw_deb.sh \
		> "$out/vm-$series.log" 2>&1 || vm_rc=$?
	echo "== VM run: exit $vm_rc after $((SECONDS - t0)) s (logs in build/vm/deb-$series)"
	grep -E '^# (time|package|removed)' "build/vm/deb-$series/output.log" || true
	# The TAP results as make check names them; a guest that died or
	# logged a kernel warning fails here too (vm-run.sh exits 124..126).
	scripts/check.sh --parse "build/vm/deb-$series/output.log" "vm deb $series" || rc=1
	case $vm_rc in
	0|1) ;;
	*) echo "FAIL: vm deb $series: run failed (vm-run.sh exit $vm_rc)"
	   sed 's/^/    /' "$out/vm-$series.log" | tail -n 20
	   rc=1 ;;
	esac
done
exit $rc
