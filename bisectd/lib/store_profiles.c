/* store_profiles: the SQL of profiles and held verdicts (store_profiles.h). */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "store_internal.h"
#include "store_profiles.h"
#include "util.h"

#define PROFILE_COLS "p.id, p.job_id, p.task_id, p.idx, p.role, p.state, t.state, p.agent, p.error, p.report, " \
	"p.finished"

void store_profile_release(struct profile *p)
{
	if (!p)
		return;
	free(p->agent);
	free(p->error);
	free(p->report);
	memset(p, 0, sizeof(*p));
}

void store_profiles_free(struct profile *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		store_profile_release(&p[i]);
	free(p);
}

static void profile_row(struct profile *p, sqlite3_stmt *st)
{
	memset(p, 0, sizeof(*p));
	p->id = sqlite3_column_int64(st, 0);
	p->job = sqlite3_column_int64(st, 1);
	p->task = sqlite3_column_int64(st, 2);
	p->idx = sqlite3_column_int(st, 3);
	store_col_buf(p->role, sizeof(p->role), st, 4);
	store_col_buf(p->state, sizeof(p->state), st, 5);
	store_col_buf(p->task_state, sizeof(p->task_state), st, 6);
	p->agent = store_col_text(st, 7);
	p->error = store_col_text(st, 8);
	p->report = store_col_text(st, 9);
	p->finished = sqlite3_column_int64(st, 10);
}

int store_profile_hold(struct store *s, long long job, int culprit, const char *report, long long time)
{
	int rc = store_exec(s, "INSERT INTO profile_holds (job_id, culprit, report, created) VALUES (?, ?, ?, ?)",
			    "iisi", job, (long long)culprit, report, time);

	return rc < 0 ? rc : 0;
}

int store_profile_holds_before(long long **ids, long long **since, size_t *n, struct store *s, long long time)
{
	sqlite3_stmt *st;
	size_t cap = 0, cap2 = 0;
	int rc;

	*ids = *since = NULL;
	*n = 0;
	if ((rc = store_prepare(&st, s, "SELECT h.job_id, h.created FROM profile_holds h JOIN jobs j ON "
				"j.id = h.job_id WHERE h.created < ? AND j.state IN ('queued', 'running') "
				"ORDER BY h.job_id", "i", time)))
		return rc;
	while ((rc = store_step(s, st)) == 1) {
		*ids = xgrow(*ids, *n, &cap, sizeof(**ids));
		*since = xgrow(*since, *n, &cap2, sizeof(**since));
		(*ids)[*n] = sqlite3_column_int64(st, 0);
		(*since)[(*n)++] = sqlite3_column_int64(st, 1);
	}
	store_finish(s, st);
	if (rc < 0) {
		free(*ids);
		free(*since);
		*ids = *since = NULL;
		*n = 0;
	}
	return rc;
}

int store_profile_held(int *culprit, char **report, struct store *s, long long job)
{
	sqlite3_stmt *st;
	int rc;

	*report = NULL;
	if ((rc = store_prepare(&st, s, "SELECT culprit, report FROM profile_holds WHERE job_id = ?", "i", job)))
		return rc;
	rc = store_step(s, st);
	if (rc == 1) {
		*culprit = sqlite3_column_int(st, 0);
		*report = store_col_text(st, 1);
		rc = 0;
	} else if (rc == 0) {
		rc = ERR_NOTFOUND;
	}
	store_finish(s, st);
	return rc;
}

int store_profile_add(struct store *s, long long job, const char *role, int idx, long long task)
{
	int rc = store_exec(s, "INSERT INTO profiles (job_id, role, idx, task_id) VALUES (?, ?, ?, ?)", "isii",
			    job, role, (long long)idx, task);

	return rc < 0 ? rc : 0;
}

int store_profiles_of_job(struct profile **out, size_t *n, struct store *s, long long job)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = store_prepare(&st, s, "SELECT " PROFILE_COLS " FROM profiles p JOIN tasks t ON t.id = p.task_id "
				"WHERE p.job_id = ? ORDER BY p.role = 'culprit', p.id", "i", job)))
		return rc;
	while ((rc = store_step(s, st)) == 1) {
		*out = xgrow(*out, *n, &cap, sizeof(**out));
		profile_row(&(*out)[(*n)++], st);
	}
	store_finish(s, st);
	if (rc < 0) {
		store_profiles_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int store_profile_of_task(struct profile *out, struct store *s, long long task)
{
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = store_prepare(&st, s, "SELECT " PROFILE_COLS " FROM profiles p JOIN tasks t ON t.id = p.task_id "
				"WHERE p.task_id = ?", "i", task)))
		return rc;
	rc = store_step(s, st);
	if (rc == 1) {
		profile_row(out, st);
		rc = 0;
	} else if (rc == 0) {
		rc = ERR_NOTFOUND;
	}
	store_finish(s, st);
	return rc;
}

int store_profile_finish(struct store *s, long long task, const char *state, const char *agent,
			 const char *error, const char *report, long long time)
{
	int rc = store_exec(s, "UPDATE profiles SET state = ?, agent = ?, error = ?, report = ?, finished = ? "
			    "WHERE task_id = ?", "ssssii", state, agent, error, report, time, task);

	return rc < 0 ? rc : 0;
}
