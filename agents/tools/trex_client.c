/*
 * bisect-trex: one measurement through a TRex server in stateless mode,
 * the program a `trex` workload's argv runs (agents/workloads/trex.c).
 *
 * It speaks TRex's own protocol: JSON-RPC 2.0 over a ZeroMQ REQ socket on
 * the sync port. api_sync_v2 (the STL API's version, for the api_h every
 * later request carries), acquire on each port (for its handler; a port
 * an earlier session of the same user left acquired is taken over),
 * remove_all_streams and add_stream for each stream of the profile,
 * get_port_stats, start_traffic at the rate for the duration, the
 * duration waited out (get_global_stats halfway, for the server's CPU
 * load), get_port_stats again, stop_traffic and release. The rates are
 * the growth of the ports' counters over the duration, summed over the
 * ports.
 *
 * Output: one JSON object on stdout, {"ok": true, "rx_pps": ..., ...} or
 * {"ok": false, "step": "acquire", "error": "port 0: ..."} with exit 1;
 * the error on stderr too. An error reply of the server is passed on as
 * the server said it; no reply within --timeout seconds and a dropped
 * connection are named as such.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <zmq.h>

#include "err.h"
#include "trex.h"
#include "util.h"

#define PROFILE_MAX (16 << 20)
#define MAX_STREAMS 4096
#define SETTLE_MS 250
#define CLEANUP_TIMEOUT_MS 2000

struct opts {
	const char *server, *profile, *ports, *rate, *user;
	int sync_port, duration, timeout_s;
};

struct client {
	void *ctx, *sock, *mon;
	char endpoint[320];
	int timeout_ms;
	long long id;
	char *api_h;
	int ipv6;
	int connected;          /* the monitor saw the TCP connection made */
	int broken;             /* a timeout or a drop: the REQ socket is stuck */
	unsigned mon_seq;
};

static const char *step = "start";

static void fail_out(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void print_json(json_t *j)
{
	char *text = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(12));

	printf("%s\n", text ? text : "{\"ok\":false,\"error\":\"out of memory\"}");
	fflush(stdout);
	free(text);
}

static void fail_out(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	json_t *j;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "bisect-trex: %s: %s\n", step, msg);
	j = json_pack("{s:b, s:s, s:s}", "ok", 0, "step", step, "error", msg);
	print_json(j);
	json_decref(j);
	exit(1);
}

static int sock_open(struct client *c)
{
	char mon[64];
	int zero = 0;

	c->sock = zmq_socket(c->ctx, ZMQ_REQ);
	if (!c->sock)
		return err_set(ERR_FAIL, "zmq_socket: %s", zmq_strerror(zmq_errno()));
	zmq_setsockopt(c->sock, ZMQ_LINGER, &zero, sizeof(zero));
	if (c->ipv6)
		zmq_setsockopt(c->sock, ZMQ_IPV6, &c->ipv6, sizeof(c->ipv6));
	/* Watch the TCP connection, to tell a dropped one and a silent server apart. */
	snprintf(mon, sizeof(mon), "inproc://trex-monitor-%u", c->mon_seq++);
	if (zmq_socket_monitor(c->sock, mon, ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED) < 0)
		return err_set(ERR_FAIL, "zmq_socket_monitor: %s", zmq_strerror(zmq_errno()));
	c->mon = zmq_socket(c->ctx, ZMQ_PAIR);
	if (!c->mon || zmq_connect(c->mon, mon) < 0)
		return err_set(ERR_FAIL, "zmq monitor: %s", zmq_strerror(zmq_errno()));
	zmq_setsockopt(c->mon, ZMQ_LINGER, &zero, sizeof(zero));
	if (zmq_connect(c->sock, c->endpoint) < 0)
		return err_set(ERR_INVALID, "bad server or port %s: %s", c->endpoint,
			       zmq_strerror(zmq_errno()));
	c->connected = 0;
	c->broken = 0;
	return 0;
}

static void sock_close(struct client *c)
{
	if (c->sock) {
		zmq_socket_monitor(c->sock, NULL, 0);
		zmq_close(c->sock);
	}
	if (c->mon)
		zmq_close(c->mon);
	c->sock = c->mon = NULL;
}

