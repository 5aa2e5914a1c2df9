#!/bin/sh
# ssh-bisect: a full bisection through boot ssh. bisectd and one agent on
# loopback; the agent's device under test is the QEMU guest of
# tests/lib/ssh-device.sh (Debian's kernel, busybox, dropbear, reached on
# a loopback port), powered by tests/lib/ssh-power.sh. The repo's history
# has 5 commits; each "builds" Debian's bzImage again plus a modules
# tarball (the per-commit payload) holding the benchmark the workload runs
# on the device and its work factor, which the culprit doubles. Every task
# copies, installs and boots its build on the device, runs there over ssh,
# and restores the good kernel: two TCG boots a task. Then a kernel that
# never comes back (it hangs before sshd) is skipped, not bad. Needs qemu,
# busybox, dropbear, openssh-client, sqlite3; about 20 minutes here (the
# bisection 12 min, 16 one-run tasks of two boots each; the hang 5 min).
. "$(dirname "$0")/../lib/tap.sh"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
. "$TOP/tests/lib/lab.sh"
. "$TOP/tests/lib/mkrepo.sh"
. "$TOP/tests/lib/ssh-device.sh"
LAB=$TEST_DIR/lab
trap 'lab_stop; sshdev_stop; rm -rf "$TEST_DIR"' EXIT

command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
why=$(sshdev_need)
[ -z "$why" ] || skip_all "$why"
sshdev_setup "$TEST_DIR/dev" > "$TEST_DIR/setup.log" 2>&1 || skip_all "device set-up failed: $(tail -n 1 "$TEST_DIR/setup.log")"
D=$SSHDEV

# The benchmark: shell loops times the commit's factor, each chunk timed
# against a reference chunk of the same loops run just before it, so that
# the host's load (TCG runs at the speed the other jobs leave it) cancels
# out: the metric is 1000 x reference time / work time, about 1000 on a
# good commit and 500 on the culprit.
R=$TEST_DIR/repo
mkrepo_init "$R" > /dev/null
cat > "$TEST_DIR/bench.sh" <<'EOB'
#!/bin/sh
n=3000
f=$(cat /lib/modules/factor)
loop() { i=0; while [ $i -lt $1 ]; do i=$((i + 1)); done; }
t=""
for k in 1 2 3 4; do
	a=$(cut -d' ' -f1 /proc/uptime)
	loop $n
	b=$(cut -d' ' -f1 /proc/uptime)
	loop $((n * f))
	c=$(cut -d' ' -f1 /proc/uptime)
	t="$t $a $b $c"
done
echo "$t" | awk '{ for (i = 1; i <= NF; i += 3) { r += $(i + 1) - $i; w += $(i + 2) - $(i + 1) }
	if (w < 0.01) w = 0.01; printf "ops: %.1f\n", 1000 * r / w }'
EOB
mkrepo_commit "$R" bench.sh "$(cat "$TEST_DIR/bench.sh")" "bench: the device's workload" > /dev/null
mkrepo_commit "$R" factor 1 "factor: one" > /dev/null
mkrepo_tag "$R" v1
mkrepo_commit "$R" README "notes" "docs: a note" > /dev/null
culprit=$(mkrepo_commit "$R" factor 2 "net: do everything twice")
mkrepo_commit "$R" NOTES "more notes" "docs: another note" > /dev/null
mkrepo_commit "$R" TODO "todo" "docs: a todo" > /dev/null
echo "# culprit: $culprit"

mkdir -p "$LAB"
LAB_PORT=$(lab_free_port)
LAB_URL="http://127.0.0.1:$LAB_PORT"
export BISECTD_URL="$LAB_URL"
ssh_settings() {	# ssh_settings [EXTRA]: the device's ssh mapping
	cat <<EOS
    ssh:
      host: 127.0.0.1
      port: $SSHDEV_PORT
      identity: $D/id_agent
      known_hosts: $D/known_hosts
      copy: [modules.tar]
      install: [/sbin/bisect-install, '{kernel}', '{cmdline}']
      power_cycle: [sh, $TOP/tests/lib/ssh-power.sh, $D, cycle]
      restore: [sh, $TOP/tests/lib/ssh-power.sh, $D, restore]
      console: [tail, -n, '0', -F, $D/console.log]
      boot_timeout: ${1:-240}
      power_tries: ${2:-1}
      good_kernel: $SSHDEV_RELEASE
EOS
}
cat > "$LAB/bisectd.yaml" <<EOC
listen: 127.0.0.1:$LAB_PORT
database: $LAB/bisectd.db
mirrors: $LAB/mirrors
lease_seconds: 600
default_runs: 3
repos:
  r:
    url: $R
