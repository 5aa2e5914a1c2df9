/*
 * xdp: packets per second through an XDP program, measured by xdp-bench
 * (xdp-tools) on a veth pair in the guest that pktgen feeds: the seed's
 * XDP redirect. The definition's keys: "mode" (the xdp-bench command),
 * "interface" and "interface_out", "duration", "interval", "metric",
 * "stats", "pkt_size". See xdp.h for the parser and the script.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "util.h"
#include "workload.h"
#include "xdp.h"

#define IFNAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
#define DEFAULT_DEV "xdp0"
#define DEFAULT_DEV_OUT "xdp1"
#define DEFAULT_DURATION 10
#define DEFAULT_INTERVAL 1
#define DEFAULT_PKT_SIZE 64
/* More of the received packets than this dropped or in error: the path under test is broken. */
#define MAX_BAD_SHARE 0.01

static const char *const modes[] = { "drop", "pass", "tx", "redirect", "redirect-map", NULL };
static const char *const metrics[] = { "pps", "redir_pps", "xmit_pps", NULL };

static const struct workload_key keys[] = {
	{ "mode", WKEY_STR, 0, 0 },
	{ "interface", WKEY_STR, 0, 0 },
	{ "interface_out", WKEY_STR, 0, 0 },
	{ "duration", WKEY_INT, 1, 3600 },
	{ "interval", WKEY_INT, 1, 60 },
	{ "metric", WKEY_STR, 0, 0 },
	{ "stats", WKEY_BOOL, 0, 0 },
	{ "pkt_size", WKEY_INT, 60, 1500 },
	{ NULL, 0, 0, 0 },
};

/* --- the parser ----------------------------------------------------------- */

__attribute__((format(printf, 3, 4)))
static int rfail(struct xdp_result *r, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	return err_set(code, "%s", r->error);
}

int xdp_parse_number(double *out, size_t *used, const char *text)
{
	char digits[64];
	size_t n = 0, lead = 0;
	const char *p = text;
	char *end;
	double v;

	*out = 0;
	*used = 0;
	if (!text || !isdigit((unsigned char)*p))
		return err_set(ERR_INVALID, "no number at '%.20s'", text ? text : "");
	while (isdigit((unsigned char)*p)) {
		if (n + 1 >= sizeof(digits))
			return err_set(ERR_INVALID, "number too long at '%.20s'", text);
		digits[n++] = *p++;
		lead++;
	}
	if (*p == ',') {
		/* %' groups by three under en_US: "12,345,678", never "12,34" or "1234,567". */
		if (lead > 3)
			return err_set(ERR_INVALID, "malformed thousands separator in '%.20s'", text);
		while (*p == ',') {
			int k = 0;

			p++;
			while (isdigit((unsigned char)*p) && k < 4) {
				if (n + 1 >= sizeof(digits))
					return err_set(ERR_INVALID, "number too long at '%.20s'", text);
				digits[n++] = *p++;
				k++;
			}
			if (k != 3)
				return err_set(ERR_INVALID, "malformed thousands separator in '%.20s'", text);
		}
	}
	if (*p == '.' && isdigit((unsigned char)p[1])) {
		digits[n++] = *p++;
		while (isdigit((unsigned char)*p)) {
			if (n + 1 >= sizeof(digits))
				return err_set(ERR_INVALID, "number too long at '%.20s'", text);
			digits[n++] = *p++;
		}
	}
	digits[n] = '\0';
	v = strtod(digits, &end);
	if (*end || !isfinite(v))
		return err_set(ERR_INVALID, "not a number: '%.20s'", text);
	if ((*p == 'K' || *p == 'k' || *p == 'M' || *p == 'G') && !isalnum((unsigned char)p[1])) {
		v *= *p == 'G' ? 1e9 : *p == 'M' ? 1e6 : 1e3;
		p++;
	}
	*out = v;
	*used = (size_t)(p - text);
	return 0;
}

/* The summary's figures, as sample_summary_print() names them. */
static const struct {
	const char *label;
	size_t off;
} summary[] = {
	{ "Duration", offsetof(struct xdp_result, duration_s) },
	{ "Packets received", offsetof(struct xdp_result, rx_packets) },
	{ "Average packets/s", offsetof(struct xdp_result, rx_pps) },
	{ "Packets redirected", offsetof(struct xdp_result, redir_packets) },
	{ "Average redir/s", offsetof(struct xdp_result, redir_pps) },
	{ "Rx dropped", offsetof(struct xdp_result, rx_dropped) },
	{ "Tx dropped", offsetof(struct xdp_result, tx_dropped) },
	{ "Errors recorded", offsetof(struct xdp_result, errors) },
	{ "Packets transmitted", offsetof(struct xdp_result, xmit_packets) },
	{ "Average transmit/s", offsetof(struct xdp_result, xmit_pps) },
};
#define NSUMMARY (sizeof(summary) / sizeof(summary[0]))

