#!/bin/sh
# gitbisect-run.sh TREE K LOG: the real-lab benchmark's baseline
# (tests/bench/bench-lab.sh), `git bisect run` the way a user runs it
# with K runs per step, in the work tree TREE of a mklabrepo.sh history.
#
# It measures the good end (v1.0) and the bad end (main) with K runs
# each; when the bad end's harmonic mean is not below the good end's it
# stops there ("not-reproduced"). Otherwise every step builds the commit
# (a commit that does not build is skipped, exit 125), runs ./bench K times
# on CPU 0 and calls it bad when the harmonic mean of those K runs is below
# the midpoint of the ends' harmonic means. Every run is appended to LOG as
# "sha value" ("sha skip" for a commit that did not build), from which the
# caller counts runs, steps and builds. Prints one line:
#   culprit SHA | range SHA... | not-reproduced GOOD BAD | failed WHY
set -u
if [ $# -ne 3 ]; then
	echo "usage: $0 TREE K LOG" >&2
	exit 2
fi
tree=$1 k=$2 log=$3

# step K THRESHOLD: exit 0 good, 1 bad, 125 skip; THRESHOLD - only measures.
if [ "${GITBISECT_STEP:-}" = 1 ]; then
	sha=$(git rev-parse HEAD)
	make -s > build.out 2>&1 || { echo "$sha skip" >> "$log"; exit 125; }
	i=0
	: > step.runs
	while [ "$i" -lt "$k" ]; do
		v=$(taskset -c 0 ./bench | sed -n 's/^throughput: \([0-9.]*\).*/\1/p')
		[ -n "$v" ] || { echo "$sha fail" >> "$log"; exit 125; }
		echo "$sha $v" >> "$log"
		echo "$v" >> step.runs
		i=$((i + 1))
	done
	[ "$GITBISECT_THR" = - ] && exit 0
	awk -v t="$GITBISECT_THR" '{ n++; s += 1 / $1 } END { exit !(n / s < t) }' step.runs && exit 1
	exit 0
fi

self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
hmean() {
	awk -v s="$1" '$1 == s && $2 + 0 > 0 { n++; t += 1 / $2 } END { if (n) printf "%.6f", n / t }' "$log"
}
cd "$tree" || { echo "failed no tree $tree"; exit 0; }
git config advice.detachedHead false
good=$(git rev-parse v1.0) bad=$(git rev-parse main)
for end in "$good" "$bad"; do
	git checkout -q "$end" &&
	GITBISECT_STEP=1 GITBISECT_THR=- sh "$self" "$tree" "$k" "$log" ||
		{ echo "failed an end does not build"; exit 0; }
done
g=$(hmean "$good") b=$(hmean "$bad")
if ! awk -v g="$g" -v b="$b" 'BEGIN { exit !(b < g) }'; then
	echo "not-reproduced $g $b"
	exit 0
fi
thr=$(awk -v g="$g" -v b="$b" 'BEGIN { printf "%.6f", (g + b) / 2 }')
git bisect start "$bad" "$good" > bisect.out 2>&1 || { echo "failed git bisect start"; exit 0; }
GITBISECT_STEP=1 GITBISECT_THR=$thr git bisect run sh "$self" "$tree" "$k" "$log" >> bisect.out 2>&1
if grep -q 'is the first bad commit' bisect.out; then
	echo "culprit $(grep 'is the first bad commit' bisect.out | head -n 1 | cut -d' ' -f1)"
elif grep -q 'could be any of' bisect.out; then
	echo "range $(sed -n '/could be any of/,$p' bisect.out | grep -E '^[0-9a-f]{40}$' | tr '\n' ' ')"
else
	echo "failed git bisect run: $(tail -n 1 bisect.out)"
fi
git bisect reset -q > /dev/null 2>&1
exit 0
