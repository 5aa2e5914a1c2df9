/* store_tokens: the API's tokens (their hashes, roles, bindings), for the daemon's auth. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "store.h"
#include "store_internal.h"
#include "util.h"

#define TOKEN_COLS "id, prefix, hash, role, agent, note, created, last_used, revoked"

void store_token_release(struct token *t)
{
	if (!t)
		return;
	free(t->agent);
	free(t->note);
	memset(t, 0, sizeof(*t));
}

void store_tokens_free(struct token *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		store_token_release(&t[i]);
	free(t);
}

static void token_row(struct token *t, sqlite3_stmt *st)
{
	t->id = sqlite3_column_int64(st, 0);
	store_col_buf(t->prefix, sizeof(t->prefix), st, 1);
	store_col_buf(t->hash, sizeof(t->hash), st, 2);
	store_col_buf(t->role, sizeof(t->role), st, 3);
	t->agent = store_col_text(st, 4);
	t->note = store_col_text(st, 5);
	t->created = sqlite3_column_int64(st, 6);
	t->last_used = sqlite3_column_int64(st, 7);
	t->revoked = sqlite3_column_int64(st, 8);
}

int store_token_insert(long long *id, struct store *s, const struct token *t)
{
	int rc = store_exec(s, "INSERT INTO tokens (prefix, hash, role, agent, note, created) VALUES (?, ?, ?, ?, ?, ?)",
			    "sssssi", t->prefix, t->hash, t->role, t->agent, t->note, t->created);

	if (rc < 0)
		return rc;
	*id = store_last_id(s);
	return 0;
}

int store_token_by_prefix(struct token *t, struct store *s, const char *prefix)
{
	sqlite3_stmt *st;
	int rc;

	memset(t, 0, sizeof(*t));
	if ((rc = store_prepare(&st, s, "SELECT " TOKEN_COLS " FROM tokens WHERE prefix = ?", "s", prefix)))
		return rc;
	rc = store_step(s, st);
	if (rc == 1) {
		token_row(t, st);
		rc = 0;
	} else if (rc == 0) {
		rc = err_set(ERR_NOTFOUND, "no token has the prefix '%s'", prefix);
	}
	store_finish(s, st);
	return rc;
}

int store_tokens_list(struct token **out, size_t *n, struct store *s)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = store_prepare(&st, s, "SELECT " TOKEN_COLS " FROM tokens ORDER BY id", "")))
		return rc;
	while ((rc = store_step(s, st)) == 1) {
		*out = xgrow(*out, *n, &cap, sizeof(**out));
		token_row(&(*out)[(*n)++], st);
	}
	store_finish(s, st);
	if (rc < 0) {
		store_tokens_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int store_token_revoke(struct store *s, long long id, long long time)
{
	long long revoked;
	int rc = store_int(&revoked, s, "SELECT coalesce(revoked, 0) FROM tokens WHERE id = ?", "i", id);

	if (rc == ERR_NOTFOUND)
		return err_set(ERR_NOTFOUND, "token %lld does not exist (bisectctl token list shows them)", id);
	if (rc)
		return rc;
	if (revoked)
		return err_set(ERR_CONFLICT, "token %lld was revoked already", id);
	rc = store_exec(s, "UPDATE tokens SET revoked = ? WHERE id = ?", "ii", time, id);
	return rc < 0 ? rc : 0;
}

int store_token_used(struct store *s, long long id, long long time)
{
	int rc = store_exec(s, "UPDATE tokens SET last_used = ? WHERE id = ?", "ii", time, id);

	return rc < 0 ? rc : 0;
}

int store_tokens_live(long long *n, struct store *s, const char *role, const char *agent)
{
	if (agent)
		return store_int(n, s, "SELECT count(*) FROM tokens WHERE revoked IS NULL AND role = 'agent' "
				 "AND agent = ?", "s", agent);
	if (!role)
		return store_int(n, s, "SELECT count(*) FROM tokens WHERE revoked IS NULL", "");
	return store_int(n, s, "SELECT count(*) FROM tokens WHERE revoked IS NULL AND role = ?", "s", role);
}

int store_task_holder(char **agent, long long *attempt, struct store *s, long long id)
{
	sqlite3_stmt *st;
	int rc;

	*agent = NULL;
	*attempt = 0;
	if ((rc = store_prepare(&st, s, "SELECT t.attempt, CASE WHEN t.state = 'claimed' THEN a.name END "
				"FROM tasks t LEFT JOIN agents a ON a.id = t.agent_id WHERE t.id = ?", "i", id)))
		return rc;
	rc = store_step(s, st);
	if (rc == 1) {
		*attempt = sqlite3_column_int64(st, 0);
		*agent = store_col_text(st, 1);
		rc = 0;
	} else if (rc == 0) {
		rc = err_set(ERR_NOTFOUND, "task %lld does not exist", id);
	}
	store_finish(s, st);
	return rc;
}
