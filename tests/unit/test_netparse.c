/*
 * Unit tests of netparse: real iperf3 -J and pktgen output captured in the
 * kernel lab (tests/fixtures/), then every way that output arrives broken.
 * The fixtures are found through $FIXTURES_DIR, default "tests/fixtures":
 * the Makefile runs the tests from the top of the tree.
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

#include <jansson.h>

#include "err.h"
#include "netparse.h"
#include "util.h"
#include "workload.h"

#ifndef FIXTURES_DIR_DEFAULT
#define FIXTURES_DIR_DEFAULT "tests/fixtures"
#endif

#define TCP4 "iperf3/tcp4_p1.json"
#define UDP4 "iperf3/udp4_p4_b0_l8920.json"
#define UDP6 "iperf3/udp6_p2_b1G.json"
#define REFUSED "iperf3/error_refused.json"
#define PKTGEN "pktgen/queue_xmit_dummy.txt"

/* Exact: the parser must hand back the very double iperf3 printed. */
#define assert_num(got, want) do { \
	double g_ = (got), w_ = (want); \
	if (!(g_ == w_)) { \
		print_error("%s = %.17g, want %.17g\n", #got, g_, w_); \
		fail(); \
	} \
} while (0)

/* Relative closeness, for figures derived by arithmetic. */
#define assert_near(got, want) do { \
	double g_ = (got), w_ = (want); \
	if (!(fabs(g_ - w_) <= 1e-12 * fabs(w_))) { \
		print_error("%s = %.17g, want %.17g\n", #got, g_, w_); \
		fail(); \
	} \
} while (0)

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
	char *path = xasprintf("%s/%s", dir && *dir ? dir : FIXTURES_DIR_DEFAULT, name);
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

static int parse_iperf3_str(struct iperf3_result *r, const char *s)
{
	return netparse_iperf3(r, s, strlen(s));
}

static int parse_pktgen_str(struct pktgen_result *r, const char *s)
{
	return netparse_pktgen(r, s, strlen(s));
}

/* A fixture loaded as JSON, to be edited and parsed again. */
static json_t *load_json(const char *name)
{
	size_t len;
	char *text = load(name, &len);
	json_error_t jerr;
	json_t *j = json_loadb(text, len, 0, &jerr);

	free(text);
	assert_non_null(j);
	return j;
}

static int parse_json(struct iperf3_result *r, json_t *j)
{
	char *text = json_dumps(j, 0);
	int rc;

	assert_non_null(text);
	rc = parse_iperf3_str(r, text);
	free(text);
	return rc;
}

/* A deterministic generator for garbage and mutations (no libc state). */
static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

/* --- iperf3: the real outputs ------------------------------------------ */

static void test_iperf3_tcp(void **state)
{
	struct iperf3_result r;
	size_t len;
	char *text = load(TCP4, &len);

	(void)state;
	assert_int_equal(netparse_iperf3(&r, text, len), 0);
	assert_string_equal(r.error, "");
	assert_int_equal(r.protocol, NETPARSE_TCP);
	assert_string_equal(r.version, "iperf 3.12");
	assert_int_equal(r.streams, 1);
	assert_int_equal(r.reverse, 0);
	assert_int_equal(r.omit, 0);
	/* end.sum_received, not sum_sent's 21714532371.798717 */
	assert_num(r.bits_per_second, 21679162158.716572);
	assert_num(r.bytes, 5420351488.0);
	assert_num(r.duration, 2.000207);
	assert_near(r.bytes_per_second, 5420351488.0 / 2.000207);
	assert_near(r.kbytes_per_second, 2646382.0994527065);
	assert_num(r.lost_percent, -1);
	assert_num(r.jitter_ms, -1);
	assert_int_equal(r.lost_packets, -1);
	assert_int_equal(r.packets, -1);
	assert_int_equal(r.retransmits, 0);
	assert_num(r.cpu_host, 44.259171414049057);
	assert_num(r.cpu_remote, 54.4938745003737);
	free(text);
}

static void test_iperf3_udp4_p4_omit(void **state)
{
	struct iperf3_result r;
	size_t len;
	char *text = load(UDP4, &len);

	(void)state;
	assert_int_equal(netparse_iperf3(&r, text, len), 0);
	assert_int_equal(r.protocol, NETPARSE_UDP);
	assert_int_equal(r.streams, 4);
	assert_int_equal(r.omit, 1);
	/*
	 * Received: end.sum_received. end.sum and end.sum_sent both say
	 * 7219558827.4519224, the sender's rate, with 79.6% of it lost.
	 */
	assert_num(r.bits_per_second, 2880531687.6081991);
	assert_true(r.bits_per_second != 7219558827.4519224);
	assert_num(r.bytes, 1080292280.0);
	assert_num(r.duration, 3.000258);
	assert_near(r.kbytes_per_second, 351627.40327248524);
	assert_num(r.lost_percent, 79.635842341154756);
	assert_num(r.jitter_ms, 0.25180658551108676);
	assert_int_equal(r.lost_packets, 241647);
	assert_int_equal(r.packets, 303440);
	assert_int_equal(r.retransmits, -1);
	assert_num(r.cpu_host, 76.791920850462);
	assert_num(r.cpu_remote, 39.7125751496744);
	free(text);
}

