/*
 * store: the database's core: opening, migrations, transactions, and the
 * statement helpers the table files (store_jobs.c, store_tasks.c,
 * store_results.c, store_agents.c) are written with.
 */
#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "log.h"
#include "store.h"
#include "store_internal.h"
#include "util.h"

#define CKPT_PAGES 1000          /* SQLite's own autocheckpoint mark */

struct store_ckpt {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	pthread_t thread;
	sqlite3 *db;                 /* the checkpointer's own connection */
	int pages;                   /* in the WAL after the last commit, as the hook saw */
	int quit;
	long long runs;
};

int store_db_err(struct store *s, const char *what)
{
	int rc = sqlite3_errcode(s->db);

	return err_set(rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? ERR_BUSY :
		       rc == SQLITE_CONSTRAINT ? ERR_EXISTS : ERR_FAIL,
		       "store %s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

/*
 * The statement cache: each SQL text is parsed once per store and its
 * statement kept (SQLITE_PREPARE_PERSISTENT), reset and unbound by
 * store_finish() for the next call. Parsing was most of a claim's time
 * (bench-api). A text whose statement is in use (a nested call) or that
 * finds the cache full is prepared and finalized as before.
 */
static uint64_t sql_hash(const char *sql)
{
	uint64_t h = 14695981039346656037ULL;  /* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)sql; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return h;
}

static struct store_cached *cache_slot(struct store *s, const char *sql, uint64_t h)
{
	for (size_t i = 0; i < STORE_CACHE_SLOTS; i++) {
		struct store_cached *c = &s->cache[(h + i) % STORE_CACHE_SLOTS];

		if (!c->sql || (c->hash == h && !strcmp(c->sql, sql)))
			return c;
	}
	return NULL;
}

static int cache_prepare(struct store *s, sqlite3_stmt **st, const char *sql)
{
	uint64_t h = sql_hash(sql);
	struct store_cached *c = cache_slot(s, sql, h);

	if (c && c->sql && !c->busy) {
		c->busy = 1;
		*st = c->st;
		return SQLITE_OK;
	}
	if (!c || c->sql || s->cached >= STORE_CACHE_MAX)
		return sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
	if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK)
		return sqlite3_errcode(s->db);
	c->sql = xstrdup(sql);
	c->hash = h;
	c->st = *st;
	c->busy = 1;
	s->cached++;
	return SQLITE_OK;
}

void store_finish(struct store *s, sqlite3_stmt *st)
{
	const char *sql = st ? sqlite3_sql(st) : NULL;
	struct store_cached *c = sql ? cache_slot(s, sql, sql_hash(sql)) : NULL;

	if (c && c->st == st) {
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
		c->busy = 0;
	} else {
		sqlite3_finalize(st);
	}
}

static int prepare(struct store *s, sqlite3_stmt **st, const char *sql, const char *types, va_list ap)
{
	int rc, i = 1;

	if (cache_prepare(s, st, sql) != SQLITE_OK)
		return store_db_err(s, "prepare");
	for (const char *t = types; t && *t; t++, i++) {
		switch (*t) {
		case 'i':
			rc = sqlite3_bind_int64(*st, i, va_arg(ap, long long));
			break;
		case 'd':
			rc = sqlite3_bind_double(*st, i, va_arg(ap, double));
			break;
		case 's': {
			const char *v = va_arg(ap, const char *);

			rc = v ? sqlite3_bind_text(*st, i, v, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(*st, i);
			break;
		}
		case 'n':
			rc = sqlite3_bind_null(*st, i);
			break;
		default:
			store_finish(s, *st);
			*st = NULL;
			return err_set(ERR_INVALID, "store: bad parameter type '%c'", *t);
		}
		if (rc != SQLITE_OK) {
			rc = store_db_err(s, "bind");
			store_finish(s, *st);
			*st = NULL;
			return rc;
		}
	}
	return 0;
}

int store_prepare(sqlite3_stmt **st, struct store *s, const char *sql, const char *types, ...)
{
	va_list ap;
	int rc;

	va_start(ap, types);
	rc = prepare(s, st, sql, types, ap);
	va_end(ap);
	return rc;
}

int store_step(struct store *s, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return store_db_err(s, "query");
}

char *store_col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? xstrdup((const char *)t) : NULL;
}

void store_col_buf(char *buf, size_t n, sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	snprintf(buf, n, "%s", t ? (const char *)t : "");
}

/* 0 when no row breaks a foreign key; the first that does is the error. */
static int foreign_key_check(struct store *s, const char *what)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(s->db, "PRAGMA foreign_key_check", -1, &st, NULL) != SQLITE_OK)
		return store_db_err(s, what);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		rc = err_set(ERR_FAIL, "store %s: %s: row %lld of %s breaks its foreign key to %s", s->path, what,
			     (long long)sqlite3_column_int64(st, 1), sqlite3_column_text(st, 0),
			     sqlite3_column_text(st, 2));
	else if (rc == SQLITE_DONE)
		rc = 0;
	else
		rc = store_db_err(s, what);
	sqlite3_finalize(st);
	return rc;
}

/*
 * Applies the migrations newer than the store, each in a transaction of
 * its own. Foreign keys are off meanwhile, as SQLite's way to change a
 * table's definition wants (rebuild, drop, rename): with them on, dropping
 * the old jobs table would first delete its children through ON DELETE
 * CASCADE. They are checked before each commit instead, and on again after.
 */
static int migrate(struct store *s)
{
	int v = store_version(s), rc = 0;

	if (sqlite3_exec(s->db, "PRAGMA foreign_keys = OFF", NULL, NULL, NULL) != SQLITE_OK)
		return store_db_err(s, "foreign keys off");
	for (int i = 0; i < store_nr_migrations; i++) {
		const struct store_migration *m = &store_migrations[i];
		char *sql;

		if (m->version <= v)
			continue;
		if ((rc = store_begin(s)))
			goto out;
		if (sqlite3_exec(s->db, m->sql, NULL, NULL, NULL) != SQLITE_OK) {
			rc = store_db_err(s, m->name);
			store_rollback(s);
			goto out;
		}
		sql = xasprintf("PRAGMA user_version = %d", m->version);
		if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
			rc = store_db_err(s, "user_version");
		free(sql);
		if (rc || (rc = foreign_key_check(s, m->name)) || (rc = store_commit(s))) {
			store_rollback(s);
			goto out;
		}
		log_info("store %s: migrated to version %d (%s)", s->path, m->version, m->name);
	}
out:
	if (sqlite3_exec(s->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) != SQLITE_OK && rc == 0)
		rc = store_db_err(s, "foreign keys on");
	return rc;
}

/* sqlite calls it for every rollback of a transaction, asked for or not (a COMMIT that failed). */
static void count_rollback(void *arg)
{
	((struct store *)arg)->rollbacks++;
}

long long store_rollbacks(const struct store *s)
{
	return s->rollbacks;
}

int store_open(struct store **out, const char *path)
{
	struct store *s = xcalloc(1, sizeof(*s));
	int rc;

	*out = NULL;
	s->path = xstrdup(path);
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		rc = err_set(ERR_FAIL, "store %s: cannot open: %s", path,
			     s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 5000);
	sqlite3_rollback_hook(s->db, count_rollback, s);
	if (sqlite3_exec(s->db, "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;"
			 "PRAGMA synchronous = NORMAL;", NULL, NULL, NULL) != SQLITE_OK) {
		rc = store_db_err(s, "pragmas");
		goto fail;
	}
	if (store_version(s) > store_migrations[store_nr_migrations - 1].version) {
		rc = err_set(ERR_INVALID, "store %s: schema version %d is newer than this bisectd knows (%d)",
			     path, store_version(s), store_migrations[store_nr_migrations - 1].version);
		goto fail;
	}
	if ((rc = migrate(s)))
		goto fail;
	*out = s;
	return 0;
fail:
	store_close(s);
	return rc;
}

static int wal_hook(void *arg, sqlite3 *db, const char *name, int pages)
{
	struct store_ckpt *c = arg;

	(void)db;
	(void)name;
	pthread_mutex_lock(&c->mu);
	c->pages = pages;
	if (pages >= CKPT_PAGES)
		pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->mu);
	return SQLITE_OK;
}

