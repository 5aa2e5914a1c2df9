/*
 * bisectctl: the command line for bisectd's HTTP API. Submits jobs, lists
 * and follows them, lists agents, prints reports; --json prints what the
 * API sent instead of text. The exit status tells a script how a job ended.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "client.h"
#include "err.h"
#include "kconfig.h"
#include "token.h"
#include "util.h"

/* Exit status: what a script needs to tell apart. */
enum {
	RC_OK = 0,      /* the command worked; a followed job ended done */
	RC_JOB = 1,     /* the job failed, was cancelled or did not reproduce */
	RC_USAGE = 2,   /* bad command line, or the API refused the input (4xx) */
	RC_SERVER = 3,  /* bisectd unreachable, timed out, or failing (5xx) */
	RC_UNDECIDED = 4, /* the job ended undecided: the data could not decide within its budget */
};

#define DEFAULT_SERVER "http://127.0.0.1:7878"
#define REQ_TIMEOUT_S 30L
/* A submit waits for bisectd to fetch the repo; a kernel's first mirror takes minutes. */
#define SUBMIT_TIMEOUT_S 1800L
#define SHOW_EVENTS 10
/* How long watch keeps retrying a coordinator that went away (a restart). */
#define WATCH_RETRY_S 60

static const char *server;
static const char *ca_file;     /* --ca-file, else $BISECTD_CA; NULL: the system's CA store */
static const char *token_file;   /* --token-file; else $BISECTD_TOKEN */
static int opt_json;
static struct client *cl;

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;
	const char *summary;
	const char *help;
};

static const struct cmd *find_cmd(const char *name);

/* --- output helpers ------------------------------------------------------ */

static void print_usage(FILE *f, const struct cmd *c)
{
	fprintf(f, "usage: bisectctl [--server URL] [--json] %s %s\n", c->name, c->args);
	if (c->help)
		fprintf(f, "\n%s", c->help);
}

static int usage_error(const struct cmd *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int usage_error(const struct cmd *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bisectctl: %s: ", c->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: bisectctl %s %s (see 'bisectctl %s --help')\n",
		c->name, c->args, c->name);
	return RC_USAGE;
}

static void print_json(const json_t *j, size_t flags)
{
	char *s = j ? json_dumps(j, flags | JSON_ENCODE_ANY) : NULL;

	puts(s ? s : "null");
	free(s);
	fflush(stdout);
}

static const char *jstr(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static const char *jstr_or(const json_t *o, const char *key, const char *def)
{
	const char *s = jstr(o, key);

	return s ? s : def;
}

static long long jint(const json_t *o, const char *key, long long def)
{
	json_t *v = json_object_get(o, key);

	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v) && isfinite(json_real_value(v)))
		return (long long)json_real_value(v);
	return def;
}

/* 1 and *out when key holds a finite number. */
static int jnum(double *out, const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_number(v) || !isfinite(json_number_value(v)))
		return 0;
	*out = json_number_value(v);
	return 1;
}

static void short_sha(char out[13], const char *sha)
{
	snprintf(out, 13, "%.12s", sha && *sha ? sha : "-");
}

/* A job's culprit as a short sha, whatever shape the field has. */
static void culprit_sha(char out[13], const json_t *job)
{
	json_t *c = json_object_get(job, "culprit");

	if (json_is_string(c))
		short_sha(out, json_string_value(c));
	else if (json_is_object(c))
		short_sha(out, jstr(c, "sha"));
	else
		short_sha(out, NULL);
}

static void local_time(char *buf, size_t n, long long t, const char *fmt)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0 || !localtime_r(&tt, &tm)) {
		snprintf(buf, n, "-");
		return;
	}
	strftime(buf, n, fmt, &tm);
}

static void fmt_duration(char *buf, size_t n, long long s)
{
	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(buf, n, "%llds", s);
	else if (s < 3600)
		snprintf(buf, n, "%lldm%02llds", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, n, "%lldh%02lldm", s / 3600, s % 3600 / 60);
	else
		snprintf(buf, n, "%lldd%02lldh", s / 86400, s % 86400 / 3600);
}

static void fmt_p(char *buf, size_t n, double p)
{
	snprintf(buf, n, p < 0.0001 ? "%.1e" : "%.4f", p);
}

/* A table of strings printed with columns as wide as their widest cell. */
struct table {
	size_t ncols, nrows, cap;
	char **cells;
};

static void table_row(struct table *t, const char *const *cells)
{
	if (t->nrows == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->cells = xrealloc(t->cells, t->cap * t->ncols * sizeof(*t->cells));
	}
	for (size_t i = 0; i < t->ncols; i++)
		t->cells[t->nrows * t->ncols + i] = xstrdup(cells[i] ? cells[i] : "-");
	t->nrows++;
}

static void table_print(const struct table *t)
{
	size_t *w = xcalloc(t->ncols, sizeof(*w));

	for (size_t r = 0; r < t->nrows; r++)
		for (size_t i = 0; i < t->ncols; i++) {
			size_t l = strlen(t->cells[r * t->ncols + i]);

			if (l > w[i])
				w[i] = l;
		}
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t i = 0; i < t->ncols; i++) {
			const char *s = t->cells[r * t->ncols + i];

			if (i + 1 == t->ncols)
				printf("%s\n", s);
			else
				printf("%-*s  ", (int)w[i], s);
		}
	}
	free(w);
}

static void table_release(struct table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}

/* --- talking to bisectd -------------------------------------------------- */

/* Refuses what libcurl would take but is not an address of bisectd. */
static int check_server(const char *s)
{
	if (strncmp(s, "http://", 7) && strncmp(s, "https://", 8)) {
		fprintf(stderr, "bisectctl: bad server URL '%s' (expected http://HOST:PORT or https://HOST:PORT)\n", s);
		return RC_USAGE;
	}
	return RC_OK;
}

static struct client *get_client(void)
{
	const char *env = getenv("BISECTD_TOKEN");
	char *tok = NULL;
	int rc;

	if (cl)
		return cl;
	cl = client_new(server);
	client_set_ca_file(cl, ca_file);
	if (token_file) {
		if ((rc = token_read_file(&tok, token_file)) < 0) {
			fprintf(stderr, "bisectctl: --token-file: %s\n", err_msg());
			exit(RC_USAGE);
		}
		client_set_token(cl, tok);
		free(tok);
	} else if (env && *env) {
		client_set_token(cl, env);
	}
	return cl;
}

static int has_error_text(const json_t *reply)
{
	const char *e = jstr(reply, "error");

	return e && *e;
}

/* Says what an HTTP error status means for the user; returns the exit status. */
static int status_error(json_t *reply, long status)
{
	const char *text = client_error_text(reply, status);

	if (status >= 400 && status < 500) {
		fprintf(stderr, "bisectctl: %s\n", text);
		return RC_USAGE;
	}
	if (has_error_text(reply))
		fprintf(stderr, "bisectctl: bisectd at %s failed (HTTP %ld): %s\n", server, status, text);
	else
		fprintf(stderr, "bisectctl: bisectd at %s failed: %s\n", server, text);
	return RC_SERVER;
}

/* A request whose reply must be 2xx; otherwise says why and returns the exit status. */
static int api(json_t **reply, const char *method, const char *path, json_t *body)
{
	long status;
	int rc;

	rc = client_request(reply, &status, get_client(), method, path, body,
			    !strcmp(method, "POST") && !strcmp(path, "/api/v1/jobs") ? SUBMIT_TIMEOUT_S :
			    REQ_TIMEOUT_S);
	if (rc < 0) {
		fprintf(stderr, "bisectctl: %s\n", err_msg());
		return RC_SERVER;
	}
	if (status >= 200 && status < 300)
		return RC_OK;
	rc = status_error(*reply, status);
	json_decref(*reply);
	*reply = NULL;
	return rc;
}

/* An error body of a text endpoint is the API's JSON. */
static int text_status_error(const char *body, long status)
{
	json_t *j = json_loads(body, 0, NULL);
	int rc = status_error(j, status);

	json_decref(j);
	return rc;
}

/* --- jobs ---------------------------------------------------------------- */

static int job_ended(const json_t *job)
{
	const char *s = jstr_or(job, "state", "");

	return !strcmp(s, "done") || !strcmp(s, "failed") || !strcmp(s, "not-reproduced") ||
	       !strcmp(s, "undecided") || !strcmp(s, "cancelled") ||
	       json_is_number(json_object_get(job, "finished"));
}

