/*
 * trex: TRex stateless through the project's client (bisect-trex), run on
 * the agent (places WORKLOAD_HOST: boot none, and the methods that run
 * argv workloads on a device). The definition's keys: server, sync_port,
 * traffic_profile (a JSON stream profile on the agent), ports, rate, duration,
 * metric, user, rpc_timeout. check() fills in the defaults and derives
 * the client's argv into the definition's "trex_argv", so that argv()
 * can lend it as the other kinds lend theirs.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "trex.h"
#include "util.h"
#include "workload.h"

#define CLIENT "bisect-trex"
#define DEFAULT_METRIC "rx_pps"
#define DEFAULT_RATE "100%"
#define DEFAULT_USER "bisectd"
#define DEFAULT_DURATION 10
#define DEFAULT_RPC_TIMEOUT 10
#define HOST_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]_"
#define USER_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-@"
#define ARGV_KEY "trex_argv"

static const struct workload_key keys[] = {
	{ "server", WKEY_STR, 0, 0 },
	{ "sync_port", WKEY_INT, 1, 65535 },
	{ "traffic_profile", WKEY_STR, 0, 0 },
	{ "ports", WKEY_LIST, 0, 0 },
	{ "rate", WKEY_STR, 0, 0 },
	{ "duration", WKEY_INT, 1, 3600 },
	{ "metric", WKEY_STR, 0, 0 },
	{ "user", WKEY_STR, 0, 0 },
	{ "rpc_timeout", WKEY_INT, 1, 600 },
	{ NULL, 0, 0, 0 },
};

struct metric {
	const char *name, *unit, *field;
	double scale;
};

static const struct metric metrics[] = {
	{ "rx_pps", "pps", "rx_pps", 1 },
	{ "tx_pps", "pps", "tx_pps", 1 },
	{ "rx_mpps", "Mpps", "rx_pps", 1e-6 },
	{ "tx_mpps", "Mpps", "tx_pps", 1e-6 },
	{ "rx_bps", "bps", "rx_bps", 1 },
	{ "tx_bps", "bps", "tx_bps", 1 },
	{ "rx_gbps", "Gbps", "rx_bps", 1e-9 },
	{ "tx_gbps", "Gbps", "tx_bps", 1e-9 },
	{ "rx_pct", "%", "rx_pct", 1 },
};

#define NR_METRICS (sizeof(metrics) / sizeof(metrics[0]))

static const struct metric *metric_find(const char *name)
{
	for (size_t i = 0; name && i < NR_METRICS; i++)
		if (!strcmp(metrics[i].name, name))
			return &metrics[i];
	return NULL;
}

const char *trex_metric_unit(const char *metric)
{
	const struct metric *m = metric_find(metric);

	return m ? m->unit : NULL;
}

/* --- rates and ports ------------------------------------------------------ */

int trex_rate_parse(struct trex_mul *m, const char *rate)
{
	char low[32], *end;
	const char *suffix;
	double v, scale = 1;
	size_t n;

	memset(m, 0, sizeof(*m));
	if (!rate || !*rate || strlen(rate) >= sizeof(low))
		return err_set(ERR_INVALID, "a rate is a number with pps, bps, bpsl1 or %% (as 10mpps, "
			       "1gbps, 50%%), or a bare multiple of the profile's rate");
	for (n = 0; rate[n]; n++)
		low[n] = (char)tolower((unsigned char)rate[n]);
	low[n] = '\0';
	if (!isdigit((unsigned char)low[0]) && low[0] != '.')
		goto bad;
	errno = 0;
	v = strtod(low, &end);
	if (end == low || errno || !isfinite(v) || v <= 0)
		goto bad;
	suffix = end;
	if (!*suffix) {
		snprintf(m->type, sizeof(m->type), "raw");
	} else if (!strcmp(suffix, "%")) {
		if (v > 100)
			return err_set(ERR_INVALID, "a percentage of line rate is at most 100%%, not '%s'", rate);
		snprintf(m->type, sizeof(m->type), "percentage");
	} else {
		if (*suffix == 'k' || *suffix == 'm' || *suffix == 'g')
			scale = *suffix == 'k' ? 1e3 : *suffix == 'm' ? 1e6 : 1e9, suffix++;
		if (!strcmp(suffix, "pps"))
			snprintf(m->type, sizeof(m->type), "pps");
		else if (!strcmp(suffix, "bps"))
			snprintf(m->type, sizeof(m->type), "bps");
		else if (!strcmp(suffix, "bpsl1"))
			snprintf(m->type, sizeof(m->type), "bpsl1");
		else
			goto bad;
	}
	m->value = v * scale;
	if (!isfinite(m->value) || m->value > 1e15)
		goto bad;
	return 0;
bad:
	memset(m, 0, sizeof(*m));
	return err_set(ERR_INVALID, "'%s' is not a rate: a positive number with pps, bps, bpsl1 (k, m, g "
		       "scale them) or %%, as 10mpps, 1gbps, 50%%; or a bare multiple of the profile's rate",
		       rate);
}

