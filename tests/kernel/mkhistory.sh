#!/bin/sh
# mkhistory.sh DIR: makes a kernel repository with a history to bisect.
#
# DIR becomes a git repository (branch main) of Debian's linux-source-6.1
# (/usr/src/linux-source-6.1.tar.xz): the pristine tree is the first
# commit, tagged v6.1-base, and 36 small commits follow (the last is
# tagged v6.1-synthetic), with fixed dates and authors through
# tests/lib/mkrepo.sh, so every commit id is the same on every machine and
# every run for a given linux-source-6.1 version (a newer Debian upload is
# another tree, so other ids).
#
# The series: documentation (Documentation/networking/*.rst), comments in
# net/ (tcp.c, udp.c, ip_output.c, pktgen.c, the tc actions...), pr_debug
# strings that a kernel without DEBUG does not compile in, comments in
# net drivers, and the removal of Debian's ignore-everything .gitignore
# rule; none adds or removes a line above existing code, so __LINE__ and
# the kernel's object code stay the same. Commit 24 of 36, "udp: account
# each received datagram before queueing it", is a SYNTHETIC regression:
# a loop of $UDP_SPIN volatile additions for every datagram in
# udp_queue_rcv_one_skb(). iperf3 UDP over the loopback of a TCG guest
# loses about 40% of its throughput to it (numbers in its message).
#
# Culprit reporting, as tests/lib/mkdemo.sh: writes DIR.culprit, two lines
#     <full sha of the culprit>
#     <its subject>
# and prints the same on stdout as one line: "culprit <sha> <subject>".
# Nothing else goes to stdout; progress and timings go to stderr.
#
# Exits non-zero if DIR exists and is not empty, or if linux-source-6.1 is
# not installed. Takes about a minute on an idle 2-core machine: unpacking
# 15-20 s, adding the 78k files of the base ~35 s, the 36 commits ~15 s;
# .git holds about 530 MB of loose objects (gc.auto is 0; 2 GB in all).
set -eu

TARBALL=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
# Volatile additions per received datagram in the culprit.
UDP_SPIN=20000