/*
 * The exit status a job's end stands for. Undecided is neither an answer
 * nor a failure: a script may give it more runs or a quieter lab.
 */
static int job_rc(const json_t *job)
{
	const char *s = jstr_or(job, "state", "");

	return !strcmp(s, "done") ? RC_OK : !strcmp(s, "undecided") ? RC_UNDECIDED : RC_JOB;
}

static int parse_long(long *out, const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_id(long *id, const struct cmd *c, int argc, char **argv)
{
	if (optind >= argc)
		return usage_error(c, "missing job id");
	if (optind + 1 < argc)
		return usage_error(c, "unexpected argument '%s'", argv[optind + 1]);
	if (parse_long(id, argv[optind], 1, 0x7fffffffL) < 0)
		return usage_error(c, "bad job id '%s'", argv[optind]);
	return RC_OK;
}

static int get_job(json_t **job, long id)
{
	char path[64];

	snprintf(path, sizeof(path), "/api/v1/jobs/%ld", id);
	return api(job, "GET", path, NULL);
}

static int cmp_idx(const void *a, const void *b)
{
	long long x = jint(*(json_t *const *)a, "idx", 0), y = jint(*(json_t *const *)b, "idx", 0);

	return (x > y) - (x < y);
}

static int cmp_time(const void *a, const void *b)
{
	long long x = jint(*(json_t *const *)a, "time", 0), y = jint(*(json_t *const *)b, "time", 0);

	return (x > y) - (x < y);
}

/* Widths of the columns of measurement lines, so that a block lines up. */
struct mwidth {
	int label, value, cv;
};

static void measure_cells(char *val, size_t vn, char *cv, size_t cn, const json_t *m)
{
	double h, c;

	if (jnum(&h, m, "hmean"))
		snprintf(val, vn, "%.2f", h);
	else
		snprintf(val, vn, "-");
	if (jnum(&c, m, "cv"))
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
	long long fails = jint(m, "failures", 0);

	short_sha(sha, jstr(m, "sha"));
	measure_cells(val, sizeof(val), cv, sizeof(cv), m);
	sbuf_addf(out, "  %s %-*s %*s %-*s n=%lld", sha, w->label, label, w->value, val,
		  w->cv, cv, jint(m, "n", 0));
	if (fails > 0)
		sbuf_addf(out, " failed=%lld", fails);
	sbuf_addf(out, "  %s\n", jstr_or(m, "subject", ""));
}

/*
 * What an engine report is read with: for an undecided job the most
 * probable commits, then (any verdict) the effect with its 95% interval,
 * the noise per task and per run, and what more it would take.
 */
static void print_numbers(struct sbuf *out, const json_t *report)
{
	const char *verdict = jstr_or(report, "verdict", "?");
	json_t *top = json_object_get(report, "top"), *x;
	double e, lo, hi, tcv, rcv, me, rare, sb_, sg;
	char sha[13];
	size_t i;

	if (!strcmp(verdict, "undecided")) {
		sbuf_addf(out, "  undecided: %s\n", jstr_or(report, "why", "the data cannot decide within the budget"));
		if (json_array_size(top) > 0)
			sbuf_adds(out, "  the most probable commits (p that it is the culprit):\n");
		json_array_foreach(top, i, x) {
			double p = 0;

			short_sha(sha, jstr(x, "sha"));
			jnum(&p, x, "p");
			sbuf_addf(out, "    %s %.4f %-8s %s\n", sha, p, jstr_or(x, "state", "?"), jstr_or(x, "subject", ""));
		}
		if (json_is_integer(json_object_get(report, "failed_confirm")))
			sbuf_addf(out, "  commit %lld failed its confirmation: it is not the answer\n",
				  jint(report, "failed_confirm", -1));
	}
	if (!strcmp(verdict, "not-reproduced") && jnum(&me, report, "min_effect_pct") &&
	    json_is_number(json_object_get(report, "effect_lo_pct")))
		sbuf_addf(out, "  not reproduced: the bad end was shown not to be worse by %.1f%% or more\n", me);
	if (!strcmp(verdict, "not-reproduced") && jnum(&rare, report, "rare_share_pct"))
		sbuf_addf(out, "  unless it shows in fewer than %.0f%% of the runs (an intermittent change)\n", rare);
	if (jnum(&sb_, report, "slow_bad_pct") && jnum(&sg, report, "slow_good_pct"))
		sbuf_addf(out, "  the change is in the slow runs: %.0f%% of the bad group's runs, %.0f%% of the good "
			  "group's (bisected on that share)\n", sb_, sg);
	/* An interval of no width is an effect not estimated yet. */
	if (jnum(&e, report, "effect_pct") && jnum(&lo, report, "effect_lo_pct") && jnum(&hi, report, "effect_hi_pct") &&
	    lo < hi)
		sbuf_addf(out, "  effect %+.2f%% (95%% interval %+.2f%% to %+.2f%%)\n", e, lo, hi);
	if (jnum(&tcv, report, "task_cv") && jnum(&rcv, report, "run_cv") && rcv > 0)
		sbuf_addf(out, "  noise %.2f%% per task, %.2f%% per run\n", 100 * tcv, 100 * rcv);
	if (strcmp(verdict, "undecided"))
		return;
	if (json_is_integer(json_object_get(report, "more_runs")))
		sbuf_addf(out, "  about %lld more runs would decide it (or a quieter lab)\n",
			  jint(report, "more_runs", 0));
	else
		sbuf_adds(out, "  no estimate of the runs that would decide it: the effect does not show\n");
}

/* The report object: the culprit (or the verdict) and the numbers behind it. */
static void print_result(struct sbuf *out, const json_t *report)
{
	static const char *const rows[] = { "good", "parent", "culprit", "bad" };
	const char *verdict = jstr_or(report, "verdict", "?");
	json_t *culprit = json_object_get(report, "culprit");
	struct mwidth w = { 0, 0, 0 };
	double change, p, conf;
	char sha[13], pbuf[32];
	int sep = 0;

	if (!strcmp(verdict, "culprit") && json_is_object(culprit)) {
		short_sha(sha, jstr(culprit, "sha"));
		sbuf_addf(out, "culprit: %s %s\n", sha, jstr_or(culprit, "subject", ""));
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
			short_sha(sha, jstr(x, "sha"));
			sbuf_addf(out, "    %s %-7s %s\n", sha, jstr_or(x, "state", "?"),
				  jstr_or(x, "subject", ""));
		}
	}
	if (jnum(&change, report, "change_pct")) {
		sbuf_addf(out, "  change %+.2f%%", change);
		sep = 1;
	}
	if (jnum(&p, report, "p_value")) {
		fmt_p(pbuf, sizeof(pbuf), p);
		sbuf_addf(out, "%sp=%s", sep ? ", " : "  ", pbuf);
		sep = 1;
	}
	if (jnum(&conf, report, "confidence")) {
		sbuf_addf(out, "%sconfidence %.4f%s", sep ? ", " : "  ", conf,
			  json_is_number(json_object_get(report, "posterior")) ? " (capped: the runs show two modes)" : "");
		sep = 1;
	}
	if (sep)
		sbuf_adds(out, "\n");
	print_numbers(out, report);
}

/* "budget    24 runs (derived), 1h00m of wall time (derived), 2m10s used": the budgets in force, and the end runs asked for. */
static void budget_text(struct sbuf *out, const json_t *job)
{
	json_t *p = json_object_get(job, "progress");
	long long runs = jint(p, "budget_runs", 0), secs = jint(p, "budget_seconds", 0);
	char d[32];

	if (jint(job, "end_runs", 0) > 0)
		sbuf_addf(out, "ends      %lld runs each before not-reproduced (--end-runs)\n", jint(job, "end_runs", 0));
	if (!json_is_object(p) || (runs <= 0 && secs <= 0))
		return;
	sbuf_adds(out, "budget    ");
	if (runs > 0)
		sbuf_addf(out, "%lld runs%s", runs, jint(job, "budget_runs", 0) > 0 ? "" : " (derived)");
	else
		sbuf_adds(out, "runs not derived yet");
	if (secs > 0) {
		fmt_duration(d, sizeof(d), secs);
		sbuf_addf(out, ", %s of wall time%s", d, jint(job, "budget_seconds", 0) > 0 ? "" : " (derived)");
	}
	fmt_duration(d, sizeof(d), jint(p, "elapsed_seconds", 0));
	sbuf_addf(out, "; %lld runs, %s used\n", jint(p, "samples", 0), d);
}

