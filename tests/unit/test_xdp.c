/*
 * Unit tests of the xdp workload kind: xdp-bench's output as recorded in
 * a QEMU guest on Debian's 6.1 kernel (tests/fixtures/xdp/, see its
 * README), its numbers with and without thousands separators, every cut
 * of it, garbage, and the kind's check, sample and script. Fixtures are
 * found through $FIXTURES_DIR, default "tests/fixtures".
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "err.h"
#include "util.h"
#include "workload.h"
#include "xdp.h"

#ifndef FIXTURES_DIR_DEFAULT
#define FIXTURES_DIR_DEFAULT "tests/fixtures"
#endif

#define assert_contains(hay, needle) do { \
	const char *h_ = (hay); \
	if (!strstr(h_, (needle))) { \
		print_error("'%s' does not contain '%s'\n", h_, (needle)); \
		fail(); \
	} \
} while (0)

static char *load(const char *name, size_t *len)
{
	const char *dir = getenv("FIXTURES_DIR");
	char *path = xasprintf("%s/xdp/%s", dir && *dir ? dir : FIXTURES_DIR_DEFAULT, name);
	char *buf = NULL;
	size_t n = 0;
	int rc = file_read(&buf, &n, path, 1 << 20);

	if (rc < 0)
		print_error("cannot read fixture %s: %s (run from the top of the tree or set FIXTURES_DIR)\n",
			    path, err_msg());
	free(path);
	if (rc < 0)
		fail();
	if (len)
		*len = n;
	return buf;
}

static int parse_str(struct xdp_result *r, const char *s)
{
	return xdp_parse(r, s, strlen(s));
}

/* --- numbers --------------------------------------------------------------- */

static void test_numbers(void **state)
{
	static const struct {
		const char *text;
		double want;
		size_t used;
	} good[] = {
		{ "12,345,678 rx/s", 12345678, 10 },
		{ "12345678", 12345678, 8 },
		{ "15,256", 15256, 6 },
		{ "999,999", 999999, 7 },
		{ "1,000", 1000, 5 },
		{ "0", 0, 1 },
		{ "1.23M", 1230000, 5 },
		{ "1.23M rx/s", 1230000, 5 },
		{ "12K", 12000, 3 },
		{ "2G", 2e9, 2 },
		{ "1.01 bulk-avg", 1.01, 4 },
		{ "10.0s", 10, 4 },
		{ "5Mpps", 5, 1 },         /* a unit, not a suffix: the caller sees "Mpps" */
		{ "18446744073709551615", 18446744073709551615.0, 20 },
	};
	static const char *const bad[] = {
		"12,34", "1,,000", "1234,567", ",5", "", "abc", "12,345,6789", "12,", "-5", " 5", "1,2345",
	};
	double v;
	size_t used;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(xdp_parse_number(&v, &used, good[i].text), 0);
		if (v != good[i].want || used != good[i].used) {
			print_error("'%s': %.17g (%zu bytes), want %.17g (%zu)\n", good[i].text, v, used,
				    good[i].want, good[i].used);
			fail();
		}
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (xdp_parse_number(&v, &used, bad[i]) != ERR_INVALID) {
			print_error("'%s' read as %g\n", bad[i], v);
			fail();
		}
		assert_true(v == 0 && used == 0);
		assert_true(err_msg()[0]);
	}
}

/* --- the recorded outputs ------------------------------------------------- */

struct want {
	const char *file;
	const char *heading;
	int intervals;
	double rx_min, rx_max, rx_packets, rx_pps, redir_packets, redir_pps, xmit_packets, xmit_pps, rx_dropped;
};

