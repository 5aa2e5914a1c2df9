/*
 * test_store: migrations on an empty, an existing and a version-4 database
 * holding a job, the query helpers, and the statement cache.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "store.h"
#include "store_internal.h"
#include "util.h"

static char *tmpdb(void)
{
	char dir[] = "/tmp/test_store.XXXXXX";

	assert_non_null(mkdtemp(dir));
	return xasprintf("%s/db", dir);
}

static void cleanup(char *path)
{
	char *dir = xstrndup(path, strrchr(path, '/') - path);

	remove_tree(dir);
	free(dir);
	free(path);
}

static int latest(void)
{
	return store_migrations[store_nr_migrations - 1].version;
}

static void test_empty_database_is_migrated(void **state)
{
	char *path = tmpdb();
	struct store *s;
	long long n;

	(void)state;
	assert_int_equal(store_open(&s, path), 0);
	assert_int_equal(store_version(s), latest());
	assert_int_equal(store_int(&n, s, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
				   "('repos', 'agents', 'jobs', 'job_commits', 'tasks', 'samples', 'summaries', 'events')",
				   ""), 0);
	assert_int_equal(n, 8);
	/* WAL and foreign keys are on. */
	assert_int_equal(store_exec(s, "INSERT INTO tasks (job_id, idx, runs, created) VALUES (99, 0, 1, 0)", ""),
			 ERR_EXISTS);
	store_close(s);
	cleanup(path);
}

static void test_existing_database_keeps_data(void **state)
{
	char *path = tmpdb();
	struct store *s;
	long long n;

	(void)state;
	assert_int_equal(store_open(&s, path), 0);
	assert_int_equal(store_exec(s, "INSERT INTO repos (name, url) VALUES (?, ?)", "ss", "linux", "/x"), 1);
	store_close(s);
	assert_int_equal(store_open(&s, path), 0);
	assert_int_equal(store_version(s), latest());
	assert_int_equal(store_int(&n, s, "SELECT count(*) FROM repos WHERE name = ?", "s", "linux"), 0);
	assert_int_equal(n, 1);
	store_close(s);
	cleanup(path);
}

