/*
 * coord_report: the text report of an ended job (GET /jobs/ID/report),
 * from the job as the API shows it: the ends, the verdict and what it is
 * read with (effect, noise, budgets), or what an undecided job does say.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"
#include "err.h"
#include "jsonx.h"
#include "util.h"

/* A row's hmean and CV: at the reference agent's level where the report has one (coord_levels.c). */
static double row_hmean(json_t *c)
{
	json_t *h = json_object_get(c, "hmean_ref");

	return json_number_value(json_is_number(h) ? h : json_object_get(c, "hmean"));
}

static double row_cv(json_t *c)
{
	json_t *v = json_object_get(c, "cv_ref");

	return json_number_value(json_is_number(v) ? v : json_object_get(c, "cv"));
}

/* A row of the table: HARMEAN (CV) and n, and the change against base's hmean (0: none shown). */
static void text_commit(struct sbuf *sb, const char *label, json_t *c, double base)
{
	const char *sha = json_string_value(json_object_get(c, "sha"));
	const char *subject = json_string_value(json_object_get(c, "subject"));
	double h = row_hmean(c);

	if (!json_is_object(c))
		return;
	if (!json_is_number(json_object_get(c, "hmean"))) {
		sbuf_addf(sb, "  %-8s %.12s  %14s %-8s  %8s  n=%-3d %s\n", label, sha ? sha : "?", "-", "", "", 0,
			  subject ? subject : "");
		return;
	}
	if (json_integer_value(json_object_get(c, "n")) < 2)  /* one run: no spread, not a CV of 0 */
		sbuf_addf(sb, "  %-8s %.12s  %14.2f %-8s  ", label, sha ? sha : "?", h, "(-)");
	else
		sbuf_addf(sb, "  %-8s %.12s  %14.2f (%.4f)  ", label, sha ? sha : "?", h, row_cv(c));
	if (base > 0)
		sbuf_addf(sb, "%+7.2f%%", stats_change_pct(base, h));
	else
		sbuf_addf(sb, "%8s", "");
	sbuf_addf(sb, "  n=%-3lld %s\n", json_integer_value(json_object_get(c, "n")), subject ? subject : "");
}

static void text_header(struct sbuf *sb)
{
	sbuf_addf(sb, "  %-8s %-12s  %14s %-8s  %8s  %-5s %s\n", "", "commit", "HARMEAN", "(CV)", "change", "n",
		  "subject");
}

/* What the CV column is, and the change column against what. */
static void text_legend(struct sbuf *sb, enum report_cv cv)
{
	if (cv == REPORT_CV_HMEAN)
		sbuf_adds(sb, "CV: mmtests' harmonic CoV (HStddev / HARMEAN: the reciprocals' spread, delta method, "
			  "divisor n)\n");
	else
		sbuf_adds(sb, "CV: stddev / arithmetic mean of the runs (--cv hmean: mmtests' harmonic CoV)\n");
	sbuf_adds(sb, "change: HARMEAN against the good end's\n");
}

/*
 * The agents' levels, where a report has two agents or more: what their
 * runs of one commit read against the reference's, and that the table
 * is of the runs at the reference's level.
 */
static void text_agents(struct sbuf *sb, json_t *rep)
{
	json_t *agents = json_object_get(rep, "agents"), *a;
	const char *ref = NULL;
	size_t i;

	if (json_array_size(agents) < 2)
		return;
	json_array_foreach(agents, i, a)
		if (json_is_true(json_object_get(a, "reference")))
			ref = json_string_value(json_object_get(a, "name"));
	sbuf_adds(sb, "agents:");
	json_array_foreach(agents, i, a) {
		const char *name = json_string_value(json_object_get(a, "name"));

		sbuf_addf(sb, "%s %s (%lld runs", i ? "," : "", name ? name : "?",
			  json_integer_value(json_object_get(a, "runs")));
		if (json_is_true(json_object_get(a, "reference")))
			sbuf_adds(sb, ", the reference)");
		else if (json_is_number(json_object_get(a, "level_pct")))
			sbuf_addf(sb, ", %+.2f%%)", json_number_value(json_object_get(a, "level_pct")));
		else
			sbuf_adds(sb, ", level not known yet: no commit run by both, its runs as measured)");
	}
	sbuf_addf(sb, "\n  each agent's runs of a commit read that much against %s's; HARMEAN, CV and the changes are "
		  "of the runs at %s's level\n", ref ? ref : "the reference", ref ? ref : "the reference");
}