/* How xdp-bench's commands announce themselves once attached. */
static const char *const headings[] = {
	"Dropping packets on ", "Passing packets on ", "Hairpinning (XDP_TX) packets on ",
	"Redirecting from ", NULL,
};

/* xdp-bench's own words for a run that did not happen. */
static const char *const failures[] = {
	"Failed ", "Couldn't ", "Unable ", "Can't ", "Cannot ", "Error", "Kernel doesn't ", NULL,
};

/* The columns of an interval line. */
static const char *const columns[] = { "rx/s", "redir/s", "err/s", "err,drop/s", "xmit/s", NULL };

struct pstate {
	unsigned seen;              /* bit i: summary[i] was read */
	double sum[3];              /* the interval lines' rx/s, redir/s, xmit/s, added up */
	int lines[3];               /* how many interval lines had each */
	char why[200];              /* the first failure line */
	int why_ours;               /* it came from the script (xdp_script()), not from xdp-bench */
	char broke[200];            /* "Failed during sample run: ...": the sampling itself stopped */
	char detail[120];           /* the first libbpf/libxdp line that says "fail" */
};

static int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static int one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

/* "  Packets received    : 31,476": 1 when it was one, 0 when not, ERR_INVALID when damaged. */
static int summary_line(struct xdp_result *r, struct pstate *ps, const char *line)
{
	const char *p = line + strspn(line, " \t");
	size_t used;
	double v;

	for (size_t i = 0; i < NSUMMARY; i++) {
		size_t n = strlen(summary[i].label);
		const char *q = p + n;

		if (strncmp(p, summary[i].label, n) || (*q != ' ' && *q != ':'))
			continue;
		q += strspn(q, " ");
		if (*q != ':')
			return 0;
		q++;
		q += strspn(q, " ");
		if (xdp_parse_number(&v, &used, q) < 0)
			return rfail(r, ERR_INVALID, "xdp-bench: bad figure in summary line '%.80s': %s", p, err_msg());
		q += used;
		if (i == 0 && *q == 's')
			q++;
		if (q[strspn(q, " \t")])
			return rfail(r, ERR_INVALID, "xdp-bench: junk after the figure in summary line '%.80s'", p);
		if (ps->seen & (1u << i))
			return rfail(r, ERR_INVALID, "xdp-bench: '%s' twice: two runs' output in one?", summary[i].label);
		ps->seen |= 1u << i;
		*(double *)(void *)((char *)r + summary[i].off) = v;
		return 1;
	}
	return 0;
}

/* "xa1->xb0   6,759 rx/s   6,760 redir/s   0 err,drop/s   6,760 xmit/s": as summary_line(). */
static int interval_line(struct xdp_result *r, struct pstate *ps, char *line)
{
	char *save = NULL, *prefix, *num, *unit;
	double rx = -1;
	int ncol = 0;

	if (isspace((unsigned char)line[0]) || !strstr(line, " rx/s"))
		return 0;
	prefix = strtok_r(line, " \t", &save);
	num = strtok_r(NULL, " \t", &save);
	unit = num ? strtok_r(NULL, " \t", &save) : NULL;
	if (!prefix || !unit || strcmp(unit, "rx/s"))
		return 0;
	for (; num; num = strtok_r(NULL, " \t", &save), unit = num ? strtok_r(NULL, " \t", &save) : NULL) {
		size_t used;
		double v;

		if (!unit || !one_of(unit, columns))
			return rfail(r, ERR_INVALID, "xdp-bench: interval line '%.40s ...' has a column '%.20s' it never prints",
				     prefix, unit ? unit : num);
		if (xdp_parse_number(&v, &used, num) < 0 || num[used])
			return rfail(r, ERR_INVALID, "xdp-bench: bad figure '%.20s' in interval line '%.40s ...'", num, prefix);
		if (ncol++ == 0)
			rx = v;
		for (int c = 0; c < 3; c++) {
			if (strcmp(unit, c == 0 ? "rx/s" : c == 1 ? "redir/s" : "xmit/s"))
				continue;
			if (ps->lines[c] > r->intervals)
				return rfail(r, ERR_INVALID, "xdp-bench: two %s columns in interval line '%.40s ...'",
					     unit, prefix);
			ps->sum[c] += v;
			ps->lines[c]++;
		}
	}
	if (r->intervals == 0 || rx < r->interval_rx_min)
		r->interval_rx_min = rx;
	if (rx > r->interval_rx_max)
		r->interval_rx_max = rx;
	r->intervals++;
	return 1;
}

