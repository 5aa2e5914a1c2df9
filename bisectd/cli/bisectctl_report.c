/*
 * bisectctl_report: a job as text. Its state, its measured commits (harmonic
 * mean, CV, change), its decisions, budget and progress, and the culprit
 * report a finished job ends with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bisectctl_internal.h"
#include "client.h"
#include "err.h"
#include "jsonx.h"
#include "util.h"

/* Widths of the columns of measurement lines, so that a block lines up. */
struct mwidth {
	int label, value, cv;
};

static void measure_cells(char *val, size_t vn, char *cv, size_t cn, const json_t *m)
{
	double h, c;

	/* A report's rows at the reference agent's level where it has one (two agents or more). */
	if (ctl_jnum(&h, m, "hmean_ref") || ctl_jnum(&h, m, "hmean"))
		snprintf(val, vn, "%.2f", h);
	else
		snprintf(val, vn, "-");
	/* One run has no spread: its CV would read 0, a perfectly quiet commit. */
	if (ctl_jint(m, "n", 2) < 2 && (ctl_jnum(&c, m, "cv_ref") || ctl_jnum(&c, m, "cv")))
		snprintf(cv, cn, "(-)");
	else if (ctl_jnum(&c, m, "cv_ref") || ctl_jnum(&c, m, "cv"))
		snprintf(cv, cn, "(%.4f)", c);
	else
		cv[0] = '\0';
}

static void mwidth_add(struct mwidth *w, const char *label, const json_t *m)
{
	char val[64], cv[64];
	int l = (int)strlen(label);

	measure_cells(val, sizeof(val), cv, sizeof(cv), m);
	if (l > w->label)
		w->label = l;
	if ((int)strlen(val) > w->value)
		w->value = (int)strlen(val);
	if ((int)strlen(cv) > w->cv)
		w->cv = (int)strlen(cv);
}

/* "  a1b2c3d4e5f6 good   1726716.59 (0.0401) n=5  subject", the netdev seed style. */
static void measure_line(struct sbuf *out, const struct mwidth *w, const char *label,
			 const json_t *m)
{
	char sha[13], val[64], cv[64];
	long long fails = ctl_jint(m, "failures", 0);

	ctl_short_sha(sha, ctl_jstr(m, "sha"));
	measure_cells(val, sizeof(val), cv, sizeof(cv), m);
	sbuf_addf(out, "  %s %-*s %*s %-*s n=%lld", sha, w->label, label, w->value, val,
		  w->cv, cv, ctl_jint(m, "n", 0));
	if (fails > 0)
		sbuf_addf(out, " failed=%lld", fails);
	sbuf_addf(out, "  %s\n", ctl_jstr_or(m, "subject", ""));
}

/*
 * What an engine report is read with: for an undecided job the most
 * probable commits, then (any verdict) the effect with its 95% interval,
 * the noise per task and per run, and what more it would take.
 */
