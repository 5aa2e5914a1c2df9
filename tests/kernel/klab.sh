#!/bin/sh
# klab.sh [--check]: the kernel lab. make demo-kernel runs it plain, make
# check-kernel with --check (TAP, and the exit status says whether the
# culprit was found exactly with confidence >= 0.99).
#
# It bisects a real kernel: tests/kernel/mkhistory.sh turns Debian's
# linux-source-6.1 into a 37-commit history with a synthetic UDP receive
# regression (kept in $KLAB/linux and reused while it is intact, since its
# commit ids are fixed), then starts bisectd and two agents on loopback.
# Each agent clones the history once, builds tinyconfig + the qemu-guest
# and udp fragments of etc/kconfig (bzImage, ccache when installed, one
# build at a time on the host), boots each built kernel under QEMU (TCG
# here: KVM does not work nested) and runs iperf3 UDP over the guest's
# loopback. bisectctl watch shows the first build's progress.
#
# What it costs on a 2-core machine: mkhistory about a minute (once), the
# mirror and the agents' clones 1-3 minutes each, the first kernel build
# about 12 minutes with an empty ccache, then a minute or two per commit.
#
# Environment: KLAB (default /var/tmp/bisectd-klab) holds the history and
# the lab; KLAB_KEEP=1 keeps the agents' work trees and build caches from
# the last run (a rerun then builds nothing it built before); BUILD.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
KLAB=${KLAB:-/var/tmp/bisectd-klab}
LAB=$KLAB/lab
HIST=$KLAB/linux
CHECK=0
[ "${1:-}" = --check ] && CHECK=1
. "$TOP/tests/lib/lab.sh"

