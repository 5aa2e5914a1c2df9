/*
 * plot: a chart's gnuplot files from a job's numbers (plot.h). Pure: it
 * builds strings; only plot_files_write() touches the file system.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "plot.h"
#include "stats.h"
#include "util.h"

#define SHORT 12         /* hex digits of a commit id on a chart, as bisectctl prints them */
#define MAX_TITLE 200    /* bytes of a title or a subject on a chart */
#define MAX_CANDIDATES 8 /* lines on the posterior's time panel */

static const char *const chart_names[PLOT_NR_CHARTS] = { "timeline", "distribution", "compare", "posterior" };

static const struct {
	const char *ext, *mime, *terminal;
} formats[] = {
	[PLOT_SVG] = { "svg", "image/svg+xml", "svg size %d,%d dynamic font 'Sans,11' background '#ffffff'" },
	[PLOT_PNG] = { "png", "image/png", "pngcairo size %d,%d font 'Sans,10' background '#ffffff'" },
	[PLOT_PDF] = { "pdf", "application/pdf", "pdfcairo size %d/100.0,%d/100.0 font 'Sans,10'" },
};

int plot_chart_find(const char *name)
{
	for (int i = 0; i < PLOT_NR_CHARTS; i++)
		if (!strcmp(name, chart_names[i]))
			return i;
	return -1;
}

const char *plot_chart_name(enum plot_chart c)
{
	return chart_names[c];
}

const char *plot_chart_names(void)
{
	return "timeline, distribution, compare, posterior";
}

int plot_format_find(const char *name)
{
	const char *dot = strrchr(name, '.');
	const char *ext = dot ? dot + 1 : name;

	if (strchr(ext, '/'))
		return -1;
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcasecmp(ext, formats[i].ext))
			return (int)i;
	return -1;
}

const char *plot_format_ext(enum plot_format f)
{
	return formats[f].ext;
}

const char *plot_format_mime(enum plot_format f)
{
	return formats[f].mime;
}

void plot_gp_quote(struct sbuf *sb, const char *s, size_t max)
{
	size_t len = s ? strlen(s) : 0;

	if (len > max) {
		len = max;
		/* Not inside a UTF-8 sequence: back up over continuation bytes. */
		while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
			len--;
	}
	sbuf_add(sb, "'", 1);
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '\'')
			sbuf_add(sb, "''", 2);
		else if (ch < 0x20 || ch == 0x7f)
			sbuf_add(sb, " ", 1);  /* a newline would end the command */
		else
			sbuf_add(sb, &s[i], 1);
	}
	sbuf_add(sb, "'", 1);
}

/* name = 'text' */
static void gp_var(struct sbuf *sb, const char *name, const char *text)
{
	sbuf_addf(sb, "%s = ", name);
	plot_gp_quote(sb, text, MAX_TITLE);
	sbuf_adds(sb, "\n");
}

/* array NAME[n] = ['a', 'b']; at least one element (gnuplot has no empty arrays). */
static void gp_array(struct sbuf *sb, const char *name, const char *const *v, int n)
{
	sbuf_addf(sb, "array %s[%d] = [", name, n > 0 ? n : 1);
	for (int i = 0; i < n; i++) {
		if (i)
			sbuf_adds(sb, ", ");
		plot_gp_quote(sb, v[i], MAX_TITLE);
	}
	if (n <= 0)
		sbuf_adds(sb, "''");
	sbuf_adds(sb, "]\n");
}

static void short_sha(char *buf, const char *sha)
{
	snprintf(buf, SHORT + 1, "%s", sha ? sha : "?");
	for (char *p = buf; *p; p++)  /* hex only, whatever the store held */
		if (!strchr("0123456789abcdef", *p))
			*p = '?';
}

static const char *focus_word(const struct plot_job *j)
{
	return j->culprit >= 0 ? "culprit" : "likely";
}

static int focus_idx(const struct plot_job *j)
{
	return j->culprit >= 0 ? j->culprit : j->likely;
}

static const struct plot_commit *commit_at(const struct plot_job *j, int idx)
{
	return idx >= 0 && idx < j->nr_commits ? &j->commits[idx] : NULL;
}