static void print_numbers(struct sbuf *out, const json_t *report, long long id)
{
	const char *verdict = ctl_jstr_or(report, "verdict", "?");
	json_t *top = json_object_get(report, "top"), *x;
	double e, lo, hi, tcv, rcv, me, rare, sb_, sg;
	char sha[13];
	size_t i;

	if (!strcmp(verdict, "undecided")) {
		sbuf_addf(out, "  undecided: %s\n",
			  ctl_jstr_or(report, "why", "the data cannot decide within the budget"));
		if (json_array_size(top) > 0)
			sbuf_adds(out, "  the most probable commits (p that it is the culprit):\n");
		json_array_foreach(top, i, x) {
			double p = 0;

			ctl_short_sha(sha, ctl_jstr(x, "sha"));
			ctl_jnum(&p, x, "p");
			sbuf_addf(out, "    %s %.4f %-8s %s\n", sha, p, ctl_jstr_or(x, "state", "?"), ctl_jstr_or(x, "subject", ""));
		}
		/* A p that more commits hold than are listed: no run tells them apart yet (coord_report.c's note). */
		json_array_foreach(top, i, x) {
			int first;
			size_t shown = jsonx_count_near(top, i, "p", &first);

			if (first && ctl_jint(x, "alike", 1) > (long long)shown)
				sbuf_addf(out, "  %lld commits hold p=%.4f alike (no run tells them apart yet): %zu of them "
					  "are shown\n", ctl_jint(x, "alike", 1), json_number_value(json_object_get(x, "p")), shown);
		}
		if (json_is_integer(json_object_get(report, "failed_confirm")))
			sbuf_addf(out, "  commit %lld failed its confirmation: it is not the answer\n",
				  ctl_jint(report, "failed_confirm", -1));
	}
	if (!strcmp(verdict, "not-reproduced") && ctl_jnum(&me, report, "min_effect_pct") &&
	    json_is_number(json_object_get(report, "effect_lo_pct")))
		sbuf_addf(out, "  not reproduced: the bad end was shown not to be worse by %.1f%% or more\n", me);
	if (!strcmp(verdict, "not-reproduced") && ctl_jnum(&rare, report, "rare_share_pct"))
		sbuf_addf(out, "  unless it shows in fewer than %.0f%% of the runs (an intermittent change)\n", rare);
	if (ctl_jnum(&sb_, report, "slow_bad_pct") && ctl_jnum(&sg, report, "slow_good_pct"))
		sbuf_addf(out, "  the change is in the slow runs: %.0f%% of the bad group's runs, %.0f%% of the good "
			  "group's (bisected on that share)\n", sb_, sg);
	/* An interval of no width is an effect not estimated yet. */
	if (ctl_jnum(&e, report, "effect_pct") && ctl_jnum(&lo, report, "effect_lo_pct") && ctl_jnum(&hi, report, "effect_hi_pct") &&
	    lo < hi)
		sbuf_addf(out, "  effect %+.2f%% (95%% interval %+.2f%% to %+.2f%%)\n", e, lo, hi);
	if (ctl_jnum(&tcv, report, "task_cv") && ctl_jnum(&rcv, report, "run_cv") && rcv > 0)
		sbuf_addf(out, "  noise %.2f%% per task, %.2f%% per run\n", 100 * tcv, 100 * rcv);
	if (strcmp(verdict, "undecided"))
		return;
	if (json_is_integer(json_object_get(report, "more_runs")))
		sbuf_addf(out, "  about %lld more runs would decide it (or a quieter lab)\n",
			  ctl_jint(report, "more_runs", 0));
	else
		sbuf_adds(out, "  no estimate of the runs that would decide it: the effect does not show\n");
	if (json_is_true(json_object_get(report, "resumable")))
		sbuf_addf(out, "  to run on with more runs, every run kept: bisectctl resume %lld [--more-runs N]\n", id);
}

/* "agents lab1 (reference, 25 runs), lab2 -12.07% (18 runs); rows at lab1's level". */
static void print_agents(struct sbuf *out, const json_t *report)
{
	json_t *agents = json_object_get(report, "agents"), *a;
	const char *ref = "the reference";
	size_t i;

	if (json_array_size(agents) < 2)
		return;
	sbuf_adds(out, "  agents");
	json_array_foreach(agents, i, a) {
		double lvl = 0;

		if (json_is_true(json_object_get(a, "reference"))) {
			ref = ctl_jstr_or(a, "name", "?");
			sbuf_addf(out, "%s %s (reference, %lld runs)", i ? "," : "", ref, ctl_jint(a, "runs", 0));
		} else if (ctl_jnum(&lvl, a, "level_pct")) {
			sbuf_addf(out, "%s %s %+.2f%% (%lld runs)", i ? "," : "", ctl_jstr_or(a, "name", "?"), lvl,
				  ctl_jint(a, "runs", 0));
		} else {
			sbuf_addf(out, "%s %s level not known yet, its runs as measured (%lld runs)", i ? "," : "",
				  ctl_jstr_or(a, "name", "?"), ctl_jint(a, "runs", 0));
		}
	}
	sbuf_addf(out, "; the rows and the change at %s's level\n", ref);
}

