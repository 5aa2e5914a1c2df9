/*
 * coord_mail: a job's culprit as a plain-text mail in the manner of the
 * kernel test robot (LKP): what regressed on which commit and by whom,
 * the machines, the workload's exact command line, the kernel config and
 * variant, a %stddev %change %stddev table, and how to reproduce it,
 * with bisectd and by hand. Its numbers are the store's, like the report's.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord_internal.h"
#include "err.h"
#include "repo.h"
#include "util.h"
#include "workload.h"

#define RULE "========================================================================================="

/* What the mail says, read under the coordinator's lock. */
struct mail {
	json_t *job, *rep;           /* the job as the API shows it, and its report */
	struct summary parent, culprit;
	double pct, lo, hi;          /* the culprit against its parent, hmean, 95% bootstrap */
	int ci;                      /* lo and hi are known */
	struct job_agent *agents;
	size_t nr_agents;
	json_t *def;                 /* the workload's definition with the job's variant; NULL: not configured */
	const char *url;             /* the repo's, from the config; NULL: not configured */
	char *author;                /* from the mirror; NULL: unknown */
};

static void mail_release(struct mail *m)
{
	json_decref(m->job);
	json_decref(m->def);
	store_job_agents_free(m->agents, m->nr_agents);
	free(m->author);
}

/* s as one sh word: as it is when it is safe so, else single-quoted. */
static void sh_word(struct sbuf *sb, const char *s)
{
	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.,:/=+-@%") == strlen(s))
		sbuf_adds(sb, s);
	else
		workload_sh_quote(sb, s);
}

/* The strings of a JSON array as sh words separated by spaces. */
static void sh_argv(struct sbuf *sb, json_t *argv)
{
	json_t *x;
	size_t i;

	json_array_foreach(argv, i, x) {
		if (i)
			sbuf_adds(sb, " ");
		sh_word(sb, json_string_value(x) ? json_string_value(x) : "");
	}
}

static const char *jstr(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : "";
}

/*
 * ", reading -12.07% against lab1": an agent's level where the report has
 * two agents or more (coord_levels.c); the tables are at the reference's.
 */
static void mail_level(struct sbuf *sb, json_t *rep, const char *name)
{
	json_t *a, *ref = NULL, *me = NULL;
	size_t i;

	json_array_foreach(json_object_get(rep, "agents"), i, a) {
		if (json_is_true(json_object_get(a, "reference")))
			ref = a;
		if (name && json_string_value(json_object_get(a, "name")) &&
		    !strcmp(name, json_string_value(json_object_get(a, "name"))))
			me = a;
	}
	if (!me || !ref)
		return;
	if (me == ref)
		sbuf_adds(sb, ", the reference: the numbers below are at its level");
	else if (json_is_number(json_object_get(me, "level_pct")))
		sbuf_addf(sb, ", reading %+.2f%% against %s", json_number_value(json_object_get(me, "level_pct")),
			  jstr(ref, "name"));
	else
		sbuf_addf(sb, ", its level against %s not known (no commit run by both), its numbers as they "
			  "were measured", jstr(ref, "name"));
}

/* The values of commit idx summarised, at the reference agent's level where the report has agents. Under s->lock. */
static int commit_values(double **v, size_t *n, struct summary *sum, struct coord *s, long long id, json_t *c,
			 json_t *rep)
{
	int rc = coord_levels_values(v, n, s, id, (int)json_integer_value(json_object_get(c, "idx")), rep);

	if (rc == 0)
		stats_summary(sum, *v, *n);
	return rc;
}

