#!/bin/sh
# mkdemo.sh DIR: makes the demo repository for `make demo` and the tests.
#
# DIR becomes a git repository (branch main, 42 commits, fixed dates and
# authors through mkrepo.sh, so every commit id is the same on every
# machine) holding a small C hash table and its benchmark:
#
#   make        builds ./bench with cc -O2 (well under a second)
#   ./bench     chases 30 million lookups through the table, about 0.2 s,
#               and prints exactly one line: "throughput: <n> ops/s"
#
# v1.0 tags the first commit (the good end); main is the last (the bad
# end). Commit 27 of 42, "hash: recompute the table mix on every lookup",
# puts a multiply-and-fold on the lookup's critical path and costs about
# 28% of the throughput; every other commit is harmless (docs, comments, a
# test, Makefile tweaks, refactors that keep the speed). The benchmark is
# a dependent chain of lookups, each key found by the previous one, so it
# measures latency and stays steady (CV ~4%) on a busy 2-core VM.
#
# Culprit reporting: the script writes DIR.culprit, two lines:
#     <full sha of the culprit>
#     <its subject>
# and prints the same on stdout as one line: "culprit <sha> <subject>".
# Nothing else goes to stdout. Exits non-zero if DIR exists and is not
# empty.
set -eu

if [ $# -ne 1 ]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
D=${1%/}
if [ -e "$D" ] && [ -n "$(ls -A "$D" 2>/dev/null)" ]; then
	echo "mkdemo: $D exists and is not empty" >&2
	exit 1
fi

. "$(dirname "$0")/mkrepo.sh"

# Rewrites FILE through a sed script (POSIX sed has no -i).
edit() {
	sed "$2" "$D/$1" > "$D/$1.tmp"
	mv "$D/$1.tmp" "$D/$1"
}

# Commits the tree; a step whose edit matched nothing is a bug here.
commit() {
	if [ -z "$(mkrepo_git "$D" status --porcelain)" ]; then
		echo "mkdemo: nothing changed for \"$1\"" >&2
		exit 1
	fi
	mkrepo_commit_all "$D" "$@" > /dev/null
}

mkrepo_init "$D"

# --- 1: the program -------------------------------------------------------

cat > "$D/hash.h" <<'EOF'
/* hash: a fixed-size open-addressing hash table of 64-bit keys. */
#ifndef HASH_H
#define HASH_H

#include <stdint.h>

struct table {
	uint64_t *keys;   /* 0 marks an empty slot */
	uint32_t *vals;
	uint32_t mask;    /* slots - 1; slots is a power of two */
	uint64_t seed;
	uint64_t mix;     /* derived from seed once, at init */
};

int table_init(struct table *t, unsigned bits, uint64_t seed);
void table_put(struct table *t, uint64_t key, uint32_t val);
int table_get(struct table *t, uint64_t key, uint32_t *val);
void table_free(struct table *t);

#endif
EOF

cat > "$D/hash.c" <<'EOF'
#include <stdlib.h>
#include <stdint.h>

#include "hash.h"

static uint64_t mix_of(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (z ^ (z >> 31)) | 1;
}

static uint32_t slot(uint64_t key, uint64_t mix, uint32_t mask)
{
	return (uint32_t)(((key ^ mix) * 0x9e3779b97f4a7c15ULL) >> 40) & mask;
}

int table_init(struct table *t, unsigned bits, uint64_t seed)
{
	t->mask = (1u << bits) - 1;
	t->keys = calloc((size_t)t->mask + 1, sizeof(*t->keys));
	t->vals = calloc((size_t)t->mask + 1, sizeof(*t->vals));
	t->seed = seed;
	t->mix = mix_of(seed ^ t->mask);
	return t->keys && t->vals ? 0 : -1;
}

void table_put(struct table *t, uint64_t key, uint32_t val)
{
	uint32_t i = slot(key, t->mix, t->mask);

	while (t->keys[i] && t->keys[i] != key)
		i = (i + 1) & t->mask;
	t->keys[i] = key;
	t->vals[i] = val;
}

int table_get(struct table *t, uint64_t key, uint32_t *val)
{
	uint32_t i = slot(key, t->mix, t->mask);

	while (t->keys[i]) {
		if (t->keys[i] == key) {
			*val = t->vals[i];
			return 1;
		}
		i = (i + 1) & t->mask;
	}
	return 0;
}

void table_free(struct table *t)
{
	free(t->keys);
	free(t->vals);
}
EOF

cat > "$D/bench.c" <<'EOF'
#include <stdio.h>
#include <stdint.h>
#include <time.h>

#include "hash.h"

#define BITS 13
#define NKEYS 5000
#define STEP 1237

static uint64_t key_of(uint32_t i)
{
	return ((uint64_t)i << 20) ^ 0x5bd1e995u;
}

int main(void)
{
	struct table t;
	struct timespec a, b;
	uint32_t i, cur = 0;
	double secs;

	if (table_init(&t, BITS, 42) < 0)
		return 1;
	for (i = 0; i < NKEYS; i++)
		table_put(&t, key_of(i), (i + STEP) % NKEYS);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < 30000000; i++)
		if (!table_get(&t, key_of(cur), &cur))
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	if (cur != (uint32_t)((30000000ULL * STEP) % NKEYS)) {
		fprintf(stderr, "bench: wrong result %u\n", cur);
		return 1;
	}
	printf("throughput: %.0f ops/s\n", 30000000 / secs);
	table_free(&t);
	return 0;
}
EOF

