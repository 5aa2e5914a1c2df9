#!/bin/sh
# mklabrepo.sh DIR CASE: a history with merges for the real-lab benchmark
# (tests/bench/bench-lab.sh). CASE is one of
#
#   big        the culprit makes the benchmark 15% slower (17 -> 20 rounds)
#   small      5% slower (19 -> 20 rounds)
#   none       no commit changes the speed
#   buildfail  15% slower, and the culprit's parent does not build (the
#              culprit fixes it): only {parent, culprit} can be shown
#   merge      15% slower, and the culprit is the merge of topic/mix
#              itself (an evil merge: it raises ROUNDS, which neither of
#              its parents has), so it is worse than both its parents
#   intermittent  the culprit makes half the runs do the work twice (a
#              slow path taken when a bit of the clock is set): those
#              runs at half the speed, the others as before
#
# DIR becomes a git repository (branch main, 37 commits, 3 merged branches,
# fixed dates and authors through mkrepo.sh, so the ids are the same on
# every machine) holding a one-file C benchmark:
#
#   make        builds ./bench with cc -O2 (about 0.2 s)
#   ./bench     4 million dependent multiply-xorshift mixes of ROUNDS
#               rounds each (about 0.12 s here), and prints one line:
#               "throughput: <n> ops/s"
#
# v1.0 tags the first commit (the good end), main the last (the bad end).
# The culprit is the fourth of the six commits of branch topic/mix, the
# second of the three merged branches: a bisection that follows first
# parents only lands on the merge (for merge, it is that merge). Every
# other commit changes docs, comments or a test.
#
# Writes DIR.culprit (the culprit's full id, then its subject; for none,
# the line "none") and prints "culprit <sha> <subject>" (and for
# buildfail "broken <sha>") on stdout; nothing else goes to stdout.
set -eu

if [ $# -ne 2 ]; then
	echo "usage: $0 DIR big|small|none|buildfail|merge|intermittent" >&2
	exit 2
fi
D=${1%/}
CASE=$2
case $CASE in
big | buildfail | merge) base=17 slow=20 ;;
small) base=19 slow=20 ;;
none) base=19 slow=19 ;;
intermittent) base=17 slow=17 ;;
*)
	echo "mklabrepo: unknown case '$CASE'" >&2
	exit 2
	;;
esac
if [ -e "$D" ] && [ -n "$(ls -A "$D" 2>/dev/null)" ]; then
	echo "mklabrepo: $D exists and is not empty" >&2
	exit 1
fi

. "$(dirname "$0")/../lib/mkrepo.sh"

commit() {
	if [ -z "$(mkrepo_git "$D" status --porcelain)" ]; then
		echo "mklabrepo: nothing changed for \"$1\"" >&2
		exit 1
	fi
	mkrepo_commit_all "$D" "$@" > /dev/null
}

# note FILE LINE SUBJECT: appends LINE to FILE and commits it.
note() {
	mkdir -p "$D/$(dirname "$1")"
	printf '%s\n' "$2" >> "$D/$1"
	commit "$3"
}

mkrepo_init "$D"

# --- the program ------------------------------------------------------------

cat > "$D/mix.h" <<EOF
/* mix: the mixing function under test. */
#ifndef MIX_H
#define MIX_H

#define ROUNDS $base
EOF
cat >> "$D/mix.h" <<'EOF'

#include <stdint.h>

/* ROUNDS dependent multiply-xorshift steps: latency bound, one chain. */
static inline uint64_t mix(uint64_t z)
{
	for (int r = 0; r < ROUNDS; r++)
		z = (z ^ (z >> 29)) * 0xbf58476d1ce4e5b9ULL;
	return z;
}

#endif
EOF

cat > "$D/bench.c" <<'EOF'
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "mix.h"

#define ITERS 4000000

/* Read at run time, so the compiler cannot fold the chain. */
static volatile uint64_t seed = 0x2545f4914f6cdd1dULL;

