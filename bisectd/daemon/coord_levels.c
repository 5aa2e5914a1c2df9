/*
 * coord_levels: a job's rows with each agent's level taken out. A
 * commit's pooled hmean mixes its agents' levels in the share of its runs
 * each took: in the demo, where lab2 read 12% below lab1 on every commit,
 * a parent with more of its runs on lab2 than the good end showed -3.57%
 * against it in the table though the two are the same code. With two
 * agents or more each row also gets the hmean and CV of its runs, each
 * divided by its agent's level against the reference (the agent with the
 * most runs), each level read from the commits the agent and the
 * reference both ran (bisect_agent_level()); the report's table shows
 * those, and the culprit's change against its parent is taken on them.
 *
 * Every engine step keeps the levels it saw with its decision
 * (coord_levels_now()), so a running job's commits are shown at one
 * agent's level too (coord_job_levels(): the job's page, bisectctl show,
 * the report of a job not finished, the charts), with the levels of its
 * last step. The rows come from each agent's running sums of its runs of
 * each commit (agent_sums, kept as uploads come), merged at the levels:
 * a job's page costs a row per commit and agent, not every run, which a
 * job polled while it grows to 200,000 runs would pay under the lock.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "coord_internal.h"
#include "err.h"
#include "jsonx.h"
#include "stats.h"
#include "util.h"

/*
 * A run's value divided by this is at the reference agent's level, by
 * rep's "agents" (none, or a level not known: 1, the run as measured).
 */
static double agent_scale(json_t *rep, long long agent)
{
	json_t *lv = json_object_get(jsonx_find(json_object_get(rep, "agents"), "id", agent), "level_pct");

	return json_is_number(lv) ? 1 + json_number_value(lv) / 100 : 1;
}

/* The successful runs of commit idx among runs[0..nr) at the reference's level into out (room for nr). */
static size_t scaled_values(double *out, const struct sample *runs, size_t nr, json_t *rep, int idx)
{
	size_t n = 0;

	for (size_t i = 0; i < nr; i++)
		if (runs[i].idx == idx && runs[i].value > 0)
			out[n++] = runs[i].value / agent_scale(rep, runs[i].agent);
	return n;
}

int coord_levels_values(double **v, size_t *n, struct coord *s, long long job, int idx, json_t *rep)
{
	struct sample *runs = NULL;
	size_t nr = 0;
	int rc;

	*v = NULL;
	*n = 0;
	/* One agent (or a policy without levels): the commit's own runs, not the whole job's. */
	if (json_array_size(json_object_get(rep, "agents")) == 0) {
		if ((rc = store_commit_values(v, n, s->st, job, idx)))
			return rc;
		*n = stats_valid(*v, *v, *n);
		return 0;
	}
	if ((rc = store_job_samples(&runs, &nr, s->st, job)))
		return rc;
	*v = xmalloc((nr + 1) * sizeof(double));
	*n = scaled_values(*v, runs, nr, rep, idx);
	free(runs);
	return 0;
}

/* A job's sums of each commit's runs by agent (agent_sums), by idx then agent. */
struct accs {
	struct agent_acc *a;
	size_t n;
};

/* Commit idx's runs at the reference agent's level: its agents' sums merged, each divided by its level. */
static struct stats_acc commit_at_levels(const struct accs *x, int idx, json_t *rep)
{
	struct stats_acc acc = { 0 };
	size_t lo = 0, hi = x->n;

