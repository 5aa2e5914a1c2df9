#!/bin/sh
# record-noise.sh: `make record-noise`. Records a fixed workload's runs on
# this machine under named load conditions into TRACES/NAME.trace, for the
# simulator to replay (tests/bench/traces/README has the format).
#
# Each condition runs two agents the way the local lab's do: agent 0
# pinned to CPU 0, agent 1 to CPU 1, each run holding an exclusive flock on
# one shared lock file (agents/agent.c's measure_lock), each agent doing
# tasks of R runs back to back, for SECONDS; beside them, the condition's
# load. Everything it starts is stopped on exit, Ctrl-C included.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
SELF=$TOP/tests/bench/record-noise.sh

# --- one agent (the script runs itself as each of the two) ---------------

# --agent ID CPU END_NS START_NS LOCK COUNTER OUT RUNS SEED BENCH: tasks of
# RUNS runs ("random": 1-5 each) until END_NS; one line a run in OUT,
# "t_ns_since_start agent task run value" (value 0 for a failed run).
if [ "${1:-}" = --agent ]; then
	shift
	id=$1 cpu=$2 end=$3 start=$4 lock=$5 counter=$6 out=$7 runs=$8 seed=$9 bench=${10}
	while [ "$(date +%s%N)" -lt "$end" ]; do
		task=$(flock "$counter.lock" sh -c 'n=$(cat "$1"); echo $((n + 1)) > "$1"; echo "$n"' sh "$counter")
		if [ "$runs" = random ]; then
			r=$(awk -v s="$((seed * 100003 + task))" 'BEGIN { srand(s); print 1 + int(rand() * 5) }')
		else
			r=$runs
		fi
		i=0
		while [ "$i" -lt "$r" ] && [ "$(date +%s%N)" -lt "$end" ]; do
			v=$(flock -x "$lock" taskset -c "$cpu" "$bench" 2> /dev/null |
				sed -n 's/^throughput: \([0-9.]*\).*/\1/p')
			t=$(($(date +%s%N) - start))
			echo "$t $id $task $i ${v:-0}" >> "$out"
			i=$((i + 1))
		done
	done
	exit 0
fi

usage() {
	cat <<EOF
usage: record-noise.sh [options]     (make record-noise RECORD_FLAGS="...")

Records the runs of a fixed workload on this machine, two agents pinned to
CPU 0 and CPU 1 sharing a measure lock, under each named condition, into
DIR/NAME.trace (format: tests/bench/traces/README).

  --conditions LIST  of idle,hog1,hog2,bursts,kbuild (default: all five)
                       idle    nothing beside the agents
                       hog1    a steady CPU hog on CPU 0 (build/loadgen --steady)
                       hog2    steady hogs on CPU 0 and CPU 1
                       bursts  build/loadgen: one hog on a random core, on for
                               1-8 s, off for 1-8 s, seeded
                       kbuild  make -j2 of this project's sources in a scratch
                               copy, again and again
  --seconds N        seconds per condition (default 120)
  --runs R|random    runs per task: R (default 5) or random 1-5 per task
  --seed S           the seed of bursts and of random runs (default 1)
  --workload W       demo: the demo repository's bench at main, built once
                     (tests/lib/mkdemo.sh; about 0.2 s a run; the default)
                     loop: a fixed CPU loop of about 0.1 s printing throughput
                     guest: the kernel lab's udp-rx, one run a boot: --kernel's
                       bzImage booted under QEMU (TCG), iperf3 --udp -4 -b 0
                       -l 8920 -t 3 -P 4 in the guest (build/tests/qemu-boot),
                       KBytes/s; about 6 s a run (use --runs 1: a task is a boot)
  --kernel FILE      the bzImage for --workload guest (e.g. one the kernel lab
                     built: /var/tmp/bisectd-klab/lab/agents/*/kcache/*/arch/x86/boot/bzImage)
  --out DIR          where the traces go (default tests/bench/traces)
  --suffix S         trace names NAME-S.trace (e.g. --suffix short)
  --keep             keep the scratch directory (each agent's raw lines, logs)
  --help             this text
EOF
}

CONDITIONS=idle,hog1,hog2,bursts,kbuild
SECONDS_PER=120
RUNS=5
SEED=1
WORKLOAD=demo
KERNEL=""
OUT=$TOP/tests/bench/traces
SUFFIX=""
KEEP=0

while [ $# -gt 0 ]; do
	case $1 in
	--conditions | --seconds | --runs | --seed | --workload | --kernel | --out | --suffix)
		[ $# -ge 2 ] || { echo "record-noise: $1 needs a value" >&2; exit 2; } ;;
	esac
	case $1 in
	--conditions) CONDITIONS=$2; shift ;;
	--seconds) SECONDS_PER=$2; shift ;;
	--runs) RUNS=$2; shift ;;
	--seed) SEED=$2; shift ;;
	--workload) WORKLOAD=$2; shift ;;
	--kernel) KERNEL=$2; shift ;;
	--out) OUT=$2; shift ;;
	--suffix) SUFFIX=-$2; shift ;;
	--keep) KEEP=1 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "record-noise: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done
