/*
 * netparse: turns the output of the network workloads (iperf3 -J, the
 * /proc/net/pktgen/<dev> file after a run) into numbers and samples. Pure
 * parsing, no I/O: the adapters that run the tools call these, and the unit
 * tests feed them real captured output.
 */
#ifndef AGENT_NETPARSE_H
#define AGENT_NETPARSE_H

#include <stddef.h>

#include "err.h"
#include "workload.h"

/*
 * Return codes of the parsers, besides 0:
 *
 * NETPARSE_ERR_RUN (ERR_UNPROCESSABLE): the output is well formed and says
 *   the run itself failed: iperf3's "error" (connection refused, server
 *   busy, interrupted), nothing received, pktgen's Result not a completed
 *   run ("Idle", "Error starting", a config echo). The tool's message is in
 *   out->error; the adapter records a failed run with it.
 * ERR_INVALID: the output is not what the tool prints: empty, garbage,
 *   truncated, another program's JSON, a field missing or of the wrong
 *   type. out->error names what was wrong.
 *
 * Either way out->error is set and so is err_msg(); no number in out is
 * meaningful then.
 */
#define NETPARSE_ERR_RUN ERR_UNPROCESSABLE

/* Larger inputs are refused (ERR_INVALID): -P 128 -t 60 -i 1 is ~3 MB. */
#define NETPARSE_MAX_INPUT (64u << 20)

enum netparse_proto {
	NETPARSE_TCP = 1,
	NETPARSE_UDP,
	NETPARSE_SCTP,
};

/*
 * One iperf3 client run. Throughput is what the receiving side counted:
 * end.sum_received for every protocol and direction (with -R the client
 * receives; iperf3 puts the receiver's numbers there either way). For UDP
 * end.sum is NOT used for the rate: its bits_per_second is the sender's
 * (the same as sum_sent) even though its lost_percent is the receiver's.
 * Output without end.sum_received (UDP from iperf3 before 3.11) is refused
 * rather than estimated. Omitted seconds (-O) are already left out of the
 * end sums by iperf3.
 */
struct iperf3_result {
	int protocol;                   /* enum netparse_proto */
	char version[32];               /* start.version, "iperf 3.12"; "" when absent */
	int streams;                    /* start.test_start.num_streams (-P) */
	int reverse;                    /* start.test_start.reverse (-R) */
	int omit;                       /* start.test_start.omit (-O), seconds */
	double duration;                /* end.sum_received.seconds: the receiver's measured interval */
	double bytes;                   /* end.sum_received.bytes */
	double bits_per_second;         /* end.sum_received.bits_per_second */
	double bytes_per_second;        /* bits_per_second / 8 */
	double kbytes_per_second;       /* bytes_per_second / 1024: what `-f K` prints as KBytes/sec */
	double lost_percent;            /* UDP: end.sum_received.lost_percent; -1 otherwise */
	double jitter_ms;               /* UDP: end.sum_received.jitter_ms; -1 otherwise */
	long long lost_packets;         /* UDP: end.sum_received.lost_packets; -1 otherwise or absent */
	long long packets;              /* UDP: end.sum_received.packets; -1 otherwise or absent */
	long long retransmits;          /* TCP: end.sum_sent.retransmits; -1 otherwise or absent */
	double cpu_host;                /* end.cpu_utilization_percent.host_total; -1 when absent */
	double cpu_remote;              /* end.cpu_utilization_percent.remote_total; -1 when absent */
	char error[256];                /* "" on success */
};

/*
 * Parses the text of `iperf3 -c ... -J` (len bytes, need not be
 * NUL-terminated; json_text may be NULL when len is 0). 0 on success;
 * NETPARSE_ERR_RUN or ERR_INVALID as described above. out is always
 * overwritten.
 */
int netparse_iperf3(struct iperf3_result *out, const char *json_text, size_t len);

/*
 * One pktgen device after a run: the "Result: OK: ..." line and the rate
 * line after it, as the kernel's show_results() prints them:
 *
 *   Result: OK: 1792112(c1792112+d0) usec, 200000 (60byte,0frags)
 *     111600pps 53Mb/sec (53568000bps) errors: 0
 *
 * The text may hold the whole /proc/net/pktgen/<dev> file or just those
 * lines, with \n or \r\n line ends; exactly one Result line. Its figures
 * must agree as the kernel derives them (busy + idle = elapsed within 1
 * us, bps = pps * 8 * size, Mb/sec = bps / 1e6): else the text was
 * damaged, ERR_INVALID.
 */
struct pktgen_result {
	unsigned long long pps;         /* packets per second */
	unsigned long long mbps;        /* the Mb/sec figure as printed: bps / 1e6, truncated */
	unsigned long long bps;         /* pps * 8 * pkt_size */
	unsigned long long errors;      /* transmit errors */
	unsigned long long packets;     /* packets sent: the Result line's count, pkt_dev->sofar (pkts-sofar) */
	unsigned long long duration_us; /* elapsed, the first number of the Result line */
	unsigned long long busy_us;     /* the c... part: elapsed minus idle */
	unsigned long long idle_us;     /* the d... part */
	unsigned pkt_size;              /* bytes, "60byte" */
	unsigned frags;
	char error[256];                /* "" on success */
};

/* Parses len bytes of text (need not be NUL-terminated). As netparse_iperf3. */
int netparse_pktgen(struct pktgen_result *out, const char *text, size_t len);

/*
 * Fill s from a parse result. s is overwritten (memset): an s->extra it
 * held is not released, so pass a fresh or released sample. When r holds
 * an error (its parse failed) s becomes a failed run (value 0) with that
 * error, and 0 is returned: the adapter may always call parse then
 * *_sample. s->extra is a new object (owned by s) with the other figures.
 *
 * iperf3 units follow iperf3's -f: bits are decimal, bytes binary:
 * "bits/s" "Kbits/s" "Mbits/s" "Gbits/s" (x1000) and "Bytes/s" "KBytes/s"
 * "MBytes/s" "GBytes/s" (x1024); "/sec" is accepted for "/s". s->unit is
 * the string given.
 *
 * pktgen metrics: "pps", "Kpps", "Mpps", "bps", "Mb/s" (or "Mb/sec"). Mb/s
 * is bps / 1e6 with its decimals, not the truncated figure pktgen prints
 * (at 53 Mb/s truncation alone would be a 2% step).
 *
 * An unknown unit or metric: ERR_INVALID, and s is a failed run saying so.
 */
int netparse_iperf3_sample(struct run_sample *s, const struct iperf3_result *r, const char *unit);
int netparse_pktgen_sample(struct run_sample *s, const struct pktgen_result *r, const char *metric);

#endif