/* A database as bisectd left it at schema version 4, holding one job with a commit, a task and a sample. */
static void make_v4(const char *path)
{
	sqlite3 *db;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL), SQLITE_OK);
	for (int i = 0; i < store_nr_migrations && store_migrations[i].version <= 4; i++)
		assert_int_equal(sqlite3_exec(db, store_migrations[i].sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
		"INSERT INTO repos (id, name, url) VALUES (1, 'demo', '/x');"
		"INSERT INTO jobs (id, repo_id, workload, pool, good, bad, good_ref, bad_ref, runs, unit, direction, "
		"state, created, finished, culprit, report, budget_runs, append) VALUES (7, 1, 'bench', 'local', "
		"'g', 'b', 'v1.0', 'main', 5, 'ops/s', 'higher', 'done', 100, 200, 1, '{\"verdict\": \"culprit\"}', "
		"40, 'nosmt');"
		"INSERT INTO job_commits (job_id, idx, sha, subject) VALUES (7, 0, 'g', 'good'), (7, 1, 'b', 'bad');"
		"INSERT INTO tasks (id, job_id, idx, runs, state, created) VALUES (3, 7, 1, 5, 'done', 150);"
		"INSERT INTO samples (task_id, attempt, run, job_id, idx, value, unit, created) "
		"VALUES (3, 1, 0, 7, 1, 12.5, 'ops/s', 160), (3, 1, 1, 7, 1, 10.0, 'ops/s', 161), "
		"(3, 1, 2, 7, 1, 0, 'ops/s', 162);"
		"INSERT INTO decisions (job_id, time, state, queries, top, why) VALUES (7, 150, 'done', '[]', '[]', 'x');"
		"PRAGMA user_version = 4;", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static void test_version4_database_is_upgraded(void **state)
{
	char *path = tmpdb();
	struct store *s;
	json_t *row;
	long long n;

	(void)state;
	make_v4(path);
	assert_int_equal(store_open(&s, path), 0);
	assert_int_equal(store_version(s), latest());
	/* The job and everything hanging off it survive the rebuild of jobs. */
	assert_int_equal(store_row(&row, s, "SELECT state, culprit, report, budget_runs, append, policy, "
				   "budget_seconds FROM jobs WHERE id = 7", ""), 0);
	assert_string_equal(json_string_value(json_object_get(row, "state")), "done");
	assert_int_equal(json_integer_value(json_object_get(row, "culprit")), 1);
	assert_string_equal(json_string_value(json_object_get(row, "report")), "{\"verdict\": \"culprit\"}");
	assert_int_equal(json_integer_value(json_object_get(row, "budget_runs")), 40);
	assert_string_equal(json_string_value(json_object_get(row, "append")), "nosmt");
	assert_string_equal(json_string_value(json_object_get(row, "policy")), "bisectd");
	assert_int_equal(json_integer_value(json_object_get(row, "budget_seconds")), 0);
	json_decref(row);
	assert_int_equal(store_int(&n, s, "SELECT (SELECT count(*) FROM job_commits WHERE job_id = 7) + "
				   "(SELECT count(*) FROM tasks WHERE job_id = 7) + (SELECT count(*) FROM samples) + "
				   "(SELECT count(*) FROM decisions WHERE job_id = 7)", ""), 0);
	assert_int_equal(n, 7);
	/* Schema 13 sums each agent's runs of a commit from the samples kept: 12.5, 10 and a failed one. */
	{
		struct stats_acc a;

		assert_int_equal(store_agent_acc(&a, s, 7, 1, 0), 0);
		assert_true(a.n == 2 && a.failures == 1 && a.sum == 22.5 && fabs(a.sum_inv - 0.18) < 1e-12 &&
			    a.mean == 11.25 && fabs(a.m2 - 3.125) < 1e-9 && a.min == 10 && a.max == 12.5);
		assert_int_equal(store_agent_acc(&a, s, 7, 0, 0), 0);
		assert_true(a.n == 0 && a.failures == 0);
	}
	assert_int_equal(store_int(&n, s, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
				   "name = 'jobs_state' AND tbl_name = 'jobs'", ""), 0);
	assert_int_equal(n, 1);
	assert_int_equal(store_int(&n, s, "SELECT count(*) FROM sqlite_master WHERE name = 'jobs_new'", ""), 0);
	assert_int_equal(n, 0);
	/* The new end state is allowed, a made-up one still is not. */
	assert_int_equal(store_exec(s, "UPDATE jobs SET state = 'undecided' WHERE id = 7", ""), 1);
	assert_int_equal(store_exec(s, "UPDATE jobs SET state = 'unsure' WHERE id = 7", ""), ERR_EXISTS);
	/* Foreign keys are on again and point at the new table: no task for a job that does not exist... */
	assert_int_equal(store_exec(s, "INSERT INTO tasks (job_id, idx, runs, created) VALUES (99, 0, 1, 0)", ""),
			 ERR_EXISTS);
	/* ... and deleting the job still takes its children with it. */
	assert_int_equal(store_exec(s, "DELETE FROM samples", ""), 3);
	assert_int_equal(store_exec(s, "DELETE FROM jobs WHERE id = 7", ""), 1);
	assert_int_equal(store_int(&n, s, "SELECT (SELECT count(*) FROM job_commits) + (SELECT count(*) FROM tasks) "
				   "+ (SELECT count(*) FROM decisions) + (SELECT count(*) FROM agent_sums)", ""), 0);
	assert_int_equal(n, 0);
	store_close(s);
	cleanup(path);
}

static void test_newer_database_is_refused(void **state)
{
	char *path = tmpdb();
	struct store *s;
	sqlite3 *db;

	(void)state;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 9999", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_open(&s, path), ERR_INVALID);
	assert_null(s);
	assert_non_null(strstr(err_msg(), "newer"));
	cleanup(path);
}

static void test_failed_migration_leaves_version(void **state)
{
	char *path = tmpdb();
	struct store *s;
	sqlite3 *db;
	int v = -1;
	sqlite3_stmt *st;

	(void)state;
	/* A table the first migration creates already exists: the migration fails, all of it rolls back. */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE events (x)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_not_equal(store_open(&s, path), 0);
	assert_non_null(strstr(err_msg(), "0001-"));
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE name = 'repos'",
					    -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	assert_int_equal(v, 0);
	cleanup(path);
}

static void test_rows_and_json_columns(void **state)
{
	char *path = tmpdb();
	struct store *s;
	json_t *rows, *row;
	double *v;
	size_t n;

	(void)state;
	assert_int_equal(store_open(&s, path), 0);
	assert_int_equal(store_exec(s, "INSERT INTO agents (name, labels, registered, last_seen) VALUES "
				    "(?, ?, 1, 2)", "ss", "lab1", "[\"x\", \"y\"]"), 1);
	assert_int_equal(store_rows(&rows, s, "SELECT name, labels AS labels_json, last_seen FROM agents", ""), 0);
	assert_int_equal(json_array_size(rows), 1);
	row = json_array_get(rows, 0);
	assert_string_equal(json_string_value(json_object_get(row, "name")), "lab1");
	assert_int_equal(json_array_size(json_object_get(row, "labels")), 2);
	assert_int_equal(json_integer_value(json_object_get(row, "last_seen")), 2);
	json_decref(rows);
	assert_int_equal(store_row(&row, s, "SELECT * FROM agents WHERE name = ?", "s", "nope"), ERR_NOTFOUND);
	assert_int_equal(store_doubles(&v, &n, s, "SELECT 1.5 UNION ALL SELECT 2.5", ""), 0);
	assert_int_equal(n, 2);
	assert_true(v[0] == 1.5 && v[1] == 2.5);
	free(v);
	/* A transaction rolled back leaves nothing. */
	assert_int_equal(store_begin(s), 0);
	assert_int_equal(store_exec(s, "DELETE FROM agents", ""), 1);
	store_rollback(s);
	assert_int_equal(store_row(&row, s, "SELECT * FROM agents", ""), 0);
	json_decref(row);
	store_close(s);
	cleanup(path);
}

/*
 * A text is parsed once: the same statement comes back, reset and
 * unbound; a nested use of a text in use gets a statement of its own; a
 * text built at run time is keyed by its content, not its address.
 */
static void test_statement_cache(void **state)
{
	char *path = tmpdb(), *sql;
	struct store *s;
	sqlite3_stmt *a, *b, *c;
	long long v = 0;

	(void)state;
	assert_int_equal(store_open(&s, path), 0);
	assert_int_equal(store_prepare(&a, s, "SELECT ?", "i", 7LL), 0);
	assert_int_equal(sqlite3_step(a), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int64(a, 0), 7);
	assert_int_equal(store_prepare(&b, s, "SELECT ?", "i", 8LL), 0);
	assert_ptr_not_equal(a, b);         /* a is still in use */
	assert_int_equal(sqlite3_step(b), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int64(b, 0), 8);
	store_finish(s, b);
	store_finish(s, a);
	assert_int_equal(store_prepare(&c, s, "SELECT ?", "", 0), 0);
	assert_ptr_equal(c, a);             /* parsed once, given back */
	assert_int_equal(sqlite3_step(c), SQLITE_ROW);
	assert_int_equal(sqlite3_column_type(c, 0), SQLITE_NULL);  /* unbound by store_finish */
	store_finish(s, c);
	for (int i = 0; i < 3; i++) {
		sql = xasprintf("SELECT %d", i);
		assert_int_equal(store_int(&v, s, sql, ""), 0);
		assert_int_equal(v, i);
		free(sql);
	}
	/* More texts than the cache keeps: the rest still work, prepared each time. */
	for (int i = 0; i < STORE_CACHE_MAX + 20; i++) {
		sql = xasprintf("SELECT %d + 1", i);
		assert_int_equal(store_int(&v, s, sql, ""), 0);
		assert_int_equal(v, i + 1);
		free(sql);
	}
	assert_int_equal(s->cached, STORE_CACHE_MAX);
	store_finish(s, NULL);
	store_close(s);
	cleanup(path);
}

/* With the checkpointer on, the WAL is checkpointed by its thread, and the store still reads what it wrote. */
static void test_checkpointer(void **state)
{
	char *path = tmpdb();
	struct store *s;
	long long v = 0;

	(void)state;
	assert_int_equal(store_open(&s, path), 0);
	assert_int_equal(store_checkpointer_start(s), 0);
	assert_int_equal(store_exec(s, "CREATE TABLE filler (x)", ""), 0);
	/* Past the 1,000-page mark: about 1,200 pages of 4 KiB. */
	for (int i = 0; i < 300; i++)
		assert_int_equal(store_exec(s, "INSERT INTO filler VALUES (randomblob(16000))", ""), 1);
	for (int i = 0; i < 1000 && store_checkpoints(s) == 0; i++)
		usleep(10 * 1000);
	assert_true(store_checkpoints(s) > 0);
	assert_int_equal(store_int(&v, s, "SELECT count(*) FROM filler", ""), 0);
	assert_int_equal(v, 300);
	store_close(s);
	/* What was checkpointed and what was not both come back. */
	assert_int_equal(store_open(&s, path), 0);
	assert_int_equal(store_int(&v, s, "SELECT count(*) FROM filler", ""), 0);
	assert_int_equal(v, 300);
	store_close(s);
	cleanup(path);
}

static int ends[2];  /* store_on_end() calls: [0] rolled back, [1] committed */

static void count_end(void *arg, int committed)
{
	assert_ptr_equal(arg, ends);
	ends[committed ? 1 : 0]++;
}

/* store_on_end(): once after a COMMIT that held, once after a rollback; never for a statement alone. */
static void test_on_end(void **state)
{
	char *path = tmpdb();
	struct store *s;
	long long v = 0;

	(void)state;
	assert_int_equal(store_open(&s, path), 0);
	store_on_end(s, count_end, ends);
	assert_int_equal(store_in_transaction(s), 0);
	assert_int_equal(store_exec(s, "CREATE TABLE t (x)", ""), 0);
	assert_int_equal(ends[0] + ends[1], 0);
	assert_int_equal(store_begin(s), 0);
	assert_int_equal(store_in_transaction(s), 1);
	assert_int_equal(store_exec(s, "INSERT INTO t VALUES (1)", ""), 1);
	assert_int_equal(ends[1], 0);  /* not before the end */
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(ends[1], 1);
	assert_int_equal(store_in_transaction(s), 0);
	assert_int_equal(store_begin(s), 0);
	assert_int_equal(store_exec(s, "INSERT INTO t VALUES (2)", ""), 1);
	store_rollback(s);
	assert_int_equal(ends[0], 1);
	assert_int_equal(ends[1], 1);
	assert_int_equal(store_int(&v, s, "SELECT count(*) FROM t", ""), 0);
	assert_int_equal(v, 1);
	store_on_end(s, NULL, NULL);
	assert_int_equal(store_begin(s), 0);
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(ends[1], 1);
	store_close(s);
	cleanup(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_database_is_migrated),
		cmocka_unit_test(test_existing_database_keeps_data),
		cmocka_unit_test(test_version4_database_is_upgraded),
		cmocka_unit_test(test_newer_database_is_refused),
		cmocka_unit_test(test_failed_migration_leaves_version),
		cmocka_unit_test(test_rows_and_json_columns),
		cmocka_unit_test(test_statement_cache),
		cmocka_unit_test(test_checkpointer),
		cmocka_unit_test(test_on_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