/* Replaces a commit's "cv" by mmtests' harmonic CoV of its runs. Under s->lock. */
static void set_hcv(struct coord *s, long long id, json_t *c)
{
	json_t *idx = json_object_get(c, "idx");
	double *v = NULL;
	size_t n = 0;

	if (!json_is_integer(idx) || !json_is_number(json_object_get(c, "hmean")))
		return;
	if (json_is_number(json_object_get(c, "hcv_ref")))
		json_object_set(c, "cv_ref", json_object_get(c, "hcv_ref"));
	if (store_commit_values(&v, &n, s->st, id, (int)json_integer_value(idx)) == 0)
		json_object_set_new(c, "cv", json_real(stats_hmean_cv(v, n)));
	free(v);
}

/* Every commit a report or a progress text shows, with its CV as asked. Under s->lock. */
static void set_cvs(struct coord *s, long long id, json_t *j, enum report_cv cv)
{
	static const char *const rows[] = { "good", "parent", "culprit", "bad" };
	json_t *rep = json_object_get(j, "report"), *x;
	size_t i;

	if (cv != REPORT_CV_HMEAN)
		return;
	for (i = 0; rep && i < sizeof(rows) / sizeof(rows[0]); i++)
		set_hcv(s, id, json_object_get(rep, rows[i]));
	json_array_foreach(json_object_get(rep, "top"), i, x)
		set_hcv(s, id, x);
	json_array_foreach(json_object_get(j, "commits"), i, x)
		set_hcv(s, id, x);
}

/* "1h05m", "12m30s", "45s": a budget of wall time. */
static void text_seconds(struct sbuf *sb, long long t)
{
	if (t >= 3600)
		sbuf_addf(sb, "%lldh%02lldm", t / 3600, t % 3600 / 60);
	else if (t >= 60)
		sbuf_addf(sb, "%lldm%02llds", t / 60, t % 60);
	else
		sbuf_addf(sb, "%llds", t);
}

/*
 * The numbers an engine report is read with, whatever its verdict: the
 * effect with its 95% interval, the noise per task and per run, and what
 * the budgets allowed and used.
 */
/* A change in the slow runs only: the job bisected on their share. */
static void text_slow(struct sbuf *sb, json_t *rep)
{
	if (json_is_number(json_object_get(rep, "slow_bad_pct")))
		sbuf_addf(sb, "slow runs: the change is in some runs only, far below the rest: %.0f%% of the bad group's "
			  "runs are slow, %.0f%% of the good group's; the job bisected on that share, and its confirmation "
			  "is a sign test of the interleaved pairs' slow runs\n",
			  json_number_value(json_object_get(rep, "slow_bad_pct")),
			  json_number_value(json_object_get(rep, "slow_good_pct")));
}

static void text_numbers(struct sbuf *sb, json_t *j, json_t *rep)
{
	json_t *p = json_object_get(j, "progress");
	double tcv = json_number_value(json_object_get(rep, "task_cv"));
	double rcv = json_number_value(json_object_get(rep, "run_cv"));

	text_slow(sb, rep);
	/* An interval of no width is an effect not estimated yet (the ends still being measured). */
	if (json_number_value(json_object_get(rep, "effect_lo_pct")) < json_number_value(json_object_get(rep, "effect_hi_pct")))
		sbuf_addf(sb, "effect: %+.2f%% (95%% interval %+.2f%% to %+.2f%%), the bad group against the good "
			  "on the most probable split\n", json_number_value(json_object_get(rep, "effect_pct")),
			  json_number_value(json_object_get(rep, "effect_lo_pct")),
			  json_number_value(json_object_get(rep, "effect_hi_pct")));
	if (rcv > 0)
		sbuf_addf(sb, "noise: %.2f%% between the tasks of a commit%s, %.2f%% between the runs of a task\n",
			  100 * tcv, tcv > 0 ? "" : " (not seen yet: two tasks of a commit needed)", 100 * rcv);
	sbuf_addf(sb, "budget: %lld runs used", json_integer_value(json_object_get(p, "samples")));
	if (json_is_integer(json_object_get(rep, "budget_runs")))
		sbuf_addf(sb, " of %lld%s", json_integer_value(json_object_get(rep, "budget_runs")),
			  json_integer_value(json_object_get(j, "budget_runs")) > 0 ? "" : " (derived)");
	sbuf_adds(sb, "; ");
	text_seconds(sb, json_integer_value(json_object_get(p, "elapsed_seconds")));
	sbuf_adds(sb, " of wall time used");
	if (json_is_integer(json_object_get(rep, "budget_seconds"))) {
		sbuf_adds(sb, " of ");
		text_seconds(sb, json_integer_value(json_object_get(rep, "budget_seconds")));
		if (json_integer_value(json_object_get(j, "budget_seconds")) <= 0)
			sbuf_adds(sb, " (derived)");
	}
	sbuf_adds(sb, "\n");
}

