# profrepo.sh: the repository of the profile tests (t0017, t0022), for sh
# with tests/lib/mkrepo.sh sourced: a C benchmark whose third commit moves
# its work from fast_mix() to a slower slow_mix(), so that perf's report of
# the culprit against its parent shows slow_mix coming and fast_mix going.
# `make bench` builds it; ./bench prints "throughput: N ops/s" (30 million
# mixes, 0.1-0.3 s).
#
#   profrepo_make DIR   good (tag v1.0), harmless, culprit, harmless, on
#                       branch main; prints the culprit's id
#   profrepo_need_perf  a TAP skip of the whole test (tests/lib/tap.sh)
#                       unless perf is here and can record cpu-clock

profrepo_make() {
	_pr=$1
	mkrepo_init "$_pr" > /dev/null
	cat > "$_pr/bench.c" <<'EOF'
#include <stdio.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long fast_mix(unsigned long x)
{
	return x * 0x9e3779b97f4a7c15UL ^ (x >> 29);
}

__attribute__((noinline)) static unsigned long slow_mix(unsigned long x)
{
	for (int i = 0; i < 3; i++)
		x = (x * 0x9e3779b97f4a7c15UL) ^ (x >> 31) ^ (x << 7);
	return x;
}

#ifndef SLOW
#define mix fast_mix
#else
#define mix slow_mix
#endif

int main(void)
{
	struct timespec a, b;
	unsigned long x = 1, n = 30000000;

	(void)fast_mix;
	(void)slow_mix;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (unsigned long i = 0; i < n; i++)
		x = mix(x + i);
	sink = x;
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("throughput: %.0f ops/s\n", n / ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9));
	return 0;
}
EOF
	printf 'bench: bench.c Makefile\n\tcc -O2 -g $(CFLAGS) -o bench bench.c\n' > "$_pr/Makefile"
	mkrepo_commit_all "$_pr" "bench: a chain of mixes" > /dev/null
	mkrepo_tag "$_pr" v1.0 > /dev/null
	mkrepo_commit "$_pr" README "a benchmark of a mix" "README: say what it is" > /dev/null
	printf 'bench: bench.c Makefile\n\tcc -O2 -g -DSLOW $(CFLAGS) -o bench bench.c\n' > "$_pr/Makefile"
	mkrepo_commit_all "$_pr" "bench: mix harder" > /dev/null
	_pr_culprit=$(mkrepo_git "$_pr" rev-parse HEAD)
	mkrepo_commit "$_pr" NOTES "notes" "NOTES: add them" > /dev/null
	echo "$_pr_culprit"
}

profrepo_need_perf() {
	command -v perf > /dev/null || skip_all "perf missing (Debian: linux-perf)"
	_pr_probe=${TMPDIR:-/tmp}/profrepo-probe.$$
	perf record -q -e cpu-clock -o "$_pr_probe" -- true > /dev/null 2>&1
	_pr_rc=$?
	rm -f "$_pr_probe"
	[ "$_pr_rc" -eq 0 ] || skip_all "perf cannot record a cpu-clock event here (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null))"
}