json_t *trex_mul_json(const struct trex_mul *m)
{
	return json_pack("{s:s, s:s, s:f}", "type", m->type, "op", "abs", "value", m->value);
}

static int add_port(int *ports, size_t max, size_t n, long long id)
{
	if (id < 0 || id > 255)
		return err_set(ERR_INVALID, "a port id is from 0 to 255, not %lld", id);
	if (n >= max)
		return err_set(ERR_INVALID, "at most %zu ports", max);
	for (size_t i = 0; i < n; i++)
		if (ports[i] == id)
			return err_set(ERR_INVALID, "port %lld is named twice", id);
	ports[n] = (int)id;
	return 0;
}

/* A decimal port id of 1 to 3 digits from s (len bytes). */
static int port_word(long long *id, const char *s, size_t len)
{
	char buf[8];

	while (len && (*s == ' ' || *s == '\t'))
		s++, len--;
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (len == 0 || len > 3 || strspn(s, "0123456789") < len)
		return err_set(ERR_INVALID, "ports are port ids as \"0,1\" or [0, 1], not '%.*s'",
			       (int)(len > 16 ? 16 : len), s);
	memcpy(buf, s, len);
	buf[len] = '\0';
	*id = strtoll(buf, NULL, 10);
	return 0;
}

int trex_ports_parse_str(int *ports, size_t max, const char *s)
{
	size_t n = 0;
	long long id;
	int rc;

	if (!s || !*s)
		return err_set(ERR_INVALID, "ports must name at least one port, as \"0,1\" or [0, 1]");
	for (;;) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);

		if ((rc = port_word(&id, s, len)) < 0 || (rc = add_port(ports, max, n, id)) < 0)
			return rc;
		n++;
		if (!comma)
			break;
		s = comma + 1;
	}
	return (int)n;
}

int trex_ports_parse(int *ports, size_t max, json_t *v)
{
	size_t i, n = 0;
	json_t *item;
	long long id;
	int rc;

	if (json_is_string(v))
		return trex_ports_parse_str(ports, max, json_string_value(v));
	if (json_is_integer(v))
		return add_port(ports, max, 0, json_integer_value(v)) < 0 ? ERR_INVALID : 1;
	if (!json_is_array(v) || json_array_size(v) == 0)
		return err_set(ERR_INVALID, "ports must name at least one port, as \"0,1\" or [0, 1]");
	json_array_foreach(v, i, item) {
		if (json_is_integer(item)) {
			id = json_integer_value(item);
		} else if (json_is_string(item)) {
			if ((rc = port_word(&id, json_string_value(item), json_string_length(item))) < 0)
				return rc;
		} else {
			return err_set(ERR_INVALID, "ports are port ids as \"0,1\" or [0, 1]");
		}
		if ((rc = add_port(ports, max, n, id)) < 0)
			return rc;
		n++;
	}
	return (int)n;
}

/* --- JSON-RPC ------------------------------------------------------------- */

char *trex_request(const char *method, json_t *params, const char *api_h, long long id)
{
	json_t *req;
	char *text;

	if (!params)
		params = json_object();
	if (api_h)
		json_object_set_new(params, "api_h", json_string(api_h));
	req = json_pack("{s:s, s:I, s:s, s:o}", "jsonrpc", "2.0", "id", (json_int_t)id, "method", method,
			"params", params);
	text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	return text;
}