static int mail_load(struct mail *m, struct coord *s, long long id)
{
	const struct conf_workload *w;
	const struct conf_repo *r;
	struct mirror *mi;
	double *pv = NULL, *cv = NULL;
	size_t pn = 0, cn = 0;
	const char *verdict, *sha;
	char *subject = NULL;
	int rc = 0;

	memset(m, 0, sizeof(*m));
	pthread_mutex_lock(&s->lock);
	m->job = coord_job_json(s, id, 1);
	if (!m->job) {
		rc = err_set(ERR_NOTFOUND, "job %lld does not exist", id);
		goto unlock;
	}
	m->rep = json_object_get(m->job, "report");
	verdict = jstr(m->rep, "verdict");
	if (strcmp(verdict, "culprit")) {
		rc = err_set(ERR_CONFLICT, "job %lld names no culprit to mail about: it is %s%s%s (bisectctl report %lld "
			     "says what is known)", id, jstr(m->job, "state"), *verdict ? ", verdict " : "", verdict, id);
		goto unlock;
	}
	if ((rc = commit_values(&pv, &pn, &m->parent, s, id, json_object_get(m->rep, "parent"), m->rep)) ||
	    (rc = commit_values(&cv, &cn, &m->culprit, s, id, json_object_get(m->rep, "culprit"), m->rep)) ||
	    (rc = store_job_agents(&m->agents, &m->nr_agents, s->st, id)))
		goto unlock;
	m->ci = stats_change_ci(&m->pct, &m->lo, &m->hi, pv, pn, cv, cn, 0, (uint64_t)id) == 0;
	if (!m->ci)
		m->pct = stats_change_pct(m->parent.hmean, m->culprit.hmean);
	w = conf_workload_find(s->conf, jstr(m->job, "workload"));
	if (w)
		m->def = conf_workload_def_job(w, json_string_value(json_object_get(m->job, "append")),
					       json_object_get(m->job, "config"));
	r = conf_repo_find(s->conf, jstr(m->job, "repo"));
	m->url = r ? r->url : NULL;
unlock:
	pthread_mutex_unlock(&s->lock);
	free(pv);
	free(cv);
	if (rc)
		return rc;
	/* The author is not stored: the mirror has it (its lock is taken outside s->lock). */
	sha = jstr(json_object_get(m->rep, "culprit"), "sha");
	mi = coord_mirror_find(s, jstr(m->job, "repo"));
	if (mi) {
		pthread_mutex_lock(&mi->lock);
		if (mi->repo && repo_commit_info(&subject, &m->author, mi->repo, sha))
			err_clear();
		pthread_mutex_unlock(&mi->lock);
	}
	free(subject);
	return 0;
}

/* A number of the table: whole above 10^4 or when it is whole, else with two decimals (as LKP prints them). */
static void table_num(char *buf, size_t n, double v)
{
	snprintf(buf, n, fabs(v) >= 1e4 || v == floor(v) ? "%.0f" : "%.2f", v);
}

/* One row: parent's value ± its CV, the change, the culprit's value ± its CV, the row's name. */
static void table_row(struct sbuf *sb, double a, double acv, double b, double bcv, const char *name, int spread)
{
	char av[32], bv[32];

	table_num(av, sizeof(av), a);
	table_num(bv, sizeof(bv), b);
	if (spread)
		sbuf_addf(sb, "%10s \xc2\xb1%3.0f%%  %+9.1f%%  %10s \xc2\xb1%3.0f%%  %s\n", av, 100 * acv,
			  stats_change_pct(a, b), bv, 100 * bcv, name);
	else
		sbuf_addf(sb, "%10s        %+9.1f%%  %10s        %s\n", av, stats_change_pct(a, b), bv, name);
}

static void mail_table(struct sbuf *sb, struct mail *m, const char *metric)
{
	json_t *p = json_object_get(m->rep, "parent"), *c = json_object_get(m->rep, "culprit");
	char name[160];

	sbuf_addf(sb, "%s\ncommit:\n  %.12s (\"%s\")\n  %.12s (\"%s\")\n\n", RULE, jstr(p, "sha"), jstr(p, "subject"),
		  jstr(c, "sha"), jstr(c, "subject"));
	sbuf_addf(sb, "%.12s     %.12s\n---------------- ---------------------------\n", jstr(p, "sha"), jstr(c, "sha"));
	sbuf_adds(sb, "         %stddev     %change         %stddev\n             \\          |                \\\n");
	snprintf(name, sizeof(name), "%s (hmean)", metric);
	table_row(sb, m->parent.hmean, m->parent.cv, m->culprit.hmean, m->culprit.cv, name, 1);
	snprintf(name, sizeof(name), "%s (amean)", metric);
	table_row(sb, m->parent.amean, m->parent.cv, m->culprit.amean, m->culprit.cv, name, 1);
	snprintf(name, sizeof(name), "%s (min)", metric);
	table_row(sb, m->parent.min, 0, m->culprit.min, 0, name, 0);
	snprintf(name, sizeof(name), "%s (max)", metric);
	table_row(sb, m->parent.max, 0, m->culprit.max, 0, name, 0);
	table_row(sb, (double)m->parent.n, 0, (double)m->culprit.n, 0, "runs", 0);
	sbuf_adds(sb, "\n%stddev: stddev / arithmetic mean of the runs, in percent\n\n");
}

