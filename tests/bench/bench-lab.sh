#!/bin/sh
# bench-lab.sh: `make bench-lab`. Real bisections on the local lab, not a
# simulation: for each case (tests/bench/mklabrepo.sh makes its history)
# and repetition it starts bisectd and two agents (lab1 on CPU 0, lab2 on
# CPU 1, sharing measure_lock and build_lock) in a scratch directory on a
# free loopback port, starts build/loadgen beside them (seeded per
# repetition), submits the range and watches it, then classifies the
# answer against the known culprit. The same history under the same load
# (the same loadgen seed) is then bisected by `git bisect run` with one run
# per step and with five. Everything it starts is stopped on exit.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
BENCH=$TOP/tests/bench

usage() {
	cat <<EOF
usage: bench-lab.sh [options]       (make bench-lab BENCH_LAB_FLAGS="...")

Real bisections on this machine's local lab with a load injector beside
them, and git bisect run baselines on the same histories under the same
load. One line per job as it ends, then a table per case.

  --cases LIST     cases to run, of big,small,none,buildfail,merge (default: all)
                     big: 15% slower at the culprit, inside a merged branch
                     small: 5% slower; none: no change
                     buildfail: 15%, and the culprit's parent does not build
                     merge: 15%, the culprit a merge worse than both parents
                     intermittent (only when named): half the culprit's runs
                       at half the speed, the rest as before
  --reps N         repetitions of every case, or CASE=N,... per case
                   (default: big=$DEF_BIG,small=$DEF_SMALL,none=$DEF_NONE,buildfail=$DEF_BF,merge=$DEF_MERGE; a repetition is
                   about 50 s here, a bisectd job of 25-40 s and both
                   baselines, so about 19 minutes in all; each bisectd job
                   that runs into the timeout adds about 2 minutes)
  --quick          one repetition of every case (about 3 minutes)
  --seed S         loadgen's seed for repetition 1; repetition r uses S+r-1 (default 1)
  --timeout SEC    a job (bisectd's or a baseline's) still running after SEC
                   is cancelled and counted failed (default $TIMEOUT)
  --runs N         bisectctl submit --runs (default $RUNS)
  --budget-runs N  bisectctl submit --budget-runs (default: none given)
  --min-effect X   bisectctl submit --min-effect, percent (default $MIN_EFFECT: the
                   smallest case is 5%; at this lab's noise 30 runs an end
                   cannot show two equal ends within bisectd's default of 1%,
                   so a none job would end undecided, not not-reproduced)
  --no-load        no load injector
  --hogs N         loadgen --hogs (default 1)
  --on MIN-MAX     loadgen --on, seconds (default 1-8)
  --off MIN-MAX    loadgen --off, seconds (default 1-8)
  --nice N         the hogs' nice value (default 0)
  --no-baselines   bisectd only
  --dir DIR        scratch directory (default \${TMPDIR:-/tmp}/bisectd-bench-lab)
  --keep           keep the scratch directory (logs, databases) at the end;
                   build/replay-job DIR/CASE-REP/bisectd.db replays a job through the engine
  --help           this text

Classes: exact (the culprit named), range (a set holding it), wrong (a
commit or set without it, with the confidence it claimed), undecided,
not-reproduced (the right answer for none), failed (with timeouts).
runs: successful samples, ends included; tasks: tasks done or skipped (for
git bisect: steps, ends included); builds: distinct commits measured.
EOF
}

DEF_BIG=10 DEF_SMALL=4 DEF_NONE=3 DEF_BF=3 DEF_MERGE=3 DEF_INT=4
CASES=big,small,none,buildfail,merge
REPS=""
QUICK=0
SEED=1
TIMEOUT=150
RUNS=5
BUDGET=""
MIN_EFFECT=3
LOAD=1
HOGS=1
ON=1-8
OFF=1-8
NICE=0
BASELINES=1
DIR=${TMPDIR:-/tmp}/bisectd-bench-lab
KEEP=0

# need ARGC OPTION: OPTION takes a value.
need() {
	[ "$1" -ge 2 ] || { echo "bench-lab: $2 needs a value (see --help)" >&2; exit 2; }
}

