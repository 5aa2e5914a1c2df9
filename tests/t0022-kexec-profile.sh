#!/bin/sh
# t0022: perf profiles at the culprit through boot kexec. The machine is a
# stand-in, as in t0015: kexec(8) is a script whose `kexec -e` "reboots"
# into what `kexec -l` loaded (the stand-in /proc, BISECT_KEXEC_PROC, then
# says that kernel's command line, release and a new boot id) and ends the
# agent, as a reboot would; the test restarts the agent after every boot,
# as etc/systemd/bisect-agent.service does. A whole job runs so on the
# profile repository (tests/lib/profrepo.sh, a benchmark whose culprit
# moves its work from fast_mix() to slow_mix()): every task is built in the
# good kernel, kexec'd into, carried on from the journal in the built one
# and ended by a kexec back. The job ends done with the culprit, and its
# two profile tasks record their runs with the real perf in the "built
# kernel" (perf record -g -e cpu-clock: a software event, as in a guest),
# so the report's diff shows slow_mix coming and fast_mix going. The
# agent is killed once between the culprit's run and its perf report (a
# perf stand-in in front of the real one): restarted in the same boot, it
# carries the task on again and reports the perf.data it recorded, the
# run not done twice.
# Needs a kernel in /boot (as t0015), perf that can record here, cc,
# sqlite3 and python3; else a TAP skip with the reason. About 30-60 s.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/lab.sh"
. "$(dirname "$0")/lib/mkrepo.sh"
. "$(dirname "$0")/lib/profrepo.sh"

command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
command -v python3 > /dev/null || skip_all "python3 missing (make deps)"
command -v cc > /dev/null || skip_all "no C compiler for the test's project"
KERNEL=$(ls /boot/vmlinuz-* 2> /dev/null | sort -V | tail -n 1)
[ -n "$KERNEL" ] || skip_all "no kernel in /boot (apt-get install linux-image-amd64)"
[ -r "$KERNEL" ] || skip_all "kernel $KERNEL is not readable by $(id -un)"
RELEASE=${KERNEL#/boot/vmlinuz-}
profrepo_need_perf

tap_plan 16
LAB=$TEST_DIR/lab
trap 'lab_stop; rm -rf "$TEST_DIR"' EXIT
mkdir -p "$LAB" "$TEST_DIR/bin"

# The machine: kexec -l keeps what it loads, kexec -e and reboot boot it.
export KX_LOG="$TEST_DIR/kexec.log" KX_LOADED="$TEST_DIR/kexec.loaded" RELEASE
export BISECT_KEXEC_PROC="$TEST_DIR/proc" GOOD_LINE="BOOT_IMAGE=/vmlinuz-good root=/dev/sda1 ro quiet"
cat > "$TEST_DIR/bin/boot" <<'EOS'
#!/bin/sh
# boot CMDLINE: the stand-in /proc of the kernel that now runs, with a new boot id.
mkdir -p "$BISECT_KEXEC_PROC/sys/kernel/random"
printf '%s\n' "$1" > "$BISECT_KEXEC_PROC/cmdline"
case $1 in *bisect.build=*) echo "$RELEASE" ;; *) echo 6.1.0-good ;; esac > "$BISECT_KEXEC_PROC/sys/kernel/osrelease"
echo "boot-$(date +%s%N)" > "$BISECT_KEXEC_PROC/sys/kernel/random/boot_id"
echo "boot $1" >> "$KX_LOG"
EOS
cat > "$TEST_DIR/bin/kexec" <<'EOS'
#!/bin/sh
echo "$*" >> "$KX_LOG"
case $1 in
-l)
	[ "$(dd if="$2" bs=1 skip=514 count=4 2> /dev/null)" = HdrS ] ||
		{ echo "Cannot determine the file type of $2" >&2; exit 1; }
	echo "$*" > "$KX_LOADED" ;;
-e)
	[ -s "$KX_LOADED" ] || { echo "Nothing has been loaded!" >&2; exit 1; }
	line=$(sed -n 's/.*--command-line=//p' "$KX_LOADED")
	rm -f "$KX_LOADED"
	"$(dirname "$0")/boot" "$line"
	kill -9 "$PPID" ;;
esac
exit 0
EOS
printf '#!/bin/sh\necho "reboot $*" >> "$KX_LOG"\n"$(dirname "$0")/boot" "$GOOD_LINE"\nkill -9 "$PPID"\n' \
	> "$TEST_DIR/bin/reboot"
chmod +x "$TEST_DIR/bin/boot" "$TEST_DIR/bin/kexec" "$TEST_DIR/bin/reboot"
# perf: the real one, logged, except that the first `perf report` of the
# culprit's profile ends the agent instead (a crash between the run and its
# report, in the built kernel): the agent restarted in the same boot must
# report the perf.data of the run it recorded, not run it again.
export REAL_PERF="$(command -v perf)" KX_PERFLOG="$TEST_DIR/perf.log" KX_CRASHED="$TEST_DIR/crashed"
cat > "$TEST_DIR/bin/perf" <<'EOS'
#!/bin/sh
case "$1 $*" in
report*-culprit.perf.data*) echo "report culprit" >> "$KX_PERFLOG"
	[ -e "$KX_CRASHED" ] || { : > "$KX_CRASHED"; kill -9 "$PPID"; exit 1; } ;;
record*-culprit.perf.data*) echo "record culprit" >> "$KX_PERFLOG" ;;
esac
exec "$REAL_PERF" "$@"
EOS
chmod +x "$TEST_DIR/bin/perf"
export PATH="$TEST_DIR/bin:$PATH"
boot "$GOOD_LINE"

