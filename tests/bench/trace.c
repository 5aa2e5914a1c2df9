/* trace: the recorded-noise file's parser and the numbers replay needs. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "trace.h"
#include "util.h"

struct run {
	double t, v;
	long seq;            /* line order, to keep sorting stable */
};

struct task {
	long id;
	int agent;
	long last_run;
	int n;
	double sum, sumsq;   /* of ln(value), for the task noise */
};

struct parse {
	const char *name;
	long line;
	struct run **runs;   /* per agent */
	int *nr, *alloc;
	int nr_agents;
	struct task *tasks;  /* in the order they first appear */
	long *order;         /* indices into tasks, ascending id */
	long *cur;           /* per agent: the task its last line was of, -1 none */
	long nr_tasks, alloc_tasks;
	long nr_runs;
	char *condition;
};

static int bad_line(const struct parse *p, const char *what)
{
	return err_set(ERR_INVALID, "%s:%ld: %s", p->name, p->line, what);
}

/* The next whitespace-separated field as a double or a long, the whole of it. */
static int field_double(double *out, char **s)
{
	char *end;

	errno = 0;
	*out = strtod(*s, &end);
	if (end == *s || errno || !isfinite(*out) || (*end && !strchr(" \t\r\n", *end)))
		return -1;
	*s = end;
	return 0;
}

static int field_long(long *out, char **s)
{
	char *end;

	errno = 0;
	*out = strtol(*s, &end, 10);
	if (end == *s || errno || (*end && !strchr(" \t\r\n", *end)))
		return -1;
	*s = end;
	return 0;
}

/* The task called id, or NULL with *at where its index goes in order. */
static struct task *find_task(struct parse *p, long id, long *at)
{
	long lo = 0, hi = p->nr_tasks;