static void test_iperf3_udp6_p2(void **state)
{
	struct iperf3_result r;
	size_t len;
	char *text = load(UDP6, &len);

	(void)state;
	assert_int_equal(netparse_iperf3(&r, text, len), 0);
	assert_int_equal(r.protocol, NETPARSE_UDP);
	assert_int_equal(r.streams, 2);
	assert_int_equal(r.omit, 0);
	assert_num(r.bits_per_second, 1841279555.5771084);
	assert_num(r.bytes, 460379040.0);
	assert_num(r.duration, 2.000257);
	assert_near(r.kbytes_per_second, 224765.57074915874);
	assert_num(r.lost_percent, 7.8949246912698978);
	assert_num(r.jitter_ms, 0.019868971882056972);
	assert_int_equal(r.lost_packets, 4424);
	assert_int_equal(r.packets, 56036);
	assert_num(r.cpu_host, 30.949299082935607);
	assert_num(r.cpu_remote, 21.650298859952766);
	free(text);
}

static void test_iperf3_error_refused(void **state)
{
	struct iperf3_result r;
	size_t len;
	char *text = load(REFUSED, &len);

	(void)state;
	err_clear();
	assert_int_equal(netparse_iperf3(&r, text, len), NETPARSE_ERR_RUN);
	assert_string_equal(r.error, "iperf3: unable to connect to server: Connection refused");
	assert_string_equal(err_msg(), r.error);
	assert_int_equal(err_code(), NETPARSE_ERR_RUN);
	assert_num(r.bits_per_second, 0);
	free(text);
}

/* --- iperf3: broken output --------------------------------------------- */

/* Every cut before the closing brace, each in a buffer of exactly that size for ASan. */
static void truncate_all(const char *name)
{
	size_t len, last;
	char *text = load(name, &len);
	struct iperf3_result r;

	last = len;
	while (last > 0 && text[last - 1] != '}')
		last--;
	assert_true(last > 0);
	for (size_t n = 0; n < last; n++) {
		char *cut = malloc(n ? n : 1);
		int rc;

		assert_non_null(cut);
		memcpy(cut, text, n);
		rc = netparse_iperf3(&r, cut, n);
		free(cut);
		if (rc != ERR_INVALID || !r.error[0]) {
			print_error("%s cut at %zu of %zu: rc %d, error '%s'\n", name, n, len, rc, r.error);
			fail();
		}
	}
	/* The loop's bound is right: the text through its closing brace is whole. */
	assert_true(netparse_iperf3(&r, text, last) == 0 || !strcmp(name, REFUSED));
	free(text);
}

static void test_iperf3_truncated(void **state)
{
	struct iperf3_result r;
	size_t len;
	char *text = load(UDP4, &len);

	(void)state;
	truncate_all(TCP4);
	truncate_all(UDP4);
	truncate_all(UDP6);
	truncate_all(REFUSED);
	/* And the message says why. */
	assert_int_equal(netparse_iperf3(&r, text, len / 2), ERR_INVALID);
	assert_contains(r.error, "not valid JSON");
	free(text);
}

static void test_iperf3_empty(void **state)
{
	struct iperf3_result r;

	(void)state;
	assert_int_equal(netparse_iperf3(&r, "", 0), ERR_INVALID);
	assert_string_equal(r.error, "iperf3: empty output");
	assert_int_equal(netparse_iperf3(&r, NULL, 0), ERR_INVALID);
	assert_int_equal(parse_iperf3_str(&r, " \n\t"), ERR_INVALID);
	assert_contains(r.error, "not valid JSON");
}

static void test_iperf3_garbage(void **state)
{
	static const char *const texts[] = {
		"iperf3: error - unable to connect to server: Connection refused\n",
		"Connecting to host 127.0.0.1, port 5201\n[  5] local 127.0.0.1",
		"{\"start\":", "{]", "\xff\xfe{\"a\":1}", "nul\0l",
		"{\"start\":{}}garbage", "{\"a\":1e99999}",
	};
	struct iperf3_result r;
	uint32_t seed = 1;

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		assert_int_equal(parse_iperf3_str(&r, texts[i]), ERR_INVALID);
		assert_true(r.error[0] != '\0');
	}
	assert_int_equal(netparse_iperf3(&r, "{\"a\":\"x\0y\"}", 11), ERR_INVALID);
	for (int i = 0; i < 500; i++) {
		size_t n = 1 + lcg(&seed) % 400;
		char *buf = malloc(n);

		assert_non_null(buf);
		for (size_t k = 0; k < n; k++)
			buf[k] = (char)lcg(&seed);
		if (i % 2)
			buf[0] = '{';
		assert_int_equal(netparse_iperf3(&r, buf, n), ERR_INVALID);
		assert_true(r.error[0] != '\0');
		free(buf);
	}
}