static void *ckpt_main(void *arg)
{
	struct store_ckpt *c = arg;

	pthread_mutex_lock(&c->mu);
	while (!c->quit) {
		struct timespec ts;

		if (c->pages < CKPT_PAGES) {  /* past the mark: at once; else at most once a second */
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&c->cond, &c->mu, &ts);
		}
		if (c->quit || c->pages == 0)
			continue;
		c->pages = 0;
		pthread_mutex_unlock(&c->mu);
		if (sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL) != SQLITE_OK &&
		    sqlite3_errcode(c->db) != SQLITE_BUSY)
			log_warn("store: checkpoint: %s", sqlite3_errmsg(c->db));
		pthread_mutex_lock(&c->mu);
		c->runs++;
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

int store_checkpointer_start(struct store *s)
{
	struct store_ckpt *c = xcalloc(1, sizeof(*c));
	pthread_condattr_t ca;

	if (sqlite3_open_v2(s->path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		int rc = err_set(ERR_FAIL, "store %s: cannot open for checkpoints: %s", s->path,
				 c->db ? sqlite3_errmsg(c->db) : "out of memory");

		sqlite3_close(c->db);
		free(c);
		return rc;
	}
	sqlite3_busy_timeout(c->db, 5000);
	pthread_mutex_init(&c->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cond, &ca);
	pthread_condattr_destroy(&ca);
	if ((errno = pthread_create(&c->thread, NULL, ckpt_main, c))) {
		int rc = err_set(ERR_FAIL, "store %s: cannot start the checkpointer: %s", s->path, strerror(errno));

		sqlite3_close(c->db);
		pthread_cond_destroy(&c->cond);
		pthread_mutex_destroy(&c->mu);
		free(c);
		return rc;
	}
	s->ckpt = c;
	/* The hook replaces SQLite's autocheckpoint on this connection. */
	sqlite3_wal_hook(s->db, wal_hook, c);
	return 0;
}

long long store_checkpoints(struct store *s)
{
	long long n;

	if (!s->ckpt)
		return 0;
	pthread_mutex_lock(&s->ckpt->mu);
	n = s->ckpt->runs;
	pthread_mutex_unlock(&s->ckpt->mu);
	return n;
}

static void ckpt_stop(struct store *s)
{
	struct store_ckpt *c = s->ckpt;

	if (!c)
		return;
	sqlite3_wal_hook(s->db, NULL, NULL);
	pthread_mutex_lock(&c->mu);
	c->quit = 1;
	pthread_cond_signal(&c->cond);
	pthread_mutex_unlock(&c->mu);
	pthread_join(c->thread, NULL);
	sqlite3_close(c->db);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->mu);
	free(c);
	s->ckpt = NULL;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	ckpt_stop(s);
	for (size_t i = 0; i < STORE_CACHE_SLOTS; i++) {
		sqlite3_finalize(s->cache[i].st);
		free(s->cache[i].sql);
	}
	sqlite3_close(s->db);
	free(s->path);
	free(s);
}

