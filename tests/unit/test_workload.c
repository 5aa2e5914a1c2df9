/* Unit tests of the workload adapters (command) and the boot method table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sched.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot.h"
#include "methods.h"
#include "conf.h"
#include "err.h"
#include "util.h"
#include "workload.h"
#include "cancelfix.h"

#define PAT "throughput: ([0-9.]+)"

static void test_metric_match(void **state)
{
	double v = -1;

	(void)state;
	assert_int_equal(workload_metric_from_text(&v, "warming up\nthroughput: 123.5 ops/s\n", PAT), 0);
	assert_true(v == 123.5);
}

static void test_metric_first_match_wins(void **state)
{
	double v = -1;

	(void)state;
	assert_int_equal(workload_metric_from_text(&v, "throughput: 7\nthroughput: 9\n", PAT), 0);
	assert_true(v == 7);
}

static void test_metric_line_anchors(void **state)
{
	double v = -1;

	(void)state;
	/* REG_NEWLINE: ^ and $ match at every line. */
	assert_int_equal(workload_metric_from_text(&v, "x\n  sum 42.25\ny\n", "^  sum ([0-9.]+)$"), 0);
	assert_true(v == 42.25);
}

static void test_metric_no_match(void **state)
{
	double v = -1;

	(void)state;
	assert_int_equal(workload_metric_from_text(&v, "nothing here\n", PAT), ERR_NOTFOUND);
	assert_non_null(strstr(err_msg(), "pattern 'throughput: ([0-9.]+)' not found in output"));
	assert_true(v == 0);
	assert_int_equal(workload_metric_from_text(&v, "", PAT), ERR_NOTFOUND);
}

static void test_metric_bad_regex(void **state)
{
	double v = -1;

	(void)state;
	assert_int_equal(workload_metric_from_text(&v, "throughput: 1", "throughput: ([0-9.]+"), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "bad pattern"));
	assert_int_equal(workload_metric_from_text(&v, "a", "a{2,1}"), ERR_INVALID);
}

static void test_metric_not_a_number(void **state)
{
	double v = -1;

	(void)state;
	assert_int_equal(workload_metric_from_text(&v, "throughput: fast", "throughput: ([a-z]+)"), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "not a number"));
	assert_int_equal(workload_metric_from_text(&v, "throughput: 1.2.3", PAT), ERR_INVALID);
	assert_int_equal(workload_metric_from_text(&v, "throughput: .", PAT), ERR_INVALID);
	assert_int_equal(workload_metric_from_text(&v, "rate nan", "rate ([a-z]+)"), ERR_INVALID);
	assert_int_equal(workload_metric_from_text(&v, "rate inf", "rate ([a-z]+)"), ERR_INVALID);
	assert_true(v == 0);
}

static void test_metric_not_positive(void **state)
{
	double v = -1;

	(void)state;
	assert_int_equal(workload_metric_from_text(&v, "throughput: 0", PAT), ERR_INVALID);
	assert_int_equal(workload_metric_from_text(&v, "rate -3", "rate ([-0-9.]+)"), ERR_INVALID);
	assert_int_equal(workload_metric_from_text(&v, "rate 1e-400", "rate ([-+0-9.e]+)"), ERR_INVALID);
	assert_int_equal(workload_metric_from_text(&v, "rate 1e999", "rate ([-+0-9.e]+)"), ERR_INVALID);
}

static void test_metric_exponent(void **state)
{
	double v = -1;

	(void)state;
	assert_int_equal(workload_metric_from_text(&v, "rate 1.5e6 pps", "rate ([0-9.eE+-]+)"), 0);
	assert_true(v == 1.5e6);
	assert_int_equal(workload_metric_from_text(&v, "rate 2.5E+03 pps", "rate ([0-9.eE+-]+)"), 0);
	assert_true(v == 2500);
}

static void test_metric_without_group(void **state)
{
	double v = -1;

	(void)state;
	assert_int_equal(workload_metric_from_text(&v, "took 17.5 s", "[0-9.]+"), 0);
	assert_true(v == 17.5);
}