if [ $# -ne 1 ]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
D=${1%/}
if [ -e "$D" ] && [ -n "$(ls -A "$D" 2>/dev/null)" ]; then
	echo "mkhistory: $D exists and is not empty" >&2
	exit 1
fi
if [ ! -r "$TARBALL" ]; then
	echo "mkhistory: $TARBALL not found: linux-source-6.1 is not installed" \
		"(apt-get install linux-source-6.1)" >&2
	exit 1
fi

. "$(dirname "$0")/../lib/mkrepo.sh"

T0=$(date +%s)
say() {
	echo "mkhistory: [$(($(date +%s) - T0)) s] $*" >&2
}

mkdir -p "$D"
tar -xJf "$TARBALL" -C "$D" --strip-components=1 --no-same-owner
if [ ! -f "$D/net/ipv4/udp.c" ]; then
	echo "mkhistory: $TARBALL does not hold a kernel tree" >&2
	exit 1
fi
VERSION=$(sed -n 's/^VERSION = //p; s/^PATCHLEVEL = //p; s/^SUBLEVEL = //p' "$D/Makefile" | paste -sd.)
say "unpacked linux $VERSION"

mkrepo_init "$D"
# A commit with 75k files in the index would start "gc --auto" after
# every commit of the series, repacking the whole tree each time; packing
# is left to whoever keeps the repository. Level-1 zlib halves the time
# git add takes, and does not change an object's id.
mkrepo_git "$D" config gc.auto 0
mkrepo_git "$D" config core.looseCompression 1
mkrepo_git "$D" config core.untrackedCache true

# The tree as packaged, ignored files included (-f): its .gitignore files
# come with it, and a file they match would otherwise silently go missing.
mkrepo_tick "$D"
mkrepo_git "$D" add -A -f
say "added $(mkrepo_git "$D" ls-files | wc -l) files"
mkrepo_git "$D" commit -q -m "Linux $VERSION as packaged by Debian (linux-source-6.1)" \
	-m "The pristine tree of /usr/src/linux-source-6.1.tar.xz, the good end of the
history that tests/kernel/mkhistory.sh builds on top of it."
mkrepo_tag "$D" v6.1-base
say "base commit $(mkrepo_sha "$D" HEAD)"

N=0
CULPRIT=
CULPRIT_SUBJECT=

# commit SUBJECT BODY FILE...: stages the FILEs only (add -A would walk
# all 75k files again) and commits them; an edit that changed nothing is a
# bug in this script, or a linux-source-6.1 this script does not know.
commit() {
	_subj=$1 _body=$2
	shift 2
	if mkrepo_git "$D" diff --quiet -- "$@"; then
		echo "mkhistory: nothing changed for \"$_subj\"" >&2
		exit 1
	fi
	mkrepo_tick "$D"
	mkrepo_git "$D" add -f -- "$@"
	mkrepo_git "$D" commit -q -m "$_subj" -m "$_body"
	N=$((N + 1))
}

# append FILE: the text on stdin goes at the end of FILE.
append() {
	cat >> "$D/$1"
}

# subst FILE SED: rewrites FILE through a sed script (POSIX sed has no -i).
subst() {
	sed "$2" "$D/$1" > "$D/$1.tmp"
	mv "$D/$1.tmp" "$D/$1"
}

# rst FILE TITLE TEXT: a short section at the end of a reST document.
rst() {
	_t=$(printf '%s' "$2" | sed 's/./=/g')
	printf '\n%s\n%s\n\n%s\n' "$2" "$_t" "$3" | append "$1"
}

# ccomment FILE TEXT: a block comment at the end of a C file.
ccomment() {
	printf '\n/*\n%s\n */\n' "$(printf '%s\n' "$2" | sed 's/^/ * /; s/ $//')" | append "$1"
}

# --- the series ----------------------------------------------------------

# Debian's tarball ends the top-level .gitignore with "/*" (its packaging
# repository holds only debian/): every file of the tree is ignored, so
# "git status" shows no build output and "git add" wants -f for any path.
awk '/^# Debian packaging: ignore everything at the top level/ { skip = 1 }
	skip && /^!\/debian\/$/ { skip = 0; next }
	!skip { print }' "$D/.gitignore" > "$D/.gitignore.tmp"
# The blank comment line that opened the block is left; drop it too.
awk '{ l[NR] = $0 } END { n = NR; while (n > 0 && (l[n] == "#" || l[n] == "")) n--;
	for (i = 1; i <= n; i++) print l[i] }' "$D/.gitignore.tmp" > "$D/.gitignore"
rm -f "$D/.gitignore.tmp"
commit "gitignore: drop Debian's rule that ignores the whole tree" \
"linux-source-6.1 carries the .gitignore of Debian's packaging repository,
which ignores everything at the top level but debian/. In a repository of
the kernel itself that hides every untracked file, build output included,
and makes git add refuse paths without -f. Back to upstream's rules." .gitignore

rst Documentation/networking/ip-sysctl.rst "Measuring UDP receive paths" \
"iperf3 over loopback exercises udp_sendmsg() and __udp4_lib_rcv() on the
same CPU; compare runs with the same number of streams."
commit "docs: ip-sysctl: note how UDP receive paths are measured" \
"Readers looking for UDP tunables often want to measure them first." \
	Documentation/networking/ip-sysctl.rst

ccomment net/ipv4/tcp.c "tcp_sendmsg() and tcp_recvmsg() above are the hot paths of any
bulk transfer benchmark; keep their fast paths free of debugging aids."
commit "tcp: note which paths bulk transfer benchmarks exercise" \
"So that debugging code added to them is reconsidered." net/ipv4/tcp.c

rst Documentation/networking/pktgen.rst "Queue transmit mode" \
"With xmit_mode queue_xmit, packets pass the egress qdisc, so tc filters
attached with clsact are part of what pktgen measures."
commit "docs: pktgen: say that queue_xmit passes the egress qdisc" \
"People benchmarking clsact filters need to know which mode to use." \
	Documentation/networking/pktgen.rst

subst net/ipv4/fib_trie.c 's/pr_debug("In inflate\\n");/pr_debug("In inflate()\\n");/'
commit "ipv4: fib_trie: name the function in the inflate debug message" \
"Match the other pr_debug() calls that name their function." net/ipv4/fib_trie.c