	while (lo < hi) {
		long mid = lo + (hi - lo) / 2;

		if (p->tasks[p->order[mid]].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return lo < p->nr_tasks && p->tasks[p->order[lo]].id == id ? &p->tasks[p->order[lo]] : NULL;
}

static void grow_agents(struct parse *p, int n)
{
	p->runs = xrealloc(p->runs, (size_t)n * sizeof(*p->runs));
	p->nr = xrealloc(p->nr, (size_t)n * sizeof(*p->nr));
	p->alloc = xrealloc(p->alloc, (size_t)n * sizeof(*p->alloc));
	p->cur = xrealloc(p->cur, (size_t)n * sizeof(*p->cur));
	for (int a = p->nr_agents; a < n; a++) {
		p->runs[a] = NULL;
		p->nr[a] = p->alloc[a] = 0;
		p->cur[a] = -1;
	}
	p->nr_agents = n;
}

static void comment(struct parse *p, const char *s)
{
	const char *key = "condition:";

	while (*s == '#' || *s == ' ' || *s == '\t')
		s++;
	if (strncmp(s, key, strlen(key)) || p->condition)
		return;
	s += strlen(key);
	while (*s == ' ' || *s == '\t')
		s++;
	p->condition = xstrndup(s, strcspn(s, " \t\r\n"));
}

static int data_line(struct parse *p, char *s)
{
	double t, v;
	long agent, id, run, at, prev;
	struct task *tk;
	char msg[160];

	if (field_double(&t, &s) || field_long(&agent, &s) || field_long(&id, &s) || field_long(&run, &s) ||
	    field_double(&v, &s))
		return bad_line(p, "expected 't_ms agent task run value' (numbers)");
	s += strspn(s, " \t\r\n");
	if (*s)
		return bad_line(p, "more than 5 fields, expected 't_ms agent task run value'");
	if (t < 0)
		return bad_line(p, "t_ms is negative");
	if (agent < 0 || agent > 1023)
		return bad_line(p, "agent out of range 0..1023");
	if (id < 0 || run < 0)
		return bad_line(p, "task and run must be >= 0");
	if (!(v > 0))
		return bad_line(p, "value must be > 0 (a failed run is left out of a trace)");
	if (agent >= p->nr_agents)
		grow_agents(p, (int)agent + 1);
	/*
	 * Two agents' tasks interleave in the file, but each agent runs its
	 * tasks back to back, numbered in the order they started.
	 */
	prev = p->cur[agent];
	tk = find_task(p, id, &at);
	if (!tk) {
		if (prev >= 0 && id < p->tasks[prev].id) {
			snprintf(msg, sizeof(msg), "task %ld is new but not larger than task %ld agent %ld had before it",
				 id, p->tasks[prev].id, agent);
			return bad_line(p, msg);
		}
		if (p->nr_tasks == p->alloc_tasks) {
			p->alloc_tasks = p->alloc_tasks ? 2 * p->alloc_tasks : 64;
			p->tasks = xrealloc(p->tasks, (size_t)p->alloc_tasks * sizeof(*p->tasks));
			p->order = xrealloc(p->order, (size_t)p->alloc_tasks * sizeof(*p->order));
		}
		memmove(p->order + at + 1, p->order + at, (size_t)(p->nr_tasks - at) * sizeof(*p->order));
		p->order[at] = p->nr_tasks;
		tk = &p->tasks[p->nr_tasks++];
		memset(tk, 0, sizeof(*tk));
		tk->id = id;
		tk->agent = (int)agent;
		tk->last_run = -1;
	} else if (tk->agent != agent) {
		snprintf(msg, sizeof(msg), "task %ld is agent %d's, not agent %ld's", id, tk->agent, agent);
		return bad_line(p, msg);
	} else if (tk - p->tasks != prev) {
		snprintf(msg, sizeof(msg), "task %ld of agent %ld again after its task %ld", id, agent,
			 p->tasks[prev].id);
		return bad_line(p, msg);
	}
	p->cur[agent] = tk - p->tasks;
	if (run <= tk->last_run) {
		snprintf(msg, sizeof(msg), "run %ld of task %ld after its run %ld", run, id, tk->last_run);
		return bad_line(p, msg);
	}
	tk->last_run = run;
	tk->n++;
	tk->sum += log(v);
	tk->sumsq += log(v) * log(v);
	if (p->nr[agent] == p->alloc[agent]) {
		p->alloc[agent] = p->alloc[agent] ? 2 * p->alloc[agent] : 64;
		p->runs[agent] = xrealloc(p->runs[agent], (size_t)p->alloc[agent] * sizeof(struct run));
	}
	p->runs[agent][p->nr[agent]++] = (struct run){ t, v, p->nr_runs++ };
	return 0;
}

static int cmp_run(const void *x, const void *y)
{
	const struct run *a = x, *b = y;

	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* See task_noise in trace.h; on ln(value), so the median drops out. */
static void noise(struct trace *tr, const struct parse *p)
{
	double ss_w = 0, df_w = 0, sum_m = 0, sumsq_m = 0, inv_r = 0, sw2 = 0, vm = 0;
	long nt = p->nr_tasks;

	for (long j = 0; j < nt; j++) {
		const struct task *tk = &p->tasks[j];
		double m = tk->sum / tk->n;

		ss_w += fmax(0, tk->sumsq - tk->n * m * m);
		df_w += tk->n - 1;
		sum_m += m;
		sumsq_m += m * m;
		inv_r += 1.0 / tk->n;
	}
	if (df_w > 0)
		sw2 = ss_w / df_w;
	if (nt > 1)
		vm = fmax(0, (sumsq_m - sum_m * sum_m / (double)nt) / (double)(nt - 1));
	tr->run_noise = sqrt(sw2);
	tr->task_noise = sqrt(fmax(0, vm - sw2 * inv_r / (double)nt) + sw2);
}

static void parse_release(struct parse *p)
{
	for (int a = 0; a < p->nr_agents; a++)
		free(p->runs[a]);
	free(p->runs);
	free(p->nr);
	free(p->alloc);
	free(p->tasks);
	free(p->order);
	free(p->cur);
	free(p->condition);
}

static char *base_name(const char *path)
{
	const char *s = strrchr(path, '/'), *dot;

	s = s ? s + 1 : path;
	dot = strrchr(s, '.');
	if (dot && !strcmp(dot, ".trace"))
		return xstrndup(s, (size_t)(dot - s));
	return xstrdup(s);
}

int trace_read(struct trace **out, FILE *f, const char *name)
{
	struct parse p = { .name = name };
	struct trace *tr = NULL;
	char *line = NULL;
	size_t cap = 0;
	double *all = NULL;
	int rc = 0;

	*out = NULL;
	while (getline(&line, &cap, f) >= 0) {
		char *s = line + strspn(line, " \t");

		p.line++;
		if (*s == '#')
			comment(&p, s);
		else if (*s && *s != '\n' && *s != '\r' && (rc = data_line(&p, s)) < 0)
			goto out;
	}
	if (ferror(f)) {
		rc = err_set(ERR_FAIL, "%s: read error", name);
		goto out;
	}
	if (p.nr_runs == 0) {
		rc = err_set(ERR_INVALID, "%s: no runs in the trace", name);
		goto out;
	}
	tr = xcalloc(1, sizeof(*tr));
	tr->name = base_name(name);
	tr->condition = p.condition;
	p.condition = NULL;
	tr->nr_agents = p.nr_agents;
	tr->n = xcalloc((size_t)p.nr_agents, sizeof(int));
	tr->t = xcalloc((size_t)p.nr_agents, sizeof(double *));
	tr->v = xcalloc((size_t)p.nr_agents, sizeof(double *));
	tr->nr_runs = p.nr_runs;
	tr->nr_tasks = p.nr_tasks;
	all = xmalloc((size_t)p.nr_runs * sizeof(double));
	for (int a = 0, k = 0; a < p.nr_agents; a++)
		for (int i = 0; i < p.nr[a]; i++)
			all[k++] = p.runs[a][i].v;
	qsort(all, (size_t)p.nr_runs, sizeof(double), cmp_double);
	tr->median = p.nr_runs % 2 ? all[p.nr_runs / 2] : (all[p.nr_runs / 2 - 1] + all[p.nr_runs / 2]) / 2;
	for (int a = 0; a < p.nr_agents; a++) {
		int n = p.nr[a];

		qsort(p.runs[a], (size_t)n, sizeof(struct run), cmp_run);
		tr->n[a] = n;
		tr->t[a] = xmalloc((size_t)(n ? n : 1) * sizeof(double));
		tr->v[a] = xmalloc((size_t)(n ? n : 1) * sizeof(double));
		for (int i = 0; i < n; i++) {
			tr->t[a][i] = p.runs[a][i].t;
			tr->v[a][i] = p.runs[a][i].v / tr->median;
			tr->duration = fmax(tr->duration, p.runs[a][i].t);
		}
	}
	noise(tr, &p);
	*out = tr;
out:
	free(all);
	free(line);
	parse_release(&p);
	return rc;
}

int trace_load(struct trace **out, const char *path)
{
	FILE *f = fopen(path, "r");
	int rc;

	*out = NULL;
	if (!f)
		return err_set(ERR_NOTFOUND, "%s: %s", path, strerror(errno));
	rc = trace_read(out, f, path);
	fclose(f);
	return rc;
}

void trace_free(struct trace *tr)
{
	if (!tr)
		return;
	for (int a = 0; a < tr->nr_agents; a++) {
		free(tr->t[a]);
		free(tr->v[a]);
	}
	free(tr->t);
	free(tr->v);
	free(tr->n);
	free(tr->name);
	free(tr->condition);
	free(tr);
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

int trace_list(char ***out, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	int n = 0;

	*out = NULL;
	if (!d) {
		if (errno == ENOENT || errno == ENOTDIR) {
			*out = xcalloc(1, sizeof(char *));
			return 0;
		}
		return err_set(ERR_FAIL, "%s: %s", dir, strerror(errno));
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len <= 6 || strcmp(e->d_name + len - 6, ".trace"))
			continue;
		v = xrealloc(v, (size_t)(n + 2) * sizeof(char *));
		v[n++] = xasprintf("%s/%s", dir, e->d_name);
	}
	closedir(d);
	if (n)
		qsort(v, (size_t)n, sizeof(char *), cmp_str);
	else
		v = xcalloc(1, sizeof(char *));
	v[n] = NULL;
	*out = v;
	return n;
}