static void other_line(struct xdp_result *r, struct pstate *ps, const char *line)
{
	const char *p = line + strspn(line, " \t");

	for (const char *const *h = headings; *h; h++)
		if (starts(line, *h) && !r->heading[0])
			snprintf(r->heading, sizeof(r->heading), "%s", line);
	for (const char *const *f = failures; *f; f++)
		if (starts(p, *f) && !ps->why[0])
			snprintf(ps->why, sizeof(ps->why), "%s", p);
	if (starts(p, "Failed during sample run") && !ps->broke[0])
		snprintf(ps->broke, sizeof(ps->broke), "%s", p);
	/* The script's own words: a setup step that failed, a tool missing from the guest. */
	if ((starts(p, "xdp: ") || starts(p, "pktgen: ") || strstr(p, " not found in the guest")) &&
	    (!ps->why[0] || !ps->why_ours)) {
		snprintf(ps->why, sizeof(ps->why), "%s", p);
		ps->why_ours = 1;
	}
	if ((starts(p, "libbpf: ") || starts(p, "libxdp: ")) && strstr(p, "fail") && !ps->detail[0])
		snprintf(ps->detail, sizeof(ps->detail), "%s", p);
}

/* Both or neither of a count and its average. */
static int pair_ok(struct xdp_result *r, const struct pstate *ps, unsigned count, unsigned avg)
{
	int has_count = !!(ps->seen & (1u << count)), has_avg = !!(ps->seen & (1u << avg));

	if (has_count == has_avg)
		return 0;
	return rfail(r, ERR_INVALID, "xdp-bench: summary has '%s' without '%s' (cut short?)",
		     summary[has_count ? count : avg].label, summary[has_count ? avg : count].label);
}

/*
 * xdp-tools before 1.4: a count is its interval column added up, and its
 * average that over the number of intervals, rounded.
 */
static int agree(struct xdp_result *r, const struct pstate *ps, int col, unsigned count, unsigned avg)
{
	double c = *(const double *)(const void *)((const char *)r + summary[count].off);
	double a = *(const double *)(const void *)((const char *)r + summary[avg].off);

	if (!(ps->seen & (1u << count)))
		return 0;
	if ((ps->lines[col] == r->intervals && fabs(ps->sum[col] - c) > 0.5) ||
	    fabs(a - c / r->intervals) > 0.5 + 1e-9)
		return rfail(r, ERR_INVALID,
			     "xdp-bench: '%s' %.0f and '%s' %.0f disagree with its %d interval lines "
			     "(%.0f in all): damaged or interleaved output",
			     summary[count].label, c, summary[avg].label, a, r->intervals, ps->sum[col]);
	return 0;
}

