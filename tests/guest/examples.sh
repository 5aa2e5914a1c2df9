#!/bin/sh
# guest/examples: the seed setups of etc/examples/ run as they are written,
# on the local lab, where this machine allows it: their workloads, kernel
# fragments and variants taken from the files unchanged, through bisectd,
# one agent and the qemu boot method under TCG. Only the head (listen,
# database, repos) and the pool are the lab's, and the kernel tree is a
# stand-in (tests/lib/kstandin.sh) whose bzImage is Debian's kernel, so
# that no real build is needed: the fragments are merged and verified as
# for a real one, and pktgen, dummy, clsact and cls_bpf come as that
# kernel's modules. Each workload's job measures its first task and is
# cancelled then (both ends are the same kernel):
#   iperf3-udp-64.yaml: udp64-1g with the seed's `--append mitigations=off`
#     (on the guest's command line), udp64-max: iperf3 UDP -P 64 for 30 s;
#   pktgen-queue-xmit.yaml: egress-bpf (Mb/s) and egress-bpf-pps (pps),
#     pktgen queue_xmit on a dummy device with clsact and the bpf egress
#     filter, the first with the seed's variant `--config CONFIG_NETFILTER=y
#     --config CONFIG_NETFILTER_EGRESS=y` (merged and verified: a build of
#     its own beside the fragment's).
#   xdp-redirect.yaml, where xdp-tools are here: xdp-redirect, xdp-bench
#     redirect on a veth pair pktgen feeds, in Mpps (a guest kernel that
#     cannot run it is a SKIP with the guest's words, as in guest/xdp.sh).
# trex-pedit.yaml needs a TRex server and its NICs (t0016 runs the trex
# workload against a stand-in), kexec-host.yaml reboots the machine it runs
# on (tests/guest/kexec.sh does it in a guest), ssh-device.yaml needs its
# device (tests/guest/ssh-bisect.sh).
# Needs qemu-system-x86_64, busybox (static), iperf3, tc (iproute2),
# sqlite3, make and a kernel in /boot with its /lib/modules. Five guest
# boots under TCG: 207-240 s here. make check-guest runs it.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/lab.sh"
. "$(dirname "$0")/../lib/mkrepo.sh"
. "$(dirname "$0")/../lib/kstandin.sh"

command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
command -v qemu-system-x86_64 > /dev/null || skip_all "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
command -v busybox > /dev/null || skip_all "busybox missing (apt-get install busybox-static)"
command -v iperf3 > /dev/null || skip_all "iperf3 missing (apt-get install iperf3)"
command -v make > /dev/null || skip_all "make missing (make deps)"
TC=$(command -v tc || ls /usr/sbin/tc /sbin/tc 2> /dev/null | head -n 1)
[ -n "$TC" ] || skip_all "tc missing (apt-get install iproute2)"
KERNEL=$(ls /boot/vmlinuz-* 2> /dev/null | sort -V | tail -n 1)
[ -n "$KERNEL" ] || skip_all "no kernel in /boot (apt-get install linux-image-amd64)"
[ -r "$KERNEL" ] || skip_all "kernel $KERNEL is not readable by $(id -un)"
RELEASE=${KERNEL#/boot/vmlinuz-}
for m in pktgen dummy sch_ingress cls_bpf; do
	grep -q "/$m.ko" "/lib/modules/$RELEASE/modules.dep" 2> /dev/null ||
		skip_all "$KERNEL has no module $m in /lib/modules/$RELEASE"
done
EX=$TOP/etc/examples
# The xdp example where xdp-tools and libxdp's dispatcher are here.
FILES="iperf3-udp-64.yaml pktgen-queue-xmit.yaml"
XDP_WHY=
for t in xdp-bench xdp-loader ip; do
	PATH=$PATH:/usr/sbin:/sbin command -v $t > /dev/null || XDP_WHY="$t missing (apt-get install xdp-tools iproute2)"
done
[ -f /usr/lib/x86_64-linux-gnu/bpf/xdp-dispatcher.o ] || XDP_WHY="libxdp's xdp-dispatcher.o missing (apt-get install libxdp1)"
[ -e "$EX/xdp-redirect.yaml" ] || XDP_WHY="no etc/examples/xdp-redirect.yaml on this branch"
[ -z "$XDP_WHY" ] && FILES="$FILES xdp-redirect.yaml"

LAB=$TEST_DIR/lab
trap 'lab_stop; rm -rf "$TEST_DIR"' EXIT
mkdir -p "$LAB"
R=$TEST_DIR/linux
kstandin_tree "$R" "$KERNEL"
mkrepo_commit "$R" README "a kernel tree stand-in" "base" > /dev/null
mkrepo_tag "$R" v1
mkrepo_commit "$R" net/sched/sch_ingress.c "/* a change */" "net: sched: touch" > /dev/null
mkrepo_tag "$R" v2

# lab_ex FILE: the example's workloads under the lab's head, its pool the lab's.
LAB_PORT=$(lab_free_port)
LAB_URL="http://127.0.0.1:$LAB_PORT"
export BISECTD_URL="$LAB_URL"
{
	cat <<EOC
listen: 127.0.0.1:$LAB_PORT
database: $LAB/bisectd.db
mirrors: $LAB/mirrors
lease_seconds: 60
default_runs: 1
repos:
  klab:
    url: $R
EOC
	for f in $FILES; do
		# Everything from "workloads:" to "pools:", the header line once.
		sed -n '/^workloads:$/,/^pools:$/p' "$EX/$f" | sed '/^pools:$/d' |
			if [ "$f" = iperf3-udp-64.yaml ]; then cat; else sed '/^workloads:$/d'; fi
	done
	printf 'pools:\n  local:\n    labels: [lab]\n'
} > "$LAB/bisectd.yaml"
# The fragments the examples name, read beside the config as beside theirs.
ln -s "$TOP/etc/kconfig" "$LAB/kconfig"
out=$("$BUILD/bisectd" -n -f "$LAB/bisectd.yaml" 2>&1)
WL="udp64-1g udp64-10g udp64-max egress-bpf egress-bpf-pps"
[ -z "$XDP_WHY" ] && WL="$WL xdp-redirect"
like "$out" "configuration OK \\(1 repos, $(echo $WL | wc -w) workloads, 1 pools\\)" \
	"the examples' workloads load under the lab's head ($(echo $FILES))"
for w in $WL; do
	ok "$(grep -q "^  $w:\$" "$LAB/bisectd.yaml"; echo $?)" "... $w among them"
done

lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }
lab_start_agent qa -1
# measured JOB UNIT WHAT: the first task done, its sample positive in the unit.
n=0
measured() {
	_st=$(lab_wait_task "job_id = $1" 600)
	is "$_st" "done -" "$3: the first task builds, boots and measures"
	_v=$(q "SELECT value FROM samples WHERE job_id = $1 AND unit = '$2' AND value > 0 LIMIT 1")
	ok "$([ -n "$_v" ]; echo $?)" "... a positive sample in $2 (${_v:-none})"
	echo "# figure: $3: ${_v:-none} $2"
	api POST "/api/v1/jobs/$1/cancel" '' > /dev/null
	[ "$_st" = "done -" ] || sed 's/^/#   agent: /' "$LAB/qa.log" | tail -n 15
}
submit() {	# submit WORKLOAD [FLAGS...]: the job's id
	"$BUILD/bisectctl" submit --repo klab --good v1 --bad v2 --workload "$@" --runs 1 2> "$LAB/submit.err" |
		sed -n 's/^job \([0-9][0-9]*\).*/\1/p' | head -n 1
}