static void progress_text(struct sbuf *out, const json_t *job)
{
	json_t *p = json_object_get(job, "progress");

	if (!json_is_object(p)) {
		sbuf_adds(out, "-");
		return;
	}
	long long samples = jint(p, "samples", 0), cand = jint(p, "candidates", 0);

	sbuf_addf(out, "%lld/%lld tasks, %lld sample%s, %lld candidate%s",
		  jint(p, "tasks_done", 0), jint(p, "tasks_total", 0),
		  samples, samples == 1 ? "" : "s", cand, cand == 1 ? "" : "s");
	/* What the agents say they are doing: a first kernel build takes minutes. */
	json_t *r;
	size_t i;

	json_array_foreach(json_object_get(job, "running"), i, r)
		if (json_is_string(json_object_get(r, "progress")))
			sbuf_addf(out, "; %s, commit %lld: %s", jstr_or(r, "agent", "?"), jint(r, "idx", -1),
				  jstr_or(r, "progress", ""));
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

		sbuf_addf(out, "  %-7s %s\n", jstr_or(d, "state", "?"), jstr_or(d, "why", ""));
		json_array_foreach(json_object_get(d, "queries"), j, x)
			sbuf_addf(out, "          -> commit %lld: %lld run%s%s, P(bad) %.3f, %.3f bits\n",
				  jint(x, "idx", -1), jint(x, "runs", 0), jint(x, "runs", 0) == 1 ? "" : "s",
				  json_is_true(json_object_get(x, "confirm")) ? " (confirmation)" :
				  json_is_true(json_object_get(x, "early")) ? " (early pair)" : "",
				  json_number_value(json_object_get(x, "mass")),
				  json_number_value(json_object_get(x, "gain")));
		if (json_array_size(json_object_get(d, "top")) > 0) {
			sbuf_adds(out, "          top:");
			json_array_foreach(json_object_get(d, "top"), j, x)
				sbuf_addf(out, " %lld (%.3f)", jint(x, "idx", -1),
					  json_number_value(json_object_get(x, "p")));
			sbuf_adds(out, "\n");
		}
	}
}

/*
 * The job as `show` prints it: header, progress, tested commits, events and
 * (with_result) the result.
 */
static void format_job(struct sbuf *out, const json_t *job, size_t max_events, int with_result)
{
	json_t *commits = json_object_get(job, "commits");
	json_t *events = json_object_get(job, "events");
	json_t *report = json_object_get(job, "report");
	const char *err = jstr(job, "error");
	long long created = jint(job, "created", 0), finished = jint(job, "finished", 0);
	char good[13], bad[13], tbuf[32], dbuf[32];
	size_t n;

	sbuf_addf(out, "job %lld  %s  %s %s..%s (%lld commits)\n", jint(job, "id", 0),
		  jstr_or(job, "state", "?"), jstr_or(job, "repo", "?"),
		  jstr_or(job, "good_ref", "?"), jstr_or(job, "bad_ref", "?"),
		  jint(job, "nr_commits", 0));
	short_sha(good, jstr(job, "good"));
	short_sha(bad, jstr(job, "bad"));
	sbuf_addf(out, "range     %s..%s\n", good, bad);
	sbuf_addf(out, "workload  %s (%s, %s is better) on pool %s, %lld runs per commit\n",
		  jstr_or(job, "workload", "?"), jstr_or(job, "unit", "?"),
		  jstr_or(job, "direction", "higher"), jstr_or(job, "pool", "?"),
		  jint(job, "runs", 0));
	if (jstr(job, "append"))
		sbuf_addf(out, "variant   kernel command line + \"%s\"\n", jstr(job, "append"));
	if (json_array_size(json_object_get(job, "config"))) {
		json_t *x;
		size_t i;

		sbuf_adds(out, "variant   kernel config +");
		json_array_foreach(json_object_get(job, "config"), i, x)
			sbuf_addf(out, " %s", json_string_value(x) ? json_string_value(x) : "?");
		sbuf_adds(out, "\n");
	}
	local_time(tbuf, sizeof(tbuf), created, "%Y-%m-%d %H:%M:%S");
	if (finished > 0) {
		fmt_duration(dbuf, sizeof(dbuf), finished - created);
		sbuf_addf(out, "created   %s, ended after %s\n", tbuf, dbuf);
	} else {
		fmt_duration(dbuf, sizeof(dbuf), now_unix() - created);
		sbuf_addf(out, "created   %s, %s ago\n", tbuf, dbuf);
	}
	sbuf_adds(out, "progress  ");
	progress_text(out, job);
	sbuf_adds(out, "\n");
	budget_text(out, job);
	if (jstr(job, "waiting"))
		sbuf_addf(out, "waiting   %s\n", jstr(job, "waiting"));
	if (err && *err)
		sbuf_addf(out, "error     %s\n", err);

	if (json_is_array(commits)) {
		json_t **v = xcalloc(json_array_size(commits) + 1, sizeof(*v));
		struct mwidth w = { 6, 0, 0 };
		size_t i;

		n = 0;
		for (i = 0; i < json_array_size(commits); i++) {
			json_t *c = json_array_get(commits, i);

			if (strcmp(jstr_or(c, "state", "untested"), "untested") || jint(c, "n", 0) > 0)
				v[n++] = c;
		}
		qsort(v, n, sizeof(*v), cmp_idx);
		for (i = 0; i < n; i++)
			mwidth_add(&w, jstr_or(v[i], "state", "?"), v[i]);
		if (n)
			sbuf_adds(out, "\ncommits:\n");
		else
			sbuf_adds(out, "\ncommits: none tested yet\n");
		for (i = 0; i < n; i++)
			measure_line(out, &w, jstr_or(v[i], "state", "?"), v[i]);
		free(v);
	}

	if (json_is_array(events) && json_array_size(events) > 0) {
		size_t total = json_array_size(events), first;
		json_t **v = xcalloc(total, sizeof(*v));

		for (size_t i = 0; i < total; i++)
			v[i] = json_array_get(events, i);
		/* Stable enough: events of one second keep the server's order in practice. */
		qsort(v, total, sizeof(*v), cmp_time);
		first = total > max_events ? total - max_events : 0;
		if (first)
			sbuf_addf(out, "\nevents (last %zu of %zu):\n", total - first, total);
		else
			sbuf_adds(out, "\nevents:\n");
		for (size_t i = first; i < total; i++) {
			local_time(tbuf, sizeof(tbuf), jint(v[i], "time", 0), "%m-%d %H:%M:%S");
			sbuf_addf(out, "  %s  %-9s %s\n", tbuf, jstr_or(v[i], "kind", "?"),
				  jstr_or(v[i], "message", ""));
		}
		free(v);
	}

	decisions_text(out, json_object_get(job, "decisions"), max_events / 2 + 1);
	if (!with_result)
		return;
	if (json_is_object(report)) {
		sbuf_adds(out, "\n");
		print_result(out, report);
	} else if (!json_is_null(json_object_get(job, "culprit")) &&
		   json_object_get(job, "culprit")) {
		culprit_sha(good, job);
		sbuf_addf(out, "\nculprit: %s\n", good);
	}
}

/*
 * Prints the end of a job: the report text, or why there is none. strict:
 * a report the API refuses is an error of this command (report), rather
 * than something to work around (watch).
 */