case $SECONDS_PER in '' | *[!0-9]* | 0) echo "record-noise: bad --seconds '$SECONDS_PER'" >&2; exit 2 ;; esac
case $SEED in '' | *[!0-9]*) echo "record-noise: bad --seed '$SEED'" >&2; exit 2 ;; esac
case $RUNS in random | [1-9] | [1-9][0-9]) ;; *) echo "record-noise: bad --runs '$RUNS'" >&2; exit 2 ;; esac
case $WORKLOAD in demo | loop | guest) ;; *) echo "record-noise: bad --workload '$WORKLOAD'" >&2; exit 2 ;; esac
if [ "$WORKLOAD" = guest ]; then
	[ -f "$KERNEL" ] || { echo "record-noise: --workload guest needs --kernel BZIMAGE (not a file: '$KERNEL')" >&2; exit 2; }
	[ -x "$BUILD/tests/qemu-boot" ] || { echo "record-noise: $BUILD/tests/qemu-boot missing (make $BUILD/tests/qemu-boot)" >&2; exit 2; }
	command -v qemu-system-x86_64 > /dev/null || { echo "record-noise: qemu-system-x86_64 missing (make deps)" >&2; exit 2; }
fi
for c in $(echo "$CONDITIONS" | tr ',' ' '); do
	case $c in
	idle | hog1 | hog2 | bursts | kbuild) ;;
	*) echo "record-noise: unknown condition '$c'" >&2; exit 2 ;;
	esac
done
for t in cc make git flock taskset setsid awk; do
	command -v "$t" > /dev/null || { echo "record-noise: $t missing (make deps)" >&2; exit 2; }
done
[ -x "$BUILD/loadgen" ] || { echo "record-noise: $BUILD/loadgen missing (make $BUILD/loadgen)" >&2; exit 2; }
CPUS=$(nproc)
CPU1=$((CPUS > 1 ? 1 : 0))

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/record-noise.XXXXXX") || exit 1
GROUPS_RUNNING=""

# start_group OUTFILE CMD...: CMD in a session (and process group) of its
# own, so that stop_groups ends it with everything it started.
start_group() {
	_out=$1
	shift
	setsid "$@" < /dev/null > "$_out" 2>&1 &
	LAST_GROUP=$!
	GROUPS_RUNNING="$GROUPS_RUNNING $LAST_GROUP"
}

stop_groups() {
	[ -n "$GROUPS_RUNNING" ] || return 0
	for g in $GROUPS_RUNNING; do kill -TERM "-$g" 2> /dev/null; done
	sleep 0.3
	for g in $GROUPS_RUNNING; do kill -KILL "-$g" 2> /dev/null; done
	for g in $GROUPS_RUNNING; do wait "$g" 2> /dev/null; done
	GROUPS_RUNNING=""
}

cleanup() {
	trap - EXIT INT TERM HUP
	stop_groups
	if [ "$KEEP" = 1 ]; then
		echo "record-noise: kept $SCRATCH"
	else
		rm -rf "$SCRATCH"
	fi
}
trap cleanup EXIT
trap 'echo "record-noise: interrupted" >&2; exit 130' INT TERM HUP

