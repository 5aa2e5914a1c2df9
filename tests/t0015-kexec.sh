#!/bin/sh
# t0015: boot kexec's logic through the real coordinator and agent, with
# kexec itself replaced by a stand-in: bin/kexec below records its argv,
# loads only what has a bzImage header (as kexec -l refuses what it
# cannot identify) and on -e kills the agent that ran it, as the real one
# replaces the running kernel. The "reboot" is the test starting the agent
# again with BISECT_KEXEC_PROC naming a folder that stands in for /proc
# (cmdline, osrelease, boot_id of the kernel "running" now). Debian's
# /boot/vmlinuz stands in for the built kernel. It proves: the journal is
# written before kexec -e and read back, the command line carries the
# pool's line and the marker, the resumed agent measures and uploads
# under the same lease and goes back to the good kernel; a kernel that
# never comes back, the wrong kernel, a late one and an image kexec cannot
# load are skipped with the reason (a kernel that did not come back is
# listed by --noreturn and booted again after --forget), and a built
# kernel without a journal takes no task; the systemd unit passes
# systemd-analyze verify. About
# 25 s here. The real kexec is tests/guest/kexec.sh.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/lab.sh"
. "$(dirname "$0")/lib/mkrepo.sh"

command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
command -v python3 > /dev/null || skip_all "python3 missing (make deps)"
KERNEL=$(ls /boot/vmlinuz-* 2> /dev/null | sort -V | tail -n 1)
[ -n "$KERNEL" ] || skip_all "no kernel in /boot (apt-get install linux-image-amd64)"
[ -r "$KERNEL" ] || skip_all "kernel $KERNEL is not readable by $(id -un)"
RELEASE=${KERNEL#/boot/vmlinuz-}

LAB=$TEST_DIR/lab
trap 'lab_stop; rm -rf "$TEST_DIR"' EXIT
mkdir -p "$LAB" "$TEST_DIR/bin"

# The stand-in for kexec(8).
export KX_LOG="$TEST_DIR/kexec.log" KX_LOADED="$TEST_DIR/kexec.loaded"
cat > "$TEST_DIR/bin/kexec" <<'EOS'
#!/bin/sh
echo "$*" >> "$KX_LOG"
case $1 in
-l)
	# KX_REFUSE: a kernel without CONFIG_KEXEC, as kexec-tools says it.
	[ "$2" != "${KX_REFUSE:-}" ] || { echo "kexec_load failed: Function not implemented" >&2; exit 255; }
	[ "$(dd if="$2" bs=1 skip=514 count=4 2> /dev/null)" = HdrS ] ||
		{ echo "Cannot determine the file type of $2" >&2; exit 1; }
	echo "$*" > "$KX_LOADED" ;;
-e)
	[ -s "$KX_LOADED" ] || { echo "Nothing has been loaded!" >&2; exit 1; }
	rm -f "$KX_LOADED"
	kill -9 "$PPID" ;;
esac
exit 0
EOS
printf '#!/bin/sh\necho "reboot $*" >> "$KX_LOG"\nkill -9 "$PPID"\n' > "$TEST_DIR/bin/reboot"
chmod +x "$TEST_DIR/bin/kexec" "$TEST_DIR/bin/reboot"
export PATH="$TEST_DIR/bin:$PATH"

# boot CMDLINE RELEASE BOOT_ID: what the stand-in /proc says is running now.
export BISECT_KEXEC_PROC="$TEST_DIR/proc"
boot() {
	mkdir -p "$BISECT_KEXEC_PROC/sys/kernel/random"
	printf '%s\n' "$1" > "$BISECT_KEXEC_PROC/cmdline"
	echo "$2" > "$BISECT_KEXEC_PROC/sys/kernel/osrelease"
	echo "$3" > "$BISECT_KEXEC_PROC/sys/kernel/random/boot_id"
}
GOOD_LINE="BOOT_IMAGE=/vmlinuz-good root=/dev/sda1 ro quiet"
boot "$GOOD_LINE" 6.1.0-good good-1

R=$TEST_DIR/repo
mkrepo_init "$R" > /dev/null
mkrepo_commit "$R" README "a kernel tree stand-in" "base" > /dev/null
mkrepo_tag "$R" v1
mkrepo_commit "$R" net/core/dev.c "/* a change */" "net: touch" > /dev/null
mkrepo_commit "$R" net/core/dev.c "/* another */" "net: touch again" > /dev/null

LAB_PORT=$(lab_free_port)
LAB_URL="http://127.0.0.1:$LAB_PORT"
cat > "$LAB/bisectd.yaml" <<EOC
listen: 127.0.0.1:$LAB_PORT
database: $LAB/bisectd.db
mirrors: $LAB/mirrors
lease_seconds: 60
default_runs: 2
repos:
  linux:
    url: $R