R=$LAB/prof.git
culprit=$(profrepo_make "$R")

LAB_PORT=$(lab_free_port)
LAB_URL="http://127.0.0.1:$LAB_PORT"
export BISECTD_URL="$LAB_URL"
cat > "$LAB/bisectd.yaml" <<EOC
listen: 127.0.0.1:$LAB_PORT
database: $LAB/bisectd.db
mirrors: $LAB/mirrors
lease_seconds: 60
default_runs: 3
repos:
  demo:
    url: $R
workloads:
  bench:
    type: command
    boot: kexec
    build: [sh, -c, "make -s bench && install -m 0644 $KERNEL bzImage"]
    kernel_image: bzImage
    command: [./bench]
    pattern: 'throughput: ([0-9.]+)'
    unit: ops/s
    profile: true
    kexec:
      append: "root=/dev/vda ro"
      return_timeout: 300
      good_kernel: $KERNEL
      reboot: ["$TEST_DIR/bin/reboot", -f]
    build_timeout: 60
    run_timeout: 30
pools:
  local:
    labels: [lab]
EOC
out=$("$BUILD/bisectd" -n -f "$LAB/bisectd.yaml" 2>&1)
rc=$?
[ "$rc" -eq 0 ] && out=""
ok "$rc" "a kexec workload with profile: true is a valid config${out:+ (bisectd -n: $out)}"
lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }

"$BUILD/bisectctl" submit --repo demo --good v1.0 --bad main --workload bench --pool local \
	--budget-seconds 240 > "$LAB/submit.out" 2>&1
ok $? "job 1 submitted" || sed 's/^/#   /' "$LAB/submit.out"

# The machine runs until the job ends: an agent per boot, restarted when a kexec or reboot ended it.
live() { case $(q "SELECT state FROM jobs WHERE id = 1") in queued|running) return 0 ;; esac; return 1; }
boots=0
deadline=$(( $(date +%s) + 300 ))
while live && [ "$(date +%s)" -lt "$deadline" ]; do
	[ -f "$LAB/kx.log" ] && cat "$LAB/kx.log" >> "$LAB/kx.all.log"
	lab_start_agent kx 0
	AGENT=${LAB_PIDS##* }
	boots=$((boots + 1))
	while kill -0 "$AGENT" 2> /dev/null && live; do
		sleep 0.2
	done
done
cat "$LAB/kx.log" >> "$LAB/kx.all.log"
echo "# $boots agent starts; the job is $(q "SELECT state FROM jobs WHERE id = 1")"

is "$(q "SELECT state FROM jobs WHERE id = 1")" done "the job ends done"
is "$(q "SELECT c.sha FROM jobs j JOIN job_commits c ON c.job_id = j.id AND c.idx = j.culprit WHERE j.id = 1")" \
	"$culprit" "... with the culprit"
is "$(q "SELECT group_concat(role || ':' || state, ' ') FROM (SELECT * FROM profiles WHERE job_id = 1 ORDER BY id)")" \
	"parent:ok culprit:ok" "both profiles are in"
is "$(q "SELECT count(*) FROM samples s JOIN profiles p ON p.task_id = s.task_id")" 0 \
	"the runs under perf are not samples of the bisection"
like "$(q "SELECT report FROM profiles WHERE job_id = 1 AND role = 'culprit'")" "# Samples: .* of event 'cpu-clock'" \
	"the stored profile is perf report's own text"
# Each profile task went through the kexec: built, kexec'd, carried on in the built kernel.
n=0
for t in $(q "SELECT task_id FROM profiles WHERE job_id = 1"); do
	grep -q "the journal holds task $t attempt .*carrying it on" "$LAB/kx.all.log" && n=$((n + 1))
done
is "$n" 2 "both profile tasks were carried on from the journal after the kexec"
ok "$([ -e "$KX_CRASHED" ]; echo $?)" "the agent was killed before its culprit's perf report"
T=$(q "SELECT task_id FROM profiles WHERE job_id = 1 AND role = 'culprit'")
is "$(grep -c "the journal holds task $T attempt .*carrying it on" "$LAB/kx.all.log")" 2 \
	"... and the agent of the same boot carried the task on again"
is "$(grep -c '^record culprit' "$KX_PERFLOG") $(grep -c '^report culprit' "$KX_PERFLOG")" "1 2" \
	"... reporting the perf.data of the run recorded before the crash, the run not done again"
ls "$LAB"/agents/kx/logs/task-*-culprit.perf.data > /dev/null 2>&1
ok $? "the agent keeps perf.data beside its logs"
is "$(grep -c '^-e' "$KX_LOG")" "$(( 2 * $(q "SELECT count(*) FROM tasks WHERE job_id = 1 AND state = 'done'") ))" \
	"two kexec -e a task: into the built kernel and back"

report=$("$BUILD/bisectctl" report 1)
echo "$report" > "$LAB/report.txt"
like "$report" "\[\.\] slow_mix +- -> +[0-9]+\.[0-9]+%" "the report's diff: slow_mix appears in the culprit's profile"
like "$report" "\[\.\] fast_mix +[0-9]+\.[0-9]+% ->  +-" "... and fast_mix is gone from it"
out=$(grep -E "runtime error|Sanitizer" "$LAB/kx.all.log")
ok $([ -z "$out" ]; echo $?) "no sanitizer report from any of the agents${out:+: $out}"

tap_done