say() { echo "==> $*"; }
n=0
failed=0
tap() {  # tap OK|FAIL DESCRIPTION
	n=$((n + 1))
	if [ "$1" = OK ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}

missing=""
for t in qemu-system-x86_64 busybox iperf3 make gcc flex bison bc perl sqlite3 curl; do
	command -v "$t" > /dev/null || missing="$missing $t"
done
[ -r /usr/src/linux-source-6.1.tar.xz ] || missing="$missing linux-source-6.1"
if [ -n "$missing" ]; then
	if [ $CHECK = 1 ]; then
		echo "1..0 # SKIP missing:$missing (make deps-kernel installs them)"
		exit 0
	fi
	echo "klab: missing:$missing (make deps-kernel installs them)" >&2
	exit 1
fi

mkdir -p "$KLAB"
if [ -s "$HIST.culprit" ] && git -C "$HIST" rev-parse -q --verify v6.1-synthetic > /dev/null 2>&1 &&
	git -C "$HIST" cat-file -e "$(head -n 1 "$HIST.culprit")" 2> /dev/null; then
	say "the kernel history in $HIST is there already"
else
	say "making the kernel history in $HIST (mkhistory.sh, about a minute)"
	rm -rf "$HIST" "$HIST.culprit"
	sh "$TOP/tests/kernel/mkhistory.sh" "$HIST" > "$KLAB/mkhistory.out" || exit 1
fi
CULPRIT=$(head -n 1 "$HIST.culprit")

if [ "${KLAB_KEEP:-0}" = 1 ]; then
	rm -rf "$LAB/bisectd.db" "$LAB/bisectd.db-wal" "$LAB/bisectd.db-shm"
else
	rm -rf "$LAB"
fi
mkdir -p "$LAB"
trap lab_stop EXIT INT TERM

LAB_PORT=$(lab_free_port)
LAB_URL="http://127.0.0.1:$LAB_PORT"
export BISECTD_URL="$LAB_URL"
cat > "$LAB/bisectd.yaml" <<EOC
listen: 127.0.0.1:$LAB_PORT
database: $LAB/bisectd.db
mirrors: $LAB/mirrors
kconfig_dir: $TOP/etc/kconfig
lease_seconds: 120
default_runs: 3
repos:
  linux:
    url: $HIST
workloads:
  udp-rx:
    type: iperf3
    boot: qemu
    kernel:
      base: tinyconfig
      # egress too: the same kernels then run the pktgen workload below.
      fragments: [qemu-guest, udp, egress]
    # The seed's UDP options; each run is one iperf3 client in one boot.
    iperf3: [--udp, "-4", -b, "0", -l, "8920", -t, "3", -P, "4"]
    metric: KBytes/s
    qemu:
      memory_mb: 512
      cpus: 2
      boot_timeout: 180
    build_timeout: 5400
    run_timeout: 120
  egress-pktgen:
    type: pktgen
    boot: qemu
    kernel:                       # the same build: the same cache entries
      base: tinyconfig
      fragments: [qemu-guest, udp, egress]
    count: 100000
    pkt_size: 60
    clsact_bpf: true
    metric: pps
    qemu:
      boot_timeout: 180
    build_timeout: 5400
    run_timeout: 120
pools:
  lab:
    labels: [lab]
EOC
"$BUILD/bisectd" -n -f "$LAB/bisectd.yaml" || exit 1

say "starting bisectd on $LAB_URL (it mirrors the history first)"
lab_start_bisectd || exit 1
for a in klab1 klab2; do
	cat > "$LAB/$a.yaml" <<EOC
coordinator: $LAB_URL
name: $a
labels: [lab]
workdir: $LAB/agents/$a
heartbeat: 5
poll_wait: 20
measure_lock: $LAB/measure.lock
build_lock: $LAB/build.lock
enrol_token_file: $LAB/enrol.token
EOC
	"$BUILD/bisect-agent" -f "$LAB/$a.yaml" > "$LAB/$a.log" 2>&1 &
	LAB_PIDS="$LAB_PIDS $!"
done
say "agents klab1 and klab2 started; each clones the history, then builds (logs: $LAB/klab1.log)"

say "bisectctl submit --repo linux --good v6.1-base --bad v6.1-synthetic --workload udp-rx --watch"
start=$(date +%s)
"$BUILD/bisectctl" submit --repo linux --good v6.1-base --bad v6.1-synthetic --workload udp-rx \
	--interval 5 --watch
rc=$?
end=$(date +%s)
echo

JOB=$(q "SELECT max(id) FROM jobs")
got=$(q "SELECT c.sha FROM jobs j JOIN job_commits c ON c.job_id = j.id AND c.idx = j.culprit WHERE j.id = $JOB")
conf=$(q "SELECT json_extract(report, '\$.confidence') FROM jobs WHERE id = $JOB")
# The first build: the longest build of the job. A step: a task from its
# claim to its result (checkout, build, boot, runs), after each agent's first.
first_build=$(q "SELECT printf('%.0f', max(build_s)) FROM tasks WHERE job_id = $JOB")
steps=$(q "SELECT finished - claimed FROM tasks t WHERE job_id = $JOB AND state = 'done' AND
	claimed > (SELECT min(claimed) FROM tasks u WHERE u.job_id = t.job_id AND u.agent_id = t.agent_id)
	ORDER BY 1")
nsteps=$(echo "$steps" | grep -c . || true)
median=$(echo "$steps" | awk 'NF { v[n++] = $1 } END { if (n) print (n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2); else print "-" }')
slowest=$(echo "$steps" | awk 'NF { m = $1 } END { print m ? m : "-" }')
runs=$(q "SELECT count(*) FROM samples WHERE job_id = $JOB")
builds=$(q "SELECT count(DISTINCT idx) FROM tasks WHERE job_id = $JOB AND build_s > 0")

echo "kernel lab: job $JOB in $(((end - start) / 60)) min $(((end - start) % 60)) s, $runs runs"
echo "  first kernel build: ${first_build:-?} s; kernels built: $builds"
echo "  steps after each agent's first (checkout, build, boot, runs): median ${median} s," \
	"slowest ${slowest} s, over $nsteps tasks"
echo "  culprit: ${got:-none} (confidence ${conf:-?})"
echo "  mkhistory's synthetic regression: $CULPRIT"
echo "  logs: $LAB/bisectd.log $LAB/klab1.log $LAB/klab2.log; build logs in $LAB/agents/*/logs"

# pktgen on the kernels just built: both ends come from the build cache,
# so this is two boots. The job is cancelled after them (the ends do not
# differ under pktgen, which does not use the UDP receive path).
say "the same kernels under pktgen (dummy device, clsact qdisc, bpf filter, queue_xmit)"
"$BUILD/bisectctl" submit --repo linux --good v6.1-base --bad v6.1-synthetic --workload egress-pktgen \
	--runs 2 > /dev/null
PJOB=$(q "SELECT max(id) FROM jobs")
for _ in $(seq 1 240); do
	[ "$(q "SELECT count(*) FROM tasks WHERE job_id = $PJOB AND state IN ('done', 'skipped', 'failed')")" -ge 2 ] &&
		break
	sleep 2
done
"$BUILD/bisectctl" cancel "$PJOB" > /dev/null 2>&1
pk=$(q "SELECT count(*) FROM samples WHERE job_id = $PJOB AND value > 0 AND unit = 'pps'")
pkbuilt=$(q "SELECT count(*) FROM tasks WHERE job_id = $PJOB AND state = 'done' AND build_s > 0")
q "SELECT '  pktgen, commit ' || idx || ': ' || printf('%.0f', value) || ' pps' FROM samples
	WHERE job_id = $PJOB ORDER BY id"
q "SELECT '  pktgen task ' || id || ': ' || state || ' ' || coalesce(error, '') FROM tasks
	WHERE job_id = $PJOB AND state IN ('skipped', 'failed')"

# A job's config variant the real Kconfig refuses (VIRTIO_NET needs
# VIRTIO_PCI, which the udp-rx fragments leave out): the tasks fail at the
# configuration, seconds each, naming the option; no commit good or bad.
say "bisectctl submit ... --workload udp-rx --config CONFIG_VIRTIO_NET=y (Kconfig refuses it)"
"$BUILD/bisectctl" submit --repo linux --good v6.1-base --bad v6.1-synthetic --workload udp-rx \
	--runs 1 --config CONFIG_VIRTIO_NET=y > /dev/null
CJOB=$(q "SELECT max(id) FROM jobs")
for _ in $(seq 1 300); do
	case $(q "SELECT state FROM jobs WHERE id = $CJOB") in queued|running) sleep 2 ;; *) break ;; esac