static void test_iperf3_not_iperf3(void **state)
{
	static const char *const texts[] = { "{\"a\":1}", "[1,2]", "{}", "{\"start\":[],\"end\":{}}" };
	struct iperf3_result r;

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		assert_int_equal(parse_iperf3_str(&r, texts[i]), ERR_INVALID);
		assert_contains(r.error, "not iperf3 -J output");
	}
	/* Scalars are not even accepted as a JSON document here. */
	assert_int_equal(parse_iperf3_str(&r, "42"), ERR_INVALID);
	assert_int_equal(parse_iperf3_str(&r, "\"x\""), ERR_INVALID);
	assert_int_equal(parse_iperf3_str(&r, "null"), ERR_INVALID);
	assert_int_equal(parse_iperf3_str(&r, "{\"start\":{},\"end\":{}}"), ERR_INVALID);
	assert_string_equal(r.error, "iperf3: no start.test_start.protocol in the output");
	assert_int_equal(parse_iperf3_str(&r, "{\"start\":{\"test_start\":{\"protocol\":\"QUIC\",\"num_streams\":1}},"
					      "\"end\":{}}"), ERR_INVALID);
	assert_contains(r.error, "not TCP, UDP or SCTP");
	assert_int_equal(parse_iperf3_str(&r, "{\"start\":{\"test_start\":{\"protocol\":\"TCP\",\"num_streams\":1}},"
					      "\"end\":{}}"), ERR_INVALID);
	assert_string_equal(r.error, "iperf3: no end.sum_received in the output");
	/* Nothing half-read is left behind. */
	assert_int_equal(r.protocol, 0);
	assert_int_equal(r.streams, 0);
	assert_num(r.lost_percent, -1);
}

static void test_iperf3_missing_fields(void **state)
{
	struct iperf3_result r;
	json_t *j, *sr;

	(void)state;
	j = load_json(TCP4);
	json_object_del(json_object_get(j, "end"), "sum_received");
	assert_int_equal(parse_json(&r, j), ERR_INVALID);
	assert_string_equal(r.error, "iperf3: no end.sum_received in the output");
	assert_num(r.bits_per_second, 0);
	json_decref(j);

	/* Old iperf3 UDP: only end.sum, the sender's rate. Refused, not estimated. */
	j = load_json(UDP4);
	json_object_del(json_object_get(j, "end"), "sum_received");
	assert_int_equal(parse_json(&r, j), ERR_INVALID);
	assert_contains(r.error, "no end.sum_received in the UDP output");
	assert_contains(r.error, "sender's rate");
	json_decref(j);

	j = load_json(TCP4);
	sr = json_object_get(json_object_get(j, "end"), "sum_received");
	json_object_del(sr, "bits_per_second");
	assert_int_equal(parse_json(&r, j), ERR_INVALID);
	assert_string_equal(r.error, "iperf3: no end.sum_received.bits_per_second in the output");
	json_object_set_new(sr, "bits_per_second", json_string("fast"));
	assert_int_equal(parse_json(&r, j), ERR_INVALID);
	assert_string_equal(r.error, "iperf3: end.sum_received.bits_per_second is not a number");
	json_object_set_new(sr, "bits_per_second", json_null());
	assert_int_equal(parse_json(&r, j), ERR_INVALID);
	json_object_set_new(sr, "bits_per_second", json_real(-5));
	assert_int_equal(parse_json(&r, j), ERR_INVALID);
	assert_contains(r.error, "negative");
	json_object_set_new(sr, "bits_per_second", json_real(1e9));
	json_object_del(sr, "seconds");
	assert_int_equal(parse_json(&r, j), ERR_INVALID);
	assert_contains(r.error, "end.sum_received.seconds");
	json_object_set_new(sr, "seconds", json_real(2));

	/* What is not the metric may be missing; it says so with -1. */
	json_object_del(json_object_get(j, "end"), "cpu_utilization_percent");
	json_object_del(json_object_get(j, "end"), "sum_sent");
	json_object_del(json_object_get(j, "start"), "version");
	assert_int_equal(parse_json(&r, j), 0);
	assert_num(r.bits_per_second, 1e9);
	assert_num(r.cpu_host, -1);
	assert_num(r.cpu_remote, -1);
	assert_int_equal(r.retransmits, -1);
	assert_string_equal(r.version, "");

	json_object_set_new(json_object_get(json_object_get(j, "start"), "test_start"), "num_streams", json_integer(0));
	assert_int_equal(parse_json(&r, j), ERR_INVALID);
	assert_contains(r.error, "start.test_start.num_streams is 0");
	json_object_del(json_object_get(json_object_get(j, "start"), "test_start"), "num_streams");
	assert_int_equal(parse_json(&r, j), ERR_INVALID);
	assert_contains(r.error, "no start.test_start.num_streams");
	json_decref(j);

	j = load_json(UDP6);
	sr = json_object_get(json_object_get(j, "end"), "sum_received");
	json_object_del(sr, "lost_percent");
	assert_int_equal(parse_json(&r, j), ERR_INVALID);
	assert_string_equal(r.error, "iperf3: no end.sum_received.lost_percent in the output");
	json_object_set_new(sr, "lost_percent", json_real(7));
	json_object_set_new(sr, "jitter_ms", json_true());
	assert_int_equal(parse_json(&r, j), ERR_INVALID);
	assert_contains(r.error, "jitter_ms is not a number");
	json_decref(j);
}