rst Documentation/networking/af_xdp.rst "Benchmarking under emulation" \
"Under a fully emulated CPU (QEMU TCG) AF_XDP numbers are dominated by
the emulator; compare kernels on the same host and under the same load."
commit "docs: af_xdp: warn about numbers taken under emulation" \
"TCG results are only comparable with each other." Documentation/networking/af_xdp.rst

ccomment net/core/dev.c "__dev_queue_xmit() runs the egress clsact hook (sch_handle_egress())
before the qdisc; egress filters are on every transmitted packet's path."
commit "net: note where the egress clsact hook runs" \
"The egress hook's cost is easy to overlook when reading the qdisc code." net/core/dev.c

rst Documentation/networking/scaling.rst "Loopback" \
"Loopback traffic is received on the sending CPU through netif_rx(), so
RPS and RFS settings do not spread it."
commit "docs: scaling: explain loopback receive CPU" \
"A recurring question on netdev." Documentation/networking/scaling.rst

subst net/ipv4/fib_trie.c 's/pr_debug("In halve\\n");/pr_debug("In halve()\\n");/'
commit "ipv4: fib_trie: name the function in the halve debug message" \
"Same as for inflate." net/ipv4/fib_trie.c

ccomment net/ipv4/udp.c "Receive path summary: __udp4_lib_rcv() looks the socket up
(__udp4_lib_lookup(), compute_score()), then udp_queue_rcv_skb() and
udp_queue_rcv_one_skb() charge the datagram to the socket's receive queue."
commit "udp: summarize the receive path at the end of udp.c" \
"A map for readers of this long file; comment only." net/ipv4/udp.c

rst Documentation/networking/checksum-offloads.rst "Loopback" \
"Packets on the loopback device carry CHECKSUM_PARTIAL or are marked
CHECKSUM_UNNECESSARY; no checksum is computed for them."
commit "docs: checksum-offloads: describe loopback" \
"Loopback benchmarks do not measure checksumming." \
	Documentation/networking/checksum-offloads.rst

ccomment net/sched/sch_ingress.c "clsact: the same qdisc serves the ingress and the egress hook; the
two miniq pairs are swapped on every filter change (mini_qdisc_pair_swap)."
commit "net/sched: sch_ingress: document clsact's two hooks" \
"Comment only." net/sched/sch_ingress.c

rst Documentation/networking/segmentation-offloads.rst "UDP over loopback" \
"Large UDP datagrams over loopback are not segmented: the device MTU is
64 KiB, so iperf3 -l 8920 sends one skb per datagram."
commit "docs: segmentation-offloads: note UDP over loopback" \
"Explains iperf3 numbers on lo." Documentation/networking/segmentation-offloads.rst

ccomment net/sched/cls_bpf.c "Direct action mode (da) lets the program return the action itself,
which is what the clsact egress benchmarks use."
commit "net/sched: cls_bpf: note what direct action mode saves" \
"Comment only." net/sched/cls_bpf.c

subst net/ipv4/arp.c 's/pr_debug("trying to ucast probe in NUD_INVALID\\n");/pr_debug("trying to unicast probe in NUD_INVALID\\n");/'
commit "arp: spell out unicast in a debug message" \
"\"ucast\" is not used anywhere else in arp.c's messages." net/ipv4/arp.c

rst Documentation/networking/skbuff.rst "Cost per packet" \
"Most per-packet cost on the receive path is fixed, not per byte: large
datagrams amortize it, small ones expose it."
commit "docs: skbuff: note fixed per-packet costs" \
"Helps reading benchmark results at different sizes." Documentation/networking/skbuff.rst

ccomment net/ipv6/udp.c "The IPv6 receive path mirrors net/ipv4/udp.c: __udp6_lib_rcv(),
udpv6_queue_rcv_skb(), udpv6_queue_rcv_one_skb()."
commit "ipv6: udp: point at the IPv4 receive path" \
"Comment only." net/ipv6/udp.c

