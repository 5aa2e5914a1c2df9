/*
 * store: bisectd's state in SQLite (WAL mode, foreign keys on), with the
 * numbered migrations of schema/ applied at open and recorded in
 * PRAGMA user_version.
 *
 * Statements take their parameters through a type string, one letter per
 * '?': 'i' long long, 'd' double, 's' const char * (NULL binds NULL),
 * 'n' NULL (no argument). sqlite's errors are translated here, once.
 * A struct store is not thread-safe: the coordinator serialises its use.
 */
#ifndef BISECT_STORE_H
#define BISECT_STORE_H

#include <jansson.h>
#include <stddef.h>

struct store_migration {
	int version;
	const char *name;
	const char *sql;
};
extern const struct store_migration store_migrations[];
extern const int store_nr_migrations;

struct store;

/* Opens or creates the database at path and migrates it to the newest version. */
int store_open(struct store **out, const char *path);
void store_close(struct store *s);
/* The schema version (PRAGMA user_version). */
int store_version(struct store *s);

int store_begin(struct store *s);
int store_commit(struct store *s);
/* Rolls back the open transaction, if any. */
void store_rollback(struct store *s);

/* Runs one statement; returns the number of rows changed (>= 0) or a code. */
int store_exec(struct store *s, const char *sql, const char *types, ...);
long long store_last_id(struct store *s);

/* The first column of the first row as an integer; ERR_NOTFOUND when no row or NULL. */
int store_int(struct store *s, long long *out, const char *sql, const char *types, ...);

/*
 * Every row as a JSON object keyed by column name, in an array the caller
 * owns. A column whose name ends in "_json" holds JSON text and is stored
 * parsed under the name without the suffix.
 */
int store_rows(struct store *s, json_t **out, const char *sql, const char *types, ...);
/* The first row as an object; ERR_NOTFOUND when none. */
int store_row(struct store *s, json_t **out, const char *sql, const char *types, ...);

/* The first column of every row as doubles; *out is the caller's (NULL when none). */
int store_doubles(struct store *s, double **out, size_t *n, const char *sql, const char *types, ...);

#endif