static int finish(struct xdp_result *r, const struct pstate *ps)
{
	const char *what = r->heading[0] ? r->heading : "its interface";

	if (!ps->seen) {
		if (ps->why_ours)
			return rfail(r, ERR_UNPROCESSABLE, "%s", ps->why);
		if (ps->why[0])
			return rfail(r, ERR_UNPROCESSABLE, "xdp-bench: %s%s%s%s", ps->why,
				     ps->detail[0] ? " (" : "", ps->detail, ps->detail[0] ? ")" : "");
		if (r->intervals > 0 && r->interval_rx_max <= 0)
			return rfail(r, ERR_UNPROCESSABLE,
				     "xdp-bench counted no packets in %d intervals (%s): no traffic reached the XDP program",
				     r->intervals, what);
		if (r->intervals > 0)
			return rfail(r, ERR_INVALID,
				     "xdp-bench: %d interval lines with packets but no summary: the output was cut short, "
				     "or xdp-bench was killed without SIGINT", r->intervals);
		if (r->heading[0])
			return rfail(r, ERR_UNPROCESSABLE,
				     "xdp-bench attached (%s) but printed no figures: it was stopped before its first "
				     "interval, or its sampling stalled", r->heading);
		return rfail(r, ERR_INVALID, "no xdp-bench summary or interval line in the output");
	}
	/*
	 * With a summary, xdp-bench's other complaints were warnings it ran
	 * past ("Couldn't open socket" when it asks for the device's queues):
	 * kept, not fatal. The script's words, or a sampling that stopped, are.
	 */
	if (ps->why_ours)
		return rfail(r, ERR_UNPROCESSABLE, "%s", ps->why);
	if (ps->broke[0])
		return rfail(r, ERR_UNPROCESSABLE, "xdp-bench: %s", ps->broke);
	if (ps->why[0])
		snprintf(r->warning, sizeof(r->warning), "%.159s", ps->why);
	/* summary[1] and [2]: received and its average; [3] [4] redirected; [8] [9] transmitted. */
	if (pair_ok(r, ps, 1, 2) < 0 || pair_ok(r, ps, 3, 4) < 0 || pair_ok(r, ps, 8, 9) < 0)
		return ERR_INVALID;
	if (!(ps->seen & (1u << 1)))
		return rfail(r, ERR_INVALID, "xdp-bench: summary without 'Packets received' (cut short?)");
	if (ps->seen & 1u) {
		if (r->duration_s <= 0)
			return rfail(r, ERR_INVALID, "xdp-bench: a Duration of %g s", r->duration_s);
	} else {
		/*
		 * Before 1.4 the summary adds up the interval lines' rx/s and
		 * averages over their number (sample_summary_update()).
		 */
		if (r->intervals == 0)
			return rfail(r, ERR_INVALID, "xdp-bench: a summary without interval lines (cut or filtered?)");
		if (agree(r, ps, 0, 1, 2) < 0 || agree(r, ps, 1, 3, 4) < 0 || agree(r, ps, 2, 8, 9) < 0)
			return ERR_INVALID;
	}
	if (r->rx_pps <= 0)
		return rfail(r, ERR_UNPROCESSABLE, "xdp-bench: an average of 0 packets/s (%.0f packets in all)",
			     r->rx_packets);
	return 0;
}

int xdp_parse(struct xdp_result *out, const char *text, size_t len)
{
	struct pstate ps;
	char *buf = NULL, *line, *next;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	memset(&ps, 0, sizeof(ps));
	out->interval_rx_min = out->interval_rx_max = -1;
	out->duration_s = -1;
	out->redir_packets = out->redir_pps = out->xmit_packets = out->xmit_pps = -1;
	if (!text || len == 0)
		return rfail(out, ERR_INVALID, "xdp-bench: empty output");
	if (len > XDP_MAX_INPUT)
		return rfail(out, ERR_INVALID, "xdp-bench: output of %zu bytes is larger than %u", len, XDP_MAX_INPUT);
	if (memchr(text, '\0', len))
		return rfail(out, ERR_INVALID, "xdp-bench: output holds a NUL byte, not text");
	buf = xstrndup(text, len);
	for (line = buf; line && !rc; line = next) {
		size_t n;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		n = strlen(line);
		while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t'))
			line[--n] = '\0';
		if (!n)
			continue;
		rc = summary_line(out, &ps, line);
		if (rc == 0) {
			other_line(out, &ps, line);
			rc = interval_line(out, &ps, line);
		}
		rc = rc < 0 ? rc : 0;
	}
	if (!rc)
		rc = finish(out, &ps);
	free(buf);
	if (rc) {
		char msg[sizeof(out->error)];

		memcpy(msg, out->error, sizeof(msg));
		memset(out, 0, sizeof(*out));
		memcpy(out->error, msg, sizeof(msg));
	}
	return rc;
}

/* --- the sample ----------------------------------------------------------- */

static void put(json_t *x, const char *key, double v)
{
	if (v >= 0)
		json_object_set_new(x, key, v <= 9007199254740992.0 && v == floor(v) ?
				    json_integer((json_int_t)v) : json_real(v));
}

