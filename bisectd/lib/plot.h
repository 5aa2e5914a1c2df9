/*
 * plot: the pure part of the charts. From a job's commits, runs and
 * decisions (plain structs, no store), makes the files one gnuplot run
 * reads: the template of the chart (plots/NAME.gp, compiled in), a
 * variables script it is loaded after (terminal, output, titles, tic
 * labels, counts), and its data files. The caller writes them into a
 * directory of its own and runs `gnuplot vars.gp chart.gp` there
 * (argv, no shell; see coord_charts.c): the output is chart.EXT.
 *
 * Text that comes from a repository (subjects, refs) reaches gnuplot only
 * as single-quoted strings in vars.gp, made by plot_gp_quote(); data files
 * hold numbers and hex ids only.
 */
#ifndef BISECT_PLOT_H
#define BISECT_PLOT_H

#include <stddef.h>

#include "util.h"

enum plot_chart { PLOT_TIMELINE, PLOT_DISTRIBUTION, PLOT_COMPARE, PLOT_POSTERIOR, PLOT_NR_CHARTS };
enum plot_format { PLOT_SVG, PLOT_PNG, PLOT_PDF };

/* The chart of that name; -1 when none. */
int plot_chart_find(const char *name);
const char *plot_chart_name(enum plot_chart c);
/* "timeline, distribution, compare, posterior", for messages. */
const char *plot_chart_names(void);

/* The format of a file name's extension (".svg", ".png", ".pdf"; or the bare word); -1 when none. */
int plot_format_find(const char *name_or_path);
const char *plot_format_ext(enum plot_format f);   /* "svg" */
const char *plot_format_mime(enum plot_format f);  /* "image/svg+xml" */

/* The templates, from the files plots/NAME.gp (plot_gp.c, generated). */
struct plot_template {
	const char *name;
	const char *text;
};
extern const struct plot_template plot_templates[];
extern const int plot_nr_templates;

struct plot_commit {
	int idx;
	const char *sha, *subject;   /* sha: 40 hex digits */
	size_t n;                    /* successful runs; 0: not measured */
	double hmean, cv;
};

struct plot_run {
	int idx;
	double value;                /* <= 0: a failed run, not drawn */
	int agent;                   /* index into the job's agents; -1: unknown */
};

#define PLOT_TOP_MAX 5
struct plot_decision {
	long long time;
	const char *state;
	int nr_top;
	int top_idx[PLOT_TOP_MAX];
	double top_p[PLOT_TOP_MAX];
};

/* One job, as the charts see it; everything borrowed. */
struct plot_job {
	long long id;
	const char *title;           /* "demo bench v1.0..main" */
	const char *variant;         /* kernel command line variant; NULL: none */
	const char *unit;
	int higher;                  /* higher is better */
	long long created;
	const struct plot_commit *commits;  /* by idx: commits[i].idx == i */
	int nr_commits;
	const struct plot_run *runs;
	size_t nr_runs;
	const char *const *agents;   /* names */
	int nr_agents;
	const struct plot_decision *decisions;  /* oldest first */
	size_t nr_decisions;
	const char *levels;          /* "at lab1's level: lab2 -15.00%" (plot_at_levels()); NULL: as measured */
	int culprit;                 /* idx; -1: none named */
	int likely;                  /* the most probable commit when none is named; -1: none */
	int parent;                  /* idx of the parent of the culprit (or the likely one); -1: none */
};

#define PLOT_MAX_FILES 6
struct plot_file {
	const char *name;            /* "vars.gp", "chart.gp", "runs.dat", ... */
	char *text;                  /* owned */
	size_t len;
};
struct plot_files {
	struct plot_file f[PLOT_MAX_FILES];
	int n;
};

/*
 * With two agents or more at levels of their own: each run divided by
 * its agent's scale[agent] (1 + its level against the reference; 0 or
 * a run without an agent: as measured), and each commit's n, hmean and
 * CV made again from its runs so divided. A commit's pooled hmean mixes
 * the agents' levels in the share of its runs each took: on a timeline
 * a commit measured mostly on the slower agent dips where its code does
 * not. The caller says so in the job's levels.
 */
void plot_at_levels(struct plot_commit *commits, int nr_commits, struct plot_run *runs, size_t nr_runs,
		    const double *scale, int nr_agents);

/*
 * Makes the files of chart c in format f for jobs[0] (compare: jobs[0]
 * against the other jobs, variants of the same range). ERR_CONFLICT,
 * with a message for the user, when the job has nothing the chart can
 * show yet (no runs; for posterior, no decisions). Release out with
 * plot_files_release() either way.
 */
int plot_files_make(struct plot_files *out, enum plot_chart c, enum plot_format f,
		    const struct plot_job *jobs, size_t nr_jobs);
/* The file of that name, or NULL. Borrowed. */
const struct plot_file *plot_files_get(const struct plot_files *fs, const char *name);
void plot_files_release(struct plot_files *fs);
/* Writes every file into dir (which exists). */
int plot_files_write(const struct plot_files *fs, const char *dir);

/*
 * The y axis of a chart whose values reach max: returns the divisor its
 * values are drawn at, and writes the unit that says so into out. Up to
 * 9999 they are drawn as measured; above, in thousands, millions, ...,
 * at most four digits before the point (gnuplot's own labels read
 * 172480905 as 1.8e+08, and its SI format reads ticks at 1850 and 1855
 * both as 1.9k). The units of bisectd's workloads take the prefix
 * ("ops/s" becomes "Mops/s", "Kbits/s" "Mbits/s"); any other unit says
 * it in words ("ns (thousands)").
 */
double plot_axis_scale(char *out, size_t n, const char *unit, double max);

/* Appends s as a gnuplot single-quoted string: ' doubled, control characters as spaces, at most max bytes of s. */
void plot_gp_quote(struct sbuf *sb, const char *s, size_t max);

#endif