/*
 * Where the most probable commits listed share their p with more commits
 * than are listed (no run tells them apart yet: engine "alike"), says so
 * once for each such p: the rows are some of those, and any of the rest
 * is as likely.
 */
static void text_alike(struct sbuf *sb, json_t *top, int digits)
{
	json_t *x;
	size_t i;

	json_array_foreach(top, i, x) {
		int first;
		size_t shown = jsonx_count_near(top, i, "p", &first);
		long long alike = json_integer_value(json_object_get(x, "alike"));

		if (first && alike > (long long)shown)
			sbuf_addf(sb, "%lld commits hold p=%.*f alike (no run tells them apart yet): %zu of them are shown\n",
				  alike, digits, json_number_value(json_object_get(x, "p")), shown);
	}
}

/* An undecided job: no answer, and what the data do say. */
static void text_undecided(struct sbuf *sb, json_t *j, json_t *rep, double base)
{
	json_t *top = json_object_get(rep, "top"), *x;
	json_t *fc = json_object_get(rep, "failed_confirm");
	const char *why = json_string_value(json_object_get(rep, "why"));
	size_t i;

	sbuf_addf(sb, "undecided: no commit holds the asked confidence (%.4g) within the budget\nwhy: %s\n",
		  json_number_value(json_object_get(j, "confidence")), why ? why : "");
	if (json_array_size(top) > 0) {
		sbuf_adds(sb, "the most probable commits (p: the posterior probability that it is the culprit):\n");
		sbuf_addf(sb, "  %-8s %-12s  %14s %-8s  %8s  %-5s %s\n", "p", "commit", "HARMEAN", "(CV)", "change",
			  "n", "subject");
		json_array_foreach(top, i, x) {
			char label[16];

			snprintf(label, sizeof(label), "%.4f", json_number_value(json_object_get(x, "p")));
			text_commit(sb, label, x, base);
		}
		text_alike(sb, top, 4);
	}
	text_slow(sb, rep);
	if (json_is_integer(fc)) {
		const char *sha = json_string_value(json_object_get(jsonx_find(json_object_get(j, "commits"), "idx",
									     json_integer_value(fc)), "sha"));

		sbuf_addf(sb, "commit %lld (%.12s) failed its confirmation against its parent: it is not the answer\n",
			  json_integer_value(fc), sha ? sha : "?");
	}
	text_numbers(sb, j, rep);
	if (json_is_integer(json_object_get(rep, "more_runs")))
		sbuf_addf(sb, "about %lld more runs would decide it (or a quieter lab)\n",
			  json_integer_value(json_object_get(rep, "more_runs")));
	else
		sbuf_adds(sb, "no estimate of the runs that would decide it: the effect does not show in the data\n");
	if (json_is_true(json_object_get(rep, "resumable")))
		sbuf_addf(sb, "to run on with more runs, every run kept: bisectctl resume %lld [--more-runs N]\n",
			  json_integer_value(json_object_get(j, "id")));
}

/* The first line: the range, the workload and what is better. */
static void text_title(struct sbuf *sb, json_t *j, long long id)
{
	sbuf_addf(sb, "bisectd job %lld: %s %s..%s, workload %s (%s, %s is better)\n", id,
		  json_string_value(json_object_get(j, "repo")), json_string_value(json_object_get(j, "good_ref")),
		  json_string_value(json_object_get(j, "bad_ref")), json_string_value(json_object_get(j, "workload")),
		  json_string_value(json_object_get(j, "unit")), json_string_value(json_object_get(j, "direction")));
	if (json_is_string(json_object_get(j, "append")))
		sbuf_addf(sb, "kernel command line + \"%s\"\n", json_string_value(json_object_get(j, "append")));
	if (json_array_size(json_object_get(j, "config"))) {
		json_t *x;
		size_t i;

		sbuf_adds(sb, "kernel config +");
		json_array_foreach(json_object_get(j, "config"), i, x)
			sbuf_addf(sb, " %s", json_string_value(x));
		sbuf_adds(sb, "\n");
	}
}

/*
 * A queued or running job has no verdict: what is known so far. The ends
 * as measured, the engine's most probable commits at its last step and
 * why it asked for what it did.
 */
