/*
 * coord_split: the walking skeleton's policy ("split"), kept as a job
 * option to compare the engine against: check the ends with a
 * Mann-Whitney test, call each measured commit good- or bad-like by where
 * it sits between them, and split the candidates that are left by
 * ancestor count (policy.c), one commit per idle agent of the pool.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"
#include "err.h"
#include "policy.h"
#include "util.h"

#define ALPHA 0.01         /* the ends must differ at this level */
#define MIN_EFFECT 0.01    /* and by at least this much */
#define END_BATCHES 4      /* batches at each end before giving up on a difference */
#define MID_BATCHES 3      /* batches at a commit before a forced call */

/* Is the bad end worse than the good end, significantly and by enough? */
static int ends_step(struct coord *s, struct jobctx *c, int *reproduced)
{
	int bad = c->n - 1, rc;
	double change, p, worse;
	json_t *rep;

	*reproduced = 0;
	for (int e = 0; e <= bad; e += bad) {
		if (c->cls[e] == CLASS_SKIPPED)
			return coord_fail_end(s, c, e);
	}
	if (c->outstanding[0] || c->outstanding[bad])
		return 0;
	if ((rc = coord_compare(&change, &p, s, c, 0, bad, c->higher ? ALT_LESS : ALT_GREATER)))
		return rc;
	worse = c->higher ? -change : change;
	if (p < ALPHA && worse >= MIN_EFFECT) {
		*reproduced = 1;
		if (c->cls[0] != CLASS_GOOD) {
			if ((rc = coord_set_commit_state(s, c, 0, "good")) || (rc = coord_set_commit_state(s, c, bad, "bad")))
				return rc;
			rc = coord_event(s, c->id, "reproduced", "bad end is %.2f%% worse than good end "
				   "(hmean %.2f vs %.2f, p=%.4f, n=%zu/%zu)", worse * 100, c->sum[bad].hmean,
				   c->sum[0].hmean, p, c->sum[bad].n, c->sum[0].n);
		}
		return rc;
	}
	if ((int)c->sum[0].n < END_BATCHES * c->runs || (int)c->sum[bad].n < END_BATCHES * c->runs) {
		if ((rc = coord_event(s, c->id, "ends", "no clear difference yet (%.2f%% worse, p=%.4f): "
				"measuring both ends again", worse * 100, p)))
			return rc;
		if ((rc = coord_queue_task(s, c, 0)))
			return rc;
		return coord_queue_task(s, c, bad);
	}
	rep = json_pack("{s:s, s:o, s:o, s:f, s:f, s:f, s:f}", "verdict", "not-reproduced",
			"good", coord_commit_json(s, c, 0), "bad", coord_commit_json(s, c, bad),
			"change_pct", change * 100, "p_value", p, "alpha", ALPHA, "min_effect_pct", MIN_EFFECT * 100);
	rc = coord_finish(s, c, "not-reproduced", -1, rep, NULL);
	json_decref(rep);
	return rc;
}

/* Calls measured commits good-like or bad-like against the two ends. */
static int classify_step(struct coord *s, struct jobctx *c)
{
	double lg = log(c->sum[0].hmean), lb = log(c->sum[c->n - 1].hmean);
	int rc = 0;

	for (int i = 1; i < c->n - 1 && rc == 0; i++) {
		double t;
		const char *call = NULL;

		if (c->cls[i] != CLASS_UNKNOWN || c->outstanding[i] || c->sum[i].n + c->sum[i].failures == 0)
			continue;
		if (c->sum[i].n == 0) {
			if ((rc = coord_set_commit_state(s, c, i, "skipped")))
				break;
			rc = coord_event(s, c->id, "skip", "commit %d: every run failed", i);
			continue;
		}
		/* Where the commit sits between the ends on a log scale: 0 good, 1 bad. */
		t = (log(c->sum[i].hmean) - lg) / (lb - lg);
		if (t < 0.35)
			call = "good";
		else if (t > 0.65)
			call = "bad";
		else if ((int)c->sum[i].n < MID_BATCHES * c->runs) {
			rc = coord_event(s, c->id, "unclear", "commit %d at %.2f between good and bad "
				   "(hmean %.2f, n=%zu): more runs", i, t, c->sum[i].hmean, c->sum[i].n);
			if (rc == 0)
				rc = coord_queue_task(s, c, i);
			continue;
		} else
			call = t < 0.5 ? "good" : "bad";
		if ((rc = coord_set_commit_state(s, c, i, call)))
			break;
		rc = coord_event(s, c->id, "decision", "commit %d is %s-like: hmean %.2f (%.4f), %.2f of the way "
			   "from good to bad, n=%zu", i, call, c->sum[i].hmean, c->sum[i].cv, t, c->sum[i].n);
	}
	return rc;
}

