/*
 * trex-standin: a stand-in for a TRex server in stateless mode, for
 * tests/t0016-trex.sh. It is not TRex: no packets are sent. It speaks
 * TRex's sync protocol (JSON-RPC 2.0 over ZeroMQ on the sync port; a
 * ROUTER socket, which a REQ client cannot tell from TRex's REP) and
 * answers the methods bisect-trex calls with replies of the shapes
 * TRex's sources give (src/stx/common/trex_rpc_cmds_common.cpp,
 * src/stx/stl/trex_stl_rpc_cmds.cpp, CGlobalStats::port_stats_to_json and
 * global_stats_to_json): api_sync_v2, acquire, release,
 * remove_all_streams, add_stream, start_traffic, stop_traffic,
 * get_port_stats, get_global_stats; error replies as TRex's
 * {"code": -32000, "message": "Failed To Execute Method",
 * "specific_err": ...}.
 *
 * The traffic: a started port sends at the rate start_traffic asked
 * ("pps"; a percentage of a 10 Mpps line; "bps" over 64-byte packets;
 * "raw" 1 Mpps per unit), and receives what the device under test
 * forwards: the smaller of that and the pps number in --dut-file (a
 * test's build writes it per commit), with a jitter of +-0.5%. The
 * counters grow for the duration.
 *
 * Faults, from --fault-file, read at every request (absent or empty:
 * none), one line "METHOD refuse [MESSAGE]", "METHOD stall" or
 * "METHOD drop": refuse answers that method with an execute error
 * (MESSAGE, or "port is already taken by 'alice'" for acquire),
 * stall never answers it, drop closes the connection on it (and listens
 * again). Every request's method is appended to --log.
 *
 * usage: trex-standin --port N [--ports 2] [--dut-file F] [--fault-file F] [--log F]
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <zmq.h>

#define MAX_PORTS 8
#define LINE_PPS 10e6
#define PKT_BYTES 64
#define API_H "zV5p8TqA"

struct port {
	char owner[64];
	long long session;
	char handler[16];
	int streams;
	int active;
	double start, duration, tx_pps, rx_pps;
	double opackets, ipackets;      /* at the last start_traffic */
};

static struct port ports[MAX_PORTS];
static int nports = 2;
static const char *dut_file, *fault_file, *log_file;
static unsigned long long seed = 88172645463325252ULL;
static int handler_seq;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double jitter(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return 1 + ((double)(seed % 10001) / 10000 - 0.5) * 0.01;
}

