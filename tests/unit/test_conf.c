/*
 * test_conf: bisectd.yaml and agent.yaml parsing: values, defaults, and
 * that every mistake is reported at its exact line and column.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "methods.h"
#include "err.h"
#include "util.h"
#include "yamltree.h"

static const char good_bisectd[] =
	"listen: 0.0.0.0:9000\n"
	"database: /var/lib/bisectd/bisectd.db\n"
	"mirrors: /var/lib/bisectd/mirrors\n"
	"log_level: debug\n"
	"lease_seconds: 90\n"
	"max_body: 65536\n"
	"default_runs: 7\n"
	"repos:\n"
	"  demo:\n"
	"    url: /srv/git/demo.git\n"
	"  linux:\n"
	"    url: https://example.org/linux.git\n"
	"workloads:\n"
	"  bench:\n"
	"    type: command\n"
	"    boot: none\n"
	"    build: [make, -s]\n"
	"    command: [./bench]\n"
	"    pattern: 'throughput: ([0-9.]+)'\n"
	"    unit: ops/s\n"
	"    direction: higher\n"
	"    build_timeout: 600\n"
	"    run_timeout: 60\n"
	"  lat:\n"
	"    command:\n"
	"      - ./bench\n"
	"      - --latency\n"
	"    pattern: 'p99: ([0-9.]+)'\n"
	"    unit: us\n"
	"    direction: lower\n"
	"pools:\n"
	"  local:\n"
	"    labels: [lab]\n"
	"  any:\n"
	"    labels: []\n";

/* Parses text as bisectd.yaml named "t.yaml"; returns the code. */
static int parse_b(struct conf_bisectd *c, const char *text)
{
	return conf_bisectd_parse(c, "t.yaml", text, strlen(text));
}

static int parse_a(struct conf_agent *c, const char *text)
{
	return conf_agent_parse(c, "a.yaml", text, strlen(text));
}

/*
 * A bad config: ERR_INVALID, a message starting with the exact position,
 * containing what it must name, and a struct with nothing left in it.
 */
static void expect_b_error(const char *text, const char *prefix, const char *needle)
{
	struct conf_bisectd c;
	int rc = parse_b(&c, text);

	assert_int_equal(rc, ERR_INVALID);
	if (strncmp(err_msg(), prefix, strlen(prefix)) != 0)
		fail_msg("message '%s' does not start with '%s'", err_msg(), prefix);
	if (!strstr(err_msg(), needle))
		fail_msg("message '%s' does not contain '%s'", err_msg(), needle);
	assert_null(c.listen);
	assert_null(c.repos);
	assert_null(c.workloads);
	assert_null(c.pools);
	assert_int_equal(c.nr_repos + c.nr_workloads + c.nr_pools, 0);
}

static void expect_a_error(const char *text, const char *prefix, const char *needle)
{
	struct conf_agent c;
	int rc = parse_a(&c, text);

	assert_int_equal(rc, ERR_INVALID);
	if (strncmp(err_msg(), prefix, strlen(prefix)) != 0)
		fail_msg("message '%s' does not start with '%s'", err_msg(), prefix);
	if (!strstr(err_msg(), needle))
		fail_msg("message '%s' does not contain '%s'", err_msg(), needle);
	assert_null(c.coordinator);
	assert_null(c.name);
	assert_null(c.labels);
}

/* A key of the workload kind's own (workload.h), as the config gave it or its default. */
#define P(w, key) json_object_get((w)->params, key)

static void test_bisectd_good(void **state)
{
	struct conf_bisectd c;
	const struct conf_workload *w;
	const struct conf_repo *r;

	(void)state;
	assert_int_equal(parse_b(&c, good_bisectd), 0);
	assert_string_equal(c.listen, "0.0.0.0:9000");
	assert_string_equal(c.database, "/var/lib/bisectd/bisectd.db");
	assert_string_equal(c.mirrors, "/var/lib/bisectd/mirrors");
	assert_string_equal(c.log_level, "debug");
	assert_int_equal(c.lease_seconds, 90);
	assert_int_equal(c.max_body, 65536);
	assert_int_equal(c.default_runs, 7);

	/* File order is kept. */
	assert_int_equal(c.nr_repos, 2);
	assert_string_equal(c.repos[0].name, "demo");
	assert_string_equal(c.repos[0].url, "/srv/git/demo.git");
	assert_string_equal(c.repos[1].name, "linux");
	r = conf_repo_find(&c, "linux");
	assert_ptr_equal(r, &c.repos[1]);
	assert_string_equal(r->url, "https://example.org/linux.git");
	assert_null(conf_repo_find(&c, "nope"));

	assert_int_equal(c.nr_workloads, 2);
	w = conf_workload_find(&c, "bench");
	assert_ptr_equal(w, &c.workloads[0]);
	assert_string_equal(w->type, "command");
	assert_string_equal(w->boot, "none");
	assert_int_equal(strv_len(w->build), 2);
	assert_string_equal(w->build[0], "make");
	assert_string_equal(w->build[1], "-s");
	assert_null(w->build[2]);
	assert_int_equal(json_array_size(P(w, "command")), 1);
	assert_string_equal(json_string_value(json_array_get(P(w, "command"), 0)), "./bench");
	assert_string_equal(json_string_value(P(w, "pattern")), "throughput: ([0-9.]+)");
	assert_string_equal(w->unit, "ops/s");
	assert_int_equal(w->direction, DIR_HIGHER);
	assert_int_equal(w->build_timeout, 600);
	assert_int_equal(w->run_timeout, 60);

	/* The second workload leaves most keys out: defaults. */
	w = conf_workload_find(&c, "lat");
	assert_non_null(w);
	assert_string_equal(w->type, "command");
	assert_string_equal(w->boot, "none");
	assert_null(w->build);
	assert_int_equal(json_array_size(P(w, "command")), 2);
	assert_string_equal(json_string_value(json_array_get(P(w, "command"), 1)), "--latency");
	assert_string_equal(w->unit, "us");
	assert_int_equal(w->direction, DIR_LOWER);
	assert_int_equal(w->build_timeout, 1800);
	assert_int_equal(w->run_timeout, 300);

	assert_int_equal(c.nr_pools, 2);
	assert_string_equal(c.pools[0].name, "local");
	assert_int_equal(strv_len(c.pools[0].labels), 1);
	assert_string_equal(c.pools[0].labels[0], "lab");
	assert_ptr_equal(conf_pool_find(&c, "any"), &c.pools[1]);
	assert_non_null(c.pools[1].labels);
	assert_int_equal(strv_len(c.pools[1].labels), 0);
	assert_null(conf_pool_find(&c, "remote"));

	conf_bisectd_release(&c);
	assert_null(c.listen);
	assert_null(c.repos);
	conf_bisectd_release(&c); /* twice is harmless */
}