/* The report object: the culprit (or the verdict) and the numbers behind it. */
static void print_result(struct sbuf *out, const json_t *report, long long id)
{
	static const char *const rows[] = { "good", "parent", "culprit", "bad" };
	const char *verdict = ctl_jstr_or(report, "verdict", "?");
	json_t *culprit = json_object_get(report, "culprit");
	struct mwidth w = { 0, 0, 0 };
	double change, p, conf;
	char sha[13], pbuf[32];
	int sep = 0;

	if (!strcmp(verdict, "culprit") && json_is_object(culprit)) {
		ctl_short_sha(sha, ctl_jstr(culprit, "sha"));
		sbuf_addf(out, "culprit: %s %s\n", sha, ctl_jstr_or(culprit, "subject", ""));
	} else {
		sbuf_addf(out, "result: %s\n", verdict);
	}
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (json_is_object(json_object_get(report, rows[i])))
			mwidth_add(&w, rows[i], json_object_get(report, rows[i]));
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (json_is_object(json_object_get(report, rows[i])))
			measure_line(out, &w, rows[i], json_object_get(report, rows[i]));
	if (!strcmp(verdict, "range") && json_is_array(json_object_get(report, "range"))) {
		/* Skipped commits around the culprit: the smallest range that holds it. */
		json_t *range = json_object_get(report, "range"), *x;
		size_t i;

		sbuf_adds(out, "  the culprit is one of:\n");
		json_array_foreach(range, i, x) {
			ctl_short_sha(sha, ctl_jstr(x, "sha"));
			sbuf_addf(out, "    %s %-7s %s\n", sha, ctl_jstr_or(x, "state", "?"),
				  ctl_jstr_or(x, "subject", ""));
		}
	}
	if (ctl_jnum(&change, report, "change_pct")) {
		sbuf_addf(out, "  change %+.2f%%", change);
		sep = 1;
	}
	if (ctl_jnum(&p, report, "p_value")) {
		ctl_fmt_p(pbuf, sizeof(pbuf), p);
		sbuf_addf(out, "%sp=%s", sep ? ", " : "  ", pbuf);
		sep = 1;
	}
	if (ctl_jnum(&conf, report, "confidence")) {
		sbuf_addf(out, "%sconfidence %.4f%s", sep ? ", " : "  ", conf,
			  json_is_number(json_object_get(report, "posterior")) ? " (capped: the runs show two modes)" : "");
		sep = 1;
	}
	if (sep)
		sbuf_adds(out, "\n");
	print_agents(out, report);
	print_numbers(out, report, id);
}

/* "budget    24 runs (derived), 1h00m of wall time (derived), 2m10s used": the budgets in force, and the end runs asked for. */
static void budget_text(struct sbuf *out, const json_t *job)
{
	json_t *p = json_object_get(job, "progress");
	long long runs = ctl_jint(p, "budget_runs", 0), secs = ctl_jint(p, "budget_seconds", 0);
	char d[32];

	if (ctl_jint(job, "end_runs", 0) > 0)
		sbuf_addf(out, "ends      %lld runs each before not-reproduced (--end-runs)\n", ctl_jint(job, "end_runs", 0));
	if (ctl_jint(job, "ends_max", 0) > 0)
		sbuf_addf(out, "ends      measured to %lld runs each at most (raised by resume)\n", ctl_jint(job, "ends_max", 0));
	if (!json_is_object(p) || (runs <= 0 && secs <= 0))
		return;
	sbuf_adds(out, "budget    ");
	if (runs > 0)
		sbuf_addf(out, "%lld runs%s", runs, ctl_jint(job, "budget_runs", 0) > 0 ? "" : " (derived)");
	else
		sbuf_adds(out, "runs not derived yet");
	if (secs > 0) {
		ctl_fmt_duration(d, sizeof(d), secs);
		sbuf_addf(out, ", %s of wall time%s", d, ctl_jint(job, "budget_seconds", 0) > 0 ? "" : " (derived)");
	}
	ctl_fmt_duration(d, sizeof(d), ctl_jint(p, "elapsed_seconds", 0));
	sbuf_addf(out, "; %lld runs, %s used\n", ctl_jint(p, "samples", 0), d);
}

