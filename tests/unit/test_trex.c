/*
 * Unit tests of the trex workload kind (agents/workloads/trex.c): its
 * definition check and defaults, the client's argv, rates and ports, the
 * JSON-RPC requests and replies (in the shapes TRex's sources give), the
 * rates from port counters, and the client's output into a sample.
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

#include "err.h"
#include "trex.h"
#include "util.h"
#include "workload.h"

static json_t *def_of(const char *text)
{
	json_t *d = json_loads(text, 0, NULL);

	assert_non_null(d);
	return d;
}

static int check_msg(json_t *d)
{
	return workload_check_msg(workload_find("trex"), d);
}

static void test_check_defaults_and_argv(void **state)
{
	json_t *d = def_of("{\"traffic_profile\": \"/etc/trex/udp64.json\", \"ports\": \"0, 1\"}");
	const char **argv = NULL;
	const struct workload_ops *ops = workload_find("trex");
	char *line;
	struct sbuf sb = SBUF_INIT;

	(void)state;
	assert_non_null(ops);
	assert_int_equal(ops->places, WORKLOAD_HOST);
	assert_int_equal(check_msg(d), 0);
	assert_string_equal(json_string_value(json_object_get(d, "server")), "127.0.0.1");
	assert_int_equal(json_integer_value(json_object_get(d, "sync_port")), 4501);
	assert_string_equal(json_string_value(json_object_get(d, "metric")), "rx_pps");
	assert_string_equal(json_string_value(json_object_get(d, "unit")), "pps");
	assert_string_equal(json_string_value(json_object_get(d, "rate")), "100%");
	/* ports in their canonical form */
	line = json_dumps(json_object_get(d, "ports"), JSON_COMPACT);
	assert_string_equal(line, "[0,1]");
	free(line);
	assert_int_equal(ops->argv(&argv, d), 0);
	for (size_t i = 0; argv[i]; i++)
		sbuf_addf(&sb, "%s%s", i ? " " : "", argv[i]);
	assert_string_equal(sb.buf, "bisect-trex --server 127.0.0.1 --sync-port 4501 --profile /etc/trex/udp64.json "
			    "--ports 0,1 --rate 100% --duration 10 --user bisectd --timeout 10");
	free(argv);
	/* Idempotent: the agent checks what the coordinator sent. */
	line = json_dumps(d, JSON_SORT_KEYS);
	assert_int_equal(check_msg(d), 0);
	{
		char *again = json_dumps(d, JSON_SORT_KEYS);

		assert_string_equal(line, again);
		free(again);
	}
	free(line);
	sbuf_release(&sb);
	json_decref(d);
}

