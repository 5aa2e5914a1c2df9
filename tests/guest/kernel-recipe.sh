#!/bin/sh
# kernel-recipe (make check-guest; was t0102): the kernel build recipe end to end, through the real coordinator
# and one real agent, on a stand-in kernel tree: a git repository whose
# Makefile answers "make O=DIR tinyconfig | olddefconfig | bzImage" as
# Kbuild does (files written, "  CC" lines, exit status), and whose
# scripts/kconfig/merge_config.sh merges as the real one. Its bzImage rule
# installs Debian's distribution kernel, so the agent boots a real kernel
# under QEMU with iperf3 in it. Checked: fragments travel from bisectd's
# kconfig_dir to the agent, the image is cached by tree id and config hash
# (a second job builds nothing), a fragment option the kernel drops fails
# the job with the option's name and never marks a commit bad, a guest
# without the network the workload needs fails its runs with iperf3's
# message, and a tree that does not build is skipped with the compiler's
# message.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/lab.sh"
. "$(dirname "$0")/../lib/mkrepo.sh"
. "$(dirname "$0")/../lib/kstandin.sh"

command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
command -v qemu-system-x86_64 > /dev/null ||
	skip_all "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
command -v busybox > /dev/null || skip_all "busybox missing (apt-get install busybox-static)"
command -v iperf3 > /dev/null || skip_all "iperf3 missing (apt-get install iperf3)"
for t in make gcc flex bison bc perl; do
	command -v $t > /dev/null || skip_all "$t missing (make deps)"
done
KERNEL=$(ls /boot/vmlinuz-* 2> /dev/null | sort -V | tail -n 1)
[ -n "$KERNEL" ] || skip_all "no kernel in /boot (apt-get install linux-image-amd64)"
[ -r "$KERNEL" ] || skip_all "kernel $KERNEL is not readable by $(id -un)"

LAB=$TEST_DIR/lab
trap 'lab_stop; rm -rf "$TEST_DIR"' EXIT

# The stand-in tree. olddefconfig drops CONFIG_NO_SUCH_OPTION, as Kconfig
# drops a symbol it does not know.
R=$TEST_DIR/linux
KSTANDIN_BZIMAGE="	@test ! -e BROKEN || { echo 'net/ipv4/udp.c:9:1: error: expected ; before }' >&2; exit 1; }
	@echo \"  CC      net/core/dev.o\"
	@test -e net/ipv4/udp.c || sleep 5" kstandin_tree "$R" "$KERNEL"
mkrepo_commit "$R" README "a kernel tree stand-in" "base" > /dev/null
mkrepo_tag "$R" v1
mkrepo_commit "$R" net/ipv4/udp.c "/* a change that does not matter */" "udp: touch" > /dev/null
mkrepo_tag "$R" v2
mkrepo_commit "$R" BROKEN "" "udp: break the build" > /dev/null
mkrepo_tag "$R" v3

mkdir -p "$LAB/kconfig"
printf '# udp\nCONFIG_NET=y\nCONFIG_INET=y\n' > "$LAB/kconfig/udp.config"
printf 'CONFIG_NET=y\nCONFIG_NO_SUCH_OPTION=y\n' > "$LAB/kconfig/typo.config"
LAB_PORT=$(lab_free_port)
LAB_URL="http://127.0.0.1:$LAB_PORT"
cat > "$LAB/bisectd.yaml" <<EOC
listen: 127.0.0.1:$LAB_PORT
database: $LAB/bisectd.db
mirrors: $LAB/mirrors
lease_seconds: 30
default_runs: 1
repos:
  linux:
    url: $R