/* The figures as the files show them (1.3.1: no Duration line, so -1). */
static const struct want fixtures[] = {
	{ "drop-e.txt", "Dropping packets on xa1 (ifindex 2; driver veth)", 2,
	  19724, 22071, 41795, 20898, -1, -1, -1, -1, 41795 },
	{ "drop-en_US.txt", "Dropping packets on xa1", 2, 15256, 16220, 31476, 15738, -1, -1, -1, -1, 31476 },
	{ "drop-no-bpffs.txt", "Dropping packets on xa1", 2, 18837, 20702, 39539, 19770, -1, -1, -1, -1, 39539 },
	{ "pass.txt", "Hairpinning (XDP_TX) packets on xa1", 2, 17391, 17432, 34823, 17412, -1, -1, -1, -1, 0 },
	{ "tx.txt", "Hairpinning (XDP_TX) packets on xa1", 2, 8920, 14684, 23604, 11802, -1, -1, -1, -1, 0 },
	{ "tx-e-en_US.txt", "Hairpinning", 1, 5588, 5588, 5588, 5588, -1, -1, -1, -1, 0 },
	{ "redirect.txt", "Redirecting from xa1 (ifindex 2; driver veth) to xb0 (ifindex 5; driver veth)", 2,
	  9158, 16090, 25248, 12624, -1, -1, 25257, 12629, 0 },
	{ "redirect-map.txt", "Redirecting from xa1", 2, 13586, 14840, 28426, 14213, -1, -1, 28462, 14231, 0 },
	{ "redirect-s.txt", "Redirecting from xa1", 2, 8736, 11693, 20429, 10215, 20430, 10215, 20432, 10216, 0 },
	{ "redirect-e-s.txt", "Redirecting from xa1", 2, 11432, 11703, 23135, 11568, 23136, 11568, 23138, 11569, 0 },
	{ "redirect-s-en_US.txt", "Redirecting from xa1", 2, 4960, 6759, 11719, 5860, 11720, 5860, 11722, 5861, 0 },
	{ "redirect-map-e-en_US.txt", "Redirecting from xa1", 2, 5724, 7764, 13488, 6744, -1, -1, 13243, 6622, 0 },
};

static void check_want(const struct xdp_result *r, const struct want *w)
{
	if (strncmp(r->heading, w->heading, strlen(w->heading)) || r->intervals != w->intervals ||
	    r->interval_rx_min != w->rx_min || r->interval_rx_max != w->rx_max ||
	    r->rx_packets != w->rx_packets || r->rx_pps != w->rx_pps ||
	    r->redir_packets != w->redir_packets || r->redir_pps != w->redir_pps ||
	    r->xmit_packets != w->xmit_packets || r->xmit_pps != w->xmit_pps ||
	    r->rx_dropped != w->rx_dropped || r->duration_s != -1 || r->tx_dropped != 0 || r->errors != 0) {
		print_error("%s: heading '%s' intervals %d rx %g..%g packets %g pps %g redir %g %g xmit %g %g "
			    "dropped %g duration %g\n", w->file, r->heading, r->intervals, r->interval_rx_min,
			    r->interval_rx_max, r->rx_packets, r->rx_pps, r->redir_packets, r->redir_pps,
			    r->xmit_packets, r->xmit_pps, r->rx_dropped, r->duration_s);
		fail();
	}
}

static void test_fixtures(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		struct xdp_result r;
		size_t len;
		char *text = load(fixtures[i].file, &len);

		if (xdp_parse(&r, text, len) != 0) {
			print_error("%s: %s\n", fixtures[i].file, r.error);
			fail();
		}
		assert_string_equal(r.error, "");
		check_want(&r, &fixtures[i]);
		free(text);
	}
}

/* The serial console's line ends, and the noise around a run, change nothing. */
static void test_crlf_and_noise(void **state)
{
	struct sbuf sb = SBUF_INIT;
	struct xdp_result r;
	size_t len;
	char *text = load("redirect-s-en_US.txt", &len);

	(void)state;
	sbuf_adds(&sb, "[   12.345678] veth: loaded\r\n libxdp: No bpffs found at /sys/fs/bpf\r\n");
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\n')
			sbuf_adds(&sb, "\r");
		sbuf_add(&sb, &text[i], 1);
	}
	assert_int_equal(xdp_parse(&r, sb.buf, sb.len), 0);
	check_want(&r, &fixtures[10]);
	sbuf_release(&sb);
	free(text);
}