static double dut_pps(void)
{
	FILE *f = dut_file ? fopen(dut_file, "r") : NULL;
	double v = 0;

	if (f) {
		if (fscanf(f, "%lf", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v > 0 ? v : 1e12;
}

/* The fault for method: 'r' refuse, 's' stall, 'd' drop, 0 none; msg gets refuse's words. */
static int fault_for(const char *method, char *msg, size_t n)
{
	FILE *f = fault_file ? fopen(fault_file, "r") : NULL;
	char line[512], m[64], what[16];
	int kind = 0, off = 0;

	msg[0] = '\0';
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%63s %15s %n", m, what, &off) < 2 || strcmp(m, method))
			continue;
		if (!strcmp(what, "refuse")) {
			kind = 'r';
			snprintf(msg, n, "%s", off > 0 && (size_t)off < strlen(line) ? line + off : "");
		} else if (!strcmp(what, "stall")) {
			kind = 's';
		} else if (!strcmp(what, "drop")) {
			kind = 'd';
		}
		break;
	}
	fclose(f);
	return kind;
}

static void log_method(const char *method)
{
	FILE *f = log_file ? fopen(log_file, "a") : NULL;

	if (f) {
		fprintf(f, "%s\n", method);
		fclose(f);
	}
}

static json_t *error_reply(json_t *id, int code, const char *message, const char *specific)
{
	return json_pack("{s:s, s:O, s:{s:i, s:s, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
			 "error", "code", code, "message", message, "specific_err", specific);
}

static json_t *exec_err(json_t *id, const char *specific)
{
	return error_reply(id, -32000, "Failed To Execute Method", specific);
}

static json_t *ok_reply(json_t *id, json_t *result)
{
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

static double elapsed(const struct port *p)
{
	double e = now_s() - p->start;

	return p->active ? (e < p->duration ? e : p->duration) : 0;
}

static void port_stop(struct port *p)
{
	if (!p->active)
		return;
	p->opackets += p->tx_pps * elapsed(p);
	p->ipackets += p->rx_pps * elapsed(p);
	p->active = 0;
}

static json_t *port_stats(struct port *p)
{
	double e = elapsed(p), o = floor(p->opackets + p->tx_pps * e), i = floor(p->ipackets + p->rx_pps * e);
	int sending = p->active && now_s() - p->start < p->duration;

	return json_pack("{s:f, s:f, s:f, s:f, s:i, s:i, s:f, s:f, s:f, s:f, s:f}", "opackets", o,
			 "obytes", o * PKT_BYTES, "ipackets", i, "ibytes", i * PKT_BYTES, "ierrors", 0,
			 "oerrors", 0, "m_total_tx_bps", sending ? p->tx_pps * PKT_BYTES * 8 : 0.0,
			 "m_total_tx_pps", sending ? p->tx_pps : 0.0, "m_total_rx_bps",
			 sending ? p->rx_pps * PKT_BYTES * 8 : 0.0, "m_total_rx_pps", sending ? p->rx_pps : 0.0,
			 "m_cpu_util", sending ? 12.5 : 0.0);
}

static json_t *global_stats(void)
{
	double tx = 0, rx = 0;

	for (int i = 0; i < nports; i++)
		if (ports[i].active && now_s() - ports[i].start < ports[i].duration)
			tx += ports[i].tx_pps, rx += ports[i].rx_pps;
	return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:i, s:i}",
			 "m_cpu_util", tx > 0 ? 12.5 : 0.0, "m_cpu_util_raw", tx > 0 ? 12.5 : 0.0,
			 "m_bw_per_core", 9.1, "m_rx_cpu_util", 0.0, "m_rx_core_pps", 0.0,
			 "m_platform_factor", 1.0, "m_tx_bps", tx * PKT_BYTES * 8, "m_rx_bps", rx * PKT_BYTES * 8,
			 "m_tx_pps", tx, "m_rx_pps", rx, "m_tx_expected_pps", tx, "m_rx_drop_bps",
			 (tx - rx) * PKT_BYTES * 8, "m_total_alloc_error", 0, "m_total_queue_full", 0);
}

/* The port a request names, or NULL with *err set. */
static struct port *req_port(json_t *params, json_t *id, json_t **err, int owned)
{
	json_t *pid = json_object_get(params, "port_id");
	const char *h;
	struct port *p;

	if (!json_is_integer(pid)) {
		*err = error_reply(id, -32602, "Bad parameters for method", "field 'port_id' is missing");
		return NULL;
	}
	if (json_integer_value(pid) < 0 || json_integer_value(pid) >= nports) {
		char msg[64];

		snprintf(msg, sizeof(msg), "invalid port id - should be between 0 and %d", nports - 1);
		*err = error_reply(id, -32602, "Bad parameters for method", msg);
		return NULL;
	}
	p = &ports[json_integer_value(pid)];
	h = json_string_value(json_object_get(params, "handler"));
	if (owned && (!h || !p->owner[0] || strcmp(h, p->handler))) {
		*err = exec_err(id, "port is not owned by you or your current executing session");
		return NULL;
	}
	return p;
}

static json_t *start(struct port *p, json_t *params, json_t *id)
{
	json_t *mul = json_object_get(params, "mul");
	const char *type = json_string_value(json_object_get(mul, "type"));
	double v = json_number_value(json_object_get(mul, "value")), pps;
	double d = json_number_value(json_object_get(params, "duration"));

	if (!type || !json_is_number(json_object_get(mul, "value")) || v <= 0)
		return error_reply(id, -32602, "Bad parameters for method", "field 'mul' is missing or bad");
	if (strcmp(json_string_value(json_object_get(mul, "op")) ?: "", "abs"))
		return error_reply(id, -32602, "Bad parameters for method",
				   "start message can only specify absolute speed rate");
	if (p->streams == 0)
		return exec_err(id, "no streams attached to port");
	if (p->active && now_s() - p->start < p->duration)
		return exec_err(id, "port is active - please stop the port before starting it");
	if (!strcmp(type, "pps"))
		pps = v;
	else if (!strcmp(type, "percentage"))
		pps = LINE_PPS * v / 100;
	else if (!strcmp(type, "bps") || !strcmp(type, "bpsl1"))
		pps = v / (PKT_BYTES * 8);
	else if (!strcmp(type, "raw"))
		pps = 1e6 * v;
	else
		return error_reply(id, -32602, "Bad parameters for method", "field 'type' has a bad value");
	if (pps > LINE_PPS)
		return exec_err(id, "multiplier is beyond the line rate of the port");
	port_stop(p);
	p->tx_pps = pps;
	p->rx_pps = fmin(pps, dut_pps()) * jitter();
	if (p->rx_pps > pps)
		p->rx_pps = pps;
	p->duration = d > 0 ? d : 1e9;
	p->start = now_s();
	p->active = 1;
	return ok_reply(id, json_pack("{s:f, s:f}", "multiplier", pps / 1e6, "ts", now_s()));
}

/* The reply to one request; NULL: none (stall); *drop: close the connection. */
static json_t *handle(const char *buf, size_t len, int *drop)
{
	json_error_t je;
	json_t *req = json_loadb(buf, len, 0, &je), *id, *params, *err = NULL, *reply;
	const char *method;
	char msg[400];
	struct port *p;
	int fault;

	*drop = 0;
	if (!req)
		return error_reply(NULL, -32700, "Bad JSON Format", je.text);
	id = json_object_get(req, "id");
	params = json_object_get(req, "params");
	method = json_string_value(json_object_get(req, "method"));
	if (!method || !json_is_object(params)) {
		reply = error_reply(id, -32600, "Invalid Request", "no method or params");
		goto out;
	}
	log_method(method);
	fault = fault_for(method, msg, sizeof(msg));
	if (fault == 's') {
		reply = NULL;
		goto out;
	}
	if (fault == 'd') {
		*drop = 1;
		reply = NULL;
		goto out;
	}
	if (fault == 'r') {
		reply = exec_err(id, msg[0] ? msg : !strcmp(method, "acquire") ? "port is already taken by 'alice'" :
				 "refused by the stand-in");
		goto out;
	}
	if (strcmp(method, "api_sync_v2") && strcmp(method, "api_sync") &&
	    strcmp(json_string_value(json_object_get(params, "api_h")) ?: "", API_H)) {
		reply = exec_err(id, "API verification failed - API handler provided mismatch for class: 'STL'");
		goto out;
	}
	if (!strcmp(method, "api_sync_v2")) {
		if (strcmp(json_string_value(json_object_get(params, "name")) ?: "", "STL"))
			reply = exec_err(id, "unknown API class");
		else
			reply = ok_reply(id, json_pack("{s:s}", "api_h", API_H));
	} else if (!strcmp(method, "acquire")) {
		const char *user = json_string_value(json_object_get(params, "user"));

		if (!(p = req_port(params, id, &err, 0))) {
			reply = err;
		} else if (!user) {
			reply = error_reply(id, -32602, "Bad parameters for method", "field 'user' is missing");
		} else if (p->owner[0] && strcmp(p->owner, user) && !json_is_true(json_object_get(params, "force"))) {
			snprintf(msg, sizeof(msg), "port is already taken by '%s'", p->owner);
			reply = exec_err(id, msg);
		} else if (p->owner[0] && p->session != json_integer_value(json_object_get(params, "session_id")) &&
			   !json_is_true(json_object_get(params, "force"))) {
			/* TrexPort::acquire: the same user in another session needs force */
			snprintf(msg, sizeof(msg), "port is already owned by another session of '%s'", user);
			reply = exec_err(id, msg);
		} else {
			p->session = json_integer_value(json_object_get(params, "session_id"));
			snprintf(p->owner, sizeof(p->owner), "%s", user);
			snprintf(p->handler, sizeof(p->handler), "h%07d", ++handler_seq);
			reply = ok_reply(id, json_string(p->handler));
		}
	} else if (!strcmp(method, "release")) {
		if ((p = req_port(params, id, &err, 1))) {
			p->owner[0] = p->handler[0] = '\0';
			reply = ok_reply(id, json_object());
		} else {
			reply = err;
		}
	} else if (!strcmp(method, "remove_all_streams")) {
		if ((p = req_port(params, id, &err, 1))) {
			p->streams = 0;
			reply = ok_reply(id, json_object());
		} else {
			reply = err;
		}
	} else if (!strcmp(method, "add_stream")) {
		json_t *st = json_object_get(params, "stream");

		if (!(p = req_port(params, id, &err, 1)))
			reply = err;
		else if (!json_is_object(st) || !json_is_string(json_object_get(json_object_get(st, "mode"), "type")))
			reply = error_reply(id, -32602, "Bad parameters for method", "field 'mode' is missing");
		else if (!json_is_integer(json_object_get(params, "stream_id")))
			reply = error_reply(id, -32602, "Bad parameters for method", "field 'stream_id' is missing");
		else
			p->streams++, reply = ok_reply(id, json_object());
	} else if (!strcmp(method, "start_traffic")) {
		reply = (p = req_port(params, id, &err, 1)) ? start(p, params, id) : err;
	} else if (!strcmp(method, "stop_traffic")) {
		if ((p = req_port(params, id, &err, 1))) {
			port_stop(p);
			reply = ok_reply(id, json_object());
		} else {
			reply = err;
		}
	} else if (!strcmp(method, "get_port_stats")) {
		reply = (p = req_port(params, id, &err, 0)) ? ok_reply(id, port_stats(p)) : err;
	} else if (!strcmp(method, "get_global_stats")) {
		reply = ok_reply(id, global_stats());
	} else {
		reply = error_reply(id, -32601, "Method not found", method);
	}
out:
	json_decref(req);
	return reply;
}

static void *bind_router(void *ctx, const char *ep)
{
	void *s = zmq_socket(ctx, ZMQ_ROUTER);
	int zero = 0;

	zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero));
	for (int i = 0; i < 50; i++) {
		if (zmq_bind(s, ep) == 0)
			return s;
		usleep(100000);
	}
	fprintf(stderr, "trex-standin: cannot bind %s: %s\n", ep, zmq_strerror(zmq_errno()));
	exit(1);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "ports", required_argument, NULL, 'n' },
		{ "dut-file", required_argument, NULL, 'd' },
		{ "fault-file", required_argument, NULL, 'f' },
		{ "log", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	char ep[64];
	void *ctx, *sock;
	int opt, port = 0;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p': port = atoi(optarg); break;
		case 'n': nports = atoi(optarg); break;
		case 'd': dut_file = optarg; break;
		case 'f': fault_file = optarg; break;
		case 'l': log_file = optarg; break;
		default: return 2;
		}
	}
	if (port < 1 || port > 65535 || nports < 1 || nports > MAX_PORTS) {
		fprintf(stderr, "usage: trex-standin --port N [--ports 1..%d] [--dut-file F] [--fault-file F] "
			"[--log F]\n", MAX_PORTS);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%d", port);
	ctx = zmq_ctx_new();
	sock = bind_router(ctx, ep);
	fprintf(stderr, "trex-standin: listening on %s\n", ep);
	for (;;) {
		zmq_msg_t frames[3];
		int n = 0, more = 1, drop = 0;
		size_t sz;
		json_t *reply;
		char *text;

		/* [identity][empty][request] from a REQ peer */
		while (more && n < 3) {
			zmq_msg_init(&frames[n]);
			if (zmq_msg_recv(&frames[n], sock, 0) < 0) {
				zmq_msg_close(&frames[n]);
				if (zmq_errno() == EINTR)
					continue;
				return 1;
			}
			n++;
			sz = sizeof(more);
			zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &sz);
		}
		while (more) {
			zmq_msg_t skip;

			zmq_msg_init(&skip);
			zmq_msg_recv(&skip, sock, 0);
			zmq_msg_close(&skip);
			sz = sizeof(more);
			zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &sz);
		}
		reply = n == 3 ? handle(zmq_msg_data(&frames[2]), zmq_msg_size(&frames[2]), &drop) : NULL;
		if (reply) {
			text = json_dumps(reply, JSON_COMPACT);
			zmq_send(sock, zmq_msg_data(&frames[0]), zmq_msg_size(&frames[0]), ZMQ_SNDMORE);
			zmq_send(sock, "", 0, ZMQ_SNDMORE);
			zmq_send(sock, text, strlen(text), 0);
			free(text);
			json_decref(reply);
		}
		for (int i = 0; i < n; i++)
			zmq_msg_close(&frames[i]);
		if (drop) {
			/* Close every connection, then listen again. */
			zmq_close(sock);
			usleep(200000);
			sock = bind_router(ctx, ep);
		}
	}
}