static void test_iperf3_nothing_received(void **state)
{
	struct iperf3_result r;
	json_t *j, *sr;

	(void)state;
	j = load_json(UDP4);
	sr = json_object_get(json_object_get(j, "end"), "sum_received");
	json_object_set_new(sr, "bits_per_second", json_integer(0));
	json_object_set_new(sr, "bytes", json_integer(0));
	json_object_set_new(sr, "lost_percent", json_integer(100));
	assert_int_equal(parse_json(&r, j), NETPARSE_ERR_RUN);
	assert_string_equal(r.error, "iperf3: nothing received (end.sum_received.bits_per_second is 0, lost 100%)");
	json_decref(j);

	j = load_json(TCP4);
	sr = json_object_get(json_object_get(j, "end"), "sum_received");
	json_object_set_new(sr, "bits_per_second", json_real(0));
	assert_int_equal(parse_json(&r, j), NETPARSE_ERR_RUN);
	assert_contains(r.error, "nothing received");
	json_decref(j);
}

static void test_iperf3_tool_errors(void **state)
{
	struct iperf3_result r;
	json_t *j;

	(void)state;
	/* An interrupted run still prints sums; they are not a measurement. */
	j = load_json(UDP4);
	json_object_set_new(j, "error", json_string("interrupt - the client has terminated"));
	assert_int_equal(parse_json(&r, j), NETPARSE_ERR_RUN);
	assert_string_equal(r.error, "iperf3: interrupt - the client has terminated");
	json_object_set_new(j, "error", json_pack("{s:i, s:s}", "code", 3, "text", "busy"));
	assert_int_equal(parse_json(&r, j), NETPARSE_ERR_RUN);
	assert_string_equal(r.error, "iperf3: {\"code\":3,\"text\":\"busy\"}");
	json_object_set_new(j, "error", json_string(""));
	assert_int_equal(parse_json(&r, j), NETPARSE_ERR_RUN);
	assert_string_equal(r.error, "iperf3: error (no message)");
	/* null is no error */
	json_object_set_new(j, "error", json_null());
	assert_int_equal(parse_json(&r, j), 0);
	json_decref(j);

	assert_int_equal(parse_iperf3_str(&r, "{\"error\":\"the server is busy running a test. try again later\"}"),
			 NETPARSE_ERR_RUN);
	assert_string_equal(r.error, "iperf3: the server is busy running a test. try again later");
}

static void test_iperf3_reverse(void **state)
{
	struct iperf3_result r;
	json_t *j;

	(void)state;
	/* -R: the client receives; sum_received is still the receiver's. */
	j = load_json(TCP4);
	json_object_set_new(json_object_get(json_object_get(j, "start"), "test_start"), "reverse", json_integer(1));
	assert_int_equal(parse_json(&r, j), 0);
	assert_int_equal(r.reverse, 1);
	assert_num(r.bits_per_second, 21679162158.716572);
	json_object_set_new(json_object_get(json_object_get(j, "start"), "test_start"), "reverse", json_integer(7));
	assert_int_equal(parse_json(&r, j), ERR_INVALID);
	json_decref(j);
}

/* Random byte damage anywhere: never a crash, never a bogus success. */
static void test_iperf3_mutations(void **state)
{
	static const char *const names[] = { TCP4, UDP4, UDP6, REFUSED };
	uint32_t seed = 7;

	(void)state;
	for (size_t f = 0; f < sizeof(names) / sizeof(names[0]); f++) {
		size_t len;
		char *text = load(names[f], &len);

		for (int i = 0; i < 400; i++) {
			char *m = malloc(len);
			struct iperf3_result r;
			int rc;

			assert_non_null(m);
			memcpy(m, text, len);
			for (int k = 0; k < 1 + i % 4; k++)
				m[lcg(&seed) % len] = (char)lcg(&seed);
			rc = netparse_iperf3(&r, m, len);
			if (rc == 0)
				assert_true(isfinite(r.bits_per_second) && r.bits_per_second > 0 && !r.error[0]);
			else
				assert_true(r.error[0] != '\0');
			free(m);
		}
		free(text);
	}
}

