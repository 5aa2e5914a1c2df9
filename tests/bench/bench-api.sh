#!/bin/sh
# bench-api.sh: `make bench-api`. The HTTP API under load: for each
# number of simulated agents (build/bench-api, tests/bench/bench_api.c)
# one bisectd is started on a free loopback port with its own scratch
# directory and `auth: none`, a job is kept running on a 100-commit
# history, and the agents register, long-poll, heartbeat and upload for
# a fixed time. Then, on a fresh bisectd, one job is grown to 200,000
# samples by 1,000-sample uploads, the rate shown in buckets. Everything
# it starts is stopped on exit.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
BUILD=$(cd "$BUILD" 2> /dev/null && pwd || echo "$BUILD")

AGENTS="50 500 5000"
SECONDS_RUN=20
GROW=200000
BUCKET=20000
DIR=${TMPDIR:-/tmp}/bisectd-bench-api
KEEP=0

usage() {
	cat <<EOF
usage: bench-api.sh [options]       (make bench-api BENCH_API_FLAGS="...")

  --agents LIST    simulated agents per run, comma separated (default 50,500,5000);
                   ratios are against the first
  --seconds S      each run's length (default $SECONDS_RUN)
  --grow N         samples to grow one job to, 0: skip (default $GROW)
  --bucket B       the grown job's rate is shown for every B samples (default $BUCKET)
  --dir DIR        scratch directory (default \${TMPDIR:-/tmp}/bisectd-bench-api)
  --keep           keep the scratch directory (logs, databases)
  --help           this text

Per run: requests/s; p50/p99 service time of claims that handed out a task
as the agents saw it (less the wait for work bisectd reports in
Server-Timing; claimw99: the p99 with that wait), and claimS99, the p99 of
what bisectd says it spent on them (Server-Timing "svc": from the
request's headers to its reply, less the wait; the simulated agents' own
queueing is not in it), of heartbeats and of uploads; samples/s; bisectd's peak RSS and threads
(/proc/PID/status, read near the end of the run); each also as a ratio
against the first run. An empty long poll waits by design and is not a
service time. errors counts refused or lost requests, connect errors the
connections the server did not take.
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	--agents) AGENTS=$(echo "$2" | tr ',' ' '); shift 2 ;;
	--seconds) SECONDS_RUN=$2; shift 2 ;;
	--grow) GROW=$2; shift 2 ;;
	--bucket) BUCKET=$2; shift 2 ;;
	--dir) DIR=$2; shift 2 ;;
	--keep) KEEP=1; shift ;;
	--help) usage; exit 0 ;;
	*) echo "bench-api: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done

for p in bisectd bench-api; do
	[ -x "$BUILD/$p" ] || { echo "bench-api: $BUILD/$p missing: run make bench-api" >&2; exit 2; }
done
command -v sqlite3 > /dev/null || { echo "bench-api: sqlite3 missing: run make deps" >&2; exit 2; }

rm -rf "$DIR"
mkdir -p "$DIR"
# bisectd writes what it caches (a finished job's charts) below its working directory.
cd "$DIR" || exit 1
LAB=$DIR
. "$TOP/tests/lib/lab.sh"
trap 'lab_stop; [ $KEEP = 1 ] || rm -rf "$DIR"' EXIT
trap 'exit 130' INT TERM

# As many descriptors as the hard limit allows: 5,000 agents hold 10,000 connections.
ulimit -n "$(ulimit -Hn)" 2> /dev/null || ulimit -n 65536 2> /dev/null
echo "# open files: $(ulimit -n)"

# A linear history of 100 commits; from the 60th on it measures 15% lower.
REPO=$DIR/repo
git init -q -b main "$REPO"
(
	cd "$REPO" && git config user.email bench@localhost && git config user.name bench &&
	for i in $(seq 1 100); do
		echo "$i" > n.txt && git add n.txt && git commit -q -m "commit $i" || exit 1
		if [ "$i" = 1 ]; then git tag v1.0; fi
	done
) || { echo "bench-api: could not make the history" >&2; exit 1; }
git -C "$REPO" rev-list --reverse v1.0..main | tail -n 41 > "$DIR/bad.txt"
GOOD=$(git -C "$REPO" rev-parse v1.0)
BADEND=$(git -C "$REPO" rev-parse main)