/* xdp-bench's own failures: its message, as a failed run (not garbage). */
static void test_fixture_failures(void **state)
{
	static const struct {
		const char *file;
		const char *says;
	} cases[] = {
		{ "no-such-interface.txt", "xdp-bench: Couldn't find network interface 'nope0'." },
		{ "host-6.18-drop-lo.txt", "xdp-bench: Failed to attach XDP program: No such process "
					   "(libbpf: prog 'tp_xdp_redirect_map_err': failed to find kernel BTF" },
		{ "redirect-no-sink.txt", "xdp-bench attached (Redirecting from xa1 (ifindex 2; driver veth) "
					  "to xb0 (ifindex 5; driver veth)) but printed no figures" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct xdp_result r;
		size_t len;
		char *text = load(cases[i].file, &len);

		assert_int_equal(xdp_parse(&r, text, len), ERR_UNPROCESSABLE);
		assert_contains(r.error, cases[i].says);
		assert_string_equal(err_msg(), r.error);
		assert_true(r.rx_pps == 0 && r.intervals == 0 && !r.heading[0]);
		free(text);
	}
}

/*
 * Every cut of a real output either fails with a reason or reads the
 * whole summary's figures: a cut can drop a line but never turn one
 * figure into another.
 */
static void test_truncated(void **state)
{
	static const char *const files[] = { "drop-en_US.txt", "redirect-s.txt", "redirect-map-e-en_US.txt" };

	(void)state;
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		struct xdp_result full, r;
		size_t len;
		char *text = load(files[f], &len);
		int ok = 0;

		assert_int_equal(xdp_parse(&full, text, len), 0);
		for (size_t n = 0; n < len; n++) {
			char *cut = xstrndup(text, n);
			int rc = xdp_parse(&r, cut, n);

			if (rc == 0) {
				ok++;
				/* The summary's later pairs may be gone with their lines (absent: -1). */
				assert_true(r.rx_pps == full.rx_pps && r.rx_packets == full.rx_packets);
				assert_true(r.redir_pps == full.redir_pps || (r.redir_pps == -1 && r.redir_packets == -1));
				assert_true(r.xmit_pps == full.xmit_pps || (r.xmit_pps == -1 && r.xmit_packets == -1));
				assert_true(r.redir_packets == full.redir_packets || r.redir_packets == -1);
				assert_true(r.xmit_packets == full.xmit_packets || r.xmit_packets == -1);
			} else {
				assert_true(rc == ERR_INVALID || rc == ERR_UNPROCESSABLE);
				assert_true(r.error[0]);
				assert_true(r.rx_pps == 0);
			}
			free(cut);
		}
		/* Cuts from the end of "Average packets/s" on still hold a summary: the last lines' worth. */
		printf("# %s: %d of %zu cuts parse\n", files[f], ok, len);
		assert_true(ok > 0 && (size_t)ok < len / 2);
		free(text);
	}
}