int trex_reply_parse(json_t **result, const char *buf, size_t len, long long id)
{
	json_error_t je;
	json_t *j, *err, *res, *jid;
	const char *msg;
	int rc;

	*result = NULL;
	if (len >= 4 && (unsigned char)buf[0] == 0xAB && (unsigned char)buf[1] == 0xE8 &&
	    (unsigned char)buf[2] == 0x5C && (unsigned char)buf[3] == 0xEA)
		return err_set(ERR_INVALID, "the server sent a compressed reply to a plain request");
	j = json_loadb(buf, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
	if (!j)
		return err_set(ERR_INVALID, "the reply is not JSON (%s at byte %d)", je.text, je.position);
	if (json_is_array(j)) {
		rc = err_set(ERR_INVALID, "the reply is a batch; the client sends one request at a time");
		goto out;
	}
	if (!json_is_object(j) || !json_is_string(json_object_get(j, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(j, "jsonrpc")), "2.0")) {
		rc = err_set(ERR_INVALID, "the reply is not a JSON-RPC 2.0 object");
		goto out;
	}
	jid = json_object_get(j, "id");
	err = json_object_get(j, "error");
	/* A parse error's reply may carry a null id; it answers us all the same. */
	if (!(json_is_null(jid) && err) && (!json_is_integer(jid) || json_integer_value(jid) != id)) {
		rc = err_set(ERR_INVALID, "the reply is not to request %lld", id);
		goto out;
	}
	if (err) {
		msg = json_string_value(json_object_get(err, "specific_err"));
		if (!msg || !*msg)
			msg = json_string_value(json_object_get(err, "message"));
		if (json_is_integer(json_object_get(err, "code")))
			rc = err_set(ERR_FAIL, "%.200s (code %lld)", msg && *msg ? msg : "error without a message",
				     (long long)json_integer_value(json_object_get(err, "code")));
		else
			rc = err_set(ERR_FAIL, "%.200s", msg && *msg ? msg : "error without a message");
		goto out;
	}
	res = json_object_get(j, "result");
	if (!res) {
		rc = err_set(ERR_INVALID, "the reply holds neither result nor error");
		goto out;
	}
	*result = json_incref(res);
	rc = 0;
out:
	json_decref(j);
	return rc;
}

/* --- stats ---------------------------------------------------------------- */

static int counter(double *out, json_t *stats, const char *key)
{
	json_t *v = json_object_get(stats, key);

	if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0)
		return err_set(ERR_INVALID, "port stats without a counter '%s'", key);
	*out = json_number_value(v);
	return 0;
}

int trex_counters_parse(struct trex_counters *c, json_t *st)
{
	memset(c, 0, sizeof(*c));
	if (!json_is_object(st))
		return err_set(ERR_INVALID, "port stats are not an object");
	if (counter(&c->opackets, st, "opackets") < 0 || counter(&c->ipackets, st, "ipackets") < 0 ||
	    counter(&c->obytes, st, "obytes") < 0 || counter(&c->ibytes, st, "ibytes") < 0)
		return ERR_INVALID;
	return 0;
}

int trex_rates_compute(struct trex_rates *r, const struct trex_counters *before,
		       const struct trex_counters *after, size_t nports, double seconds)
{
	memset(r, 0, sizeof(*r));
	if (!(seconds > 0) || !isfinite(seconds))
		return err_set(ERR_INVALID, "no time measured");
	for (size_t i = 0; i < nports; i++) {
		const struct trex_counters *b = &before[i], *a = &after[i];

		if (a->opackets < b->opackets || a->ipackets < b->ipackets || a->obytes < b->obytes ||
		    a->ibytes < b->ibytes)
			return err_set(ERR_INVALID, "a counter went backwards during the run (someone "
				       "cleared the stats)");
		r->tx_pkts += a->opackets - b->opackets;
		r->rx_pkts += a->ipackets - b->ipackets;
		r->tx_bytes += a->obytes - b->obytes;
		r->rx_bytes += a->ibytes - b->ibytes;
	}
	r->seconds = seconds;
	r->tx_pps = r->tx_pkts / seconds;
	r->rx_pps = r->rx_pkts / seconds;
	r->tx_bps = r->tx_bytes * 8 / seconds;
	r->rx_bps = r->rx_bytes * 8 / seconds;
	r->rx_pct = r->tx_pkts > 0 ? r->rx_pkts * 100 / r->tx_pkts : 0;
	return 0;
}

/* --- the client's output -------------------------------------------------- */

/* The last non-empty line of s, as a new string: the client's result line may be long. */
static char *last_line(const char *s, size_t len)
{
	size_t n;
	const char *start = str_last_line_span(&n, s, len);

	return xstrndup(start, n);
}

static const char *const rate_fields[] = {
	"tx_pps", "rx_pps", "tx_bps", "rx_bps", "rx_pct", "tx_pkts", "rx_pkts", "seconds", NULL
};