static void test_iperf3_sample(void **state)
{
	struct iperf3_result r, bad;
	struct run_sample s;
	size_t len;
	char *text = load(UDP4, &len);
	json_t *x;

	(void)state;
	assert_int_equal(netparse_iperf3(&r, text, len), 0);
	assert_int_equal(netparse_iperf3_sample(&s, &r, "KBytes/s"), 0);
	assert_near(s.value, 351627.40327248524);
	assert_string_equal(s.unit, "KBytes/s");
	assert_string_equal(s.error, "");
	assert_non_null(s.extra);
	assert_string_equal(json_string_value(json_object_get(s.extra, "protocol")), "udp");
	assert_int_equal(json_integer_value(json_object_get(s.extra, "streams")), 4);
	assert_num(json_number_value(json_object_get(s.extra, "lost_percent")), 79.635842341154756);
	assert_num(json_number_value(json_object_get(s.extra, "jitter_ms")), 0.25180658551108676);
	assert_int_equal(json_integer_value(json_object_get(s.extra, "lost_packets")), 241647);
	assert_num(json_number_value(json_object_get(s.extra, "cpu_host_percent")), 76.791920850462);
	assert_num(json_number_value(json_object_get(s.extra, "cpu_remote_percent")), 39.7125751496744);
	assert_null(json_object_get(s.extra, "retransmits"));
	assert_null(json_object_get(s.extra, "value"));
	json_decref(s.extra);

	assert_int_equal(netparse_iperf3_sample(&s, &r, "Mbits/s"), 0);
	assert_near(s.value, 2880.5316876081991);
	json_decref(s.extra);
	assert_int_equal(netparse_iperf3_sample(&s, &r, "Kbits/sec"), 0);
	assert_near(s.value, 2880531.6876081991);
	assert_string_equal(s.unit, "Kbits/sec");
	json_decref(s.extra);
	assert_int_equal(netparse_iperf3_sample(&s, &r, "bits/s"), 0);
	assert_num(s.value, 2880531687.6081991);
	json_decref(s.extra);

	assert_int_equal(netparse_iperf3_sample(&s, &r, "furlongs/s"), ERR_INVALID);
	assert_num(s.value, 0);
	assert_contains(s.error, "unknown unit");
	assert_null(s.extra);
	assert_int_equal(netparse_iperf3_sample(&s, &r, NULL), ERR_INVALID);
	assert_int_equal(netparse_iperf3_sample(&s, &r, "kbytes/s"), ERR_INVALID);

	/* A failed parse makes a failed sample with the tool's message. */
	free(text);
	text = load(REFUSED, &len);
	assert_int_equal(netparse_iperf3(&bad, text, len), NETPARSE_ERR_RUN);
	assert_int_equal(netparse_iperf3_sample(&s, &bad, "KBytes/s"), 0);
	assert_num(s.value, 0);
	assert_string_equal(s.error, "iperf3: unable to connect to server: Connection refused");
	assert_string_equal(s.unit, "KBytes/s");
	assert_null(s.extra);
	free(text);

	text = load(TCP4, &len);
	assert_int_equal(netparse_iperf3(&r, text, len), 0);
	assert_int_equal(netparse_iperf3_sample(&s, &r, "Gbits/s"), 0);
	assert_near(s.value, 21.679162158716572);
	x = s.extra;
	assert_string_equal(json_string_value(json_object_get(x, "protocol")), "tcp");
	assert_int_equal(json_integer_value(json_object_get(x, "retransmits")), 0);
	assert_null(json_object_get(x, "lost_percent"));
	assert_string_equal(json_string_value(json_object_get(x, "iperf3_version")), "iperf 3.12");
	json_decref(x);
	free(text);
}

/* --- pktgen ------------------------------------------------------------- */

static void check_fixture_numbers(const struct pktgen_result *r)
{
	assert_string_equal(r->error, "");
	assert_int_equal(r->pps, 111600);
	assert_int_equal(r->mbps, 53);
	assert_int_equal(r->bps, 53568000);
	assert_int_equal(r->errors, 0);
	assert_int_equal(r->packets, 200000);
	assert_int_equal(r->duration_us, 1792112);
	assert_int_equal(r->busy_us, 1792112);
	assert_int_equal(r->idle_us, 0);
	assert_int_equal(r->pkt_size, 60);
	assert_int_equal(r->frags, 0);
}

static void test_pktgen_fixture(void **state)
{
	struct pktgen_result r;
	size_t len;
	char *text = load(PKTGEN, &len);

	(void)state;
	assert_int_equal(netparse_pktgen(&r, text, len), 0);
	check_fixture_numbers(&r);
	free(text);
}