workloads:
  kx:
    type: command
    boot: kexec
    build: [install, -m, "0644", "$KERNEL", bzImage]
    kernel_image: bzImage
    command: [sh, -c, "echo throughput: 100"]
    pattern: 'throughput: ([0-9.]+)'
    kexec:
      append: "root=/dev/vda ro console=ttyS0"
      return_timeout: 300
      good_kernel: $KERNEL
      reboot: ["$TEST_DIR/bin/reboot", -f]
    build_timeout: 60
    run_timeout: 30
  slow:
    type: command
    boot: kexec
    build: [install, -m, "0644", "$KERNEL", bzImage]
    kernel_image: bzImage
    command: [sh, -c, "echo run >> $TEST_DIR/slow.runs; sleep 3; echo throughput: 100"]
    pattern: 'throughput: ([0-9.]+)'
    kexec:
      good_kernel: $KERNEL
  junk:
    type: command
    boot: kexec
    build: [sh, -c, "echo not a kernel > bzImage"]
    kernel_image: bzImage
    command: [sh, -c, "echo throughput: 100"]
    pattern: 'throughput: ([0-9.]+)'
pools:
  local:
    labels: [lab]
EOC
"$BUILD/bisectd" -n -f "$LAB/bisectd.yaml" > /dev/null 2>&1
ok $? "a kexec workload is a valid config"
sed 's/return_timeout: 300/return_timeout: 5/' "$LAB/bisectd.yaml" > "$LAB/bad.yaml"
like "$("$BUILD/bisectd" -n -f "$LAB/bad.yaml" 2>&1)" "bad.yaml:[0-9]+:[0-9]+: 'return_timeout' in the kexec settings of workload 'kx' must be an integer from 10" \
	"a return_timeout out of range is refused at load, with its place"
sed 's|good_kernel: /|good_kernel: |' "$LAB/bisectd.yaml" > "$LAB/bad.yaml"
like "$("$BUILD/bisectd" -n -f "$LAB/bad.yaml" 2>&1)" "'good_kernel' in the kexec settings of workload 'kx' must be an absolute path" \
	"a relative good_kernel is refused at load"

lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }
JOURNAL=$LAB/agents/kx/kexec/journal.json
jget() { python3 -c 'import json, sys; print(eval("j" + sys.argv[2], {"j": json.load(open(sys.argv[1]))}))' "$JOURNAL" "$1"; }