workloads:
  udp:
    type: iperf3
    boot: qemu
    kernel:
      fragments: [udp]
    iperf3: [--udp, "-4", -b, "0", -l, "8920", -t, "1"]
    build_timeout: 60
    run_timeout: 60
  typo:
    type: iperf3
    boot: qemu
    kernel:
      fragments: [udp, typo]
  nonet:
    type: iperf3
    boot: qemu
    kernel:
      fragments: [udp]
    # The job adds ipv6.disable=1: a guest without the network the workload needs.
    iperf3: [--udp, "-6", -t, "1"]
    append: panic=1
    run_timeout: 60
pools:
  local:
    labels: [lab]
EOC
"$BUILD/bisectd" -n -f "$LAB/bisectd.yaml" > /dev/null 2>&1
ok $? "a kernel workload with fragments from kconfig/ beside the config is valid"

lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }
lab_start_agent qa -1
# Up to 8 minutes: each task boots a guest under TCG, 6-10 s on an idle
# host and 30 s or more with a CPU hog on each core.
wait_job() {  # wait_job JOB
	for _ in $(seq 1 960); do
		case $(q "SELECT state FROM jobs WHERE id = $1") in
		queued|running) sleep 0.5 ;;
		*) return 0 ;;
		esac
	done
}

out=$(api POST /api/v1/jobs '{"repo":"linux","good":"v1","bad":"v2","workload":"udp","runs":1}')
like "$out" '^201 ' "job 1 created"
# v1's build takes 5 s more (the stand-in's Makefile): long enough for
# heartbeats to carry what the agent is doing into the job's running list.
seen=
for _ in $(seq 1 100); do
	seen=$(api GET /api/v1/jobs/1 | grep -o '"progress": *"building the kernel[^"]*"' | head -n 1)
	[ -n "$seen" ] && break
	sleep 0.1
done
like "$seen" '"building the kernel, 0:00"' "while it builds, the job's running list says so (heartbeat progress)"
lab_wait_task "job_id = 1" 480 > /dev/null
is "$(q "SELECT state || ' ' || coalesce(error, '-') FROM tasks WHERE job_id = 1 ORDER BY id LIMIT 1")" "done -" \
	"the first task builds with the recipe, boots the image and measures"
is "$(q "SELECT count(*) FROM samples WHERE job_id = 1 AND value > 0 AND unit = 'KBytes/s'")" 1 \
	"... one positive KBytes/s sample from the guest"
BLOG=$LAB/agents/qa/logs/task-1-build.log
like "$(cat "$BLOG" 2> /dev/null)" '# \$ make -j[0-9]+ .*O=.*/kbuild/linux bzImage' \
	"the build log has the make command, with -j and the agent's O= directory"
like "$(cat "$BLOG" 2> /dev/null)" '2 files compiled' "... and the count of files compiled"
# (The next task rewrites it: read it again if it is between two writes.)
frag=
for _ in 1 2 3 4 5 6 7 8 9 10; do
	frag=$(cat "$LAB/agents/qa/kbuild/linux/bisectd-fragments/udp.config" 2> /dev/null) && break
	sleep 0.1
done
like "$frag" '^# udp' \
	"the fragment's text came from bisectd's kconfig_dir"
TREE1=$(git -C "$R" rev-parse v1^{tree})
like "$(ls "$LAB/agents/qa/kcache")" "^$TREE1-[0-9a-f]{16}-[0-9a-f]{8}" \
	"the image is cached under the tree id and the config hash"
# The cache entry keeps the .config it was built with (the build directory's
# may already be the next task's).
like "$(cat "$LAB/agents/qa/kcache/$TREE1"-*/config 2> /dev/null | grep -c CONFIG_INET=y)" '^1$' \
	"... with olddefconfig's .config, which has the fragment's option"
api POST /api/v1/jobs/1/cancel '' > /dev/null

