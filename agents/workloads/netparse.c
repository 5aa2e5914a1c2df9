/*
 * netparse: iperf3 -J and pktgen result parsing into numbers and samples.
 * Everything here trusts nothing about its input: it comes from a guest's
 * console or a tool we do not control, and may be cut short at any byte.
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "err.h"
#include "netparse.h"
#include "util.h"

static int fail(char *buf, size_t n, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Sets the result's error and the thread's last error to the same text. */
static int fail(char *buf, size_t n, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return err_set(code, "%s", buf);
}

#define IFAIL(out, code, ...) fail((out)->error, sizeof((out)->error), (code), __VA_ARGS__)

/* The value at a dotted path of object keys ("end.sum_received.bytes"), or NULL. */
static json_t *jpath(json_t *root, const char *path)
{
	char key[64];
	const char *p = path;

	while (root && *p) {
		size_t n = strcspn(p, ".");

		if (n >= sizeof(key) || !json_is_object(root))
			return NULL;
		memcpy(key, p, n);
		key[n] = '\0';
		root = json_object_get(root, key);
		p += n;
		if (*p == '.')
			p++;
	}
	return root;
}

/* A finite number at path: ERR_INVALID naming the path when it is missing or not one. */
static int need_num(double *v, json_t *root, const char *path, struct iperf3_result *out)
{
	json_t *x = jpath(root, path);

	if (!x)
		return IFAIL(out, ERR_INVALID, "iperf3: no %s in the output", path);
	if (!json_is_number(x) || !isfinite(json_number_value(x)))
		return IFAIL(out, ERR_INVALID, "iperf3: %s is not a number", path);
	*v = json_number_value(x);
	return 0;
}

/* As need_num, but absent is fine (*v = dflt); present and wrong is not. */
static int opt_num(double *v, json_t *root, const char *path, double dflt, struct iperf3_result *out)
{
	json_t *x = jpath(root, path);

	*v = dflt;
	if (!x || json_is_null(x))
		return 0;
	return need_num(v, root, path, out);
}

/* An integer in [lo, hi] at path; absent gives dflt when optional. */
static int get_int(long long *v, json_t *root, const char *path, long long lo, long long hi,
		   int optional, long long dflt, struct iperf3_result *out)
{
	json_t *x = jpath(root, path);

	*v = dflt;
	if (!x && optional)
		return 0;
	if (!x)
		return IFAIL(out, ERR_INVALID, "iperf3: no %s in the output", path);
	if (json_is_boolean(x)) {
		*v = json_is_true(x);
	} else if (json_is_integer(x)) {
		*v = json_integer_value(x);
	} else {
		return IFAIL(out, ERR_INVALID, "iperf3: %s is not an integer", path);
	}
	if (*v < lo || *v > hi)
		return IFAIL(out, ERR_INVALID, "iperf3: %s is %lld, out of range", path, *v);
	return 0;
}

/* iperf3's own "error": a string in every version seen, anything else is dumped. */
static int tool_error(struct iperf3_result *out, json_t *e)
{
	char *dump;
	int rc;

	if (json_is_string(e)) {
		const char *msg = json_string_value(e);

		return IFAIL(out, NETPARSE_ERR_RUN, "iperf3: %s", *msg ? msg : "error (no message)");
	}
	dump = json_dumps(e, JSON_COMPACT | JSON_ENCODE_ANY);
	rc = IFAIL(out, NETPARSE_ERR_RUN, "iperf3: %s", dump ? dump : "error (no message)");
	free(dump);
	return rc;
}

