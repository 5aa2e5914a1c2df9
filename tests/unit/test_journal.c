/*
 * test_journal: the kexec journal (agents/journal.h) is written
 * atomically and read back field for field; each bad field is refused
 * with its name; the marker is found on a command line and bad ones are
 * told apart from none.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "journal.h"
#include "util.h"

#define SHA "0123456789abcdef0123456789abcdef01234567"
#define ID "85667e6c72245133"

static json_t *doc(void)
{
	json_t *claim = json_pack("{s:i, s:i, s:i, s:s, s:i, s:i, s:{s:s, s:s}, s:{s:s, s:s, s:s, s:[s]}}",
				  "task", 7, "attempt", 2, "job", 3, "commit", SHA, "runs", 3, "lease", 60,
				  "repo", "name", "linux", "url", "/srv/linux.git",
				  "workload", "name", "k", "type", "command", "boot", "kexec", "command", "./bench");

	return json_pack("{s:i, s:i, s:i, s:i, s:I, s:s, s:s, s:o, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:[]}",
			 "version", 1, "task", 7, "attempt", 2, "lease", 60, "deadline", (json_int_t)1764600000,
			 "state", JOURNAL_KEXEC, "commit", SHA, "claim", claim, "image", "/w/kcache/k/bzImage",
			 "build_id", ID, "release", "6.1.0-57-amd64",
			 "cmdline", "root=/dev/vda bisect.build=" ID, "srcdir", "/w/repos/linux",
			 "from_boot", "boot-a", "run_boot", "", "good_cmdline", "root=/dev/sda1 ro", "samples");
}

static void test_save_load(void **state)
{
	char dir[] = "/tmp/test_journal.XXXXXX", *path;
	json_t *d = doc();
	struct journal j;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	path = xasprintf("%s/kexec/journal.json", dir);
	assert_int_equal(journal_load(&j, path), ERR_NOTFOUND);
	assert_int_equal(journal_save(path, d), 0);
	assert_int_equal(journal_load(&j, path), 0);
	assert_int_equal(j.task, 7);
	assert_int_equal(j.attempt, 2);
	assert_int_equal(j.lease, 60);
	assert_int_equal(j.deadline, 1764600000);
	assert_string_equal(j.state, JOURNAL_KEXEC);
	assert_string_equal(j.build_id, ID);
	assert_string_equal(j.release, "6.1.0-57-amd64");
	assert_string_equal(j.good_cmdline, "root=/dev/sda1 ro");
	assert_int_equal(json_integer_value(json_object_get(j.claim, "runs")), 3);
	assert_int_equal(json_array_size(j.samples), 0);

	/* The runs so far, then the state the built kernel writes. */
	json_array_append_new(j.samples, json_pack("{s:f, s:s}", "value", 12.5, "unit", "ops/s"));
	json_object_set_new(j.root, "state", json_string(JOURNAL_RUNNING));
	json_object_set_new(j.root, "run_boot", json_string("boot-b"));
	assert_int_equal(journal_save(path, j.root), 0);
	journal_release(&j);
	assert_int_equal(journal_load(&j, path), 0);
	assert_string_equal(j.state, JOURNAL_RUNNING);
	assert_string_equal(j.run_boot, "boot-b");
	assert_int_equal(json_array_size(j.samples), 1);

	/* Not a journal: refused before anything is written over the good one. */
	json_object_set_new(j.root, "build_id", json_string("nothex"));
	assert_int_equal(journal_save(path, j.root), ERR_INVALID);
	journal_release(&j);
	assert_int_equal(journal_load(&j, path), 0);
	assert_string_equal(j.build_id, ID);
	journal_release(&j);

	assert_int_equal(journal_clear(path), 0);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(journal_clear(path), 0);

	/* Garbage is set aside, not retried. */
	assert_int_equal(file_write_atomic(path, "{\"version\": 1", 13), 0);
	assert_int_equal(journal_load(&j, path), ERR_INVALID);
	assert_null(j.root);
	assert_int_equal(journal_set_aside(path), 0);
	assert_int_equal(journal_load(&j, path), ERR_NOTFOUND);
	free(path);
	path = xasprintf("%s/kexec", dir);
	assert_int_equal(remove_tree(dir), 0);
	free(path);
	json_decref(d);
}