# --- the workload ----------------------------------------------------------

if [ "$WORKLOAD" = demo ]; then
	sh "$TOP/tests/lib/mkdemo.sh" "$SCRATCH/demo" > "$SCRATCH/mkdemo.out" || exit 1
	make -s -C "$SCRATCH/demo" bench > /dev/null || exit 1
	BENCH=$SCRATCH/demo/bench
	WDESC="demo bench: tests/lib/mkdemo.sh at main ($(git -C "$SCRATCH/demo" rev-parse --short=12 HEAD)), built once with cc -O2; 30M chased hash lookups, about 0.2 s a run; ops/s, higher is better"
elif [ "$WORKLOAD" = guest ]; then
	# tests/bench/guest-run.sh: one boot and one run, as a kernel lab task.
	GUEST_KERNEL=$KERNEL GUEST_QEMU_BOOT=$BUILD/tests/qemu-boot GUEST_TMP=$SCRATCH
	export GUEST_KERNEL GUEST_QEMU_BOOT GUEST_TMP
	BENCH=$TOP/tests/bench/guest-run.sh
	WDESC="guest: the kernel lab's udp-rx, one boot of $KERNEL under QEMU (TCG, 512 MB, 1 vCPU) and one iperf3 --udp -4 -b 0 -l 8920 -t 3 -P 4 in it, about 6 s a run; KBytes/s, higher is better"
else
	cat > "$SCRATCH/loop.c" <<'EOF'
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static volatile uint64_t seed = 0x2545f4914f6cdd1dULL;

int main(void)
{
	struct timespec a, b;
	uint64_t z = seed;
	double secs;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (uint32_t i = 0; i < 4000000; i++)
		for (int r = 0; r < 17; r++)
			z = ((z + i) ^ (z >> 29)) * 0xbf58476d1ce4e5b9ULL;
	clock_gettime(CLOCK_MONOTONIC, &b);
	secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	seed = z;
	printf("throughput: %.0f ops/s\n", 4000000 / secs);
	return 0;
}
EOF
	cc -O2 -o "$SCRATCH/loop" "$SCRATCH/loop.c" || exit 1
	BENCH=$SCRATCH/loop
	WDESC="loop: 4M dependent multiply-xorshift mixes of 17 rounds (cc -O2), about 0.1 s a run; mixes/s, higher is better"
fi

# The kbuild condition's scratch copy of this project's sources.
kbuild_prepare() {
	[ -d "$SCRATCH/src" ] && return 0
	mkdir -p "$SCRATCH/src"
	git -C "$TOP" archive HEAD Makefile bisectd agents schema tests/lib/embed-schema.sh |
		tar -x -C "$SCRATCH/src" || return 1
	cat > "$SCRATCH/kbuild.sh" <<'EOF'
#!/bin/sh
# Builds the project with make -j2 again and again until killed.
cd "$1" || exit 1
n=0
while :; do
	rm -rf kb bisectd/lib/schema_sql.c
	make -s -j2 BUILD=kb all > /dev/null 2>&1
	n=$((n + 1))
	echo "build $n done at $(date +%s)"
done
EOF
}

# --- one condition ---------------------------------------------------------