static void test_bisectd_defaults(void **state)
{
	static const char *const texts[] = { "", "# only a comment\n", "---\n", "repos:\npools:\n" };

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct conf_bisectd c;

		assert_int_equal(parse_b(&c, texts[i]), 0);
		assert_string_equal(c.listen, "127.0.0.1:7878");
		assert_string_equal(c.database, "bisectd.db");
		assert_string_equal(c.mirrors, "mirrors");
		assert_string_equal(c.log_level, "info");
		assert_int_equal(c.lease_seconds, 60);
		assert_int_equal(c.lease_grace_seconds, 60);
		assert_int_equal(c.agent_retire_seconds, 86400);
		assert_int_equal(c.max_body, 1 << 20);
		assert_int_equal(c.default_runs, 5);
		assert_int_equal(c.nr_repos, 0);
		assert_int_equal(c.nr_workloads, 0);
		assert_int_equal(c.nr_pools, 0);
		conf_bisectd_release(&c);
	}
}

/* The HTTP server's keys (http.h): the pool, the limits, the idle timeout, TLS; and the agent's CA. */
static void test_net_keys(void **state)
{
	struct conf_bisectd c;
	struct conf_agent a;

	(void)state;
	assert_int_equal(parse_b(&c, ""), 0);
	assert_int_equal(c.threads, CONF_THREADS_DEFAULT);
	assert_int_equal(c.max_connections, CONF_MAX_CONNECTIONS_DEFAULT);
	assert_true(c.max_connections >= 5000);
	assert_int_equal(c.max_per_address, CONF_MAX_PER_ADDRESS_DEFAULT);
	assert_true(c.idle_timeout > CONF_MAX_CLAIM_WAIT);
	assert_null(c.tls_cert);
	assert_null(c.tls_key);
	conf_bisectd_release(&c);

	assert_int_equal(parse_b(&c, "listen: '[::1]:7443'\nthreads: 8\nmax_connections: 6000\n"
				 "max_connections_per_address: 0\nidle_timeout: 300\n"
				 "tls_cert: /etc/bisectd/cert.pem\ntls_key: /etc/bisectd/key.pem\n"), 0);
	assert_string_equal(c.listen, "[::1]:7443");
	assert_int_equal(c.threads, 8);
	assert_int_equal(c.max_connections, 6000);
	assert_int_equal(c.max_per_address, 0);
	assert_int_equal(c.idle_timeout, 300);
	assert_string_equal(c.tls_cert, "/etc/bisectd/cert.pem");
	assert_string_equal(c.tls_key, "/etc/bisectd/key.pem");
	conf_bisectd_release(&c);
	assert_null(c.tls_cert);

	expect_b_error("idle_timeout: 60\n", "t.yaml:1:15: ",
		       "'idle_timeout' (seconds, longer than the longest claim wait) must be an integer from 61");
	expect_b_error("threads: 0\n", "t.yaml:1:10: ", "'threads' must be an integer from 1 to 256");
	expect_b_error("max_connections: 5k\n", "t.yaml:1:18: ", "'max_connections' must be an integer");
	expect_b_error("max_connections_per_address: -1\n", "t.yaml:1:30: ", "not '-1'");
	expect_b_error("tls_cert: /c.pem\n", "t.yaml:1:11: ", "'tls_cert' needs 'tls_key' too");
	expect_b_error("threads: 2\ntls_key: /k.pem\n", "t.yaml:2:10: ", "'tls_key' needs 'tls_cert' too");

	assert_int_equal(parse_a(&a, "name: a1\nworkdir: /w\ncoordinator: https://lab:7443\nca_file: /etc/ca.pem\n"), 0);
	assert_string_equal(a.coordinator, "https://lab:7443");
	assert_string_equal(a.ca_file, "/etc/ca.pem");
	conf_agent_release(&a);
	assert_int_equal(parse_a(&a, "name: a1\nworkdir: /w\n"), 0);
	assert_null(a.ca_file);
	conf_agent_release(&a);
}

static void test_agent_good(void **state)
{
	struct conf_agent c;

	(void)state;
	assert_int_equal(parse_a(&c,
		"coordinator: http://10.0.0.1:7878\n"
		"name: lab-1.a_b\n"
		"labels: [lab, x86_64, 'nic=mlx5']\n"
		"workdir: /var/lib/agent\n"
		"log_level: warn\n"
		"heartbeat: 3\n"
		"poll_wait: 0\n"
		"cpu: 1\n"
		"measure_lock: /run/bisect.lock\n"
		"kcache_max: 512m\n"), 0);
	assert_string_equal(c.coordinator, "http://10.0.0.1:7878");
	assert_string_equal(c.name, "lab-1.a_b");
	assert_int_equal(strv_len(c.labels), 3);
	assert_string_equal(c.labels[0], "lab");
	assert_string_equal(c.labels[1], "x86_64");
	assert_string_equal(c.labels[2], "nic=mlx5");
	assert_string_equal(c.workdir, "/var/lib/agent");
	assert_string_equal(c.log_level, "warn");
	assert_int_equal(c.heartbeat, 3);
	assert_int_equal(c.poll_wait, 0);
	assert_int_equal(c.cpu, 1);
	assert_string_equal(c.measure_lock, "/run/bisect.lock");
	assert_int_equal(c.kcache_max, 512LL << 20);
	conf_agent_release(&c);
	assert_null(c.name);
}

static void test_agent_defaults(void **state)
{
	struct conf_agent c;

	(void)state;
	assert_int_equal(parse_a(&c, "name: a1\nworkdir: /tmp/w\nmeasure_lock:\n"), 0);
	assert_string_equal(c.coordinator, "http://127.0.0.1:7878");
	assert_non_null(c.labels);
	assert_null(c.labels[0]);
	assert_string_equal(c.log_level, "info");
	assert_int_equal(c.heartbeat, 5);
	assert_int_equal(c.poll_wait, 20);
	assert_int_equal(c.cpu, -1);
	assert_null(c.measure_lock);
	assert_true(c.kcache_max == 20LL << 30);
	conf_agent_release(&c);
	assert_int_equal(parse_a(&c, "name: a1\nworkdir: /tmp/w\nkcache_max: 0\n"), 0);
	assert_int_equal(c.kcache_max, 0);
	conf_agent_release(&c);
	assert_int_equal(parse_a(&c, "name: a1\nworkdir: /tmp/w\nkcache_max: 1T\n"), 0);
	assert_true(c.kcache_max == 1LL << 40);
	conf_agent_release(&c);
}

static void test_agent_kcache_max_errors(void **state)
{
	(void)state;
	expect_a_error("name: a\nworkdir: /w\nkcache_max: 20GB\n", "a.yaml:3:13: ",
		       "'kcache_max' must be a size such as 512M or 20G");
	expect_a_error("name: a\nworkdir: /w\nkcache_max: -1\n", "a.yaml:3:13: ", "not '-1'");
	expect_a_error("name: a\nworkdir: /w\nkcache_max: G\n", "a.yaml:3:13: ", "not 'G'");
	expect_a_error("name: a\nworkdir: /w\nkcache_max: [1]\n", "a.yaml:3:13: ", "kcache_max");
	expect_a_error("name: a\nworkdir: /w\nkcache_max: 99999999999T\n", "a.yaml:3:13: ", "too large");
}