ccomment net/core/pktgen.c "pktgen results are printed in /proc/net/pktgen/<dev> as
\"Result: OK: <usec>(c...+d...) usec, <n> (<size>byte,<frags>frags)\"
followed by \"<pps>pps <Mb/sec>Mb/sec\"; tools parse these lines."
commit "pktgen: document the result line tools parse" \
"Its format is an interface for benchmark harnesses." net/core/pktgen.c

rst Documentation/networking/msg_zerocopy.rst "UDP" \
"MSG_ZEROCOPY on UDP sockets only pays off for large datagrams."
commit "docs: msg_zerocopy: note when UDP gains" \
"From list discussion." Documentation/networking/msg_zerocopy.rst

ccomment net/sched/act_pedit.c "pedit keys are applied in order; each key rewrites at most 32 bits."
commit "net/sched: act_pedit: note key granularity" "Comment only." net/sched/act_pedit.c

ccomment net/ipv4/ip_output.c "ip_make_skb() builds a whole UDP datagram when the socket is not
corked; ip_append_data() is the corked path."
commit "ipv4: note which path builds uncorked UDP datagrams" \
"Comment only." net/ipv4/ip_output.c

rst Documentation/networking/timestamping.rst "Emulated guests" \
"Software timestamps in emulated guests follow the guest clock, which may
drift from the host's under load."
commit "docs: timestamping: mention emulated guests" \
"Comment only." Documentation/networking/timestamping.rst

ccomment drivers/net/veth.c "veth delivers to the peer with veth_forward_skb(); an XDP program on
the peer runs in veth_poll() through veth_xdp_rcv()."
commit "veth: point at where the peer's XDP program runs" \
"Comment only." drivers/net/veth.c

# 24 of 36: the synthetic regression.
awk -v spin="$UDP_SPIN" '
function flush(  i) {
	for (i = 1; i <= nb; i++)
		print buf[i]
	nb = 0
}
# Comment blocks at column 0 are held back, so that the helper goes above
# the comment that documents udp_queue_rcv_one_skb().
inblk { buf[++nb] = $0; if (index($0, "*/")) inblk = 0; next }
/^\/\*/ { flush(); buf[++nb] = $0; if (!index(substr($0, 3), "*/")) inblk = 1; next }
/^static int udp_queue_rcv_one_skb\(struct sock \*sk, struct sk_buff \*skb\)$/ && !helper {
	print "/* Per-datagram receive accounting; see the commit that added it. */"
	print "static noinline void udp_rcv_account(const struct sk_buff *skb)"
	print "{"
	print "\tvolatile unsigned int sum = 0;"
	print "\tunsigned int i;"
	print ""
	print "\tfor (i = 0; i < " spin "; i++)"
	print "\t\tsum += i ^ skb->len;"
	print "}"
	print ""
	helper = 1
	infn = 1
}
{ flush() }
infn && /^\tnf_reset_ct\(skb\);$/ {
	print "\tudp_rcv_account(skb);"
	infn = 0
	call = 1
}
{ print }
END { flush(); if (!helper || !call) exit 1 }
' "$D/net/ipv4/udp.c" > "$D/net/ipv4/udp.c.tmp" || {
	echo "mkhistory: udp_queue_rcv_one_skb() not found as expected in net/ipv4/udp.c" >&2
	exit 1
}
mv "$D/net/ipv4/udp.c.tmp" "$D/net/ipv4/udp.c"
CULPRIT_SUBJECT="udp: account each received datagram before queueing it"
commit "$CULPRIT_SUBJECT" \
"SYNTHETIC REGRESSION made by tests/kernel/mkhistory.sh for bisectd's
kernel lab; not a real kernel change.