/* The workload's command line: a host run's argv, or the guest's script with its tools. */
static void mail_command(struct sbuf *sb, json_t *def, const char *indent)
{
	const struct workload_ops *ops = workload_find(jstr(def, "type"));
	const char **argv = NULL;

	if (!ops)
		return;
	if ((ops->places & WORKLOAD_HOST) && ops->argv && ops->argv(&argv, def) == 0) {
		sbuf_adds(sb, indent);
		for (size_t i = 0; argv[i]; i++) {
			if (i)
				sbuf_adds(sb, " ");
			sh_word(sb, argv[i]);
		}
		sbuf_adds(sb, "\n");
		free(argv);
	} else if ((ops->places & WORKLOAD_GUEST) && ops->script) {
		const char *names[8];
		struct sbuf sc = SBUF_INIT;
		int k = ops->tools ? ops->tools(names, 8, def) : 0;

		if (k >= 0 && ops->script(&sc, def, names) == 0) {
			/* The guest's run_once(), each line indented. */
			for (char *line = sc.buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
				nl = strchr(line, '\n');
				sbuf_addf(sb, "%s%.*s\n", indent, nl ? (int)(nl - line) : (int)strlen(line), line);
			}
		}
		sbuf_release(&sc);
	}
	err_clear();
}