/* auth: none | token | a mapping; every bad value named with its place. */
static void test_auth(void **state)
{
	struct conf_bisectd c;
	struct conf_agent a;

	(void)state;
	assert_int_equal(parse_b(&c, "listen: 127.0.0.1:1\n"), 0);
	assert_false(c.auth.none);
	assert_true(c.auth.read_open);
	assert_int_equal(c.auth.max_failures, 10);
	assert_int_equal(c.auth.failure_window, 60);
	assert_null(c.auth.admin_token_file);
	conf_bisectd_release(&c);
	assert_int_equal(parse_b(&c, "auth: none\n"), 0);
	assert_true(c.auth.none);
	conf_bisectd_release(&c);
	assert_int_equal(parse_b(&c, "auth:\n  read: token\n  admin_token_file: /a\n  secret_file: /k\n"
				 "  max_failures: 3\n  failure_window: 9\n"), 0);
	assert_false(c.auth.none);
	assert_false(c.auth.read_open);
	assert_string_equal(c.auth.admin_token_file, "/a");
	assert_string_equal(c.auth.secret_file, "/k");
	assert_int_equal(c.auth.max_failures, 3);
	assert_int_equal(c.auth.failure_window, 9);
	conf_bisectd_release(&c);
	assert_int_equal(parse_b(&c, "auth:\n  mode: none\n"), 0);
	assert_true(c.auth.none);
	conf_bisectd_release(&c);
	expect_b_error("auth: maybe\n", "t.yaml:1:7: ", "'auth' must be none, token or a mapping");
	expect_b_error("auth: [none]\n", "t.yaml:1:7: ", "'auth' must be none, token or a mapping");
	expect_b_error("auth:\n  read: closed\n", "t.yaml:2:9: ", "'read' in auth must be open");
	expect_b_error("auth:\n  mode: tokens\n", "t.yaml:2:9: ", "'mode' in auth must be none or token");
	expect_b_error("auth:\n  reads: open\n", "t.yaml:2:3: ", "unknown key 'reads' in auth");
	expect_b_error("auth:\n  max_failures: 0\n", "t.yaml:2:17: ", "'max_failures' in auth must be");
	/* The agent's token keys. */
	assert_int_equal(conf_agent_parse(&a, "a.yaml", "name: a\nworkdir: /w\nenrol_token_file: /e\n",
					  strlen("name: a\nworkdir: /w\nenrol_token_file: /e\n")), 0);
	assert_string_equal(a.enrol_token_file, "/e");
	assert_null(a.token_file);
	conf_agent_release(&a);
}

static void test_unknown_top_key(void **state)
{
	(void)state;
	expect_b_error("listen: 127.0.0.1:1\nlisen: x\n", "t.yaml:2:1: ", "unknown key 'lisen'");
	expect_b_error("listen: 127.0.0.1:1\nlisen: x\n", "t.yaml:2:1: ", "expected one of: listen, database");
	expect_a_error("name: a\nworkdir: /w\n  \nheart_beat: 5\n", "a.yaml:4:1: ", "unknown key 'heart_beat'");
}

/* trex's ports as a YAML sequence or one string; both reach the kind as its canonical array. */
static void test_trex_ports_forms(void **state)
{
	static const char *const forms[] = { "[0, 1]", "\"0,1\"", "0,1" };

	(void)state;
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		struct conf_bisectd c;
		char *text = xasprintf("workloads:\n  t:\n    type: trex\n    traffic_profile: /etc/trex/p.json\n"
				       "    ports: %s\n    rate: 10mpps\n    metric: rx_mpps\n", forms[i]);
		char *ports;

		assert_int_equal(parse_b(&c, text), 0);
		ports = json_dumps(json_object_get(c.workloads[0].params, "ports"), JSON_COMPACT);
		assert_string_equal(ports, "[0,1]");
		assert_string_equal(c.workloads[0].unit, "Mpps");
		free(ports);
		free(text);
		conf_bisectd_release(&c);
	}
	expect_b_error("workloads:\n  t:\n    type: trex\n    traffic_profile: /p.json\n    ports: [0, 0]\n",
		       "t.yaml:5:12: ", "port 0 is named twice");
	expect_b_error("workloads:\n  t:\n    type: trex\n    traffic_profile: /p.json\n    ports: {a: 1}\n",
		       "t.yaml:5:12: ", "'ports'");
}

/* `profile: true`: perf profiles at the culprit, where the boot method records them; in the task's definition. */
static void test_workload_profile(void **state)
{
	struct conf_bisectd c;
	json_t *def;

	(void)state;
	assert_int_equal(parse_b(&c, "workloads:\n  w:\n    command: [./bench]\n    pattern: \"(\\\\d+)\"\n    profile: true\n"), 0);
	assert_int_equal(c.workloads[0].profile, 1);
	def = conf_workload_def(&c.workloads[0], NULL);
	assert_true(json_is_true(json_object_get(def, "profile")));
	json_decref(def);
	conf_bisectd_release(&c);
	assert_int_equal(parse_b(&c, "workloads:\n  w:\n    command: [./bench]\n    pattern: \"(\\\\d+)\"\n"), 0);
	assert_int_equal(c.workloads[0].profile, 0);
	def = conf_workload_def(&c.workloads[0], NULL);
	assert_null(json_object_get(def, "profile"));
	json_decref(def);
	conf_bisectd_release(&c);
	expect_b_error("workloads:\n  w:\n    command: [./bench]\n    pattern: \"(\\\\d+)\"\n    profile: yes\n", "t.yaml:5:14: ",
		       "'profile' in workload 'w' must be true or false, not 'yes'");
	/* In the guest too, and in the kernel kexec booted. */
	assert_int_equal(parse_b(&c, "workloads:\n  w:\n    type: iperf3\n    boot: qemu\n    profile: true\n"), 0);
	assert_int_equal(c.workloads[0].profile, 1);
	conf_bisectd_release(&c);
	assert_int_equal(parse_b(&c, "workloads:\n  w:\n    boot: kexec\n    command: [./bench]\n"
				 "    pattern: 'x: ([0-9]+)'\n    profile: true\n"), 0);
	assert_int_equal(c.workloads[0].profile, 1);
	conf_bisectd_release(&c);
	/* The agent's perf records (on the agent, or in the guest it boots); a device's own for ssh. */
	assert_int_equal(boot_method_profiles("none"), BOOT_PROFILE_AGENT);
	assert_int_equal(boot_method_profiles("qemu"), BOOT_PROFILE_AGENT);
	assert_int_equal(boot_method_profiles("ssh"), BOOT_PROFILE_DEVICE);
	assert_int_equal(boot_method_profiles("kexec"), BOOT_PROFILE_AGENT);
	assert_int_equal(boot_method_profiles("ipmi"), 0);
	assert_int_equal(boot_method_profiles(NULL), 0);
}