/* One monitor event: its id, or 0 when none could be read. */
static int mon_event(struct client *c)
{
	zmq_msg_t m;
	uint16_t ev = 0;
	int more;
	size_t sz = sizeof(more);

	zmq_msg_init(&m);
	if (zmq_msg_recv(&m, c->mon, ZMQ_DONTWAIT) >= 0 && zmq_msg_size(&m) >= 2)
		memcpy(&ev, zmq_msg_data(&m), 2);
	/* The second frame is the endpoint. */
	more = 0;
	zmq_getsockopt(c->mon, ZMQ_RCVMORE, &more, &sz);
	while (more) {
		zmq_msg_close(&m);
		zmq_msg_init(&m);
		if (zmq_msg_recv(&m, c->mon, ZMQ_DONTWAIT) < 0)
			break;
		sz = sizeof(more);
		zmq_getsockopt(c->mon, ZMQ_RCVMORE, &more, &sz);
	}
	zmq_msg_close(&m);
	return ev;
}

/*
 * method(params) and its result (new reference). ERR_FAIL: the server's
 * error reply; ERR_TIMEOUT: no reply in time; ERR_CONFLICT: the
 * connection dropped; ERR_INVALID: a reply that is not one.
 */
static int call_ms(json_t **result, struct client *c, const char *method, json_t *params, int timeout_ms)
{
	long long id = ++c->id;
	char *text = trex_request(method, params, c->api_h, id);
	int64_t deadline = now_ms() + timeout_ms;
	zmq_msg_t reply;
	int rc;

	*result = NULL;
	if (c->broken) {
		free(text);
		return err_set(ERR_CONFLICT, "the connection is no longer usable");
	}
	if (zmq_send(c->sock, text, strlen(text), 0) < 0) {
		rc = err_set(ERR_FAIL, "cannot send '%s': %s", method, zmq_strerror(zmq_errno()));
		free(text);
		return rc;
	}
	free(text);
	for (;;) {
		zmq_pollitem_t items[2] = {
			{ c->sock, 0, ZMQ_POLLIN, 0 },
			{ c->mon, 0, ZMQ_POLLIN, 0 },
		};
		int64_t left = deadline - now_ms();

		if (left <= 0) {
			c->broken = 1;
			if (c->connected)
				return err_set(ERR_TIMEOUT, "no reply to '%s' from %s within %.1f s (the server "
					       "accepted the connection but did not answer)", method,
					       c->endpoint, timeout_ms / 1000.0);
			return err_set(ERR_TIMEOUT, "no reply to '%s' from %s within %.1f s (nothing accepted "
				       "a connection there: is TRex running, and is that its sync port?)",
				       method, c->endpoint, timeout_ms / 1000.0);
		}
		if (zmq_poll(items, 2, (long)left) < 0) {
			if (zmq_errno() == EINTR)
				continue;
			c->broken = 1;
			return err_set(ERR_FAIL, "zmq_poll: %s", zmq_strerror(zmq_errno()));
		}
		if (items[1].revents & ZMQ_POLLIN) {
			int ev = mon_event(c);

			if (ev == ZMQ_EVENT_CONNECTED)
				c->connected = 1;
			if (ev == ZMQ_EVENT_DISCONNECTED && !(items[0].revents & ZMQ_POLLIN)) {
				c->broken = 1;
				return err_set(ERR_CONFLICT, "the server at %s closed the connection without "
					       "answering '%s'", c->endpoint, method);
			}
		}
		if (items[0].revents & ZMQ_POLLIN)
			break;
	}
	zmq_msg_init(&reply);
	if (zmq_msg_recv(&reply, c->sock, 0) < 0) {
		zmq_msg_close(&reply);
		c->broken = 1;
		return err_set(ERR_FAIL, "cannot read the reply to '%s': %s", method, zmq_strerror(zmq_errno()));
	}
	rc = trex_reply_parse(result, zmq_msg_data(&reply), zmq_msg_size(&reply), id);
	zmq_msg_close(&reply);
	return rc;
}

static int call(json_t **result, struct client *c, const char *method, json_t *params)
{
	return call_ms(result, c, method, params, c->timeout_ms);
}