int xdp_sample(struct run_sample *s, const struct xdp_result *r, const char *mode, const char *metric)
{
	double v, bad;
	json_t *x;

	memset(s, 0, sizeof(*s));
	snprintf(s->unit, sizeof(s->unit), "%s", XDP_UNIT);
	if (!metric || !one_of(metric, metrics)) {
		workload_sample_fail(s, "xdp: unknown metric (pps, redir_pps, xmit_pps)");
		return err_set(ERR_INVALID, "xdp: unknown metric '%s'", metric ? metric : "(null)");
	}
	if (r->error[0]) {
		workload_sample_fail(s, "%s", r->error);
		return 0;
	}
	v = !strcmp(metric, "pps") ? r->rx_pps : !strcmp(metric, "redir_pps") ? r->redir_pps : r->xmit_pps;
	if (v < 0) {
		workload_sample_fail(s, "xdp-bench's summary has no %s: %s", metric,
				     !strcmp(metric, "redir_pps") ?
				     "'Average redir/s' needs stats: true (xdp-bench -s) in a redirect mode" :
				     "'Average transmit/s' comes with the redirect modes only");
		return 0;
	}
	if (v == 0) {
		workload_sample_fail(s, "xdp-bench's %s averaged 0", metric);
		return 0;
	}
	bad = r->errors + r->tx_dropped + (mode && !strcmp(mode, "drop") ? 0 : r->rx_dropped);
	if (bad > MAX_BAD_SHARE * r->rx_packets) {
		workload_sample_fail(s, "xdp-bench: %.0f of %.0f packets dropped or in error (Rx dropped %.0f, "
				     "Tx dropped %.0f, Errors recorded %.0f): XDP %s does not work here",
				     bad, r->rx_packets, r->rx_dropped, r->tx_dropped, r->errors, mode ? mode : "?");
		return 0;
	}
	s->value = v * 1e-6;
	x = json_object();
	json_object_set_new(x, "metric", json_string(metric));
	put(x, "rx_packets", r->rx_packets);
	put(x, "rx_pps", r->rx_pps);
	put(x, "redir_packets", r->redir_packets);
	put(x, "redir_pps", r->redir_pps);
	put(x, "xmit_packets", r->xmit_packets);
	put(x, "xmit_pps", r->xmit_pps);
	put(x, "rx_dropped", r->rx_dropped);
	put(x, "tx_dropped", r->tx_dropped);
	put(x, "errors", r->errors);
	put(x, "duration_s", r->duration_s);
	json_object_set_new(x, "intervals", json_integer(r->intervals));
	if (r->warning[0])
		json_object_set_new(x, "warning", json_string(r->warning));
	put(x, "interval_rx_min", r->interval_rx_min);
	put(x, "interval_rx_max", r->interval_rx_max);
	s->extra = x;
	return 0;
}

/* --- the guest script ----------------------------------------------------- */

static int redirecting(const char *mode)
{
	return mode && (!strcmp(mode, "redirect") || !strcmp(mode, "redirect-map"));
}

static int ifname_ok(const char *s)
{
	return workload_only(s, IFNAME_CHARS, 15) && strcmp(s, XDP_SRC_DEV) && strcmp(s, XDP_SINK_DEV) &&
	       strcmp(s, "lo");
}

/* `"$IP" ARGS || { echo MSG >&2; return 1; }` */
static void step(struct sbuf *sb, const char *tool, const char *args, const char *msg)
{
	sbuf_adds(sb, "\t");
	workload_sh_quote(sb, tool);
	sbuf_addf(sb, " %s || { echo ", args);
	workload_sh_quote(sb, msg);
	sbuf_adds(sb, " >&2; return 1; }\n");
}