static int finish_job(long id, const json_t *job, int strict, const char *query)
{
	char path[64], *text = NULL;
	long status;
	int rc, ended = job_ended(job);
	const char *state = jstr_or(job, "state", "?");

	if (opt_json) {
		json_t *r = json_object_get(job, "report");

		if (!r && !ended) {
			fprintf(stderr, "bisectctl: job %ld is %s: no report yet\n", id, state);
			return RC_USAGE;
		}
		print_json(r, JSON_INDENT(2));
		return job_rc(job);
	}
	snprintf(path, sizeof(path), "/api/v1/jobs/%ld/report%s", id, query);
	rc = client_get_text(&text, &status, get_client(), path, REQ_TIMEOUT_S);
	if (rc == 0 && status >= 200 && status < 300) {
		size_t len = strlen(text);

		fputs(text, stdout);
		if (len && text[len - 1] != '\n')
			fputc('\n', stdout);
		/* A job not finished gets what is known so far, and the status of no report yet. */
		rc = ended ? job_rc(job) : RC_USAGE;
		goto out;
	}
	if (ended && (strcmp(state, "done") || !strict)) {
		/* No report text (a failed or cancelled job): say how it ended. */
		const char *err = jstr(job, "error");
		struct sbuf sb = SBUF_INIT;

		sbuf_addf(&sb, "job %ld %s%s%s\n", id, state, err && *err ? ": " : "",
			  err && *err ? err : "");
		if (json_is_object(json_object_get(job, "report")))
			print_result(&sb, json_object_get(job, "report"));
		fputs(sb.buf, stdout);
		sbuf_release(&sb);
		rc = job_rc(job);
		goto out;
	}
	if (rc < 0) {
		fprintf(stderr, "bisectctl: %s\n", err_msg());
		rc = RC_SERVER;
	} else {
		rc = text_status_error(text, status);
	}
out:
	free(text);
	fflush(stdout);
	return rc;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Follows a job until it ends; returns the exit status of its end. */
static int watch_job(long id, double interval)
{
	int tty = !opt_json && isatty(STDOUT_FILENO);
	char path[64], *last = NULL;
	int64_t failing_since = 0;
	json_t *job = NULL;
	int rc, first = 1;

	snprintf(path, sizeof(path), "/api/v1/jobs/%ld", id);
	for (;;) {
		struct sbuf key = SBUF_INIT, line = SBUF_INIT;
		long status;

		json_decref(job);
		job = NULL;
		rc = client_request(&job, &status, get_client(), "GET", path, NULL, REQ_TIMEOUT_S);
		if (rc < 0 || status >= 500) {
			/* A coordinator restart should not end a watch of a day-long job. */
			if (first || (failing_since && now_ms() - failing_since > WATCH_RETRY_S * 1000)) {
				if (rc < 0)
					fprintf(stderr, "bisectctl: %s\n", err_msg());
				else
					status_error(job, status);
				rc = RC_SERVER;
				goto out;
			}
			if (!failing_since) {
				failing_since = now_ms();
				fprintf(stderr, "bisectctl: lost bisectd (%s); retrying for %ds\n",
					rc < 0 ? err_msg() : client_error_text(job, status), WATCH_RETRY_S);
			}
			sleep_s(interval);
			continue;
		}
		if (status < 200 || status >= 300) {
			rc = status_error(job, status);
			goto out;
		}
		if (failing_since && !tty)
			fprintf(stderr, "bisectctl: bisectd is back\n");
		failing_since = 0;
		first = 0;

		sbuf_addf(&key, "%s ", jstr_or(job, "state", "?"));
		progress_text(&key, job);
		if (tty) {
			sbuf_adds(&line, "\033[H\033[2J");
			/* The report printed after the last redraw says the result. */
			format_job(&line, job, SHOW_EVENTS, !job_ended(job));
			if (!job_ended(job))
				sbuf_addf(&line, "\nevery %gs; Ctrl-C stops watching, the job goes on\n",
					  interval);
			fputs(line.buf, stdout);
			fflush(stdout);
		} else if (!last || strcmp(last, key.buf)) {
			if (opt_json) {
				print_json(job, JSON_COMPACT);
			} else {
				char tbuf[32];

				local_time(tbuf, sizeof(tbuf), now_unix(), "%H:%M:%S");
				printf("%s job %ld %s: ", tbuf, id, jstr_or(job, "state", "?"));
				sbuf_release(&line);
				progress_text(&line, job);
				printf("%s\n", line.buf);
				fflush(stdout);
			}
		}
		free(last);
		last = sbuf_detach(&key);
		sbuf_release(&line);
		if (job_ended(job))
			break;
		sleep_s(interval);
	}
	if (opt_json) {
		rc = job_rc(job);
	} else {
		putchar('\n');
		rc = finish_job(id, job, 0, "");
	}
out:
	free(last);
	json_decref(job);
	return rc;
}

static int parse_interval(double *out, const struct cmd *c, const char *s)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end || !(*out >= 0.1 && *out <= 3600))
		return usage_error(c, "bad interval '%s' (seconds, 0.1 to 3600)", s);
	return RC_OK;
}

/* --- commands ------------------------------------------------------------ */

/* Options every command also takes after its name. */
#define OPT_CA_FILE 1001
#define OPT_CONFIG 1002
#define OPT_END_RUNS 1003
#define COMMON_LONGOPTS \
	{ "help", no_argument, NULL, 'h' }, \
	{ "json", no_argument, NULL, 'J' }, \
	{ "server", required_argument, NULL, 'S' }, \
	{ "ca-file", required_argument, NULL, OPT_CA_FILE }, \
	{ "token-file", required_argument, NULL, 'K' }

/* Handles what getopt_long returned for the common options; -1 when not one. */
static int common_opt(const struct cmd *c, int opt, char **argv, int *done)
{
	*done = 0;
	switch (opt) {
	case 'h':
		print_usage(stdout, c);
		*done = 1;
		return RC_OK;
	case 'J':
		opt_json = 1;
		return RC_OK;
	case 'S':
		server = optarg;
		*done = check_server(server) != RC_OK;
		return *done ? RC_USAGE : RC_OK;
	case OPT_CA_FILE:
		ca_file = optarg;
		return RC_OK;
	case 'K':
		token_file = optarg;
		return RC_OK;
	case ':':
		*done = 1;
		return usage_error(c, "option '%s' needs a value", argv[optind - 1]);
	case '?':
		*done = 1;
		if (optopt)
			return usage_error(c, "unknown option '-%c'", optopt);
		return usage_error(c, "unknown option '%s'", argv[optind - 1]);
	default:
		return -1;
	}
}

/* A number within [lo, hi]; -1 when it is not one. */
static int parse_fraction(double *out, const char *s, double lo, double hi)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end || !(*out >= lo && *out <= hi))
		return -1;
	return 0;
}