static void mail_params(struct sbuf *sb, struct mail *m)
{
	json_t *def = m->def, *k = json_object_get(def, "kernel"), *x;
	const struct workload_ops *ops = workload_find(jstr(def, "type"));
	size_t i;

	sbuf_adds(sb, "with following parameters:\n\n");
	sbuf_addf(sb, "\ttype: %s\n\tboot: %s\n", jstr(def, "type"), jstr(def, "boot"));
	for (i = 0; ops && ops->keys[i].name; i++) {
		json_t *v = json_object_get(def, ops->keys[i].name);
		char *text = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;

		if (text)
			sbuf_addf(sb, "\t%s: %s\n", ops->keys[i].name, text);
		free(text);
	}
	sbuf_addf(sb, "\truns: %lld per task\n", json_integer_value(json_object_get(m->job, "runs")));
	sbuf_addf(sb, "\tvariant: %s\n", json_is_string(json_object_get(m->job, "append")) ?
		  jstr(m->job, "append") : "none (the job's append)");
	if (json_is_string(json_object_get(def, "append")))
		sbuf_addf(sb, "\tkernel command line: %s\n", jstr(def, "append"));
	if (json_array_size(json_object_get(m->job, "config"))) {
		sbuf_adds(sb, "\tkernel config variant:");
		json_array_foreach(json_object_get(m->job, "config"), i, x)
			sbuf_addf(sb, " %s", json_string_value(x));
		sbuf_adds(sb, "\n");
	}
	if (json_array_size(json_object_get(def, "build"))) {
		sbuf_adds(sb, "\tbuild: ");
		sh_argv(sb, json_object_get(def, "build"));
		sbuf_adds(sb, "\n");
	}
	sbuf_adds(sb, "\tcommand line:\n");
	mail_command(sb, def, "\t\t");
	sbuf_adds(sb, "\nkernel config:\n\n");
	if (!k) {
		sbuf_adds(sb, "\tnone: the workload builds no kernel\n\n");
		return;
	}
	sbuf_addf(sb, "\tbase: %s, target %s", jstr(k, "base"), jstr(k, "target"));
	if (json_array_size(json_object_get(k, "make_args"))) {
		sbuf_adds(sb, ", make ");
		sh_argv(sb, json_object_get(k, "make_args"));
	}
	sbuf_adds(sb, "\n");
	json_array_foreach(json_object_get(k, "fragments"), i, x) {
		const char *text = jstr(x, "text");

		sbuf_addf(sb, "\tfragment %s.config:\n", jstr(x, "name"));
		for (const char *line = text, *nl; *line; line = nl ? nl + 1 : line + strlen(line)) {
			nl = strchr(line, '\n');
			sbuf_addf(sb, "\t\t%.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
		}
	}
	if (json_array_size(json_object_get(k, "config"))) {
		sbuf_adds(sb, "\tthe job's options, after the fragments:\n");
		json_array_foreach(json_object_get(k, "config"), i, x) {
			const char *o = json_string_value(x), *eq = strchr(o, '=');

			if (eq && !strcmp(eq, "=n"))
				sbuf_addf(sb, "\t\t# %.*s is not set\n", (int)(eq - o), o);
			else
				sbuf_addf(sb, "\t\t%s\n", o);
		}
	}
	sbuf_adds(sb, "\n");
}

static void mail_reproduce(struct sbuf *sb, struct mail *m)
{
	json_t *p = json_object_get(m->rep, "parent"), *c = json_object_get(m->rep, "culprit");
	json_t *def = m->def;

	sbuf_adds(sb, "To reproduce:\n\n\t# with bisectd: the culprit against its parent, as a job of its own\n\tbisectctl submit");
	sbuf_adds(sb, " --repo ");
	sh_word(sb, jstr(m->job, "repo"));
	sbuf_addf(sb, " --good %s --bad %s --workload ", jstr(p, "sha"), jstr(c, "sha"));
	sh_word(sb, jstr(m->job, "workload"));
	sbuf_addf(sb, " --pool ");
	sh_word(sb, jstr(m->job, "pool"));
	sbuf_addf(sb, " --runs %lld", json_integer_value(json_object_get(m->job, "runs")));
	if (json_is_string(json_object_get(m->job, "append"))) {
		sbuf_adds(sb, " --append ");
		workload_sh_quote(sb, jstr(m->job, "append"));
	}
	{
		json_t *x;
		size_t i;

		json_array_foreach(json_object_get(m->job, "config"), i, x) {
			sbuf_adds(sb, " --config ");
			workload_sh_quote(sb, json_string_value(x));
		}
	}
	sbuf_adds(sb, "\n\n\t# by hand: build and run the culprit, then its parent\n");
	if (m->url) {
		sbuf_adds(sb, "\tgit clone ");
		sh_word(sb, m->url);
		sbuf_adds(sb, " bisectd-repro && cd bisectd-repro\n");
	}
	for (int i = 0; i < 2; i++) {
		sbuf_addf(sb, "\tgit checkout %s\n", jstr(i ? p : c, "sha"));
		if (json_object_get(def, "kernel")) {
			sbuf_adds(sb, "\t# build the kernel with the config above, boot it");
			if (json_is_string(json_object_get(def, "append")))
				sbuf_addf(sb, " with \"%s\"", jstr(def, "append"));
			sbuf_adds(sb, ", and in it run:\n");
		} else if (json_array_size(json_object_get(def, "build"))) {
			sbuf_adds(sb, "\t");
			sh_argv(sb, json_object_get(def, "build"));
			sbuf_adds(sb, "\n");
		}
		if (!strcmp(jstr(def, "boot"), "none"))
			mail_command(sb, def, "\t");
		else
			sbuf_adds(sb, "\t# (the guest's run_once above)\n");
	}
	sbuf_adds(sb, "\n");
}

int coord_job_report_mail(char **out, struct coord *s, long long id)
{
	struct sbuf sb = SBUF_INIT;
	struct mail m;
	json_t *c, *rep;
	char metric[128];
	size_t i;
	int rc;

	*out = NULL;
	if ((rc = mail_load(&m, s, id))) {
		mail_release(&m);
		return rc;
	}
	rep = m.rep;
	c = json_object_get(rep, "culprit");
	snprintf(metric, sizeof(metric), "%s.%s", jstr(m.job, "workload"), jstr(m.job, "unit"));
	sbuf_addf(&sb, "Subject: [bisectd] %.12s (\"%s\"): %+.1f%% %s\n\n", jstr(c, "sha"), jstr(c, "subject"),
		  m.pct, metric);
	sbuf_addf(&sb, "Hello,\n\nbisectd noticed a %+.1f%% regression of %s on:\n\n", m.pct, metric);
	sbuf_addf(&sb, "commit: %s (\"%s\")\n", jstr(c, "sha"), jstr(c, "subject"));
	sbuf_addf(&sb, "author: %s\n", m.author ? m.author : "(unknown: the mirror is not open)");
	sbuf_addf(&sb, "range:  %s %s..%s, bisectd job %lld (%lld candidate%s, %lld runs)\n\n", jstr(m.job, "repo"),
		  jstr(m.job, "good_ref"), jstr(m.job, "bad_ref"), id,
		  json_integer_value(json_object_get(m.job, "nr_commits")),
		  json_integer_value(json_object_get(m.job, "nr_commits")) == 1 ? "" : "s",
		  json_integer_value(json_object_get(json_object_get(m.job, "progress"), "samples")));
	sbuf_addf(&sb, "in testcase: %s (%s is better)\n", jstr(m.job, "workload"), jstr(m.job, "direction"));
	sbuf_adds(&sb, "on test machine(s):\n");
	for (i = 0; i < m.nr_agents; i++) {
		sbuf_addf(&sb, "\t%s (labels:", m.agents[i].name);
		for (char **l = m.agents[i].labels; l && *l; l++)
			sbuf_addf(&sb, " %s", *l);
		sbuf_addf(&sb, "): %lld tasks, %lld runs of this job", m.agents[i].tasks, m.agents[i].runs);
		mail_level(&sb, rep, m.agents[i].name);
		sbuf_adds(&sb, "\n");
	}
	if (!m.nr_agents)
		sbuf_adds(&sb, "\tnone recorded\n");
	sbuf_adds(&sb, "\n");
	if (m.def)
		mail_params(&sb, &m);
	else
		sbuf_addf(&sb, "workload %s is no longer in bisectd's config: its parameters are unknown\n\n",
			  jstr(m.job, "workload"));
	sbuf_adds(&sb, "details:\n\n");
	if (m.ci)
		sbuf_addf(&sb, "\t%s: %+.2f%% against the parent (95%% interval %+.2f%% to %+.2f%%, bootstrap of the "
			  "hmean ratio)\n", metric, m.pct, m.lo, m.hi);
	sbuf_addf(&sb, "\tMann-Whitney p=%.4f on their own %zu+%zu runs\n",
		  json_number_value(json_object_get(rep, "p_value")), m.parent.n, m.culprit.n);
	if (json_is_number(json_object_get(rep, "posterior")))
		sbuf_addf(&sb, "\tconfidence %.4f: the asked confidence; the runs show two modes (a change that "
			  "shows in some runs only), so the posterior's %.4f is not claimed\n",
			  json_number_value(json_object_get(rep, "confidence")),
			  json_number_value(json_object_get(rep, "posterior")));
	else if (json_is_number(json_object_get(rep, "confidence")))
		sbuf_addf(&sb, "\tconfidence %.4f: the posterior probability that this commit is the culprit\n",
			  json_number_value(json_object_get(rep, "confidence")));
	if (json_is_number(json_object_get(rep, "slow_bad_pct")))
		sbuf_addf(&sb, "\tthe change is in some runs only: %.0f%% of the bad group's runs are slow, %.0f%% of "
			  "the good group's (bisected on that share; confirmed by a sign test of interleaved pairs)\n",
			  json_number_value(json_object_get(rep, "slow_bad_pct")),
			  json_number_value(json_object_get(rep, "slow_good_pct")));
	if (json_is_number(json_object_get(rep, "effect_pct")))
		sbuf_addf(&sb, "\tthe engine's effect: %+.2f%% (95%% interval %+.2f%% to %+.2f%%), the bad group "
			  "against the good\n", json_number_value(json_object_get(rep, "effect_pct")),
			  json_number_value(json_object_get(rep, "effect_lo_pct")),
			  json_number_value(json_object_get(rep, "effect_hi_pct")));
	sbuf_adds(&sb, "\n");
	if (json_is_object(json_object_get(rep, "profiles"))) {
		coord_profile_text(&sb, rep, "\t");
		sbuf_adds(&sb, "\n");
	}
	mail_table(&sb, &m, metric);
	if (m.def)
		mail_reproduce(&sb, &m);
	sbuf_adds(&sb, "-- \nbisectd, a performance-regression bisection service\n");
	*out = sbuf_detach(&sb);
	mail_release(&m);
	return 0;
}