int xdp_script(struct sbuf *sb, const struct xdp_script_opts *o)
{
	int redir = redirecting(o->mode), tx = o->mode && !strcmp(o->mode, "tx");
	unsigned size = o->pkt_size ? o->pkt_size : DEFAULT_PKT_SIZE;
	char *args = NULL;

	if (!o->mode || !one_of(o->mode, modes))
		return err_set(ERR_INVALID, "xdp: mode must be one of drop, pass, tx, redirect, redirect-map");
	if (!workload_guest_path_ok(o->bench) || !workload_guest_path_ok(o->ip) ||
	    ((redir || tx) && !workload_guest_path_ok(o->loader)))
		return err_set(ERR_INVALID, "xdp: xdp-bench, ip and xdp-loader must be full guest paths");
	if (!ifname_ok(o->dev) || (redir && (!ifname_ok(o->dev_out) || !strcmp(o->dev, o->dev_out))))
		return err_set(ERR_INVALID, "xdp: interface names must be simple, distinct and not %s, %s or lo",
			       XDP_SRC_DEV, XDP_SINK_DEV);
	if (o->duration < 1 || o->duration > 3600 || o->interval < 1 || o->interval > o->duration ||
	    size < 60 || size > 1500 || (o->stats && !redir))
		return err_set(ERR_INVALID, "xdp: duration, interval, pkt_size or stats out of range");

	sbuf_adds(sb, "xdp_pg() {\n"
		      "\techo \"$2\" > \"$1\" || { echo \"pktgen: '$2' > $1 failed\" >&2; return 1; }\n"
		      "}\n"
		      "xdp_alive() {\n"
		      "\tgrep -q '^State:[[:space:]]*[^Z]' /proc/$1/status 2>/dev/null\n"
		      "}\n"
		      "xdp_setup() {\n");
	workload_sh_need_tool(sb, o->bench, "xdp-bench (xdp-tools)");
	workload_sh_need_tool(sb, o->ip, "iproute2's ip");
	if (redir || tx)
		workload_sh_need_tool(sb, o->loader, "xdp-loader (xdp-tools)");
	sbuf_adds(sb, "\tmount -t bpf bpf /sys/fs/bpf 2>/dev/null\n"
		      "\tif [ ! -e /sys/kernel/btf/vmlinux ]; then\n"
		      "\t\techo 'xdp: the guest kernel has no BTF (/sys/kernel/btf/vmlinux): xdp-bench loads "
		      "tp_btf programs, which need CONFIG_DEBUG_INFO_BTF=y' >&2\n"
		      "\t\treturn 1\n"
		      "\tfi\n");
	args = xasprintf("link add %s type veth peer name %s", XDP_SRC_DEV, o->dev);
	step(sb, o->ip, args, "xdp: no veth pair: the guest kernel needs CONFIG_VETH");
	free(args);
	if (redir) {
		args = xasprintf("link add %s type veth peer name %s", o->dev_out, XDP_SINK_DEV);
		step(sb, o->ip, args, "xdp: no second veth pair for the redirect");
		free(args);
	}
	sbuf_addf(sb, "\tfor d in %s %s%s%s%s%s; do\n", XDP_SRC_DEV, o->dev, redir ? " " : "",
		  redir ? o->dev_out : "", redir ? " " : "", redir ? XDP_SINK_DEV : "");
	sbuf_adds(sb, "\t\t");
	workload_sh_quote(sb, o->ip);
	sbuf_adds(sb, " link set dev \"$d\" up || return 1\n\tdone\n");
	/* veth receives redirected or hairpinned frames only where an XDP program runs. */
	if (redir) {
		args = xasprintf("load -m native %s %s -n xdp_pass", XDP_SINK_DEV, XDP_DISPATCHER_OBJ);
		step(sb, o->loader, args, "xdp: xdp-loader could not load xdp_pass on " XDP_SINK_DEV);
		free(args);
	}
	if (tx) {
		args = xasprintf("load -m native %s %s -n xdp_pass", XDP_SRC_DEV, XDP_DISPATCHER_OBJ);
		step(sb, o->loader, args, "xdp: xdp-loader could not load xdp_pass on " XDP_SRC_DEV);
		free(args);
	}
	sbuf_adds(sb, "\tif [ ! -e /proc/net/pktgen/pgctrl ]; then\n"
		      "\t\techo 'xdp: pktgen, the traffic source, is not in this kernel: CONFIG_NET_PKTGEN is needed' >&2\n"
		      "\t\treturn 1\n"
		      "\tfi\n"
		      "\txdp_pg /proc/net/pktgen/kpktgend_0 rem_device_all || return 1\n");
	sbuf_addf(sb, "\txdp_pg /proc/net/pktgen/kpktgend_0 'add_device %s' || return 1\n", XDP_SRC_DEV);
	sbuf_addf(sb, "\txdp_pg /proc/net/pktgen/%s 'count 0' || return 1\n", XDP_SRC_DEV);
	sbuf_addf(sb, "\txdp_pg /proc/net/pktgen/%s 'pkt_size %u' || return 1\n", XDP_SRC_DEV, size);
	sbuf_addf(sb, "\txdp_pg /proc/net/pktgen/%s 'dst 198.18.0.2' || return 1\n", XDP_SRC_DEV);
	sbuf_addf(sb, "\txdp_pg /proc/net/pktgen/%s \"dst_mac $(cat /sys/class/net/%s/address)\" || return 1\n",
		  XDP_SRC_DEV, o->dev);
	sbuf_adds(sb, "}\n"
		      "xdp_setup >/tmp/xdp-setup.log 2>&1\n"
		      "xdp_setup_rc=$?\n"
		      "run_once() {\n"
		      "\tif [ $xdp_setup_rc -ne 0 ]; then\n"
		      "\t\techo \"xdp setup failed (exit $xdp_setup_rc):\" >&2\n"
		      "\t\tcat /tmp/xdp-setup.log >&2\n"
		      "\t\treturn $xdp_setup_rc\n"
		      "\tfi\n"
		      "\t# pktgen's writer blocks until stopped; traffic flows before xdp-bench attaches,\n"
		      "\t# so that every interval it counts has some.\n"
		      "\t(echo start > /proc/net/pktgen/pgctrl) 2>/tmp/xdp-pktgen.err &\n"
		      "\tpg=$!\n"
		      "\tsleep 1\n\t");
	workload_sh_quote(sb, o->bench);
	sbuf_addf(sb, " %s%s -i %d %s%s%s >/tmp/xdp-bench.out 2>&1 &\n", o->mode, o->stats ? " -s" : "",
		  o->interval, o->dev, redir ? " " : "", redir ? o->dev_out : "");
	sbuf_addf(sb, "\tbp=$!\n"
		      "\t# Attached when it prints its heading (the verifier is slow under TCG).\n"
		      "\tn=0\n"
		      "\twhile xdp_alive $bp && [ $n -lt 120 ] &&\n"
		      "\t      ! grep -q -E '^(Dropping|Passing|Hairpinning|Redirecting) ' /tmp/xdp-bench.out; do\n"
		      "\t\tsleep 1\n"
		      "\t\tn=$((n + 1))\n"
		      "\tdone\n"
		      "\txdp_alive $bp && sleep %d\n"
		      "\tkill -INT $bp 2>/dev/null\n"
		      "\tn=0\n"
		      "\twhile xdp_alive $bp && [ $n -lt 20 ]; do sleep 1; n=$((n + 1)); done\n"
		      "\tif xdp_alive $bp; then\n"
		      "\t\tkill -KILL $bp\n"
		      "\t\techo 'xdp: xdp-bench did not stop within 20 s of SIGINT: killed' >&2\n"
		      "\tfi\n"
		      "\twait $bp\n"
		      "\trc=$?\n"
		      "\techo stop > /proc/net/pktgen/pgctrl\n"
		      "\twait $pg\n"
		      "\tcat /tmp/xdp-bench.out\n"
		      "\t# No summary: what pktgen said, if anything, is the likelier reason.\n"
		      "\tif ! grep -q 'Packets received' /tmp/xdp-bench.out && [ -s /tmp/xdp-pktgen.err ]; then\n"
		      "\t\tsed 's/^/pktgen: /' /tmp/xdp-pktgen.err\n"
		      "\tfi\n"
		      "\treturn $rc\n"
		      "}\n", o->duration);
	return 0;
}