void ctl_progress_text(struct sbuf *out, const json_t *job)
{
	json_t *p = json_object_get(job, "progress");

	if (!json_is_object(p)) {
		sbuf_adds(out, "-");
		return;
	}
	long long samples = ctl_jint(p, "samples", 0), cand = ctl_jint(p, "candidates", 0);

	sbuf_addf(out, "%lld/%lld tasks, %lld sample%s, %lld candidate%s",
		  ctl_jint(p, "tasks_done", 0), ctl_jint(p, "tasks_total", 0),
		  samples, samples == 1 ? "" : "s", cand, cand == 1 ? "" : "s");
	/* What the agents say they are doing: a first kernel build takes minutes. */
	json_t *r;
	size_t i;

	json_array_foreach(json_object_get(job, "running"), i, r)
		if (json_is_string(json_object_get(r, "progress")))
			sbuf_addf(out, "; %s, commit %lld: %s", ctl_jstr_or(r, "agent", "?"), ctl_jint(r, "idx", -1),
				  ctl_jstr_or(r, "progress", ""));
}

/*
 * The engine's last decisions: what it measured next, why, and where the
 * posterior stood ("P(bad)" is the mass at or before the commit).
 */
static void decisions_text(struct sbuf *out, json_t *decisions, size_t max)
{
	size_t total = json_array_size(decisions), first = total > max ? total - max : 0;

	if (total == 0)
		return;
	sbuf_addf(out, "\ndecisions (last %zu of %zu):\n", total - first, total);
	for (size_t i = first; i < total; i++) {
		json_t *d = json_array_get(decisions, i), *x;
		size_t j;

		sbuf_addf(out, "  %-7s %s\n", ctl_jstr_or(d, "state", "?"), ctl_jstr_or(d, "why", ""));
		json_array_foreach(json_object_get(d, "queries"), j, x)
			sbuf_addf(out, "          -> commit %lld: %lld run%s%s, P(bad) %.3f, %.3f bits\n",
				  ctl_jint(x, "idx", -1), ctl_jint(x, "runs", 0),
				  ctl_jint(x, "runs", 0) == 1 ? "" : "s",
				  json_is_true(json_object_get(x, "confirm")) ? " (confirmation)" :
				  json_is_true(json_object_get(x, "early")) ? " (early pair)" : "",
				  json_number_value(json_object_get(x, "mass")),
				  json_number_value(json_object_get(x, "gain")));
		if (json_array_size(json_object_get(d, "top")) > 0) {
			sbuf_adds(out, "          top:");
			json_array_foreach(json_object_get(d, "top"), j, x)
				sbuf_addf(out, " %lld (%.3f)", ctl_jint(x, "idx", -1),
					  json_number_value(json_object_get(x, "p")));
			sbuf_adds(out, "\n");
		}
	}
}

/*
 * The job as `show` prints it: header, progress, tested commits, events and
 * (with_result) the result.
 */