static void test_workload_typo(void **state)
{
	struct conf_bisectd c;

	(void)state;
	assert_int_equal(parse_b(&c,
		"workloads:\n"
		"  bench:\n"
		"    type: command\n"
		"    comand: [./bench]\n"), ERR_INVALID);
	assert_string_equal(err_msg(),
		"t.yaml:4:5: unknown key 'comand' in workload 'bench' (expected one of: type, boot, "
		"build, direction, build_timeout, run_timeout, kernel_image, qemu, memory_mb, cpus, append, "
		"boot_timeout, kernel, profile, kexec, ssh, command, pattern, unit, iperf3, metric, count, pkt_size, clsact_bpf, "
		"server, sync_port, traffic_profile, ports, rate, duration, user, rpc_timeout, "
		"mode, interface, interface_out, interval, stats)");
	expect_b_error("workloads:\n  w:\n    type: iperf3\n    boot: qemu\n    qemu:\n      memory: 1\n",
		       "t.yaml:6:7: ", "unknown key 'memory' in the qemu settings of workload 'w'");
	expect_b_error("repos:\n  demo:\n    uri: /x\n", "t.yaml:3:5: ", "unknown key 'uri' in repo 'demo'");
	expect_b_error("pools:\n  p:\n    label: [a]\n", "t.yaml:3:5: ", "unknown key 'label' in pool 'p'");
}

static void test_wrong_type(void **state)
{
	(void)state;
	expect_b_error("listen: {host: a}\n", "t.yaml:1:9: ", "'listen' must be a string, not a mapping");
	expect_b_error("database: [a, b]\n", "t.yaml:1:11: ", "'database' must be a string, not a sequence");
	expect_b_error("workloads:\n  w:\n    command: ./bench\n", "t.yaml:3:14: ",
		       "'command' in workload 'w' must be a sequence of strings (an argv), not a scalar");
	expect_b_error("workloads:\n  w:\n    command: [./b, [x]]\n", "t.yaml:3:20: ", "'command' in workload 'w'");
	expect_b_error("repos: [a]\n", "t.yaml:1:8: ", "'repos' must be a mapping");
	expect_b_error("repos:\n  demo: /srv/x\n", "t.yaml:2:9: ", "repo 'demo' must be a mapping");
	expect_b_error("pools:\n  p:\n    labels: lab\n", "t.yaml:3:13: ", "'labels' in pool 'p' must be a sequence");
	expect_b_error("- a\n- b\n", "t.yaml:1:1: ", "top level must be a mapping");
	expect_a_error("name: a\nworkdir: /w\nlabels: {a: 1}\n", "a.yaml:3:9: ", "'labels' must be a sequence");
	expect_a_error("name: a\nworkdir: /w\nlabels: ['a b']\n", "a.yaml:3:10: ", "label 'a b'");
	expect_b_error("listen: ''\n", "t.yaml:1:9: ", "'listen' must be a string, not empty");
}

static void test_bad_int(void **state)
{
	(void)state;
	expect_b_error("lease_seconds: abc\n", "t.yaml:1:16: ",
		       "'lease_seconds' must be an integer from 1 to 86400, not 'abc'");
	expect_b_error("default_runs: 0\n", "t.yaml:1:15: ", "'default_runs' must be an integer from 1 to 100, not '0'");
	expect_b_error("default_runs: 5x\n", "t.yaml:1:15: ", "'default_runs'");
	expect_b_error("max_body: 99999999999999999999999\n", "t.yaml:1:11: ", "'max_body'");
	expect_b_error("workloads:\n  w:\n    run_timeout: 1.5\n", "t.yaml:3:18: ",
		       "'run_timeout' in workload 'w' must be an integer");
	expect_a_error("name: a\nworkdir: /w\ncpu: -2\n", "a.yaml:3:6: ", "'cpu' must be an integer from -1 to 1023");
	expect_a_error("name: a\nworkdir: /w\nheartbeat: ' 5'\n", "a.yaml:3:12: ", "'heartbeat'");
}

/* The grace after start-up is the lease unless set; an agent is retired no sooner than offline. */
static void test_lease_grace_retire(void **state)
{
	struct conf_bisectd c;

	(void)state;
	assert_int_equal(parse_b(&c, "lease_seconds: 30\n"), 0);
	assert_int_equal(c.lease_grace_seconds, 30);
	assert_int_equal(c.agent_retire_seconds, 86400);
	conf_bisectd_release(&c);
	assert_int_equal(parse_b(&c, "lease_seconds: 2\nlease_grace_seconds: 0\nagent_retire_seconds: 6\n"), 0);
	assert_int_equal(c.lease_grace_seconds, 0);
	assert_int_equal(c.agent_retire_seconds, 6);
	conf_bisectd_release(&c);
	/* A lease longer than a day: retired after three of them. */
	assert_int_equal(parse_b(&c, "lease_seconds: 40000\n"), 0);
	assert_int_equal(c.agent_retire_seconds, 120000);
	conf_bisectd_release(&c);
	expect_b_error("lease_seconds: 30\nagent_retire_seconds: 60\n", "t.yaml:2:23: ",
		       "'agent_retire_seconds' (60) must be at least three lease periods (3 x lease_seconds = 90)");
	expect_b_error("lease_grace_seconds: -1\n", "t.yaml:1:22: ",
		       "'lease_grace_seconds' must be an integer from 0 to 86400");
}

static void test_missing_required(void **state)
{
	(void)state;
	expect_b_error("repos:\n  demo:\n    url:\n", "t.yaml:3:9: ", "'url' in repo 'demo' must be a string, not empty");
	expect_b_error("repos:\n  ok:\n    url: /x\n  demo: {}\n", "t.yaml:4:3: ", "repo 'demo' has no 'url'");
	expect_b_error("workloads:\n  bench:\n    pattern: 'x([0-9]+)'\n", "t.yaml:2:3: ",
		       "workload 'bench' has no 'command'");
	expect_b_error("workloads:\n  bench:\n    command: []\n    pattern: 'x([0-9]+)'\n", "t.yaml:3:14: ",
		       "'command' in workload 'bench' must not be empty");
	expect_b_error("workloads:\n  bench:\n    command: [./b]\n", "t.yaml:2:3: ", "workload 'bench' has no 'pattern'");
	expect_a_error("workdir: /w\n", "a.yaml:1:1: ", "'name' is missing");
	expect_a_error("", "a.yaml:1:1: ", "'name' is missing");
	expect_a_error("name: a\n", "a.yaml:1:1: ", "'workdir' is missing");
}

static void test_bad_values(void **state)
{
	(void)state;
	expect_b_error("workloads:\n  w:\n    command: [./b]\n    pattern: 'x(.)'\n    direction: up\n",
		       "t.yaml:5:16: ", "'direction' in workload 'w' must be 'higher' or 'lower', not 'up'");
	expect_b_error("workloads:\n  w:\n    type: iperf\n    command: [./b]\n    pattern: 'x(.)'\n",
		       "t.yaml:3:11: ", "'type' in workload 'w' must be 'command', 'iperf3', 'pktgen', 'trex' or 'xdp'");
	expect_b_error("workloads:\n  w:\n    boot: pxe\n    command: [./b]\n    pattern: 'x(.)'\n",
		       "t.yaml:3:11: ", "'boot' in workload 'w' must be 'none', 'qemu', 'kexec' or 'ssh', not 'pxe'");
	expect_b_error("workloads:\n  w:\n    boot: qemu\n    command: [./b]\n    pattern: 'x(.)'\n",
		       "t.yaml:3:11: ", "'boot: qemu' in workload 'w' needs type iperf3, pktgen or xdp");
	expect_b_error("log_level: loud\n", "t.yaml:1:12: ", "'log_level' must be one of debug, info, warn, error");
	expect_b_error("listen: localhost\n", "t.yaml:1:9: ", "'listen' must be HOST:PORT");
	expect_b_error("listen: 'localhost:99999'\n", "t.yaml:1:9: ", "'listen' must be HOST:PORT");
	expect_b_error("repos:\n  'a/b':\n    url: /x\n", "t.yaml:2:3: ", "repo name 'a/b' must be");
	expect_b_error("workloads:\n  aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:\n    command: [x]\n",
		       "t.yaml:2:3: ", "workload name");
	expect_a_error("name: 'x y'\nworkdir: /w\n", "a.yaml:1:7: ", "'name' must be 1 to 64 characters");
	expect_a_error("coordinator: 127.0.0.1:7878\nname: a\nworkdir: /w\n", "a.yaml:1:14: ",
		       "'coordinator' must be a URL");
}

