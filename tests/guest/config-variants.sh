#!/bin/sh
# guest/config-variants: a job's kernel config variant through bisectd and
# a real agent, each build booted in a QEMU guest with iperf3 inside. The
# kernel tree is a stand-in (as in tests/guest/kernel-recipe.sh): its Makefile answers
# tinyconfig / olddefconfig / bzImage as Kbuild does and installs Debian's
# distribution kernel as the image, so what is checked is the agent's
# side: the job's options are merged after the fragments into the .config
# the image is kept with, a second job with the same options boots the
# cached image without building, and a job with other options, or with
# none, builds its own. Needs qemu-system-x86_64, busybox, iperf3, a
# kernel in /boot; 161 s here (2 cores, TCG, a load of about 15).
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

R=$TEST_DIR/linux
kstandin_tree "$R" "$KERNEL"
mkrepo_commit "$R" README "a kernel tree stand-in" "base" > /dev/null
mkrepo_tag "$R" v1
mkrepo_commit "$R" net/ipv4/udp.c "/* a change */" "udp: touch" > /dev/null
mkrepo_tag "$R" v2

mkdir -p "$LAB/kconfig"
printf '# udp\nCONFIG_NET=y\nCONFIG_INET=y\nCONFIG_HZ=100\n' > "$LAB/kconfig/udp.config"
LAB_PORT=$(lab_free_port)
LAB_URL="http://127.0.0.1:$LAB_PORT"
export BISECTD_URL="$LAB_URL"
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
pools:
  local:
    labels: [lab]
EOC
lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }
lab_start_agent qa -1
CTL=$BUILD/bisectctl
TREE1=$(git -C "$R" rev-parse v1^{tree})
# Up to 8 minutes for a job's first task: a boot under TCG on a busy host.
first_task() {  # first_task JOB: waits until its first task ended, prints "state build_s"
	for _ in $(seq 1 960); do
		s=$(q "SELECT state || ' ' || coalesce(build_s, -1) FROM tasks WHERE job_id = $1 ORDER BY id LIMIT 1")
		case $s in queued*|claimed*|'') sleep 0.5 ;; *) break ;; esac
	done
	"$CTL" cancel "$1" > /dev/null 2>&1
	echo "$s"
}
entries() { ls "$LAB/agents/qa/kcache" 2> /dev/null | grep -c "^$TREE1-"; }

"$CTL" submit --repo linux --good v1 --bad v2 --workload udp --config CONFIG_HZ=250 \
	--config '# CONFIG_INET is not set' > /dev/null
like "$(first_task 1)" '^done [0-9.]+$' "job 1 (CONFIG_HZ=250, INET unset): the good end built, booted and measured"
is "$(q "SELECT count(*) FROM samples WHERE job_id = 1 AND value > 0")" 1 "... one positive sample from the guest"
is "$(entries)" 1 "... one cache entry for the tree"
cfg=$(cat "$LAB/agents/qa/kcache/$TREE1"-*/config 2> /dev/null)
like "$cfg" 'CONFIG_HZ=250' "the image's .config has the job's CONFIG_HZ=250 over the fragment's 100"
like "$cfg" '# CONFIG_INET is not set' "... and INET unset over the fragment's =y"
like "$(cat "$LAB/agents/qa/logs/task-1-build.log" 2> /dev/null)" "# job: CONFIG_HZ=250 \\(the job's --config\\) overrides CONFIG_HZ=100" \
	"the build log says which fragment options the job changed"
K1=$(ls "$LAB/agents/qa/kcache" | grep "^$TREE1-")

"$CTL" submit --repo linux --good v1 --bad v2 --workload udp --config 'CONFIG_INET=n' \
	--config CONFIG_HZ=250 > /dev/null
is "$(first_task 2)" "done 0.0" "job 2 (the same options, in another order): booted the cached image, no build"
like "$(cat "$LAB/qa.log")" "kernel $K1 is in the build cache" "... the agent says it was the first job's"

"$CTL" submit --repo linux --good v1 --bad v2 --workload udp --config CONFIG_HZ=1000 > /dev/null
like "$(first_task 3)" '^done [0-9.]+$' "job 3 (CONFIG_HZ=1000) measured"
is "$(entries)" 2 "... on a build of its own: a second cache entry for the tree"
"$CTL" submit --repo linux --good v1 --bad v2 --workload udp > /dev/null
like "$(first_task 4)" '^done [0-9.]+$' "job 4 (no options) measured"
is "$(entries)" 3 "... on a build of its own: a third cache entry"
unbuilt=$(q "SELECT count(*) FROM tasks WHERE id IN (SELECT min(id) FROM tasks WHERE job_id IN (3, 4) GROUP BY job_id)
	AND build_s = 0")
is "$unbuilt" 0 "... neither of them from another job's cache"
if [ "$tap_failed" != 0 ]; then
	tail -n 30 "$LAB/qa.log" | sed 's/^/#   agent: /'
	tail -n 10 "$LAB/bisectd.log" | sed 's/^/#   bisectd: /'
fi

tap_plan "$tap_n"
tap_done