int main(void)
{
	struct timespec a, b;
	uint64_t z = seed;
	double secs;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (uint32_t i = 0; i < ITERS; i++)
		z = mix(z + i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	seed = z;
	printf("throughput: %.0f ops/s\n", ITERS / secs);
	return 0;
}
EOF
printf 'bench: bench.c mix.h Makefile\n\tcc -O2 -o bench bench.c\n' > "$D/Makefile"
printf 'bench\ntest\n' > "$D/.gitignore"
printf 'mixbench\n========\n\nA benchmark of a 64-bit mixing function.\n' > "$D/README"
commit "Add a mixing function and its benchmark"
mkrepo_tag "$D" v1.0

# --- main, then topic/docs --------------------------------------------------

note README 'Run `make` and then `./bench`.' "README: say how to run the benchmark"
note CHANGES '1.0	first release' "Add CHANGES"
note README 'The output is one line, the mixes per second.' "README: describe the output"
printf '\nclean:\n\trm -f bench test\n' >> "$D/Makefile"
commit "Makefile: add a clean target"

mkrepo_branch "$D" topic/docs
note docs/usage.txt 'Usage: ./bench (no arguments).' "docs: add a usage page"
note docs/usage.txt 'The benchmark takes about a tenth of a second.' "docs: say how long a run takes"
note docs/design.txt 'One chain of dependent steps: each mix waits for the one before.' "docs: explain the chain"
note docs/design.txt 'ROUNDS sets the steps per mix.' "docs: describe ROUNDS"
mkrepo_switch "$D" main
note CHANGES '1.1	(in progress)' "CHANGES: start 1.1"
note README 'See docs/ for the design.' "README: point at docs/"
note CONTRIBUTING 'Send patches with a subject in the imperative.' "Add CONTRIBUTING"
mkrepo_merge "$D" topic/docs "Merge branch 'topic/docs'" > /dev/null

# --- topic/mix, with the culprit --------------------------------------------

mkrepo_branch "$D" topic/mix
sed 's|^/\* ROUNDS dependent|/* Each step: xor the high bits down, then multiply.\n * ROUNDS dependent|' "$D/mix.h" > "$D/mix.h.tmp"
mv "$D/mix.h.tmp" "$D/mix.h"
commit "mix: comment the step"
sed 's|^#define ITERS 4000000$|/* Enough mixes for a tenth of a second. */\n#define ITERS 4000000|' "$D/bench.c" > "$D/bench.c.tmp"
mv "$D/bench.c.tmp" "$D/bench.c"
commit "bench: say why ITERS is what it is"
if [ "$CASE" = buildfail ]; then
	sed 's|^	seed = z;$|	seed = z + ROUND;|' "$D/bench.c" > "$D/bench.c.tmp"
	mv "$D/bench.c.tmp" "$D/bench.c"
	commit "bench: fold the round count into the sink"
	BROKEN=$(mkrepo_sha "$D" HEAD)
	sed 's|ROUND;$|ROUNDS;|' "$D/bench.c" > "$D/bench.c.tmp"
	mv "$D/bench.c.tmp" "$D/bench.c"
	subject="mix: three more rounds for a better avalanche; spell ROUNDS in bench.c"
else
	note docs/design.txt 'The sink keeps the compiler from dropping the chain.' "docs: explain the sink"
	subject="mix: more rounds for a better avalanche"
fi
if [ "$CASE" != merge ]; then
	sed "s|^#define ROUNDS $base\$|#define ROUNDS $slow|" "$D/mix.h" > "$D/mix.h.tmp"
	mv "$D/mix.h.tmp" "$D/mix.h"
fi
if [ "$CASE" = intermittent ]; then
	sed 's|^	for (uint32_t i = 0; i < ITERS; i++)$|	for (uint32_t i = 0; i < ITERS * (1 + (uint32_t)(a.tv_nsec >> 10 \& 1)); i++)|' \
		"$D/bench.c" > "$D/bench.c.tmp"
	mv "$D/bench.c.tmp" "$D/bench.c"
	subject="mix: a second pass over the chain when the clock's bit 10 is set"
fi
if [ "$CASE" = none ] || [ "$CASE" = merge ]; then
	# The same subject, a harmless change: the speed stays.
	sed 's|^/\* mix: the mixing function under test. \*/$|/* mix: the mixing function under test (a splitmix-like step). */|' \
		"$D/mix.h" > "$D/mix.h.tmp"
	mv "$D/mix.h.tmp" "$D/mix.h"
	subject="mix: name the kind of step"
fi
commit "$subject" "Keys that differ in their low bits only still collide after the
mix; the extra rounds spread them."
CULPRIT=$(mkrepo_sha "$D" HEAD)
note docs/design.txt 'More rounds, better avalanche, slower mixes.' "docs: note the cost of rounds"
note docs/usage.txt 'The number is mixes per second: higher is better.' "docs: say which way is better"
mkrepo_switch "$D" main
note CHANGES '	a clean target, docs' "CHANGES: note the docs"
note README 'Numbers vary from run to run: compare several.' "README: warn about noise"
note CONTRIBUTING 'Changes to mix.h need the numbers before and after.' "CONTRIBUTING: ask for numbers"
if [ "$CASE" = merge ]; then
	# The merge brings a change of its own, which neither parent has.
	mkrepo_git "$D" merge -q --no-ff --no-commit topic/mix > /dev/null 2>&1
	sed "s|^#define ROUNDS $base\$|#define ROUNDS $slow|" "$D/mix.h" > "$D/mix.h.tmp"
	mv "$D/mix.h.tmp" "$D/mix.h"
	CULPRIT=$(mkrepo_commit_all "$D" "Merge branch 'topic/mix'" "Resolve the merge with three more rounds.")
else
	mkrepo_merge "$D" topic/mix "Merge branch 'topic/mix'" > /dev/null
fi

# --- topic/test -------------------------------------------------------------

mkrepo_branch "$D" topic/test
cat > "$D/test.c" <<'EOF'
#include <stdio.h>

#include "mix.h"

int main(void)
{
	if (mix(1) == mix(2)) {
		printf("not ok\n");
		return 1;
	}
	printf("ok\n");
	return 0;
}
EOF
printf '\ntest: test.c mix.h\n\tcc -O2 -o test test.c && ./test\n' >> "$D/Makefile"
commit "Add a test that two keys mix apart"
sed 's|mix(1) == mix(2)|mix(1) == mix(2) \|\| mix(0) == 0|' "$D/test.c" > "$D/test.c.tmp"
mv "$D/test.c.tmp" "$D/test.c"
commit "test: zero must not mix to zero"
note docs/usage.txt '`make test` runs the test.' "docs: mention make test"
sed 's|^#include <stdio.h>$|#include <stdint.h>\n#include <stdio.h>|' "$D/test.c" > "$D/test.c.tmp"
mv "$D/test.c.tmp" "$D/test.c"
commit "test: include stdint.h"
mkrepo_switch "$D" main
note CHANGES '	a test' "CHANGES: note the test"
note README 'Report numbers with the commit they came from.' "README: ask for the commit"
mkrepo_merge "$D" topic/test "Merge branch 'topic/test'" > /dev/null

# --- main again -------------------------------------------------------------

note docs/design.txt 'A run measures one chain, so two cores do not help.' "docs: one chain, one core"
note README 'Example: throughput: 30000000 ops/s' "README: add an example"
note CONTRIBUTING 'Run make test before sending.' "CONTRIBUTING: run the test"
note CHANGES '1.1	more rounds, a test, docs' "CHANGES: describe 1.1"
note docs/usage.txt 'Pin it to one core for steadier numbers.' "docs: suggest pinning"
note README 'Licence: public domain.' "README: state the licence"
note CHANGES '1.2	(in progress)' "CHANGES: start 1.2"

n=$(mkrepo_git "$D" rev-list --count HEAD)
if [ "$n" != 37 ]; then
	echo "mklabrepo: made $n commits, expected 37" >&2
	exit 1
fi
csubject=$(mkrepo_git "$D" log -1 --format=%s "$CULPRIT")
if [ "$CASE" = none ]; then
	echo none > "$D.culprit"
	echo "culprit none"
else
	printf '%s\n%s\n' "$CULPRIT" "$csubject" > "$D.culprit"
	echo "culprit $CULPRIT $csubject"
fi
if [ "$CASE" = buildfail ]; then
	echo "broken $BROKEN"
fi
