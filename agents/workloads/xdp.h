/*
 * xdp: the workload kind that runs xdp-bench (Debian's xdp-tools) in the
 * guest on a veth pair that the kernel's pktgen feeds, and reads the
 * summary xdp-bench prints when it is stopped with SIGINT. The parser,
 * its number reader and the script builder are public for the tests.
 */
#ifndef AGENT_XDP_H
#define AGENT_XDP_H

#include <stddef.h>

#include "workload.h"

struct sbuf;

/*
 * Where Debian's libxdp1 (amd64) keeps its BPF objects, compiled into
 * libxdp as its object path; the guest gets them at the same path.
 * xdp-bench's redirect modes load xdp_pass from the dispatcher's file,
 * and the script's xdp-loader does too.
 */
#define XDP_BPF_DIR "/usr/lib/x86_64-linux-gnu/bpf"
#define XDP_DISPATCHER_OBJ XDP_BPF_DIR "/xdp-dispatcher.o"

/* Larger outputs are refused (ERR_INVALID): an hour at -i 1 with -e is ~2 MB. */
#define XDP_MAX_INPUT (16u << 20)

/*
 * Reads the number at text: digits with thousands separators as
 * xdp-bench's %' prints them under an en_US locale ("12,345,678"; every
 * group after the first exactly three digits), or plain ("12345678"),
 * an optional fraction ("1.23"), and an optional SI suffix K, M or G
 * ("1.23M" is 1230000) right after it. *used gets how many bytes it took.
 * ERR_INVALID (with a message) when text holds no number or a malformed
 * one ("12,34", "1,,000", ",5"); *out is 0 then.
 */
int xdp_parse_number(double *out, size_t *used, const char *text);

/*
 * One xdp-bench run: its stdout and stderr together, as `xdp-bench MODE
 * ... 2>&1` ended by SIGINT gives them (xdp-tools 1.3 and later):
 *
 *   Dropping packets on xa1 (ifindex 2; driver veth)
 *   Summary                    15,256 rx/s                  0 err/s
 *   ...one such line per interval (-e adds indented detail lines)...
 *
 *     Packets received    : 31,476
 *     Average packets/s   : 15,738
 *     Rx dropped          : 31,476
 *
 * The redirect modes' interval lines start with "IN->OUT" and may carry
 * redir/s (with -s) and xmit/s columns; their summary adds "Packets
 * redirected" / "Average redir/s" and "Packets transmitted" / "Average
 * transmit/s". xdp-bench prints a summary line only when its figure is
 * not zero, and 1.4 and later print "Duration : 10.0s" first.
 *
 * A figure absent from the summary is -1 here (the drop and error
 * counts: 0, as xdp-bench means by leaving them out).
 */
struct xdp_result {
	char heading[160];          /* "Dropping packets on xa1 (ifindex 2; driver veth)"; "" when absent */
	int intervals;              /* interval lines ("Summary ... rx/s", "xa1->xb0 ... rx/s") */
	double interval_rx_min;     /* the smallest and largest rx/s of those lines; -1 when none */
	double interval_rx_max;
	double duration_s;          /* "Duration"; -1 when absent (xdp-tools before 1.4) */
	double rx_packets;          /* "Packets received" */
	double rx_pps;              /* "Average packets/s": what the metric pps is */
	double redir_packets;       /* "Packets redirected"; -1 when absent */
	double redir_pps;           /* "Average redir/s"; -1 when absent */
	double xmit_packets;        /* "Packets transmitted"; -1 when absent */
	double xmit_pps;            /* "Average transmit/s"; -1 when absent */
	double rx_dropped;          /* "Rx dropped"; 0 when absent */
	double tx_dropped;          /* "Tx dropped"; 0 when absent */
	double errors;              /* "Errors recorded"; 0 when absent */
	char warning[160];          /* the first complaint xdp-bench ran past ("Couldn't open socket ..."); "" when none */
	char error[256];            /* "" on success */
};

/*
 * Parses len bytes of text (need not be NUL-terminated; '\n' or '\r\n'
 * line ends). 0 when the summary holds "Packets received" and "Average
 * packets/s" (each summary figure once, the averages beside their
 * counts), and, for xdp-tools before 1.4 (no Duration line), the average
 * agrees with the count over the interval lines as xdp-bench derives it.
 * Otherwise out->error (and err_msg()) says why and:
 *
 *   ERR_UNPROCESSABLE  the run itself failed and the text says so:
 *                      xdp-bench's own message ("Failed to attach XDP
 *                      program: ...", "Couldn't find network interface
 *                      ..."; with a summary only "Failed during sample
 *                      run", the others are then warnings it ran past,
 *                      in out->warning), the script's ("xdp: ...",
 *                      "pktgen: ..."), or it ran and counted no packet
 *                      (interval lines all 0 rx/s, or none after its
 *                      heading)
 *   ERR_INVALID        not xdp-bench's output: empty, garbage, a NUL
 *                      byte, a malformed number, a summary cut short,
 *                      interval lines with packets but no summary (the
 *                      output was truncated, or xdp-bench was killed
 *                      without SIGINT), figures that do not agree
 *
 * out is always overwritten; after a failure only out->error means
 * anything.
 */
int xdp_parse(struct xdp_result *out, const char *text, size_t len);

/* The metrics: "pps" (received), "redir_pps" (needs -s), "xmit_pps"; the unit is XDP_UNIT. */
#define XDP_UNIT "Mpps"

/*
 * Fills s (overwritten) from r in Mpps: the metric's average, or a
 * failed run (value 0) saying why: r's error; the metric not in the
 * summary; or, in every mode but drop, more than 1% of the received
 * packets dropped or in error (a redirect that fails would still count
 * its packets as received: fast, and wrong). s->extra (owned by s) holds
 * the other figures. ERR_INVALID for an unknown metric (s failed too).
 */
int xdp_sample(struct run_sample *s, const struct xdp_result *r, const char *mode, const char *metric);

/* What xdp_script() builds. */
struct xdp_script_opts {
	const char *bench;          /* xdp-bench in the guest, full path */
	const char *loader;         /* xdp-loader, full path; needed by redirect, redirect-map and tx */
	const char *ip;             /* iproute2's ip, full path (busybox's ip makes no named veth peer) */
	const char *mode;           /* drop, pass, tx, redirect, redirect-map */
	const char *dev;            /* the device xdp-bench attaches to */
	const char *dev_out;        /* redirect modes: the device it redirects to */
	int duration;               /* seconds of measuring per run, 1..3600 */
	int interval;               /* xdp-bench -i, 1..duration */
	int stats;                  /* xdp-bench -s (redirect modes: the redir/s figures) */
	unsigned pkt_size;          /* pktgen's packets, 60..1500 */
};
#define XDP_SCRIPT_OPTS_INIT { NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, 0, 0 }

/* The source veth (pktgen sends on it) and, for the redirect modes, the sink behind dev_out. */
#define XDP_SRC_DEV "xdpsrc0"
#define XDP_SINK_DEV "xdpsink0"

/*
 * Appends the setup (run once at boot: bpffs, the veth pairs, pktgen, an
 * xdp_pass program where veth needs one to receive) and run_once():
 * pktgen starts, xdp-bench attaches, measures for o->duration seconds
 * and is stopped with SIGINT, pktgen stops; its output is run_once's
 * stdout. A guest kernel without BTF, veth or pktgen fails setup with the
 * config option it needs. ERR_INVALID on a bad option.
 */
int xdp_script(struct sbuf *sb, const struct xdp_script_opts *o);

#endif