workloads:
  dev:
    type: command
    boot: ssh
    build: [sh, -c, 'cp "$SSHDEV_KERNEL" bzImage && tar -cf modules.tar bench.sh factor']
    kernel_image: bzImage
    command: [sh, /lib/modules/bench.sh]
    pattern: 'ops: ([0-9.]+)'
    unit: ref/work
    build_timeout: 120
    run_timeout: 120
$(ssh_settings)
  hang:
    type: command
    boot: ssh
    build: [sh, -c, 'cp "$SSHDEV_KERNEL" bzImage && tar -cf modules.tar bench.sh factor']
    kernel_image: bzImage
    command: [sh, /lib/modules/bench.sh]
    pattern: 'ops: ([0-9.]+)'
    append: bisect_test_hang
$(ssh_settings 60 2)
pools:
  local:
    labels: [lab]
EOC
"$BUILD/bisectd" -n -f "$LAB/bisectd.yaml" > "$TEST_DIR/check.log" 2>&1
ok $? "the ssh workload is a valid config" || sed 's/^/# /' "$TEST_DIR/check.log"

sh "$TOP/tests/lib/ssh-power.sh" "$D" cycle
sshdev_wait 300
ok $? "the device is up on its good kernel"
lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }
lab_start_agent dut 0

start=$(date +%s)
timeout 5400 "$BUILD/bisectctl" submit --repo r --good v1 --bad main --workload dev --runs 3 \
	--budget-seconds 4800 --watch > "$LAB/watch.out" 2>&1
rc=$?
echo "# job ended '$(q "SELECT state FROM jobs WHERE id = 1")' after $(($(date +%s) - start)) s," \
	"$(q "SELECT count(*) FROM tasks WHERE job_id = 1") tasks"
q "SELECT 'task ' || t.id || ' ' || substr(c.sha, 1, 12) || ' ' || t.state || ' ' || coalesce(t.error, '') FROM tasks t
   JOIN job_commits c ON c.job_id = t.job_id AND c.idx = t.idx WHERE t.job_id = 1 ORDER BY t.id" 2> /dev/null |
	sed 's/^/# /'
is "$rc" 0 "the job finds a culprit"
is "$(q "SELECT c.sha FROM jobs j JOIN job_commits c ON c.job_id = j.id AND c.idx = j.culprit")" "$culprit" \
	"the culprit is the commit that doubled the work"
q "SELECT t.idx || ' ' || group_concat(s.value, ' ') FROM samples s JOIN tasks t ON t.id = s.task_id
   WHERE t.job_id = 1 GROUP BY t.idx" | sed 's/^/# commit /' 
is "$(q "SELECT count(*) FROM tasks WHERE job_id = 1 AND state IN ('skipped', 'failed')")" 0 \
	"every task booted its kernel and ran"
like "$(cat "$LAB/agents/dut/logs/task-1-console.log" 2> /dev/null)" 'bisect\.build=[0-9a-f]{16}' \
	"the agent kept the device's console of the first task"
cmdline=$(sshdev_ssh cat /proc/cmdline < /dev/null 2>&1)
like "$cmdline" 'bisect_test_good' "the device is back on its good kernel"
[ "$rc" -eq 0 ] || tail -n 40 "$LAB/dut.log" | sed 's/^/#   agent: /'

# A kernel that never comes back: its command line hangs it before sshd
# (60 s a boot, two power cycles). The job's variant reaches the device too.
out=$("$BUILD/bisectctl" submit --repo r --good v1 --bad main --workload hang --runs 1 \
	--append bisect_test_variant 2>&1)
ok $? "a job with a kernel command line variant is accepted for boot ssh"
state=$(lab_wait_task "job_id = 2" 900)
state=${state%% *}
is "$state" skipped "its first task is skipped, not bad"
like "$(q "SELECT error FROM tasks WHERE job_id = 2 ORDER BY id LIMIT 1")" \
	'^the kernel did not come back: no ssh on root@127\.0\.0\.1:[0-9]+ within' "because it did not come back"
like "$(q "SELECT log_tail FROM tasks WHERE job_id = 2 ORDER BY id LIMIT 1" 2> /dev/null)" \
	'hanging before sshd' "with the console's tail"
grep -Eq 'booting boot kernel with: .*bisect_test_hang bisect_test_variant bisect\.build=[0-9a-f]{16}' "$D/console.log"
ok $? "the device was booted with the workload's and the job's command line"
"$BUILD/bisectctl" cancel 2 > /dev/null 2>&1
for _ in $(seq 1 600); do
	[ "$(q "SELECT count(*) FROM tasks WHERE job_id = 2 AND state = 'claimed'")" = 0 ] && break
	sleep 1
done
sshdev_wait 300
like "$(sshdev_ssh cat /proc/cmdline < /dev/null 2>&1)" 'bisect_test_good' "the device was restored after it"

tap_plan "$tap_n"
tap_done