static int cmd_submit(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "repo", required_argument, NULL, 'r' },
		{ "good", required_argument, NULL, 'g' },
		{ "bad", required_argument, NULL, 'b' },
		{ "workload", required_argument, NULL, 'w' },
		{ "pool", required_argument, NULL, 'p' },
		{ "runs", required_argument, NULL, 'n' },
		{ "policy", required_argument, NULL, 'P' },
		{ "confidence", required_argument, NULL, 'C' },
		{ "alpha", required_argument, NULL, 'A' },
		{ "min-effect", required_argument, NULL, 'E' },
		{ "budget-runs", required_argument, NULL, 'R' },
		{ "budget-builds", required_argument, NULL, 'B' },
		{ "budget-seconds", required_argument, NULL, 'T' },
		{ "end-runs", required_argument, NULL, OPT_END_RUNS },
		{ "direction", required_argument, NULL, 'D' },
		{ "append", required_argument, NULL, 'a' },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "watch", no_argument, NULL, 'W' },
		{ "interval", required_argument, NULL, 'i' },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd *c = find_cmd("submit");
	const char *repo = NULL, *good = NULL, *bad = NULL, *workload = NULL, *pool = NULL;
	const char *policy = NULL, *direction = NULL, *append = NULL;
	double confidence = 0, alpha = 0, min_effect = -1;
	long runs = 0, id, budget_runs = -1, budget_builds = -1, budget_seconds = -1, end_runs = -1;
	double interval = 1;
	int opt, watch = 0, rc, done;
	json_t *body = NULL, *reply = NULL;
	static char config[KCONFIG_JOB_MAX][KCONFIG_JOB_OPT_MAX + 1];
	size_t nr_config = 0;

	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r': repo = optarg; break;
		case 'g': good = optarg; break;
		case 'b': bad = optarg; break;
		case 'w': workload = optarg; break;
		case 'p': pool = optarg; break;
		case 'W': watch = 1; break;
		case 'P': policy = optarg; break;
		case 'D': direction = optarg; break;
		case 'a': append = optarg; break;
		case OPT_CONFIG: {
			/* "# CONFIG_X is not set", as a .config says it, is CONFIG_X=n. */
			char name[201];
			int n = 0;

			if (nr_config == KCONFIG_JOB_MAX)
				return usage_error(c, "at most %d --config options", KCONFIG_JOB_MAX);
			if (sscanf(optarg, "# %200[A-Z0-9_] is not set%n", name, &n) == 1 && !optarg[n])
				snprintf(config[nr_config], sizeof(config[0]), "%s=n", name);
			else if (strlen(optarg) <= KCONFIG_JOB_OPT_MAX)
				snprintf(config[nr_config], sizeof(config[0]), "%s", optarg);
			if (kconfig_job_check(strlen(optarg) <= KCONFIG_JOB_OPT_MAX ? config[nr_config] : optarg))
				return usage_error(c, "bad --config: %s", err_msg());
			nr_config++;
			break;
		}
		case 'C':
			if (parse_fraction(&confidence, optarg, 0.5, 0.999999) < 0)
				return usage_error(c, "bad --confidence '%s' (0.5 to 0.999999)", optarg);
			break;
		case 'A':
			if (parse_fraction(&alpha, optarg, 1e-6, 0.5) < 0)
				return usage_error(c, "bad --alpha '%s' (0.000001 to 0.5)", optarg);
			break;
		case 'E':
			if (parse_fraction(&min_effect, optarg, 0, 90) < 0)
				return usage_error(c, "bad --min-effect '%s' (percent, 0 to 90)", optarg);
			min_effect /= 100;
			break;
		case 'R':
			if (parse_long(&budget_runs, optarg, 0, 1000000) < 0)
				return usage_error(c, "bad --budget-runs '%s' (0 to 1000000)", optarg);
			break;
		case 'B':
			if (parse_long(&budget_builds, optarg, 0, 1000000) < 0)
				return usage_error(c, "bad --budget-builds '%s' (0 to 1000000)", optarg);
			break;
		case 'T':
			if (parse_long(&budget_seconds, optarg, 0, 31536000) < 0)
				return usage_error(c, "bad --budget-seconds '%s' (0 to 31536000)", optarg);
			break;
		case OPT_END_RUNS:
			if (parse_long(&end_runs, optarg, 0, 200) < 0)
				return usage_error(c, "bad --end-runs '%s' (0 to 200)", optarg);
			break;
		case 'n':
			if (parse_long(&runs, optarg, 1, 100) < 0)
				return usage_error(c, "bad --runs '%s' (1 to 100)", optarg);
			break;
		case 'i':
			if ((rc = parse_interval(&interval, c, optarg)) != RC_OK)
				return rc;
			break;
		default:
			rc = common_opt(c, opt, argv, &done);
			if (done || rc > 0)
				return rc;
		}
	}
	if (optind < argc)
		return usage_error(c, "unexpected argument '%s'", argv[optind]);
	if (!repo || !good || !bad || !workload)
		return usage_error(c, "--%s is required",
				   !repo ? "repo" : !good ? "good" : !bad ? "bad" : "workload");

	body = json_pack("{s:s, s:s, s:s, s:s}", "repo", repo, "good", good, "bad", bad,
			 "workload", workload);
	if (!body) {
		rc = usage_error(c, "arguments must be UTF-8");
		goto out;
	}
	if (pool)
		json_object_set_new(body, "pool", json_string(pool));
	if (runs)
		json_object_set_new(body, "runs", json_integer(runs));
	if (policy)
		json_object_set_new(body, "policy", json_string(policy));
	if (direction)
		json_object_set_new(body, "direction", json_string(direction));
	if (append)
		json_object_set_new(body, "append", json_string(append));
	if (nr_config) {
		json_t *a = json_array();

		for (size_t i = 0; i < nr_config; i++)
			json_array_append_new(a, json_string(config[i]));
		json_object_set_new(body, "config", a);
	}
	if (confidence > 0)
		json_object_set_new(body, "confidence", json_real(confidence));
	if (alpha > 0)
		json_object_set_new(body, "alpha", json_real(alpha));
	if (min_effect >= 0)
		json_object_set_new(body, "min_effect", json_real(min_effect));
	if (budget_runs >= 0)
		json_object_set_new(body, "budget_runs", json_integer(budget_runs));
	if (budget_builds >= 0)
		json_object_set_new(body, "budget_builds", json_integer(budget_builds));
	if (budget_seconds >= 0)
		json_object_set_new(body, "budget_seconds", json_integer(budget_seconds));
	if (end_runs >= 0)
		json_object_set_new(body, "end_runs", json_integer(end_runs));
	rc = api(&reply, "POST", "/api/v1/jobs", body);
	if (rc != RC_OK)
		goto out;
	id = (long)jint(reply, "id", 0);
	if (opt_json) {
		print_json(reply, JSON_INDENT(2));
	} else {
		printf("job %ld submitted: %s %s..%s (%lld commits), workload %s on pool %s\n", id,
		       jstr_or(reply, "repo", repo), jstr_or(reply, "good_ref", good),
		       jstr_or(reply, "bad_ref", bad), jint(reply, "nr_commits", 0),
		       jstr_or(reply, "workload", workload), jstr_or(reply, "pool", pool ? pool : "?"));
		fflush(stdout);
	}
	if (watch) {
		if (id <= 0) {
			fprintf(stderr, "bisectctl: bisectd's reply has no job id to watch\n");
			rc = RC_SERVER;
			goto out;
		}
		rc = watch_job(id, interval);
	}
out:
	json_decref(body);
	json_decref(reply);
	return rc;
}

/*
 * The front the listing commands share: their options, the GET, and the
 * answers that need no table (--json, or an empty list). *items is the
 * non-empty array to print as a table, with *reply the caller's to free;
 * otherwise *items is NULL, nothing is left to free, and the return is
 * the command's exit status.
 */
static int fetch_list(json_t **reply, json_t **items, const struct cmd *c, int argc, char **argv,
		      const char *path, const char *key)
{
	static const struct option longopts[] = { COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	int opt, rc, done;

	*reply = *items = NULL;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		rc = common_opt(c, opt, argv, &done);
		if (done || rc != RC_OK)
			return rc < 0 ? RC_USAGE : rc;
	}
	if (optind < argc)
		return usage_error(c, "unexpected argument '%s'", argv[optind]);
	rc = api(reply, "GET", path, NULL);
	if (rc != RC_OK)
		return rc;
	if (opt_json)
		print_json(*reply, JSON_INDENT(2));
	else if (json_is_array(json_object_get(*reply, key)) && json_array_size(json_object_get(*reply, key)) > 0)
		*items = json_object_get(*reply, key);
	else
		printf("no %s\n", key);
	if (!*items) {
		json_decref(*reply);
		*reply = NULL;
	}
	return RC_OK;
}

static int cmd_jobs(int argc, char **argv)
{
	struct table t = { 7, 0, 0, NULL };
	json_t *reply = NULL, *jobs;
	size_t i;
	int rc = fetch_list(&reply, &jobs, find_cmd("jobs"), argc, argv, "/api/v1/jobs", "jobs");

	if (!jobs)
		return rc;
	table_row(&t, (const char *const[]){ "ID", "STATE", "REPO", "RANGE", "WORKLOAD",
					      "CULPRIT", "CREATED" });
	for (i = 0; i < json_array_size(jobs); i++) {
		json_t *j = json_array_get(jobs, i);
		char id[32], range[256], culprit[13], created[32];

		snprintf(id, sizeof(id), "%lld", jint(j, "id", 0));
		snprintf(range, sizeof(range), "%s..%s", jstr_or(j, "good_ref", "?"),
			 jstr_or(j, "bad_ref", "?"));
		culprit_sha(culprit, j);
		local_time(created, sizeof(created), jint(j, "created", 0), "%Y-%m-%d %H:%M");
		table_row(&t, (const char *const[]){ id, jstr(j, "state"), jstr(j, "repo"), range,
						      jstr(j, "workload"), culprit, created });
	}
	table_print(&t);
	table_release(&t);
	json_decref(reply);
	return RC_OK;
}

/* Parses the options of a command taking one job id (and maybe --interval). */
static int id_command(long *id, double *interval, const struct cmd *c, int argc, char **argv)
{
	static const struct option with_interval[] = {
		{ "interval", required_argument, NULL, 'i' },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const struct option *longopts = interval ? with_interval : with_interval + 1;
	int opt, rc, done;

	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (opt == 'i') {
			if ((rc = parse_interval(interval, c, optarg)) != RC_OK)
				return rc;
			continue;
		}
		rc = common_opt(c, opt, argv, &done);
		if (done)
			return rc == RC_OK ? -1 : rc;
		if (rc != RC_OK)
			return RC_USAGE;
	}
	return parse_id(id, c, argc, argv);
}

