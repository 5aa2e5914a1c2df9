#!/bin/sh
# t0027: a job's end stops the task an agent is running for it. The
# cancelled job's claimed task is cancelled with it, the agent's next
# heartbeat hears so, and the build in hand (here 300 s of sleep) is
# stopped at once, not run to its end for an upload the coordinator
# would refuse; the agent is free for the resumed job's next task.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/lab.sh"
. "$(dirname "$0")/lib/mkrepo.sh"

command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
LAB=$TEST_DIR/lab
trap 'lab_stop; rm -rf "$TEST_DIR"' EXIT

R=$TEST_DIR/repo
mkrepo_linear "$R" 5

# A build that takes 300 s (it writes its pid first, so that the test can tell it stopped).
LAB_WORKLOADS="  slowbuild:
    type: command
    boot: none
    build: [sh, -c, 'echo \$\$ > $TEST_DIR/build.pid; exec sleep 300']
    command: [echo, 'throughput: 1']
    pattern: 'throughput: ([0-9.]+)'
    unit: ops/s
    build_timeout: 600
    run_timeout: 30" lab_config "$R"
lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }
lab_start_agent lab1 0

out=$(api POST /api/v1/jobs '{"repo":"demo","good":"v1","bad":"main","workload":"slowbuild","runs":1}')
like "$out" '^201 ' "a job whose builds take 300 s"
for _ in $(seq 1 300); do [ -s "$TEST_DIR/build.pid" ] && break; sleep 0.1; done
T=$(q "SELECT id FROM tasks WHERE job_id = 1 AND state = 'claimed' LIMIT 1")
like "$T" '^[0-9]+$' "lab1 claimed a task and is building it"
pid=$(cat "$TEST_DIR/build.pid")
kill -0 "$pid" 2> /dev/null
ok $? "... its build is running (pid $pid)"

t0=$(date +%s)
"$BUILD/bisectctl" cancel 1 > /dev/null
is "$(q "SELECT state FROM tasks WHERE id = $T")" cancelled "the cancel cancels the claimed task too"
for _ in $(seq 1 600); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
! kill -0 "$pid" 2> /dev/null
ok $? "the agent stopped the build"
took=$(( $(date +%s) - t0 ))
ok $(( took < 120 ? 0 : 1 )) "... well before its 300 s ($took s after the cancel; heartbeats every 2 s)"
for _ in $(seq 1 100); do grep -q "task $T: cancelled, not uploaded\|task $T: abandoned, not uploaded" "$LAB/lab1.log" && break; sleep 0.1; done
like "$(grep "task $T:" "$LAB/lab1.log")" "the coordinator cancelled it" "the agent's log says the coordinator cancelled it"
like "$(grep "task $T:" "$LAB/lab1.log")" "(cancelled|abandoned), not uploaded" "... and that it uploaded nothing"
is "$(q "SELECT count(*) FROM samples WHERE job_id = 1")" 0 "no sample came of it"

# Resumed, the job's next task goes to the same agent, which is free.
rm -f "$TEST_DIR/build.pid"
out=$("$BUILD/bisectctl" resume 1 2>&1)
like "$out" "^job 1 resumed" "bisectctl resume runs the job on"
for _ in $(seq 1 300); do [ -s "$TEST_DIR/build.pid" ] && break; sleep 0.1; done
like "$(q "SELECT count(*) FROM tasks WHERE job_id = 1 AND state = 'claimed' AND id != $T")" '^[1-9]' \
	"lab1 claims the resumed job's next task"
"$BUILD/bisectctl" cancel 1 > /dev/null

tap_plan "$tap_n"
tap_done