void ctl_format_job(struct sbuf *out, const json_t *job, size_t max_events, int with_result)
{
	json_t *commits = json_object_get(job, "commits");
	json_t *events = json_object_get(job, "events");
	json_t *report = json_object_get(job, "report");
	const char *err = ctl_jstr(job, "error");
	long long created = ctl_jint(job, "created", 0), finished = ctl_jint(job, "finished", 0);
	char good[13], bad[13], tbuf[32], dbuf[32];
	size_t n;

	sbuf_addf(out, "job %lld  %s  %s %s..%s (%lld commits)\n", ctl_jint(job, "id", 0),
		  ctl_jstr_or(job, "state", "?"), ctl_jstr_or(job, "repo", "?"),
		  ctl_jstr_or(job, "good_ref", "?"), ctl_jstr_or(job, "bad_ref", "?"),
		  ctl_jint(job, "nr_commits", 0));
	ctl_short_sha(good, ctl_jstr(job, "good"));
	ctl_short_sha(bad, ctl_jstr(job, "bad"));
	sbuf_addf(out, "range     %s..%s\n", good, bad);
	sbuf_addf(out, "workload  %s (%s, %s is better) on pool %s, %lld runs per commit\n",
		  ctl_jstr_or(job, "workload", "?"), ctl_jstr_or(job, "unit", "?"),
		  ctl_jstr_or(job, "direction", "higher"), ctl_jstr_or(job, "pool", "?"),
		  ctl_jint(job, "runs", 0));
	if (ctl_jstr(job, "append"))
		sbuf_addf(out, "variant   kernel command line + \"%s\"\n", ctl_jstr(job, "append"));
	if (json_array_size(json_object_get(job, "config"))) {
		json_t *x;
		size_t i;

		sbuf_adds(out, "variant   kernel config +");
		json_array_foreach(json_object_get(job, "config"), i, x)
			sbuf_addf(out, " %s", json_string_value(x) ? json_string_value(x) : "?");
		sbuf_adds(out, "\n");
	}
	ctl_local_time(tbuf, sizeof(tbuf), created, "%Y-%m-%d %H:%M:%S");
	if (finished > 0) {
		ctl_fmt_duration(dbuf, sizeof(dbuf), finished - created);
		sbuf_addf(out, "created   %s, ended after %s\n", tbuf, dbuf);
	} else {
		ctl_fmt_duration(dbuf, sizeof(dbuf), now_unix() - created);
		sbuf_addf(out, "created   %s, %s ago\n", tbuf, dbuf);
	}
	sbuf_adds(out, "progress  ");
	ctl_progress_text(out, job);
	sbuf_adds(out, "\n");
	budget_text(out, job);
	if (ctl_jstr(job, "waiting"))
		sbuf_addf(out, "waiting   %s\n", ctl_jstr(job, "waiting"));
	if (err && *err)
		sbuf_addf(out, "error     %s\n", err);
	if (!strcmp(ctl_jstr_or(job, "state", ""), "failed"))
		sbuf_addf(out, "again     bisectctl submit --like %lld measures it afresh, once what failed is mended\n",
			  ctl_jint(job, "id", 0));

	if (json_is_array(commits)) {
		json_t **v = xcalloc(json_array_size(commits) + 1, sizeof(*v));
		struct mwidth w = { 6, 0, 0 };
		size_t i;

		n = 0;
		for (i = 0; i < json_array_size(commits); i++) {
			json_t *c = json_array_get(commits, i);

			if (strcmp(ctl_jstr_or(c, "state", "untested"), "untested") || ctl_jint(c, "n", 0) > 0)
				v[n++] = c;
		}
		qsort(v, n, sizeof(*v), ctl_cmp_idx);
		for (i = 0; i < n; i++)
			mwidth_add(&w, ctl_jstr_or(v[i], "state", "?"), v[i]);
		if (n && json_array_size(json_object_get(job, "agents")) > 1) {
			/* The job's levels: its report's, or a running job's at the engine's last step. */
			sbuf_adds(out, report ? "\ncommits (at the agents' levels of its report):\n" :
				  "\ncommits (at the agents' levels of the engine's last step):\n");
			print_agents(out, job);
		} else if (n)
			sbuf_adds(out, "\ncommits:\n");
		else
			sbuf_adds(out, "\ncommits: none tested yet\n");
		for (i = 0; i < n; i++)
			measure_line(out, &w, ctl_jstr_or(v[i], "state", "?"), v[i]);
		free(v);
	}

	if (json_is_array(events) && json_array_size(events) > 0) {
		size_t total = json_array_size(events), first;
		json_t **v = xcalloc(total, sizeof(*v));

		for (size_t i = 0; i < total; i++)
			v[i] = json_array_get(events, i);
		/* Stable enough: events of one second keep the server's order in practice. */
		qsort(v, total, sizeof(*v), ctl_cmp_time);
		first = total > max_events ? total - max_events : 0;
		if (first)
			sbuf_addf(out, "\nevents (last %zu of %zu):\n", total - first, total);
		else
			sbuf_adds(out, "\nevents:\n");
		for (size_t i = first; i < total; i++) {
			ctl_local_time(tbuf, sizeof(tbuf), ctl_jint(v[i], "time", 0), "%m-%d %H:%M:%S");
			sbuf_addf(out, "  %s  %-9s %s\n", tbuf, ctl_jstr_or(v[i], "kind", "?"),
				  ctl_jstr_or(v[i], "message", ""));
		}
		free(v);
	}

	decisions_text(out, json_object_get(job, "decisions"), max_events / 2 + 1);
	if (!with_result)
		return;
	if (json_is_object(report)) {
		sbuf_adds(out, "\n");
		print_result(out, report, ctl_jint(job, "id", 0));
	} else if (!json_is_null(json_object_get(job, "culprit")) &&
		   json_object_get(job, "culprit")) {
		ctl_culprit_sha(good, job);
		sbuf_addf(out, "\nculprit: %s\n", good);
	}
}

