/*
 * store_internal: what the store's own files (store*.c) share, and the
 * store's unit test: the struct, and statements with parameters bound
 * through a type string, one letter per '?': 'i' long long, 'd' double,
 * 's' const char * (NULL binds NULL), 'n' NULL (no argument).
 * Nothing outside the store includes this header: the rest of bisectd
 * calls the typed functions of store.h.
 */
#ifndef BISECT_STORE_INTERNAL_H
#define BISECT_STORE_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define STORE_CACHE_SLOTS 512
#define STORE_CACHE_MAX 384     /* texts kept; the rest are prepared each time */

struct store_cached {
	char *sql;              /* NULL: a free slot */
	uint64_t hash;
	sqlite3_stmt *st;
	int busy;               /* handed out, not finished yet */
};

struct store {
	sqlite3 *db;
	char *path;
	long long rollbacks;    /* store_rollbacks() */
	struct store_cached cache[STORE_CACHE_SLOTS];  /* store.c's statement cache */
	size_t cached;
	struct store_ckpt *ckpt;                        /* store_checkpointer_start(); NULL: none */
	void (*on_end)(void *arg, int committed);       /* store_on_end() */
	void *on_end_arg;
};

/* Sets the last error from sqlite's, naming what failed; returns its code (ERR_BUSY, ERR_EXISTS, ERR_FAIL). */
int store_db_err(struct store *s, const char *what);

/*
 * Prepares sql (parsed once per store: the statement is cached) and binds
 * its parameters; the caller gives *st back with store_finish(), never
 * sqlite3_finalize().
 */
int store_prepare(sqlite3_stmt **st, struct store *s, const char *sql, const char *types, ...);
/* Done with a statement of store_prepare(): reset for the next call, or finalized. NULL is ignored. */
void store_finish(struct store *s, sqlite3_stmt *st);
/* Steps st: 1 with a row, 0 when done, a code (message set) on failure. */
int store_step(struct store *s, sqlite3_stmt *st);
/* Column i as a heap string the caller frees; NULL for NULL. */
char *store_col_text(sqlite3_stmt *st, int i);
/* Column i into buf, truncated to n - 1 bytes; "" for NULL. */
void store_col_buf(char *buf, size_t n, sqlite3_stmt *st, int i);

/* Runs one statement; returns the number of rows changed (>= 0) or a code. */
int store_exec(struct store *s, const char *sql, const char *types, ...);
long long store_last_id(struct store *s);

/* The first column of the first row as an integer; ERR_NOTFOUND when no row or NULL. */
int store_int(long long *out, struct store *s, const char *sql, const char *types, ...);

/*
 * Every row as a JSON object keyed by column name, in an array the caller
 * owns: the documents the API shows. A column whose name ends in "_json"
 * holds JSON text and is stored parsed under the name without the suffix.
 */
int store_rows(json_t **out, struct store *s, const char *sql, const char *types, ...);
/* The first row as an object; ERR_NOTFOUND when none. */
int store_row(json_t **out, struct store *s, const char *sql, const char *types, ...);

/* The first column of every row as doubles; *out is the caller's (NULL when none). */
int store_doubles(double **out, size_t *n, struct store *s, const char *sql, const char *types, ...);
/* The first column of every row, as integers: ids. */
int store_ints(long long **out, size_t *n, struct store *s, const char *sql, const char *types, ...);

/* A JSON array of integers ("[1,3]") as a heap array the caller frees (empty when unparsable). */
void store_parse_ints(int **out, int *n, const char *text);
/* A JSON array of strings as a NULL-terminated heap vector (strv_free()); non-strings are left out. */
char **store_parse_strv(const char *text);

#endif