static void test_metric_optional_group_unmatched(void **state)
{
	double v = -1;

	(void)state;
	assert_int_equal(workload_metric_from_text(&v, "rate: none", "rate: (([0-9]+)|none)?"), ERR_INVALID);
}

/* A workload definition as the claim reply carries it. */
static json_t *def_new(const char *script, const char *pattern)
{
	json_t *def = json_pack("{s:s, s:[s,s,s], s:i}", "type", "command",
				"command", "sh", "-c", script, "run_timeout", 10);

	if (pattern)
		json_object_set_new(def, "pattern", json_string(pattern));
	return def;
}

/* One run of def under boot none, pinned to cpu (-1: not). */
static int run_on(struct run_sample *s, json_t *def, const char *srcdir, int cpu)
{
	const struct workload_ops *ops = workload_find("command");
	struct boot_task bt = { def, ops, srcdir, NULL, 1, cpu, NULL, NULL, NULL };

	assert_non_null(ops);
	return boot_find("none")->run(s, NULL, &bt, 1);
}

static void run_one(struct run_sample *s, json_t *def, const char *srcdir)
{
	assert_int_equal(run_on(s, def, srcdir, -1), 0);
}

/* What the agent checks before the long steps: the definition, then what boot none needs. */
static int prepare(json_t *def)
{
	const struct workload_ops *ops = workload_find("command");
	struct boot_task bt = { def, ops, NULL, NULL, 1, -1, NULL, NULL, NULL };
	int rc = workload_check_msg(ops, def);

	return rc ? rc : boot_find("none")->prepare(&bt);
}

static void test_command_ok(void **state)
{
	json_t *def = def_new("echo warming up; echo throughput: 123.5 ops/s", PAT);
	struct run_sample s;

	(void)state;
	assert_int_equal(prepare(def), 0);
	run_one(&s, def, NULL);
	assert_true(s.value == 123.5);
	assert_string_equal(s.unit, "ops/s");
	assert_string_equal(s.error, "");
	json_decref(s.extra);
	json_decref(def);
}

static void test_command_unit_and_cwd(void **state)
{
	char dir[] = "/tmp/test_workload.XXXXXX";
	char *file;
	json_t *def = def_new("cat result.txt", "^([0-9.]+) Mb/s");
	struct run_sample s;

	(void)state;
	assert_non_null(mkdtemp(dir));
	file = xasprintf("%s/result.txt", dir);
	assert_int_equal(file_write_atomic(file, "1877 Mb/s\n", 10), 0);
	json_object_set_new(def, "unit", json_string("Mb/s"));
	run_one(&s, def, dir);
	assert_true(s.value == 1877);
	assert_string_equal(s.unit, "Mb/s");
	assert_string_equal(s.error, "");
	assert_int_equal(remove_tree(dir), 0);
	free(file);
	json_decref(def);
}

static void test_command_pinned(void **state)
{
	/* Pinned to one CPU, the child sees exactly one allowed CPU. */
	json_t *def = def_new("n=$(nproc); echo throughput: $n", PAT);
	struct run_sample s;
	cpu_set_t set;
	int cpu = -1;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int i = 0; i < CPU_SETSIZE && cpu < 0; i++)
		if (CPU_ISSET(i, &set))
			cpu = i;
	assert_int_equal(run_on(&s, def, NULL, cpu), 0);
	assert_true(s.value == 1);
	json_decref(def);
}

static void test_command_exit_status(void **state)
{
	json_t *def = def_new("echo throughput: 5; echo oops >&2; exit 1", PAT);
	struct run_sample s;

	(void)state;
	run_one(&s, def, NULL);
	assert_true(s.value == 0);
	assert_non_null(strstr(s.error, "exit 1"));
	assert_non_null(strstr(s.error, "oops"));
	json_decref(def);
}