static void test_pktgen_crlf_and_noise(void **state)
{
	struct pktgen_result r;
	struct sbuf sb = SBUF_INIT;
	size_t len;
	char *text = load(PKTGEN, &len);

	(void)state;
	/* Read off a serial console: \r\n and kernel messages around it. */
	sbuf_adds(&sb, "[    3.141592] pktgen: Packet Generator for packet performance testing.\r\n");
	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\n')
			sbuf_add(&sb, "\r", 1);
		sbuf_add(&sb, &text[i], 1);
	}
	sbuf_adds(&sb, "# \r\n");
	assert_int_equal(netparse_pktgen(&r, sb.buf, sb.len), 0);
	check_fixture_numbers(&r);
	sbuf_release(&sb);

	/* Just the two lines, as an adapter might grep them. */
	assert_int_equal(parse_pktgen_str(&r, "Result: OK: 1792112(c1792112+d0) usec, 200000 (60byte,0frags)\n"
					   "  111600pps 53Mb/sec (53568000bps) errors: 0"), 0);
	check_fixture_numbers(&r);
	free(text);
}

static void test_pktgen_truncated(void **state)
{
	struct pktgen_result r;
	size_t len;
	char *text = load(PKTGEN, &len);

	(void)state;
	/* The file ends "errors: 0\n": every shorter cut loses something. */
	assert_true(len > 2 && text[len - 1] == '\n' && text[len - 2] == '0');
	for (size_t n = 0; n < len - 1; n++) {
		char *cut = malloc(n ? n : 1);
		int rc;

		assert_non_null(cut);
		memcpy(cut, text, n);
		rc = netparse_pktgen(&r, cut, n);
		free(cut);
		if (rc >= 0 || !r.error[0] || r.pps != 0) {
			print_error("cut at %zu of %zu: rc %d, error '%s'\n", n, len, rc, r.error);
			fail();
		}
	}
	assert_int_equal(netparse_pktgen(&r, text, len - 1), 0);
	check_fixture_numbers(&r);

	assert_int_equal(netparse_pktgen(&r, text, len - 3), ERR_INVALID);
	assert_contains(r.error, "cannot read the rate line");
	free(text);
}

/* The fixture's head (Params and Current) with other Result lines. */
static char *with_result(const char *tail)
{
	size_t len;
	char *text = load(PKTGEN, &len);
	char *res = strstr(text, "Result:");
	char *out;

	assert_non_null(res);
	*res = '\0';
	out = xasprintf("%s%s", text, tail);
	free(text);
	return out;
}

static void test_pktgen_not_ok(void **state)
{
	static const struct { const char *tail, *msg; } cases[] = {
		{ "Result: Idle\n", "pktgen: no completed run: Result: Idle" },
		{ "Result: Starting\n", "pktgen: no completed run: Result: Starting" },
		{ "Result: Error starting\n", "pktgen: no completed run: Result: Error starting" },
		{ "Result: ERROR: IPv6 link address not available.\r\n",
		  "pktgen: no completed run: Result: ERROR: IPv6 link address not available." },
		{ "Result: No such parameter \"flag\"\n", "pktgen: no completed run: Result: No such parameter \"flag\"" },
		/* pktgen's acknowledgement of a config write is "OK" too */
		{ "Result: OK: count=200000\n", "pktgen: no completed run: Result: OK: count=200000" },
		{ "Result: OK: dst_min=1.1.1.1\n", "pktgen: no completed run: Result: OK: dst_min=1.1.1.1" },
		{ "Result: OK: 1(c1+d0) usec, 0 (60byte,0frags)\n  0pps 0Mb/sec (0bps) errors: 0\n",
		  "pktgen: nothing sent (0 packets, 0pps)" },
	};
	struct pktgen_result r;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = with_result(cases[i].tail);

		err_clear();
		assert_int_equal(parse_pktgen_str(&r, text), NETPARSE_ERR_RUN);
		assert_string_equal(r.error, cases[i].msg);
		assert_string_equal(err_msg(), cases[i].msg);
		assert_int_equal(r.pps, 0);
		free(text);
	}
}