/* boot ssh: the device's settings in an 'ssh' mapping, sent as the definition's "ssh" object. */
static void test_ssh_workloads(void **state)
{
	static const char head[] = "workloads:\n  w:\n    boot: ssh\n    command: [./b]\n    pattern: 'x(.)'\n";
	struct conf_bisectd c;
	const struct conf_workload *w;
	json_t *def, *o;
	char text[1024];

	(void)state;
	assert_int_equal(parse_b(&c,
		"workloads:\n"
		"  dut:\n"
		"    type: command\n"
		"    boot: ssh\n"
		"    build: [make, bzImage]\n"
		"    kernel_image: out/bzImage\n"
		"    append: mitigations=off\n"
		"    command: [./bench]\n"
		"    pattern: 'ops: ([0-9.]+)'\n"
		"    ssh:\n"
		"      host: dut1.lab\n"
		"      known_hosts: /etc/bisect/known_hosts\n"
		"      copy: [modules.tar.gz]\n"
		"      install: [/usr/local/sbin/install-kernel, '{kernel}', '{cmdline}']\n"
		"      power_cycle: [ipmitool, -H, dut1-bmc, chassis, power, cycle]\n"
		"      power_tries: 3\n"), 0);
	w = conf_workload_find(&c, "dut");
	assert_string_equal(w->boot, "ssh");
	def = conf_workload_def(w, "quiet");
	assert_string_equal(json_string_value(json_object_get(def, "kernel_image")), "out/bzImage");
	assert_string_equal(json_string_value(json_object_get(def, "append")), "mitigations=off quiet");
	assert_null(json_object_get(def, "memory_mb"));
	o = json_object_get(def, "ssh");
	assert_string_equal(json_string_value(json_object_get(o, "host")), "dut1.lab");
	assert_string_equal(json_string_value(json_object_get(o, "user")), "root");
	assert_int_equal(json_integer_value(json_object_get(o, "port")), 22);
	assert_string_equal(json_string_value(json_object_get(o, "dir")), "/tmp/bisect");
	assert_int_equal(json_integer_value(json_object_get(o, "boot_timeout")), 300);
	assert_int_equal(json_integer_value(json_object_get(o, "power_tries")), 3);
	assert_int_equal(json_array_size(json_object_get(o, "install")), 3);
	assert_string_equal(json_string_value(json_array_get(json_object_get(o, "power_cycle"), 0)), "ipmitool");
	assert_null(json_object_get(o, "restore"));
	assert_null(json_object_get(o, "identity"));
	assert_string_equal(json_string_value(json_object_get(o, "tools_dir")), "/usr/bin");
	json_decref(def);
	conf_bisectd_release(&c);

	expect_b_error(head, "t.yaml:2:3: ", "workload 'w' boots ssh but has no 'ssh' mapping");
	snprintf(text, sizeof(text), "%s    ssh:\n      host: h\n      install: [i]\n      power_cycle: [p]\n", head);
	expect_b_error(text, "t.yaml:7:7: ", "'known_hosts' in the ssh settings of workload 'w' is required");
	snprintf(text, sizeof(text), "%s    ssh:\n      host: h\n      known_hosts: /k\n      power_cycle: [p]\n", head);
	expect_b_error(text, "t.yaml:7:7: ", "'install' in the ssh settings of workload 'w' is required");
	snprintf(text, sizeof(text), "%s    ssh:\n      host: '-oProxyCommand=x'\n      known_hosts: /k\n"
		 "      install: [i]\n      power_cycle: [p]\n", head);
	expect_b_error(text, "t.yaml:7:13: ", "'host' in the ssh settings of workload 'w' must be a host name");
	snprintf(text, sizeof(text), "%s    ssh:\n      host: h\n      known_hosts: /k\n      install: [i]\n"
		 "      power_cycle: [p]\n      copy: [../x]\n", head);
	expect_b_error(text, "t.yaml:11:14: ", "'copy' in the ssh settings of workload 'w': '../x' must be a path");
	snprintf(text, sizeof(text), "%s    ssh:\n      host: h\n      hots: x\n", head);
	expect_b_error(text, "t.yaml:8:7: ", "unknown key 'hots' in the ssh settings of workload 'w'");
	snprintf(text, sizeof(text), "%s    memory_mb: 64\n    ssh:\n      host: h\n", head);
	expect_b_error(text, "t.yaml:6:16: ", "'memory_mb' in workload 'w' is a setting of boot qemu, not of boot ssh");
	expect_b_error("workloads:\n  w:\n    command: [./b]\n    pattern: 'x(.)'\n    ssh:\n      host: h\n",
		       "t.yaml:6:7: ", "'ssh' in workload 'w' holds the settings of boot ssh, not of boot none");
	/* A guest workload on the device: its ssh settings are checked as a command's are. */
	expect_b_error("workloads:\n  w:\n    type: iperf3\n    boot: ssh\n    ssh:\n      host: h\n",
		       "t.yaml:6:7: ", "'install' in the ssh settings of workload 'w' is required");
	snprintf(text, sizeof(text), "%s    ssh:\n      host: h\n      known_hosts: /k\n      install: [i]\n"
		 "      power_cycle: [p]\n      tools_dir: bin\n", head);
	expect_b_error(text, "t.yaml:11:18: ", "'tools_dir' in the ssh settings of workload 'w' must be an absolute path");
}