/* --- the kind ------------------------------------------------------------- */

static int bad_key(struct workload_bad *bad, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad_key(struct workload_bad *bad, const char *key, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	bad->key = key;
	return err_set(ERR_INVALID, "%s", msg);
}

static void set_default_int(json_t *def, const char *key, json_int_t v)
{
	json_t *cur = json_object_get(def, key);

	if (!cur || json_is_null(cur))
		json_object_set_new(def, key, json_integer(v));
}

static int check(json_t *def, struct workload_bad *bad)
{
	const char *mode = workload_def_str(def, "mode", NULL);
	const char *dev = workload_def_str(def, "interface", NULL);
	const char *dev_out = workload_def_str(def, "interface_out", NULL);
	const char *metric = workload_def_str(def, "metric", NULL);
	json_t *stats = json_object_get(def, "stats");
	json_int_t duration, interval;
	int redir;

	if (!mode) {
		bad->key = "mode";
		bad->missing = 1;
		return err_set(ERR_INVALID, "the xdp-bench command: drop, pass, tx, redirect or redirect-map");
	}
	if (!one_of(mode, modes))
		return bad_key(bad, "mode", " must be one of drop, pass, tx, redirect, redirect-map, not '%s'", mode);
	redir = redirecting(mode);
	if (!dev)
		json_object_set_new(def, "interface", json_string(dev = DEFAULT_DEV));
	if (!ifname_ok(dev))
		return bad_key(bad, "interface", " must be a device name of 1 to 15 letters, digits, '_' or '-', "
			       "not lo, %s or %s", XDP_SRC_DEV, XDP_SINK_DEV);
	if (!redir && dev_out)
		return bad_key(bad, "interface_out", " is for the redirect modes only, not %s", mode);
	if (redir && !dev_out)
		json_object_set_new(def, "interface_out", json_string(dev_out = strcmp(dev, DEFAULT_DEV_OUT) ?
								      DEFAULT_DEV_OUT : DEFAULT_DEV));
	if (redir && !ifname_ok(dev_out))
		return bad_key(bad, "interface_out", " must be a device name of 1 to 15 letters, digits, '_' or '-', "
			       "not lo, %s or %s", XDP_SRC_DEV, XDP_SINK_DEV);
	if (redir && !strcmp(dev, dev_out))
		return bad_key(bad, "interface_out", " must differ from interface ('%s')", dev);
	set_default_int(def, "duration", DEFAULT_DURATION);
	set_default_int(def, "interval", DEFAULT_INTERVAL);
	set_default_int(def, "pkt_size", DEFAULT_PKT_SIZE);
	duration = json_integer_value(json_object_get(def, "duration"));
	interval = json_integer_value(json_object_get(def, "interval"));
	if (interval > duration)
		return bad_key(bad, "interval", " (%lld s) must not be longer than duration (%lld s)",
			       (long long)interval, (long long)duration);
	if (!metric)
		json_object_set_new(def, "metric", json_string(metric = metrics[0]));
	if (!one_of(metric, metrics))
		return bad_key(bad, "metric", " must be one of pps, redir_pps, xmit_pps, not '%s'", metric);
	if (!redir && strcmp(metric, "pps"))
		return bad_key(bad, "metric", " %s is for the redirect modes only: %s counts received packets (pps)",
			       metric, mode);
	if (!stats || json_is_null(stats))
		json_object_set_new(def, "stats", json_boolean(!strcmp(metric, "redir_pps")));
	stats = json_object_get(def, "stats");
	if (json_is_true(stats) && !redir)
		return bad_key(bad, "stats", " (xdp-bench -s) is for the redirect modes only");
	if (!json_is_true(stats) && !strcmp(metric, "redir_pps"))
		return bad_key(bad, "stats", " must be true for metric redir_pps (xdp-bench prints redir/s with -s)");
	json_object_set_new(def, "unit", json_string(XDP_UNIT));
	return 0;
}

static int needs_loader(json_t *def)
{
	const char *mode = workload_def_str(def, "mode", "");

	return redirecting(mode) || !strcmp(mode, "tx");
}

static int tools(const char **names, size_t n, json_t *def)
{
	size_t need = needs_loader(def) ? 3 : 2;

	if (n < need)
		return err_set(ERR_INVALID, "xdp: no room for its %zu tools", need);
	names[0] = "xdp-bench";
	/* By full path: busybox's ip makes no veth with a named peer. */
	names[1] = "ip";
	if (need == 3)
		names[2] = "xdp-loader";
	return (int)need;
}

static int files(const char **paths, size_t n, json_t *def)
{
	(void)def;
	if (n < 1)
		return err_set(ERR_INVALID, "xdp: no room for its data file");
	paths[0] = XDP_DISPATCHER_OBJ;
	return 1;
}

static int modules(const char **names, size_t n, json_t *def)
{
	(void)def;
	if (n < 2)
		return err_set(ERR_INVALID, "xdp: no room for its modules");
	names[0] = "veth";
	names[1] = "pktgen";
	return 2;
}

static int script(struct sbuf *sb, json_t *def, const char *const *paths)
{
	struct xdp_script_opts so = XDP_SCRIPT_OPTS_INIT;

	so.bench = paths[0];
	so.ip = paths[1];
	so.loader = needs_loader(def) ? paths[2] : NULL;
	so.mode = workload_def_str(def, "mode", NULL);
	so.dev = workload_def_str(def, "interface", DEFAULT_DEV);
	so.dev_out = workload_def_str(def, "interface_out", NULL);
	so.duration = (int)json_integer_value(json_object_get(def, "duration"));
	so.interval = (int)json_integer_value(json_object_get(def, "interval"));
	so.pkt_size = (unsigned)json_integer_value(json_object_get(def, "pkt_size"));
	so.stats = json_is_true(json_object_get(def, "stats"));
	return xdp_script(sb, &so);
}

static void parse(struct run_sample *s, json_t *def, const struct run_output *o)
{
	struct xdp_result r;

	xdp_parse(&r, o->out, o->out ? o->out_len : 0);
	xdp_sample(s, &r, workload_def_str(def, "mode", NULL), workload_def_str(def, "metric", metrics[0]));
	workload_note_exit(s, o);
}

const struct workload_ops workload_xdp = {
	.name = "xdp",
	.places = WORKLOAD_GUEST,
	.keys = keys,
	.about = "xdp-bench on a veth pair fed by pktgen; the metric is its average rate in Mpps",
	.check = check,
	.tools = tools,
	.script = script,
	.parse = parse,
	.files = files,
	.modules = modules,
};