static void test_command_no_match(void **state)
{
	json_t *def = def_new("echo latency: 3 us", PAT);
	struct run_sample s;

	(void)state;
	run_one(&s, def, NULL);
	assert_true(s.value == 0);
	assert_string_equal(s.error, "pattern 'throughput: ([0-9.]+)' not found in output");
	json_decref(def);
}

static void test_command_timeout(void **state)
{
	json_t *def = def_new("echo throughput: 5; exec sleep 30", PAT);
	struct run_sample s;
	int64_t t0 = now_ms();

	(void)state;
	json_object_set_new(def, "run_timeout", json_integer(1));
	run_one(&s, def, NULL);
	assert_true(s.value == 0);
	assert_non_null(strstr(s.error, "timed out"));
	assert_true(now_ms() - t0 < 10000);
	json_decref(def);
}

/* A cancel stops the run in hand at once, long before its run_timeout, as a failed run saying so. */
static void test_command_cancel(void **state)
{
	json_t *def = def_new("echo throughput: 5; exec sleep 30", PAT);
	struct boot_task bt = { def, workload_find("command"), NULL, NULL, 1, -1, NULL, NULL, NULL };
	struct run_sample s;
	pthread_t th;
	int cancel = 0;
	int64_t t0 = now_ms();

	(void)state;
	json_object_set_new(def, "run_timeout", json_integer(60));
	bt.cancel = &cancel;
	assert_int_equal(pthread_create(&th, NULL, cancel_later, &cancel), 0);
	assert_int_equal(boot_find("none")->run(&s, NULL, &bt, 1), 0);
	pthread_join(th, NULL);
	assert_true(now_ms() - t0 < 20000);
	assert_true(s.value == 0);
	assert_non_null(strstr(s.error, "cancelled after"));
	json_decref(def);
}

static void test_command_missing_program(void **state)
{
	json_t *def = json_pack("{s:[s], s:s}", "command", "./no-such-benchmark", "pattern", PAT);
	struct run_sample s;

	(void)state;
	/* With a '/', the program may be a build output: prepare lets it through. */
	assert_int_equal(prepare(def), 0);
	run_one(&s, def, "/tmp");
	assert_true(s.value == 0);
	assert_non_null(strstr(s.error, "exit 127"));
	json_decref(def);
}

static void test_command_prepare_rejects(void **state)
{
	json_t *def;

	(void)state;
	def = def_new("true", NULL);
	assert_int_equal(prepare(def), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "pattern"));
	json_decref(def);

	def = def_new("true", "(unclosed");
	assert_int_equal(prepare(def), ERR_INVALID);
	json_decref(def);

	def = json_pack("{s:s}", "pattern", PAT);
	assert_int_equal(prepare(def), ERR_INVALID);
	json_object_set_new(def, "command", json_array());
	assert_int_equal(prepare(def), ERR_INVALID);
	json_object_set_new(def, "command", json_string("sh -c 'echo 1'"));
	assert_int_equal(prepare(def), ERR_INVALID);
	json_object_set_new(def, "command", json_pack("[s,i]", "echo", 1));
	assert_int_equal(prepare(def), ERR_INVALID);
	json_object_set_new(def, "command", json_pack("[s]", "no-such-program-bisectd"));
	assert_int_equal(prepare(def), ERR_NOTFOUND);
	assert_non_null(strstr(err_msg(), "no-such-program-bisectd"));
	json_decref(def);
}

static void test_workload_find(void **state)
{
	(void)state;
	assert_non_null(workload_find("command"));
	assert_string_equal(workload_find("command")->name, "command");
	assert_null(workload_find("iperf9"));
	assert_null(workload_find(""));
	assert_null(workload_find(NULL));
}