static void text_running(struct sbuf *sb, json_t *j, long long id, enum report_cv cv)
{
	json_t *p = json_object_get(j, "progress"), *commits = json_object_get(j, "commits");
	json_t *decs = json_object_get(j, "decisions"), *last, *good, *x;
	long long bad_idx = json_integer_value(json_object_get(j, "nr_commits"));
	double base;
	size_t i;

	text_title(sb, j, id);
	sbuf_addf(sb, "not finished: job %lld is %s, no verdict yet; what is known so far:\n", id,
		  json_string_value(json_object_get(j, "state")));
	sbuf_addf(sb, "%lld candidates, %lld commits measured, %lld runs in %lld of %lld tasks\n\n", bad_idx,
		  json_integer_value(json_object_get(p, "measured")), json_integer_value(json_object_get(p, "samples")),
		  json_integer_value(json_object_get(p, "tasks_done")),
		  json_integer_value(json_object_get(p, "tasks_total")));
	good = jsonx_find(commits, "idx", 0);
	base = row_hmean(good);
	text_header(sb);
	text_commit(sb, "good", good, 0);
	last = json_array_get(decs, json_array_size(decs) - 1);
	json_array_foreach(json_object_get(last, "top"), i, x) {
		json_t *c = jsonx_find(commits, "idx", json_integer_value(json_object_get(x, "idx")));
		char label[16];

		/* A probable commit not measured yet: its id and subject (coord_job_json()), no numbers. */
		if (!c && json_is_string(json_object_get(x, "sha")))
			c = x;
		if (!c || json_integer_value(json_object_get(c, "idx")) == bad_idx)
			continue;
		snprintf(label, sizeof(label), "p=%.3f", json_number_value(json_object_get(x, "p")));
		text_commit(sb, label, c, base);
	}
	text_commit(sb, "bad", jsonx_find(commits, "idx", bad_idx), base);
	sbuf_adds(sb, "\n");
	text_legend(sb, cv);
	text_agents(sb, j);
	if (json_array_size(json_object_get(last, "top"))) {
		sbuf_adds(sb, "p: the posterior probability that the commit is the culprit, at the engine's last step\n");
		text_alike(sb, json_object_get(last, "top"), 3);
	}
	if (last)
		sbuf_addf(sb, "the engine's last step (%s): %s\n", json_string_value(json_object_get(last, "state")),
			  json_string_value(json_object_get(last, "why")) ? json_string_value(json_object_get(last, "why")) : "");
}