static void test_garbage(void **state)
{
	static const struct {
		const char *text;
		int rc;
		const char *says;
	} cases[] = {
		{ "", ERR_INVALID, "empty output" },
		{ "hello world\n", ERR_INVALID, "no xdp-bench summary or interval line" },
		{ "{\"end\": {}}\n", ERR_INVALID, "no xdp-bench summary" },
		{ "Summary 12,34 rx/s 0 err/s\n", ERR_INVALID, "bad figure '12,34'" },
		{ "Summary 12 rx/s 0 foo/s\n", ERR_INVALID, "column 'foo/s'" },
		{ "Summary 12 rx/s 0\n", ERR_INVALID, "column" },
		{ "Summary 12 rx/s 3 rx/s 0 err/s\n", ERR_INVALID, "two rx/s columns" },
		{ "Summary 12 rx/s 0 err/s\nSummary 13 rx/s 0 err/s\n", ERR_INVALID, "2 interval lines with packets but no summary" },
		{ "Summary 0 rx/s 0 err/s\nSummary 0 rx/s 0 err/s\n", ERR_UNPROCESSABLE, "counted no packets in 2 intervals" },
		{ "Summary 12 rx/s 0 err/s\n\n  Packets received    : 12\n", ERR_INVALID,
		  "'Packets received' without 'Average packets/s'" },
		{ "Summary 12 rx/s 0 err/s\n\n  Average packets/s   : 12\n", ERR_INVALID,
		  "'Average packets/s' without 'Packets received'" },
		{ "Summary 12 rx/s 0 err/s\n  Packets received    : 12\n  Average packets/s   : 12\n"
		  "  Packets received    : 12\n", ERR_INVALID, "'Packets received' twice" },
		{ "Summary 12 rx/s 0 err/s\n  Packets received    : 12\n  Average packets/s   : 12 pkts\n",
		  ERR_INVALID, "junk after the figure" },
		{ "Summary 12 rx/s 0 err/s\n  Packets received    : 12\n  Average packets/s   : twelve\n",
		  ERR_INVALID, "bad figure in summary line" },
		/* A figure changed: the count is no longer its intervals' sum. */
		{ "Summary 12 rx/s 0 err/s\nSummary 14 rx/s 0 err/s\n  Packets received    : 27\n"
		  "  Average packets/s   : 13\n", ERR_INVALID, "disagree with its 2 interval lines" },
		{ "Summary 12 rx/s 0 err/s\nSummary 14 rx/s 0 err/s\n  Packets received    : 26\n"
		  "  Average packets/s   : 15\n", ERR_INVALID, "disagree" },
		{ "  Packets received    : 26\n  Average packets/s   : 13\n", ERR_INVALID, "without interval lines" },
		{ "Summary 1 rx/s 0 err/s\nSummary 0 rx/s 0 err/s\nSummary 0 rx/s 0 err/s\n"
		  "  Packets received    : 1\n  Average packets/s   : 0\n", ERR_UNPROCESSABLE, "an average of 0" },
		{ "Summary 12 rx/s 0 err/s\nSummary 14 rx/s 0 err/s\n  Packets received    : 26\n"
		  "  Average packets/s   : 13\nFailed during sample run: Interrupted system call\n",
		  ERR_UNPROCESSABLE, "xdp-bench: Failed during sample run" },
		{ "xa1->xb0 12 rx/s 0 err,drop/s 12 xmit/s\n  Packets received    : 12\n  Average packets/s   : 12\n"
		  "  Packets transmitted : 12\n", ERR_INVALID, "'Packets transmitted' without 'Average transmit/s'" },
		{ "Summary 12 rx/s 0 err/s\n  Packets received    : 12\n  Average packets/s   : 12\n"
		  "xdp: xdp-bench did not stop within 20 s of SIGINT: killed\n", ERR_UNPROCESSABLE,
		  "xdp: xdp-bench did not stop within 20 s" },
		{ "xa1->xb0 12 rx/s 0 err,drop/s 12 xmit/s\n  Packets received    : 12\n  Average packets/s   : 12\n"
		  "  Packets transmitted : 120\n  Average transmit/s  : 120\n", ERR_INVALID, "'Packets transmitted' 120" },
		{ "Usage: xdp-bench drop [options] <ifname>\n", ERR_INVALID, "no xdp-bench summary" },
		/* The script's words win over xdp-bench's when there is no summary. */
		{ "Dropping packets on xdp0 (ifindex 3; driver veth)\nSummary 0 rx/s 0 err/s\n"
		  "pktgen: sh: write error: Invalid argument\n", ERR_UNPROCESSABLE,
		  "pktgen: sh: write error: Invalid argument" },
		{ "  Duration            : 0.0s\n  Packets received    : 1\n  Average packets/s   : 1\n",
		  ERR_INVALID, "a Duration of 0 s" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct xdp_result r;
		int rc = parse_str(&r, cases[i].text);

		if (rc != cases[i].rc || !strstr(r.error, cases[i].says)) {
			print_error("case %zu: rc %d '%s', want %d '%s'\n", i, rc, r.error, cases[i].rc, cases[i].says);
			fail();
		}
	}
	{
		struct xdp_result r;
		const char nul[] = "Summary 12 rx/s 0 err/s\0\n";

		assert_int_equal(xdp_parse(&r, nul, sizeof(nul) - 1), ERR_INVALID);
		assert_contains(r.error, "NUL byte");
		assert_int_equal(xdp_parse(&r, NULL, 0), ERR_INVALID);
	}
}

/*
 * xdp-tools 1.4 and later (not packaged in Debian 12; the format is read
 * off lib/util/xdp_sample.c at v1.6.3, not recorded): a Duration line,
 * averages over it, and interval lines that are rates, not sums.
 */
static void test_duration_format(void **state)
{
	const char *text =
		"Dropping packets on veth1 (ifindex 3; driver veth)\n"
		"Summary                12,345,678 rx/s                  0 err/s\n"
		"Summary                12,345,670 rx/s                  0 err/s\n"
		"\n"
		"  Duration            : 2.5s\n"
		"  Packets received    : 30,864,185\n"
		"  Average packets/s   : 12,345,674\n"
		"  Rx dropped          : 30,864,185\n";
	struct xdp_result r;

	(void)state;
	assert_int_equal(parse_str(&r, text), 0);
	assert_true(r.duration_s == 2.5 && r.rx_packets == 30864185 && r.rx_pps == 12345674 && r.intervals == 2);
}

/*
 * A complaint xdp-bench ran past: seen from a kernel built with the xdp
 * fragment before it had AF_UNIX (get_num_rxqs() asks over such a
 * socket). The summary stands; the complaint is kept as a warning.
 */
static void test_warning_kept(void **state)
{
	const char *text =
		"Couldn't open socket socket: Address family not supported by protocol\n"
		"Dropping packets on xdp0 (ifindex 3; driver veth)\n"
		"Summary                     15256 rx/s                  0 err/s\n"
		"Summary                     16220 rx/s                  0 err/s\n"
		"\n"
		"  Packets received    : 31476\n"
		"  Average packets/s   : 15738\n"
		"  Rx dropped          : 31476\n";
	struct xdp_result r;
	struct run_sample s;

	(void)state;
	assert_int_equal(parse_str(&r, text), 0);
	assert_true(r.rx_pps == 15738);
	assert_string_equal(r.warning, "Couldn't open socket socket: Address family not supported by protocol");
	assert_int_equal(xdp_sample(&s, &r, "drop", "pps"), 0);
	assert_true(s.value > 0);
	assert_string_equal(json_string_value(json_object_get(s.extra, "warning")), r.warning);
	json_decref(s.extra);
}

/* --- samples --------------------------------------------------------------- */

static void test_sample(void **state)
{
	struct xdp_result r;
	struct run_sample s;
	size_t len;
	char *text = load("redirect-s-en_US.txt", &len);

	(void)state;
	assert_int_equal(xdp_parse(&r, text, len), 0);
	assert_int_equal(xdp_sample(&s, &r, "redirect", "pps"), 0);
	assert_true(fabs(s.value - 5860e-6) < 1e-15);
	assert_string_equal(s.unit, "Mpps");
	assert_string_equal(s.error, "");
	assert_int_equal(json_integer_value(json_object_get(s.extra, "rx_packets")), 11719);
	assert_int_equal(json_integer_value(json_object_get(s.extra, "intervals")), 2);
	json_decref(s.extra);
	assert_int_equal(xdp_sample(&s, &r, "redirect", "xmit_pps"), 0);
	assert_true(fabs(s.value - 5861e-6) < 1e-15);
	json_decref(s.extra);
	assert_int_equal(xdp_sample(&s, &r, "redirect", "redir_pps"), 0);
	assert_true(fabs(s.value - 5860e-6) < 1e-15);
	json_decref(s.extra);
	assert_int_equal(xdp_sample(&s, &r, "redirect", "bogus"), ERR_INVALID);
	assert_true(s.value == 0 && s.error[0] && !s.extra);
	free(text);

	/* A figure the run did not print: a failed run that says what it needs. */
	text = load("redirect.txt", &len);
	assert_int_equal(xdp_parse(&r, text, len), 0);
	assert_int_equal(xdp_sample(&s, &r, "redirect", "redir_pps"), 0);
	assert_true(s.value == 0 && !s.extra);
	assert_contains(s.error, "stats: true");
	free(text);

	/* drop counts every packet as dropped, and that is its job. */
	text = load("drop-en_US.txt", &len);
	assert_int_equal(xdp_parse(&r, text, len), 0);
	assert_int_equal(xdp_sample(&s, &r, "drop", "pps"), 0);
	assert_true(fabs(s.value - 15738e-6) < 1e-15);
	json_decref(s.extra);
	/* Elsewhere, drops mean the path under test failed: fast and wrong is no sample. */
	assert_int_equal(xdp_sample(&s, &r, "redirect", "pps"), 0);
	assert_true(s.value == 0 && !s.extra);
	assert_contains(s.error, "31476 of 31476 packets dropped or in error");
	free(text);

	/* A parse failure is the sample's reason. */
	assert_int_equal(parse_str(&r, "hello\n"), ERR_INVALID);
	assert_int_equal(xdp_sample(&s, &r, "drop", "pps"), 0);
	assert_true(s.value == 0 && !s.extra);
	assert_string_equal(s.error, r.error);
}

/* --- the kind ------------------------------------------------------------- */

static const struct workload_ops *kind(void)
{
	const struct workload_ops *w = workload_find("xdp");

	assert_non_null(w);
	return w;
}

static void test_check_defaults(void **state)
{
	struct workload_bad bad;
	json_t *def = json_pack("{s:s}", "mode", "redirect");
	char *once, *twice;

	(void)state;
	assert_int_equal(workload_check(&bad, kind(), def), 0);
	assert_string_equal(json_string_value(json_object_get(def, "interface")), "xdp0");
	assert_string_equal(json_string_value(json_object_get(def, "interface_out")), "xdp1");
	assert_int_equal(json_integer_value(json_object_get(def, "duration")), 10);
	assert_int_equal(json_integer_value(json_object_get(def, "interval")), 1);
	assert_int_equal(json_integer_value(json_object_get(def, "pkt_size")), 64);
	assert_string_equal(json_string_value(json_object_get(def, "metric")), "pps");
	assert_true(json_is_false(json_object_get(def, "stats")));
	assert_string_equal(json_string_value(json_object_get(def, "unit")), "Mpps");
	/* Idempotent: the agent checks again what the coordinator sent. */
	once = json_dumps(def, JSON_SORT_KEYS);
	assert_int_equal(workload_check(&bad, kind(), def), 0);
	twice = json_dumps(def, JSON_SORT_KEYS);
	assert_string_equal(once, twice);
	free(once);
	free(twice);
	json_decref(def);

	/* redir_pps turns -s on; interface_out steps aside from a chosen interface. */
	def = json_pack("{s:s, s:s, s:s}", "mode", "redirect-map", "metric", "redir_pps", "interface", "xdp1");
	assert_int_equal(workload_check(&bad, kind(), def), 0);
	assert_true(json_is_true(json_object_get(def, "stats")));
	assert_string_equal(json_string_value(json_object_get(def, "interface_out")), "xdp0");
	json_decref(def);

	def = json_pack("{s:s}", "mode", "drop");
	assert_int_equal(workload_check(&bad, kind(), def), 0);
	assert_null(json_object_get(def, "interface_out"));
	json_decref(def);
}

static void test_check_refuses(void **state)
{
	static const struct {
		const char *json;
		const char *key;
		const char *says;
	} cases[] = {
		{ "{}", "mode", "'mode' is missing (the xdp-bench command" },
		{ "{\"mode\": \"redirect-cpu\"}", "mode", "must be one of drop, pass, tx, redirect, redirect-map" },
		{ "{\"mode\": 3}", "mode", "must be a string" },
		{ "{\"mode\": \"drop\", \"interface_out\": \"xdp1\"}", "interface_out", "redirect modes only" },
		{ "{\"mode\": \"redirect\", \"interface\": \"a\", \"interface_out\": \"a\"}", "interface_out", "must differ" },
		{ "{\"mode\": \"drop\", \"interface\": \"eth 0\"}", "interface", "device name" },
		{ "{\"mode\": \"drop\", \"interface\": \"lo\"}", "interface", "device name" },
		{ "{\"mode\": \"drop\", \"interface\": \"xdpsrc0\"}", "interface", "device name" },
		{ "{\"mode\": \"drop\", \"interface\": \"a-name-far-too-long\"}", "interface", "device name" },
		{ "{\"mode\": \"redirect\", \"interface_out\": \"x;reboot\"}", "interface_out", "device name" },
		{ "{\"mode\": \"drop\", \"duration\": 0}", "duration", "from 1 to 3600" },
		{ "{\"mode\": \"drop\", \"duration\": 5, \"interval\": 10}", "interval", "not be longer than duration" },
		{ "{\"mode\": \"drop\", \"metric\": \"Mb/s\"}", "metric", "pps, redir_pps, xmit_pps" },
		{ "{\"mode\": \"drop\", \"metric\": \"xmit_pps\"}", "metric", "redirect modes only" },
		{ "{\"mode\": \"tx\", \"stats\": true}", "stats", "redirect modes only" },
		{ "{\"mode\": \"redirect\", \"metric\": \"redir_pps\", \"stats\": false}", "stats", "must be true" },
		{ "{\"mode\": \"drop\", \"pkt_size\": 9000}", "pkt_size", "from 60 to 1500" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *def = json_loads(cases[i].json, 0, NULL);
		struct workload_bad bad;

		assert_non_null(def);
		assert_int_equal(workload_check(&bad, kind(), def), ERR_INVALID);
		if (!bad.key || strcmp(bad.key, cases[i].key)) {
			print_error("case %zu: key %s, want %s\n", i, bad.key ? bad.key : "(null)", cases[i].key);
			fail();
		}
		assert_int_equal(workload_check_msg(kind(), def), ERR_INVALID);
		assert_contains(err_msg(), cases[i].says);
		json_decref(def);
	}
}

static void test_hooks(void **state)
{
	const struct workload_ops *w = kind();
	json_t *def = json_pack("{s:s}", "mode", "drop");
	const char *names[8];

	(void)state;
	assert_true(w->places == WORKLOAD_GUEST && w->files && w->modules);
	assert_int_equal(w->tools(names, 8, def), 2);
	assert_string_equal(names[0], "xdp-bench");
	assert_string_equal(names[1], "ip");
	json_object_set_new(def, "mode", json_string("tx"));
	assert_int_equal(w->tools(names, 8, def), 3);
	assert_string_equal(names[2], "xdp-loader");
	assert_int_equal(w->tools(names, 2, def), ERR_INVALID);
	assert_int_equal(w->files(names, 8, def), 1);
	assert_string_equal(names[0], "/usr/lib/x86_64-linux-gnu/bpf/xdp-dispatcher.o");
	assert_int_equal(w->modules(names, 8, def), 2);
	assert_string_equal(names[0], "veth");
	assert_string_equal(names[1], "pktgen");
	json_decref(def);
}

/* sh -n: the generated text is valid shell. */
static void assert_sh_syntax(const char *text)
{
	char path[] = "/tmp/test_xdp_XXXXXX";
	int fd = mkstemp(path);
	char *cmd;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	cmd = xasprintf("sh -n %s", path);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	unlink(path);
}

static void test_script(void **state)
{
	const struct workload_ops *w = kind();
	json_t *def = json_pack("{s:s, s:i, s:b}", "mode", "redirect", "duration", 7, "stats", 1);
	const char *paths[] = { "/usr/sbin/xdp-bench", "/usr/bin/ip", "/usr/sbin/xdp-loader", NULL };
	struct xdp_script_opts so = XDP_SCRIPT_OPTS_INIT;
	struct workload_bad bad;
	struct sbuf sb = SBUF_INIT;

	(void)state;
	assert_int_equal(workload_check(&bad, w, def), 0);
	assert_int_equal(w->script(&sb, def, paths), 0);
	assert_contains(sb.buf, "run_once() {");
	assert_contains(sb.buf, "'/usr/bin/ip' link add xdpsrc0 type veth peer name xdp0 ||");
	assert_contains(sb.buf, "'/usr/bin/ip' link add xdp1 type veth peer name xdpsink0 ||");
	assert_contains(sb.buf, "'/usr/sbin/xdp-loader' load -m native xdpsink0 "
			"/usr/lib/x86_64-linux-gnu/bpf/xdp-dispatcher.o -n xdp_pass ||");
	assert_contains(sb.buf, "'/usr/sbin/xdp-bench' redirect -s -i 1 xdp0 xdp1 >/tmp/xdp-bench.out 2>&1 &");
	assert_contains(sb.buf, "xdp_alive $bp && sleep 7\n");
	assert_contains(sb.buf, "kill -INT $bp");
	assert_contains(sb.buf, "sed 's/^/pktgen: /' /tmp/xdp-pktgen.err");
	assert_contains(sb.buf, "'pkt_size 64'");
	assert_contains(sb.buf, "CONFIG_DEBUG_INFO_BTF=y");
	assert_contains(sb.buf, "CONFIG_VETH");
	assert_contains(sb.buf, "CONFIG_NET_PKTGEN");
	assert_sh_syntax(sb.buf);
	sbuf_release(&sb);
	json_decref(def);

	def = json_pack("{s:s, s:s, s:i}", "mode", "drop", "interface", "eth_x", "interval", 2);
	assert_int_equal(workload_check(&bad, w, def), 0);
	assert_int_equal(w->script(&sb, def, paths), 0);
	assert_contains(sb.buf, "'/usr/sbin/xdp-bench' drop -i 2 eth_x >");
	assert_null(strstr(sb.buf, "xdp-loader"));
	assert_null(strstr(sb.buf, "xdpsink0"));
	assert_sh_syntax(sb.buf);
	sbuf_release(&sb);
	json_decref(def);

	/* The builder itself refuses what check() would have. */
	so.bench = "/usr/sbin/xdp-bench";
	so.ip = "/usr/bin/ip";
	so.mode = "drop";
	so.dev = "xdp0";
	so.duration = 5;
	so.interval = 1;
	assert_int_equal(xdp_script(&sb, &so), 0);
	sbuf_release(&sb);
	so.dev = "x'y";
	assert_int_equal(xdp_script(&sb, &so), ERR_INVALID);
	so.dev = "xdp0";
	so.interval = 6;
	assert_int_equal(xdp_script(&sb, &so), ERR_INVALID);
	so.interval = 1;
	so.mode = "tx";
	assert_int_equal(xdp_script(&sb, &so), ERR_INVALID);     /* tx needs xdp-loader */
	so.mode = "drop";
	so.ip = "ip";
	assert_int_equal(xdp_script(&sb, &so), ERR_INVALID);     /* by full path */
	sbuf_release(&sb);
}

/* A run the guest printed becomes a sample through the kind's parse, its exit status told. */
static void test_parse_op(void **state)
{
	json_t *def = json_pack("{s:s}", "mode", "drop");
	struct workload_bad bad;
	struct run_sample s;
	size_t len;
	char *text = load("drop-e.txt", &len);
	struct run_output o = { text, len, NULL, 0, 1, 0, "" };

	(void)state;
	assert_int_equal(workload_check(&bad, kind(), def), 0);
	kind()->parse(&s, def, &o);
	assert_true(fabs(s.value - 20898e-6) < 1e-15);
	assert_string_equal(s.unit, "Mpps");
	json_decref(s.extra);
	o.out = "xdp setup failed (exit 1):\nxdp: the guest kernel has no BTF (/sys/kernel/btf/vmlinux)\n";
	o.out_len = strlen(o.out);
	o.ok = 0;
	o.rc = 1;
	kind()->parse(&s, def, &o);
	assert_true(s.value == 0 && !s.extra);
	assert_string_equal(s.error, "xdp: the guest kernel has no BTF (/sys/kernel/btf/vmlinux) (exit 1)");
	o.out = "xdp setup failed (exit 127):\n/usr/sbin/xdp-bench not found in the guest: the initramfs lacks "
		"xdp-bench (xdp-tools)\n";
	o.out_len = strlen(o.out);
	o.rc = 127;
	kind()->parse(&s, def, &o);
	assert_contains(s.error, "/usr/sbin/xdp-bench not found in the guest");
	free(text);
	json_decref(def);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_fixtures),
		cmocka_unit_test(test_crlf_and_noise),
		cmocka_unit_test(test_fixture_failures),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_duration_format),
		cmocka_unit_test(test_warning_kept),
		cmocka_unit_test(test_sample),
		cmocka_unit_test(test_check_defaults),
		cmocka_unit_test(test_check_refuses),
		cmocka_unit_test(test_hooks),
		cmocka_unit_test(test_script),
		cmocka_unit_test(test_parse_op),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