# agent: starts the agent kx; AGENT is its pid.
agent() {
	[ -f "$LAB/kx.log" ] && cat "$LAB/kx.log" >> "$LAB/kx.all.log"
	lab_start_agent kx 0
	AGENT=${LAB_PIDS##* }
}
# gone: waits until the agent ended (the stand-in's kexec -e killed it); 0 when it did.
gone() {
	for _ in $(seq 1 600); do kill -0 "$AGENT" 2> /dev/null || return 0; sleep 0.1; done
	return 1
}
# stop: stops the agent that is up (SIGTERM, as systemd would).
stop() {
	kill "$AGENT" 2> /dev/null
	gone
}

# --- 1. kexec, come back in the built kernel, measure, go back -------------
like "$(api POST /api/v1/jobs '{"repo":"linux","good":"v1","bad":"main","workload":"kx","runs":2}')" '^201 ' \
	"job 1 created"
agent
gone
ok $? "the agent ran kexec -e (the stand-in ended it as a reboot would)"
is "$(sed -n 's/^-e.*/-e/p' "$KX_LOG" | head -n 1)" "-e" "... after kexec -l"
[ -s "$JOURNAL" ]
ok $? "the task is in the journal"
T1=$(jget '["task"]')
is "$(jget '["state"]') $(jget '["attempt"]') $(jget '["release"]')" "kexec 1 $RELEASE" \
	"... in state kexec, attempt 1, with the release the image says"
ID=$(jget '["build_id"]')
LOADED=$(grep -- '^-l' "$KX_LOG" | tail -n 1)
like "$LOADED" "^-l /.*/bzImage --command-line=root=/dev/vda ro console=ttyS0 bisect.build=$ID\$" \
	"kexec -l got the built image, the pool's command line and the marker"
is "$(q "SELECT state FROM tasks WHERE id = $T1")" claimed "the task stays claimed while the machine reboots"

BUILT_LINE=${LOADED#*--command-line=}
boot "$BUILT_LINE" "$RELEASE" built-1
agent
gone
ok $? "after the task the agent went back to the good kernel (a second kexec -e)"
is "$(lab_wait_task "id = $T1")" "done -" "the resumed agent measured and delivered the task under its lease"
is "$(q "SELECT count(*) || ' ' || min(value) FROM samples WHERE task_id = $T1")" "2 100.0" \
	"... two samples from the runs in the built kernel"
like "$(grep -- '^-l' "$KX_LOG" | tail -n 1)" "^-l $KERNEL --command-line=$GOOD_LINE\$" \
	"the way back loads good_kernel with the good kernel's own command line"
[ ! -e "$JOURNAL" ]
ok $? "the journal is cleared"
like "$(cat "$LAB/kx.log")" "carrying it on" "the agent said it carried the journal's task on"

out=$(api POST /api/v1/jobs/1/cancel '')
like "$out" '^200 ' "job 1 cancelled (every commit is the same kernel)"

# job: a new job of workload $1; its first task ends its job when skipped (an end that is skipped fails the job).
job() {
	api POST /api/v1/jobs "{\"repo\":\"linux\",\"good\":\"v1\",\"bad\":\"main\",\"workload\":\"$1\",\"runs\":1}" |
		grep -q '^201 '
}

# --- 1b. the agent restarted in the built kernel goes on from the journal's runs -----
boot "$GOOD_LINE" 6.1.0-good good-1b
api POST /api/v1/jobs '{"repo":"linux","good":"v1","bad":"main","workload":"slow","runs":2}' > /dev/null
agent
gone
T=$(jget '["task"]')
like "$(jget '["cmdline"]')" "^root=/dev/sda1 ro quiet bisect.build=$ID\$" \
	"without kexec: append, the good kernel's line is reused, less BOOT_IMAGE="
boot "$(jget '["cmdline"]')" "$RELEASE" built-1b
agent
for _ in $(seq 1 300); do [ "$(jget '["samples"].__len__()' 2> /dev/null)" = 1 ] && break; sleep 0.1; done
kill -9 "$AGENT"
gone
is "$(jget '["state"]') $(jget '["samples"].__len__()')" "running 1" "the first run is in the journal when the agent is killed"
agent
is "$(lab_wait_task "id = $T")" "done -" "the agent restarted in the same boot finishes the task"
is "$(q "SELECT count(*) FROM samples WHERE task_id = $T")" 2 "... with both samples"
ok $([ "$(wc -l < "$TEST_DIR/slow.runs")" -le 3 ]; echo $?) "... without running the journalled run again ($(wc -l < "$TEST_DIR/slow.runs") runs started)"
gone
api POST /api/v1/jobs/2/cancel '' > /dev/null

# --- 2. the wrong kernel -------------------------------------------------------
boot "$GOOD_LINE" 6.1.0-good good-2
job kx
agent
gone
ok $? "job 3: kexec -e"
T=$(jget '["task"]')
boot "root=/dev/vda ro bisect.build=$ID" 6.1.0-other built-2
export KX_REFUSE="$KERNEL"
agent
like "$(lab_wait_task "id = $T")" "^skipped wrong kernel: uname -r says 6.1.0-other, the built image is $RELEASE" \
	"the wrong kernel (uname -r) is skipped"
gone
ok $? "... and the machine goes back to the good kernel"
is "$(tail -n 1 "$KX_LOG")" "reboot -f" "... through the reboot command when this kernel cannot kexec"
unset KX_REFUSE

# --- 3. back after the deadline ------------------------------------------------
boot "$GOOD_LINE" 6.1.0-good good-3
job kx
agent
gone
T=$(jget '["task"]')
python3 - "$JOURNAL" <<'EOP'
import json, sys
j = json.load(open(sys.argv[1]))
j["deadline"] = 1000000000
open(sys.argv[1], "w").write(json.dumps(j))
EOP
boot "$BUILT_LINE" "$RELEASE" built-3
agent
like "$(lab_wait_task "id = $T")" "^skipped the built kernel $ID came up [0-9]+ s after its return deadline" \
	"a kernel that came up after the deadline is skipped"
gone
ok $? "... and the machine goes back to the good kernel"

# --- 4. a build that is not a kernel ---------------------------------------------
boot "$GOOD_LINE" 6.1.0-good good-4
job junk
agent
T=$(q "SELECT min(id) FROM tasks WHERE job_id = 5")
like "$(lab_wait_task "id = $T")" "^skipped kexec -l refused the built kernel: kexec: exit 1: Cannot determine the file type" \
	"an image kexec -l cannot load is skipped with kexec's words"
# The agent goes on to the job's next task, which journals itself before
# its own kexec -l: the journal may be there again, but never for task T.
[ ! -e "$JOURNAL" ] || [ "$(jget '["task"]' 2> /dev/null)" != "$T" ]
ok $? "... and leaves no journal of it"
stop

# --- 5. a built kernel that never comes back --------------------------------
job kx
agent
gone
ok $? "job 6: kexec -e"
T=$(jget '["task"]')
# Hung, then reset: the firmware's default is the good kernel.
boot "$GOOD_LINE" 6.1.0-good good-5
agent
like "$(lab_wait_task "id = $T")" "^skipped the built kernel did not come back: the machine came back in 6.1.0-good without bisect.build=$ID" \
	"a kernel that does not come back is skipped with the reason"
[ -s "$LAB/agents/kx/kexec/noreturn/$ID" ]
ok $? "... and its build id is remembered"
loads=$(grep -c -- '^-l' "$KX_LOG")
job kx
T=$(q "SELECT min(id) FROM tasks WHERE job_id = 7")
like "$(lab_wait_task "id = $T")" "^skipped kernel $ID did not come back after an earlier kexec on this machine" \
	"a later task of the same kernel is skipped at once"
is "$(grep -c -- '^-l' "$KX_LOG")" "$loads" "... without a kexec"
like "$(lab_wait_task "id = $T")" "\(bisect-agent --forget $ID lets it be tried again\)\$" "... and says how to let it be tried again"
stop

# --- 5b. forgetting a kernel that did not come back (a power loss, not the kernel) ---
AG="$BUILD/bisect-agent -f $LAB/kx.yaml"
like "$($AG --noreturn)" "^$ID [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z the machine came back in 6\.1\.0-good without bisect\.build=$ID" \
	"--noreturn lists the kernel, when and why"
out=$($AG --forget nonsense 2>&1)
is "$? $(echo "$out" | head -n 1)" "2 bisect-agent: 'nonsense' is not a build id (16 lower-case hex digits, as --noreturn lists them) nor 'all'" \
	"--forget refuses what is not a build id, with exit 2"
is "$($AG --forget "$ID")" "forgot 1 kernel: its next task boots it again" "--forget ID forgets it"
[ ! -e "$LAB/agents/kx/kexec/noreturn/$ID" ]
ok $? "... its record is gone"
out=$($AG --forget "$ID" 2>&1)
is "$? $out" "1 bisect-agent: kernel $ID is not remembered as not come back on this machine (--noreturn lists those that are)" \
	"forgetting it again fails and says so"
is "$($AG --noreturn)" "" "... and --noreturn lists nothing"
loads=$(grep -c -- '^-l' "$KX_LOG")
job kx
agent
gone
ok $? "job 8: the forgotten kernel's next task kexecs into it again"
is "$(grep -c -- '^-l' "$KX_LOG")" "$((loads + 1))" "... after its kexec -l"
T=$(jget '["task"]')
boot "$GOOD_LINE" 6.1.0-good good-5b
agent
like "$(lab_wait_task "id = $T")" "^skipped the built kernel did not come back" "it did not come back this time either: skipped"
is "$($AG --forget all)" "forgot 1 kernel: its next task boots it again" "... remembered again, and --forget all forgets it"
stop

# --- 6. a built kernel without a journal takes no task -----------------------------
boot "root=/dev/vda bisect.build=0123456789abcdef" "$RELEASE" built-9
agent
gone
ok $? "the agent stops at once in a built kernel without a journal"
like "$(cat "$LAB/kx.log")" "runs a built kernel .* no task is journalled" "... and says why"

cat "$LAB/kx.log" >> "$LAB/kx.all.log"
out=$(grep -E "runtime error|Sanitizer" "$LAB/kx.all.log")
ok $([ -z "$out" ]; echo $?) "no sanitizer report from any of the agents${out:+: $out}"

# --- 7. the unit that starts the agent after each boot -----------------------------
UNIT=$TOP/etc/systemd/bisect-agent.service
if command -v systemd-analyze > /dev/null; then
	sed "s|^ExecStart=/usr/local/bin/bisect-agent|ExecStart=$BUILD/bisect-agent|" "$UNIT" > "$TEST_DIR/bisect-agent.service"
	out=$(systemd-analyze verify "$TEST_DIR/bisect-agent.service" 2>&1)
	ok $? "systemd-analyze verify accepts etc/systemd/bisect-agent.service${out:+: $out}"
else
	tap_n=$((tap_n + 1))
	echo "ok $tap_n # SKIP systemd-analyze missing (systemd): the unit file is not checked"
fi
like "$(cat "$UNIT")" "Restart=on-failure" "the unit restarts an agent that failed (a second boot's agent included)"

tap_plan "$tap_n"
tap_done