/* "culprit 0123456789ab", for a tic label. */
static void commit_label(char *buf, size_t n, const struct plot_job *j, int idx)
{
	char sha[SHORT + 1];
	const struct plot_commit *c = commit_at(j, idx);
	const char *role = idx == 0 ? "good" : idx == j->nr_commits - 1 ? "bad" :
			   idx == focus_idx(j) ? focus_word(j) : idx == j->parent ? "parent" : NULL;

	short_sha(sha, c ? c->sha : NULL);
	if (role)
		snprintf(buf, n, "%s %s", role, sha);
	else
		snprintf(buf, n, "%s", sha);
}

static void add_file(struct plot_files *fs, const char *name, struct sbuf *sb)
{
	struct plot_file *f = &fs->f[fs->n++];

	f->name = name;
	f->len = sb->len;
	f->text = sbuf_detach(sb);
}

/* Units a prefix can be put before ("Mops/s"), bare or after one of theirs ("Kbits/s"). */
static const char *const prefixable[] = { "ops/s", "bits/s", "bps", "b/s", "pps", "Bytes/s", "B/s", NULL };

static int is_prefixable(const char *unit)
{
	for (const char *const *u = prefixable; *u; u++)
		if (!strcmp(unit, *u))
			return 1;
	return 0;
}

double plot_axis_scale(char *out, size_t n, const char *unit, double max)
{
	static const char *const words[] = { "", "thousands", "millions", "billions", "trillions" };
	static const char letters[] = "-KMGT";
	const char *base = NULL, *had;
	double div = 1;
	int k = 0, have = 0;

	unit = unit ? unit : "";
	while (k < 4 && isfinite(max) && fabs(max) / div >= 1e4) {
		div *= 1e3;
		k++;
	}
	if (!k) {
		snprintf(out, n, "%s", unit);
		return 1;
	}
	if (is_prefixable(unit)) {
		base = unit;
	} else if (unit[0] && (had = strchr(letters + 1, unit[0] == 'k' ? 'K' : unit[0])) && is_prefixable(unit + 1)) {
		base = unit + 1;
		have = (int)(had - letters);
	}
	if (base && have + k <= 4)
		snprintf(out, n, "%c%s", letters[have + k], base);
	else
		snprintf(out, n, "%s%s(%s)", unit, *unit ? " " : "", words[k]);
	return div;
}

/* The largest value a chart of these jobs draws: a run, or a commit's hmean x (1 + CV). */
static double max_value(const struct plot_job *jobs, size_t nr_jobs)
{
	double max = 0;

	for (size_t o = 0; o < nr_jobs; o++) {
		const struct plot_job *j = &jobs[o];

		for (size_t i = 0; i < j->nr_runs; i++)
			if (j->runs[i].value > max && isfinite(j->runs[i].value))
				max = j->runs[i].value;
		for (int i = 0; i < j->nr_commits; i++) {
			double top = j->commits[i].hmean * (1 + fabs(j->commits[i].cv));

			if (j->commits[i].n > 0 && top > max && isfinite(top))
				max = top;
		}
	}
	return max;
}

static size_t nr_good_runs(const struct plot_job *j)
{
	size_t n = 0;

	for (size_t i = 0; i < j->nr_runs; i++)
		n += j->runs[i].value > 0 && isfinite(j->runs[i].value);
	return n;
}

/* What every chart's variables start with: where it goes, its title, the unit (as plot_axis_scale() made it). */
static void common_vars(struct sbuf *v, enum plot_format f, int w, int h, const struct plot_job *j,
			const char *chart, const char *unit)
{
	const struct plot_commit *c = commit_at(j, focus_idx(j));
	char *title;

	sbuf_adds(v, "# Written by bisectd (bisectd/lib/plot.c) for plots/");
	sbuf_addf(v, "%s.gp.\nset terminal ", chart);
	sbuf_addf(v, formats[f].terminal, w, h);
	sbuf_addf(v, "\nset output 'chart.%s'\nset termoption noenhanced\nset encoding utf8\n", formats[f].ext);
	title = xasprintf("job %lld: %s%s%s, %s", j->id, j->title ? j->title : "",
			  j->variant ? " " : "", j->variant ? j->variant : "", chart);
	gp_var(v, "TITLE", title);
	free(title);
	if (c) {
		char sha[SHORT + 1];

		short_sha(sha, c->sha);
		title = xasprintf("%s %s %s", focus_word(j), sha, c->subject ? c->subject : "");
	} else {
		title = xstrdup("no culprit yet");
	}
	if (j->levels) {
		char *t = xasprintf("%s; runs and hmeans %s", title, j->levels);

		free(title);
		title = t;
	}
	gp_var(v, "SUBTITLE", title);
	free(title);
	gp_var(v, "UNIT", unit);
	sbuf_addf(v, "HIGHER = %d\n", j->higher ? 1 : 0);
}