while [ $# -gt 0 ]; do
	case $1 in
	--cases | --reps | --seed | --timeout | --runs | --budget-runs | --min-effect | --hogs | --on | --off | --nice | --dir)
		need $# "$1" ;;
	esac
	case $1 in
	--cases) CASES=$2; shift ;;
	--reps) REPS=$2; shift ;;
	--quick) QUICK=1 ;;
	--seed) SEED=$2; shift ;;
	--timeout) TIMEOUT=$2; shift ;;
	--runs) RUNS=$2; shift ;;
	--budget-runs) BUDGET=$2; shift ;;
	--min-effect) MIN_EFFECT=$2; shift ;;
	--no-load) LOAD=0 ;;
	--hogs) HOGS=$2; shift ;;
	--on) ON=$2; shift ;;
	--off) OFF=$2; shift ;;
	--nice) NICE=$2; shift ;;
	--no-baselines) BASELINES=0 ;;
	--dir) DIR=$2; shift ;;
	--keep) KEEP=1 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "bench-lab: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	shift
done

# reps_of CASE: the repetitions of CASE from --reps, --quick or the defaults.
reps_of() {
	if [ "$QUICK" = 1 ]; then echo 1; return; fi
	case $REPS in
	'') ;;
	*=*)
		r=$(echo "$REPS" | tr ',' '\n' | sed -n "s/^$1=\\([0-9][0-9]*\\)\$/\\1/p")
		echo "${r:-0}"
		return
		;;
	*) echo "$REPS"; return ;;
	esac
	case $1 in
	big) echo $DEF_BIG ;;
	small) echo $DEF_SMALL ;;
	none) echo $DEF_NONE ;;
	buildfail) echo $DEF_BF ;;
	merge) echo $DEF_MERGE ;;
	intermittent) echo $DEF_INT ;;
	esac
}

for c in $(echo "$CASES" | tr ',' ' '); do
	case $c in
	big | small | none | buildfail | merge | intermittent) ;;
	*) echo "bench-lab: unknown case '$c'" >&2; exit 2 ;;
	esac
	case $(reps_of "$c") in
	'' | *[!0-9]*) echo "bench-lab: bad --reps '$REPS'" >&2; exit 2 ;;
	esac
done
for p in bisectd bisectctl bisect-agent loadgen; do
	[ -x "$BUILD/$p" ] || { echo "bench-lab: $BUILD/$p missing (make all $BUILD/loadgen)" >&2; exit 2; }
done
for t in git cc make sqlite3 python3 curl taskset flock setsid timeout; do
	command -v "$t" > /dev/null || { echo "bench-lab: $t missing (make deps)" >&2; exit 2; }
done
CPUS=$(nproc)
CPU2=$((CPUS > 1 ? 1 : 0))

. "$TOP/tests/lib/lab.sh"

# --- what it starts, and how all of it stops -----------------------------

LOADGEN_PID=""
CHILD_PGID=""

stop_loadgen() {
	[ -n "$LOADGEN_PID" ] || return 0
	kill "$LOADGEN_PID" 2> /dev/null
	wait "$LOADGEN_PID" 2> /dev/null
	LOADGEN_PID=""
}

# Starts loadgen for SEC seconds with seed SEED, logging to FILE.
start_loadgen() {
	[ "$LOAD" = 1 ] || return 0
	"$BUILD/loadgen" --seed "$1" --duration "$2" --cores "0,$CPU2" --hogs "$HOGS" \
		--on "$ON" --off "$OFF" --nice "$NICE" --log "$3" &
	LOADGEN_PID=$!
}

# run_bg CMD...: runs CMD in a session of its own and waits for it, so that
# a signal to this script is handled at once and stops all of CMD's tree.
run_bg() {
	setsid "$@" < /dev/null &
	CHILD_PGID=$!
	wait "$CHILD_PGID"
	rc=$?
	CHILD_PGID=""
	return $rc
}