done
cerr=$(q "SELECT coalesce(error, '') FROM jobs WHERE id = $CJOB")
cbad=$(q "SELECT count(*) FROM job_commits WHERE job_id = $CJOB AND state IN ('good', 'bad')")
echo "  config variant job $CJOB: $(q "SELECT state FROM jobs WHERE id = $CJOB"): $cerr"

if [ $CHECK = 1 ]; then
	echo "1..7"
	[ "$rc" = 0 ] && tap OK "the job ended done" || tap FAIL "the job ended done (bisectctl exit $rc)"
	[ "$got" = "$CULPRIT" ] && tap OK "the culprit is mkhistory's synthetic regression" ||
		tap FAIL "the culprit is mkhistory's synthetic regression (got ${got:-none})"
	awk -v c="${conf:-0}" 'BEGIN { exit !(c >= 0.99) }' && tap OK "confidence $conf >= 0.99" ||
		tap FAIL "confidence ${conf:-none} >= 0.99"
	awk -v m="$median" 'BEGIN { exit !(m != "-" && m < 120) }' &&
		tap OK "median step ${median} s < 120 s" || tap FAIL "median step ${median} s < 120 s"
	[ "$pk" = 4 ] && tap OK "pktgen ran in the built kernels: 4 runs with pps > 0" ||
		tap FAIL "pktgen ran in the built kernels: 4 runs with pps > 0 (got $pk)"
	[ "$pkbuilt" = 0 ] && tap OK "... on kernels from the build cache" ||
		tap FAIL "... on kernels from the build cache ($pkbuilt tasks built one)"
	case $cerr in
	*"CONFIG_VIRTIO_NET=y requested (the job's --config) but the kernel's olddefconfig dropped it"*)
		[ "$cbad" = 0 ] && tap OK "a --config option Kconfig refuses fails the job naming it" ||
			tap FAIL "a --config option Kconfig refuses fails the job naming it ($cbad commits good or bad)" ;;
	*) tap FAIL "a --config option Kconfig refuses fails the job naming it (got: $cerr)" ;;
	esac
	exit $((failed > 0))
fi
exit $rc