udp_queue_rcv_one_skb() now calls udp_rcv_account(), a noinline loop of
$UDP_SPIN additions to a volatile counter, for every datagram delivered
to a socket: a fixed cost per datagram, paid on the receive path of the
sending CPU for loopback traffic, dropped datagrams included. iperf3 UDP
(-u -b 0 -l 8920 -P 4 -t 3) over the loopback of a 2-vCPU QEMU TCG guest
(tinyconfig + etc/kconfig/*.config, 2-core host) received 630 Mbit/s
before (harmonic mean of 6 boots, 568-682) and 380 Mbit/s after (5 boots,
341-403): about 40% less. TCG slows the loop and the rest of the stack
alike, so the ratio holds when the host is busier. On real hardware the
loop costs some 30 microseconds per datagram (a store-to-load chain),
a far larger loss at tens of Gbit/s.

Nothing but the time spent changes: the sum is thrown away." net/ipv4/udp.c
CULPRIT=$(mkrepo_sha "$D" HEAD)

ccomment net/sched/act_mirred.c "mirred redirect to ingress re-enters the stack through netif_rx();
the recursion limit below protects against loops between devices."
commit "net/sched: act_mirred: explain the recursion limit" \
"Comment only." net/sched/act_mirred.c

rst Documentation/networking/netdevices.rst "Dummy devices" \
"The dummy driver drops every packet it is given; with pktgen it measures
the transmit path above the driver."
commit "docs: netdevices: describe dummy for benchmarks" \
"Comment only." Documentation/networking/netdevices.rst

ccomment net/xdp/xsk.c "Copy mode (XDP_COPY) works on every driver with XDP support, veth
included; zero-copy needs driver support."
commit "xsk: note which drivers copy mode covers" "Comment only." net/xdp/xsk.c

rst Documentation/networking/statistics.rst "UDP drops" \
"RcvbufErrors in /proc/net/snmp counts datagrams dropped because the
socket's receive buffer was full; iperf3 UDP reports them as loss."
commit "docs: statistics: relate UDP RcvbufErrors to iperf3 loss" \
"A recurring question." Documentation/networking/statistics.rst

subst net/ipv4/udp.c 's|^ \* Fixes:$| * Fixes (see git history for later ones):|'
commit "udp: point the header's change log at git history" \
"The list in the header stopped being kept up to date long ago." net/ipv4/udp.c

ccomment net/sched/cls_matchall.c "matchall has no classification cost beyond its actions, which makes
it the baseline for measuring actions such as pedit."
commit "net/sched: cls_matchall: note its use as a baseline" \
"Comment only." net/sched/cls_matchall.c

rst Documentation/networking/page_pool.rst "XDP" \
"Drivers with XDP support recycle pages through page_pool; veth uses it
for XDP frames since 5.x."
commit "docs: page_pool: mention veth" "Comment only." Documentation/networking/page_pool.rst

ccomment net/core/skbuff.c "kfree_skb_reason() records why a packet was dropped; the reasons
appear in the skb:kfree_skb tracepoint."
commit "net: skbuff: point at the drop reason tracepoint" \
"Comment only." net/core/skbuff.c

ccomment drivers/net/dummy.c "dummy_xmit() counts and frees; it is the cheapest transmit a
benchmark of the stack above the driver can have."
commit "dummy: note its role in transmit benchmarks" "Comment only." drivers/net/dummy.c

rst Documentation/networking/multiqueue.rst "Benchmarks" \
"The number of transmit queues affects qdisc locking; keep it the same
in runs that are compared."
commit "docs: multiqueue: note queues in benchmarks" "Comment only." \
	Documentation/networking/multiqueue.rst

ccomment net/ipv4/udp_offload.c "GRO for UDP only applies to sockets that asked for it
(UDP_GRO) or to tunnels; plain loopback iperf3 traffic is not aggregated."
commit "udp: offload: note when GRO applies" "Comment only." net/ipv4/udp_offload.c

rst Documentation/networking/filter.rst "Classic BPF in tc" \
"tc's bpf classifier accepts classic BPF bytecode inline
(bytecode '1,6 0 0 0,'), which needs no compiler."
commit "docs: filter: show inline classic BPF for tc" "Comment only." \
	Documentation/networking/filter.rst

mkrepo_tag "$D" v6.1-synthetic
say "$N commits on top of v6.1-base"

if [ "$(mkrepo_git "$D" rev-list --count v6.1-base..HEAD)" -ne "$N" ] ||
	[ -n "$(mkrepo_git "$D" status --porcelain)" ]; then
	echo "mkhistory: the series did not come out as planned" >&2
	exit 1
fi

printf '%s\n%s\n' "$CULPRIT" "$CULPRIT_SUBJECT" > "$D.culprit"
echo "culprit $CULPRIT $CULPRIT_SUBJECT"
