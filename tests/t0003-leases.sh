#!/bin/sh
# t0003: task leases and idempotent uploads, with curl playing the agent.
# A claimed task whose agent goes quiet returns to the queue with a new
# attempt; the old attempt's upload is refused; a retried upload of the
# current attempt never doubles a sample.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/lab.sh"
. "$(dirname "$0")/lib/mkrepo.sh"

command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
LAB=$TEST_DIR/lab
trap 'lab_stop; rm -rf "$TEST_DIR"' EXIT

R=$TEST_DIR/repo
mkrepo_linear "$R" 5

LAB_LEASE=2 LAB_RUNS=3 lab_config "$R"
lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }
# curl plays two agents, each with its own token (enrolled as lab_start_agent's agents are).
T1=$(lab_agent_token fake1)
T2=$(lab_agent_token fake2)
as1() { API_TOKEN=$T1 api "$@"; }
as2() { API_TOKEN=$T2 api "$@"; }

out=$(as1 POST /api/v1/agents/register '{"name":"fake1","labels":["lab"]}')
like "$out" '^200 .*"lease": *2' "register answers with the lease"
out=$(as1 POST /api/v1/agents/fake1/claim?wait=0 '')
like "$out" '^204' "nothing to claim: 204 at once with wait=0"

out=$(api POST /api/v1/jobs '{"repo":"demo","good":"v1","bad":"main","workload":"bench"}')
like "$out" '^201 ' "job created"
out=$(as1 POST /api/v1/agents/fake1/claim?wait=5 '')
like "$out" '^200 .*"task": *1.*"attempt": *1' "first claim gets task 1, attempt 1"
like "$out" '"command": *\[ *"\./bench" *\]' "the task carries the workload's argv from the config"

# Heartbeats keep it; silence loses it.
sleep 1
out=$(as1 POST /api/v1/agents/fake1/heartbeat '{"task":1,"attempt":1}')
like "$out" '^200 .*"cancel": *false' "a heartbeat extends the lease"
sleep 4
is "$(q "SELECT state || ' ' || attempt FROM tasks WHERE id = 1")" "queued 1" \
	"after the lease expired the task is queued again"
like "$(q "SELECT message FROM events WHERE kind = 'retry'")" "lease expired" "... with an event that says why"
out=$(as1 POST /api/v1/agents/fake1/heartbeat '{"task":1,"attempt":1}')
like "$out" '"cancel": *true' "a heartbeat for a lost lease answers cancel"

out=$(as2 POST /api/v1/agents/register '{"name":"fake2","labels":["lab"]}')
out=$(as2 POST /api/v1/agents/fake2/claim?wait=5 '')
like "$out" '^200 .*"task": *1.*"attempt": *2' "another agent gets task 1, attempt 2"

res='{"agent":"fake1","attempt":1,"status":"ok","samples":[{"value":10},{"value":11},{"value":12}]}'
out=$(as1 POST /api/v1/tasks/1/result "$res")
like "$out" '^409 .*not yours' "the stale attempt's upload is refused (409)"
is "$(q "SELECT count(*) FROM samples")" 0 "... and stored nothing"

res='{"agent":"fake2","attempt":2,"status":"ok","samples":[{"value":10},{"value":11},{"value":0,"error":"no match"}]}'
out=$(as2 POST /api/v1/tasks/1/result "$res")
like "$out" '^200 .*"duplicate": *false' "the current attempt's upload is taken"
out=$(as2 POST /api/v1/tasks/1/result "$res")
like "$out" '^200 .*"duplicate": *true' "the same upload again is a duplicate"
is "$(q "SELECT count(*) FROM samples WHERE task_id = 1")" 3 "no sample doubled"
is "$(q "SELECT n || ' ' || failures FROM summaries WHERE idx = 0")" "2 1" \
	"the summary counts the failed run apart"
is "$(q "SELECT printf('%.4f', hmean) FROM summaries WHERE idx = 0")" \
	"$(awk 'BEGIN { printf "%.4f", 2 / (1/10 + 1/11) }')" "the summary's hmean excludes the failed run"

tap_plan "$tap_n"
tap_done