static void test_qemu_workloads(void **state)
{
	struct conf_bisectd c;
	const struct conf_workload *w;

	(void)state;
	assert_int_equal(parse_b(&c,
		"workloads:\n"
		"  udp:\n"
		"    type: iperf3\n"
		"    boot: qemu\n"
		"    build: [make, bzImage]\n"
		"    iperf3: [--udp, '-4', -b, '0', -l, '8920', -t, '3', -P, '4']\n"
		"    append: mitigations=off\n"
		"    qemu:\n"
		"      memory_mb: 1024\n"
		"      boot_timeout: 60\n"
		"  pg:\n"
		"    type: pktgen\n"
		"    boot: qemu\n"
		"    kernel_image: out/bzImage\n"
		"    cpus: 1\n"
		"    count: 100000\n"
		"    pkt_size: 64\n"
		"    clsact_bpf: true\n"
		"    metric: Mb/s\n"
		"  tcp:\n"
		"    type: iperf3\n"
		"    boot: qemu\n"
		"    metric: bits/s\n"), 0);
	w = conf_workload_find(&c, "udp");
	assert_string_equal(w->type, "iperf3");
	assert_string_equal(w->boot, "qemu");
	assert_string_equal(w->kernel_image, "arch/x86/boot/bzImage");
	assert_int_equal(w->memory_mb, 1024);
	assert_int_equal(w->cpus, 2);
	assert_int_equal(w->boot_timeout, 60);
	assert_string_equal(w->append, "mitigations=off");
	assert_int_equal(json_array_size(P(w, "iperf3")), 10);
	assert_string_equal(json_string_value(P(w, "metric")), "KBytes/s");
	assert_string_equal(w->unit, "KBytes/s");
	assert_null(P(w, "command"));
	w = conf_workload_find(&c, "pg");
	assert_string_equal(w->kernel_image, "out/bzImage");
	assert_int_equal(w->memory_mb, 512);
	assert_int_equal(w->cpus, 1);
	assert_int_equal(w->boot_timeout, 120);
	assert_null(w->append);
	assert_int_equal(json_integer_value(P(w, "count")), 100000);
	assert_int_equal(json_integer_value(P(w, "pkt_size")), 64);
	assert_true(json_is_true(P(w, "clsact_bpf")));
	assert_string_equal(w->unit, "Mb/s");
	w = conf_workload_find(&c, "tcp");
	assert_null(P(w, "iperf3"));
	assert_string_equal(json_string_value(P(w, "metric")), "bits/s");
	conf_bisectd_release(&c);

	expect_b_error("workloads:\n  w:\n    type: iperf3\n", "t.yaml:2:3: ",
		       "workload 'w' of type iperf3 needs 'boot: qemu or ssh'");
	expect_b_error("workloads:\n  w:\n    type: iperf3\n    boot: qemu\n    iperf3: [-u, --bidir]\n",
		       "t.yaml:5:18: ", "'iperf3' in workload 'w': iperf3 option '--bidir' is not one");
	expect_b_error("workloads:\n  w:\n    type: iperf3\n    boot: qemu\n    iperf3: [-u, -t, x]\n",
		       "t.yaml:5:18: ", "iperf3 option '-t' needs a number from 1 to 3600");
	expect_b_error("workloads:\n  w:\n    type: iperf3\n    boot: qemu\n    iperf3: [-b, 1T]\n",
		       "t.yaml:5:14: ", "iperf3 option '-b' needs a rate");
	expect_b_error("workloads:\n  w:\n    type: iperf3\n    boot: qemu\n    metric: pps\n",
		       "t.yaml:5:13: ", "'metric' in workload 'w' must be one of KBytes/s, bits/s");
	expect_b_error("workloads:\n  w:\n    type: pktgen\n    boot: qemu\n    clsact_bpf: yes\n",
		       "t.yaml:5:17: ", "'clsact_bpf' in workload 'w' must be true or false");
	expect_b_error("workloads:\n  w:\n    type: pktgen\n    boot: qemu\n    command: [x]\n",
		       "t.yaml:5:14: ", "'command' in workload 'w' is for type command, not pktgen");
	expect_b_error("workloads:\n  w:\n    type: pktgen\n    boot: qemu\n    qemu:\n      cpus: 0\n",
		       "t.yaml:6:13: ", "'cpus' in the qemu settings of workload 'w' must be an integer from 1 to 64");
}

/* Boot kexec: its 'kexec' mapping reaches the definition the agent reads; bad settings are refused. */
static void test_kexec_workloads(void **state)
{
	struct conf_bisectd c;
	const struct conf_workload *w;
	json_t *def, *k;

	(void)state;
	assert_int_equal(parse_b(&c,
		"workloads:\n"
		"  kx:\n"
		"    boot: kexec\n"
		"    build: [make, bzImage]\n"
		"    command: [./bench]\n"
		"    pattern: 'x: ([0-9]+)'\n"
		"    kexec:\n"
		"      append: root=/dev/sda2 ro\n"
		"      return_timeout: 120\n"
		"      good_kernel: /boot/vmlinuz-good\n"
		"      reboot: [reboot, -f]\n"
		"  plain:\n"
		"    boot: kexec\n"
		"    command: [./bench]\n"
		"    pattern: 'x: ([0-9]+)'\n"), 0);
	w = conf_workload_find(&c, "kx");
	def = conf_workload_def(w, "mitigations=off");
	assert_string_equal(json_string_value(json_object_get(def, "append")), "root=/dev/sda2 ro mitigations=off");
	assert_string_equal(json_string_value(json_object_get(def, "kernel_image")), "arch/x86/boot/bzImage");
	k = json_object_get(def, "kexec");
	assert_string_equal(json_string_value(json_object_get(k, "append")), "root=/dev/sda2 ro");
	assert_int_equal(json_integer_value(json_object_get(k, "return_timeout")), 120);
	assert_string_equal(json_string_value(json_object_get(k, "good_kernel")), "/boot/vmlinuz-good");
	assert_int_equal(json_array_size(json_object_get(k, "reboot")), 2);
	assert_null(json_object_get(def, "memory_mb"));
	json_decref(def);
	/* No mapping: the running kernel's line is reused (no kexec.append), the default deadline. */
	def = conf_workload_def(conf_workload_find(&c, "plain"), NULL);
	k = json_object_get(def, "kexec");
	assert_null(json_object_get(k, "append"));
	assert_int_equal(json_integer_value(json_object_get(k, "return_timeout")), 300);
	json_decref(def);
	conf_bisectd_release(&c);

	expect_b_error("workloads:\n  w:\n    boot: kexec\n    command: [x]\n    pattern: 'x'\n    kexec:\n"
		       "      return_timeout: 5\n", "t.yaml:7:23: ",
		       "'return_timeout' in the kexec settings of workload 'w' must be an integer from 10 to 86400");
	expect_b_error("workloads:\n  w:\n    boot: kexec\n    command: [x]\n    pattern: 'x'\n    kexec:\n"
		       "      good_kernel: vmlinuz\n", "t.yaml:7:20: ", "must be an absolute path on the agent");
	expect_b_error("workloads:\n  w:\n    boot: kexec\n    command: [x]\n    pattern: 'x'\n    kexec:\n"
		       "      initrd: a\n      cpus: 2\n", "t.yaml:8:7: ", "unknown key 'cpus' in the kexec settings");
	expect_b_error("workloads:\n  w:\n    boot: none\n    command: [x]\n    pattern: 'x'\n    kexec:\n"
		       "      initrd: a\n", "t.yaml:7:7: ", "'kexec' in workload 'w' holds the settings of boot kexec");
	expect_b_error("workloads:\n  w:\n    type: iperf3\n    boot: kexec\n", "t.yaml:4:11: ",
		       "workload 'w' of type iperf3 needs 'boot: qemu or ssh' (it runs inside the built kernel)");
}

