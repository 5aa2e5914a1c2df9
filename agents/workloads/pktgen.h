/*
 * pktgen: the workload kind that drives the kernel's packet generator
 * (/proc/net/pktgen) on a dummy device in the guest, optionally behind the
 * seed's clsact qdisc and egress bpf filter, and reads its Result line
 * (netparse.h). The script builder is public for the tests.
 */
#ifndef AGENT_PKTGEN_H
#define AGENT_PKTGEN_H

struct sbuf;

struct pktgen_script_opts {
	const char *tc;            /* iproute2's tc in the guest, by FULL path (busybox's tc knows no clsact); NULL: no qdisc */
	const char *ip;            /* iproute2's ip by full path; NULL: busybox's ip applet */
	const char *dev;           /* dummy device to create; NULL: "bisect0" */
	int clsact_bpf;            /* the seed: clsact qdisc + egress "bpf da bytecode '1,6 0 0 0,'" (needs tc) */
	unsigned long count;       /* packets per run; 0: 200000 */
	unsigned pkt_size;         /* 0: 60 */
	const char *xmit_mode;     /* "queue_xmit" (NULL) or "start_xmit" */
	const char *dst;           /* IPv4 destination; NULL: 1.1.1.1 */
	const char *dst_mac;       /* NULL: 11:11:11:11:11:11 */
	int thread;                /* kpktgend_<thread>, 0..cpus-1 */
};
#define PKTGEN_SCRIPT_OPTS_INIT { NULL, NULL, NULL, 0, 0, 0, NULL, NULL, NULL, 0 }

/* Appends the device's setup (run once at boot) and run_once(); ERR_INVALID on a bad option. */
int pktgen_script(struct sbuf *sb, const struct pktgen_script_opts *o);

#endif
