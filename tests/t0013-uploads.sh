#!/bin/sh
# t0013: many uploads into one job, by simulated agents (build/bench-api)
# on loopback. Every sample an upload was answered for is in the store
# once, none doubled; each commit's summary, added to upload by upload,
# equals one made again from its samples; the steps the uploads lead to
# keep the job going (they run after the reply, outside the upload);
# and a bisectd killed between an upload and its step steps the job when
# it comes back.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/lab.sh"
. "$(dirname "$0")/lib/mkrepo.sh"

command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
[ -x "$BUILD/bench-api" ] || skip_all "$BUILD/bench-api missing (make $BUILD/bench-api)"
LAB=$TEST_DIR/lab
trap 'lab_stop; rm -rf "$TEST_DIR"' EXIT

R=$TEST_DIR/repo
mkrepo_init "$R" > /dev/null
mkrepo_commit "$R" a.txt 0 "first" > /dev/null
mkrepo_tag "$R" v1
for i in $(seq 1 19); do mkrepo_commit "$R" a.txt "$i" "change $i" > /dev/null; done
GOOD=$(mkrepo_sha "$R" v1)
BADEND=$(mkrepo_sha "$R" main)
git -C "$R" rev-list --reverse v1..main | tail -n 8 > "$TEST_DIR/bad.txt"

# `auth: none` where this bisectd knows the key: the simulated agents hold no token.
lab_config "$R" "auth: none"
"$BUILD/bisectd" -n -f "$LAB/bisectd.yaml" > /dev/null 2>&1 || lab_config "$R" ""
lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }

# 20 agents; 500 samples an upload between the ends, where each task
# measures like either end (the job searches on), until 20,000.
BODY='{"repo": "demo", "good": "v1", "bad": "main", "workload": "bench", "runs": 5, "budget_runs": 1000000,
 "budget_seconds": 31536000, "confidence": 0.999999}'
"$BUILD/bench-api" --port "$LAB_PORT" --agents 20 --seconds 90 --wait 2 --heartbeat 2 --samples 500 \
	--until 20000 --bad "$TEST_DIR/bad.txt" --flaky --good "$GOOD" --bad-end "$BADEND" \
	--submit "$BODY" --once --seed 3 > "$TEST_DIR/bench.out" 2> "$TEST_DIR/bench.err"
val() { awk -v k="$1" '$1 == k { print $2; exit }' "$TEST_DIR/bench.out"; }
taken=$(val samples)
job=$(val job)
[ "${taken:-0}" -ge 20000 ]
ok $? "the agents had 20,000 samples or more taken (${taken:-none})"
is "$(val upload_errors)/$(val uploads_409)" "0/0" "no upload refused or lost"
is "$(q "SELECT count(*) FROM samples WHERE job_id = $job")" "$taken" "the store holds every sample taken"
is "$(q "SELECT count(*) FROM (SELECT DISTINCT task_id, attempt, run FROM samples WHERE job_id = $job)")" \
	"$taken" "... each once"
is "$(q "SELECT count(*) FROM samples s JOIN tasks t ON t.id = s.task_id WHERE s.job_id = $job AND
	(t.state != 'done' OR s.attempt != t.attempt)")" 0 "... each from its task's attempt, the task done"

# Summaries, added to upload by upload, against the samples (relative 1e-9).
is "$(q "SELECT count(*) FROM summaries m JOIN (SELECT idx, sum(value > 0) AS n, sum(value <= 0) AS f,
	sum(value > 0) / sum(CASE WHEN value > 0 THEN 1.0 / value END) AS h,
	avg(CASE WHEN value > 0 THEN value END) AS a FROM samples WHERE job_id = $job GROUP BY idx) x
	ON x.idx = m.idx WHERE m.job_id = $job AND (m.n != x.n OR m.failures != x.f OR
	abs(m.hmean - x.h) > 1e-9 * x.h OR abs(m.amean - x.a) > 1e-9 * x.a)")" 0 \
	"every commit's summary equals one made from its samples"
is "$(q "SELECT count(DISTINCT idx) FROM samples WHERE job_id = $job") $(q "SELECT count(*) FROM summaries WHERE job_id = $job")" \
	"$(q "SELECT count(DISTINCT idx) FROM samples WHERE job_id = $job") $(q "SELECT count(DISTINCT idx) FROM samples WHERE job_id = $job")" \
	"... one summary for each commit measured"

# A retried upload changes nothing.
t=$(q "SELECT task_id FROM samples WHERE job_id = $job ORDER BY id DESC LIMIT 1")
a=$(q "SELECT attempt FROM tasks WHERE id = $t")
ag=$(q "SELECT name FROM agents WHERE id = (SELECT agent_id FROM tasks WHERE id = $t)")
n0=$(q "SELECT count(*) FROM samples WHERE job_id = $job")
out=$(lab_curl -sS -X POST -H 'Content-Type: application/json' -w ' %{http_code}' \
	--data-binary "{\"agent\":\"$ag\",\"attempt\":$a,\"status\":\"ok\",\"samples\":[{\"value\":5}]}" \
	"$LAB_URL/api/v1/tasks/$t/result")
like "$out" '"duplicate": *true.* 200$' "a retried upload is answered as a duplicate"
is "$(q "SELECT count(*) FROM samples WHERE job_id = $job")" "$n0" "... and adds no sample"

# The steps kept up: the job is running with tasks to do, or it ended.
state=$(q "SELECT state FROM jobs WHERE id = $job")
open=$(q "SELECT count(*) FROM tasks WHERE job_id = $job AND state IN ('queued', 'claimed')")
[ "$state" != running ] || [ "$open" -gt 0 ]
ok $? "after the uploads the job has tasks to do or ended ($state, $open open)"
[ "$(q "SELECT count(*) FROM decisions WHERE job_id = $job")" -ge 5 ]
ok $? "the uploads led to steps"

# A crash between an upload and its step: bisectd killed, the step's tasks
# taken back as if it never ran. Back up, bisectd steps the job by itself.
if [ "$state" = running ]; then
	kill -9 $LAB_PIDS
	wait 2> /dev/null
	LAB_PIDS=""
	q "UPDATE tasks SET state = 'cancelled' WHERE job_id = $job AND state IN ('queued', 'claimed')"
	lab_start_bisectd || { echo "Bail out! bisectd did not restart"; exit 1; }
	lab_curl -sS -X POST -H 'Content-Type: application/json' --data-binary '{"name":"back","labels":["lab"]}' \
		"$LAB_URL/api/v1/agents/register" > /dev/null
	out=$(lab_curl -sS -X POST -H 'Content-Type: application/json' -w ' %{http_code}' --data-binary '{}' \
		"$LAB_URL/api/v1/agents/back/claim?wait=10")
	like "$out" "\"job\": *$job.* 200\$" "after a restart the job is stepped and hands out a task"
else
	ok 0 "# SKIP the job ended before the restart check ($state)"
fi

tap_plan "$tap_n"
tap_done
