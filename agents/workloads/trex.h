/*
 * trex: the workload kind that drives a TRex traffic generator in its
 * stateless mode (JSON-RPC 2.0 over a ZeroMQ REQ socket on the sync port,
 * 4501 by default) and reads the rates its ports saw. The kind is pure:
 * its argv runs the project's client, bisect-trex (agents/tools/
 * trex_client.c), which speaks the protocol and prints one JSON object;
 * parse() reads that. The protocol's pure parts (rates, ports, requests,
 * replies, the sums over port stats) are here for the client, the tests
 * and the fuzz target.
 */
#ifndef AGENT_TREX_H
#define AGENT_TREX_H

#include <jansson.h>
#include <stddef.h>

struct run_sample;

#define TREX_MAX_PORTS 16
#define TREX_DEFAULT_SYNC_PORT 4501
/* TRex's STL API version the client announces in api_sync_v2. */
#define TREX_API_NAME "STL"
#define TREX_API_MAJOR 5
#define TREX_API_MINOR 1

/*
 * A rate as start_traffic's "mul" wants it: {"type", "op": "abs",
 * "value"}. Accepted: "10mpps", "1.5kpps", "500pps", "1gbps", "25gbpsl1"
 * ("bpsl1": layer-1 bits), "50%", or a bare number (a multiple of the
 * profile's own rate, type "raw"); case-insensitive, k/m/g scale.
 */
struct trex_mul {
	char type[16];          /* raw, pps, bps, bpsl1, percentage */
	double value;           /* > 0; percentage at most 100 */
};
int trex_rate_parse(struct trex_mul *m, const char *rate);
/* {"type": ..., "op": "abs", "value": ...}, new reference. */
json_t *trex_mul_json(const struct trex_mul *m);

/*
 * Port ids (0..255, at most TREX_MAX_PORTS, no repeats) from "0,1", [0, 1]
 * or ["0", "1"]. Returns how many (>= 1) or ERR_INVALID saying why.
 */
int trex_ports_parse(int *ports, size_t max, json_t *v);
/* The same from a string "0,1". */
int trex_ports_parse_str(int *ports, size_t max, const char *s);

/*
 * A JSON-RPC 2.0 request {"jsonrpc": "2.0", "id": id, "method": method,
 * "params": params}, with "api_h" added to params when api_h is not NULL
 * (the client's habit after api_sync_v2). params is stolen (NULL: {}).
 * The text is the caller's to free.
 */
char *trex_request(const char *method, json_t *params, const char *api_h, long long id);

/*
 * One reply of the server, as text of len bytes, to the request of that
 * id. 0 and *result (a new reference, any JSON type) when it holds
 * "result"; otherwise *result is NULL and err_msg() says why:
 * ERR_FAIL with the server's own message ("specific_err", else "message",
 * and its code) when it holds "error", ERR_INVALID when it is not a
 * JSON-RPC 2.0 reply to that id (not JSON, a batch, compressed, no
 * result).
 */
int trex_reply_parse(json_t **result, const char *buf, size_t len, long long id);

/* Packet and byte counters of a port, from a get_port_stats result. */
struct trex_counters {
	double opackets, ipackets, obytes, ibytes;
};
/* ERR_INVALID when a counter is missing, negative or not a number. */
int trex_counters_parse(struct trex_counters *c, json_t *port_stats);

/*
 * What one run measured, summed over its ports: the counters' growth
 * from before start_traffic to after the traffic's duration, over
 * seconds. rx_pct is rx packets as a share of tx packets (0 when none
 * went out).
 */
struct trex_rates {
	double seconds;
	double tx_pkts, rx_pkts, tx_bytes, rx_bytes;
	double tx_pps, rx_pps, tx_bps, rx_bps, rx_pct;
};
/* ERR_INVALID when a counter went backwards (the stats were cleared) or seconds <= 0. */
int trex_rates_compute(struct trex_rates *r, const struct trex_counters *before,
		       const struct trex_counters *after, size_t nports, double seconds);

/*
 * The client's output: one JSON object on the last non-empty line,
 * {"ok": true, "rx_pps": ..., ...} or {"ok": false, "step": "acquire",
 * "error": "..."}. Sets s to the metric (rx_pps, tx_pps, rx_bps, tx_bps,
 * rx_mpps, tx_mpps, rx_gbps, tx_gbps, rx_pct) or a failed sample saying
 * why; s->extra gets the rates when it succeeds. Returns 0 (s may be a
 * failed run the client reported), ERR_NOTFOUND when the output holds no
 * result of the client's (s says so), or ERR_INVALID for an unknown
 * metric (s is then failed too).
 */
int trex_output_parse(struct run_sample *s, const char *out, size_t len, const char *metric);

/* The unit of a metric ("pps", "Mpps", "bps", "Gbps", "%"); NULL when it is not one. */
const char *trex_metric_unit(const char *metric);

#endif