printf 'bench: bench.c hash.c hash.h Makefile\n\tcc -O2 -o bench bench.c hash.c\n' > "$D/Makefile"
printf 'bench\n*.o\n' > "$D/.gitignore"
cat > "$D/README" <<'EOF'
hashbench
=========

A small open-addressing hash table and a benchmark of its lookups.
EOF
commit "Add a hash table and its benchmark"
mkrepo_tag "$D" v1.0

# --- 2-26: harmless changes ---------------------------------------------

cat >> "$D/README" <<'EOF'

Run `make` and then `./bench`; it prints one line, the lookups per second.
EOF
commit "README: say how to run the benchmark"

edit hash.c 's|^int table_get(|/* Linear probing: a key lives at its slot or after it, up to an empty slot. */\
int table_get(|'
commit "hash: explain linear probing in a comment"

printf '\nclean:\n\trm -f bench test\n' >> "$D/Makefile"
commit "Makefile: add a clean target"

cat > "$D/LICENSE" <<'EOF'
Copyright (c) 2023 The hashbench authors

Permission is hereby granted, free of charge, to any person obtaining a
copy of this software, to deal in the software without restriction.
EOF
commit "Add a LICENSE"

edit bench.c 's|^#define STEP 1237$|#define STEP 1237\
#define LOOKUPS 30000000|
s|i < 30000000;|i < LOOKUPS;|
s|(30000000ULL \* STEP)|((uint64_t)LOOKUPS * STEP)|
s|30000000 / secs|LOOKUPS / secs|'
commit "bench: name the lookup count"

cat > "$D/test.c" <<'EOF'
#include <stdio.h>

#include "hash.h"

int main(void)
{
	struct table t;
	uint32_t i, v;

	if (table_init(&t, 10, 7) < 0)
		return 1;
	for (i = 1; i <= 500; i++)
		table_put(&t, i * 977, i);
	for (i = 1; i <= 500; i++) {
		if (!table_get(&t, i * 977, &v) || v != i) {
			printf("not ok\n");
			return 1;
		}
	}
	printf("ok\n");
	table_free(&t);
	return 0;
}
EOF
printf '\ntest: test.c hash.c hash.h\n\tcc -O2 -o test test.c hash.c && ./test\n' >> "$D/Makefile"
printf 'test\n' >> "$D/.gitignore"
commit "Add a correctness test for the table"

cat >> "$D/README" <<'EOF'

`make test` builds and runs a small correctness test.
EOF
commit "README: document make test"

edit hash.c 's|^	return t->keys \&\& t->vals ? 0 : -1;$|	if (!t->keys \|\| !t->vals) {\
		table_free(t);\
		return -1;\
	}\
	return 0;|'
commit "hash: free what was allocated when table_init fails"

mkdir -p "$D/docs"
cat > "$D/docs/design.txt" <<'EOF'
Table layout
------------

