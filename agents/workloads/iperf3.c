/*
 * iperf3: throughput over the booted kernel's loopback, the seed's
 * "iperf3 -c 127.0.0.1 --udp -4 -b $R -l 8920 -P 64" measured inside the
 * guest. The definition's keys: "iperf3" (client options, see iperf3.h)
 * and "metric" (the unit of the received rate).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "err.h"
#include "iperf3.h"
#include "netparse.h"
#include "util.h"
#include "workload.h"

#define MAX_OPTIONS 64
#define DIGITS "0123456789"

static const char *const metrics[] = {
	"KBytes/s", "bits/s", "Kbits/s", "Mbits/s", "Gbits/s", "Bytes/s", "MBytes/s", "GBytes/s", NULL
};

static const struct workload_key keys[] = {
	{ "iperf3", WKEY_ARGV, 0, 0 },
	{ "metric", WKEY_STR, 0, 0 },
	{ NULL, 0, 0, 0 },
};

/* A positive decimal below max, all digits. */
static int opt_num(int *out, const char *s, int max)
{
	char *end;
	long n;

	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	n = strtol(s, &end, 10);
	if (*end || errno || n < 1 || n > max)
		return -1;
	*out = (int)n;
	return 0;
}

int iperf3_parse_options(struct iperf3_options *o, size_t *bad, char *const *argv)
{
	size_t i;

	memset(o, 0, sizeof(*o));
	for (i = 0; argv && argv[i]; i++) {
		const char *a = argv[i], *v = argv[i + 1];
		int *num = NULL, max = 0;

		if (!strcmp(a, "-u") || !strcmp(a, "--udp")) {
			o->udp = 1;
		} else if (!strcmp(a, "-4") || !strcmp(a, "--version4")) {
			o->ipv6 = 0;
		} else if (!strcmp(a, "-6") || !strcmp(a, "--version6")) {
			o->ipv6 = 1;
		} else if (!strcmp(a, "-R") || !strcmp(a, "--reverse")) {
			o->reverse = 1;
		} else if (!strcmp(a, "-t") || !strcmp(a, "--time")) {
			num = &o->time_s, max = 3600;
		} else if (!strcmp(a, "-P") || !strcmp(a, "--parallel")) {
			num = &o->streams, max = 128;
		} else if (!strcmp(a, "-l") || !strcmp(a, "--length")) {
			num = &o->length, max = 1 << 20;
		} else if (!strcmp(a, "-O") || !strcmp(a, "--omit")) {
			num = &o->omit_s, max = 600;
		} else if (!strcmp(a, "-p") || !strcmp(a, "--port")) {
			num = &o->port, max = 65535;
		} else if (!strcmp(a, "-b") || !strcmp(a, "--bitrate")) {
			size_t n = v ? strspn(v, DIGITS) : 0;

			if (!v || n == 0 || n > 15 || (v[n] && (!strchr("KMGkmg", v[n]) || v[n + 1]))) {
				if (bad)
					*bad = i;
				return err_set(ERR_INVALID, "iperf3 option '%s' needs a rate: digits with "
					       "an optional K, M or G", a);
			}
			snprintf(o->bitrate, sizeof(o->bitrate), "%s", v);
			i++;
		} else {
			if (bad)
				*bad = i;
			return err_set(ERR_INVALID, "iperf3 option '%s' is not one the agent runs (known: "
				       "-u -4 -6 -R -t -P -l -b -O -p)", a);
		}
		if (num) {
			if (opt_num(num, v, max) < 0) {
				if (bad)
					*bad = i;
				return err_set(ERR_INVALID, "iperf3 option '%s' needs a number from 1 to %d",
					       a, max);
			}
			i++;
		}
	}
	return 0;
}

/* def's "iperf3" array (types checked) through iperf3_parse_options(). */
static int def_options(struct iperf3_options *io, size_t *bad, json_t *def)
{
	json_t *arr = json_object_get(def, "iperf3"), *v;
	char **argv;
	size_t i;
	int rc;

	*bad = 0;
	if (json_array_size(arr) > MAX_OPTIONS)
		return err_set(ERR_INVALID, " has more than %d options", MAX_OPTIONS);
	argv = xcalloc(json_array_size(arr) + 1, sizeof(*argv));
	json_array_foreach(arr, i, v)
		argv[i] = xstrdup(json_string_value(v) ? json_string_value(v) : "");
	rc = iperf3_parse_options(io, bad, argv);
	strv_free(argv);
	return rc;
}

static int one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

static int check(json_t *def, struct workload_bad *bad)
{
	struct iperf3_options io;
	const char *metric;
	size_t at;

	if (def_options(&io, &at, def) < 0) {
		char *msg = xasprintf(": %s", err_msg());

		bad->key = "iperf3";
		bad->item = (long)at;
		err_set(ERR_INVALID, "%s", msg);
		free(msg);
		return ERR_INVALID;
	}
	metric = workload_def_str(def, "metric", NULL);
	if (!metric)
		json_object_set_new(def, "metric", json_string(metric = metrics[0]));
	if (!one_of(metric, metrics)) {
		struct sbuf list = SBUF_INIT;

		for (const char *const *m = metrics; *m; m++)
			sbuf_addf(&list, "%s%s", m == metrics ? "" : ", ", *m);
		bad->key = "metric";
		err_set(ERR_INVALID, " must be one of %s, not '%s'", list.buf, metric);
		sbuf_release(&list);
		return ERR_INVALID;
	}
	/* The unit is the metric's: it measures itself. */
	json_object_set_new(def, "unit", json_string(metric));
	return 0;
}