# A second job on the same commit builds nothing.
out=$(api POST /api/v1/jobs '{"repo":"linux","good":"v1","bad":"v2","workload":"udp","runs":1}')
like "$out" '^201 ' "job 2 created on the same range"
lab_wait_task "job_id = 2" 480 > /dev/null
T2=$(q "SELECT id FROM tasks WHERE job_id = 2 ORDER BY id LIMIT 1")
is "$(q "SELECT state || ' ' || coalesce(build_s, -1) FROM tasks WHERE id = $T2")" "done 0.0" \
	"its first task is done with no build time"
like "$(cat "$LAB/qa.log")" "task $T2: kernel $TREE1-.* is in the build cache" "... the agent says it was cached"
ok "$([ ! -e "$LAB/agents/qa/logs/task-$T2-build.log" ]; echo $?)" "... and wrote no build log"
api POST /api/v1/jobs/2/cancel '' > /dev/null

# A fragment option the kernel drops: the job fails naming it; no commit is called bad.
out=$(api POST /api/v1/jobs '{"repo":"linux","good":"v1","bad":"v2","workload":"typo","runs":1}')
like "$out" '^201 ' "job 3 (a fragment with an option the kernel does not have) created"
wait_job 3
like "$(q "SELECT state || ': ' || error FROM jobs WHERE id = 3")" \
	'^failed: the (good|bad) end could not be measured: .*CONFIG_NO_SUCH_OPTION=y requested \([^)]*/typo.config:2\)' \
	"it fails, naming the option and the fragment line"
is "$(q "SELECT count(*) FROM job_commits WHERE job_id = 3 AND state IN ('good', 'bad')")" 0 \
	"... and calls no commit good or bad"

# A guest without the network iperf3 asks for: failed runs with iperf3's
# message, and a job that fails saying so; never a commit called bad.
out=$(api POST /api/v1/jobs '{"repo":"linux","good":"v1","bad":"v2","workload":"nonet","runs":1,"append":"ipv6.disable=1"}')
like "$out" '^201 .*"append": *"ipv6.disable=1"' "job 4 (a guest without IPv6, iperf3 -6) created with a kernel parameter"
wait_job 4
# Debian's kernel has IPv6: only the job's parameter can have taken it away.
like "$(q "SELECT error FROM samples WHERE job_id = 4 ORDER BY id LIMIT 1")" 'iperf3: .*Address family not supported' \
	"its runs fail with iperf3's own message: the job's kernel parameter reached the guest"
is "$(q "SELECT count(*) FROM samples WHERE job_id = 4 AND value > 0")" 0 "... and no value"
like "$(q "SELECT state || ': ' || error FROM jobs WHERE id = 4")" \
	'^failed: the (good|bad) end could not be measured: every run failed, the last with: .*iperf3' \
	"the job fails with that message"
is "$(q "SELECT count(*) FROM job_commits WHERE job_id = 4 AND state IN ('good', 'bad')")" 0 \
	"... and calls no commit good or bad"

# A tree that does not build: skipped, with the compiler's line in the log tail.
out=$(api POST /api/v1/jobs '{"repo":"linux","good":"v1","bad":"v3","workload":"udp","runs":1}')
like "$out" '^201 ' "job 5 (the bad end does not build) created"
wait_job 5
like "$(q "SELECT state || ' ' || error FROM tasks WHERE job_id = 5 AND idx = 2 ORDER BY id DESC LIMIT 1")" \
	'^skipped kernel build failed: exit 2' "the commit that does not build is skipped"
like "$(q "SELECT log_tail FROM tasks WHERE job_id = 5 AND idx = 2 ORDER BY id DESC LIMIT 1")" \
	'udp.c:9:1: error: expected' "... with the compiler's message in its log tail"
is "$(q "SELECT state FROM jobs WHERE id = 5")" failed "... and the job fails: its bad end cannot be measured"
if [ "$tap_failed" != 0 ]; then
	tail -n 30 "$LAB/qa.log" | sed 's/^/#   agent: /'
	tail -n 10 "$LAB/bisectd.log" | sed 's/^/#   bisectd: /'
fi

tap_plan "$tap_n"
tap_done