static void test_boot_find(void **state)
{
	const struct boot_ops *b = boot_find("none");

	(void)state;
	assert_non_null(b);
	assert_string_equal(b->name, "none");
	assert_int_equal(boot_method_find("none")->places, WORKLOAD_HOST);
	assert_non_null(b = boot_find("qemu"));
	assert_string_equal(b->name, "qemu");
	assert_int_equal(boot_method_find("qemu")->places, WORKLOAD_GUEST);
	/* ssh boots the built kernel on a device and runs argv workloads and the guest kinds' scripts there */
	assert_non_null(b = boot_find("ssh"));
	assert_string_equal(b->name, "ssh");
	assert_int_equal(boot_method_find("ssh")->places, WORKLOAD_HOST | WORKLOAD_GUEST | BOOT_KERNEL);
	assert_null(boot_find("x"));
	assert_null(boot_find(""));
	assert_null(boot_find(NULL));
}

/*
 * The coordinator's list of boot methods (conf_boot.c) is the agent's table,
 * and every workload kind has a method that runs it and what its places
 * need: an argv for the host, tools and a script for a guest, a parser.
 */
static void test_tables_agree(void **state)
{
	const struct workload_ops *const *all;
	size_t n;
	const struct boot_method *m = boot_methods(&n);

	(void)state;
	for (size_t i = 0; i < n; i++) {
		const struct boot_ops *b = boot_find(m[i].name);

		/* linked with the agent's boot files, every method in the table has its ops */
		assert_non_null(b);
		assert_string_equal(b->name, m[i].name);
		assert_true(b->start && b->run && b->stop);
		assert_int_equal(conf_boot_places(m[i].name), m[i].places);
		/* Host or guest workloads; both only on a machine that boots the built kernel (ssh). */
		assert_true((m[i].places & ~BOOT_KERNEL) == WORKLOAD_HOST ||
			    (m[i].places & ~BOOT_KERNEL) == WORKLOAD_GUEST ||
			    m[i].places == (WORKLOAD_HOST | WORKLOAD_GUEST | BOOT_KERNEL));
	}
	assert_null(boot_find("kexec-not-yet"));
	assert_int_equal(conf_boot_places("x"), 0);
	all = workload_all(&n);
	assert_int_equal(n, 5);
	for (size_t i = 0; i < n; i++) {
		const struct workload_ops *w = all[i];

		assert_ptr_equal(workload_find(w->name), w);
		assert_non_null(w->check);
		assert_non_null(w->parse);
		assert_non_null(w->keys);
		if (w->places & WORKLOAD_HOST)
			assert_non_null(w->argv);
		if (w->places & WORKLOAD_GUEST)
			assert_true(w->tools && w->script);
		assert_true(w->places & (conf_boot_places("none") | conf_boot_places("qemu")));
	}
}

