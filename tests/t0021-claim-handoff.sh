#!/bin/sh
# t0021: a queued task goes straight to a parked claim that can take it.
# Three agents long-poll (curl plays them): two of pool "local", one of
# pool "other". A job of pool "local" queues its two ends: each is
# claimed in the step that queued it for one of the two parked "local"
# claims, which answer with it; the "other" agent is not woken and its
# long poll ends empty. Every reply says its service time apart from its
# wait (Server-Timing). A claim whose agent has gone (killed while it
# waited) is handed nothing: the next parked one is.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/lab.sh"
. "$(dirname "$0")/lib/mkrepo.sh"

command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
LAB=$TEST_DIR/lab
trap 'lab_stop; rm -rf "$TEST_DIR"' EXIT

R=$TEST_DIR/repo
mkrepo_linear "$R" 4

lab_config "$R" "  other:
    labels: [elsewhere]"
lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }

for a in fake1 fake2 fake3; do
	eval "T_$a=\$(lab_agent_token $a)"
done
as() { _t=$(eval echo "\$T_$1"); shift; API_TOKEN=$_t api "$@"; }
as fake1 POST /api/v1/agents/register '{"name":"fake1","labels":["lab"]}' > /dev/null
as fake2 POST /api/v1/agents/register '{"name":"fake2","labels":["elsewhere"]}' > /dev/null
as fake3 POST /api/v1/agents/register '{"name":"fake3","labels":["lab"]}' > /dev/null

# Parked in this order; each has tried once (last_claim set) before the next.
PIDS=""
for a in fake2 fake1 fake3; do
	as $a POST "/api/v1/agents/$a/claim?wait=8" '' > "$TEST_DIR/$a.out" &
	PIDS="$PIDS $!"
	for _ in $(seq 1 100); do
		[ "$(q "SELECT last_claim > 0 FROM agents WHERE name = '$a'")" = 1 ] && break
		sleep 0.1
	done
done
sleep 0.5

out=$(api POST /api/v1/jobs '{"repo":"demo","good":"v1","bad":"main","workload":"bench"}')
like "$out" '^201 ' "a job of pool local is created"
for p in $PIDS; do wait "$p"; done
o1=$(cat "$TEST_DIR/fake1.out")
o3=$(cat "$TEST_DIR/fake3.out")
o2=$(cat "$TEST_DIR/fake2.out")
like "$o1" '^200 .*"task": *[12],' "the first parked local agent's claim answers with a task"
like "$o3" '^200 .*"task": *[12],' "so does the second's"
t1=$(echo "$o1" | sed 's/.*"task": *\([0-9]*\).*/\1/')
t3=$(echo "$o3" | sed 's/.*"task": *\([0-9]*\).*/\1/')
[ "$t1" != "$t3" ]
ok $? "... each its own end"
like "$o2" '^204' "the agent of pool other was not handed either: its long poll ended empty"
is "$(q "SELECT a.name FROM tasks t JOIN agents a ON a.id = t.agent_id ORDER BY a.name" | tr '\n' ' ')" \
	"fake1 fake3 " "the store holds the ends claimed by fake1 and fake3"
is "$(q "SELECT count(*) FROM tasks WHERE state = 'claimed' AND attempt = 1")" 2 "both claimed, attempt 1"
is "$(q "SELECT count(*) FROM events WHERE kind = 'claim' AND message LIKE '%to a waiting agent'")" 2 \
	"the events say each was handed to a waiting agent"

# The handed tasks are theirs: heartbeats hold them.
out=$(as fake1 POST /api/v1/agents/fake1/heartbeat "{\"task\":$t1,\"attempt\":1}")
like "$out" '^200 .*"cancel": *false' "fake1 holds the task it was handed"

# A claim whose agent went away: fake4 parks first and is killed; fake5,
# parked after it, is handed a task of the next job, and fake4 none (its
# task would have waited out a lease).
for a in fake4 fake5; do
	eval "T_$a=\$(lab_agent_token $a)"
	as $a POST /api/v1/agents/register "{\"name\":\"$a\",\"labels\":[\"lab\"]}" > /dev/null
done
as fake4 POST "/api/v1/agents/fake4/claim?wait=8" '' > /dev/null 2>&1 &
for _ in $(seq 1 100); do
	[ "$(q "SELECT last_claim > 0 FROM agents WHERE name = 'fake4'")" = 1 ] && break
	sleep 0.1
done
pkill -9 -f 'agents/fake4/claim'
as fake5 POST "/api/v1/agents/fake5/claim?wait=8" '' > "$TEST_DIR/fake5.out" &
p5=$!
for _ in $(seq 1 100); do
	[ "$(q "SELECT last_claim > 0 FROM agents WHERE name = 'fake5'")" = 1 ] && break
	sleep 0.1
done
sleep 0.5
out=$(api POST /api/v1/jobs '{"repo":"demo","good":"v1","bad":"main","workload":"bench"}')
like "$out" '^201 ' "a second job of pool local is created"
wait "$p5"
like "$(cat "$TEST_DIR/fake5.out")" '^200 .*"task": *[34],' "the live agent parked after the gone one is handed a task"
is "$(q "SELECT count(*) FROM tasks t JOIN agents a ON a.id = t.agent_id WHERE a.name = 'fake4'")" 0 \
	"the agent that had gone holds none"

# Service time apart from the wait.
hdr=$(curl -sS -i -H "Authorization: Bearer $T_fake2" -H 'Content-Type: application/json' -X POST \
	"$LAB_URL/api/v1/agents/fake2/claim?wait=1")
like "$hdr" 'Server-Timing: wait;dur=[0-9]+, svc;dur=[0-9.]+' "a long poll's reply says its wait and its service"
hdr=$(curl -sS -i -H "Authorization: Bearer $T_fake2" "$LAB_URL/api/v1/agents")
like "$hdr" 'Server-Timing: svc;dur=[0-9.]+' "any other reply says its service"
tap_plan "$tap_n"
tap_done