static void test_check_units_follow_metric(void **state)
{
	static const char *const pairs[][2] = {
		{ "rx_pps", "pps" }, { "tx_mpps", "Mpps" }, { "rx_bps", "bps" }, { "rx_gbps", "Gbps" }, { "rx_pct", "%" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		json_t *d = json_pack("{s:s, s:[i], s:s, s:s, s:i}", "traffic_profile", "/p.json", "ports", 0, "metric", pairs[i][0],
				      "rate", "10mpps", "duration", 3);

		assert_int_equal(check_msg(d), 0);
		assert_string_equal(json_string_value(json_object_get(d, "unit")), pairs[i][1]);
		json_decref(d);
	}
}

static void test_check_refuses(void **state)
{
	static const struct {
		const char *def, *msg;
	} cases[] = {
		{ "{\"ports\": [0]}", "'traffic_profile' is missing" },
		{ "{\"traffic_profile\": \"rel.json\", \"ports\": [0]}", "'traffic_profile' must be an absolute path" },
		{ "{\"traffic_profile\": \"/p.json\"}", "'ports' is missing" },
		{ "{\"traffic_profile\": \"/p.json\", \"ports\": \"0,0\"}", "port 0 is named twice" },
		{ "{\"traffic_profile\": \"/p.json\", \"ports\": [256]}", "from 0 to 255" },
		{ "{\"traffic_profile\": \"/p.json\", \"ports\": \"a\"}", "not 'a'" },
		{ "{\"traffic_profile\": \"/p.json\", \"ports\": [true]}", "'ports'[0] must hold strings or integers" },
		{ "{\"traffic_profile\": \"/p.json\", \"ports\": [0], \"rate\": \"fast\"}", "'fast' is not a rate" },
		{ "{\"traffic_profile\": \"/p.json\", \"ports\": [0], \"rate\": \"150%\"}", "at most 100%" },
		{ "{\"traffic_profile\": \"/p.json\", \"ports\": [0], \"metric\": \"Mbits\"}", "must be one of rx_pps, tx_pps" },
		{ "{\"traffic_profile\": \"/p.json\", \"ports\": [0], \"metric\": \"drop_pct\"}", "use rx_pct" },
		{ "{\"traffic_profile\": \"/p.json\", \"ports\": [0], \"server\": \"a b\"}", "'server' must be a host name" },
		{ "{\"traffic_profile\": \"/p.json\", \"ports\": [0], \"user\": \"x;y\"}", "'user' must be 1 to 64" },
		{ "{\"traffic_profile\": \"/p.json\", \"ports\": [0], \"sync_port\": 70000}", "from 1 to 65535" },
		{ "{\"traffic_profile\": \"/p.json\", \"ports\": [0], \"duration\": 0}", "'duration' must be an integer" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *d = def_of(cases[i].def);

		assert_int_equal(check_msg(d), ERR_INVALID);
		if (!strstr(err_msg(), cases[i].msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, err_msg(), cases[i].msg);
		json_decref(d);
	}
}

static void test_rates(void **state)
{
	static const struct {
		const char *in, *type;
		double value;
	} ok[] = {
		{ "10mpps", "pps", 1e7 }, { "1.5Kpps", "pps", 1500 }, { "500pps", "pps", 500 }, { "1gbps", "bps", 1e9 },
		{ "25GBPSL1", "bpsl1", 25e9 }, { "50%", "percentage", 50 }, { "2", "raw", 2 }, { ".5", "raw", 0.5 },
	};
	static const char *const bad[] = { "", "0", "-1mpps", "10 mpps", "10xpps", "mpps", "1e400", "nan", "10mpp", "101%" };
	struct trex_mul m;
	json_t *j;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(trex_rate_parse(&m, ok[i].in), 0);
		assert_string_equal(m.type, ok[i].type);
		assert_true(fabs(m.value - ok[i].value) < 1e-6 * ok[i].value);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (trex_rate_parse(&m, bad[i]) != ERR_INVALID)
			fail_msg("rate '%s' accepted", bad[i]);
	assert_int_equal(trex_rate_parse(&m, "10mpps"), 0);
	j = trex_mul_json(&m);
	assert_string_equal(json_string_value(json_object_get(j, "op")), "abs");
	assert_string_equal(json_string_value(json_object_get(j, "type")), "pps");
	json_decref(j);
}

static void test_ports(void **state)
{
	int p[TREX_MAX_PORTS];
	json_t *v;

	(void)state;
	assert_int_equal(trex_ports_parse_str(p, TREX_MAX_PORTS, "0,1"), 2);
	assert_int_equal(p[1], 1);
	assert_int_equal(trex_ports_parse_str(p, TREX_MAX_PORTS, " 3 "), 1);
	assert_int_equal(p[0], 3);
	assert_int_equal(trex_ports_parse_str(p, TREX_MAX_PORTS, "0,"), ERR_INVALID);
	assert_int_equal(trex_ports_parse_str(p, TREX_MAX_PORTS, ""), ERR_INVALID);
	assert_int_equal(trex_ports_parse_str(p, 2, "0,1,2"), ERR_INVALID);
	v = json_pack("[s, i]", "2", 5);
	assert_int_equal(trex_ports_parse(p, TREX_MAX_PORTS, v), 2);
	assert_int_equal(p[0], 2);
	assert_int_equal(p[1], 5);
	json_decref(v);
	v = json_array();
	assert_int_equal(trex_ports_parse(p, TREX_MAX_PORTS, v), ERR_INVALID);
	json_decref(v);
}

static void test_request(void **state)
{
	char *t = trex_request("acquire", json_pack("{s:i, s:s}", "port_id", 1, "user", "bisectd"), "zV5p8TqA", 7);
	json_t *j = json_loads(t, 0, NULL);

	(void)state;
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "jsonrpc")), "2.0");
	assert_string_equal(json_string_value(json_object_get(j, "method")), "acquire");
	assert_int_equal(json_integer_value(json_object_get(j, "id")), 7);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "params"), "api_h")), "zV5p8TqA");
	json_decref(j);
	free(t);
	t = trex_request("api_sync_v2", NULL, NULL, 1);
	assert_string_equal(t, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"api_sync_v2\",\"params\":{}}");
	free(t);
}