# start_lab NAME: a fresh bisectd in $DIR/NAME; sets BPID. `auth: none`
# where bisectd knows the key (a bisectd without it has no authentication).
start_lab() {
	LAB=$DIR/$1
	LAB_PORT=$(lab_free_port)
	# All the simulated agents come from 127.0.0.1, two connections each.
	lab_config "$REPO" "auth: none
max_connections_per_address: 0
max_connections: 20000"
	"$BUILD/bisectd" -n -f "$LAB/bisectd.yaml" > /dev/null 2>&1 || lab_config "$REPO" ""
	lab_start_bisectd || exit 1
	BPID=${LAB_PIDS##* }
}

# proc_peak PID FILE FLAG: samples VmRSS and Threads while FLAG exists; writes the peaks to FILE.
proc_peak() {
	rss=0 thr=0
	while [ -f "$3" ]; do
		r=$(awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2> /dev/null || echo 0)
		t=$(awk '/^Threads/ { print $2 }' "/proc/$1/status" 2> /dev/null || echo 0)
		[ "${r:-0}" -gt "$rss" ] && rss=$r
		[ "${t:-0}" -gt "$thr" ] && thr=$t
		sleep 0.5
	done
	echo "rss_kb $rss" >> "$2"
	echo "threads $thr" >> "$2"
}

val() { awk -v k="$1" '$1 == k { print $2; exit }' "$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0 || a == "" || a == "nan") print "-"; else printf "%.2f", a / b }'; }

BODY='{"repo": "demo", "good": "v1.0", "bad": "main", "workload": "bench", "pool": "local", "runs": 10}'
FIRST=""
printf '%-6s %10s %9s %9s %9s %9s %9s %9s %9s %9s %10s %8s %7s %7s %7s\n' agents requests/s claim50 claim99 \
	claimw99 claimS99 hb50 hb99 upl50 upl99 samples/s rss_MB threads errors conn_err
for n in $AGENTS; do
	start_lab "run$n"
	out=$DIR/run$n.out
	: > "$out"
	: > "$out.proc"
	touch "$out.running"
	proc_peak "$BPID" "$out.proc" "$out.running" &
	PP=$!
	"$BUILD/bench-api" --port "$LAB_PORT" --agents "$n" --seconds "$SECONDS_RUN" --wait 5 --heartbeat 5 \
		--bad "$DIR/bad.txt" --submit "$BODY" --seed "$n" > "$out" 2> "$out.err"
	rm -f "$out.running"
	wait $PP
	cat "$out.proc" >> "$out"
	lab_stop
	errs=0
	for k in register claim heartbeat upload submit poll; do errs=$((errs + $(val ${k}_errors "$out"))); done
	printf '%-6s %10s %9s %9s %9s %9s %9s %9s %9s %9s %10s %8s %7s %7s %7s\n' "$n" "$(val requests_per_s "$out")" \
		"$(val claim_p50_ms "$out")" "$(val claim_p99_ms "$out")" "$(val claim_with_wait_p99_ms "$out")" \
		"$(val claim_server_p99_ms "$out")" \
		"$(val heartbeat_p50_ms "$out")" \
		"$(val heartbeat_p99_ms "$out")" "$(val upload_p50_ms "$out")" "$(val upload_p99_ms "$out")" \
		"$(val samples_per_s "$out")" "$(awk -v k="$(val rss_kb "$out")" 'BEGIN { printf "%.1f", k / 1024 }')" \
		"$(val threads "$out")" "$errs" "$(val connect_errors "$out")"
	[ -n "$FIRST" ] || FIRST=$out
done
echo "# ratios against the run of $(val agents "$FIRST") agents:"
printf '%-6s %10s %9s %9s %9s %9s %9s %9s %9s %10s %8s %7s\n' agents requests/s claim50 claim99 claimS99 \
	hb50 hb99 upl50 upl99 samples/s rss threads
for n in $AGENTS; do
	out=$DIR/run$n.out
	line=$(printf '%-6s' "$n")
	for k in requests_per_s claim_p50_ms claim_p99_ms claim_server_p99_ms heartbeat_p50_ms heartbeat_p99_ms upload_p50_ms \
		 upload_p99_ms samples_per_s rss_kb threads; do
		line="$line $(printf '%9s' "$(ratio "$(val $k "$out")" "$(val $k "$FIRST")")")"
	done
	echo "$line"
done

[ "$GROW" -gt 0 ] || exit 0
# One job grown to $GROW samples: 50 agents, 1,000 samples an upload. The
# commits between the ends measure like either end, task by task, so that
# the job keeps searching instead of ending.
start_lab grow
out=$DIR/grow.out
GBODY='{"repo": "demo", "good": "v1.0", "bad": "main", "workload": "bench", "pool": "local", "runs": 10,
 "budget_runs": 1000000, "budget_seconds": 31536000, "confidence": 0.999999}'
"$BUILD/bench-api" --port "$LAB_PORT" --agents 50 --seconds 300 --wait 5 --heartbeat 5 --samples 1000 \
	--until "$GROW" --bucket "$BUCKET" --bad "$DIR/bad.txt" --flaky --good "$GOOD" --bad-end "$BADEND" \
	--submit "$GBODY" --once --seed 7 > "$out" 2> "$out.err"
job=$(val job "$out")
lab_stop
stored=$(sqlite3 "$LAB/bisectd.db" "SELECT count(*) FROM samples WHERE job_id = $job")
distinct=$(sqlite3 "$LAB/bisectd.db" "SELECT count(*) FROM (SELECT DISTINCT task_id, attempt, run FROM samples WHERE job_id = $job)")
state=$(sqlite3 "$LAB/bisectd.db" "SELECT state FROM jobs WHERE id = $job")
echo "# one job grown by 1,000-sample uploads (50 agents): per bucket, samples/s and the uploads'"
echo "# service time (ms), each also against the second bucket (the first holds the ends' small uploads)"
printf '%-10s %10s %8s %9s %9s %8s %8s\n' samples samples/s ratio upl50 upl99 ratio50 ratio99
awk '$1 == "bucket" { b[++n] = $0 } END { split(b[n > 1 ? 2 : 1], r); f = r[4]; p = r[5]; q = r[6]
	for (i = 1; i <= n; i++) { split(b[i], x); $0 = b[i]
	printf "%-10s %10s %8.2f %9s %9s %8.2f %8.2f\n", $2, $4, $4 / f, $5, $6, p ? $5 / p : 0, q ? $6 / q : 0 } }' "$out"
echo "# job $job: $(val samples "$out") samples taken in $(val seconds "$out") s ($(val samples_per_s "$out")/s), $stored in the store ($distinct distinct), job $state at the end"
[ "$stored" = "$(val samples "$out")" ] && [ "$stored" = "$distinct" ] ||
	echo "# MISMATCH: the store holds $stored samples ($distinct distinct), the agents had $(val samples "$out") taken"