int trex_output_parse(struct run_sample *s, const char *out, size_t len, const char *metric)
{
	const struct metric *m = metric_find(metric);
	char *line = NULL;
	json_t *j = NULL, *ok, *v;
	const char *step, *msg;
	double value;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	snprintf(s->unit, sizeof(s->unit), "%s", m ? m->unit : "");
	if (!m) {
		workload_sample_fail(s, "trex: unknown metric '%.32s'", metric ? metric : "(none)");
		return err_set(ERR_INVALID, "trex: unknown metric '%s'", metric ? metric : "(none)");
	}
	line = last_line(out ? out : "", out ? len : 0);
	if (!*line) {
		workload_sample_fail(s, "trex: the client printed nothing");
		rc = ERR_NOTFOUND;
		goto out;
	}
	j = json_loads(line, 0, NULL);
	ok = json_object_get(j, "ok");
	if (!json_is_boolean(ok)) {
		workload_sample_fail(s, "trex: the client's output is not its JSON result: %.160s", line);
		rc = ERR_NOTFOUND;
		goto out;
	}
	if (!json_is_true(ok)) {
		step = json_string_value(json_object_get(j, "step"));
		msg = json_string_value(json_object_get(j, "error"));
		workload_sample_fail(s, "trex: %s%s%.200s", step ? step : "", step ? ": " : "",
				     msg && *msg ? msg : "failed without a message");
		goto out;
	}
	v = json_object_get(j, m->field);
	if (!json_is_number(v) || !isfinite(json_number_value(v))) {
		workload_sample_fail(s, "trex: the client's result has no %s", m->field);
		goto out;
	}
	value = json_number_value(v) * m->scale;
	if (value == 0) {
		workload_sample_fail(s, "trex: %s is 0: nothing %s during the run", m->name,
				     m->name[0] == 't' ? "was sent" : "arrived");
		goto out;
	}
	if (!(value > 0) || !isfinite(value)) {
		workload_sample_fail(s, "trex: %s is %g, not a rate", m->name, value);
		goto out;
	}
	s->value = value;
	s->extra = json_object();
	for (const char *const *f = rate_fields; *f; f++) {
		v = json_object_get(j, *f);
		if (json_is_number(v) && isfinite(json_number_value(v)))
			json_object_set_new(s->extra, *f, json_real(json_number_value(v)));
	}
out:
	json_decref(j);
	free(line);
	return rc;
}

/* --- the kind ------------------------------------------------------------- */

static int set_default_str(json_t *def, const char *key, const char *dflt)
{
	if (!workload_def_str(def, key, NULL))
		json_object_set_new(def, key, json_string(dflt));
	return 0;
}

static json_int_t def_int(json_t *def, const char *key, json_int_t dflt)
{
	json_t *v = json_object_get(def, key);

	if (!json_is_integer(v)) {
		json_object_set_new(def, key, json_integer(dflt));
		return dflt;
	}
	return json_integer_value(v);
}

static void push(json_t *argv, const char *opt, const char *val)
{
	json_array_append_new(argv, json_string(opt));
	json_array_append_new(argv, json_string(val));
}

static void push_int(json_t *argv, const char *opt, json_int_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	push(argv, opt, buf);
}