record() {
	name=$1$SUFFIX
	trace=$OUT/$name.trace
	w=$SCRATCH/$1
	mkdir -p "$w"
	echo 0 > "$w/counter"
	: > "$w/lock"
	: > "$w/a0"
	: > "$w/a1"
	load1=$(cut -d' ' -f1-3 /proc/loadavg)
	dur=$((SECONDS_PER + 5))
	case $1 in
	idle) load="nothing started beside the agents" ;;
	hog1)
		start_group "$w/loadgen.out" "$BUILD/loadgen" --steady --cores 0 --duration "$dur" --log "$w/hogs"
		load="build/loadgen --steady --cores 0: a busy loop pinned to CPU 0 all the time"
		;;
	hog2)
		start_group "$w/loadgen.out" "$BUILD/loadgen" --steady --cores "0,$CPU1" --duration "$dur" --log "$w/hogs"
		load="build/loadgen --steady --cores 0,$CPU1: a busy loop pinned to each CPU all the time"
		;;
	bursts)
		start_group "$w/loadgen.out" "$BUILD/loadgen" --seed "$SEED" --cores "0,$CPU1" --hogs 1 \
			--on 1-8 --off 1-8 --duration "$dur" --log "$w/hogs"
		load="build/loadgen --seed $SEED --cores 0,$CPU1 --hogs 1 --on 1-8 --off 1-8: one busy loop on a random CPU, on 1-8 s, off 1-8 s (its switches below as '# hog: t_ms core on|off', from the trace's start within a few ms)"
		;;
	kbuild)
		kbuild_prepare || { echo "record-noise: cannot copy the sources for kbuild" >&2; return 1; }
		start_group "$w/kbuild.out" sh "$SCRATCH/kbuild.sh" "$SCRATCH/src"
		load="make -s -j2 all of this project's sources (bisectd, agents; $(git -C "$TOP" rev-parse --short=12 HEAD)) in a scratch copy, from clean, again and again, unpinned"
		;;
	esac
	start=$(date +%s%N)
	end=$((start + SECONDS_PER * 1000000000))
	date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	echo "record-noise: $name: $SECONDS_PER s, load $load1"
	start_group "$w/agent0.out" sh "$SELF" --agent 0 0 "$end" "$start" "$w/lock" "$w/counter" "$w/a0" "$RUNS" "$SEED" "$BENCH"
	a0=$LAST_GROUP
	start_group "$w/agent1.out" sh "$SELF" --agent 1 "$CPU1" "$end" "$start" "$w/lock" "$w/counter" "$w/a1" "$RUNS" "$SEED" "$BENCH"
	a1=$LAST_GROUP
	# The agents stop by themselves at the end (a run at most later).
	wait "$a0" "$a1"
	load2=$(cut -d' ' -f1-3 /proc/loadavg)
	builds=""
	if [ "$1" = kbuild ]; then
		n=$(grep -c '^build' "$w/kbuild.out" 2> /dev/null | head -n 1 | tr -dc 0-9)
		builds=" (${n:-0} whole builds finished)"
	fi
	stop_groups

	if [ "$RUNS" = random ]; then rdesc="random 1-5"; else rdesc=$RUNS; fi
	failed=$(cat "$w/a0" "$w/a1" | awk '$5 + 0 <= 0' | wc -l)
	mkdir -p "$OUT"
	{
		echo "# condition: $name"
		echo "# workload: $WDESC"
		echo "# host: $(uname -r), $CPUS cpus, $date"
		echo "# agents: 2, runs per task: $rdesc"
		echo "# agent 0 pinned to CPU 0, agent 1 to CPU $CPU1; each run holds an exclusive flock on a shared lock file"
		echo "# load: $load$builds" | tr -d '\r' | head -n 1
		echo "# seconds: $SECONDS_PER"
		echo "# loadavg start: $load1"
		echo "# loadavg end: $load2"
		echo "# failed runs (left out): $failed"
		if [ -s "$w/hogs" ]; then
			sed 's/^/# hog: /' "$w/hogs"
		fi
		echo "# t_ms agent task run value"
		cat "$w/a0" "$w/a1" | awk '$5 + 0 > 0 { printf "%.3f %d %d %d %s\n", $1 / 1e6, $2, $3, $4, $5 }' | sort -n -k1,1
	} > "$trace.tmp" && mv "$trace.tmp" "$trace"
	echo "record-noise: $name: $(grep -vc '^#' "$trace") runs in $(grep -v '^#' "$trace" | cut -d' ' -f3 | sort -u | wc -l) tasks -> $trace ($(wc -c < "$trace") bytes)"
}

echo "record-noise: $(uname -r), $CPUS cpus, workload $WORKLOAD ($BENCH), runs per task $RUNS"
for c in $(echo "$CONDITIONS" | tr ',' ' '); do
	record "$c" || exit 1
done
