/* test_store: migrations on an empty and on an existing database, and the query helpers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "store.h"
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
	assert_int_equal(store_int(s, &n, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
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
	assert_int_equal(store_int(s, &n, "SELECT count(*) FROM repos WHERE name = ?", "s", "linux"), 0);
	assert_int_equal(n, 1);
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
	assert_int_equal(store_rows(s, &rows, "SELECT name, labels AS labels_json, last_seen FROM agents", ""), 0);
	assert_int_equal(json_array_size(rows), 1);
	row = json_array_get(rows, 0);
	assert_string_equal(json_string_value(json_object_get(row, "name")), "lab1");
	assert_int_equal(json_array_size(json_object_get(row, "labels")), 2);
	assert_int_equal(json_integer_value(json_object_get(row, "last_seen")), 2);
	json_decref(rows);
	assert_int_equal(store_row(s, &row, "SELECT * FROM agents WHERE name = ?", "s", "nope"), ERR_NOTFOUND);
	assert_int_equal(store_doubles(s, &v, &n, "SELECT 1.5 UNION ALL SELECT 2.5", ""), 0);
	assert_int_equal(n, 2);
	assert_true(v[0] == 1.5 && v[1] == 2.5);
	free(v);
	/* A transaction rolled back leaves nothing. */
	assert_int_equal(store_begin(s), 0);
	assert_int_equal(store_exec(s, "DELETE FROM agents", ""), 1);
	store_rollback(s);
	assert_int_equal(store_row(s, &row, "SELECT * FROM agents", ""), 0);
	json_decref(row);
	store_close(s);
	cleanup(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_database_is_migrated),
		cmocka_unit_test(test_existing_database_keeps_data),
		cmocka_unit_test(test_newer_database_is_refused),
		cmocka_unit_test(test_failed_migration_leaves_version),
		cmocka_unit_test(test_rows_and_json_columns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