int coord_job_report_text(char **out, struct coord *s, long long id, enum report_cv cv)
{
	struct sbuf sb = SBUF_INIT;
	json_t *j, *rep, *x;
	const char *verdict, *state;
	double base;
	int rc = 0;

	*out = NULL;
	pthread_mutex_lock(&s->lock);
	j = coord_job_json(s, id, 1);
	if (j)
		set_cvs(s, id, j, cv);
	pthread_mutex_unlock(&s->lock);
	if (!j)
		return err_set(ERR_NOTFOUND, "job %lld does not exist", id);
	rep = json_object_get(j, "report");
	state = json_string_value(json_object_get(j, "state"));
	if (!rep && state && (!strcmp(state, "queued") || !strcmp(state, "running"))) {
		text_running(&sb, j, id, cv);
		*out = sbuf_detach(&sb);
		goto out;
	}
	if (!rep) {
		rc = err_set(ERR_CONFLICT, "job %lld has no report: it is %s%s%s", id, state,
			     json_is_string(json_object_get(j, "error")) ? ": " : "",
			     json_is_string(json_object_get(j, "error")) ?
			     json_string_value(json_object_get(j, "error")) : "");
		goto out;
	}
	verdict = json_string_value(json_object_get(rep, "verdict"));
	x = json_object_get(j, "progress");
	text_title(&sb, j, id);
	sbuf_addf(&sb, "%lld candidates, %lld commits measured, %lld runs in %lld tasks\n\n",
		  json_integer_value(json_object_get(j, "nr_commits")),
		  json_integer_value(json_object_get(x, "measured")),
		  json_integer_value(json_object_get(x, "samples")),
		  json_integer_value(json_object_get(x, "tasks_done")));
	base = row_hmean(json_object_get(rep, "good"));
	text_header(&sb);
	text_commit(&sb, "good", json_object_get(rep, "good"), 0);
	if (!strcmp(verdict, "culprit")) {
		text_commit(&sb, "parent", json_object_get(rep, "parent"), base);
		text_commit(&sb, "culprit", json_object_get(rep, "culprit"), base);
	}
	text_commit(&sb, "bad", json_object_get(rep, "bad"), base);
	sbuf_adds(&sb, "\n");
	text_legend(&sb, cv);
	text_agents(&sb, rep);
	sbuf_adds(&sb, "\n");
	if (!strcmp(verdict, "culprit")) {
		json_t *c = json_object_get(rep, "culprit");

		sbuf_addf(&sb, "culprit: %s %s\n", json_string_value(json_object_get(c, "sha")),
			  json_string_value(json_object_get(c, "subject")));
		sbuf_addf(&sb, "change against its parent: %+.2f%% (Mann-Whitney p=%.4f on their own %lld+%lld runs)\n",
			  json_number_value(json_object_get(rep, "change_pct")),
			  json_number_value(json_object_get(rep, "p_value")),
			  json_integer_value(json_object_get(json_object_get(rep, "parent"), "n")),
			  json_integer_value(json_object_get(c, "n")));
		if (json_is_number(json_object_get(rep, "posterior")))
			sbuf_addf(&sb, "confidence: %.4f (the asked confidence: the runs show two modes, so the posterior's "
				  "%.4f is not claimed)\n  a change that shows in some runs only: the posterior assumes one "
				  "level a group; the interleaved pairs passed a sign-flip test too\n",
				  json_number_value(json_object_get(rep, "confidence")),
				  json_number_value(json_object_get(rep, "posterior")));
		else if (json_is_number(json_object_get(rep, "confidence")))
			sbuf_addf(&sb, "confidence: %.4f (posterior probability that this commit is the culprit, "
				  "from all %lld runs)\n", json_number_value(json_object_get(rep, "confidence")),
				  json_integer_value(json_object_get(x, "samples")));
	} else if (!strcmp(verdict, "range")) {
		size_t i;

		sbuf_adds(&sb, "the culprit is one of these (the others could not be measured):\n");
		json_array_foreach(json_object_get(rep, "range"), i, x)
			sbuf_addf(&sb, "  %.12s %6.4f %s %s\n", json_string_value(json_object_get(x, "sha")),
				  json_number_value(json_object_get(x, "p")),
				  json_string_value(json_object_get(x, "state")),
				  json_string_value(json_object_get(x, "subject")));
	} else if (!strcmp(verdict, "undecided")) {
		text_undecided(&sb, j, rep, base);
	} else if (json_is_number(json_object_get(rep, "effect_lo_pct"))) {
		/* The engine's not-reproduced is an equivalence, not a difference that failed to show. */
		sbuf_addf(&sb, "not reproduced: the bad end was shown not to be worse by %.1f%% or more (the "
			  "job's min_effect), at confidence %.4g: the bad end is %+.2f%% against the good end "
			  "(95%% interval %+.2f%% to %+.2f%%, p=%.4f)\n",
			  json_number_value(json_object_get(rep, "min_effect_pct")),
			  json_number_value(json_object_get(j, "confidence")),
			  json_number_value(json_object_get(rep, "change_pct")),
			  json_number_value(json_object_get(rep, "effect_lo_pct")),
			  json_number_value(json_object_get(rep, "effect_hi_pct")),
			  json_number_value(json_object_get(rep, "p_value")));
		if (json_is_number(json_object_get(rep, "rare_share_pct")))
			sbuf_addf(&sb, "a change that shows in fewer than %.0f%% of the runs (an intermittent one) could "
				  "have missed all %lld runs of the bad end (submit --end-runs N asks for N runs of each end first)\n",
				  json_number_value(json_object_get(rep, "rare_share_pct")),
				  json_integer_value(json_object_get(json_object_get(rep, "bad"), "n")));
	} else {
		sbuf_addf(&sb, "not reproduced: the bad end is %+.2f%% against the good end (p=%.4f); "
			  "a regression needs p < %.2f and at least %.1f%%\n",
			  json_number_value(json_object_get(rep, "change_pct")),
			  json_number_value(json_object_get(rep, "p_value")),
			  json_number_value(json_object_get(rep, "alpha")),
			  json_number_value(json_object_get(rep, "min_effect_pct")));
	}
	/* Engine reports carry the effect, noise and budgets; the skeleton's split does not. */
	if (strcmp(verdict, "undecided") && json_is_number(json_object_get(rep, "run_cv")))
		text_numbers(&sb, j, rep);
	if (json_is_object(json_object_get(rep, "profiles"))) {
		sbuf_adds(&sb, "\n");
		coord_profile_text(&sb, rep, "");
	}
	*out = sbuf_detach(&sb);
out:
	sbuf_release(&sb);
	json_decref(j);
	return rc;
}
