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
#include "util.h"

static void text_commit(struct sbuf *sb, const char *label, json_t *c)
{
	const char *sha = json_string_value(json_object_get(c, "sha"));

	if (!json_is_object(c))
		return;
	if (!json_is_number(json_object_get(c, "hmean"))) {
		sbuf_addf(sb, "  %-8s %.12s  %14s %-8s  n=%-3d %s\n", label, sha ? sha : "?", "-", "", 0,
			  json_string_value(json_object_get(c, "subject")) ?
			  json_string_value(json_object_get(c, "subject")) : "");
		return;
	}
	sbuf_addf(sb, "  %-8s %.12s  %14.2f (%.4f)  n=%-3lld %s\n", label, sha ? sha : "?",
		  json_number_value(json_object_get(c, "hmean")), json_number_value(json_object_get(c, "cv")),
		  json_integer_value(json_object_get(c, "n")),
		  json_string_value(json_object_get(c, "subject")) ? json_string_value(json_object_get(c, "subject")) : "");
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
static void text_numbers(struct sbuf *sb, json_t *j, json_t *rep)
{
	json_t *p = json_object_get(j, "progress");
	double tcv = json_number_value(json_object_get(rep, "task_cv"));
	double rcv = json_number_value(json_object_get(rep, "run_cv"));

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

/* An undecided job: no answer, and what the data do say. */
static void text_undecided(struct sbuf *sb, json_t *j, json_t *rep)
{
	json_t *top = json_object_get(rep, "top"), *x;
	json_t *fc = json_object_get(rep, "failed_confirm");
	size_t i;

	sbuf_addf(sb, "undecided: no commit holds the asked confidence (%.4g) within the budget\nwhy: %s\n",
		  json_number_value(json_object_get(j, "confidence")),
		  json_string_value(json_object_get(rep, "why")) ? json_string_value(json_object_get(rep, "why")) : "");
	if (json_array_size(top) > 0) {
		sbuf_adds(sb, "the most probable commits (p: the posterior probability that it is the culprit):\n");
		sbuf_addf(sb, "  %-8s %-12s  %14s %-8s  %-5s %s\n", "p", "commit", "hmean", "(cv)", "n", "subject");
		json_array_foreach(top, i, x) {
			char label[16];

			snprintf(label, sizeof(label), "%.4f", json_number_value(json_object_get(x, "p")));
			text_commit(sb, label, x);
		}
	}
	if (json_is_integer(fc)) {
		json_t *commits = json_object_get(j, "commits");
		const char *sha = NULL;

		json_array_foreach(commits, i, x)
			if (json_integer_value(json_object_get(x, "idx")) == json_integer_value(fc))
				sha = json_string_value(json_object_get(x, "sha"));
		sbuf_addf(sb, "commit %lld (%.12s) failed its confirmation against its parent: it is not the answer\n",
			  json_integer_value(fc), sha ? sha : "?");
	}
	text_numbers(sb, j, rep);
	if (json_is_integer(json_object_get(rep, "more_runs")))
		sbuf_addf(sb, "about %lld more runs would decide it (or a quieter lab)\n",
			  json_integer_value(json_object_get(rep, "more_runs")));
	else
		sbuf_adds(sb, "no estimate of the runs that would decide it: the effect does not show in the data\n");
}

int coord_job_report_text(struct coord *s, char **out, long long id)
{
	struct sbuf sb = SBUF_INIT;
	json_t *j, *rep, *x;
	const char *verdict, *unit;
	int rc = 0;

	*out = NULL;
	pthread_mutex_lock(&s->lock);
	j = coord_job_json(s, id, 1);
	pthread_mutex_unlock(&s->lock);
	if (!j)
		return err_set(ERR_NOTFOUND, "job %lld does not exist", id);
	rep = json_object_get(j, "report");
	if (!rep) {
		rc = err_set(ERR_CONFLICT, "job %lld has no report: it is %s%s%s", id,
			     json_string_value(json_object_get(j, "state")),
			     json_is_string(json_object_get(j, "error")) ? ": " : "",
			     json_is_string(json_object_get(j, "error")) ?
			     json_string_value(json_object_get(j, "error")) : "");
		goto out;
	}
	verdict = json_string_value(json_object_get(rep, "verdict"));
	unit = json_string_value(json_object_get(j, "unit"));
	x = json_object_get(j, "progress");
	sbuf_addf(&sb, "bisectd job %lld: %s %s..%s, workload %s (%s, %s is better)\n", id,
		  json_string_value(json_object_get(j, "repo")), json_string_value(json_object_get(j, "good_ref")),
		  json_string_value(json_object_get(j, "bad_ref")), json_string_value(json_object_get(j, "workload")),
		  unit, json_string_value(json_object_get(j, "direction")));
	if (json_is_string(json_object_get(j, "append")))
		sbuf_addf(&sb, "kernel command line + \"%s\"\n", json_string_value(json_object_get(j, "append")));
	sbuf_addf(&sb, "%lld candidates, %lld commits measured, %lld runs in %lld tasks\n\n",
		  json_integer_value(json_object_get(j, "nr_commits")),
		  json_integer_value(json_object_get(x, "measured")),
		  json_integer_value(json_object_get(x, "samples")),
		  json_integer_value(json_object_get(x, "tasks_done")));
	sbuf_addf(&sb, "  %-8s %-12s  %14s %-8s  %-5s %s\n", "", "commit", "hmean", "(cv)", "n", "subject");
	text_commit(&sb, "good", json_object_get(rep, "good"));
	if (!strcmp(verdict, "culprit")) {
		text_commit(&sb, "parent", json_object_get(rep, "parent"));
		text_commit(&sb, "culprit", json_object_get(rep, "culprit"));
	}
	text_commit(&sb, "bad", json_object_get(rep, "bad"));
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
		if (json_is_number(json_object_get(rep, "confidence")))
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
		text_undecided(&sb, j, rep);
	} else if (json_is_number(json_object_get(rep, "effect_lo_pct"))) {
		/* The engine's not-reproduced is an equivalence, not a difference that failed to show. */
		sbuf_addf(&sb, "not reproduced: the ends were shown to differ by less than %.1f%% (the job's "
			  "min_effect), at confidence %.4g: the bad end is %+.2f%% against the good end "
			  "(95%% interval %+.2f%% to %+.2f%%, p=%.4f)\n",
			  json_number_value(json_object_get(rep, "min_effect_pct")),
			  json_number_value(json_object_get(j, "confidence")),
			  json_number_value(json_object_get(rep, "change_pct")),
			  json_number_value(json_object_get(rep, "effect_lo_pct")),
			  json_number_value(json_object_get(rep, "effect_hi_pct")),
			  json_number_value(json_object_get(rep, "p_value")));
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
	*out = sbuf_detach(&sb);
out:
	sbuf_release(&sb);
	json_decref(j);
	return rc;
}