Two arrays of 2^bits slots: keys and values. Key 0 marks an empty slot,
so 0 cannot be stored. A key's home slot comes from a multiplicative hash
of the key xored with the table's mix.
EOF
commit "docs: describe the table layout"

edit bench.c 's|^		return 1;$|		return 2;|'
commit "bench: exit 2 when the table cannot be made"

cat > "$D/CHANGES" <<'EOF'
1.0	first release: table, benchmark
EOF
commit "Add CHANGES"

edit hash.c 's|uint32_t i = slot|uint32_t pos = slot|
s|t->keys\[i\]|t->keys[pos]|g
s|t->vals\[i\]|t->vals[pos]|g
s|i = (i + 1) \& t->mask;|pos = (pos + 1) \& t->mask;|'
commit "hash: rename i to pos in the probe loops"

edit test.c 's|^	printf("ok\\n");$|	if (table_get(\&t, 3, \&v)) {\
		printf("not ok: found a missing key\\n");\
		return 1;\
	}\
	printf("ok\\n");|'
commit "test: cover a missing key"

edit Makefile 's|cc -O2 -o bench bench.c hash.c|cc -O2 -Wall -o bench bench.c hash.c|'
commit "Makefile: build the benchmark with -Wall"

cat >> "$D/docs/design.txt" <<'EOF'

The seed
--------

The seed is fixed by the caller, so a run is reproducible; the mix is
derived from it once when the table is made.
EOF
commit "docs: add a section on the seed"

printf '\n/* Number of slots. */\nuint32_t table_size(const struct table *t)\n{\n\treturn t->mask + 1;\n}\n' >> "$D/hash.c"
edit hash.h 's|^void table_free(struct table \*t);$|void table_free(struct table *t);\
uint32_t table_size(const struct table *t);|'
commit "hash: add table_size()"

edit test.c 's|^	if (table_init(\&t, 10, 7) < 0)$|	if (table_init(\&t, 10, 7) < 0 \|\| table_size(\&t) != 1024)|'
commit "test: check table_size"

edit README 's|A small open-addressing|A small, open-addressing|'
commit "README: fix the punctuation of the first line"

edit bench.c 's|^	clock_gettime(CLOCK_MONOTONIC, \&a);$|	/* Each lookup finds the key of the next one, so lookups cannot\
	 * overlap: this measures the latency of one lookup. */\
	clock_gettime(CLOCK_MONOTONIC, \&a);|'
commit "bench: comment the chase through the table"

edit hash.h 's|^int table_get(|/* 1 and the value in *val when key is present, else 0. */\
int table_get(|'
commit "hash: document the return value of table_get"

cat >> "$D/CHANGES" <<'EOF'
1.1	table_size(), a correctness test, documentation
EOF
commit "CHANGES: note the 1.1 changes"

printf '*~\n' >> "$D/.gitignore"
commit ".gitignore: ignore editor backups"

cat >> "$D/docs/design.txt" <<'EOF'

The benchmark
-------------

It chases keys: every value is the index of the next key to look up, so
the time per lookup is its latency, which is what callers in a loop see.
EOF
commit "docs: explain why the benchmark chases keys"

edit test.c 's|table_init(\&t, 10, 7)|table_init(\&t, 11, 7)|
s|table_size(\&t) != 1024|table_size(\&t) != 2048|
s|i <= 500;|i <= 1500;|g'
commit "test: use a larger table"

# A refactor that keeps the speed: the same code after inlining.
edit hash.c 's|^static uint32_t slot(uint64_t key, uint64_t mix, uint32_t mask)$|static uint32_t slot(const struct table *t, uint64_t key)|
s|^	return (uint32_t)(((key ^ mix) \* 0x9e3779b97f4a7c15ULL) >> 40) \& mask;$|	return (uint32_t)(((key ^ t->mix) * 0x9e3779b97f4a7c15ULL) >> 40) \& t->mask;|
s|slot(key, t->mix, t->mask)|slot(t, key)|'
commit "hash: pass the table to slot()"

# --- 27: the culprit -----------------------------------------------------

