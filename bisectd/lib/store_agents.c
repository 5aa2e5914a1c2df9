/* store_agents: the agents that registered, their labels and when they were last seen. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "err.h"
#include "store.h"
#include "store_internal.h"
#include "util.h"

void store_agent_release(struct agent *a)
{
	if (!a)
		return;
	free(a->name);
	strv_free(a->labels);
	memset(a, 0, sizeof(*a));
}

void store_agents_free(struct agent *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		store_agent_release(&a[i]);
	free(a);
}

static void agent_row(struct agent *a, sqlite3_stmt *st)
{
	a->id = sqlite3_column_int64(st, 0);
	a->name = store_col_text(st, 1);
	a->labels = store_parse_strv((const char *)sqlite3_column_text(st, 2));
	a->registered = sqlite3_column_int64(st, 3);
	a->last_seen = sqlite3_column_int64(st, 4);
	a->last_claim = sqlite3_column_int64(st, 5);
	a->retired = sqlite3_column_int64(st, 6);
}

#define AGENT_COLS "id, name, labels, registered, last_seen, last_claim, retired"

/* Every agent row sql selects (AGENT_COLS), bound by types. */
static int agent_rows(struct agent **out, size_t *n, struct store *s, const char *sql, const char *types,
		      long long arg)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = store_prepare(&st, s, sql, types, arg)))
		return rc;
	while ((rc = store_step(s, st)) == 1) {
		*out = xgrow(*out, *n, &cap, sizeof(**out));
		agent_row(&(*out)[(*n)++], st);
	}
	store_finish(s, st);
	if (rc < 0) {
		store_agents_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int store_agent_put(struct store *s, const char *name, const char *labels, long long time)
{
	int rc = store_exec(s, "INSERT INTO agents (name, labels, registered, last_seen) VALUES (?, ?, ?, ?) "
			    "ON CONFLICT(name) DO UPDATE SET labels = excluded.labels, last_seen = excluded.last_seen, "
			    "retired = NULL",
			    "ssii", name, labels, time, time);

	return rc < 0 ? rc : 0;
}

int store_agent_get(struct agent *a, struct store *s, const char *name)
{
	sqlite3_stmt *st;
	int rc;

	memset(a, 0, sizeof(*a));
	if ((rc = store_prepare(&st, s, "SELECT " AGENT_COLS " FROM agents WHERE name = ?",
				"s", name)))
		return rc;
	rc = store_step(s, st);
	if (rc == 1) {
		agent_row(a, st);
		rc = 0;
	} else if (rc == 0) {
		rc = err_set(ERR_NOTFOUND, "agent '%s' does not exist", name);
	}
	store_finish(s, st);
	return rc;
}

int store_agent_name(char **name, struct store *s, long long id)
{
	sqlite3_stmt *st;
	int rc;

	*name = NULL;
	if ((rc = store_prepare(&st, s, "SELECT name FROM agents WHERE id = ?", "i", id)))
		return rc;
	rc = store_step(s, st);
	if (rc == 1) {
		*name = store_col_text(st, 0);
		rc = 0;
	} else if (rc == 0) {
		rc = err_set(ERR_NOTFOUND, "agent %lld does not exist", id);
	}
	store_finish(s, st);
	return rc;
}

int store_agent_seen(struct store *s, long long id, long long time, int claim)
{
	int rc = claim ? store_exec(s, "UPDATE agents SET last_seen = ?, last_claim = ?, retired = NULL WHERE id = ?",
				    "iii", time, time, id)
		       : store_exec(s, "UPDATE agents SET last_seen = ?, retired = NULL WHERE id = ?", "ii", time, id);

	return rc < 0 ? rc : 0;
}

int store_agents_live(struct agent **out, size_t *n, struct store *s, long long since)
{
	return agent_rows(out, n, s, "SELECT " AGENT_COLS " FROM agents WHERE last_seen >= ?", "i", since);
}

int store_agents_active(struct agent **out, size_t *n, struct store *s, long long since)
{
	return agent_rows(out, n, s, "SELECT " AGENT_COLS " FROM agents a WHERE a.retired IS NULL AND "
			  "(a.last_claim >= ?1 OR EXISTS (SELECT 1 FROM tasks t WHERE t.agent_id = a.id AND "
			  "t.state = 'claimed'))", "i", since);
}

int store_agents_retire(char ***names, struct store *s, long long before, long long time)
{
	struct agent *a = NULL;
	size_t n = 0;
	int rc;

	*names = NULL;
	if ((rc = agent_rows(&a, &n, s, "SELECT " AGENT_COLS " FROM agents WHERE retired IS NULL AND last_seen < ?",
			     "i", before)) || n == 0)
		goto out;
	*names = xcalloc(n + 1, sizeof(**names));
	for (size_t i = 0; i < n; i++) {
		if ((rc = store_exec(s, "UPDATE agents SET retired = ? WHERE id = ?", "ii", time, a[i].id)) < 0 ||
		    (rc = store_exec(s, "UPDATE tasks SET lease = ? WHERE agent_id = ? AND state = 'claimed'", "ii",
				     time, a[i].id)) < 0)
			break;
		rc = 0;
		(*names)[i] = a[i].name;
		a[i].name = NULL;
	}
	if (rc) {
		strv_free(*names);
		*names = NULL;
	}
out:
	store_agents_free(a, n);
	return rc;
}

int store_agents_doc(json_t **out, struct store *s)
{
	return store_rows(out, s, "SELECT a.name, a.labels AS labels_json, a.last_seen, a.last_claim, a.retired, "
			  "(SELECT t.id FROM tasks t WHERE t.agent_id = a.id AND t.state = 'claimed' LIMIT 1) AS task "
			  "FROM agents a ORDER BY a.name", "");
}