/*
 * Prints the end of a job: the report text, or why there is none. strict:
 * a report the API refuses is an error of this command (report), rather
 * than something to work around (watch).
 */
int ctl_finish_job(long id, const json_t *job, int strict, const char *query)
{
	char path[64], *text = NULL;
	long status;
	int rc, ended = ctl_job_ended(job);
	const char *state = ctl_jstr_or(job, "state", "?");

	if (ctl_json) {
		json_t *r = json_object_get(job, "report");

		if (!r && !ended) {
			fprintf(stderr, "bisectctl: job %ld is %s: no report yet\n", id, state);
			return RC_USAGE;
		}
		ctl_print_json(r, JSON_INDENT(2));
		return ctl_job_rc(job);
	}
	snprintf(path, sizeof(path), "/api/v1/jobs/%ld/report%s", id, query);
	rc = client_get_text(&text, &status, ctl_get_client(), path, REQ_TIMEOUT_S);
	if (rc == 0 && status >= 200 && status < 300) {
		size_t len = strlen(text);

		fputs(text, stdout);
		if (len && text[len - 1] != '\n')
			fputc('\n', stdout);
		/* A job not finished gets what is known so far, and the status of no report yet. */
		rc = ended ? ctl_job_rc(job) : RC_USAGE;
		goto out;
	}
	if (ended && (strcmp(state, "done") || !strict)) {
		/* No report text (a failed or cancelled job): say how it ended. */
		const char *err = ctl_jstr(job, "error");
		struct sbuf sb = SBUF_INIT;

		sbuf_addf(&sb, "job %ld %s%s%s\n", id, state, err && *err ? ": " : "",
			  err && *err ? err : "");
		if (json_is_object(json_object_get(job, "report")))
			print_result(&sb, json_object_get(job, "report"), id);
		if (!strcmp(state, "cancelled"))
			sbuf_addf(&sb, "  to run it on from the runs it has: bisectctl resume %ld\n", id);
		if (!strcmp(state, "failed") || !strcmp(state, "cancelled"))
			sbuf_addf(&sb, "  to measure it afresh with the same settings: bisectctl submit --like %ld\n", id);
		fputs(sb.buf, stdout);
		sbuf_release(&sb);
		rc = ctl_job_rc(job);
		goto out;
	}
	if (rc < 0) {
		fprintf(stderr, "bisectctl: %s\n", err_msg());
		rc = RC_SERVER;
	} else {
		rc = ctl_text_status_error(text, status);
	}
out:
	free(text);
	fflush(stdout);
	return rc;
}