static int parse_iperf3(struct iperf3_result *out, json_t *root)
{
	json_t *e, *start, *end, *x;
	const char *proto;
	long long n;
	int rc;

	if (!json_is_object(root))
		return IFAIL(out, ERR_INVALID, "iperf3: output is JSON but not an object, not iperf3 -J output");
	/*
	 * The error comes first: a refused connection still prints start and
	 * end (empty), and an interrupted run prints partial sums that must
	 * not be taken for a measurement.
	 */
	e = json_object_get(root, "error");
	if (e && !json_is_null(e))
		return tool_error(out, e);
	start = json_object_get(root, "start");
	end = json_object_get(root, "end");
	if (!json_is_object(start) || !json_is_object(end))
		return IFAIL(out, ERR_INVALID, "iperf3: no 'start' and 'end' objects, not iperf3 -J output");

	x = jpath(root, "start.version");
	if (json_is_string(x))
		snprintf(out->version, sizeof(out->version), "%s", json_string_value(x));

	x = jpath(root, "start.test_start.protocol");
	if (!x)
		return IFAIL(out, ERR_INVALID, "iperf3: no start.test_start.protocol in the output");
	proto = json_string_value(x);
	if (proto && !strcmp(proto, "TCP"))
		out->protocol = NETPARSE_TCP;
	else if (proto && !strcmp(proto, "UDP"))
		out->protocol = NETPARSE_UDP;
	else if (proto && !strcmp(proto, "SCTP"))
		out->protocol = NETPARSE_SCTP;
	else
		return IFAIL(out, ERR_INVALID, "iperf3: start.test_start.protocol is not TCP, UDP or SCTP");

	if ((rc = get_int(&n, root, "start.test_start.num_streams", 1, INT_MAX, 0, 0, out)))
		return rc;
	out->streams = (int)n;
	if ((rc = get_int(&n, root, "start.test_start.reverse", 0, 1, 1, 0, out)))
		return rc;
	out->reverse = (int)n;
	if ((rc = get_int(&n, root, "start.test_start.omit", 0, INT_MAX, 1, 0, out)))
		return rc;
	out->omit = (int)n;

	/*
	 * The receiver's sums. Without them a UDP run has only end.sum, whose
	 * rate is the sender's: estimating the received rate from it and
	 * lost_percent would be a number iperf3 never measured.
	 */
	if (!json_is_object(jpath(root, "end.sum_received"))) {
		if (out->protocol == NETPARSE_UDP)
			return IFAIL(out, ERR_INVALID, "iperf3: no end.sum_received in the UDP output "
				     "(iperf3 older than 3.11?); end.sum is the sender's rate, not the received one");
		return IFAIL(out, ERR_INVALID, "iperf3: no end.sum_received in the output");
	}
	if ((rc = need_num(&out->bits_per_second, root, "end.sum_received.bits_per_second", out)) ||
	    (rc = need_num(&out->bytes, root, "end.sum_received.bytes", out)) ||
	    (rc = need_num(&out->duration, root, "end.sum_received.seconds", out)))
		return rc;
	if (out->protocol == NETPARSE_UDP) {
		if ((rc = need_num(&out->lost_percent, root, "end.sum_received.lost_percent", out)) ||
		    (rc = need_num(&out->jitter_ms, root, "end.sum_received.jitter_ms", out)))
			return rc;
		/* Old iperf3 could count reordering as negative loss: not checked. */
		if ((rc = get_int(&out->lost_packets, root, "end.sum_received.lost_packets",
				  LLONG_MIN, LLONG_MAX, 1, -1, out)) ||
		    (rc = get_int(&out->packets, root, "end.sum_received.packets", 0, LLONG_MAX, 1, -1, out)))
			return rc;
	} else if ((rc = get_int(&out->retransmits, root, "end.sum_sent.retransmits", 0, LLONG_MAX, 1, -1, out))) {
		return rc;
	}
	if ((rc = opt_num(&out->cpu_host, root, "end.cpu_utilization_percent.host_total", -1, out)) ||
	    (rc = opt_num(&out->cpu_remote, root, "end.cpu_utilization_percent.remote_total", -1, out)))
		return rc;

	if (out->bits_per_second < 0 || out->bytes < 0)
		return IFAIL(out, ERR_INVALID, "iperf3: end.sum_received has a negative rate or byte count");
	if (out->bits_per_second == 0 || out->bytes == 0) {
		if (out->protocol == NETPARSE_UDP)
			return IFAIL(out, NETPARSE_ERR_RUN, "iperf3: nothing received (end.sum_received.bits_per_second "
				     "is %g, lost %g%%)", out->bits_per_second, out->lost_percent);
		return IFAIL(out, NETPARSE_ERR_RUN, "iperf3: nothing received (end.sum_received.bits_per_second is %g)",
			     out->bits_per_second);
	}
	if (out->duration <= 0)
		return IFAIL(out, ERR_INVALID, "iperf3: end.sum_received.seconds is %g, not a duration", out->duration);
	out->bytes_per_second = out->bits_per_second / 8;
	out->kbytes_per_second = out->bytes_per_second / 1024;
	return 0;
}

/* Nothing measured: zeros, and -1 where the header promises "not applicable". */
static void iperf3_reset(struct iperf3_result *out)
{
	memset(out, 0, sizeof(*out));
	out->lost_percent = out->jitter_ms = out->cpu_host = out->cpu_remote = -1;
	out->lost_packets = out->packets = out->retransmits = -1;
}