/* One field set to a bad value: refused, the message names it. */
static void bad(const char *key, json_t *value, const char *words)
{
	json_t *d = doc();
	struct journal j;
	char *text;

	if (value)
		json_object_set_new(d, key, value);
	else
		json_object_del(d, key);
	text = json_dumps(d, JSON_COMPACT);
	assert_int_equal(journal_parse(&j, text, strlen(text)), ERR_INVALID);
	if (!strstr(err_msg(), words))
		fail_msg("%s: '%s' does not say '%s'", key, err_msg(), words);
	assert_null(j.root);
	free(text);
	json_decref(d);
}

static void test_bad_fields(void **state)
{
	json_t *claim;

	(void)state;
	bad("version", json_integer(2), "journal version 2");
	bad("task", NULL, "task");
	bad("attempt", json_integer(0), "attempt");
	bad("state", json_string("booting"), "'state' must be");
	bad("build_id", json_string("ABCDEF0123456789"), "build_id");
	bad("image", json_string("relative/bzImage"), "absolute");
	bad("from_boot", json_string(""), "from_boot");
	bad("samples", json_string("none"), "samples");
	bad("samples", json_pack("[{s:f, s:s}, {s:f, s:s}, {s:f, s:s}, {s:f, s:s}]", "value", 1.0, "unit", "u",
				 "value", 1.0, "unit", "u", "value", 1.0, "unit", "u", "value", 1.0, "unit", "u"),
	    "4 runs of a task of 3");
	bad("samples", json_pack("[{s:f}]", "value", -1.0), "entry 0");
	bad("claim", json_string("x"), "claim");
	{
		json_t *d = doc();

		claim = json_deep_copy(json_object_get(d, "claim"));
		json_decref(d);
	}
	json_object_set_new(claim, "attempt", json_integer(3));
	bad("claim", claim, "task 7 attempt 3");

	/* A running journal says in which boot. */
	{
		json_t *d = doc();
		struct journal j;
		char *text;

		json_object_set_new(d, "state", json_string(JOURNAL_RUNNING));
		text = json_dumps(d, JSON_COMPACT);
		assert_int_equal(journal_parse(&j, text, strlen(text)), ERR_INVALID);
		assert_non_null(strstr(err_msg(), "run_boot"));
		free(text);
		json_decref(d);
	}
}

static void test_marker(void **state)
{
	char m[JOURNAL_BUILD_ID_LEN + 1];

	(void)state;
	assert_int_equal(journal_cmdline_marker(m, "BOOT_IMAGE=/vmlinuz root=/dev/vda bisect.build=" ID " quiet"), 0);
	assert_string_equal(m, ID);
	assert_int_equal(journal_cmdline_marker(m, "bisect.build=" ID), 0);
	assert_int_equal(journal_cmdline_marker(m, "root=/dev/sda1 ro quiet"), ERR_NOTFOUND);
	assert_string_equal(m, "");
	assert_int_equal(journal_cmdline_marker(m, ""), ERR_NOTFOUND);
	assert_int_equal(journal_cmdline_marker(m, "xbisect.build=" ID), ERR_NOTFOUND);
	assert_int_equal(journal_cmdline_marker(m, "bisect.build="), ERR_NOTFOUND);
	assert_int_equal(journal_cmdline_marker(m, "bisect.build=85667e6c7224513"), ERR_INVALID);
	assert_int_equal(journal_cmdline_marker(m, "bisect.build=85667E6C72245133"), ERR_INVALID);
	assert_string_equal(m, "");
	assert_true(journal_build_id_ok(ID));
	assert_false(journal_build_id_ok("85667e6c7224513g"));
	assert_false(journal_build_id_ok(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_save_load),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_marker),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
