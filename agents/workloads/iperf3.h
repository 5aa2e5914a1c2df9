/*
 * iperf3: the workload kind that runs `iperf3 -c ... -J` against a server
 * on the guest's loopback and reads the received throughput (netparse.h).
 * Its options and script builder are public for the tests and tools.
 */
#ifndef AGENT_IPERF3_H
#define AGENT_IPERF3_H

#include <stddef.h>

struct sbuf;

/*
 * The client options a workload may give, parsed from an argv:
 * -u/--udp, -4, -6, -R/--reverse, -t/--time S, -P/--parallel N,
 * -l/--length BYTES, -b/--bitrate RATE (digits with K/M/G), -O/--omit S,
 * -p/--port N. Anything else is ERR_INVALID naming the option; *bad
 * (may be NULL) gets the index of the offending element.
 */
struct iperf3_options {
	int udp, ipv6, reverse;
	int time_s, streams, length, omit_s, port; /* 0: iperf3's default */
	char bitrate[24];    /* "" when not given */
};
int iperf3_parse_options(struct iperf3_options *o, size_t *bad, char *const *argv);

struct iperf3_script_opts {
	const char *path;          /* guest path of iperf3; NULL: /usr/bin/iperf3 */
	int udp;                   /* -u */
	int ipv6;                  /* -6 against ::1, else -4 against 127.0.0.1 */
	int streams;               /* -P, 1..128; 0: 1 */
	int time_s;                /* -t, 1..3600; 0: 10 */
	int omit_s;                /* -O, 0..600 */
	int length;                /* -l in bytes, 0: iperf3's default */
	const char *bitrate;       /* -b: digits with an optional K/M/G suffix; NULL: iperf3's default */
	int reverse;               /* -R */
	int port;                  /* 0: 5201 */
};
#define IPERF3_SCRIPT_OPTS_INIT { NULL, 0, 0, 0, 0, 0, 0, NULL, 0, 0 }

/*
 * Appends run_once(): starts `iperf3 -s -1`, waits for it to listen, runs
 * the client with -J. Every value is range-checked or quoted; ERR_INVALID
 * otherwise.
 */
int iperf3_script(struct sbuf *sb, const struct iperf3_script_opts *o);

#endif