int netparse_iperf3(struct iperf3_result *out, const char *json_text, size_t len)
{
	json_error_t jerr;
	json_t *root;
	int rc;

	iperf3_reset(out);
	if (!json_text || len == 0)
		return IFAIL(out, ERR_INVALID, "iperf3: empty output");
	if (len > NETPARSE_MAX_INPUT)
		return IFAIL(out, ERR_INVALID, "iperf3: output of %zu bytes is larger than %u", len, NETPARSE_MAX_INPUT);
	root = json_loadb(json_text, len, 0, &jerr);
	if (!root)
		return IFAIL(out, ERR_INVALID, "iperf3: output is not valid JSON (%s, line %d column %d)",
			     jerr.text, jerr.line, jerr.column);
	rc = parse_iperf3(out, root);
	json_decref(root);
	if (rc) {
		/* Nothing half-read survives a failure. */
		char msg[sizeof(out->error)];

		memcpy(msg, out->error, sizeof(msg));
		iperf3_reset(out);
		memcpy(out->error, msg, sizeof(msg));
	}
	return rc;
}

/* --- pktgen ------------------------------------------------------------- */

#define PFAIL(out, code, ...) fail((out)->error, sizeof((out)->error), (code), __VA_ARGS__)

/* Decimal digits into *v, no sign, no overflow. Advances *p on success. */
static int eat_num(const char **p, unsigned long long *v)
{
	const char *s = *p;
	unsigned long long x = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	while (isdigit((unsigned char)*s)) {
		unsigned d = (unsigned)(*s - '0');

		if (x > (ULLONG_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
		s++;
	}
	*p = s;
	*v = x;
	return 0;
}

static int eat(const char **p, const char *lit)
{
	size_t n = strlen(lit);

	if (strncmp(*p, lit, n))
		return -1;
	*p += n;
	return 0;
}

static const char *skip_blank(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Nothing but blanks and a \r up to the end of the line? */
static int at_eol(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	return *s == '\n' || *s == '\0';
}

/* The text of the line at s without its end, for messages. */
static int line_len(const char *s)
{
	size_t n = strcspn(s, "\n");

	while (n > 0 && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return n > 160 ? 160 : (int)n;
}

/* "OK: 1792112(c1792112+d0) usec, 200000 (60byte,0frags)" after "OK: ". */
static int parse_result_line(struct pktgen_result *out, const char *p)
{
	unsigned long long size, frags;

	if (eat_num(&p, &out->duration_us) || eat(&p, "(c") || eat_num(&p, &out->busy_us) ||
	    eat(&p, "+d") || eat_num(&p, &out->idle_us) || eat(&p, ") usec, ") ||
	    eat_num(&p, &out->packets) || eat(&p, " (") || eat_num(&p, &size) || eat(&p, "byte,") ||
	    eat_num(&p, &frags) || eat(&p, "frags)") || !at_eol(p))
		return -1;
	if (size > UINT_MAX || frags > UINT_MAX)
		return -1;
	out->pkt_size = (unsigned)size;
	out->frags = (unsigned)frags;
	return 0;
}

/* "  111600pps 53Mb/sec (53568000bps) errors: 0" */
static int parse_rate_line(struct pktgen_result *out, const char *p)
{
	p = skip_blank(p);
	if (eat_num(&p, &out->pps) || eat(&p, "pps ") || eat_num(&p, &out->mbps) || eat(&p, "Mb/sec (") ||
	    eat_num(&p, &out->bps) || eat(&p, "bps) errors: ") || eat_num(&p, &out->errors) || !at_eol(p))
		return -1;
	return 0;
}

static int parse_pktgen(struct pktgen_result *out, const char *buf)
{
	const char *result = NULL, *line, *p, *rate;
	unsigned long long bps, parts;
	int nresult = 0;

	for (line = buf; *line; ) {
		const char *nl = strchr(line, '\n');

		p = skip_blank(line);
		if (!strncmp(p, "Result:", 7)) {
			result = p + 7;
			nresult++;
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	if (nresult == 0)
		return PFAIL(out, ERR_INVALID, "pktgen: no 'Result:' line in the output");
	if (nresult > 1)
		return PFAIL(out, ERR_INVALID, "pktgen: %d 'Result:' lines, expected one device's", nresult);

	p = skip_blank(result);
	if (line_len(p) == 0)
		return PFAIL(out, ERR_INVALID, "pktgen: empty Result line (output cut short?)");
	/* "Result: O" at the very end is a cut, not pktgen's word. */
	if (!strchr(p, '\n') && strlen(p) < 4 && !strncmp("OK: ", p, strlen(p)))
		return PFAIL(out, ERR_INVALID, "pktgen: Result line cut short: %s", p);
	if (strncmp(p, "OK: ", 4))
		return PFAIL(out, NETPARSE_ERR_RUN, "pktgen: no completed run: Result: %.*s", line_len(p), p);
	/*
	 * "OK: " is also how pktgen acknowledges each configuration write
	 * ("OK: count=200000"): only the run summary starts with a number.
	 */
	if (!isdigit((unsigned char)p[4]))
		return PFAIL(out, NETPARSE_ERR_RUN, "pktgen: no completed run: Result: %.*s", line_len(p), p);
	if (parse_result_line(out, p + 4))
		return PFAIL(out, ERR_INVALID, "pktgen: cannot read the Result line: %.*s", line_len(p), p);
	/*
	 * The kernel prints elapsed, elapsed - idle and idle, each truncated
	 * to microseconds: the parts add up to the whole within one.
	 */
	if (__builtin_add_overflow(out->busy_us, out->idle_us, &parts) ||
	    (parts > out->duration_us ? parts - out->duration_us : out->duration_us - parts) > 1)
		return PFAIL(out, ERR_INVALID, "pktgen: Result line does not add up: c%llu + d%llu is not "
			     "%llu usec", out->busy_us, out->idle_us, out->duration_us);

	rate = strchr(p, '\n');
	if (!rate || at_eol(rate + 1))
		return PFAIL(out, ERR_INVALID, "pktgen: no rate line after the Result line (output cut short?)");
	rate++;
	if (parse_rate_line(out, rate))
		return PFAIL(out, ERR_INVALID, "pktgen: cannot read the rate line: %.*s",
			     line_len(skip_blank(rate)), skip_blank(rate));
	/* The kernel derives both from pps; a mismatch means the text was damaged. */
	if (out->mbps != out->bps / 1000000 ||
	    (!__builtin_mul_overflow(out->pps, 8ULL * out->pkt_size, &bps) && bps != out->bps))
		return PFAIL(out, ERR_INVALID, "pktgen: rate line does not add up: %llupps of %u bytes is not "
			     "%llubps / %lluMb/sec", out->pps, out->pkt_size, out->bps, out->mbps);
	if (out->pps == 0 || out->bps == 0 || out->packets == 0)
		return PFAIL(out, NETPARSE_ERR_RUN, "pktgen: nothing sent (%llu packets, %llupps)",
			     out->packets, out->pps);
	return 0;
}

int netparse_pktgen(struct pktgen_result *out, const char *text, size_t len)
{
	char *buf;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!text || len == 0)
		return PFAIL(out, ERR_INVALID, "pktgen: empty output");
	if (len > NETPARSE_MAX_INPUT)
		return PFAIL(out, ERR_INVALID, "pktgen: output of %zu bytes is larger than %u", len, NETPARSE_MAX_INPUT);
	if (memchr(text, '\0', len))
		return PFAIL(out, ERR_INVALID, "pktgen: output holds a NUL byte, not text");
	buf = xstrndup(text, len);
	rc = parse_pktgen(out, buf);
	free(buf);
	if (rc) {
		/* Nothing half-read survives a failure. */
		char msg[sizeof(out->error)];

		memcpy(msg, out->error, sizeof(msg));
		memset(out, 0, sizeof(*out));
		memcpy(out->error, msg, sizeof(msg));
	}
	return rc;
}

/* --- samples ------------------------------------------------------------ */

struct unit_scale {
	const char *name;
	double scale;           /* multiplies the base figure */
	int of_bps;             /* pktgen: the base is bps, else pps */
};

static const struct unit_scale iperf3_units[] = {
	{ "bits/s", 1, 1 },
	{ "Kbits/s", 1e-3, 1 },
	{ "Mbits/s", 1e-6, 1 },
	{ "Gbits/s", 1e-9, 1 },
	{ "Bytes/s", 1.0 / 8, 1 },
	{ "KBytes/s", 1.0 / 8 / 1024, 1 },
	{ "MBytes/s", 1.0 / 8 / 1024 / 1024, 1 },
	{ "GBytes/s", 1.0 / 8 / 1024 / 1024 / 1024, 1 },
};

/* Finds unit in table, "/sec" standing for "/s". NULL when unknown. */
static const struct unit_scale *find_unit(const struct unit_scale *t, size_t n, const char *unit)
{
	char norm[32];
	size_t len;

	if (!unit)
		return NULL;
	len = strlen(unit);
	if (len >= sizeof(norm))
		return NULL;
	memcpy(norm, unit, len + 1);
	if (len > 4 && !strcmp(norm + len - 4, "/sec"))
		norm[len - 2] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, norm))
			return &t[i];
	return NULL;
}

static json_t *ull_json(unsigned long long v)
{
	return v <= (unsigned long long)LLONG_MAX ? json_integer((json_int_t)v) : json_real((double)v);
}

static void sample_failed(struct run_sample *s, const char *msg)
{
	s->value = 0;
	snprintf(s->error, sizeof(s->error), "%s", msg);
}

static const char *proto_name(int p)
{
	return p == NETPARSE_UDP ? "udp" : p == NETPARSE_SCTP ? "sctp" : "tcp";
}

int netparse_iperf3_sample(struct run_sample *s, const struct iperf3_result *r, const char *unit)
{
	const struct unit_scale *u = find_unit(iperf3_units, sizeof(iperf3_units) / sizeof(iperf3_units[0]), unit);
	json_t *x;

	memset(s, 0, sizeof(*s));
	snprintf(s->unit, sizeof(s->unit), "%s", unit ? unit : "");
	if (!u) {
		sample_failed(s, "iperf3: unknown unit (bits/s, Kbits/s, Mbits/s, Gbits/s, "
			      "Bytes/s, KBytes/s, MBytes/s, GBytes/s)");
		return err_set(ERR_INVALID, "iperf3: unknown unit '%s'", unit ? unit : "(null)");
	}
	if (r->error[0]) {
		sample_failed(s, r->error);
		return 0;
	}
	s->value = r->bits_per_second * u->scale;
	x = json_object();
	json_object_set_new(x, "protocol", json_string(proto_name(r->protocol)));
	json_object_set_new(x, "streams", json_integer(r->streams));
	json_object_set_new(x, "reverse", json_boolean(r->reverse));
	json_object_set_new(x, "omit", json_integer(r->omit));
	json_object_set_new(x, "seconds", json_real(r->duration));
	json_object_set_new(x, "bytes", json_real(r->bytes));
	json_object_set_new(x, "bits_per_second", json_real(r->bits_per_second));
	if (r->protocol == NETPARSE_UDP) {
		json_object_set_new(x, "lost_percent", json_real(r->lost_percent));
		json_object_set_new(x, "jitter_ms", json_real(r->jitter_ms));
		if (r->lost_packets >= 0)
			json_object_set_new(x, "lost_packets", json_integer(r->lost_packets));
		if (r->packets >= 0)
			json_object_set_new(x, "packets", json_integer(r->packets));
	}
	if (r->retransmits >= 0)
		json_object_set_new(x, "retransmits", json_integer(r->retransmits));
	if (r->cpu_host >= 0)
		json_object_set_new(x, "cpu_host_percent", json_real(r->cpu_host));
	if (r->cpu_remote >= 0)
		json_object_set_new(x, "cpu_remote_percent", json_real(r->cpu_remote));
	if (r->version[0])
		json_object_set_new(x, "iperf3_version", json_string(r->version));
	s->extra = x;
	return 0;
}

static const struct unit_scale pktgen_units[] = {
	{ "pps", 1, 0 },
	{ "Kpps", 1e-3, 0 },
	{ "Mpps", 1e-6, 0 },
	{ "bps", 1, 1 },
	{ "Mb/s", 1e-6, 1 },
};

int netparse_pktgen_sample(struct run_sample *s, const struct pktgen_result *r, const char *metric)
{
	const struct unit_scale *u = find_unit(pktgen_units, sizeof(pktgen_units) / sizeof(pktgen_units[0]), metric);
	json_t *x;

	memset(s, 0, sizeof(*s));
	snprintf(s->unit, sizeof(s->unit), "%s", metric ? metric : "");
	if (!u) {
		sample_failed(s, "pktgen: unknown metric (pps, Kpps, Mpps, bps, Mb/s)");
		return err_set(ERR_INVALID, "pktgen: unknown metric '%s'", metric ? metric : "(null)");
	}
	if (r->error[0]) {
		sample_failed(s, r->error);
		return 0;
	}
	s->value = (double)(u->of_bps ? r->bps : r->pps) * u->scale;
	x = json_object();
	json_object_set_new(x, "pps", ull_json(r->pps));
	json_object_set_new(x, "bps", ull_json(r->bps));
	json_object_set_new(x, "mbps", ull_json(r->mbps));
	json_object_set_new(x, "errors", ull_json(r->errors));
	json_object_set_new(x, "packets", ull_json(r->packets));
	json_object_set_new(x, "duration_us", ull_json(r->duration_us));
	json_object_set_new(x, "idle_us", ull_json(r->idle_us));
	json_object_set_new(x, "pkt_size", json_integer(r->pkt_size));
	json_object_set_new(x, "frags", json_integer(r->frags));
	s->extra = x;
	return 0;
}
