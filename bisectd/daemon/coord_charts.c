/*
 * coord_charts: a job's charts (coord.h's coord_job_chart). Reads what a
 * chart shows under the coordinator's lock, then, outside it, has
 * lib/plot.c make gnuplot's files in a scratch folder and runs gnuplot
 * there as a child (lib/run.h: argv, no shell, a deadline, bounded
 * output). The result is kept in the charts folder under a name that
 * carries the job's stamp, so a chart is drawn again only when its job
 * changed; files are written atomically, so a reader never sees half.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coord_internal.h"
#include "err.h"
#include "log.h"
#include "plot.h"
#include "run.h"
#include "store_charts.h"
#include "util.h"

#define MAX_DRAWING 2          /* gnuplots at once: more wait their turn, up to MAX_WAIT_S */
#define MAX_WAIT_S 20          /* then a 503 (a job page asks for four charts at once) */
#define MAX_VARIANTS 8         /* jobs on one compare chart */
#define MAX_CHART (32u << 20)  /* bytes of a chart; gnuplot's are far smaller */
#define MAX_GP_OUTPUT (64u << 10)

static pthread_mutex_t drawing_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t drawing_done = PTHREAD_COND_INITIALIZER;
static int drawing;

/* One job's rows as the store gave them, and the plot structs pointing into them. */
struct chart_job {
	struct job job;
	int have_job;
	struct commit_row *rows;
	int nr_rows;
	struct job_commit *dag;
	int nr_dag;
	struct sample *samples;
	size_t nr_samples;
	struct decision_row *dec;
	size_t nr_dec;
	char *title;
	char *variant;    /* the job's append and config options, for the compare chart; NULL: none */
	struct plot_commit *pc;
	struct plot_run *pr;
	struct plot_decision *pd;
	const char **agent_names;
	int nr_agents;
	char *levels;     /* "at lab1's level: lab2 -15.00%"; NULL: the runs as measured */
	struct plot_job pj;
};