edit hash.c 's|^static uint32_t slot(const struct table \*t, uint64_t key)$|static uint64_t fold(uint64_t z)\
{\
	z = (z ^ (z >> 29)) * 0xbf58476d1ce4e5b9ULL;\
	return z ^ (z >> 32);\
}\
\
static uint32_t slot(const struct table *t, uint64_t key)|
s|^	return (uint32_t)(((key ^ t->mix) \* 0x9e3779b97f4a7c15ULL) >> 40) \& t->mask;$|	uint64_t mix = fold(t->seed ^ key);\
\
	return (uint32_t)(((key ^ mix) * 0x9e3779b97f4a7c15ULL) >> 40) \& t->mask;|'
CULPRIT_SUBJECT="hash: recompute the table mix on every lookup"
commit "$CULPRIT_SUBJECT" "Keys that differ only in their high bits crowd into neighbouring
slots with one mix per table. Fold the seed and the key together on
every lookup instead, so each key gets a mix of its own."
CULPRIT=$(mkrepo_sha "$D" HEAD)

# --- 28-42: harmless again ----------------------------------------------

cat >> "$D/README" <<'EOF'

The output is a single line, "throughput: <lookups per second> ops/s".
EOF
commit "README: describe the output line"

edit test.c 's|^	printf("ok\\n");$|	for (i = 1; i <= 1500; i++)\
		if (!table_get(\&t, i * 977, \&v) \|\| v != i)\
			return 1;\
	printf("ok\\n");|'
commit "test: look every key up a second time"

edit docs/design.txt 's|^of the key xored with the table.s mix.$|of the key and the table'"'"'s mix.|'
commit "docs: reword the hash description"

printf '\nrun: bench\n\t./bench\n' >> "$D/Makefile"
commit "Makefile: add a run target"

edit hash.c 's|^	t->mask = (1u << bits) - 1;$|	/* A power of two, so that "\& mask" wraps the probe. */\
	t->mask = (1u << bits) - 1;|'
commit "hash: say why the size is a power of two"

cat >> "$D/CHANGES" <<'EOF'
1.2	(in progress)
EOF
commit "CHANGES: start 1.2"

edit bench.c 's|^	clock_gettime(CLOCK_MONOTONIC, \&b);$|	if (clock_gettime(CLOCK_MONOTONIC, \&b) < 0)\
		return 2;|'
commit "bench: check the second clock_gettime"

cat > "$D/CONTRIBUTING" <<'EOF'
Send patches with a subject in the imperative and a body that says why.
Changes to hash.c need the benchmark's numbers before and after.
EOF
commit "Add CONTRIBUTING"

edit test.c 's|^			printf("not ok\\n");$|			printf("not ok: key %u\\n", i * 977);|'
commit "test: print the failing key"

cat >> "$D/docs/design.txt" <<'EOF'

Files
-----

hash.c, hash.h    the table
bench.c           the benchmark
test.c            the correctness test
EOF
commit "docs: list the files"

edit test.c 's|^#include <stdio.h>$|#include <stdint.h>\
#include <stdio.h>|'
commit "test: include stdint.h for uint32_t"

cat >> "$D/README" <<'EOF'

Example:

    $ make && ./bench
    throughput: 150000000 ops/s
EOF
commit "README: add an example run"

edit hash.c '1s|^|/* hash: the table; see docs/design.txt. */\
|'
commit "hash: add a header comment"

cat >> "$D/docs/design.txt" <<'EOF'

Numbers from ./bench are lookups per second: higher is better.
EOF
commit "docs: say which way the benchmark's number is better"

edit CHANGES 's|^1.2	(in progress)$|1.2	per-lookup mix, a run target, more tests|'
commit "CHANGES: describe 1.2"

n=$(mkrepo_git "$D" rev-list --count HEAD)
if [ "$n" != 42 ]; then
	echo "mkdemo: made $n commits, expected 42" >&2
	exit 1
fi
if [ "$(mkrepo_git "$D" rev-list --count "v1.0..$CULPRIT")" != 26 ]; then
	echo "mkdemo: the culprit is not commit 27" >&2
	exit 1
fi
printf '%s\n%s\n' "$CULPRIT" "$CULPRIT_SUBJECT" > "$D.culprit"
echo "culprit $CULPRIT $CULPRIT_SUBJECT"
