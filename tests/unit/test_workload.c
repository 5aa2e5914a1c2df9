/* Unit tests of the workload adapters (command) and the boot method table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot.h"
#include "err.h"
#include "util.h"
#include "workload.h"

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

static void run_one(struct sample *s, json_t *def, const char *srcdir)
{
	const struct workload_ops *ops = workload_find("command");
	struct run_env env = { srcdir, -1 };

	assert_non_null(ops);
	assert_int_equal(ops->run(s, def, &env), 0);
}

static void test_command_ok(void **state)
{
	json_t *def = def_new("echo warming up; echo throughput: 123.5 ops/s", PAT);
	struct sample s;

	(void)state;
	assert_int_equal(workload_find("command")->prepare(def), 0);
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
	struct sample s;

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
	const struct workload_ops *ops = workload_find("command");
	struct run_env env = { NULL, -1 };
	struct sample s;
	cpu_set_t set;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int i = 0; i < CPU_SETSIZE && env.cpu < 0; i++)
		if (CPU_ISSET(i, &set))
			env.cpu = i;
	assert_int_equal(ops->run(&s, def, &env), 0);
	assert_true(s.value == 1);
	json_decref(def);
}

static void test_command_exit_status(void **state)
{
	json_t *def = def_new("echo throughput: 5; echo oops >&2; exit 1", PAT);
	struct sample s;

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
	struct sample s;

	(void)state;
	run_one(&s, def, NULL);
	assert_true(s.value == 0);
	assert_string_equal(s.error, "pattern 'throughput: ([0-9.]+)' not found in output");
	json_decref(def);
}

static void test_command_timeout(void **state)
{
	json_t *def = def_new("echo throughput: 5; exec sleep 30", PAT);
	struct sample s;
	int64_t t0 = now_ms();

	(void)state;
	json_object_set_new(def, "run_timeout", json_integer(1));
	run_one(&s, def, NULL);
	assert_true(s.value == 0);
	assert_non_null(strstr(s.error, "timed out"));
	assert_true(now_ms() - t0 < 10000);
	json_decref(def);
}

static void test_command_missing_program(void **state)
{
	json_t *def = json_pack("{s:[s], s:s}", "command", "./no-such-benchmark", "pattern", PAT);
	struct sample s;

	(void)state;
	/* With a '/', the program may be a build output: prepare lets it through. */
	assert_int_equal(workload_find("command")->prepare(def), 0);
	run_one(&s, def, "/tmp");
	assert_true(s.value == 0);
	assert_non_null(strstr(s.error, "exit 127"));
	json_decref(def);
}

static void test_command_prepare_rejects(void **state)
{
	const struct workload_ops *ops = workload_find("command");
	json_t *def;

	(void)state;
	def = def_new("true", NULL);
	assert_int_equal(ops->prepare(def), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "pattern"));
	json_decref(def);

	def = def_new("true", "(unclosed");
	assert_int_equal(ops->prepare(def), ERR_INVALID);
	json_decref(def);

	def = json_pack("{s:s}", "pattern", PAT);
	assert_int_equal(ops->prepare(def), ERR_INVALID);
	json_object_set_new(def, "command", json_array());
	assert_int_equal(ops->prepare(def), ERR_INVALID);
	json_object_set_new(def, "command", json_string("sh -c 'echo 1'"));
	assert_int_equal(ops->prepare(def), ERR_INVALID);
	json_object_set_new(def, "command", json_pack("[s,i]", "echo", 1));
	assert_int_equal(ops->prepare(def), ERR_INVALID);
	json_object_set_new(def, "command", json_pack("[s]", "no-such-program-bisectd"));
	assert_int_equal(ops->prepare(def), ERR_NOTFOUND);
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
	assert_int_equal(b->boot(NULL, "/tmp"), 0);
	assert_null(b->shutdown);
	assert_null(boot_find("x"));
	assert_null(boot_find(""));
	assert_null(boot_find(NULL));
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
		cmocka_unit_test(test_command_missing_program),
		cmocka_unit_test(test_command_prepare_rejects),
		cmocka_unit_test(test_workload_find),
		cmocka_unit_test(test_boot_find),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