start=$(date +%s)
J=$(submit udp64-1g --append mitigations=off)
ok "$([ -n "$J" ]; echo $?)" "udp64-1g submitted with the seed's --append mitigations=off"
[ -n "$J" ] || sed 's/^/#   /' "$LAB/submit.err"
measured "${J:-0}" KBytes/s "udp64-1g, mitigations=off"
T=$(q "SELECT id FROM tasks WHERE job_id = ${J:-0} ORDER BY id LIMIT 1")
like "$(tr -d '\r' < "$LAB/agents/qa/logs/task-$T-console.log" 2> /dev/null)" "booted: $RELEASE .*mitigations=off" \
	"... the guest booted with mitigations=off on its command line"
like "$(cat "$LAB/agents/qa/kcache"/*/config 2> /dev/null)" "CONFIG_IPV6=y" \
	"... a kernel whose .config has the udp fragment merged"

J=$(submit udp64-max)
measured "${J:-0}" KBytes/s "udp64-max (-b 0)"

J=$(submit egress-bpf --config CONFIG_NETFILTER=y --config CONFIG_NETFILTER_EGRESS=y)
ok "$([ -n "$J" ]; echo $?)" "egress-bpf submitted with the seed's variant, the netfilter egress hook on"
[ -n "$J" ] || sed 's/^/#   /' "$LAB/submit.err"
measured "${J:-0}" Mb/s "egress-bpf, CONFIG_NETFILTER_EGRESS=y"
# (The agent may have built the job's other end too before the cancel reached it: v1's entries only.)
TREE1=$(git -C "$R" rev-parse v1^{tree})
J=$(submit egress-bpf-pps)
measured "${J:-0}" pps "egress-bpf-pps"
is "$(grep -l '^CONFIG_NETFILTER_EGRESS=y$' "$LAB/agents/qa/kcache/$TREE1"-*/config 2> /dev/null | grep -c .) of \
$(grep -l '^CONFIG_NET_EGRESS=y$' "$LAB/agents/qa/kcache/$TREE1"-*/config 2> /dev/null | grep -c .)" "1 of 2" \
	"the egress fragment's two builds of v1: the variant's with the hook merged after the fragments, and one without"

if [ -n "$XDP_WHY" ]; then
	echo "ok $((tap_n + 1)) # SKIP xdp-redirect.yaml: $XDP_WHY"
	tap_n=$((tap_n + 1))
else
	J=$(submit xdp-redirect)
	st=$(lab_wait_task "job_id = ${J:-0}" 600)
	why=$(q "SELECT coalesce(error, '') FROM samples WHERE job_id = ${J:-0}")
	case "$st $why" in
	*"has no BTF"*|*"Failed to attach XDP program"*|*"failed to load"*|*"needs CONFIG_"*|*"is needed"*)
		echo "ok $((tap_n + 1)) # SKIP xdp-bench will not run in this guest: $(printf '%s' "$st $why" | head -c 300)"
		tap_n=$((tap_n + 1))
		api POST "/api/v1/jobs/$J/cancel" '' > /dev/null ;;
	*)
		is "$st" "done -" "xdp-redirect: the first task builds, boots and measures"
		v=$(q "SELECT value FROM samples WHERE job_id = ${J:-0} AND unit = 'Mpps' AND value > 0 LIMIT 1")
		ok "$([ -n "$v" ]; echo $?)" "... a positive sample in Mpps (${v:-none})"
		echo "# figure: xdp-redirect: ${v:-none} Mpps"
		api POST "/api/v1/jobs/$J/cancel" '' > /dev/null ;;
	esac
fi
echo "# the jobs' first tasks in $(($(date +%s) - start)) s"

tap_plan "$tap_n"
tap_done