static void test_pktgen_malformed(void **state)
{
	static const struct { const char *tail, *msg; } cases[] = {
		{ "", "pktgen: no 'Result:' line in the output" },
		{ "Result: OK: 1792112(c1792112+d0) usec, 200000 (60byte,0frags)\n",
		  "pktgen: no rate line after the Result line (output cut short?)" },
		{ "Result: OK: 1792112(c1792112+d0) usec, 200000 (60byte,0frags)\n  \n",
		  "pktgen: no rate line after the Result line (output cut short?)" },
		{ "Result: OK: 1792112(c1792112+d0) usec, 200000 (60byte,0frags)\n  111600pps 53Mb/sec\n",
		  "pktgen: cannot read the rate line: 111600pps 53Mb/sec" },
		{ "Result: OK: 1792112 usec, 200000 (60byte,0frags)\n  111600pps 53Mb/sec (53568000bps) errors: 0\n",
		  "pktgen: cannot read the Result line: OK: 1792112 usec, 200000 (60byte,0frags)" },
		{ "Result: OK: 1792112(c1792112+d0) usec, 200000 (60byte,0frags)\n"
		  "  111600pps 54Mb/sec (53568000bps) errors: 0\n",
		  "pktgen: rate line does not add up: 111600pps of 60 bytes is not 53568000bps / 54Mb/sec" },
		{ "Result: OK: 1794224(c1792112+d0) usec, 200000 (60byte,0frags)\n"
		  "  111600pps 53Mb/sec (53568000bps) errors: 0\n",
		  "pktgen: Result line does not add up: c1792112 + d0 is not 1794224 usec" },
		{ "Result: OK: 18446744073709551615(c18446744073709551615+d1) usec, 200000 (60byte,0frags)\n"
		  "  111600pps 53Mb/sec (53568000bps) errors: 0\n",
		  "pktgen: Result line does not add up: c18446744073709551615 + d1 is not 18446744073709551615 usec" },
		{ "Result: OK: 1792112(c1792112+d0) usec, 200000 (64byte,0frags)\n"
		  "  111600pps 53Mb/sec (53568000bps) errors: 0\n",
		  "pktgen: rate line does not add up: 111600pps of 64 bytes is not 53568000bps / 53Mb/sec" },
		{ "Result: OK: 1792112(c1792112+d0) usec, 200000 (60byte,0frags)\n"
		  "  111600pps 53Mb/sec (53568000bps) errors: 0 and more\n",
		  "pktgen: cannot read the rate line: 111600pps 53Mb/sec (53568000bps) errors: 0 and more" },
		{ "Result: OK: 1792112(c1792112+d0) usec, 200000 (60byte,0frags)\n"
		  "  -111600pps 53Mb/sec (53568000bps) errors: 0\n",
		  "pktgen: cannot read the rate line: -111600pps 53Mb/sec (53568000bps) errors: 0" },
		{ "Result: OK: 1792112(c1792112+d0) usec, 200000 (60byte,0frags)\n"
		  "  99999999999999999999999pps 53Mb/sec (53568000bps) errors: 0\n",
		  "pktgen: cannot read the rate line: 99999999999999999999999pps 53Mb/sec (53568000bps) errors: 0" },
		{ "Result: OK: 1792112(c1792112+d0) usec, 200000 (60byte,0frags)\n"
		  "  111600pps 53Mb/sec (53568000bps) errors: 0\n"
		  "Result: OK: 1792112(c1792112+d0) usec, 200000 (60byte,0frags)\n"
		  "  111600pps 53Mb/sec (53568000bps) errors: 0\n",
		  "pktgen: 2 'Result:' lines, expected one device's" },
	};
	struct pktgen_result r;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *text = with_result(cases[i].tail);

		assert_int_equal(parse_pktgen_str(&r, text), ERR_INVALID);
		assert_string_equal(r.error, cases[i].msg);
		/* Nothing half-read is left behind. */
		assert_int_equal(r.pps, 0);
		assert_int_equal(r.packets, 0);
		assert_int_equal(r.duration_us, 0);
		free(text);
	}
}

static void test_pktgen_garbage(void **state)
{
	struct pktgen_result r;
	uint32_t seed = 3;
	size_t len;
	char *text = load(PKTGEN, &len);

	(void)state;
	assert_int_equal(netparse_pktgen(&r, "", 0), ERR_INVALID);
	assert_string_equal(r.error, "pktgen: empty output");
	assert_int_equal(netparse_pktgen(&r, NULL, 0), ERR_INVALID);
	assert_int_equal(parse_pktgen_str(&r, "\n\n  \n"), ERR_INVALID);
	assert_int_equal(parse_pktgen_str(&r, "Result:"), ERR_INVALID);
	assert_string_equal(r.error, "pktgen: empty Result line (output cut short?)");
	assert_int_equal(parse_pktgen_str(&r, "Result:  \r\n  111600pps"), ERR_INVALID);
	assert_int_equal(parse_pktgen_str(&r, "Result: OK"), ERR_INVALID);
	assert_string_equal(r.error, "pktgen: Result line cut short: OK");
	assert_int_equal(parse_pktgen_str(&r, "{\"end\":{}}"), ERR_INVALID);
	/* A NUL inside: not text, even though the rest is the good fixture. */
	text[10] = '\0';
	assert_int_equal(netparse_pktgen(&r, text, len), ERR_INVALID);
	assert_contains(r.error, "NUL");
	free(text);

	for (int i = 0; i < 500; i++) {
		size_t n = 1 + lcg(&seed) % 300;
		char *buf = malloc(n);

		assert_non_null(buf);
		for (size_t k = 0; k < n; k++)
			buf[k] = (char)lcg(&seed);
		assert_true(netparse_pktgen(&r, buf, n) < 0);
		assert_true(r.error[0] != '\0');
		free(buf);
	}
}