	while (lo < hi) {  /* the first of commit idx */
		size_t mid = lo + (hi - lo) / 2;

		if (x->a[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < x->n && x->a[lo].idx == idx; lo++)
		stats_acc_merge_scaled(&acc, &x->a[lo].acc, agent_scale(rep, x->a[lo].agent));
	return acc;
}

/* hmean_ref, cv_ref (stddev / mean) and hcv_ref (mmtests' harmonic CoV) of a row with an idx. */
static void level_row(json_t *row, const struct accs *x, json_t *rep)
{
	json_t *idx = json_object_get(row, "idx");
	struct stats_acc acc;
	struct summary sum;

	if (!json_is_integer(idx))
		return;
	acc = commit_at_levels(x, (int)json_integer_value(idx), rep);
	if (acc.n == 0)
		return;
	stats_acc_summary(&sum, &acc);
	json_object_set_new(row, "hmean_ref", json_real(sum.hmean));
	json_object_set_new(row, "cv_ref", json_real(sum.cv));
	json_object_set_new(row, "hcv_ref", json_real(stats_acc_hmean_cv(&acc)));
}

json_t *coord_levels_now(struct coord *s, long long job, const struct bisect *b)
{
	long long ref = bisect_reference_agent(b), *ids = NULL;
	json_t *arr;
	size_t n = 0;

	if (ref < 0 || store_job_agent_ids(&ids, &n, s->st, job))
		return NULL;
	arr = json_array();
	for (size_t i = 0; i < n; i++) {
		double level = bisect_agent_level(b, ids[i]);
		json_t *a = json_object();

		json_object_set_new(a, "id", json_integer(ids[i]));
		/* null: not known yet (the agent and the reference ran no commit, nor side of the split, in common) */
		json_object_set_new(a, "level_pct", isfinite(level) ? json_real(100 * level) : json_null());
		json_object_set_new(a, "reference", json_boolean(ids[i] == ref));
		json_array_append_new(arr, a);
	}
	free(ids);
	return arr;
}

/*
 * "agents": [{id, name, runs, level_pct, reference}] by name, one an agent
 * with successful runs of the job, its level from levels (an agent that
 * is not there, one whose first runs came after the step: null, not known).
 */
static int agents_json(json_t **out, struct coord *s, const struct accs *x, json_t *levels)
{
	json_t *arr = json_array();
	int rc = 0;

	for (size_t i = 0; i < x->n && rc == 0; i++) {
		long long id = x->a[i].agent, n = 0;
		json_t *a, *y, *lv = jsonx_find(levels, "id", id);
		char *name = NULL;
		size_t at = 0;
		int seen = 0;

		for (size_t e = 0; e < i && !seen; e++)
			seen = x->a[e].agent == id && x->a[e].acc.n > 0;
		if (seen || x->a[i].acc.n == 0)
			continue;
		for (size_t e = i; e < x->n; e++)
			n += x->a[e].agent == id ? (long long)x->a[e].acc.n : 0;
		if (id > 0 && (rc = store_agent_name(&name, s->st, id)) == ERR_NOTFOUND) {
			err_clear();
			rc = 0;
		}
		a = json_object();
		json_object_set_new(a, "id", json_integer(id));
		json_object_set_new(a, "name", name ? json_string(name) : json_null());
		json_object_set_new(a, "runs", json_integer(n));
		json_object_set_new(a, "level_pct", json_is_number(json_object_get(lv, "level_pct")) ?
				    json_real(json_number_value(json_object_get(lv, "level_pct"))) :
				    json_is_true(json_object_get(lv, "reference")) ? json_real(0) : json_null());
		json_object_set_new(a, "reference", json_boolean(json_is_true(json_object_get(lv, "reference"))));
		json_array_foreach(arr, at, y)
			if (name && json_string_value(json_object_get(y, "name")) &&
			    strcmp(name, json_string_value(json_object_get(y, "name"))) < 0)
				break;
		json_array_insert_new(arr, at, a);
		free(name);
	}
	if (rc)
		json_decref(arr);
	else
		*out = arr;
	return rc;
}

int coord_report_levels(struct coord *s, struct jobctx *c, const struct bisect *b, json_t *rep)
{
	static const char *const rows[] = { "good", "parent", "culprit", "bad" };
	struct sample *runs = NULL;
	struct accs x = { NULL, 0 };
	json_t *agents = NULL, *levels, *r, *par = json_object_get(rep, "parent"), *cul = json_object_get(rep, "culprit");
	double *v = NULL, *w = NULL;
	size_t i, nr = 0;
	int rc;

	if (!(levels = coord_levels_now(s, c->id, b)))
		return 0;
	if ((rc = store_job_agent_accs(&x.a, &x.n, s->st, c->id)) || (rc = agents_json(&agents, s, &x, levels)))
		goto out;
	json_object_set_new(rep, "agents", agents);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (json_is_object(json_object_get(rep, rows[i])))
			level_row(json_object_get(rep, rows[i]), &x, rep);
	json_array_foreach(json_object_get(rep, "top"), i, r)
		level_row(r, &x, rep);
	json_array_foreach(json_object_get(rep, "range"), i, r)
		level_row(r, &x, rep);
	/* The culprit against its parent, on the same runs at one level (a rank test needs the runs). */
	if (json_is_number(json_object_get(par, "hmean_ref")) && json_is_number(json_object_get(cul, "hmean_ref"))) {
		size_t np, nc;

		if ((rc = store_job_samples(&runs, &nr, s->st, c->id)))
			goto out;
		v = xmalloc((nr + 1) * sizeof(double));
		w = xmalloc((nr + 1) * sizeof(double));
		np = scaled_values(v, runs, nr, rep, (int)json_integer_value(json_object_get(par, "idx")));
		nc = scaled_values(w, runs, nr, rep, (int)json_integer_value(json_object_get(cul, "idx")));
		json_object_set_new(rep, "change_pct", json_real(stats_change_pct(
			json_number_value(json_object_get(par, "hmean_ref")), json_number_value(json_object_get(cul, "hmean_ref")))));
		json_object_set_new(rep, "p_value", json_real(stats_mann_whitney(w, nc, v, np, ALT_TWO_SIDED)));
	}
out:
	json_decref(levels);
	free(x.a);
	free(v);
	free(w);
	free(runs);
	return rc;
}

/*
 * The job's agents with their levels into *agents (NULL: fewer than two),
 * and its sums into *x when the levels came from a decision (else x->a
 * stays NULL): a job of one agent costs a query.
 */
static int job_agents(json_t **agents, struct accs *x, struct coord *s, long long id, json_t *rep)
{
	json_t *levels = NULL;
	int rc = 0;

	*agents = NULL;
	x->a = NULL;
	x->n = 0;
	/* An ended job's report has the levels of its last step; a running job's last decision keeps them. */
	if (json_array_size(json_object_get(rep, "agents")) >= 2)
		*agents = json_incref(json_object_get(rep, "agents"));
	else if ((rc = store_job_levels_doc(&levels, s->st, id)) || !levels)
		return rc;
	else if ((rc = store_job_agent_accs(&x->a, &x->n, s->st, id)) == 0 && (rc = agents_json(agents, s, x, levels)))
		*agents = NULL;
	json_decref(levels);
	if (*agents && json_array_size(*agents) < 2) {
		json_decref(*agents);
		*agents = NULL;
	}
	return rc;
}

int coord_job_agents(json_t **agents, struct coord *s, long long id)
{
	struct accs x = { NULL, 0 };
	json_t *doc = NULL;
	int rc;

	*agents = NULL;
	if ((rc = store_job_doc(&doc, s->st, id)) == 0)
		rc = job_agents(agents, &x, s, id, json_object_get(doc, "report"));
	json_decref(doc);
	free(x.a);
	return rc;
}

int coord_job_levels(struct coord *s, long long id, json_t *j)
{
	struct accs x = { NULL, 0 };
	json_t *agents = NULL, *r;
	size_t i;
	int rc;

	if ((rc = job_agents(&agents, &x, s, id, json_object_get(j, "report"))) || !agents)
		goto out;
	if (!x.a && (rc = store_job_agent_accs(&x.a, &x.n, s->st, id)))
		goto out;
	json_object_set(j, "agents", agents);
	json_array_foreach(json_object_get(j, "commits"), i, r)
		level_row(r, &x, j);
out:
	json_decref(agents);
	free(x.a);
	return rc;
}