static int report_culprit(struct coord *s, struct jobctx *c, int culprit)
{
	int parent = coord_parent_of(c, culprit), rc;
	double change, p;
	json_t *rep;

	if ((rc = coord_compare(&change, &p, s, c, parent, culprit, ALT_TWO_SIDED)))
		return rc;
	rep = json_pack("{s:s, s:o, s:o, s:f, s:f, s:o, s:o}", "verdict", "culprit",
			"culprit", coord_commit_json(s, c, culprit), "parent", coord_commit_json(s, c, parent),
			"change_pct", change * 100, "p_value", p,
			"good", coord_commit_json(s, c, 0), "bad", coord_commit_json(s, c, c->n - 1));
	rc = coord_event(s, c->id, "culprit", "commit %d: %+.2f%% against its parent (p=%.4f)",
		   culprit, change * 100, p);
	if (rc == 0)
		rc = coord_finish_culprit(s, c, culprit, rep);
	json_decref(rep);
	return rc;
}

static int report_range(struct coord *s, struct jobctx *c, const unsigned char *in_c)
{
	json_t *rep, *range = json_array();
	int rc;

	for (int i = 0; i < c->n; i++)
		if (in_c[i])
			json_array_append_new(range, coord_commit_json(s, c, i));
	rep = json_pack("{s:s, s:o, s:o, s:o}", "verdict", "range", "range", range,
			"good", coord_commit_json(s, c, 0), "bad", coord_commit_json(s, c, c->n - 1));
	rc = coord_finish(s, c, "done", -1, rep, NULL);
	json_decref(rep);
	return rc;
}

/*
 * The walking skeleton's policy ("split"), kept as a job option to compare
 * against: check the ends, call what was measured, and either report or
 * queue the next commits, one per live agent of the pool.
 */
static int split_step(struct coord *s, struct jobctx *c)
{
	unsigned char *in_c = NULL, *busy = NULL;
	const struct conf_pool *pool;
	int rc, reproduced, nr_c, k, *picks = NULL;

	if ((rc = ends_step(s, c, &reproduced)) || !reproduced)
		goto out;
	if ((rc = classify_step(s, c)))
		goto out;
	in_c = xcalloc((size_t)c->n, 1);
	nr_c = policy_candidates(in_c, c->pol, c->cls);
	if (nr_c == 0) {
		rc = coord_fail_job(s, c, "the measurements contradict each other: no commit can be the culprit");
		goto out;
	}
	if (nr_c == 1) {
		int culprit = 0, parent;

		while (!in_c[culprit])
			culprit++;
		parent = coord_parent_of(c, culprit);
		/* The report shows the culprit beside its parent: measure it if no one has. */
		if (c->sum[parent].n == 0 && c->cls[parent] != CLASS_SKIPPED) {
			if (!c->outstanding[parent])
				rc = coord_queue_task(s, c, parent);
			goto out;
		}
		rc = report_culprit(s, c, culprit);
		goto out;
	}
	busy = xcalloc((size_t)c->n, 1);
	k = 0;
	for (int i = 0; i < c->n; i++) {
		busy[i] = c->outstanding[i] > 0;
		k += c->outstanding[i];
	}
	pool = conf_pool_find(s->conf, c->job.pool);
	k = (pool ? coord_live_agents(s, pool) : 1) - k;
	if (k <= 0)
		goto out;
	picks = xmalloc((size_t)k * sizeof(int));
	k = policy_next(picks, c->pol, c->cls, busy, k);
	if (k == 0) {
		int pending = 0;

		for (int i = 0; i < c->n; i++)
			pending += c->outstanding[i];
		if (!pending)  /* only skipped commits are left between the calls */
			rc = report_range(s, c, in_c);
		goto out;
	}
	for (int i = 0; i < k && rc == 0; i++) {
		rc = coord_event(s, c->id, "next", "measuring commit %d (%d candidates left)", picks[i], nr_c);
		if (rc == 0)
			rc = coord_queue_task(s, c, picks[i]);
	}
out:
	free(picks);
	free(in_c);
	free(busy);
	return rc;
}


const struct policy_ops policy_split = {
	.name = "split",
	.step = split_step,
};