static void test_pktgen_mutations(void **state)
{
	size_t len;
	char *text = load(PKTGEN, &len);
	uint32_t seed = 11;

	(void)state;
	for (int i = 0; i < 3000; i++) {
		char *m = malloc(len);
		struct pktgen_result r;
		int rc;

		assert_non_null(m);
		memcpy(m, text, len);
		m[lcg(&seed) % len] = (char)lcg(&seed);
		rc = netparse_pktgen(&r, m, len);
		if (rc == 0)
			assert_true(r.pps > 0 && r.bps / 1000000 == r.mbps && !r.error[0]);
		else
			assert_true(r.error[0] != '\0');
		free(m);
	}
	free(text);
}

static void test_pktgen_sample(void **state)
{
	struct pktgen_result r, bad;
	struct run_sample s;
	size_t len;
	char *text = load(PKTGEN, &len);

	(void)state;
	assert_int_equal(netparse_pktgen(&r, text, len), 0);
	assert_int_equal(netparse_pktgen_sample(&s, &r, "pps"), 0);
	assert_num(s.value, 111600);
	assert_string_equal(s.unit, "pps");
	assert_string_equal(s.error, "");
	assert_int_equal(json_integer_value(json_object_get(s.extra, "errors")), 0);
	assert_int_equal(json_integer_value(json_object_get(s.extra, "mbps")), 53);
	assert_int_equal(json_integer_value(json_object_get(s.extra, "packets")), 200000);
	assert_int_equal(json_integer_value(json_object_get(s.extra, "duration_us")), 1792112);
	assert_int_equal(json_integer_value(json_object_get(s.extra, "pkt_size")), 60);
	json_decref(s.extra);

	/* Mb/s keeps the decimals pktgen's "53Mb/sec" drops. */
	assert_int_equal(netparse_pktgen_sample(&s, &r, "Mb/s"), 0);
	assert_near(s.value, 53.568);
	json_decref(s.extra);
	assert_int_equal(netparse_pktgen_sample(&s, &r, "Mb/sec"), 0);
	assert_near(s.value, 53.568);
	assert_string_equal(s.unit, "Mb/sec");
	json_decref(s.extra);
	assert_int_equal(netparse_pktgen_sample(&s, &r, "Mpps"), 0);
	assert_near(s.value, 0.1116);
	json_decref(s.extra);
	assert_int_equal(netparse_pktgen_sample(&s, &r, "bps"), 0);
	assert_num(s.value, 53568000);
	json_decref(s.extra);

	assert_int_equal(netparse_pktgen_sample(&s, &r, "Mbits/s"), ERR_INVALID);
	assert_num(s.value, 0);
	assert_contains(s.error, "unknown metric");
	assert_null(s.extra);

	assert_int_equal(parse_pktgen_str(&bad, "Result: Idle\n"), NETPARSE_ERR_RUN);
	assert_int_equal(netparse_pktgen_sample(&s, &bad, "pps"), 0);
	assert_num(s.value, 0);
	assert_string_equal(s.error, "pktgen: no completed run: Result: Idle");
	assert_null(s.extra);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_iperf3_tcp),
		cmocka_unit_test(test_iperf3_udp4_p4_omit),
		cmocka_unit_test(test_iperf3_udp6_p2),
		cmocka_unit_test(test_iperf3_error_refused),
		cmocka_unit_test(test_iperf3_truncated),
		cmocka_unit_test(test_iperf3_empty),
		cmocka_unit_test(test_iperf3_garbage),
		cmocka_unit_test(test_iperf3_not_iperf3),
		cmocka_unit_test(test_iperf3_missing_fields),
		cmocka_unit_test(test_iperf3_nothing_received),
		cmocka_unit_test(test_iperf3_tool_errors),
		cmocka_unit_test(test_iperf3_reverse),
		cmocka_unit_test(test_iperf3_mutations),
		cmocka_unit_test(test_iperf3_sample),
		cmocka_unit_test(test_pktgen_fixture),
		cmocka_unit_test(test_pktgen_crlf_and_noise),
		cmocka_unit_test(test_pktgen_truncated),
		cmocka_unit_test(test_pktgen_not_ok),
		cmocka_unit_test(test_pktgen_malformed),
		cmocka_unit_test(test_pktgen_garbage),
		cmocka_unit_test(test_pktgen_mutations),
		cmocka_unit_test(test_pktgen_sample),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
