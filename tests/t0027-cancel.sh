#!/bin/sh
# t0027: a job's end stops the task an agent is running for it. The
# cancelled job's claimed task is cancelled with it, the agent's next
# heartbeat hears so, and the build in hand (here 300 s of sleep) is
# stopped at once, not run to its end for an upload the coordinator
# would refuse; the agent is free for the resumed job's next task. A
# run in hand (300 s of sleep again) is stopped the same way. Last, boot
# ssh's wait for a device that does not answer after its power cycle
# ends at the cancel, while its restore still runs: one task through
# tests/lib/boot-task.c, with a stand-in for ssh (refused connections
# for the device's answer, success for the copy and the install).
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
    run_timeout: 30
  slowrun:
    type: command
    boot: none
    build: [true]
    command: [sh, -c, 'echo \$\$ > $TEST_DIR/run.pid; exec sleep 300']
    pattern: 'throughput: ([0-9.]+)'
    unit: ops/s
    run_timeout: 600" lab_config "$R"
lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }
lab_start_agent lab1 0

# slow_job ID WORKLOAD PIDFILE WHAT: job ID submitted, its task claimed, WHAT running: T and pid set.
slow_job() {
	rm -f "$3"
	out=$(api POST /api/v1/jobs "{\"repo\":\"demo\",\"good\":\"v1\",\"bad\":\"main\",\"workload\":\"$2\",\"runs\":1}")
	like "$out" '^201 ' "a job whose ${4}s take 300 s"
	for _ in $(seq 1 600); do [ -s "$3" ] && break; sleep 0.1; done
	T=$(q "SELECT id FROM tasks WHERE job_id = $1 AND state = 'claimed' LIMIT 1")
	like "$T" '^[0-9]+$' "lab1 claimed a task of it"
	pid=$(cat "$3")
	kill -0 "$pid" 2> /dev/null
	ok $? "... and its $4 is going (pid $pid)"
}

# cancel_stops ID WHAT: bisectctl cancel ID stops the agent's WHAT (pid) at once, nothing uploaded.
cancel_stops() {
	t0=$(date +%s)
	"$BUILD/bisectctl" cancel "$1" > /dev/null
	is "$(q "SELECT state FROM tasks WHERE id = $T")" cancelled "the cancel cancels the claimed task too"
	for _ in $(seq 1 600); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
	! kill -0 "$pid" 2> /dev/null
	ok $? "the agent stopped the $2"
	took=$(( $(date +%s) - t0 ))
	ok $(( took < 120 ? 0 : 1 )) "... well before its 300 s ($took s after the cancel; heartbeats every 2 s)"
	for _ in $(seq 1 100); do grep -q "task $T: \(cancelled\|abandoned\), not uploaded" "$LAB/lab1.log" && break; sleep 0.1; done
	like "$(grep "task $T:" "$LAB/lab1.log")" "the coordinator cancelled it" "the agent's log says the coordinator cancelled it"
	like "$(grep "task $T:" "$LAB/lab1.log")" "(cancelled|abandoned), not uploaded" "... and that it uploaded nothing"
	is "$(q "SELECT count(*) FROM samples WHERE job_id = $1")" 0 "no sample came of it"
}

slow_job 1 slowbuild "$TEST_DIR/build.pid" build
cancel_stops 1 build

# Resumed, the job's next task goes to the same agent, which is free.
rm -f "$TEST_DIR/build.pid"
out=$("$BUILD/bisectctl" resume 1 2>&1)
like "$out" "^job 1 resumed" "bisectctl resume runs the job on"
for _ in $(seq 1 300); do [ -s "$TEST_DIR/build.pid" ] && break; sleep 0.1; done
like "$(q "SELECT count(*) FROM tasks WHERE job_id = 1 AND state = 'claimed' AND id != $T")" '^[1-9]' \
	"lab1 claims the resumed job's next task"
"$BUILD/bisectctl" cancel 1 > /dev/null

# A run in hand: the workload's command runs 300 s; the cancel stops it too.
slow_job 2 slowrun "$TEST_DIR/run.pid" run
cancel_stops 2 run
like "$(grep "task $T:" "$LAB/lab1.log")" "run 1/1 failed: .*cancelled after" "the agent's log says the run was cancelled"

# Boot ssh: the device is power-cycled and does not answer (ssh refused)
# for its 5 s, 2 power cycles: cancelled after 1 s, the wait ends there.
S=$TEST_DIR/ssh
mkdir -p "$S/bin" "$S/build"
cat > "$S/bin/ssh" <<'EOS'
#!/bin/sh
# Stand-in for ssh: the device refuses "true" (its answer), takes any other command.
for last; do :; done
[ "$last" = true ] && { echo "ssh: connect to host 127.0.0.1 port 2222: Connection refused" >&2; exit 255; }
cat > /dev/null
EOS
chmod +x "$S/bin/ssh"
# A bzImage as far as the agent reads one: the setup header's HdrS and kernel_version.
head -c 1024 /dev/zero > "$S/build/bzImage"
printf 'HdrS' | dd of="$S/build/bzImage" bs=1 seek=514 conv=notrunc 2> /dev/null
printf '\000\001' | dd of="$S/build/bzImage" bs=1 seek=526 conv=notrunc 2> /dev/null
printf '6.1.0-standin (t0027)' | dd of="$S/build/bzImage" bs=1 seek=768 conv=notrunc 2> /dev/null
: > "$S/id" && : > "$S/known_hosts"
cat > "$S/bisectd.yaml" <<EOF
listen: 127.0.0.1:1
database: $S/db
repos:
  r:
    url: /nonexistent
workloads:
  device:
    type: command
    boot: ssh
    build: [true]
    kernel_image: bzImage
    command: [echo, 'throughput: 1']
    pattern: 'throughput: ([0-9]+)'
    ssh:
      host: 127.0.0.1
      port: 2222
      identity: $S/id
      known_hosts: $S/known_hosts
      dir: /tmp/bisect
      install: [/sbin/bisect-install, '{kernel}', '{cmdline}']
      power_cycle: [sh, -c, 'echo cycle >> $S/cycles']
      restore: [true]
      boot_timeout: 5
      power_tries: 2
pools:
  p:
    labels: []
EOF
out=$(PATH=$S/bin:$PATH BOOT_TASK_CANCEL_AFTER=1000 "$BUILD/tests/boot-task" "$S/bisectd.yaml" device \
	"$S/build" "$S/work" 1 2>&1)
printf '%s\n' "$out" | sed 's/^/# /'
like "$out" '^status=failed$' "boot ssh cancelled while the device does not answer: failed, nothing said of the commit"
like "$out" '^error=the task was cancelled while waiting for root@127\.0\.0\.1:2222' "... because of the cancel"
is "$(wc -l < "$S/cycles" | tr -d ' ')" 1 "one power cycle of the two it would make"
like "$out" 'and then the device did not come back on its good kernel within 5 s' \
	"the restore was not cancelled: it waited its 5 s for the device"

tap_plan "$tap_n"
tap_done