/* Replies in the shapes of TRex's trex_rpc_jsonrpc_v2_parser.cpp and the commands'. */
static void test_reply_parse(void **state)
{
	json_t *r;
	const char *s;

	(void)state;
	s = "{\"id\":3,\"jsonrpc\":\"2.0\",\"result\":{\"api_h\":\"zV5p8TqA\"}}";
	assert_int_equal(trex_reply_parse(&r, s, strlen(s), 3), 0);
	assert_string_equal(json_string_value(json_object_get(r, "api_h")), "zV5p8TqA");
	json_decref(r);
	s = "{\"id\":4,\"jsonrpc\":\"2.0\",\"result\":\"h0000001\"}";
	assert_int_equal(trex_reply_parse(&r, s, strlen(s), 4), 0);
	assert_string_equal(json_string_value(r), "h0000001");
	json_decref(r);
	s = "{\"id\":5,\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32000,\"message\":\"Failed To Execute Method\","
	    "\"specific_err\":\"port is already taken by 'alice'\"}}";
	assert_int_equal(trex_reply_parse(&r, s, strlen(s), 5), ERR_FAIL);
	assert_null(r);
	assert_string_equal(err_msg(), "port is already taken by 'alice' (code -32000)");
	s = "{\"id\":6,\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}";
	assert_int_equal(trex_reply_parse(&r, s, strlen(s), 6), ERR_FAIL);
	assert_string_equal(err_msg(), "Method not found (code -32601)");
	s = "{\"id\":null,\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":\"Bad JSON Format\"}}";
	assert_int_equal(trex_reply_parse(&r, s, strlen(s), 9), ERR_FAIL);
	/* not replies to us */
	s = "{\"id\":8,\"jsonrpc\":\"2.0\",\"result\":{}}";
	assert_int_equal(trex_reply_parse(&r, s, strlen(s), 9), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "not to request 9"));
	s = "{\"id\":9,\"jsonrpc\":\"1.0\",\"result\":{}}";
	assert_int_equal(trex_reply_parse(&r, s, strlen(s), 9), ERR_INVALID);
	s = "{\"id\":9,\"jsonrpc\":\"2.0\"}";
	assert_int_equal(trex_reply_parse(&r, s, strlen(s), 9), ERR_INVALID);
	s = "[{\"id\":9,\"jsonrpc\":\"2.0\",\"result\":{}}]";
	assert_int_equal(trex_reply_parse(&r, s, strlen(s), 9), ERR_INVALID);
	s = "{\"id\":9,";
	assert_int_equal(trex_reply_parse(&r, s, strlen(s), 9), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "not JSON"));
	s = "\xab\xe8\x5c\xea\x00\x00\x00\x10x";
	assert_int_equal(trex_reply_parse(&r, s, 9, 9), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "compressed"));
}

static void test_rates_compute(void **state)
{
	static const char *port_stats = "{\"opackets\":1000,\"obytes\":64000,\"ipackets\":900,\"ibytes\":57600,"
		"\"ierrors\":0,\"oerrors\":0,\"m_total_tx_bps\":0.0,\"m_total_tx_pps\":0.0,\"m_total_rx_bps\":0.0,"
		"\"m_total_rx_pps\":0.0,\"m_cpu_util\":0.0}";
	struct trex_counters b[2], a[2];
	struct trex_rates r;
	json_t *j = json_loads(port_stats, 0, NULL);

	(void)state;
	assert_int_equal(trex_counters_parse(&b[0], j), 0);
	json_decref(j);
	b[1] = b[0];
	a[0] = b[0];
	a[0].opackets += 2e6, a[0].obytes += 128e6, a[0].ipackets += 1.5e6, a[0].ibytes += 96e6;
	a[1] = b[1];
	a[1].opackets += 2e6, a[1].obytes += 128e6, a[1].ipackets += 0.5e6, a[1].ibytes += 32e6;
	assert_int_equal(trex_rates_compute(&r, b, a, 2, 2.0), 0);
	assert_true(r.tx_pps == 2e6);
	assert_true(r.rx_pps == 1e6);
	assert_true(r.tx_bps == 2e6 * 64 * 8);
	assert_true(r.rx_pct == 50);
	a[1].ipackets = 0;
	assert_int_equal(trex_rates_compute(&r, b, a, 2, 2.0), ERR_INVALID);
	assert_int_equal(trex_rates_compute(&r, b, b, 2, 0), ERR_INVALID);
	j = json_pack("{s:i}", "opackets", 1);
	assert_int_equal(trex_counters_parse(&b[0], j), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "ipackets"));
	json_decref(j);
}