/* The guest kinds fill in their defaults, name their unit by their metric, and refuse bad keys. */
static void test_guest_kinds_check(void **state)
{
	struct workload_bad bad;
	json_t *def = json_object();
	const struct workload_ops *pg = workload_find("pktgen"), *ip = workload_find("iperf3");
	const char *tools[4];

	(void)state;
	assert_int_equal(workload_check(&bad, pg, def), 0);
	assert_string_equal(json_string_value(json_object_get(def, "metric")), "pps");
	assert_string_equal(json_string_value(json_object_get(def, "unit")), "pps");
	assert_int_equal(json_integer_value(json_object_get(def, "count")), 200000);
	assert_int_equal(json_integer_value(json_object_get(def, "pkt_size")), 60);
	assert_int_equal(pg->tools(tools, 4, def), 0);
	/* Its modules, for a distribution kernel that has them as such. */
	assert_int_equal(pg->modules(tools, 4, def), 2);
	assert_string_equal(tools[0], "pktgen");
	assert_string_equal(tools[1], "dummy");
	json_object_set_new(def, "clsact_bpf", json_true());
	assert_int_equal(pg->tools(tools, 4, def), 1);
	assert_string_equal(tools[0], "tc");
	assert_int_equal(pg->modules(tools, 4, def), 4);
	assert_string_equal(tools[2], "sch_ingress");
	assert_string_equal(tools[3], "cls_bpf");
	assert_int_equal(pg->modules(tools, 3, def), ERR_INVALID);
	/* Idempotent: the agent checks again what the coordinator sent. */
	assert_int_equal(workload_check(&bad, pg, def), 0);
	json_object_set_new(def, "pkt_size", json_integer(59));
	assert_int_equal(workload_check(&bad, pg, def), ERR_INVALID);
	assert_string_equal(bad.key, "pkt_size");
	json_object_set_new(def, "pkt_size", json_integer(64));
	json_object_set_new(def, "metric", json_string("KBytes/s"));
	assert_int_equal(workload_check(&bad, pg, def), ERR_INVALID);
	assert_string_equal(bad.key, "metric");
	json_decref(def);

	def = json_pack("{s:[s,s,s]}", "iperf3", "-u", "-P", "64");
	assert_int_equal(workload_check(&bad, ip, def), 0);
	assert_string_equal(json_string_value(json_object_get(def, "unit")), "KBytes/s");
	json_object_set_new(def, "iperf3", json_pack("[s,s]", "-u", "--bidir"));
	assert_int_equal(workload_check(&bad, ip, def), ERR_INVALID);
	assert_string_equal(bad.key, "iperf3");
	assert_int_equal(bad.item, 1);
	assert_int_equal(workload_check_msg(ip, def), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "'iperf3'[1]: iperf3 option '--bidir'"));
	json_object_set_new(def, "iperf3", json_pack("[s,i]", "-u", 1));
	assert_int_equal(workload_check(&bad, ip, def), ERR_INVALID);
	json_decref(def);
}

/* A run the guest printed becomes a sample through the kind's parser, its exit status told. */
static void test_guest_kinds_parse(void **state)
{
	json_t *def = json_pack("{s:s}", "metric", "Mb/s");
	const char *text = "Result: OK: 1792112(c1792112+d0) usec, 200000 (60byte,0frags)\n"
			   "  111600pps 53Mb/sec (53568000bps) errors: 0\n";
	struct run_output o = { text, strlen(text), NULL, 0, 1, 0, "" };
	struct run_sample s;

	(void)state;
	workload_find("pktgen")->parse(&s, def, &o);
	assert_true(s.value > 53.5 && s.value < 53.6);
	assert_string_equal(s.unit, "Mb/s");
	json_decref(s.extra);
	o.out = "pktgen setup failed (exit 1):\n";
	o.out_len = strlen(o.out);
	o.ok = 0;
	o.rc = 1;
	workload_find("pktgen")->parse(&s, def, &o);
	assert_true(s.value == 0);
	assert_non_null(strstr(s.error, "(exit 1)"));
	json_decref(s.extra);
	json_decref(def);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metric_match),
		cmocka_unit_test(test_metric_first_match_wins),
		cmocka_unit_test(test_metric_line_anchors),
		cmocka_unit_test(test_metric_no_match),
		cmocka_unit_test(test_metric_bad_regex),
		cmocka_unit_test(test_metric_not_a_number),
		cmocka_unit_test(test_metric_not_positive),
		cmocka_unit_test(test_metric_exponent),
		cmocka_unit_test(test_metric_without_group),
		cmocka_unit_test(test_metric_optional_group_unmatched),
		cmocka_unit_test(test_command_ok),
		cmocka_unit_test(test_command_unit_and_cwd),
		cmocka_unit_test(test_command_pinned),
		cmocka_unit_test(test_command_exit_status),
		cmocka_unit_test(test_command_no_match),
		cmocka_unit_test(test_command_timeout),
		cmocka_unit_test(test_command_cancel),
		cmocka_unit_test(test_command_missing_program),
		cmocka_unit_test(test_command_prepare_rejects),
		cmocka_unit_test(test_workload_find),
		cmocka_unit_test(test_boot_find),
		cmocka_unit_test(test_tables_agree),
		cmocka_unit_test(test_guest_kinds_check),
		cmocka_unit_test(test_guest_kinds_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