static int tools(const char **names, size_t n, json_t *def)
{
	(void)def;
	if (n < 1)
		return err_set(ERR_INVALID, "iperf3: no room for its tool");
	names[0] = "iperf3";
	return 1;
}

/* iperf3's -b: "0", "100M", "1G", "2.5G". */
static int bitrate_ok(const char *b)
{
	size_t l;

	if (!workload_only(b, DIGITS ".KMGkmg", 16))
		return 0;
	l = strspn(b, DIGITS ".");
	return l > 0 && (b[l] == '\0' || b[l + 1] == '\0') && b[0] != '.';
}

/* Waits until something listens on TCP port $1 (IPv4 or IPv6), up to 5 s. */
static const char sh_wait_listen[] =
	"wait_listen() {\n"
	"\tport=$(printf %04X \"$1\")\n"
	"\tn=0\n"
	"\twhile [ $n -lt 100 ]; do\n"
	"\t\tgrep -q \":$port [0-9A-F]*:[0-9A-F]* 0A\" /proc/net/tcp /proc/net/tcp6 2>/dev/null && return 0\n"
	"\t\tusleep 50000 2>/dev/null || sleep 1\n"
	"\t\tn=$((n + 1))\n"
	"\tdone\n"
	"\treturn 1\n"
	"}\n";

int iperf3_script(struct sbuf *sb, const struct iperf3_script_opts *o)
{
	const char *path = o->path ? o->path : "/usr/bin/iperf3";
	int streams = o->streams ? o->streams : 1, t = o->time_s ? o->time_s : 10;
	int port = o->port ? o->port : 5201;

	if (!workload_guest_path_ok(path))
		return err_set(ERR_INVALID, "qemu: iperf3 path must be absolute");
	if (streams < 1 || streams > 128 || t < 1 || t > 3600 || o->omit_s < 0 || o->omit_s > 600 ||
	    o->length < 0 || o->length > 1 << 20 || port < 1 || port > 65535)
		return err_set(ERR_INVALID, "qemu: iperf3 options out of range");
	if (o->bitrate && !bitrate_ok(o->bitrate))
		return err_set(ERR_INVALID, "qemu: iperf3 bitrate '%s' is not like 0, 100M, 1G",
			       o->bitrate);
	sbuf_adds(sb, sh_wait_listen);
	sbuf_adds(sb, "run_once() {\n");
	workload_sh_need_tool(sb, path, "iperf3");
	sbuf_add(sb, "\t", 1);
	workload_sh_quote(sb, path);
	sbuf_addf(sb, " -s -1 -p %d >/tmp/iperf3-server.log 2>&1 &\n", port);
	sbuf_adds(sb, "\tspid=$!\n");
	sbuf_addf(sb, "\twait_listen %d || echo 'iperf3 server not listening after 5 s' >&2\n", port);
	sbuf_add(sb, "\t", 1);
	workload_sh_quote(sb, path);
	sbuf_addf(sb, " -c %s %s -p %d -J -t %d -P %d", o->ipv6 ? "::1" : "127.0.0.1",
		  o->ipv6 ? "-6" : "-4", port, t, streams);
	if (o->udp)
		sbuf_adds(sb, " -u");
	if (o->bitrate)
		sbuf_addf(sb, " -b %s", o->bitrate);
	if (o->length)
		sbuf_addf(sb, " -l %d", o->length);
	if (o->omit_s)
		sbuf_addf(sb, " -O %d", o->omit_s);
	if (o->reverse)
		sbuf_adds(sb, " -R");
	sbuf_adds(sb, "\n\trc=$?\n"
		      "\tkill $spid 2>/dev/null\n"
		      "\twait $spid 2>/dev/null\n"
		      "\treturn $rc\n"
		      "}\n");
	return 0;
}

static int script(struct sbuf *sb, json_t *def, const char *const *paths)
{
	struct iperf3_script_opts so = IPERF3_SCRIPT_OPTS_INIT;
	struct iperf3_options io;
	size_t at;

	if (def_options(&io, &at, def) < 0)
		return err_set(ERR_INVALID, "workload: %s", err_msg());
	so.path = paths[0];
	so.udp = io.udp;
	so.ipv6 = io.ipv6;
	so.reverse = io.reverse;
	so.streams = io.streams;
	so.time_s = io.time_s;
	so.omit_s = io.omit_s;
	so.length = io.length;
	so.port = io.port;
	if (io.bitrate[0])
		so.bitrate = io.bitrate;
	return iperf3_script(sb, &so);
}

static void parse(struct run_sample *s, json_t *def, const struct run_output *o)
{
	struct iperf3_result ir;

	netparse_iperf3(&ir, o->out, o->out ? o->out_len : 0);
	netparse_iperf3_sample(s, &ir, workload_def_str(def, "metric", metrics[0]));
	workload_note_exit(s, o);
}

const struct workload_ops workload_iperf3 = {
	.name = "iperf3",
	.places = WORKLOAD_GUEST,
	.keys = keys,
	.about = "iperf3 over the booted kernel's loopback; the metric is the received rate",
	.check = check,
	.tools = tools,
	.script = script,
	.parse = parse,
};
