#!/bin/sh
# t0101: the qemu boot method end to end, through the real coordinator and
# one real agent. The repo's build recipe stands in for a kernel build: it
# installs Debian's distribution kernel (/boot/vmlinuz-*) as
# arch/x86/boot/bzImage, so every commit "builds" the same kernel. The
# agent then boots it under QEMU (TCG when KVM does not work) with an
# initramfs of busybox and iperf3, runs iperf3 UDP in the guest twice and
# uploads the parsed KBytes/s. Both ends are the same kernel, so the job
# could only end not-reproduced, after up to six batches at each end (a
# guest boot each, minutes under TCG): the test checks the first task and
# then cancels the job. Installs nothing: what is missing is a SKIP with
# the reason.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/lab.sh"
. "$(dirname "$0")/lib/mkrepo.sh"

command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
command -v qemu-system-x86_64 > /dev/null ||
	skip_all "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
command -v busybox > /dev/null || skip_all "busybox missing (apt-get install busybox-static)"
command -v iperf3 > /dev/null || skip_all "iperf3 missing (apt-get install iperf3)"
command -v install > /dev/null || skip_all "install missing (coreutils)"
KERNEL=$(ls /boot/vmlinuz-* 2> /dev/null | sort -V | tail -n 1)
[ -n "$KERNEL" ] || skip_all "no kernel in /boot (apt-get install linux-image-amd64)"
[ -r "$KERNEL" ] || skip_all "kernel $KERNEL is not readable by $(id -un)"

LAB=$TEST_DIR/lab
trap 'lab_stop; rm -rf "$TEST_DIR"' EXIT
echo "# kernel standing in for a built one: $KERNEL"

R=$TEST_DIR/repo
mkrepo_init "$R" > /dev/null
mkrepo_commit "$R" README "a kernel tree stand-in" "base" > /dev/null
mkrepo_tag "$R" v1
mkrepo_commit "$R" net/ipv4/udp.c "/* a change that does not matter */" "udp: touch" > /dev/null

mkdir -p "$LAB"
LAB_PORT=$(lab_free_port)
LAB_URL="http://127.0.0.1:$LAB_PORT"
cat > "$LAB/bisectd.yaml" <<EOC
listen: 127.0.0.1:$LAB_PORT
database: $LAB/bisectd.db
mirrors: $LAB/mirrors
lease_seconds: 30
default_runs: 2
repos:
  linux:
    url: $R
workloads:
  udp:
    type: iperf3
    boot: qemu
    # The coordinator's own argv: the distribution kernel stands in for a build.
    build: [install, -D, -m, "0644", "$KERNEL", arch/x86/boot/bzImage]
    iperf3: [--udp, "-4", -b, "0", -l, "8920", -t, "2", -P, "2"]
    metric: KBytes/s
    qemu:
      memory_mb: 512
      cpus: 2
      boot_timeout: 120
    build_timeout: 60
    run_timeout: 60
pools:
  local:
    labels: [lab]
EOC
"$BUILD/bisectd" -n -f "$LAB/bisectd.yaml" > /dev/null 2>&1
ok $? "the iperf3/qemu workload is a valid config"

lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }
lab_start_agent qa 0

start=$(date +%s)
out=$(api POST /api/v1/jobs '{"repo":"linux","good":"v1","bad":"main","workload":"udp","runs":2}')
like "$out" '^201 ' "job created"

state=
for _ in $(seq 1 300); do
	state=$(q "SELECT state FROM tasks WHERE job_id = 1 ORDER BY id LIMIT 1")
	case $state in queued|claimed) sleep 1 ;; *) break ;; esac
done
took=$(($(date +%s) - start))
echo "# the first task ended '$state' after ${took} s"

is "$(q "SELECT state || ' ' || coalesce(error, '-') FROM tasks WHERE job_id = 1 ORDER BY id LIMIT 1")" "done -" \
	"the first task (the good end) comes back ok"
is "$(q "SELECT count(*) FROM samples WHERE task_id = (SELECT min(id) FROM tasks WHERE job_id = 1)")" 2 \
	"... with 2 samples"
is "$(q "SELECT count(*) FROM samples WHERE task_id = (SELECT min(id) FROM tasks WHERE job_id = 1)
	AND value > 0 AND unit = 'KBytes/s'")" 2 "... both positive KBytes/s from the guest's iperf3"
q "SELECT 'sample ' || value || ' ' || unit FROM samples ORDER BY id" | sed 's/^/# /'
like "$(cat "$LAB/agents/qa/logs/task-1-console.log" 2> /dev/null)" 'BISECT-DONE' \
	"the agent kept the guest's console, which ran to the end"
if [ "$state" != done ]; then
	sed 's/^/#   agent: /' "$LAB/qa.log" | tail -n 30
fi
out=$(api POST /api/v1/jobs/1/cancel '')
like "$out" '^200 .*"state": *"cancelled"' "the job is cancelled (both ends are the same kernel)"

tap_plan "$tap_n"
tap_done