/* The call or the end of the run, with the server's words. */
static json_t *must(struct client *c, const char *method, json_t *params, int port)
{
	json_t *res;

	if (call(&res, c, method, params) < 0) {
		if (port >= 0)
			fail_out("port %d: %s", port, err_msg());
		fail_out("%s", err_msg());
	}
	return res;
}

static json_t *profile_load(size_t *n, const char *path)
{
	json_error_t je;
	char *text = NULL;
	size_t len;
	json_t *j, *list, *streams, *s;
	size_t i;

	if (file_read(&text, &len, path, PROFILE_MAX) < 0)
		fail_out("cannot read the profile %s: %s", path, err_msg());
	j = json_loadb(text, len, 0, &je);
	free(text);
	if (!j)
		fail_out("the profile %s is not JSON: %s at line %d", path, je.text, je.line);
	list = json_is_array(j) ? j : json_object_get(j, "streams");
	if (!json_is_array(list) || json_array_size(list) == 0 || json_array_size(list) > MAX_STREAMS)
		fail_out("the profile %s holds no streams: a JSON array of 1 to %d streams (or "
			 "{\"streams\": [...]}), each add_stream's \"stream\" object", path, MAX_STREAMS);
	streams = json_array();
	json_array_foreach(list, i, s) {
		json_t *st = json_is_object(json_object_get(s, "stream")) ? json_object_get(s, "stream") : s;
		json_t *id = json_object_get(s, "id");

		if (!json_is_object(st) || !json_is_object(json_object_get(st, "mode")))
			fail_out("the profile %s: stream %zu has no \"mode\" object (TRex's stream JSON, as "
				 "STLProfile.to_json() writes it)", path, i);
		st = json_deep_copy(st);
		if (!json_object_get(st, "next_stream_id"))
			json_object_set_new(st, "next_stream_id", json_integer(-1));
		json_array_append_new(streams, json_pack("{s:I, s:o}", "id",
				      json_is_integer(id) && json_integer_value(id) > 0 ?
				      json_integer_value(id) : (json_int_t)(i + 1), "stream", st));
	}
	json_decref(j);
	*n = json_array_size(streams);
	return streams;
}

/* Best effort after a failure: stop and release what this run took. */
static void cleanup(struct client *c, const int *ports, char **handlers, int n)
{
	json_t *res;

	if (c->broken) {
		sock_close(c);
		if (sock_open(c) < 0)
			return;
	}
	for (int i = 0; i < n; i++) {
		if (!handlers[i])
			continue;
		call_ms(&res, c, "stop_traffic", json_pack("{s:s, s:i, s:s}", "handler", handlers[i],
			"port_id", ports[i], "profile_id", "_"), CLEANUP_TIMEOUT_MS);
		json_decref(res);
		if (c->broken)
			return;
		call_ms(&res, c, "release", json_pack("{s:s, s:i}", "handler", handlers[i], "port_id",
			ports[i]), CLEANUP_TIMEOUT_MS);
		json_decref(res);
		if (c->broken)
			return;
	}
}

static void sleep_ms(int64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static struct client *g_client;
static int g_ports[TREX_MAX_PORTS], g_nports;
static char *g_handlers[TREX_MAX_PORTS];

static void at_exit(void)
{
	if (g_client && g_client->sock)
		cleanup(g_client, g_ports, g_handlers, g_nports);
}

/*
 * acquire without force; a port held by an earlier session of the same
 * user (a run of ours killed before its release) is taken over with
 * force. Another user's port is never taken.
 */
static json_t *acquire(struct client *c, int port, const char *user, unsigned session, int *took_over)
{
	char *stale = xasprintf("owned by another session of '%s'", user);
	json_t *res;
	int rc;

	rc = call(&res, c, "acquire", json_pack("{s:i, s:s, s:b, s:I}", "port_id", port, "user", user,
						"force", 0, "session_id", (json_int_t)session));
	if (rc == ERR_FAIL && strstr(err_msg(), stale)) {
		fprintf(stderr, "bisect-trex: port %d: %s: taking it over\n", port, err_msg());
		*took_over = 1;
		rc = call(&res, c, "acquire", json_pack("{s:i, s:s, s:b, s:I}", "port_id", port, "user", user,
							"force", 1, "session_id", (json_int_t)session));
	}
	free(stale);
	if (rc < 0)
		fail_out("port %d: %s", port, err_msg());
	return res;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bisect-trex --profile FILE --ports 0,1 [--server HOST] [--sync-port 4501]\n"
		"                   [--rate 100%%] [--duration 10] [--user NAME] [--timeout 10]\n");
}