int store_version(struct store *s)
{
	sqlite3_stmt *st;
	int v = -1;

	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

int store_begin(struct store *s)
{
	if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return store_db_err(s, "begin");
	return 0;
}

int store_commit(struct store *s)
{
	if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		return store_db_err(s, "commit");  /* the caller's store_rollback() ends it */
	if (s->on_end)
		s->on_end(s->on_end_arg, 1);
	return 0;
}

void store_rollback(struct store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	if (s->on_end)
		s->on_end(s->on_end_arg, 0);
}

void store_on_end(struct store *s, void (*fn)(void *arg, int committed), void *arg)
{
	s->on_end = fn;
	s->on_end_arg = arg;
}

int store_in_transaction(const struct store *s)
{
	return !sqlite3_get_autocommit(s->db);
}

int store_exec(struct store *s, const char *sql, const char *types, ...)
{
	sqlite3_stmt *st;
	va_list ap;
	int rc;

	va_start(ap, types);
	rc = prepare(s, &st, sql, types, ap);
	va_end(ap);
	if (rc)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		rc = sqlite3_changes(s->db);
	else
		rc = store_db_err(s, "exec");
	store_finish(s, st);
	return rc;
}

long long store_last_id(struct store *s)
{
	return sqlite3_last_insert_rowid(s->db);
}

int store_int(long long *out, struct store *s, const char *sql, const char *types, ...)
{
	sqlite3_stmt *st;
	va_list ap;
	int rc;

	va_start(ap, types);
	rc = prepare(s, &st, sql, types, ap);
	va_end(ap);
	if (rc)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		*out = sqlite3_column_int64(st, 0);
		rc = 0;
	} else if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
		rc = err_set(ERR_NOTFOUND, "no such row");
	} else {
		rc = store_db_err(s, "query");
	}
	store_finish(s, st);
	return rc;
}