void plot_at_levels(struct plot_commit *commits, int nr_commits, struct plot_run *runs, size_t nr_runs,
		    const double *scale, int nr_agents)
{
	struct stats_acc *acc = xcalloc((size_t)nr_commits + 1, sizeof(*acc));

	for (size_t i = 0; i < nr_runs; i++) {
		struct plot_run *r = &runs[i];

		if (r->value > 0 && r->agent >= 0 && r->agent < nr_agents && scale[r->agent] > 0)
			r->value /= scale[r->agent];
		if (r->idx >= 0 && r->idx < nr_commits)
			stats_acc_add(&acc[r->idx], r->value);
	}
	for (int c = 0; c < nr_commits; c++) {
		struct summary sum;

		if (acc[c].n == 0)
			continue;
		stats_acc_summary(&sum, &acc[c]);
		commits[c].n = sum.n;
		commits[c].hmean = sum.hmean;
		commits[c].cv = sum.cv;
	}
	free(acc);
}

static int no_runs(const struct plot_job *j)
{
	return err_set(ERR_CONFLICT, "job %lld has no measured runs yet: its charts come with its first "
		       "results", j->id);
}

/* The runs of every measured commit in range order, their hmean (CV), the ends and the culprit. */
static int make_timeline(struct plot_files *fs, enum plot_format f, const struct plot_job *j)
{
	struct sbuf v = SBUF_INIT, runs = SBUF_INIT, commits = SBUF_INIT, tics = SBUF_INIT;
	int *pos = xcalloc((size_t)j->nr_commits + 1, sizeof(*pos)), *seen;
	int n = 0, x_focus = 0;
	char unit[96];
	double div = plot_axis_scale(unit, sizeof(unit), j->unit, max_value(j, 1));

	if (!nr_good_runs(j)) {
		free(pos);
		return no_runs(j);
	}
	for (int i = 0; i < j->nr_commits; i++)
		if (j->commits[i].n > 0)
			pos[i] = ++n;
	seen = xcalloc((size_t)n + 1, sizeof(*seen));
	sbuf_adds(&runs, "# x value agent (x: the commit's place among the measured, jittered)\n");
	for (size_t i = 0; i < j->nr_runs; i++) {
		const struct plot_run *r = &j->runs[i];
		int x = r->idx >= 0 && r->idx < j->nr_commits ? pos[r->idx] : 0;

		if (!x || !(r->value > 0) || !isfinite(r->value))
			continue;
		sbuf_addf(&runs, "%.3f %.9g %d\n", x + ((seen[x]++ % 7) - 3) * 0.05, r->value / div,
			  r->agent >= 0 && r->agent < j->nr_agents ? r->agent : 0);
	}
	sbuf_adds(&commits, "# x hmean lo hi n kind idx (kind: 0 measured, 1 good end, 2 bad end, 3 culprit, "
		  "4 likely, 5 parent)\n");
	sbuf_adds(&tics, "set xtics (");
	for (int i = 0; i < j->nr_commits; i++) {
		const struct plot_commit *c = &j->commits[i];
		int kind = i == 0 ? 1 : i == j->nr_commits - 1 ? 2 : i == j->culprit ? 3 :
			   i == j->likely && j->culprit < 0 ? 4 : i == j->parent ? 5 : 0;
		char label[64];

		if (!pos[i])
			continue;
		if (kind == 3 || kind == 4)
			x_focus = pos[i];
		sbuf_addf(&commits, "%d %.9g %.9g %.9g %zu %d %d\n", pos[i], c->hmean / div,
			  c->hmean * (1 - c->cv) / div, c->hmean * (1 + c->cv) / div, c->n, kind, i);
		commit_label(label, sizeof(label), j, i);
		sbuf_addf(&tics, "%s'%s' %d", pos[i] > 1 ? ", " : "", label, pos[i]);
	}
	sbuf_adds(&tics, ")\n");

	common_vars(&v, f, 1000, 560, j, "timeline", unit);
	sbuf_addf(&v, "N = %d\nFOCUS_X = %d\nNAGENTS = %d\n", n, x_focus, j->nr_agents > 0 ? j->nr_agents : 1);
	gp_var(&v, "FOCUS", focus_word(j));
	gp_array(&v, "AGENT", j->agents, j->nr_agents);
	sbuf_add(&v, tics.buf, tics.len);
	add_file(fs, "vars.gp", &v);
	add_file(fs, "runs.dat", &runs);
	add_file(fs, "commits.dat", &commits);
	sbuf_release(&tics);
	free(seen);
	free(pos);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile of sorted x[0..n), interpolated between order statistics (R's type 7, numpy's default). */
static double quantile(const double *x, size_t n, double q)
{
	double h = (double)(n - 1) * q;
	size_t lo = (size_t)h;

	return lo + 1 < n ? x[lo] + (h - (double)lo) * (x[lo + 1] - x[lo]) : x[n - 1];
}

/* The culprit (or likely one) against its parent and the ends: a box per commit and agent. */
static int make_distribution(struct plot_files *fs, enum plot_format f, const struct plot_job *j)
{
	struct sbuf v = SBUF_INIT, d = SBUF_INIT, box = SBUF_INIT, tics = SBUF_INIT;
	double *vals = xcalloc(j->nr_runs + 1, sizeof(*vals));
	int groups[4], nr_groups = 0, used[64] = { 0 }, nr_used = 0, slot[64], nb = 0;
	int cand[4] = { 0, j->parent, focus_idx(j), j->nr_commits - 1 };
	char unit[96];
	double div = plot_axis_scale(unit, sizeof(unit), j->unit, max_value(j, 1));

	if (!nr_good_runs(j)) {
		free(vals);
		return no_runs(j);
	}
	/* The commits in range order, each once, those with runs only. */
	for (int k = 0; k < 4; k++) {
		int dup = 0;

		if (!commit_at(j, cand[k]) || !commit_at(j, cand[k])->n)
			continue;
		for (int g = 0; g < nr_groups; g++)
			dup |= groups[g] == cand[k];
		if (!dup)
			groups[nr_groups++] = cand[k];
	}
	for (int a = 1; a < nr_groups; a++)
		for (int b = a; b > 0 && groups[b - 1] > groups[b]; b--) {
			int t = groups[b];

			groups[b] = groups[b - 1];
			groups[b - 1] = t;
		}
	/* Which agents measured these commits: one box each when more than one did. */
	for (size_t i = 0; i < j->nr_runs; i++) {
		int a = j->runs[i].agent;

		for (int g = 0; g < nr_groups; g++)
			if (j->runs[i].idx == groups[g] && a >= 0 && a < 64 && !used[a] && j->runs[i].value > 0) {
				used[a] = 1;
				nr_used++;
			}
	}
	for (int a = 0, k = 0; a < 64; a++)
		slot[a] = used[a] ? k++ : 0;
	if (nr_used < 2)
		memset(slot, 0, sizeof(slot));

	sbuf_adds(&d, "# x value agent (x: the box's place, jittered)\n");
	sbuf_adds(&box, "# x q1 min max q3 median n (a box per commit, and per agent when several measured it)\n");
	sbuf_adds(&tics, "set xtics (");
	for (int g = 0; g < nr_groups; g++) {
		int width = nr_used > 1 ? nr_used : 1;

		for (int s = 0; s < width; s++) {
			double x = g * (width + 1) + s + 1;
			char label[96];
			int k = 0;

			for (size_t i = 0; i < j->nr_runs; i++) {
				const struct plot_run *r = &j->runs[i];

				if (r->idx != groups[g] || !(r->value > 0) || !isfinite(r->value) ||
				    (nr_used > 1 && (r->agent < 0 || r->agent >= 64 || slot[r->agent] != s)))
					continue;
				vals[k] = r->value / div;
				sbuf_addf(&d, "%.3f %.9g %d\n", x + ((k % 7) - 3) * 0.04, vals[k],
					  r->agent >= 0 ? r->agent : 0);
				k++;
			}
			if (!k)
				continue;
			qsort(vals, (size_t)k, sizeof(*vals), cmp_double);
			sbuf_addf(&box, "%g %.9g %.9g %.9g %.9g %.9g %d\n", x, quantile(vals, (size_t)k, 0.25), vals[0],
				  vals[k - 1], quantile(vals, (size_t)k, 0.75), quantile(vals, (size_t)k, 0.5), k);
			commit_label(label, sizeof(label), j, groups[g]);
			if (nr_used > 1) {
				for (int a = 0; a < 64; a++)
					if (used[a] && slot[a] == s && a < j->nr_agents) {
						size_t l = strlen(label);

						snprintf(label + l, sizeof(label) - l, " @%.32s", j->agents[a]);
					}
			}
			sbuf_addf(&tics, "%s", nb ? ", " : "");
			plot_gp_quote(&tics, label, sizeof(label));
			sbuf_addf(&tics, " %g", x);
			nb++;
		}
	}
	sbuf_adds(&tics, ")\n");
	free(vals);
	if (!nb) {
		sbuf_release(&d);
		sbuf_release(&box);
		sbuf_release(&tics);
		return no_runs(j);
	}
	common_vars(&v, f, 1000, 560, j, "distribution", unit);
	sbuf_addf(&v, "NB = %d\nXMAX = %d\nNAGENTS = %d\n", nb,
		  nr_groups * ((nr_used > 1 ? nr_used : 1) + 1), j->nr_agents > 0 ? j->nr_agents : 1);
	gp_array(&v, "AGENT", j->agents, j->nr_agents);
	sbuf_add(&v, tics.buf, tics.len);
	add_file(fs, "vars.gp", &v);
	add_file(fs, "dist.dat", &d);
	add_file(fs, "box.dat", &box);
	sbuf_release(&tics);
	return 0;
}

static const struct plot_commit *commit_by_sha(const struct plot_job *j, const char *sha)
{
	for (int i = 0; sha && i < j->nr_commits; i++)
		if (j->commits[i].sha && !strcmp(j->commits[i].sha, sha))
			return &j->commits[i];
	return NULL;
}

/* hmean (CV) of the first job's ends, parent and culprit, in each job: one bar per variant. */
static int make_compare(struct plot_files *fs, enum plot_format f, const struct plot_job *jobs, size_t nr_jobs)
{
	const struct plot_job *j = &jobs[0];
	struct sbuf v = SBUF_INIT, d = SBUF_INIT;
	const char **names = xcalloc(nr_jobs, sizeof(*names));
	char **owned = xcalloc(nr_jobs, sizeof(*owned));
	int rows[4] = { 0, j->parent, focus_idx(j), j->nr_commits - 1 }, nr_rows = 0, done[4];
	char unit[96];
	double div = plot_axis_scale(unit, sizeof(unit), j->unit, max_value(jobs, nr_jobs));

	if (!nr_good_runs(j)) {
		free(names);
		free(owned);
		return no_runs(j);
	}
	sbuf_adds(&d, "# kernel, then hmean and hmean x CV of each variant (? not measured)\n");
	for (int k = 0; k < 4; k++) {
		const struct plot_commit *c = commit_at(j, rows[k]);
		char label[64];
		int dup = 0;

		for (int r = 0; r < nr_rows; r++)
			dup |= done[r] == rows[k];
		if (!c || dup)
			continue;
		done[nr_rows++] = rows[k];
		commit_label(label, sizeof(label), j, rows[k]);
		sbuf_addf(&d, "\"%s\"", label);
		for (size_t o = 0; o < nr_jobs; o++) {
			const struct plot_commit *oc = commit_by_sha(&jobs[o], c->sha);

			if (oc && oc->n > 0)
				sbuf_addf(&d, " %.9g %.9g", oc->hmean / div, oc->hmean * oc->cv / div);
			else
				sbuf_adds(&d, " ? ?");
		}
		sbuf_adds(&d, "\n");
	}
	for (size_t o = 0; o < nr_jobs; o++) {
		owned[o] = xasprintf("%s (job %lld)", jobs[o].variant ? jobs[o].variant : "no variant", jobs[o].id);
		names[o] = owned[o];
	}
	common_vars(&v, f, 1000, 560, j, "compare", unit);
	sbuf_addf(&v, "NV = %zu\nNK = %d\n", nr_jobs, nr_rows);
	gp_array(&v, "VARIANT", names, (int)nr_jobs);
	add_file(fs, "vars.gp", &v);
	add_file(fs, "compare.dat", &d);
	for (size_t o = 0; o < nr_jobs; o++)
		free(owned[o]);
	free(owned);
	free(names);
	return 0;
}

/* The posterior's top commits at the last decision, and each one's probability over the decisions. */
static int make_posterior(struct plot_files *fs, enum plot_format f, const struct plot_job *j)
{
	struct sbuf v = SBUF_INIT, last = SBUF_INIT, over = SBUF_INIT, tics = SBUF_INIT, ph = SBUF_INIT;
	int cand[MAX_CANDIDATES], nr_cand = 0, nr_ph = 0;
	double best[MAX_CANDIDATES];
	const struct plot_decision *end = NULL;
	const char *labels[MAX_CANDIDATES];
	char label_buf[MAX_CANDIDATES][64];
	const char *prev_state = "";

	if (!nr_good_runs(j))
		return no_runs(j);
	for (size_t i = 0; i < j->nr_decisions; i++)
		if (j->decisions[i].nr_top > 0)
			end = &j->decisions[i];
	if (!end)
		return err_set(ERR_CONFLICT, "job %lld has no posterior yet: the engine (policy bisectd) "
			       "keeps one once the ends differ", j->id);
	/* The candidates: each commit that was ever in the top, by the highest probability it had. */
	for (size_t i = 0; i < j->nr_decisions; i++) {
		const struct plot_decision *d = &j->decisions[i];

		for (int t = 0; t < d->nr_top && t < PLOT_TOP_MAX; t++) {
			int k, idx = d->top_idx[t];
			double p = d->top_p[t];

			if (!commit_at(j, idx))
				continue;
			for (k = 0; k < nr_cand && cand[k] != idx; k++)
				;
			if (k < nr_cand) {
				if (p > best[k])
					best[k] = p;
			} else if (nr_cand < MAX_CANDIDATES) {
				cand[nr_cand] = idx;
				best[nr_cand++] = p;
			} else {
				int low = 0;

				for (k = 1; k < nr_cand; k++)
					if (best[k] < best[low])
						low = k;
				if (p > best[low]) {
					cand[low] = idx;
					best[low] = p;
				}
			}
		}
	}
	for (int a = 1; a < nr_cand; a++)  /* in range order */
		for (int b = a; b > 0 && cand[b - 1] > cand[b]; b--) {
			int t = cand[b];
			double tp = best[b];

			cand[b] = cand[b - 1];
			best[b] = best[b - 1];
			cand[b - 1] = t;
			best[b - 1] = tp;
		}

	sbuf_adds(&last, "# x p kind (the last decision's top; kind 1: the culprit or likely one)\n");
	sbuf_adds(&tics, "set xtics (");
	for (int t = 0; t < end->nr_top && t < PLOT_TOP_MAX; t++) {
		char label[64];

		if (!commit_at(j, end->top_idx[t]))
			continue;
		commit_label(label, sizeof(label), j, end->top_idx[t]);
		sbuf_addf(&last, "%d %.9g %d\n", t + 1, end->top_p[t], end->top_idx[t] == focus_idx(j));
		sbuf_addf(&tics, "%s'%s' %d", t ? ", " : "", label, t + 1);
	}
	sbuf_adds(&tics, ")\n");

	sbuf_adds(&over, "# one block (gnuplot index) per candidate: seconds since the job's start, p "
		  "(? not among the five most probable then)\n");
	for (int k = 0; k < nr_cand; k++) {
		if (k)
			sbuf_adds(&over, "\n\n");
		for (size_t i = 0; i < j->nr_decisions; i++) {
			const struct plot_decision *d = &j->decisions[i];
			int t;

			if (d->nr_top <= 0)
				continue;
			for (t = 0; t < d->nr_top && d->top_idx[t] != cand[k]; t++)
				;
			if (t < d->nr_top)
				sbuf_addf(&over, "%lld %.9g\n", d->time - j->created, d->top_p[t]);
			else
				sbuf_addf(&over, "%lld ?\n", d->time - j->created);
		}
		commit_label(label_buf[k], sizeof(label_buf[k]), j, cand[k]);
		labels[k] = label_buf[k];
	}
	/* Where the engine's phase changed (ends, search, confirm, done). */
	for (size_t i = 0; i < j->nr_decisions; i++) {
		const char *st = j->decisions[i].state ? j->decisions[i].state : "";

		if (!strcmp(st, prev_state))
			continue;
		prev_state = st;
		sbuf_addf(&ph, "set arrow from %lld, graph 0 to %lld, graph 1 nohead lc rgb '#bbbbbb' dt 3\n",
			  j->decisions[i].time - j->created, j->decisions[i].time - j->created);
		sbuf_addf(&ph, "set label %d ", ++nr_ph + 100);
		plot_gp_quote(&ph, st, 16);
		sbuf_addf(&ph, " at %lld, graph 0.96 offset 0.3,0 font ',8' tc rgb '#777777'\n",
			  j->decisions[i].time - j->created);
	}

	common_vars(&v, f, 1000, 720, j, "posterior", j->unit ? j->unit : "");
	sbuf_addf(&v, "NTOP = %d\nNC = %d\nNDEC = %zu\n", end->nr_top, nr_cand, j->nr_decisions);
	gp_array(&v, "CAND", labels, nr_cand);
	add_file(fs, "vars.gp", &v);
	add_file(fs, "top.dat", &last);
	add_file(fs, "over.dat", &over);
	add_file(fs, "top_tics.gp", &tics);
	add_file(fs, "phases.gp", &ph);
	return 0;
}

static const char *template_text(enum plot_chart c)
{
	char name[32];

	snprintf(name, sizeof(name), "%s.gp", chart_names[c]);
	for (int i = 0; i < plot_nr_templates; i++)
		if (!strcmp(plot_templates[i].name, name))
			return plot_templates[i].text;
	return NULL;
}

int plot_files_make(struct plot_files *out, enum plot_chart c, enum plot_format f,
		    const struct plot_job *jobs, size_t nr_jobs)
{
	struct sbuf tpl = SBUF_INIT;
	const char *text;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((int)c < 0 || c >= PLOT_NR_CHARTS || (int)f < 0 || f > PLOT_PDF || !nr_jobs)
		return err_set(ERR_INVALID, "no such chart or format");
	if (!(text = template_text(c)))
		return err_set(ERR_FAIL, "the template plots/%s.gp is not compiled in", chart_names[c]);
	switch (c) {
	case PLOT_TIMELINE: rc = make_timeline(out, f, &jobs[0]); break;
	case PLOT_DISTRIBUTION: rc = make_distribution(out, f, &jobs[0]); break;
	case PLOT_COMPARE: rc = make_compare(out, f, jobs, nr_jobs); break;
	default: rc = make_posterior(out, f, &jobs[0]); break;
	}
	if (rc)
		return rc;
	sbuf_adds(&tpl, text);
	add_file(out, "chart.gp", &tpl);
	return 0;
}

const struct plot_file *plot_files_get(const struct plot_files *fs, const char *name)
{
	for (int i = 0; i < fs->n; i++)
		if (!strcmp(fs->f[i].name, name))
			return &fs->f[i];
	return NULL;
}

void plot_files_release(struct plot_files *fs)
{
	for (int i = 0; i < fs->n; i++)
		free(fs->f[i].text);
	memset(fs, 0, sizeof(*fs));
}

int plot_files_write(const struct plot_files *fs, const char *dir)
{
	for (int i = 0; i < fs->n; i++) {
		char *path = xasprintf("%s/%s", dir, fs->f[i].name);
		int rc = file_write_atomic(path, fs->f[i].text, fs->f[i].len);

		free(path);
		if (rc)
			return rc;
	}
	return 0;
}