static int num_opt(const char *name, const char *v, int min, int max)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (*end || errno || n < min || n > max) {
		fprintf(stderr, "bisect-trex: --%s must be a number from %d to %d, not '%s'\n", name, min, max, v);
		exit(2);
	}
	return (int)n;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "server", required_argument, NULL, 's' },
		{ "sync-port", required_argument, NULL, 'p' },
		{ "profile", required_argument, NULL, 'f' },
		{ "ports", required_argument, NULL, 'P' },
		{ "rate", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },
		{ "user", required_argument, NULL, 'u' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { "127.0.0.1", NULL, NULL, "100%", "bisectd", TREX_DEFAULT_SYNC_PORT, 10, 10 };
	struct trex_counters before[TREX_MAX_PORTS], after[TREX_MAX_PORTS];
	struct client c;
	struct trex_mul mul;
	struct trex_rates r;
	json_t *res, *streams, *out, *st;
	double mult = 0, cpu = -1;
	unsigned session;
	size_t nstreams, si;
	int opt, took_over = 0;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 's': o.server = optarg; break;
		case 'p': o.sync_port = num_opt("sync-port", optarg, 1, 65535); break;
		case 'f': o.profile = optarg; break;
		case 'P': o.ports = optarg; break;
		case 'r': o.rate = optarg; break;
		case 'd': o.duration = num_opt("duration", optarg, 1, 3600); break;
		case 'u': o.user = optarg; break;
		case 't': o.timeout_s = num_opt("timeout", optarg, 1, 600); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || !o.profile || !o.ports) {
		usage(stderr);
		return 2;
	}
	step = "options";
	if ((g_nports = trex_ports_parse_str(g_ports, TREX_MAX_PORTS, o.ports)) < 0)
		fail_out("--ports: %s", err_msg());
	if (trex_rate_parse(&mul, o.rate) < 0)
		fail_out("--rate: %s", err_msg());
	step = "profile";
	streams = profile_load(&nstreams, o.profile);

	memset(&c, 0, sizeof(c));
	c.timeout_ms = o.timeout_s * 1000;
	c.id = (long long)(getpid() & 0xffff) << 16;
	snprintf(c.endpoint, sizeof(c.endpoint), strchr(o.server, ':') && o.server[0] != '[' ?
		 "tcp://[%s]:%d" : "tcp://%s:%d", o.server, o.sync_port);
	c.ipv6 = strchr(o.server, ':') != NULL;
	c.ctx = zmq_ctx_new();
	step = "connect";
	if (!c.ctx || sock_open(&c) < 0)
		fail_out("%s", err_msg());
	g_client = &c;
	atexit(at_exit);

	step = "api_sync_v2";
	res = must(&c, "api_sync_v2", json_pack("{s:s, s:i, s:i}", "name", TREX_API_NAME, "major",
						TREX_API_MAJOR, "minor", TREX_API_MINOR), -1);
	if (!json_is_string(json_object_get(res, "api_h")))
		fail_out("the server's reply has no api_h");
	c.api_h = xstrdup(json_string_value(json_object_get(res, "api_h")));
	json_decref(res);

	session = (unsigned)getpid() ^ (unsigned)time(NULL);
	step = "acquire";
	for (int i = 0; i < g_nports; i++) {
		res = acquire(&c, g_ports[i], o.user, session, &took_over);
		if (!json_is_string(res))
			fail_out("port %d: the reply to acquire is not a handler", g_ports[i]);
		g_handlers[i] = xstrdup(json_string_value(res));
		json_decref(res);
	}
	step = "add_stream";
	for (int i = 0; i < g_nports; i++) {
		json_decref(must(&c, "remove_all_streams", json_pack("{s:s, s:i, s:s}", "handler", g_handlers[i],
				 "port_id", g_ports[i], "profile_id", "_"), g_ports[i]));
		json_array_foreach(streams, si, st) {
			json_decref(must(&c, "add_stream", json_pack("{s:s, s:i, s:s, s:O, s:O}", "handler",
					 g_handlers[i], "port_id", g_ports[i], "profile_id", "_", "stream_id",
					 json_object_get(st, "id"), "stream", json_object_get(st, "stream")), g_ports[i]));
		}
	}
	json_decref(streams);

	step = "get_port_stats";
	for (int i = 0; i < g_nports; i++) {
		res = must(&c, "get_port_stats", json_pack("{s:i}", "port_id", g_ports[i]), g_ports[i]);
		if (trex_counters_parse(&before[i], res) < 0)
			fail_out("port %d: %s", g_ports[i], err_msg());
		json_decref(res);
	}
	step = "start_traffic";
	for (int i = 0; i < g_nports; i++) {
		res = must(&c, "start_traffic", json_pack("{s:s, s:i, s:s, s:o, s:f, s:b}", "handler", g_handlers[i],
				"port_id", g_ports[i], "profile_id", "_", "mul", trex_mul_json(&mul),
				"duration", (double)o.duration, "force", 0), g_ports[i]);
		if (json_is_number(json_object_get(res, "multiplier")))
			mult = json_number_value(json_object_get(res, "multiplier"));
		json_decref(res);
	}
	/* The server's CPU load halfway, while it sends. */
	sleep_ms((int64_t)o.duration * 500);
	step = "get_global_stats";
	res = must(&c, "get_global_stats", NULL, -1);
	if (json_is_number(json_object_get(res, "m_cpu_util")))
		cpu = json_number_value(json_object_get(res, "m_cpu_util"));
	json_decref(res);
	/* The traffic stops itself after the duration; the counters settle. */
	sleep_ms((int64_t)o.duration * 500 + SETTLE_MS);
	step = "get_port_stats";
	for (int i = 0; i < g_nports; i++) {
		res = must(&c, "get_port_stats", json_pack("{s:i}", "port_id", g_ports[i]), g_ports[i]);
		if (trex_counters_parse(&after[i], res) < 0)
			fail_out("port %d: %s", g_ports[i], err_msg());
		json_decref(res);
	}
	step = "stop_traffic";
	for (int i = 0; i < g_nports; i++)
		json_decref(must(&c, "stop_traffic", json_pack("{s:s, s:i, s:s}", "handler", g_handlers[i],
				 "port_id", g_ports[i], "profile_id", "_"), g_ports[i]));
	step = "release";
	for (int i = 0; i < g_nports; i++) {
		json_decref(must(&c, "release", json_pack("{s:s, s:i}", "handler", g_handlers[i], "port_id",
				 g_ports[i]), g_ports[i]));
		free(g_handlers[i]);
		g_handlers[i] = NULL;
	}
	step = "stats";
	if (trex_rates_compute(&r, before, after, (size_t)g_nports, o.duration) < 0)
		fail_out("%s", err_msg());
	out = json_pack("{s:b, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "ok", 1, "rate", o.rate,
			"seconds", r.seconds, "tx_pkts", r.tx_pkts, "rx_pkts", r.rx_pkts, "tx_bytes", r.tx_bytes,
			"rx_bytes", r.rx_bytes, "tx_pps", r.tx_pps, "rx_pps", r.rx_pps, "tx_bps", r.tx_bps,
			"rx_bps", r.rx_bps);
	json_object_set_new(out, "rx_pct", json_real(r.rx_pct));
	json_object_set_new(out, "ports", json_array());
	for (int i = 0; i < g_nports; i++)
		json_array_append_new(json_object_get(out, "ports"), json_integer(g_ports[i]));
	if (mult > 0)
		json_object_set_new(out, "multiplier", json_real(mult));
	if (cpu >= 0)
		json_object_set_new(out, "cpu_util", json_real(cpu));
	if (took_over)
		json_object_set_new(out, "took_over", json_true());
	print_json(out);
	json_decref(out);
	g_client = NULL;
	sock_close(&c);
	zmq_ctx_term(c.ctx);
	free(c.api_h);
	return 0;
}