static int check(json_t *def, struct workload_bad *bad)
{
	int ports[TREX_MAX_PORTS], n;
	struct trex_mul mul;
	struct sbuf list = SBUF_INIT;
	const char *s;
	json_t *pj, *argv;
	json_int_t sync_port, duration, timeout;

	bad->item = -1;
	bad->key = "traffic_profile";
	s = workload_def_str(def, "traffic_profile", NULL);
	if (!s) {
		bad->missing = 1;
		return err_set(ERR_INVALID, "required for type trex: the stream profile (JSON) on the agent");
	}
	if (!workload_guest_path_ok(s))
		return err_set(ERR_INVALID, " must be an absolute path on the agent, not '%.64s'", s);

	bad->key = "server";
	set_default_str(def, "server", "127.0.0.1");
	s = workload_def_str(def, "server", NULL);
	if (!workload_only(s, HOST_CHARS, 253))
		return err_set(ERR_INVALID, " must be a host name or address, not '%.64s'", s);

	bad->key = "user";
	set_default_str(def, "user", DEFAULT_USER);
	if (!workload_only(workload_def_str(def, "user", NULL), USER_CHARS, 64))
		return err_set(ERR_INVALID, " must be 1 to 64 characters of A-Z a-z 0-9 . _ - @");

	bad->key = "rate";
	set_default_str(def, "rate", DEFAULT_RATE);
	if (trex_rate_parse(&mul, workload_def_str(def, "rate", NULL)) < 0) {
		char *msg = xasprintf(": %s", err_msg());

		err_set(ERR_INVALID, "%s", msg);
		free(msg);
		return ERR_INVALID;
	}

	bad->key = "ports";
	pj = json_object_get(def, "ports");
	if (!pj || json_is_null(pj)) {
		bad->missing = 1;
		return err_set(ERR_INVALID, "required for type trex: the TX ports, as [0, 1] or \"0,1\"");
	}
	if ((n = trex_ports_parse(ports, TREX_MAX_PORTS, pj)) < 0) {
		char *msg = xasprintf(": %s", err_msg());

		err_set(ERR_INVALID, "%s", msg);
		free(msg);
		return ERR_INVALID;
	}
	/* The canonical form: an array of integers (what the wire carries back). */
	pj = json_array();
	for (int i = 0; i < n; i++) {
		json_array_append_new(pj, json_integer(ports[i]));
		sbuf_addf(&list, "%s%d", i ? "," : "", ports[i]);
	}
	json_object_set_new(def, "ports", pj);

	bad->key = "metric";
	set_default_str(def, "metric", DEFAULT_METRIC);
	s = workload_def_str(def, "metric", NULL);
	if (!metric_find(s)) {
		struct sbuf names = SBUF_INIT;

		for (size_t i = 0; i < NR_METRICS; i++)
			sbuf_addf(&names, "%s%s", i ? ", " : "", metrics[i].name);
		if (!strcmp(s, "drop_pct"))
			err_set(ERR_INVALID, ": drop_pct can be 0, which a sample cannot hold: use rx_pct (the "
				"share of sent packets that arrived) with direction higher");
		else
			err_set(ERR_INVALID, " must be one of %s, not '%.32s'", names.buf, s);
		sbuf_release(&names);
		sbuf_release(&list);
		return ERR_INVALID;
	}
	bad->key = NULL;
	sync_port = def_int(def, "sync_port", TREX_DEFAULT_SYNC_PORT);
	duration = def_int(def, "duration", DEFAULT_DURATION);
	timeout = def_int(def, "rpc_timeout", DEFAULT_RPC_TIMEOUT);
	json_object_set_new(def, "unit", json_string(metric_find(s)->unit));

	argv = json_array();
	json_array_append_new(argv, json_string(CLIENT));
	push(argv, "--server", workload_def_str(def, "server", NULL));
	push_int(argv, "--sync-port", sync_port);
	push(argv, "--profile", workload_def_str(def, "traffic_profile", NULL));
	push(argv, "--ports", list.buf);
	push(argv, "--rate", workload_def_str(def, "rate", NULL));
	push_int(argv, "--duration", duration);
	push(argv, "--user", workload_def_str(def, "user", NULL));
	push_int(argv, "--timeout", timeout);
	json_object_set_new(def, ARGV_KEY, argv);
	sbuf_release(&list);
	return 0;
}

static int argv_of(const char ***argv, json_t *def)
{
	if (!json_is_array(json_object_get(def, ARGV_KEY)))
		return err_set(ERR_INVALID, "workload: trex definition was not checked (no %s)", ARGV_KEY);
	return workload_def_argv(argv, def, ARGV_KEY);
}

static void parse(struct run_sample *s, json_t *def, const struct run_output *o)
{
	int rc = trex_output_parse(s, o->out, o->out ? o->out_len : 0,
				   workload_def_str(def, "metric", DEFAULT_METRIC));

	if (rc == ERR_NOTFOUND && !o->ok) {
		/* No result of the client's own: how the run ended and what its stderr said. */
		char *line = o->err ? last_line(o->err, o->err_len) : xstrdup("");

		workload_sample_fail(s, "trex: %s %s%s%.200s", CLIENT, o->how && *o->how ? o->how : "failed",
				     *line ? ": " : "", line);
		free(line);
	} else if (s->value > 0 && !o->ok) {
		/* A result, then a bad end: not a run to trust. */
		json_decref(s->extra);
		s->extra = NULL;
		workload_sample_fail(s, "trex: %s %s after printing its result", CLIENT,
				     o->how && *o->how ? o->how : "failed");
	}
	workload_note_exit(s, o);
}

const struct workload_ops workload_trex = {
	.name = "trex",
	.places = WORKLOAD_HOST,
	.keys = keys,
	.about = "TRex stateless over its JSON-RPC API; the metric is a rate its ports counted",
	.check = check,
	.argv = argv_of,
	.parse = parse,
};