static int cmd_show(int argc, char **argv)
{
	struct sbuf out = SBUF_INIT;
	json_t *job = NULL;
	long id;
	int rc;

	rc = id_command(&id, NULL, find_cmd("show"), argc, argv);
	if (rc != RC_OK)
		return rc < 0 ? RC_OK : rc;
	rc = get_job(&job, id);
	if (rc != RC_OK)
		return rc;
	if (opt_json) {
		print_json(job, JSON_INDENT(2));
	} else {
		format_job(&out, job, SHOW_EVENTS, 1);
		fputs(out.buf, stdout);
		sbuf_release(&out);
	}
	json_decref(job);
	return RC_OK;
}

static int cmd_watch(int argc, char **argv)
{
	double interval = 1;
	long id;
	int rc;

	rc = id_command(&id, &interval, find_cmd("watch"), argc, argv);
	if (rc != RC_OK)
		return rc < 0 ? RC_OK : rc;
	return watch_job(id, interval);
}

/* GET path as text into stdout, or into file (written whole or not at all); the exit status of the request. */
static int get_text_out(const char *path, const char *file)
{
	char *text = NULL;
	long status;
	int rc = client_get_text(&text, &status, get_client(), path, REQ_TIMEOUT_S);

	if (rc < 0) {
		fprintf(stderr, "bisectctl: %s\n", err_msg());
		rc = RC_SERVER;
	} else if (status < 200 || status >= 300) {
		rc = text_status_error(text, status);
	} else if (file && strcmp(file, "-")) {
		rc = RC_OK;
		if (file_write_atomic(file, text, strlen(text)) < 0) {
			fprintf(stderr, "bisectctl: cannot write %s: %s\n", file, err_msg());
			rc = RC_USAGE;
		}
	} else {
		fputs(text, stdout);
		rc = RC_OK;
	}
	free(text);
	fflush(stdout);
	return rc;
}

static int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cv", required_argument, NULL, 'c' },
		{ "mail", no_argument, NULL, 'm' },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd *c = find_cmd("report");
	const char *query = "";
	json_t *job = NULL;
	char path[96];
	int opt, rc, done, mail = 0;
	long id;

	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (opt == 'c') {
			if (strcmp(optarg, "amean") && strcmp(optarg, "hmean"))
				return usage_error(c, "bad --cv '%s' (amean: stddev / arithmetic mean, hmean: "
						   "mmtests' harmonic CoV)", optarg);
			query = !strcmp(optarg, "hmean") ? "?cv=hmean" : "";
			continue;
		}
		if (opt == 'm') {
			mail = 1;
			continue;
		}
		rc = common_opt(c, opt, argv, &done);
		if (done)
			return rc;
		if (rc != RC_OK)
			return RC_USAGE;
	}
	if ((rc = parse_id(&id, c, argc, argv)) != RC_OK)
		return rc;
	if (mail) {
		snprintf(path, sizeof(path), "/api/v1/jobs/%ld/report?format=mail", id);
		return get_text_out(path, NULL);
	}
	rc = get_job(&job, id);
	if (rc != RC_OK)
		return rc;
	rc = finish_job(id, job, 1, query);
	json_decref(job);
	return rc;
}

static int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "csv", no_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd *c = find_cmd("export");
	const char *file = NULL;
	char path[96];
	int opt, rc, done;
	long id;

	while ((opt = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
		if (opt == 'c')
			continue;   /* the one format there is */
		if (opt == 'o') {
			file = optarg;
			continue;
		}
		rc = common_opt(c, opt, argv, &done);
		if (done)
			return rc;
		if (rc != RC_OK)
			return RC_USAGE;
	}
	if ((rc = parse_id(&id, c, argc, argv)) != RC_OK)
		return rc;
	snprintf(path, sizeof(path), "/api/v1/jobs/%ld/samples.csv", id);
	return get_text_out(path, file);
}

static int cmd_cancel(int argc, char **argv)
{
	json_t *reply = NULL;
	char path[64];
	long id;
	int rc;

	rc = id_command(&id, NULL, find_cmd("cancel"), argc, argv);
	if (rc != RC_OK)
		return rc < 0 ? RC_OK : rc;
	snprintf(path, sizeof(path), "/api/v1/jobs/%ld/cancel", id);
	rc = api(&reply, "POST", path, NULL);
	if (rc != RC_OK)
		return rc;
	if (opt_json)
		print_json(reply, JSON_INDENT(2));
	else
		printf("job %ld cancelled\n", id);
	json_decref(reply);
	return RC_OK;
}

/* bisectd draws a chart within its chart_timeout (30 s by default); this is the wait past it. */
#define PLOT_TIMEOUT_S 120L

static int cmd_plot(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "chart", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	static const char *const exts[] = { "svg", "png", "pdf" };
	const struct cmd *c = find_cmd("plot");
	const char *chart = NULL, *output = NULL, *dot, *ext = NULL;
	char *body = NULL, *path = NULL;
	size_t len = 0;
	long id, status;
	int opt, rc, done;

	while ((opt = getopt_long(argc, argv, ":hc:o:", longopts, NULL)) != -1) {
		if (opt == 'c' || opt == 'o') {
			*(opt == 'c' ? &chart : &output) = optarg;
			continue;
		}
		rc = common_opt(c, opt, argv, &done);
		if (done)
			return rc;
		if (rc != RC_OK)
			return RC_USAGE;
	}
	if ((rc = parse_id(&id, c, argc, argv)) != RC_OK)
		return rc;
	if (!chart || !*chart || strspn(chart, "abcdefghijklmnopqrstuvwxyz") != strlen(chart))
		return usage_error(c, chart ? "bad chart name '%s'" : "missing --chart%s",
				   chart ? chart : " (timeline, distribution, compare or posterior)");
	if (!output || !*output)
		return usage_error(c, "missing -o FILE");
	dot = strrchr(output, '.');
	for (size_t i = 0; dot && !strchr(dot, '/') && i < sizeof(exts) / sizeof(exts[0]); i++)
		if (!strcasecmp(dot + 1, exts[i]))
			ext = exts[i];
	if (!ext)
		return usage_error(c, "'%s': the file's extension says the format: .svg, .png or .pdf", output);

	/* One implementation of the charts, bisectd's: the file is what the API serves. */
	path = xasprintf("/api/v1/jobs/%ld/charts/%s.%s", id, chart, ext);
	if (client_get_bytes(&body, &len, &status, get_client(), path, PLOT_TIMEOUT_S) < 0) {
		fprintf(stderr, "bisectctl: %s\n", err_msg());
		rc = RC_SERVER;
	} else if (status != 200) {
		rc = text_status_error(body, status);
	} else if (file_write_atomic(output, body, len) < 0) {
		/* Written to a temporary beside it and renamed: never a half-written FILE. */
		fprintf(stderr, "bisectctl: cannot write the chart: %s\n", err_msg());
		rc = RC_USAGE;
	} else {
		printf("%s: %s chart of job %ld (%zu bytes)\n", output, chart, id, len);
		rc = RC_OK;
	}
	free(body);
	free(path);
	return rc;
}

static void task_text(char *buf, size_t n, const json_t *task)
{
	if (json_is_integer(task)) {
		snprintf(buf, n, "task %lld", (long long)json_integer_value(task));
	} else if (json_is_object(task)) {
		char sha[13];

		short_sha(sha, jstr(task, "commit") ? jstr(task, "commit") : jstr(task, "sha"));
		snprintf(buf, n, "job %lld task %lld %s", jint(task, "job", 0),
			 jint(task, "task", jint(task, "id", 0)), sha);
	} else {
		snprintf(buf, n, "-");
	}
}