/* The kernel build: fragments read from kconfig_dir at load, and every way to get it wrong. */
static void test_kernel_workloads(void **state)
{
	char dir[] = "/tmp/test_conf_kc.XXXXXX";
	struct conf_bisectd c;
	char *p, *text, *head;

	(void)state;
	assert_non_null(mkdtemp(dir));
	p = xasprintf("%s/udp.config", dir);
	assert_int_equal(file_write_atomic(p, "CONFIG_NET=y\nCONFIG_INET=y\n", strlen("CONFIG_NET=y\nCONFIG_INET=y\n")), 0);
	free(p);
	p = xasprintf("%s/bad.config", dir);
	assert_int_equal(file_write_atomic(p, "CONFIG_NET=y\nNET=y\n", strlen("CONFIG_NET=y\nNET=y\n")), 0);
	free(p);
	p = xasprintf("%s/lab.base", dir);
	assert_int_equal(file_write_atomic(p, "CONFIG_64BIT=y\n", strlen("CONFIG_64BIT=y\n")), 0);
	free(p);
	head = xasprintf("kconfig_dir: %s\nworkloads:\n  k:\n    type: iperf3\n    boot: qemu\n", dir);

	text = xasprintf("%s    kernel:\n      fragments: [udp]\n      make_args: [LLVM=1]\n", head);
	assert_int_equal(parse_b(&c, text), 0);
	free(text);
	assert_non_null(c.workloads[0].kernel);
	assert_string_equal(c.workloads[0].kernel->base, "tinyconfig");
	assert_null(c.workloads[0].kernel->base_text);
	assert_string_equal(c.workloads[0].kernel->target, "bzImage");
	assert_string_equal(c.workloads[0].kernel->fragments[0], "udp");
	assert_null(c.workloads[0].kernel->fragments[1]);
	assert_string_equal(c.workloads[0].kernel->fragment_text[0], "CONFIG_NET=y\nCONFIG_INET=y\n");
	assert_string_equal(c.workloads[0].kernel->make_args[0], "LLVM=1");
	assert_null(c.workloads[0].build);
	conf_bisectd_release(&c);

	text = xasprintf("%s    kernel:\n      base: lab.base\n      target: vmlinux\n", head);
	assert_int_equal(parse_b(&c, text), 0);
	free(text);
	assert_string_equal(c.workloads[0].kernel->base_text, "CONFIG_64BIT=y\n");
	assert_string_equal(c.workloads[0].kernel->target, "vmlinux");
	assert_null(c.workloads[0].kernel->fragments[0]);
	conf_bisectd_release(&c);

	/* kconfig_dir defaults to kconfig/ beside the config file. */
	assert_int_equal(conf_bisectd_parse(&c, "/srv/lab/bisectd.yaml", "listen: 127.0.0.1:1\n", 20), 0);
	assert_string_equal(c.kconfig_dir, "/srv/lab/kconfig");
	conf_bisectd_release(&c);

	text = xasprintf("%s    kernel:\n      fragments: [udp, udpp]\n", head);
	expect_b_error(text, "t.yaml:7:24: ", "fragment 'udpp' in the kernel build of workload 'k' is not in");
	expect_b_error(text, "t.yaml:7:24: ", "(there: bad, udp)");
	free(text);
	text = xasprintf("%s    kernel:\n      fragments: [bad]\n", head);
	expect_b_error(text, "t.yaml:7:19: ", "bad.config:2:");
	free(text);
	text = xasprintf("%s    kernel:\n      base: nope.config\n", head);
	expect_b_error(text, "t.yaml:7:13: ", "'base' (tinyconfig, defconfig, allnoconfig or a .config file)");
	free(text);
	text = xasprintf("%s    build: [make]\n    kernel:\n      fragments: [udp]\n", head);
	expect_b_error(text, "t.yaml:6:12: ", "has both 'build' and 'kernel'");
	free(text);
	text = xasprintf("%s    kernel:\n      make_args: [-j8]\n", head);
	expect_b_error(text, "t.yaml:7:18: ", "takes VAR=value arguments");
	free(text);
	text = xasprintf("%s    kernel:\n      fragment: [udp]\n", head);
	expect_b_error(text, "t.yaml:7:7: ", "unknown key 'fragment' in the kernel build of workload 'k'");
	free(text);
	text = xasprintf("%s    kernel: [udp]\n", head);
	expect_b_error(text, "t.yaml:6:13: ", "'kernel' in workload 'k' must be a mapping");
	free(text);
	text = xasprintf("kconfig_dir: %s\nworkloads:\n  k:\n    command: [./b]\n    pattern: 'x(.)'\n"
			 "    kernel:\n      fragments: [udp]\n", dir);
	expect_b_error(text, "t.yaml:7:7: ", "needs type iperf3, pktgen or xdp with boot qemu");
	free(text);

	free(head);
	remove_tree(dir);
}

static void test_bad_pattern(void **state)
{
	(void)state;
	expect_b_error("workloads:\n  w:\n    command: [./b]\n    pattern: 'ops: ([0-9'\n",
		       "t.yaml:4:14: ", "'pattern' in workload 'w' does not compile");
	expect_b_error("workloads:\n  w:\n    command: [./b]\n    pattern: 'ops: [0-9]+'\n",
		       "t.yaml:4:14: ", "'pattern' in workload 'w' must have a group");
}

static void test_yaml_syntax(void **state)
{
	(void)state;
	expect_b_error("listen: 127.0.0.1:1\nrepos: [a, b\ndatabase: x\n", "t.yaml:3:9: ",
		       "did not find expected ',' or ']'");
	expect_b_error("repos:\n  demo:\n    url: \"/x\n", "t.yaml:4:1: ", "found unexpected end of stream");
	expect_b_error("listen: 1:2\n  x: 3\n", "t.yaml:2:4: ", "mapping values are not allowed");
	expect_b_error("a: &x 1\nb: *x\n", "t.yaml:1:4: ", "anchors");
	expect_b_error("a: 1\n---\nb: 2\n", "t.yaml:2:1: ", "only one YAML document");
	expect_b_error("listen: \"a\xff\"\n", "t.yaml:1:11: ", "invalid leading UTF-8 octet");
}

static void test_duplicate_key(void **state)
{
	(void)state;
	expect_b_error("listen: 127.0.0.1:1\ndatabase: x\nlisten: 127.0.0.1:2\n", "t.yaml:3:1: ",
		       "duplicate key 'listen' (first at line 1 column 1)");
	expect_b_error("workloads:\n  w:\n    command: [a]\n    pattern: 'x(.)'\n    command: [b]\n",
		       "t.yaml:5:5: ", "duplicate key 'command' (first at line 3 column 5)");
	expect_b_error("repos:\n  a:\n    url: /x\n  a:\n    url: /y\n", "t.yaml:4:3: ", "duplicate key 'a'");
}