cleanup() {
	trap - EXIT INT TERM HUP
	if [ -n "$CHILD_PGID" ]; then
		kill -TERM "-$CHILD_PGID" 2> /dev/null
		sleep 0.3
		kill -KILL "-$CHILD_PGID" 2> /dev/null
	fi
	stop_loadgen
	lab_stop
	if [ "$KEEP" = 0 ] && [ -n "${DIR:-}" ]; then
		rm -rf "$DIR"
	fi
}
trap cleanup EXIT
trap 'echo "bench-lab: interrupted" >&2; exit 130' INT TERM HUP

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# --- one bisectd job -----------------------------------------------------

# The local lab's agents, building one at a time as well (build_lock).
start_agent() {
	lab_start_agent "$1" "$2" "build_lock: $LAB/build.lock"
}


# bisectd_job CASE REP SEED: one job; appends its result line.
bisectd_job() {
	LAB=$DIR/$1-$2
	rm -rf "$LAB"
	mkdir -p "$LAB"
	unset LAB_PORT
	lab_config "$DIR/repos/$1"
	lab_start_bisectd || { result "$1" "$2" bisectd failed - 0 0 0 0 "bisectd did not start"; lab_stop; return; }
	start_agent lab1 0
	start_agent lab2 "$CPU2"
	start_loadgen "$3" $((TIMEOUT + 30)) "$LAB/load.log"
	t0=$(now)
	run_bg timeout "$TIMEOUT" "$BUILD/bisectctl" submit --repo demo --good v1.0 --bad main \
		--workload bench --runs "$RUNS" --min-effect "$MIN_EFFECT" ${BUDGET:+--budget-runs "$BUDGET"} \
		--watch --interval 2 \
		> "$LAB/watch.out" 2>&1
	rc=$?
	wall=$(elapsed "$t0")
	timed_out=0
	if [ "$rc" = 124 ]; then
		timed_out=1
		"$BUILD/bisectctl" cancel 1 > /dev/null 2>&1
	fi
	stop_loadgen
	"$BUILD/bisectctl" --json show 1 > "$LAB/job.json" 2> /dev/null
	runs=$(q "SELECT count(*) FROM samples WHERE job_id = 1 AND value > 0" 2> /dev/null)
	tasks=$(q "SELECT count(*) FROM tasks WHERE job_id = 1 AND state IN ('done', 'skipped')" 2> /dev/null)
	builds=$(q "SELECT count(DISTINCT idx) FROM samples WHERE job_id = 1 AND value > 0" 2> /dev/null)
	lab_stop
	out=$(python3 "$BENCH/labjob.py" classify "$LAB/job.json" "$(truth "$1")" "$rc" "$timed_out")
	cls=$(printf '%s\n' "$out" | cut -f1)
	conf=$(printf '%s\n' "$out" | cut -f2)
	detail=$(printf '%s\n' "$out" | cut -f3)
	result "$1" "$2" bisectd "${cls:-failed}" "${conf:--}" "${runs:-0}" "${tasks:-0}" "${builds:-0}" "$wall" "$detail"
}

truth() { head -n 1 "$DIR/repos/$1.culprit"; }

# result CASE REP METHOD CLASS CONF RUNS TASKS BUILDS WALL DETAIL
result() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$DIR/results.tsv"
	printf '%-9s %2s/%-2s %-16s %-14s conf %-6s  runs %3s  tasks %3s  builds %2s  %6s s  %s\n' \
		"$1" "$2" "$(reps_of "$1")" "$3" "$4" "$5" "$6" "$7" "$8" "$9" "${10}"
}

# --- the git bisect run baselines ----------------------------------------