static int cmd_agents(int argc, char **argv)
{
	struct table t = { 5, 0, 0, NULL };
	json_t *reply = NULL, *agents;
	size_t i;
	int rc = fetch_list(&reply, &agents, find_cmd("agents"), argc, argv, "/api/v1/agents", "agents");

	if (!agents)
		return rc;
	table_row(&t, (const char *const[]){ "NAME", "STATE", "LABELS", "LAST SEEN", "TASK" });
	for (i = 0; i < json_array_size(agents); i++) {
		json_t *a = json_array_get(agents, i), *labels = json_object_get(a, "labels");
		struct sbuf lb = SBUF_INIT;
		long long seen = jint(a, "last_seen", 0);
		char ago[48], task[128];
		size_t k;

		for (k = 0; k < json_array_size(labels); k++) {
			const char *l = json_string_value(json_array_get(labels, k));

			if (l)
				sbuf_addf(&lb, "%s%s", lb.len ? "," : "", l);
		}
		if (seen > 0) {
			fmt_duration(ago, sizeof(ago) - 4, now_unix() - seen);
			strcat(ago, " ago");
		} else {
			snprintf(ago, sizeof(ago), "never");
		}
		task_text(task, sizeof(task), json_object_get(a, "task"));
		table_row(&t, (const char *const[]){ jstr(a, "name"), jstr(a, "state"),
						      lb.len ? lb.buf : "-", ago, task });
		sbuf_release(&lb);
	}
	table_print(&t);
	table_release(&t);
	json_decref(reply);
	return RC_OK;
}

/* --- tokens (admin) ------------------------------------------------------ */

static int token_create(const struct cmd *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "role", required_argument, NULL, 'r' },
		{ "agent", required_argument, NULL, 'a' },
		{ "note", required_argument, NULL, 'n' },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const char *role = NULL, *agent = NULL, *note = NULL;
	json_t *body, *reply = NULL;
	int opt, rc, done;

	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r': role = optarg; break;
		case 'a': agent = optarg; break;
		case 'n': note = optarg; break;
		default:
			rc = common_opt(c, opt, argv, &done);
			if (done || rc != RC_OK)
				return rc < 0 ? RC_USAGE : rc;
		}
	}
	if (optind < argc)
		return usage_error(c, "unexpected argument '%s'", argv[optind]);
	if (!role)
		return usage_error(c, "token create needs --role admin, submit or agent");
	body = json_pack("{s:s}", "role", role);
	if (agent)
		json_object_set_new(body, "agent", json_string(agent));
	if (note)
		json_object_set_new(body, "note", json_string(note));
	rc = api(&reply, "POST", "/api/v1/tokens", body);
	json_decref(body);
	if (rc != RC_OK)
		return rc;
	if (opt_json) {
		print_json(reply, JSON_INDENT(2));
	} else {
		printf("%s\n", jstr_or(reply, "token", ""));
		fprintf(stderr, "token %lld (bd_%s_...), role %s%s%s: shown this once, keep it in a file of mode "
			"0600\n", jint(reply, "id", 0), jstr_or(reply, "prefix", "?"), jstr_or(reply, "role", "?"),
			agent ? ", agent " : !strcmp(role, "agent") ? ", an enrolment token" : "", agent ? agent : "");
	}
	json_decref(reply);
	return RC_OK;
}

static void time_cell(char *buf, size_t n, long long t)
{
	if (t > 0) {
		fmt_duration(buf, n - 4, now_unix() - t);
		strcat(buf, " ago");
	} else {
		snprintf(buf, n, "never");
	}
}

static int token_list(const struct cmd *c, int argc, char **argv)
{
	struct table t = { 8, 0, 0, NULL };
	json_t *reply = NULL, *tokens;
	int rc = fetch_list(&reply, &tokens, c, argc, argv, "/api/v1/tokens", "tokens");

	if (!tokens)
		return rc;
	table_row(&t, (const char *const[]){ "ID", "PREFIX", "ROLE", "AGENT", "CREATED", "LAST USED", "STATE",
					      "NOTE" });
	for (size_t i = 0; i < json_array_size(tokens); i++) {
		json_t *k = json_array_get(tokens, i);
		char id[24], prefix[24], created[48], used[48];
		const char *role = jstr_or(k, "role", "?");

		snprintf(id, sizeof(id), "%lld", jint(k, "id", 0));
		snprintf(prefix, sizeof(prefix), "bd_%s", jstr_or(k, "prefix", "?"));
		time_cell(created, sizeof(created), jint(k, "created", 0));
		time_cell(used, sizeof(used), jint(k, "last_used", 0));
		table_row(&t, (const char *const[]){ id, prefix, role,
			jstr(k, "agent") ? jstr(k, "agent") : !strcmp(role, "agent") ? "(enrolment)" : "-",
			created, used, jint(k, "revoked", 0) ? "revoked" : "live", jstr(k, "note") });
	}
	table_print(&t);
	table_release(&t);
	json_decref(reply);
	return RC_OK;
}

static int token_revoke(const struct cmd *c, int argc, char **argv)
{
	json_t *reply = NULL;
	char path[64];
	static const struct option longopts[] = { COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	long id;
	int opt, rc, done;

	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		rc = common_opt(c, opt, argv, &done);
		if (done || rc != RC_OK)
			return rc < 0 ? RC_USAGE : rc;
	}
	if (optind + 1 != argc)
		return usage_error(c, optind >= argc ? "token revoke needs the token's ID (token list shows it)" :
				   "unexpected argument '%s'", argv[argc - 1]);
	if (parse_long(&id, argv[optind], 1, 0x7fffffffL) < 0)
		return usage_error(c, "bad token id '%s' (the number token list shows)", argv[optind]);
	snprintf(path, sizeof(path), "/api/v1/tokens/%ld/revoke", id);
	if ((rc = api(&reply, "POST", path, NULL)) != RC_OK)
		return rc;
	if (opt_json)
		print_json(reply, JSON_INDENT(2));
	else
		printf("token %ld revoked\n", id);
	json_decref(reply);
	return RC_OK;
}

static int cmd_token(int argc, char **argv)
{
	const struct cmd *c = find_cmd("token");

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		print_usage(argc < 2 ? stderr : stdout, c);
		return argc < 2 ? RC_USAGE : RC_OK;
	}
	if (!strcmp(argv[1], "create"))
		return token_create(c, argc - 1, argv + 1);
	if (!strcmp(argv[1], "list"))
		return token_list(c, argc - 1, argv + 1);
	if (!strcmp(argv[1], "revoke"))
		return token_revoke(c, argc - 1, argv + 1);
	return usage_error(c, "unknown token command '%s' (create, list or revoke)", argv[1]);
}

static void print_main_usage(FILE *f);

static int cmd_help(int argc, char **argv)
{
	const struct cmd *c;

	if (argc < 2) {
		print_main_usage(stdout);
		return RC_OK;
	}
	c = find_cmd(argv[1]);
	if (!c) {
		fprintf(stderr, "bisectctl: unknown command '%s' (see 'bisectctl help')\n", argv[1]);
		return RC_USAGE;
	}
	print_usage(stdout, c);
	return RC_OK;
}