/* Many keys (the duplicate check is hashed): every repo read, and a late duplicate of each found. */
static void test_many_keys(void **state)
{
	static const size_t probes[] = { 0, 1, 15, 16, 17, 1000, 2999 };
	struct conf_bisectd c;
	struct sbuf sb = SBUF_INIT;

	(void)state;
	sbuf_adds(&sb, "repos:\n");
	for (size_t i = 0; i < 3000; i++)
		sbuf_addf(&sb, "  r%zu:\n    url: /x/%zu\n", i, i);
	assert_int_equal(conf_bisectd_parse(&c, "t.yaml", sb.buf, sb.len), 0);
	assert_int_equal(c.nr_repos, 3000);
	assert_string_equal(c.repos[2999].name, "r2999");
	assert_string_equal(conf_repo_find(&c, "r1234")->url, "/x/1234");
	conf_bisectd_release(&c);
	for (size_t p = 0; p < sizeof(probes) / sizeof(probes[0]); p++) {
		struct sbuf dup = SBUF_INIT;
		char prefix[64], needle[128];

		sbuf_add(&dup, sb.buf, sb.len);
		sbuf_addf(&dup, "  r%zu:\n    url: /y\n", probes[p]);
		snprintf(prefix, sizeof(prefix), "t.yaml:%d:3: ", 3000 * 2 + 2);
		snprintf(needle, sizeof(needle), "duplicate key 'r%zu' (first at line %zu column 3)", probes[p],
			 2 + 2 * probes[p]);
		expect_b_error(dup.buf, prefix, needle);
		sbuf_release(&dup);
	}
	sbuf_release(&sb);
}

static void test_pool_matches(void **state)
{
	char *lab[] = { (char *)"lab", NULL };
	char *lab_iso[] = { (char *)"x86", (char *)"isolated", (char *)"lab", NULL };
	char *none[] = { NULL };
	char *want_two[] = { (char *)"lab", (char *)"isolated", NULL };
	struct conf_pool p = { (char *)"p", want_two };
	struct conf_pool any = { (char *)"any", none };

	(void)state;
	assert_int_equal(conf_pool_matches(&p, lab_iso), 1);
	assert_int_equal(conf_pool_matches(&p, lab), 0);
	assert_int_equal(conf_pool_matches(&p, none), 0);
	assert_int_equal(conf_pool_matches(&p, NULL), 0);
	assert_int_equal(conf_pool_matches(&any, none), 1);
	assert_int_equal(conf_pool_matches(&any, lab), 1);
	assert_int_equal(strv_len(want_two), 2);
	assert_int_equal(strv_len(NULL), 0);
}

/* The tree keeps positions, file order and scalar styles. */
static void test_yamltree(void **state)
{
	const char *text = "a: 1\nb:\n  - x\n  - 'y'\nc: ~\nd: '~'\n";
	struct ynode *root = NULL, *b;
	char deep[300];

	(void)state;
	assert_int_equal(ytree_parse(&root, "y", text, strlen(text)), 0);
	assert_non_null(root);
	assert_int_equal(root->kind, YNODE_MAP);
	assert_int_equal(root->nr, 4);
	assert_string_equal(root->keys[1]->str, "b");
	b = ynode_get(root, "b");
	assert_int_equal(b->kind, YNODE_SEQ);
	assert_int_equal(b->line, 3);
	assert_int_equal(b->col, 3);
	assert_int_equal(b->nr, 2);
	assert_int_equal(b->items[1]->line, 4);
	assert_int_equal(b->items[1]->col, 5);
	assert_string_equal(b->items[1]->str, "y");
	assert_int_equal(b->items[1]->plain, 0);
	assert_true(ynode_is_null(ynode_get(root, "c")));
	assert_false(ynode_is_null(ynode_get(root, "d")));
	assert_null(ynode_get(root, "e"));
	ynode_free(root);

	assert_int_equal(ytree_parse(&root, "y", "", 0), 0);
	assert_null(root);
	/* Nesting is bounded: a hostile file must not exhaust the stack. */
	memset(deep, '[', 150);
	memset(deep + 150, ']', 150);
	assert_int_equal(ytree_parse(&root, "y", deep, sizeof(deep)), ERR_INVALID);
	assert_null(root);
	assert_string_equal(err_msg(), "y:1:66: nesting is too deep");
	/* Not NUL-terminated: only len bytes are read. */
	assert_int_equal(ytree_parse(&root, "y", "k: v\nzzz: [", 4), 0);
	assert_string_equal(ynode_get(root, "k")->str, "v");
	ynode_free(root);
}

static void test_load(void **state)
{
	char path[] = "/tmp/test_conf.XXXXXX";
	const char *text = "name: a\nworkdir: /w\nbogus: 1\n";
	struct conf_agent a;
	struct conf_bisectd c;
	int fd;

	(void)state;
	assert_int_equal(conf_bisectd_load(&c, "/nonexistent/bisectd.yaml"), ERR_NOTFOUND);
	assert_non_null(strstr(err_msg(), "/nonexistent/bisectd.yaml"));
	assert_null(c.listen);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(conf_agent_load(&a, path), ERR_INVALID);
	assert_true(strncmp(err_msg(), path, strlen(path)) == 0);
	assert_non_null(strstr(err_msg(), ":3:1: unknown key 'bogus'"));
	unlink(path);
}

/* The sample configs in etc/ must stay loadable. */
static void test_samples(void **state)
{
	const char *self = __FILE__;
	const char *tail = strstr(self, "tests/unit/test_conf.c");
	char *bpath, *apath;
	struct conf_bisectd c;
	struct conf_agent a;
	int rc;

	(void)state;
	if (!tail)
		skip();
	bpath = xasprintf("%.*setc/bisectd.yaml", (int)(tail - self), self);
	apath = xasprintf("%.*setc/agent.yaml", (int)(tail - self), self);
	rc = conf_bisectd_load(&c, bpath);
	if (rc == ERR_NOTFOUND) {
		free(bpath);
		free(apath);
		skip();
	}
	if (rc != 0)
		fail_msg("%s", err_msg());
	assert_non_null(conf_repo_find(&c, "demo"));
	assert_non_null(conf_workload_find(&c, "bench"));
	assert_non_null(conf_pool_find(&c, "local"));
	rc = conf_agent_load(&a, apath);
	if (rc != 0)
		fail_msg("%s", err_msg());
	assert_int_equal(conf_pool_matches(conf_pool_find(&c, "local"), a.labels), 1);
	conf_agent_release(&a);
	conf_bisectd_release(&c);
	free(bpath);
	free(apath);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bisectd_good),
		cmocka_unit_test(test_bisectd_defaults),
		cmocka_unit_test(test_lease_grace_retire),
		cmocka_unit_test(test_net_keys),
		cmocka_unit_test(test_agent_good),
		cmocka_unit_test(test_agent_defaults),
		cmocka_unit_test(test_agent_kcache_max_errors),
		cmocka_unit_test(test_auth),
		cmocka_unit_test(test_unknown_top_key),
		cmocka_unit_test(test_workload_typo),
		cmocka_unit_test(test_trex_ports_forms),
		cmocka_unit_test(test_workload_profile),
		cmocka_unit_test(test_wrong_type),
		cmocka_unit_test(test_bad_int),
		cmocka_unit_test(test_missing_required),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_qemu_workloads),
		cmocka_unit_test(test_kexec_workloads),
		cmocka_unit_test(test_ssh_workloads),
		cmocka_unit_test(test_kernel_workloads),
		cmocka_unit_test(test_bad_pattern),
		cmocka_unit_test(test_yaml_syntax),
		cmocka_unit_test(test_duplicate_key),
		cmocka_unit_test(test_many_keys),
		cmocka_unit_test(test_pool_matches),
		cmocka_unit_test(test_yamltree),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_samples),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