static json_t *column_json(sqlite3_stmt *st, int i, int parse)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		return json_integer(sqlite3_column_int64(st, i));
	case SQLITE_FLOAT:
		return json_real(sqlite3_column_double(st, i));
	case SQLITE_TEXT: {
		const char *t = (const char *)sqlite3_column_text(st, i);
		json_t *j;

		if (parse && (j = json_loads(t, JSON_DECODE_ANY, NULL)))
			return j;
		return json_string(t);
	}
	default:
		return json_null();
	}
}

static int rows_va(struct store *s, json_t **out, int max, const char *sql, const char *types, va_list ap)
{
	sqlite3_stmt *st;
	json_t *arr;
	int rc;

	*out = NULL;
	if ((rc = prepare(s, &st, sql, types, ap)))
		return rc;
	arr = json_array();
	while ((max < 0 || (int)json_array_size(arr) < max) && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *row = json_object();

		for (int i = 0; i < sqlite3_column_count(st); i++) {
			const char *name = sqlite3_column_name(st, i);
			size_t len = strlen(name);

			if (len > 5 && !strcmp(name + len - 5, "_json")) {
				char *key = xstrndup(name, len - 5);

				json_object_set_new(row, key, column_json(st, i, 1));
				free(key);
			} else {
				json_object_set_new(row, name, column_json(st, i, 0));
			}
		}
		json_array_append_new(arr, row);
	}
	if (max >= 0 && (int)json_array_size(arr) >= max)
		rc = SQLITE_DONE;
	if (rc != SQLITE_DONE) {
		rc = store_db_err(s, "query");
		json_decref(arr);
	} else {
		rc = 0;
		*out = arr;
	}
	store_finish(s, st);
	return rc;
}

int store_rows(json_t **out, struct store *s, const char *sql, const char *types, ...)
{
	va_list ap;
	int rc;

	va_start(ap, types);
	rc = rows_va(s, out, -1, sql, types, ap);
	va_end(ap);
	return rc;
}

int store_row(json_t **out, struct store *s, const char *sql, const char *types, ...)
{
	json_t *arr;
	va_list ap;
	int rc;

	*out = NULL;
	va_start(ap, types);
	rc = rows_va(s, &arr, 1, sql, types, ap);
	va_end(ap);
	if (rc)
		return rc;
	if (json_array_size(arr) == 0)
		rc = err_set(ERR_NOTFOUND, "no such row");
	else
		*out = json_incref(json_array_get(arr, 0));
	json_decref(arr);
	return rc;
}

/* The first column of every row into *out, doubles or (ints) long longs. */
static int first_column(void **out, size_t *n, int ints, struct store *s, const char *sql, const char *types,
			va_list ap)
{
	size_t size = ints ? sizeof(long long) : sizeof(double), cap = 0;
	sqlite3_stmt *st;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = prepare(s, &st, sql, types, ap)))
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			*out = xrealloc(*out, cap * size);
		}
		if (ints)
			((long long *)*out)[(*n)++] = sqlite3_column_int64(st, 0);
		else
			((double *)*out)[(*n)++] = sqlite3_column_double(st, 0);
	}
	if (rc != SQLITE_DONE) {
		rc = store_db_err(s, "query");
		free(*out);
		*out = NULL;
		*n = 0;
	} else {
		rc = 0;
	}
	store_finish(s, st);
	return rc;
}

int store_doubles(double **out, size_t *n, struct store *s, const char *sql, const char *types, ...)
{
	void *v;
	va_list ap;
	int rc;

	va_start(ap, types);
	rc = first_column(&v, n, 0, s, sql, types, ap);
	va_end(ap);
	*out = v;
	return rc;
}

int store_ints(long long **out, size_t *n, struct store *s, const char *sql, const char *types, ...)
{
	void *v;
	va_list ap;
	int rc;

	va_start(ap, types);
	rc = first_column(&v, n, 1, s, sql, types, ap);
	va_end(ap);
	*out = v;
	return rc;
}

void store_parse_ints(int **out, int *n, const char *text)
{
	json_t *a = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL, *v;
	size_t i;

	*n = 0;
	*out = xcalloc(json_array_size(a) + 1, sizeof(int));
	json_array_foreach(a, i, v)
		(*out)[(*n)++] = (int)json_integer_value(v);
	json_decref(a);
}

char **store_parse_strv(const char *text)
{
	json_t *a = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL, *v;
	char **out = xcalloc(json_array_size(a) + 1, sizeof(char *));
	size_t i, k = 0;

	json_array_foreach(a, i, v)
		if (json_is_string(v))
			out[k++] = xstrdup(json_string_value(v));
	json_decref(a);
	return out;
}