static const struct cmd commands[] = {
	{ "submit", cmd_submit,
	  "--repo R --good G --bad B --workload W [--pool P] [--runs N] [options] [--watch [--interval S]]",
	  "submit a bisection job",
	  "Asks bisectd to find the commit in G..B (refs of repository R) that changed\n"
	  "workload W in the direction the workload calls worse.\n\n"
	  "  --repo R        repository name from bisectd's config\n"
	  "  --good G        a ref or commit that performs well\n"
	  "  --bad B         a ref or commit that performs badly\n"
	  "  --workload W    workload name from bisectd's config\n"
	  "  --pool P        agent pool (default: bisectd's first pool)\n"
	  "  --runs N        runs at each end first, and the largest batch per commit,\n"
	  "                  1 to 100 (default: bisectd's); the engine picks each batch\n"
	  "  --confidence P  stop when one commit holds P of the posterior (0.99)\n"
	  "  --alpha A       the ends must differ at this level (0.01)\n"
	  "  --min-effect X  ... and by at least X percent (1)\n"
	  "  --budget-runs N\n"
	  "                  end undecided after N runs if nothing is decided (0: the\n"
	  "                  engine derives one from the range and the ends' noise)\n"
	  "  --budget-builds N\n"
	  "                  ... or after N distinct commits measured (0: no limit)\n"
	  "  --budget-seconds S\n"
	  "                  ... or S seconds after the submit (0: derived from the run\n"
	  "                  budget and the job's measured costs, at least an hour)\n"
	  "  --end-runs N    end not-reproduced only on N runs of each end or more, 0 to\n"
	  "                  200 (0: the engine's 8 at 0.99): a change that shows in\n"
	  "                  some runs only is ruled out down to 1-(0.005)^(1/N) of them\n"
	  "                  (48% on 8, 16% on 30, 7% on 70)\n"
	  "  --direction D   higher or lower is better (default: the workload's)\n"
	  "  --append P      kernel parameters for this job's boots, after the workload's\n"
	  "                  (\"mitigations=off\"; boot qemu workloads)\n"
	  "  --config OPT    a kernel config option for this job's builds, after the\n"
	  "                  workload's fragments, verified like them (repeatable:\n"
	  "                  CONFIG_X=y|m|n|123|0x1f|'\"str\"'; n or '# CONFIG_X is not\n"
	  "                  set' unsets it); workloads with a kernel build\n"
	  "  --policy P      bisectd (default) or split (the simple k-way split)\n"
	  "  --watch         follow the job as 'watch' does; the exit status is its end's\n"
	  "                  (0 done, 1 failed/cancelled/not-reproduced, 4 undecided)\n"
	  "  --interval S    with --watch: seconds between refreshes (default 1)\n" },
	{ "jobs", cmd_jobs, "", "list jobs, newest first", NULL },
	{ "show", cmd_show, "ID", "show a job: progress, tested commits, events, culprit",
	  "Tested commits print as: short sha, state, hmean (CV) over n runs, subject.\n" },
	{ "watch", cmd_watch, "ID [--interval S]", "follow a job until it ends, then print its report",
	  "On a terminal, redraws the job every S seconds (default 1); otherwise prints\n"
	  "a line when its progress changes (with --json: the job, one object a line).\n"
	  "Exits 0 when the job ends done, 1 when it failed, was cancelled or did not\n"
	  "reproduce, 4 when it ended undecided.\n" },
	{ "agents", cmd_agents, "", "list agents: state, labels, last seen, task", NULL },
	{ "cancel", cmd_cancel, "ID", "cancel a job (its queued tasks are dropped)", NULL },
	{ "report", cmd_report, "ID [--cv amean|hmean] [--mail]",
	  "print a job's report (with --json: the report object)",
	  "The table gives each kernel's HARMEAN (CV) over its runs and its change\n"
	  "against the good end, then the change against the parent, its p-value and\n"
	  "the confidence, as the netdev threads print them.\n\n"
	  "  --cv amean   CV is stddev / arithmetic mean (the default)\n"
	  "  --cv hmean   CV is mmtests' harmonic CoV (compare-kernels' HCoeffVar)\n"
	  "  --mail       the culprit as a plain-text mail in the manner of the kernel\n"
	  "               test robot: author, machines, command line, kernel config,\n"
	  "               a %stddev %change %stddev table and how to reproduce it\n\n"
	  "Exits 0 for a job done, 1 for one that failed, was cancelled or did not\n"
	  "reproduce, 4 for one that ended undecided (the most probable commits, the\n"
	  "effect with its 95% interval, the noise and how many more runs would decide\n"
	  "it are printed), 2 when it has no report yet (a running job: what is known so\n"
	  "far is printed) or, with --mail, when it named no culprit.\n" },
	{ "export", cmd_export, "ID [--csv] [-o FILE]", "write every sample of a job as CSV",
	  "One line per run: commit, idx, subject, task, agent, attempt, run, value,\n"
	  "unit, error (a failed run: value <= 0), time (unix seconds); RFC 4180 quoting.\n"
	  "  -o, --output FILE   write FILE (whole, or not at all) instead of stdout\n" },
	{ "plot", cmd_plot, "ID --chart NAME -o FILE", "draw a job's chart into FILE (.svg, .png or .pdf)",
	  "Charts, drawn by bisectd with gnuplot (docs/CHARTS.md):\n"
	  "  timeline      every measured commit in range order: its runs, hmean (CV),\n"
	  "                the ends and the culprit marked\n"
	  "  distribution  the culprit against its parent and the ends: a box per\n"
	  "                commit (and agent, when several measured it), runs over it\n"
	  "  compare       hmean (CV) of the ends, parent and culprit in each job of\n"
	  "                the same range: one bar per kernel command line variant\n"
	  "  posterior     the five most probable commits, and each one's probability\n"
	  "                over the engine's decisions\n\n"
	  "The file's extension says the format. FILE is written only whole (a\n"
	  "temporary beside it, renamed), never when bisectd refused or failed.\n"
	  "Exits 2 when bisectd refused (an unknown job or chart, a job with nothing\n"
	  "to draw yet: 409), 3 when it failed (gnuplot missing or past its deadline).\n" },
	{ "token", cmd_token, "create --role R [--agent NAME] [--note TEXT] | list | revoke ID",
	  "make, list and revoke API tokens (an admin's)",
	  "Tokens (docs/API.md, Authentication) have a role: admin (everything, and\n"
	  "tokens), submit (submit and cancel jobs) or agent. An agent token with\n"
	  "--agent NAME acts as that agent only; one without is an enrolment token,\n"
	  "which an agent uses once to get its own (enrol_token_file, docs/LAB.md).\n\n"
	  "  create   prints the new token on stdout, once: bisectd keeps its hash only\n"
	  "  list     id, prefix (the token's public part), role, agent, when made and\n"
	  "           last used, live or revoked, note\n"
	  "  revoke   the token stops working at once\n" },
	{ "help", cmd_help, "[COMMAND]", "show this help, or a command's", NULL },
};

static const struct cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void print_main_usage(FILE *f)
{
	fputs("usage: bisectctl [--server URL] [--ca-file PEM] [--token-file F] [--json] COMMAND [ARGS]\n\ncommands:\n", f);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-7s %s\n", commands[i].name, commands[i].summary);
	fputs("\noptions:\n"
	      "  --server URL  bisectd's address (default: $BISECTD_URL, else " DEFAULT_SERVER ")\n"
	      "  --ca-file PEM https: trust this CA for bisectd's certificate (default: $BISECTD_CA,\n"
	      "                else the system's store); the server is always verified\n"
	      "  --token-file F  the API token to send, from file F (default: $BISECTD_TOKEN);\n"
	      "                writes need one (docs/API.md, Authentication)\n"
	      "  --json        print the API's JSON instead of text\n"
	      "  -h, --help    show this help; 'bisectctl COMMAND --help' shows a command's\n"
	      "\nexit status: 0 success (a job that ended done), 1 the job failed, was\n"
	      "cancelled or did not reproduce, 2 usage or input error, 3 bisectd could\n"
	      "not be reached or failed, 4 the job ended undecided (no commit holds the\n"
	      "confidence within the budget: more runs or a quieter lab would decide it).\n", f);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "server", required_argument, NULL, 'S' },
		{ "ca-file", required_argument, NULL, OPT_CA_FILE },
		{ "token-file", required_argument, NULL, 'K' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd *c;
	int opt, rc;

	server = getenv("BISECTD_URL");
	if (!server || !*server)
		server = DEFAULT_SERVER;
	ca_file = getenv("BISECTD_CA");
	if (ca_file && !*ca_file)
		ca_file = NULL;
	opterr = 0;
	/* '+': stop at the command; its options are its own. */
	while ((opt = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'S': server = optarg; break;
		case OPT_CA_FILE: ca_file = optarg; break;
		case 'K': token_file = optarg; break;
		case 'J': opt_json = 1; break;
		case 'h':
			print_main_usage(stdout);
			return RC_OK;
		case ':':
			fprintf(stderr, "bisectctl: option '%s' needs a value\n", argv[optind - 1]);
			return RC_USAGE;
		default:
			if (optopt)
				fprintf(stderr, "bisectctl: unknown option '-%c'\n", optopt);
			else
				fprintf(stderr, "bisectctl: unknown option '%s'\n", argv[optind - 1]);
			fprintf(stderr, "see 'bisectctl help'\n");
			return RC_USAGE;
		}
	}
	if (optind >= argc) {
		print_main_usage(stderr);
		return RC_USAGE;
	}
	c = find_cmd(argv[optind]);
	if (!c) {
		fprintf(stderr, "bisectctl: unknown command '%s' (see 'bisectctl help')\n",
			argv[optind]);
		return RC_USAGE;
	}
	if (c->fn != cmd_help && check_server(server) != RC_OK)
		return RC_USAGE;
	argc -= optind;
	argv += optind;
	optind = 0; /* glibc: start over, permuting again, for the command's options */

	rc = c->fn(argc, argv);
	client_free(cl);
	return rc;
}