# gitbisect_job CASE REP SEED K: git bisect run with K runs per step
# (tests/bench/gitbisect-run.sh) under the load of this repetition.
gitbisect_job() {
	method="git-bisect-${4}run"
	W=$DIR/$1-$2-gb$4
	rm -rf "$W"
	mkdir -p "$W"
	if ! git clone -q "$DIR/repos/$1" "$W/tree" 2> "$W/err"; then
		result "$1" "$2" "$method" failed - 0 0 0 0 "clone failed"
		return
	fi
	log=$W/runs.log
	: > "$log"
	start_loadgen "$3" $((TIMEOUT + 30)) "$W/load.log"
	t0=$(now)
	run_bg timeout "$TIMEOUT" sh "$BENCH/gitbisect-run.sh" "$W/tree" "$4" "$log" > "$W/answer" 2> "$W/err"
	rc=$?
	wall=$(elapsed "$t0")
	stop_loadgen
	runs=$(awk '$2 + 0 > 0' "$log" | wc -l)
	builds=$(awk '$2 + 0 > 0 { print $1 }' "$log" | sort -u | wc -l)
	tasks=$(awk '{ print $1 }' "$log" | uniq | wc -l)
	t=$(truth "$1")
	read -r kind rest < "$W/answer" || kind=failed rest=""
	[ "$rc" = 124 ] && kind=failed rest="timeout"
	case $kind in
	culprit)
		if [ "$rest" = "$t" ]; then
			cls=exact detail=$(echo "$rest" | cut -c1-12)
		else
			cls=wrong detail="named $(echo "$rest" | cut -c1-12)"
		fi
		;;
	range)
		# Not n: that is the repetitions' loop's (sh has no locals).
		nset=$(echo "$rest" | wc -w)
		if echo " $rest " | grep -q " $t "; then
			cls=range detail="set of $nset"
		else
			cls=wrong detail="set of $nset without it"
		fi
		;;
	not-reproduced)
		cls=not-reproduced
		detail="ends $(echo "$rest" | awk '{ printf "%+.1f%%", 100 * ($2 - $1) / $1 }')"
		;;
	*)
		cls=failed detail=${rest:-"see $W"}
		;;
	esac
	result "$1" "$2" "$method" "$cls" - "$runs" "$tasks" "$builds" "$wall" "$detail"
}

# --- main ------------------------------------------------------------------

# Only a directory this script made (or none) is wiped.
if [ -e "$DIR" ] && [ -n "$(ls -A "$DIR" 2> /dev/null)" ] && [ ! -e "$DIR/.bench-lab" ]; then
	echo "bench-lab: $DIR exists and is not a bench-lab directory; give another --dir" >&2
	DIR=""
	exit 2
fi
rm -rf "$DIR"
mkdir -p "$DIR/repos"
: > "$DIR/.bench-lab"
: > "$DIR/results.tsv"
started=$(now)
echo "bench-lab: $(uname -r), $CPUS cpus, load $(cut -d' ' -f1-3 /proc/loadavg); scratch $DIR"
if [ "$LOAD" = 1 ]; then
	echo "bench-lab: loadgen --hogs $HOGS --on $ON --off $OFF --nice $NICE on cores 0,$CPU2, seed $SEED + rep - 1"
else
	echo "bench-lab: no load injector"
fi
for c in $(echo "$CASES" | tr ',' ' '); do
	sh "$BENCH/mklabrepo.sh" "$DIR/repos/$c" "$c" > "$DIR/repos/$c.out" || exit 1
	echo "bench-lab: case $c: $(sed -n 's/^culprit \([0-9a-f]\{12\}\)[0-9a-f]* \(.*\)/culprit \1 "\2"/p; s/^culprit none/no culprit/p; s/^broken \([0-9a-f]\{12\}\).*/, its parent \1 does not build/p' "$DIR/repos/$c.out" | tr '\n' ' ')"
done
for c in $(echo "$CASES" | tr ',' ' '); do
	n=$(reps_of "$c")
	r=1
	while [ "$r" -le "$n" ]; do
		s=$((SEED + r - 1))
		bisectd_job "$c" "$r" "$s"
		if [ "$BASELINES" = 1 ]; then
			gitbisect_job "$c" "$r" "$s" 1
			gitbisect_job "$c" "$r" "$s" 5
		fi
		r=$((r + 1))
	done
done
python3 "$BENCH/labjob.py" table "$DIR/results.tsv"
echo
echo "bench-lab: $(elapsed "$started") s in all"
if [ "$KEEP" = 1 ]; then
	echo "bench-lab: kept $DIR (results.tsv, each job's logs and database)"
fi
