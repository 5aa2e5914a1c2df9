/*
 * test_taskwire: the claim reply survives encode then decode unchanged,
 * and the decoder refuses each bad field with a message naming it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "taskwire.h"

#define SHA "0123456789abcdef0123456789abcdef01234567"

static void fill(struct task_wire *t, json_t *def)
{
	memset(t, 0, sizeof(*t));
	t->task = 7;
	t->attempt = 2;
	t->job = 3;
	t->runs = 5;
	t->lease = 60;
	t->commit = SHA;
	t->repo_name = "linux";
	t->repo_url = "/srv/mirrors/linux.git";
	t->workload = def;
}

static json_t *encoded(void)
{
	json_t *def = json_pack("{s:s, s:s, s:s, s:i}", "name", "udp", "type", "iperf3",
				"boot", "qemu", "build_timeout", 900);
	struct task_wire t;
	json_t *j;

	fill(&t, def);
	assert_int_equal(taskwire_encode(&j, &t), 0);
	json_decref(def);
	return j;
}

static void test_round_trip(void **state)
{
	json_t *j = encoded();
	struct task_wire t;
	char *text;
	json_t *back;

	(void)state;
	/* Through text, as on the wire. */
	text = json_dumps(j, JSON_COMPACT);
	back = json_loads(text, 0, NULL);
	assert_int_equal(taskwire_decode(&t, back), 0);
	assert_int_equal(t.task, 7);
	assert_int_equal(t.attempt, 2);
	assert_int_equal(t.job, 3);
	assert_int_equal(t.runs, 5);
	assert_int_equal(t.lease, 60);
	assert_string_equal(t.commit, SHA);
	assert_string_equal(t.repo_name, "linux");
	assert_string_equal(t.repo_url, "/srv/mirrors/linux.git");
	assert_string_equal(t.type, "iperf3");
	assert_string_equal(t.boot, "qemu");
	assert_int_equal(t.build_timeout, 900);
	assert_string_equal(json_string_value(json_object_get(t.workload, "name")), "udp");
	assert_true(json_equal(j, back));
	assert_null(t.profile);
	assert_null(json_object_get(j, "profile"));
	free(text);
	json_decref(back);
	json_decref(j);
}

/* A profile task says whose profile it records; the agent reads it back, and refuses another word. */
static void test_profile(void **state)
{
	json_t *def = json_pack("{s:s, s:b}", "name", "bench", "profile", 1), *j;
	struct task_wire t, back;

	(void)state;
	fill(&t, def);
	t.profile = "culprit";
	assert_int_equal(taskwire_encode(&j, &t), 0);
	assert_string_equal(json_string_value(json_object_get(j, "profile")), "culprit");
	assert_int_equal(taskwire_decode(&back, j), 0);
	assert_string_equal(back.profile, "culprit");
	json_object_set_new(j, "profile", json_string("sibling"));
	assert_int_equal(taskwire_decode(&back, j), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "'profile' must be \"parent\" or \"culprit\", not 'sibling'"));
	assert_int_equal(back.task, 7);   /* still reportable as failed */
	t.profile = "sibling";
	json_decref(j);
	assert_int_equal(taskwire_encode(&j, &t), ERR_INVALID);
	json_decref(def);
}

static void test_defaults(void **state)
{
	json_t *j = encoded();
	struct task_wire t;
	json_t *w = json_object_get(j, "workload");

	(void)state;
	json_object_del(w, "type");
	json_object_del(w, "boot");
	json_object_del(w, "build_timeout");
	json_object_del(j, "job");
	json_object_del(j, "lease");
	assert_int_equal(taskwire_decode(&t, j), 0);
	assert_string_equal(t.type, "command");
	assert_string_equal(t.boot, "none");
	assert_int_equal(t.build_timeout, 1800);
	json_decref(j);
}

/* j's field key set to the JSON text value (NULL: removed) must be refused naming want. */
static void refused(const char *obj, const char *key, const char *value, const char *want, int has_id)
{
	json_t *j = encoded(), *o = obj ? json_object_get(j, obj) : j;
	struct task_wire t;

	if (value)
		json_object_set_new(o, key, json_loads(value, JSON_DECODE_ANY, NULL));
	else
		json_object_del(o, key);
	assert_int_equal(taskwire_decode(&t, j), ERR_INVALID);
	if (!strstr(err_msg(), want))
		fail_msg("%s.%s = %s: '%s' does not say '%s'", obj ? obj : "", key, value ? value : "(absent)",
			 err_msg(), want);
	/* Past the id and attempt, the task can still be reported as failed. */
	assert_int_equal(t.task != 0 && t.attempt != 0, has_id);
	json_decref(j);
}

static void test_bad_fields(void **state)
{
	(void)state;
	refused(NULL, "task", NULL, "task", 0);
	refused(NULL, "task", "0", "task", 0);
	refused(NULL, "task", "\"7\"", "task", 0);
	refused(NULL, "attempt", NULL, "attempt", 0);
	refused(NULL, "attempt", "0", "attempt", 0);
	refused(NULL, "attempt", "1000001", "attempt", 0);
	refused(NULL, "runs", NULL, "runs", 1);
	refused(NULL, "runs", "0", "runs", 1);
	refused(NULL, "runs", "1001", "runs", 1);
	refused(NULL, "job", "-1", "job", 1);
	refused(NULL, "lease", "\"60\"", "lease", 1);
	refused(NULL, "commit", NULL, "commit", 1);
	refused(NULL, "commit", "\"HEAD\"", "commit", 1);
	refused(NULL, "commit", "\"0123456789abcdef0123456789abcdef0123456g\"", "commit", 1);
	refused(NULL, "repo", NULL, "repo", 1);
	refused(NULL, "repo", "\"linux\"", "repo", 1);
	refused("repo", "name", NULL, "name", 1);
	refused("repo", "name", "\"..\"", "repo name", 1);
	refused("repo", "name", "\"a/b\"", "repo name", 1);
	refused("repo", "name", "\"\"", "repo name", 1);
	refused("repo", "url", NULL, "url", 1);
	refused("repo", "url", "\"\"", "empty url", 1);
	refused(NULL, "workload", NULL, "workload", 1);
	refused(NULL, "workload", "[]", "workload", 1);
	refused("workload", "type", "3", "type", 1);
	refused("workload", "boot", "\"a\\nb\"", "boot", 1);
	refused("workload", "build_timeout", "0", "build_timeout", 1);
	refused("workload", "build_timeout", "604801", "build_timeout", 1);
}

static void test_not_an_object(void **state)
{
	json_t *j = json_array();
	struct task_wire t;

	(void)state;
	assert_int_equal(taskwire_decode(&t, j), ERR_INVALID);
	assert_int_equal(t.task, 0);
	json_decref(j);
}

/* The coordinator never sends what the agent would refuse. */
static void test_encode_refuses(void **state)
{
	json_t *def = json_object(), *j = (json_t *)1;
	struct task_wire t;

	(void)state;
	fill(&t, def);
	t.commit = "abc";
	assert_int_equal(taskwire_encode(&j, &t), ERR_INVALID);
	assert_null(j);
	fill(&t, def);
	t.runs = 0;
	assert_int_equal(taskwire_encode(&j, &t), ERR_INVALID);
	fill(&t, def);
	t.repo_name = "a b";
	assert_int_equal(taskwire_encode(&j, &t), ERR_INVALID);
	fill(&t, NULL);
	assert_int_equal(taskwire_encode(&j, &t), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "workload"));
	json_decref(def);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_not_an_object),
		cmocka_unit_test(test_encode_refuses),
		cmocka_unit_test(test_profile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
