#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# make bench-ab BASE=REV: measure a change against the tree it changes.
# This tree (the change, uncommitted edits included) and REV (the base,
# checked out in a worktree under build/bench-ab) each run make bench
# in turn, AB_PAIRS times (default 2), base first, then change, then
# change, then base, and so on, so that a host whose speed drifts does
# not favour either side. Then scripts/bench-report.py ab compares them.
# The BENCH_* knobs reach both sides' make bench alike; a full bench
# takes about 26 minutes per side, so name a subset, e.g.
#   BENCH_TESTS="ib_read_bw_64k" make bench-ab BASE=HEAD~1
#
# Results in build/bench-ab/: base-N.tsv and change-N.tsv (each run's
# results.tsv), base-N.log and change-N.log, runs.txt (each run's exit
# status and seconds) and report.txt (the comparison, printed too).
# Exit status: non-zero if a run failed or the report found a failed run
# of xiw; the report is printed either way. AB_BENCH replaces "make
# bench" as what each side runs in its tree (scripts/lib-test.sh runs
# the loop with a stand-in that writes build/bench/results.tsv).
set -euo pipefail

base=${1:-}
pairs=${AB_PAIRS:-2}
bench=${AB_BENCH:-make bench}
if [ -z "$base" ] || ! [[ $pairs =~ ^[1-9][0-9]*$ ]]; then
	echo "usage: [AB_PAIRS=N] scripts/bench-ab.sh BASE-REVISION" >&2
	exit 2
fi
top=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$top"
rev=$(git rev-parse --verify --quiet "$base^{commit}") || {
	echo "bench-ab: $base is no commit of this repository" >&2
	exit 2
}

out=build/bench-ab
tree=$out/base-tree
# A worktree an interrupted run left behind, registered or not.
git worktree remove --force "$tree" > /dev/null 2>&1 || true
rm -rf "$out"
git worktree prune
mkdir -p "$out"
git worktree add --quiet --detach "$tree" "$rev"
trap 'git worktree remove --force "$tree" > /dev/null 2>&1 || true' EXIT
echo "== bench-ab: base $(git rev-parse --short "$rev"), change" \
	"$(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' with edits to tracked files')," \
	"$pairs pair(s)"

failed=0
one() {		# one SIDE N: a make bench of SIDE, its results kept
	local side=$1 n=$2 dir=. rc=0 t0
	[ "$side" = base ] && dir=$tree
	t0=$(date +%s)
	# bench.sh empties build/bench only after its builds: a run that
	# fails before then must not leave an older run's results.
	rm -f "$dir/build/bench/results.tsv"
	(cd "$dir" && $bench) > "$out/$side-$n.log" 2>&1 || rc=$?
	if [ -s "$dir/build/bench/results.tsv" ]; then
		cp "$dir/build/bench/results.tsv" "$out/$side-$n.tsv"
	elif [ "$rc" -eq 0 ]; then
		rc=1		# exit 0 and no results: a failure all the same
	fi
	echo "$side $n exit $rc $(($(date +%s) - t0)) s, $(date -u +%H:%M) UTC" |
		tee -a "$out/runs.txt"
	[ "$rc" -eq 0 ] || failed=1
}

for i in $(seq 1 "$pairs"); do
	if [ $((i % 2)) -eq 1 ]; then
		one base "$i"
		one change "$i"
	else
		one change "$i"
		one base "$i"
	fi
done

report_rc=0
python3 scripts/bench-report.py ab "$out" > "$out/report.txt" || report_rc=$?
cat "$out/report.txt"
[ "$failed" -eq 0 ] && [ "$report_rc" -eq 0 ]
