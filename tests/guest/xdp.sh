#!/bin/sh
# guest/xdp: the xdp workload for real, through the coordinator, one agent
# and the qemu boot method. The repo's build recipe stands in for a kernel
# build: it installs Debian's kernel (/boot/vmlinuz-6.1.0-57-amd64 or
# $XDP_TEST_KERNEL) as arch/x86/boot/bzImage. The agent boots it under
# QEMU (TCG when KVM does not work) with an initramfs of busybox,
# xdp-bench, xdp-loader, iproute2's ip, libxdp's xdp-dispatcher.o and the
# veth and pktgen modules from /lib/modules/RELEASE; in the guest pktgen
# sends on a veth pair and xdp-bench measures, and the agent uploads the
# parsed Mpps. Two jobs: the seed's redirect (2 runs, -s, metric
# redir_pps) and drop (1 run). Both ends are the same kernel, so each job
# is cancelled after its first task.
#
# Needs: qemu-system-x86_64, busybox-static, xdp-tools (xdp-bench,
# xdp-loader, libxdp1), iproute2, sqlite3, and the kernel with its modules
# (linux-image-6.1.0-57-amd64), or XDP_TEST_KERNEL naming a bzImage built
# with the xdp fragment. Takes about 2-4 minutes here (two guest
# boots under TCG on a loaded 2-core machine). A guest kernel or
# xdp-bench that will not run there (no BTF, a program that does not
# load) is a SKIP naming the guest's words; any other failure fails.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/lab.sh"
. "$(dirname "$0")/../lib/mkrepo.sh"

KERNEL=${XDP_TEST_KERNEL:-/boot/vmlinuz-6.1.0-57-amd64}
command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
command -v qemu-system-x86_64 > /dev/null ||
	skip_all "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
command -v busybox > /dev/null || skip_all "busybox missing (apt-get install busybox-static)"
for t in xdp-bench xdp-loader; do
	PATH=$PATH:/usr/sbin:/sbin command -v $t > /dev/null || skip_all "$t missing (apt-get install xdp-tools)"
done
[ -f /usr/lib/x86_64-linux-gnu/bpf/xdp-dispatcher.o ] ||
	skip_all "libxdp's xdp-dispatcher.o missing (apt-get install libxdp1)"
PATH=$PATH:/usr/sbin:/sbin command -v ip > /dev/null || skip_all "iproute2's ip missing (apt-get install iproute2)"
[ -r "$KERNEL" ] || skip_all "kernel $KERNEL missing or unreadable (apt-get install linux-image-amd64, or set XDP_TEST_KERNEL)"
# A distribution kernel needs its veth and pktgen modules from /lib/modules;
# a kernel built with etc/kconfig/xdp.config (XDP_TEST_KERNEL=its bzImage)
# has them built in and no such directory.
case $KERNEL in
/boot/vmlinuz-*)
	REL=${KERNEL#/boot/vmlinuz-}
	[ -f "/lib/modules/$REL/modules.dep" ] ||
		skip_all "no /lib/modules/$REL for the guest's veth and pktgen modules" ;;
esac

LAB=$TEST_DIR/lab
trap 'lab_stop; rm -rf "$TEST_DIR"' EXIT
echo "# kernel standing in for a built one: $KERNEL"

R=$TEST_DIR/repo
mkrepo_init "$R" > /dev/null
mkrepo_commit "$R" README "a kernel tree stand-in" "base" > /dev/null
mkrepo_tag "$R" v1
mkrepo_commit "$R" kernel/bpf/core.c "/* a change that does not matter */" "bpf: touch" > /dev/null

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
  xdp-redirect:
    type: xdp
    boot: qemu
    build: [install, -D, -m, "0644", "$KERNEL", arch/x86/boot/bzImage]
    mode: redirect
    interface: xdp0
    interface_out: xdp1
    duration: 3
    interval: 1
    metric: redir_pps
    qemu:
      memory_mb: 1024
      cpus: 2
      boot_timeout: 180
    build_timeout: 60
    run_timeout: 90
  xdp-drop:
    type: xdp
    boot: qemu
    build: [install, -D, -m, "0644", "$KERNEL", arch/x86/boot/bzImage]
    mode: drop
    duration: 3
    qemu:
      memory_mb: 1024
      cpus: 2
      boot_timeout: 180
    build_timeout: 60
    run_timeout: 90
pools:
  local:
    labels: [lab]
EOC
out=$("$BUILD/bisectd" -n -f "$LAB/bisectd.yaml" 2>&1)
ok $? "the xdp workloads are a valid config"
printf '%s\n' "$out" | grep -v '^$' | sed 's/^/# /' | head -5

lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }
lab_start_agent qa 0