static void run_parse(struct run_sample *s, const char *metric, const char *out, int ok, const char *err)
{
	json_t *d = json_pack("{s:s, s:[i], s:s}", "traffic_profile", "/p.json", "ports", 0, "metric", metric);
	struct run_output o;

	assert_int_equal(check_msg(d), 0);
	memset(&o, 0, sizeof(o));
	o.out = out;
	o.out_len = strlen(out);
	o.err = err;
	o.err_len = err ? strlen(err) : 0;
	o.ok = ok;
	o.rc = ok ? 0 : 1;
	o.how = ok ? "" : "exit 1";
	workload_find("trex")->parse(s, d, &o);
	json_decref(d);
}

static void test_parse_output(void **state)
{
	static const char *good = "{\"ok\":true,\"rate\":\"3mpps\",\"seconds\":1.0,\"tx_pkts\":6000000.0,"
		"\"rx_pkts\":3992070.0,\"tx_bytes\":384000000.0,\"rx_bytes\":255492480.0,\"tx_pps\":6000000.0,"
		"\"rx_pps\":3992070.0,\"tx_bps\":3072000000.0,\"rx_bps\":2043939840.0,\"rx_pct\":66.5345,"
		"\"ports\":[0,1],\"multiplier\":3.0,\"cpu_util\":12.5}\n";
	struct run_sample s;

	(void)state;
	run_parse(&s, "rx_pps", good, 1, NULL);
	assert_true(s.value == 3992070.0);
	assert_string_equal(s.unit, "pps");
	assert_non_null(s.extra);
	assert_true(json_real_value(json_object_get(s.extra, "tx_pps")) == 6e6);
	json_decref(s.extra);
	run_parse(&s, "rx_mpps", good, 1, NULL);
	assert_true(fabs(s.value - 3.99207) < 1e-9);
	assert_string_equal(s.unit, "Mpps");
	json_decref(s.extra);
	run_parse(&s, "rx_pct", good, 1, NULL);
	assert_true(s.value == 66.5345);
	json_decref(s.extra);

	run_parse(&s, "rx_pps", "{\"ok\":false,\"step\":\"acquire\",\"error\":\"port 0: port is already taken by "
		  "'alice' (code -32000)\"}\n", 0, "bisect-trex: acquire: ...\n");
	assert_true(s.value == 0);
	assert_null(s.extra);
	assert_string_equal(s.error, "trex: acquire: port 0: port is already taken by 'alice' (code -32000) (exit 1)");

	run_parse(&s, "rx_pps", "{\"ok\":true,\"rx_pps\":0.0,\"tx_pps\":5.0}", 1, NULL);
	assert_true(s.value == 0);
	assert_string_equal(s.error, "trex: rx_pps is 0: nothing arrived during the run");
	run_parse(&s, "tx_pps", "{\"ok\":true,\"rx_pps\":1.0,\"tx_pps\":-5}", 1, NULL);
	assert_true(s.value == 0);
	assert_string_equal(s.error, "trex: tx_pps is -5, not a rate");

	run_parse(&s, "rx_pps", "", 0, "Segmentation fault\n");
	assert_true(s.value == 0);
	assert_string_equal(s.error, "trex: bisect-trex exit 1: Segmentation fault (exit 1)");

	/* a result, then a bad exit (a sanitizer's report, a crash at exit) */
	run_parse(&s, "rx_pps", good, 0, "");
	assert_true(s.value == 0);
	assert_null(s.extra);
	assert_string_equal(s.error, "trex: bisect-trex exit 1 after printing its result (exit 1)");

	run_parse(&s, "rx_pps", "garbage\n", 1, NULL);
	assert_true(s.value == 0);
	assert_non_null(strstr(s.error, "not its JSON result"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_defaults_and_argv),
		cmocka_unit_test(test_check_units_follow_metric),
		cmocka_unit_test(test_check_refuses),
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_ports),
		cmocka_unit_test(test_request),
		cmocka_unit_test(test_reply_parse),
		cmocka_unit_test(test_rates_compute),
		cmocka_unit_test(test_parse_output),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