static void chart_job_release(struct chart_job *c)
{
	if (c->have_job)
		store_job_release(&c->job);
	store_commit_rows_free(c->rows, c->nr_rows);
	store_job_commits_free(c->dag, c->nr_dag);
	free(c->samples);
	free(c->dec);
	free(c->title);
	free(c->variant);
	free(c->pc);
	free(c->pr);
	free(c->pd);
	free(c->agent_names);
	free(c->levels);
	memset(c, 0, sizeof(*c));
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * With two agents or more, the runs and hmeans at the reference agent's
 * level, as the report's table and the job's commits are
 * (coord_job_agents()): each run divided by its agent's level, and c->levels
 * says so on the chart. An agent whose level is not known yet keeps its
 * runs as measured, and the note names it. Under s->lock.
 */
static int chart_levels(struct coord *s, struct chart_job *c, long long id)
{
	json_t *agents = NULL, *a;
	double *scale;
	struct sbuf sb = SBUF_INIT;
	const char *ref = "the reference";
	size_t i;
	int rc;

	if ((rc = coord_job_agents(&agents, s, id)) || !agents)
		return rc;
	scale = xcalloc((size_t)c->nr_agents + 1, sizeof(*scale));
	json_array_foreach(agents, i, a) {
		const char *name = json_string_value(json_object_get(a, "name"));

		if (json_is_true(json_object_get(a, "reference")) && name)
			ref = name;
		for (int k = 0; name && k < c->nr_agents; k++)
			if (!strcmp(c->agent_names[k], name) && json_is_number(json_object_get(a, "level_pct")))
				scale[k] = 1 + json_number_value(json_object_get(a, "level_pct")) / 100;
	}
	plot_at_levels(c->pc, c->nr_rows, c->pr, c->nr_samples, scale, c->nr_agents);
	sbuf_addf(&sb, "at %s's level:", ref);
	json_array_foreach(agents, i, a) {
		const char *name = json_string_value(json_object_get(a, "name"));
		const char *sep = sb.buf[sb.len - 1] == ':' ? " " : ", ";

		if (json_is_true(json_object_get(a, "reference")))
			continue;
		if (json_is_number(json_object_get(a, "level_pct")))
			sbuf_addf(&sb, "%s%s %+.2f%%", sep, name ? name : "?",
				  json_number_value(json_object_get(a, "level_pct")));
		else
			sbuf_addf(&sb, "%s%s as measured (its level not known yet)", sep, name ? name : "?");
	}
	c->levels = sbuf_detach(&sb);
	sbuf_release(&sb);
	free(scale);
	json_decref(agents);
	return 0;
}

/*
 * Loads job id into c and fills c->pj; agents (all of them, borrowed)
 * name the runs' agents. Under s->lock.
 */
static int chart_job_load(struct coord *s, struct chart_job *c, long long id, const struct agent *agents,
			  size_t nr_agents)
{
	int rc, focus;

	if ((rc = store_job_get(&c->job, s->st, id)))
		return rc;
	c->have_job = 1;
	if ((rc = store_commit_rows(&c->rows, &c->nr_rows, s->st, id)) ||
	    (rc = store_job_commits(&c->dag, &c->nr_dag, s->st, id)) ||
	    (rc = store_job_samples(&c->samples, &c->nr_samples, s->st, id)) ||
	    (rc = store_decision_rows(&c->dec, &c->nr_dec, s->st, id)))
		return rc;

	c->pc = xcalloc((size_t)c->nr_rows + 1, sizeof(*c->pc));
	for (int i = 0; i < c->nr_rows; i++) {
		const struct commit_row *r = &c->rows[i];

		if (r->idx != i)
			return err_set(ERR_FAIL, "job %lld: commit %d is stored as idx %d", id, i, r->idx);
		c->pc[i] = (struct plot_commit){ i, r->sha, r->subject, r->sum.n, r->sum.hmean, r->sum.cv };
	}
	/* The agents that measured, by name, so that each keeps its colour on every chart. */
	c->agent_names = xcalloc(nr_agents + 1, sizeof(*c->agent_names));
	for (size_t i = 0; i < c->nr_samples; i++)
		for (size_t a = 0; a < nr_agents; a++) {
			int k;

			if (agents[a].id != c->samples[i].agent)
				continue;
			for (k = 0; k < c->nr_agents && strcmp(c->agent_names[k], agents[a].name); k++)
				;
			if (k == c->nr_agents)
				c->agent_names[c->nr_agents++] = agents[a].name;
		}
	qsort(c->agent_names, (size_t)c->nr_agents, sizeof(*c->agent_names), by_name);
	c->pr = xcalloc(c->nr_samples + 1, sizeof(*c->pr));
	for (size_t i = 0; i < c->nr_samples; i++) {
		const char *name = NULL;

		for (size_t a = 0; a < nr_agents && !name; a++)
			if (agents[a].id == c->samples[i].agent)
				name = agents[a].name;
		c->pr[i] = (struct plot_run){ c->samples[i].idx, c->samples[i].value, -1 };
		for (int k = 0; name && k < c->nr_agents; k++)
			if (!strcmp(c->agent_names[k], name))
				c->pr[i].agent = k;
	}
	c->pd = xcalloc(c->nr_dec + 1, sizeof(*c->pd));
	for (size_t i = 0; i < c->nr_dec; i++) {
		struct plot_decision *d = &c->pd[i];

		d->time = c->dec[i].time;
		d->state = c->dec[i].state;
		d->nr_top = c->dec[i].nr_top;
		memcpy(d->top_idx, c->dec[i].top_idx, sizeof(d->top_idx));
		memcpy(d->top_p, c->dec[i].top_p, sizeof(d->top_p));
	}

	if ((rc = chart_levels(s, c, id)))
		return rc;
	c->title = xasprintf("%s %s..%s", c->job.workload, c->job.good_ref, c->job.bad_ref);
	/* Both variants name a bar: "mitigations=off", "CONFIG_MITIGATION_RETPOLINE=n", or both. */
	if (c->job.config) {
		json_t *cfg = json_loads(c->job.config, 0, NULL), *x;
		struct sbuf sb = SBUF_INIT;
		size_t i;

		if (c->job.append)
			sbuf_adds(&sb, c->job.append);
		json_array_foreach(cfg, i, x)
			sbuf_addf(&sb, "%s%s", sb.len ? " " : "", json_string_value(x) ? json_string_value(x) : "?");
		json_decref(cfg);
		c->variant = sb.len ? sbuf_detach(&sb) : NULL;
		sbuf_release(&sb);
	}
	c->pj = (struct plot_job){ .id = id, .title = c->title,
				   .variant = c->variant ? c->variant : c->job.append, .unit = c->job.unit,
				   .higher = c->job.higher, .created = c->job.created, .commits = c->pc,
				   .nr_commits = c->nr_rows, .runs = c->pr, .nr_runs = c->nr_samples,
				   .agents = c->agent_names, .nr_agents = c->nr_agents, .decisions = c->pd,
				   .nr_decisions = c->nr_dec, .culprit = c->job.culprit, .likely = -1, .parent = -1,
				   .levels = c->levels };
	if (c->job.culprit >= c->nr_rows)
		c->pj.culprit = -1;
	/* Undecided or still running: the most probable commit at the last decision that had one. */
	for (size_t i = c->nr_dec; i-- > 0 && c->pj.likely < 0;)
		if (c->dec[i].nr_top > 0 && c->dec[i].top_idx[0] > 0 && c->dec[i].top_idx[0] < c->nr_rows)
			c->pj.likely = c->dec[i].top_idx[0];
	focus = c->pj.culprit >= 0 ? c->pj.culprit : c->pj.likely;
	if (focus > 0 && focus < c->nr_dag && c->dag[focus].nr_parents > 0)
		c->pj.parent = c->dag[focus].parents[0];
	return 0;
}

/* FNV-1a: a short name for a stamp in a file name. */
static unsigned long long fnv1a(const char *s)
{
	unsigned long long h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* The stamps of the jobs the chart shows, as one key; the job ids in *ids (the caller's). */
static int chart_key(struct coord *s, char **key, long long **ids, size_t *nr_ids, long long id,
		     enum plot_chart chart)
{
	struct sbuf sb = SBUF_INIT;
	struct job_stamp st;
	int rc;

	*key = NULL;
	*ids = NULL;
	*nr_ids = 0;
	if ((rc = store_job_stamp(&st, s->st, id)))
		return rc;
	if (chart == PLOT_COMPARE) {
		long long *sib = NULL;
		size_t n = 0;

		if ((rc = store_job_siblings(&sib, &n, s->st, id, MAX_VARIANTS * 4)))
			return rc;
		/* The job first, then the others of its range, oldest first, at most MAX_VARIANTS in all. */
		*ids = xcalloc(n + 1, sizeof(**ids));
		(*ids)[(*nr_ids)++] = id;
		for (size_t i = 0; i < n && *nr_ids < MAX_VARIANTS; i++)
			if (sib[i] != id)
				(*ids)[(*nr_ids)++] = sib[i];
		free(sib);
	} else {
		*ids = xcalloc(1, sizeof(**ids));
		(*ids)[(*nr_ids)++] = id;
	}
	for (size_t i = 0; i < *nr_ids; i++) {
		if (i && (rc = store_job_stamp(&st, s->st, (*ids)[i])))
			goto out;
		sbuf_addf(&sb, "%lld:%lld:%lld:%lld:%lld:%s;", (*ids)[i], st.last_sample, st.nr_samples,
			  st.last_decision, st.finished, st.state);
	}
	*key = xasprintf("%016llx", fnv1a(sb.buf));
out:
	sbuf_release(&sb);
	if (rc) {
		free(*ids);
		*ids = NULL;
		*nr_ids = 0;
	}
	return rc;
}

/* Removes the job's other drawings of this chart in this format: they are of an older state. */
static void drop_stale(const char *dir, const char *chart, const char *ext, const char *keep)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = strlen(chart), m = strlen(ext);

	while (d && (e = readdir(d))) {
		size_t l = strlen(e->d_name);

		if (!strncmp(e->d_name, chart, n) && e->d_name[n] == '-' && l > m + 1 &&
		    e->d_name[l - m - 1] == '.' && !strcmp(e->d_name + l - m, ext) && strcmp(e->d_name, keep)) {
			char *path = xasprintf("%s/%s", dir, e->d_name);

			unlink(path);
			free(path);
		}
	}
	if (d)
		closedir(d);
}

/* Runs gnuplot on the files in dir; its chart is dir/chart.EXT. */
static int draw(struct coord *s, const char *dir)
{
	const char *argv[] = { s->conf->gnuplot, "vars.gp", "chart.gp", NULL };
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	char how[64];
	int rc;

	o.argv = argv;
	o.cwd = dir;
	o.timeout_ms = s->conf->chart_timeout * 1000;
	o.max_output = MAX_GP_OUTPUT;
	if ((rc = run_cmd(&res, &o)))
		return rc;
	if (res.timed_out)
		rc = err_set(ERR_TIMEOUT, "gnuplot did not draw the chart within %d s (chart_timeout): it was "
			     "killed", s->conf->chart_timeout);
	else if (res.exited && res.status == 127)
		rc = err_set(ERR_FAIL, "cannot draw charts: '%s' is not installed (make deps installs gnuplot-nox) "
			     "or not in bisectd's PATH", s->conf->gnuplot);
	else if (!run_ok(&res))
		rc = err_set(ERR_FAIL, "gnuplot failed (%s): %s", run_describe(&res, how, sizeof(how)),
			     run_tail(res.err, 300));
	run_result_release(&res);
	return rc;
}

/* Draws the chart of the loaded jobs into *out; cache is where it is kept. */
static int render(struct coord *s, char **out, size_t *len, enum plot_chart chart, enum plot_format fmt,
		  const struct plot_job *pj, size_t nr, const char *cache)
{
	struct plot_files fs;
	char *tmp = xasprintf("%s/.draw-XXXXXX", s->conf->charts), *path = NULL;
	int rc, made = 0;

	*out = NULL;
	*len = 0;
	if ((rc = plot_files_make(&fs, chart, fmt, pj, nr)))
		goto out;
	if (mkdir_p(s->conf->charts, 0755) || !mkdtemp(tmp)) {
		rc = err_set(ERR_FAIL, "cannot make a folder for drawing in %s (the charts setting)", s->conf->charts);
		goto out;
	}
	made = 1;
	if ((rc = plot_files_write(&fs, tmp)) || (rc = draw(s, tmp)))
		goto out;
	path = xasprintf("%s/chart.%s", tmp, plot_format_ext(fmt));
	if ((rc = file_read(out, len, path, MAX_CHART)))
		goto out;
	if (*len == 0) {
		rc = err_set(ERR_FAIL, "gnuplot wrote an empty chart");
		goto out;
	}
	/*
	 * Kept by a rename from the scratch folder (the same file system): a
	 * reader sees the whole chart or none, also when two requests drew it
	 * at once. A failure costs a drawing next time, nothing else.
	 */
	if (rename(path, cache) < 0)
		log_warn("charts: cannot keep %s: %s", cache, strerror(errno));
out:
	if (rc) {
		free(*out);
		*out = NULL;
		*len = 0;
	}
	if (made)
		remove_tree(tmp);
	plot_files_release(&fs);
	free(path);
	free(tmp);
	return rc;
}

int coord_job_chart(char **out, size_t *len, const char **type, struct coord *s, long long id,
		    const char *chart_name, const char *format)
{
	struct chart_job jobs[MAX_VARIANTS];
	struct plot_job pj[MAX_VARIANTS];
	struct agent *agents = NULL;
	size_t nr_agents = 0, nr_ids = 0, nr = 0;
	long long *ids = NULL;
	char *key = NULL, *dir = NULL, *file = NULL, *cache = NULL;
	int chart = plot_chart_find(chart_name), fmt = plot_format_find(format), rc, busy = 0;

	*out = NULL;
	*len = 0;
	*type = NULL;
	memset(jobs, 0, sizeof(jobs));
	if (chart < 0)
		return err_set(ERR_NOTFOUND, "no chart '%s': the charts are %s", chart_name, plot_chart_names());
	if (fmt < 0 || strchr(format, '.'))
		return err_set(ERR_NOTFOUND, "no chart format '%s': svg, png or pdf", format);

	pthread_mutex_lock(&s->lock);
	rc = chart_key(s, &key, &ids, &nr_ids, id, chart);
	pthread_mutex_unlock(&s->lock);
	if (rc)
		goto out;
	dir = xasprintf("%s/job-%lld", s->conf->charts, id);
	file = xasprintf("%s-%s.%s", plot_chart_name(chart), key, plot_format_ext(fmt));
	cache = xasprintf("%s/%s", dir, file);
	if (access(cache, R_OK) == 0 && file_read(out, len, cache, MAX_CHART) == 0 && *len > 0)
		goto done;
	free(*out);
	*out = NULL;
	*len = 0;

	/*
	 * A turn among MAX_DRAWING: the dashboard's job page asks for its four
	 * charts at once, and refusing two of them made half the page a 503.
	 */
	{
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += MAX_WAIT_S;
		pthread_mutex_lock(&drawing_lock);
		while (drawing >= MAX_DRAWING &&
		       pthread_cond_timedwait(&drawing_done, &drawing_lock, &until) == 0)
			;
		busy = drawing >= MAX_DRAWING;
		if (!busy)
			drawing++;
		pthread_mutex_unlock(&drawing_lock);
	}
	if (busy) {
		busy = 0;
		rc = err_set(ERR_BUSY, "%d charts have been drawing for %d s: try again in a few seconds",
			     MAX_DRAWING, MAX_WAIT_S);
		goto out;
	}
	busy = 1;

	pthread_mutex_lock(&s->lock);
	rc = store_agents_live(&agents, &nr_agents, s->st, 0);
	for (size_t i = 0; !rc && i < nr_ids; i++, nr++)
		rc = chart_job_load(s, &jobs[i], ids[i], agents, nr_agents);
	pthread_mutex_unlock(&s->lock);
	if (rc)
		goto out;
	for (size_t i = 0; i < nr; i++)
		pj[i] = jobs[i].pj;
	if ((rc = mkdir_p(dir, 0755))) {
		rc = err_set(ERR_FAIL, "cannot make the charts folder %s", dir);
		goto out;
	}
	if ((rc = render(s, out, len, chart, fmt, pj, nr, cache)))
		goto out;
	drop_stale(dir, plot_chart_name(chart), plot_format_ext(fmt), file);
done:
	*type = plot_format_mime(fmt);
out:
	if (busy) {
		pthread_mutex_lock(&drawing_lock);
		drawing--;
		pthread_cond_signal(&drawing_done);
		pthread_mutex_unlock(&drawing_lock);
	}
	for (size_t i = 0; i < nr; i++)
		chart_job_release(&jobs[i]);
	store_agents_free(agents, nr_agents);
	free(ids);
	free(key);
	free(dir);
	free(file);
	free(cache);
	return rc;
}