task_q() {	# task_q JOB SQL-EXPR: that expression over the job's first task's samples
	q "SELECT $2 FROM samples WHERE task_id = (SELECT min(id) FROM tasks WHERE job_id = $1)"
}
# The guest's words for a kernel or xdp-bench that cannot run there: a SKIP, not a failure.
skip_if_unrunnable() {	# JOB
	_why=$(q "SELECT group_concat(coalesce(error, ''), ' | ') FROM samples
		WHERE task_id = (SELECT min(id) FROM tasks WHERE job_id = $1)")
	_why="$_why $(q "SELECT coalesce(error, '') FROM tasks WHERE job_id = $1 ORDER BY id LIMIT 1")"
	case $_why in
	*"has no BTF"*|*"Failed to attach XDP program"*|*"failed to load"*|*"needs CONFIG_"*|*"is needed"*)
		echo "# the guest cannot run xdp-bench: $_why"
		tap_plan "$tap_n"
		echo "ok $((tap_n + 1)) # SKIP xdp-bench will not run in this guest: $(printf '%s' "$_why" | head -c 300)"
		exit 0 ;;
	esac
}

# 1. The seed's redirect: two runs of 3 s in one boot, redir/s in Mpps.
start=$(date +%s)
out=$(api POST /api/v1/jobs '{"repo":"linux","good":"v1","bad":"main","workload":"xdp-redirect","runs":2}')
like "$out" '^201 ' "the redirect job is created"
state=$(lab_wait_task "job_id = 1" 600)
state=${state%% *}
echo "# the redirect job's first task ended '$state' after $(($(date +%s) - start)) s"
skip_if_unrunnable 1
is "$(q "SELECT state || ' ' || coalesce(error, '-') FROM tasks WHERE job_id = 1 ORDER BY id LIMIT 1")" "done -" \
	"its first task comes back ok"
is "$(task_q 1 "count(*)")" 2 "... with 2 samples"
is "$(task_q 1 "sum(value > 0 AND unit = 'Mpps' AND coalesce(error, '') = '')")" 2 \
	"... both positive Mpps from xdp-bench's redir/s in the guest"
task_q 1 "'sample ' || printf('%.6f', value) || ' ' || unit || ' ' || coalesce(error, '')" | sed 's/^/# redirect /'
con=$(cat "$LAB/agents/qa/logs/task-1-console.log" 2> /dev/null)
like "$con" 'Redirecting from xdp0 \(ifindex [0-9]+; driver veth\) to xdp1' \
	"the console shows xdp-bench redirecting between the veth devices"
like "$con" 'Average redir/s +: [1-9]' "... and its summary, with a redir/s average"
if [ "$state" != done ]; then
	printf '%s\n' "$con" | tail -n 40 | sed 's/^/#   console: /'
	sed 's/^/#   agent: /' "$LAB/qa.log" | tail -n 30
fi
out=$(api POST /api/v1/jobs/1/cancel '')
like "$out" '^200 .*"state": *"cancelled"' "the job is cancelled (both ends are the same kernel)"

# 2. drop, one run: the kind's defaults (xdp0, pps, -i 1).
start=$(date +%s)
out=$(api POST /api/v1/jobs '{"repo":"linux","good":"v1","bad":"main","workload":"xdp-drop","runs":1}')
like "$out" '^201 ' "the drop job is created"
state=$(lab_wait_task "job_id = 2" 600)
state=${state%% *}
echo "# the drop job's first task ended '$state' after $(($(date +%s) - start)) s"
skip_if_unrunnable 2
is "$(q "SELECT state || ' ' || coalesce(error, '-') FROM tasks WHERE job_id = 2 ORDER BY id LIMIT 1")" "done -" \
	"the drop task comes back ok"
is "$(task_q 2 "sum(value > 0 AND unit = 'Mpps')")" 1 "... with a positive Mpps sample"
task_q 2 "'sample ' || printf('%.6f', value) || ' ' || unit" | sed 's/^/# drop /'
out=$(api POST /api/v1/jobs/2/cancel '')
like "$out" '^200 ' "the drop job is cancelled"

tap_plan "$tap_n"
tap_done
