/*
 * sched: jobs, agents, leases and bisection steps.
 *
 * Everything that touches the store runs under s->lock, and every change
 * that belongs together (samples, their summary, the decision they lead
 * to, the tasks it queues) is one transaction: a crash leaves the job as it
 * was before the upload, and the agent's retried upload replays it.
 */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "err.h"
#include "gitx.h"
#include "jsonx.h"
#include "log.h"
#include "policy.h"
#include "repo.h"
#include "sched.h"
#include "stats.h"
#include "taskwire.h"
#include "util.h"

#define MAX_ATTEMPTS 3
#define MAX_COMMITS 20000
#define ALPHA 0.01         /* the ends must differ at this level */
#define MIN_EFFECT 0.01    /* and by at least this much */
#define END_BATCHES 4      /* batches at each end before giving up on a difference */
#define MID_BATCHES 3      /* batches at a commit before a forced call */
/*
 * A job's wall-time budget when it sets none (budget_seconds 0), derived
 * from the engine's run budget at the job's measured costs: a build for
 * every two runs (what the demo and the kernel lab took: 20 runs on 10
 * commits, 22 on 10 kernels), twice over for a lab shared with other
 * jobs, and never under an hour. It is a net for a job that cannot end,
 * not the engine's stop: the run budget is that.
 */
#define BUDGET_S_MIN 3600
#define BUDGET_S_SLACK 2.0
#define BUDGET_S_MAX 31536000 /* the most a job may ask for: a year */

struct mirror {
	const struct conf_repo *conf;
	struct repo *repo;
	pthread_mutex_t lock;   /* held while fetching: outside s->lock */
};

struct sched {
	const struct conf_bisectd *conf;
	struct store *st;
	pthread_mutex_t lock;
	pthread_cond_t cond;    /* a task was queued, or shutdown */
	int shutdown;
	struct mirror *mirrors;
	pthread_t warm;              /* makes the mirrors at start-up */
	int warming;                 /* warm was started */
	volatile int stop_warm;
};

int sched_valid_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 64)
		return 0;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-'))
			return 0;
	return 1;
}

int sched_new(struct sched **out, const struct conf_bisectd *conf, struct store *st)
{
	struct sched *s = xcalloc(1, sizeof(*s));
	pthread_condattr_t ca;

	s->conf = conf;
	s->st = st;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	s->mirrors = xcalloc(conf->nr_repos + 1, sizeof(*s->mirrors));
	for (size_t i = 0; i < conf->nr_repos; i++) {
		s->mirrors[i].conf = &conf->repos[i];
		pthread_mutex_init(&s->mirrors[i].lock, NULL);
	}
	*out = s;
	return 0;
}

/* gitx's progress hook while a mirror is made: a line in the log at each 10%. */
static void mirror_progress(void *arg, const char *text)
{
	log_info("repo %s: %s", ((const struct mirror *)arg)->conf->name, text);
}

/*
 * Makes every repo's mirror at start-up, so that the first job on a large
 * repo (a kernel: a minute or more) does not wait for it; a submit that
 * comes meanwhile waits on the mirror's lock.
 */
static void *warm_main(void *arg)
{
	struct sched *s = arg;

	for (size_t i = 0; i < s->conf->nr_repos && !s->stop_warm; i++) {
		struct mirror *m = &s->mirrors[i];
		char *path = xasprintf("%s/%s.git", s->conf->mirrors, m->conf->name);
		int64_t t0 = now_ms();

		pthread_mutex_lock(&m->lock);
		gitx_set_progress(mirror_progress, m);
		if (!m->repo && mkdir_p(s->conf->mirrors, 0755) == 0) {
			if (repo_open(&m->repo, path, m->conf->url, 1) == 0) {
				if (now_ms() - t0 >= 1000)
					log_info("repo %s: mirror ready in %.1f s", m->conf->name,
						 (double)(now_ms() - t0) / 1000);
			} else {
				log_warn("repo %s: cannot mirror %s yet (a job will try again): %s",
					 m->conf->name, m->conf->url, err_msg());
			}
		}
		gitx_set_progress(NULL, NULL);
		pthread_mutex_unlock(&m->lock);
		free(path);
	}
	return NULL;
}

void sched_start_mirrors(struct sched *s)
{
	if (pthread_create(&s->warm, NULL, warm_main, s) == 0)
		s->warming = 1;
}

void sched_free(struct sched *s)
{
	if (!s)
		return;
	if (s->warming) {
		s->stop_warm = 1;
		pthread_join(s->warm, NULL);
	}
	for (size_t i = 0; i < s->conf->nr_repos; i++) {
		repo_free(s->mirrors[i].repo);
		pthread_mutex_destroy(&s->mirrors[i].lock);
	}
	free(s->mirrors);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static int event(struct sched *s, long long job, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int event(struct sched *s, long long job, const char *kind, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int rc;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg)
		return err_set(ERR_FAIL, "out of memory");
	if (job > 0)
		log_info("job %lld: %s: %s", job, kind, msg);
	else
		log_info("%s: %s", kind, msg);
	if (job > 0)
		rc = store_exec(s->st, "INSERT INTO events (time, job_id, kind, message) VALUES (?, ?, ?, ?)",
				"iiss", (long long)now_unix(), job, kind, msg);
	else
		rc = store_exec(s->st, "INSERT INTO events (time, job_id, kind, message) VALUES (?, NULL, ?, ?)",
				"iss", (long long)now_unix(), kind, msg);
	free(msg);
	return rc < 0 ? rc : 0;
}

int sched_sync_conf(struct sched *s)
{
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	if ((rc = store_begin(s->st)))
		goto out;
	for (size_t i = 0; i < s->conf->nr_repos; i++) {
		const struct conf_repo *r = &s->conf->repos[i];

		rc = store_exec(s->st, "INSERT INTO repos (name, url) VALUES (?, ?) "
				"ON CONFLICT(name) DO UPDATE SET url = excluded.url", "ss", r->name, r->url);
		if (rc < 0)
			break;
		rc = 0;
	}
	if (rc == 0)
		rc = store_commit(s->st);
	if (rc)
		store_rollback(s->st);
out:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* ------------------------------------------------------------------ */
/* A job as the step function sees it. */

struct jobctx {
	long long id;
	json_t *job;
	int n;                       /* commits 0..n-1: 0 good end, n-1 bad end */
	int runs;
	int higher;                  /* higher is better */
	int **parents;
	int *nr_parents;
	enum commit_class *cls;
	char **state;                /* job_commits.state, borrowed from rows */
	json_t *rows;
	struct summary *sum;
	int *outstanding;            /* queued or claimed tasks per commit */
	struct policy *pol;
	int reproduced;              /* engine_load(): the ends differed at an earlier step */
	double build_cost, run_cost; /* engine_load(): mean seconds per build and per run so far, 0 unknown */
};

static void jobctx_release(struct jobctx *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->parents ? c->parents[i] : NULL);
	free(c->parents);
	free(c->nr_parents);
	free(c->cls);
	free(c->state);
	free(c->sum);
	free(c->outstanding);
	policy_free(c->pol);
	json_decref(c->rows);
	json_decref(c->job);
	memset(c, 0, sizeof(*c));
}

static int commit_values(struct sched *s, double **v, size_t *n, long long job, int idx)
{
	return store_doubles(s->st, v, n, "SELECT value FROM samples WHERE job_id = ? AND idx = ? ORDER BY id",
			     "ii", job, (long long)idx);
}

static int jobctx_load(struct sched *s, struct jobctx *c, long long id)
{
	json_t *sums = NULL, *outs = NULL, *r;
	size_t i;
	int rc;

	memset(c, 0, sizeof(*c));
	c->id = id;
	rc = store_row(s->st, &c->job, "SELECT id, state, runs, direction, unit, pool, policy, confidence, alpha, "
		       "min_effect, budget_runs, budget_builds, budget_seconds, created FROM jobs WHERE id = ?", "i", id);
	if (rc == ERR_NOTFOUND)
		return err_set(ERR_NOTFOUND, "job %lld does not exist", id);
	if (rc)
		return rc;
	c->runs = (int)json_integer_value(json_object_get(c->job, "runs"));
	c->higher = !strcmp(json_string_value(json_object_get(c->job, "direction")), "higher");
	if ((rc = store_rows(s->st, &c->rows, "SELECT idx, parents AS parents_json, state FROM job_commits "
			     "WHERE job_id = ? ORDER BY idx", "i", id)))
		goto fail;
	c->n = (int)json_array_size(c->rows);
	c->parents = xcalloc((size_t)c->n, sizeof(*c->parents));
	c->nr_parents = xcalloc((size_t)c->n, sizeof(int));
	c->cls = xcalloc((size_t)c->n, sizeof(*c->cls));
	c->state = xcalloc((size_t)c->n, sizeof(*c->state));
	c->sum = xcalloc((size_t)c->n, sizeof(*c->sum));
	c->outstanding = xcalloc((size_t)c->n, sizeof(int));
	json_array_foreach(c->rows, i, r) {
		json_t *ps = json_object_get(r, "parents"), *p;
		const char *st = json_string_value(json_object_get(r, "state"));
		size_t j;

		c->state[i] = (char *)(uintptr_t)st;
		c->cls[i] = !strcmp(st, "good") ? CLASS_GOOD : !strcmp(st, "bad") ? CLASS_BAD :
			    !strcmp(st, "skipped") ? CLASS_SKIPPED : CLASS_UNKNOWN;
		c->parents[i] = xcalloc(json_array_size(ps) + 1, sizeof(int));
		json_array_foreach(ps, j, p)
			c->parents[i][c->nr_parents[i]++] = (int)json_integer_value(p);
	}
	if ((rc = policy_new(&c->pol, c->n, c->parents, c->nr_parents)))
		goto fail;
	if ((rc = store_rows(s->st, &sums, "SELECT idx, n, failures, hmean, amean, cv FROM summaries "
			     "WHERE job_id = ?", "i", id)))
		goto fail;
	json_array_foreach(sums, i, r) {
		int idx = (int)json_integer_value(json_object_get(r, "idx"));

		if (idx < 0 || idx >= c->n)
			continue;
		c->sum[idx].n = (size_t)json_integer_value(json_object_get(r, "n"));
		c->sum[idx].failures = (size_t)json_integer_value(json_object_get(r, "failures"));
		c->sum[idx].hmean = json_number_value(json_object_get(r, "hmean"));
		c->sum[idx].amean = json_number_value(json_object_get(r, "amean"));
		c->sum[idx].cv = json_number_value(json_object_get(r, "cv"));
	}
	if ((rc = store_rows(s->st, &outs, "SELECT idx, count(*) AS c FROM tasks WHERE job_id = ? "
			     "AND state IN ('queued', 'claimed') GROUP BY idx", "i", id)))
		goto fail;
	json_array_foreach(outs, i, r) {
		int idx = (int)json_integer_value(json_object_get(r, "idx"));

		if (idx >= 0 && idx < c->n)
			c->outstanding[idx] = (int)json_integer_value(json_object_get(r, "c"));
	}
	json_decref(sums);
	json_decref(outs);
	return 0;
fail:
	json_decref(sums);
	json_decref(outs);
	jobctx_release(c);
	return rc;
}

static int set_commit_state(struct sched *s, struct jobctx *c, int idx, const char *state)
{
	int rc = store_exec(s->st, "UPDATE job_commits SET state = ? WHERE job_id = ? AND idx = ?",
			    "sii", state, c->id, (long long)idx);

	if (rc < 0)
		return rc;
	c->cls[idx] = !strcmp(state, "good") ? CLASS_GOOD : !strcmp(state, "bad") ? CLASS_BAD :
		      !strcmp(state, "skipped") ? CLASS_SKIPPED : CLASS_UNKNOWN;
	return 0;
}

/* Queues runs of commit idx; after > 0 chains it behind that task, on the same agent. */
static int queue_runs(struct sched *s, struct jobctx *c, int idx, int runs, int confirm, long long after)
{
	int rc = store_exec(s->st, after > 0 ?
			    "INSERT INTO tasks (job_id, idx, runs, created, confirm, after_task) VALUES (?, ?, ?, ?, ?, ?)" :
			    "INSERT INTO tasks (job_id, idx, runs, created, confirm) VALUES (?, ?, ?, ?, ?)",
			    after > 0 ? "iiiiii" : "iiiii", c->id, (long long)idx, (long long)runs,
			    (long long)now_unix(), (long long)confirm, after);

	if (rc < 0)
		return rc;
	rc = store_exec(s->st, "UPDATE job_commits SET state = 'queued' WHERE job_id = ? AND idx = ? "
			"AND state = 'untested'", "ii", c->id, (long long)idx);
	if (rc < 0)
		return rc;
	c->outstanding[idx]++;
	pthread_cond_broadcast(&s->cond);
	return 0;
}

static int queue_task(struct sched *s, struct jobctx *c, int idx)
{
	return queue_runs(s, c, idx, c->runs, 0, 0);
}

static json_t *commit_json(struct sched *s, struct jobctx *c, int idx)
{
	json_t *j = NULL;

	if (store_row(s->st, &j, "SELECT c.idx, c.sha, c.subject, c.state, s.n, s.failures, s.hmean, "
		      "s.amean, s.cv FROM job_commits c LEFT JOIN summaries s ON s.job_id = c.job_id "
		      "AND s.idx = c.idx WHERE c.job_id = ? AND c.idx = ?", "ii", c->id, (long long)idx))
		return json_null();
	return j;
}

/* The two-sample comparison a report shows: change of b against a, and its p-value. */
static int compare(struct sched *s, struct jobctx *c, int a, int b, double *change, double *p,
		   enum stats_alt alt)
{
	double *va = NULL, *vb = NULL;
	size_t na, nb;
	int rc;

	if ((rc = commit_values(s, &va, &na, c->id, a)) || (rc = commit_values(s, &vb, &nb, c->id, b)))
		goto out;
	*change = stats_change_pct(c->sum[a].hmean, c->sum[b].hmean) / 100.0;
	*p = stats_mann_whitney(vb, nb, va, na, alt);
out:
	free(va);
	free(vb);
	return rc;
}

static int finish(struct sched *s, struct jobctx *c, const char *state, int culprit,
		  json_t *report, const char *error)
{
	char *rep = report ? jsonx_dump(report) : NULL;
	int rc;

	if (culprit >= 0)
		rc = store_exec(s->st, "UPDATE jobs SET state = ?, finished = ?, culprit = ?, report = ?, "
				"error = ? WHERE id = ?", "siissi", state, (long long)now_unix(),
				(long long)culprit, rep, error, c->id);
	else
		rc = store_exec(s->st, "UPDATE jobs SET state = ?, finished = ?, culprit = NULL, report = ?, "
				"error = ? WHERE id = ?", "sissi", state, (long long)now_unix(), rep, error, c->id);
	free(rep);
	if (rc < 0)
		return rc;
	rc = store_exec(s->st, "UPDATE tasks SET state = 'cancelled', finished = ? WHERE job_id = ? "
			"AND state = 'queued'", "ii", (long long)now_unix(), c->id);
	if (rc < 0)
		return rc;
	return event(s, c->id, "end", "%s%s%s", state, error ? ": " : "", error ? error : "");
}

static int fail_job(struct sched *s, struct jobctx *c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_job(struct sched *s, struct jobctx *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return finish(s, c, "failed", -1, NULL, msg);
}

/* How many agents of the job's pool have been seen within a lease. */
static int live_agents(struct sched *s, const struct conf_pool *pool)
{
	json_t *rows = NULL, *r;
	size_t i;
	int n = 0;

	if (store_rows(s->st, &rows, "SELECT labels AS labels_json FROM agents WHERE last_seen >= ?", "i",
		       (long long)(now_unix() - s->conf->lease_seconds)))
		return 1;
	json_array_foreach(rows, i, r) {
		json_t *ls = json_object_get(r, "labels"), *l;
		char **v = xcalloc(json_array_size(ls) + 1, sizeof(char *));
		size_t j, k = 0;

		json_array_foreach(ls, j, l)
			if (json_is_string(l))
				v[k++] = (char *)(uintptr_t)json_string_value(l);
		n += conf_pool_matches(pool, v);
		free(v);
	}
	json_decref(rows);
	return n;
}

/*
 * Ends the job because an end could not be measured, with the reason its
 * last task gave ("kernel config: CONFIG_X=y requested ... not set"): the
 * same reason skips every commit, and the user must see it to fix it.
 */
static int fail_end(struct sched *s, struct jobctx *c, int e)
{
	json_t *row = NULL;
	const char *why = NULL, *what = "";
	int rc;

	if (store_row(s->st, &row, "SELECT error FROM tasks WHERE job_id = ? AND idx = ? AND error IS NOT NULL "
		      "ORDER BY id DESC LIMIT 1", "ii", c->id, (long long)e) == 0) {
		why = json_string_value(json_object_get(row, "error"));
	} else if (store_row(s->st, &row, "SELECT error FROM samples WHERE job_id = ? AND idx = ? AND "
			     "error IS NOT NULL ORDER BY id DESC LIMIT 1", "ii", c->id, (long long)e) == 0) {
		why = json_string_value(json_object_get(row, "error"));
		what = "every run failed, the last with: ";
	}
	rc = fail_job(s, c, "the %s end could not be measured: %s%s", e ? "bad" : "good", what,
		      why ? why : "build, boot or every run failed");
	json_decref(row);
	return rc;
}

/* Is the bad end worse than the good end, significantly and by enough? */
static int ends_step(struct sched *s, struct jobctx *c, int *reproduced)
{
	int bad = c->n - 1, rc;
	double change, p, worse;
	json_t *rep;

	*reproduced = 0;
	for (int e = 0; e <= bad; e += bad) {
		if (c->cls[e] == CLASS_SKIPPED)
			return fail_end(s, c, e);
	}
	if (c->outstanding[0] || c->outstanding[bad])
		return 0;
	if ((rc = compare(s, c, 0, bad, &change, &p, c->higher ? ALT_LESS : ALT_GREATER)))
		return rc;
	worse = c->higher ? -change : change;
	if (p < ALPHA && worse >= MIN_EFFECT) {
		*reproduced = 1;
		if (c->cls[0] != CLASS_GOOD) {
			if ((rc = set_commit_state(s, c, 0, "good")) || (rc = set_commit_state(s, c, bad, "bad")))
				return rc;
			rc = event(s, c->id, "reproduced", "bad end is %.2f%% worse than good end "
				   "(hmean %.2f vs %.2f, p=%.4f, n=%zu/%zu)", worse * 100, c->sum[bad].hmean,
				   c->sum[0].hmean, p, c->sum[bad].n, c->sum[0].n);
		}
		return rc;
	}
	if ((int)c->sum[0].n < END_BATCHES * c->runs || (int)c->sum[bad].n < END_BATCHES * c->runs) {
		if ((rc = event(s, c->id, "ends", "no clear difference yet (%.2f%% worse, p=%.4f): "
				"measuring both ends again", worse * 100, p)))
			return rc;
		if ((rc = queue_task(s, c, 0)))
			return rc;
		return queue_task(s, c, bad);
	}
	rep = json_pack("{s:s, s:o, s:o, s:f, s:f, s:f, s:f}", "verdict", "not-reproduced",
			"good", commit_json(s, c, 0), "bad", commit_json(s, c, bad),
			"change_pct", change * 100, "p_value", p, "alpha", ALPHA, "min_effect_pct", MIN_EFFECT * 100);
	rc = finish(s, c, "not-reproduced", -1, rep, NULL);
	json_decref(rep);
	return rc;
}

/* Calls measured commits good-like or bad-like against the two ends. */
static int classify_step(struct sched *s, struct jobctx *c)
{
	double lg = log(c->sum[0].hmean), lb = log(c->sum[c->n - 1].hmean);
	int rc = 0;

	for (int i = 1; i < c->n - 1 && rc == 0; i++) {
		double t;
		const char *call = NULL;

		if (c->cls[i] != CLASS_UNKNOWN || c->outstanding[i] || c->sum[i].n + c->sum[i].failures == 0)
			continue;
		if (c->sum[i].n == 0) {
			if ((rc = set_commit_state(s, c, i, "skipped")))
				break;
			rc = event(s, c->id, "skip", "commit %d: every run failed", i);
			continue;
		}
		/* Where the commit sits between the ends on a log scale: 0 good, 1 bad. */
		t = (log(c->sum[i].hmean) - lg) / (lb - lg);
		if (t < 0.35)
			call = "good";
		else if (t > 0.65)
			call = "bad";
		else if ((int)c->sum[i].n < MID_BATCHES * c->runs) {
			rc = event(s, c->id, "unclear", "commit %d at %.2f between good and bad "
				   "(hmean %.2f, n=%zu): more runs", i, t, c->sum[i].hmean, c->sum[i].n);
			if (rc == 0)
				rc = queue_task(s, c, i);
			continue;
		} else
			call = t < 0.5 ? "good" : "bad";
		if ((rc = set_commit_state(s, c, i, call)))
			break;
		rc = event(s, c->id, "decision", "commit %d is %s-like: hmean %.2f (%.4f), %.2f of the way "
			   "from good to bad, n=%zu", i, call, c->sum[i].hmean, c->sum[i].cv, t, c->sum[i].n);
	}
	return rc;
}

static int parent_of(struct jobctx *c, int idx)
{
	return c->nr_parents[idx] ? c->parents[idx][0] : 0;
}

static int report_culprit(struct sched *s, struct jobctx *c, int culprit)
{
	int parent = parent_of(c, culprit), rc;
	double change, p;
	json_t *rep;

	if ((rc = compare(s, c, parent, culprit, &change, &p, ALT_TWO_SIDED)))
		return rc;
	rep = json_pack("{s:s, s:o, s:o, s:f, s:f, s:o, s:o}", "verdict", "culprit",
			"culprit", commit_json(s, c, culprit), "parent", commit_json(s, c, parent),
			"change_pct", change * 100, "p_value", p,
			"good", commit_json(s, c, 0), "bad", commit_json(s, c, c->n - 1));
	rc = event(s, c->id, "culprit", "commit %d: %+.2f%% against its parent (p=%.4f)",
		   culprit, change * 100, p);
	if (rc == 0)
		rc = finish(s, c, "done", culprit, rep, NULL);
	json_decref(rep);
	return rc;
}

static int report_range(struct sched *s, struct jobctx *c, const unsigned char *in_c)
{
	json_t *rep, *range = json_array();
	int rc;

	for (int i = 0; i < c->n; i++)
		if (in_c[i])
			json_array_append_new(range, commit_json(s, c, i));
	rep = json_pack("{s:s, s:o, s:o, s:o}", "verdict", "range", "range", range,
			"good", commit_json(s, c, 0), "bad", commit_json(s, c, c->n - 1));
	rc = finish(s, c, "done", -1, rep, NULL);
	json_decref(rep);
	return rc;
}

/*
 * The walking skeleton's policy ("split"), kept as a job option to compare
 * against: check the ends, call what was measured, and either report or
 * queue the next commits, one per live agent of the pool.
 */
static int split_step(struct sched *s, long long id)
{
	struct jobctx c;
	unsigned char *in_c = NULL, *busy = NULL;
	const struct conf_pool *pool;
	json_t *j = NULL;
	int rc, reproduced, nr_c, k, *picks = NULL;

	if ((rc = jobctx_load(s, &c, id)))
		return rc;
	if (strcmp(json_string_value(json_object_get(c.job, "state")), "queued") &&
	    strcmp(json_string_value(json_object_get(c.job, "state")), "running"))
		goto out;
	if ((rc = ends_step(s, &c, &reproduced)) || !reproduced)
		goto out;
	if ((rc = classify_step(s, &c)))
		goto out;
	in_c = xcalloc((size_t)c.n, 1);
	nr_c = policy_candidates(c.pol, c.cls, in_c);
	if (nr_c == 0) {
		rc = fail_job(s, &c, "the measurements contradict each other: no commit can be the culprit");
		goto out;
	}
	if (nr_c == 1) {
		int culprit = 0, parent;

		while (!in_c[culprit])
			culprit++;
		parent = parent_of(&c, culprit);
		/* The report shows the culprit beside its parent: measure it if no one has. */
		if (c.sum[parent].n == 0 && c.cls[parent] != CLASS_SKIPPED) {
			if (!c.outstanding[parent])
				rc = queue_task(s, &c, parent);
			goto out;
		}
		rc = report_culprit(s, &c, culprit);
		goto out;
	}
	busy = xcalloc((size_t)c.n, 1);
	k = 0;
	for (int i = 0; i < c.n; i++) {
		busy[i] = c.outstanding[i] > 0;
		k += c.outstanding[i];
	}
	if ((rc = store_row(s->st, &j, "SELECT pool FROM jobs WHERE id = ?", "i", id)))
		goto out;
	pool = conf_pool_find(s->conf, json_string_value(json_object_get(j, "pool")));
	k = (pool ? live_agents(s, pool) : 1) - k;
	if (k <= 0)
		goto out;
	picks = xmalloc((size_t)k * sizeof(int));
	k = policy_next(c.pol, c.cls, busy, k, picks);
	if (k == 0) {
		int pending = 0;

		for (int i = 0; i < c.n; i++)
			pending += c.outstanding[i];
		if (!pending)  /* only skipped commits are left between the calls */
			rc = report_range(s, &c, in_c);
		goto out;
	}
	for (int i = 0; i < k && rc == 0; i++) {
		rc = event(s, id, "next", "measuring commit %d (%d candidates left)", picks[i], nr_c);
		if (rc == 0)
			rc = queue_task(s, &c, picks[i]);
	}
out:
	free(picks);
	free(in_c);
	free(busy);
	json_decref(j);
	jobctx_release(&c);
	return rc;
}


/* Builds the engine from what the store holds for the job. */
static int engine_load(struct sched *s, struct jobctx *c, struct bisect **out)
{
	struct bisect_opts o = BISECT_OPTS_INIT;
	json_t *rows = NULL, *r, *cost = NULL;
	size_t i;
	int rc;

	o.confidence = json_number_value(json_object_get(c->job, "confidence"));
	o.alpha = json_number_value(json_object_get(c->job, "alpha"));
	o.min_effect = json_number_value(json_object_get(c->job, "min_effect"));
	o.budget_runs = json_integer_value(json_object_get(c->job, "budget_runs"));
	o.budget_builds = json_integer_value(json_object_get(c->job, "budget_builds"));
	o.higher_is_better = c->higher;
	o.runs_min = 1;
	o.runs_max = c->runs;
	o.end_runs = c->runs < 5 ? 5 : c->runs;
	o.end_runs_max = 6 * o.end_runs;
	if ((rc = bisect_new(out, c->n, c->parents, c->nr_parents, &o)))
		return rc;
	/*
	 * In the order they were taken, each with its task (whose runs share a
	 * level), its agent (a level of its own) and the kind of query it
	 * answered: the task's confirm column.
	 */
	if ((rc = store_rows(s->st, &rows, "SELECT s.idx, s.value, s.task_id, coalesce(t.agent_id, 0) AS agent, "
			     "t.confirm FROM samples s JOIN tasks t ON t.id = s.task_id WHERE s.job_id = ? "
			     "ORDER BY s.id", "i", c->id)))
		goto fail;
	json_array_foreach(rows, i, r) {
		long long kind = json_integer_value(json_object_get(r, "confirm"));
		long long agent = json_integer_value(json_object_get(r, "agent"));

		if (kind != BISECT_Q_CONFIRM && kind != BISECT_Q_EARLY)
			kind = BISECT_Q_SEARCH;
		bisect_add_run(*out, (int)json_integer_value(json_object_get(r, "idx")),
			       json_number_value(json_object_get(r, "value")),
			       (long)json_integer_value(json_object_get(r, "task_id")),
			       agent >= 0 && agent <= 0x7fffffff ? (int)agent : 0, (int)kind);
	}
	for (int k = 0; k < c->n; k++)
		if (c->cls[k] == CLASS_SKIPPED)
			bisect_mark_skipped(*out, k);
	/* Once the ends differed, the job searches: later runs at the ends do not send it back. */
	c->reproduced = store_int(s->st, &(long long){ 0 }, "SELECT 1 FROM decisions WHERE job_id = ? AND "
				  "state != 'ends' LIMIT 1", "i", c->id) == 0;
	if (c->reproduced)
		bisect_assume_reproduced(*out);
	/*
	 * What building and one run cost on this job so far: the engine weighs
	 * bits per second, and the derived wall-time budget is made of them. A
	 * build is a task that built (build_s > 0), a commit already built
	 * costs next to nothing.
	 */
	if (store_row(s->st, &cost, "SELECT avg(build_s) AS b, sum(run_s) / sum(runs) AS r, "
		      "(SELECT avg(build_s) FROM tasks WHERE job_id = ?1 AND state = 'done' AND build_s > 0) AS per_build "
		      "FROM tasks WHERE job_id = ?1 AND state = 'done' AND runs > 0", "i", c->id) == 0) {
		bisect_set_costs(*out, json_number_value(json_object_get(cost, "b")),
				 json_number_value(json_object_get(cost, "r")));
		c->build_cost = json_number_value(json_object_get(cost, "per_build"));
		c->run_cost = json_number_value(json_object_get(cost, "r"));
	}
	json_decref(cost);
	json_decref(rows);
	return 0;
fail:
	json_decref(rows);
	bisect_free(*out);
	*out = NULL;
	return rc;
}

static double res_confidence(struct jobctx *c)
{
	return json_number_value(json_object_get(c->job, "confidence"));
}

static const char *state_name(enum bisect_state st)
{
	static const char *names[] = { "ends", "search", "confirm", "done" };

	return names[st];
}

static int store_decision(struct sched *s, struct jobctx *c, struct bisect *b, const struct bisect_query *q,
			  int nq)
{
	struct bisect_result res;
	json_t *qs = json_array(), *top = json_array();
	int idx[5], n;
	double p[5];
	char *qj, *tj;
	int rc;

	bisect_result(b, &res);
	for (int i = 0; i < nq; i++)
		json_array_append_new(qs, json_pack("{s:i, s:i, s:f, s:f, s:b, s:b}", "idx", q[i].commit, "runs",
						    q[i].runs, "mass", q[i].mass, "gain", q[i].gain, "confirm",
						    q[i].confirm == BISECT_Q_CONFIRM, "early", q[i].confirm == BISECT_Q_EARLY));
	n = res.state == BISECT_ENDS ? 0 : bisect_top(b, idx, p, 5);
	for (int i = 0; i < n; i++)
		json_array_append_new(top, json_pack("{s:i, s:f}", "idx", idx[i], "p", p[i]));
	qj = jsonx_dump(qs);
	tj = jsonx_dump(top);
	rc = store_exec(s->st, "INSERT INTO decisions (job_id, time, state, queries, top, why) VALUES (?, ?, ?, ?, ?, ?)",
			"iissss", c->id, (long long)now_unix(), state_name(res.state), qj, tj, res.why);
	free(qj);
	free(tj);
	json_decref(qs);
	json_decref(top);
	return rc < 0 ? rc : 0;
}

/* Sets key to v when v is a finite number: jansson refuses NaN, and an unknown number is better absent. */
static void set_num(json_t *o, const char *key, double v)
{
	if (isfinite(v))
		json_object_set_new(o, key, json_real(v));
}

/* The run budget in force: the job's, else the one the engine derived (0: none yet). */
static long long budget_runs_of(struct jobctx *c, const struct bisect_result *res)
{
	long long own = json_integer_value(json_object_get(c->job, "budget_runs"));

	return own > 0 ? own : res->budget_runs > 0 ? res->budget_runs : 0;
}

/* The wall-time budget in force, seconds from the job's creation: the job's, else derived (0: none yet). */
static long long budget_seconds_of(struct jobctx *c, const struct bisect_result *res)
{
	long long own = json_integer_value(json_object_get(c->job, "budget_seconds"));
	long long runs = budget_runs_of(c, res);
	struct bisect_opts o = BISECT_OPTS_INIT;
	double run = c->run_cost > 0 ? c->run_cost : o.run_cost;
	double build = c->build_cost > 0 ? c->build_cost : o.build_cost;
	double est;

	if (own > 0)
		return own;
	if (runs <= 0)
		return 0;
	est = BUDGET_S_SLACK * ((double)runs * run + (double)runs / 2 * build);
	return est < BUDGET_S_MIN ? BUDGET_S_MIN : est > BUDGET_S_MAX ? BUDGET_S_MAX : (long long)est;
}

static long long job_elapsed(struct jobctx *c)
{
	return (long long)now_unix() - json_integer_value(json_object_get(c->job, "created"));
}

static const char *verdict_name(enum bisect_verdict v)
{
	switch (v) {
	case VERDICT_CULPRIT: return "culprit";
	case VERDICT_RANGE: return "range";
	case VERDICT_NOT_REPRODUCED: return "not-reproduced";
	default: return "undecided";  /* VERDICT_UNDECIDED, or a budget the coordinator holds (wall time) */
	}
}

/*
 * The report of an ended engine job, whatever the verdict: the ends, the
 * smallest set holding the confidence ("range", each with p), the five
 * most probable commits ("top"), the effect with its 95% interval, the
 * noise per task and per run, and the budgets: what an undecided answer is
 * read with, and what tells a confident one from a lucky one.
 */
static json_t *engine_report(struct sched *s, struct jobctx *c, struct bisect *b, const struct bisect_result *res)
{
	json_t *rep = json_object(), *set = json_array(), *top = json_array();
	int idx[5], n = 0;
	double p[5];

	for (int i = 0; i < res->nr_set && i < 50; i++) {
		json_t *x = commit_json(s, c, res->set[i]);

		set_num(x, "p", bisect_posterior(b, res->set[i]));
		json_array_append_new(set, x);
	}
	/* The posterior means something once the ends differed. */
	if (res->verdict != VERDICT_NOT_REPRODUCED &&
	    (c->reproduced || res->state == BISECT_SEARCH || res->state == BISECT_CONFIRM))
		n = bisect_top(b, idx, p, 5);
	for (int i = 0; i < n; i++) {
		json_t *x = commit_json(s, c, idx[i]);

		set_num(x, "p", p[i]);
		json_array_append_new(top, x);
	}
	json_object_set_new(rep, "verdict", json_string(verdict_name(res->verdict)));
	json_object_set_new(rep, "good", commit_json(s, c, 0));
	json_object_set_new(rep, "bad", commit_json(s, c, c->n - 1));
	set_num(rep, "ends_change_pct", 100 * res->ends_change);
	set_num(rep, "ends_p", res->ends_p);
	json_object_set_new(rep, "runs", json_integer(res->runs));
	json_object_set_new(rep, "builds", json_integer(res->builds));
	json_object_set_new(rep, "outliers", json_integer(res->outliers));
	json_object_set_new(rep, "range", set);
	set_num(rep, "set_mass", res->set_mass);
	json_object_set_new(rep, "top", top);
	json_object_set_new(rep, "why", json_string(res->why ? res->why : ""));
	set_num(rep, "alpha", json_number_value(json_object_get(c->job, "alpha")));
	set_num(rep, "min_effect_pct", 100 * json_number_value(json_object_get(c->job, "min_effect")));
	set_num(rep, "confidence_asked", res_confidence(c));
	set_num(rep, "effect_pct", 100 * res->effect);
	set_num(rep, "effect_lo_pct", 100 * res->effect_lo);
	set_num(rep, "effect_hi_pct", 100 * res->effect_hi);
	set_num(rep, "task_cv", res->task_cv);
	set_num(rep, "run_cv", res->run_cv);
	if (budget_runs_of(c, res) > 0)
		json_object_set_new(rep, "budget_runs", json_integer(budget_runs_of(c, res)));
	if (budget_seconds_of(c, res) > 0)
		json_object_set_new(rep, "budget_seconds", json_integer(budget_seconds_of(c, res)));
	json_object_set_new(rep, "elapsed_seconds", json_integer(job_elapsed(c)));
	if (res->more_runs >= 0)
		json_object_set_new(rep, "more_runs", json_integer(res->more_runs));
	if (res->failed_confirm >= 0 && res->failed_confirm < c->n)
		json_object_set_new(rep, "failed_confirm", json_integer(res->failed_confirm));
	if (res->verdict == VERDICT_NOT_REPRODUCED) {
		set_num(rep, "change_pct", 100 * res->ends_change);
		set_num(rep, "p_value", res->ends_p);
	}
	return rep;
}

/* A culprit's report: the culprit beside its parent, with the change, p-value and confidence. */
static int engine_finish_culprit(struct sched *s, struct jobctx *c, const struct bisect_result *res, json_t *rep)
{
	int parent = parent_of(c, res->culprit), rc;
	double change, p;

	if ((rc = compare(s, c, parent, res->culprit, &change, &p, ALT_TWO_SIDED)))
		return rc;
	json_object_set_new(rep, "culprit", commit_json(s, c, res->culprit));
	json_object_set_new(rep, "parent", commit_json(s, c, parent));
	json_object_set_new(rep, "change_pct", json_real(change * 100));
	json_object_set_new(rep, "p_value", json_real(p));
	json_object_set_new(rep, "confidence", json_real(res->confidence));
	if ((rc = event(s, c->id, "culprit", "commit %d: %+.2f%% against its parent (p=%.4f), confidence %.4f",
			res->culprit, change * 100, p, res->confidence)))
		return rc;
	return finish(s, c, "done", res->culprit, rep, NULL);
}

/*
 * The chain a query belongs to: the engine's, or for a confirmation or an
 * early pair it did not chain, one of their own (-1): a pair is always run
 * interleaved on one agent.
 */
#define QUERY_CHAIN(q) ((q)->chain > 0 ? (q)->chain : (q)->confirm ? -1 : 0)

/*
 * Queues what the engine asked for: a query of its own as one task of its
 * runs, on any agent; the queries of one chain (a confirmation, an early
 * pair, or any the engine chains) as a chain of one-run tasks, its
 * commits in turn (A B A B ...), each link after the one before, on one
 * agent. The task's confirm column keeps each query's kind
 * (BISECT_Q_CONFIRM, BISECT_Q_EARLY) for engine_load().
 */
static int queue_queries(struct sched *s, struct jobctx *c, const struct bisect_query *q, int nq)
{
	unsigned char *done = xcalloc((size_t)nq + 1, 1);
	int rc = 0;

	for (int i = 0; i < nq && rc == 0; i++) {
		if (QUERY_CHAIN(&q[i]))
			continue;
		rc = event(s, c->id, "next", "commit %d: %d runs (P(bad) %.3f, %.3f bits)", q[i].commit,
			   q[i].runs, q[i].mass, q[i].gain);
		if (rc == 0)
			rc = queue_runs(s, c, q[i].commit, q[i].runs, q[i].confirm, 0);
	}
	for (int i = 0; i < nq && rc == 0; i++) {
		int member[8], left[8], m = 0, kind = q[i].confirm, more = 1;
		long long after = 0;
		struct sbuf what = SBUF_INIT;

		if (!QUERY_CHAIN(&q[i]) || done[i])
			continue;
		for (int j = i; j < nq && m < 8; j++)
			if (!done[j] && QUERY_CHAIN(&q[j]) == QUERY_CHAIN(&q[i])) {
				done[j] = 1;
				member[m] = j;
				left[m++] = q[j].runs;
			}
		for (int e = 0; e < m; e++)
			sbuf_addf(&what, "%s%d", e ? " and " : "", q[member[e]].commit);
		for (int e = 0; e < m; e++)
			sbuf_addf(&what, "%s%d", e ? "+" : ": ", left[e]);
		rc = event(s, c->id, kind == BISECT_Q_CONFIRM ? "confirm" : kind == BISECT_Q_EARLY ? "pair" : "next",
			   "commit%s %s runs, interleaved on one agent%s", m > 1 ? "s" : "", what.buf,
			   kind == BISECT_Q_CONFIRM ? " (the confirmation against its parent)" :
			   kind == BISECT_Q_EARLY ? " (early, while others search)" : "");
		sbuf_release(&what);
		while (rc == 0 && more) {
			more = 0;
			for (int e = 0; e < m && rc == 0; e++) {
				if (left[e]-- <= 0)
					continue;
				more = 1;
				rc = queue_runs(s, c, q[member[e]].commit, 1, q[member[e]].confirm, after);
				after = store_last_id(s->st);
			}
		}
	}
	free(done);
	return rc;
}

/*
 * Ends the job undecided: the engine could not decide within its budget,
 * or (why given) the coordinator's wall-time budget ran out first. The
 * report carries the engine's numbers as they stand.
 */
static int engine_finish_undecided(struct sched *s, struct jobctx *c, const struct bisect_result *res,
				   json_t *rep, const char *why)
{
	int rc;

	if (why)
		json_object_set_new(rep, "why", json_string(why));
	json_object_set_new(rep, "verdict", json_string("undecided"));
	if (!why)
		why = res->why ? res->why : "the data cannot decide within the budget";
	if ((rc = event(s, c->id, "undecided", "%s (after %ld runs)", why, res->runs)))
		return rc;
	return finish(s, c, "undecided", -1, rep, NULL);
}

/* Keeps the budgets the engine derived on the job, so that show and the API can say what is in force. */
static int store_budgets(struct sched *s, struct jobctx *c, const struct bisect_result *res)
{
	long long runs = json_integer_value(json_object_get(c->job, "budget_runs")) > 0 ? 0 : budget_runs_of(c, res);
	long long secs = json_integer_value(json_object_get(c->job, "budget_seconds")) > 0 ? 0 :
			 budget_seconds_of(c, res);
	int rc;

	if (runs <= 0 && secs <= 0)
		return 0;
	rc = store_exec(s->st, "UPDATE jobs SET budget_runs_auto = nullif(?1, 0), budget_seconds_auto = nullif(?2, 0) "
			"WHERE id = ?3 AND (budget_runs_auto IS NOT nullif(?1, 0) OR "
			"budget_seconds_auto IS NOT nullif(?2, 0))", "iii", runs, secs, c->id);
	return rc < 0 ? rc : 0;
}

/*
 * One step of the probabilistic engine: rebuild it from the store, ask it
 * for as many queries as the pool has idle agents, record the decision,
 * and queue the tasks (a confirmation as a chain of one-run tasks, parent
 * and culprit in turn, on one agent). A job past its wall-time budget
 * ends undecided instead of queueing more, unless this step decided it.
 */
static int engine_step(struct sched *s, struct jobctx *c)
{
	const struct conf_pool *pool = conf_pool_find(s->conf, json_string_value(json_object_get(c->job, "pool")));
	struct bisect *b = NULL;
	struct bisect_query *q = NULL;
	struct bisect_result res;
	unsigned char *busy = xcalloc((size_t)c->n, 1);
	long long taken = 0;
	int k, nq, rc;

	for (int i = 0; i < c->n; i++)
		busy[i] = c->outstanding[i] > 0;
	/*
	 * Idle agents: those of the pool less one for each task outstanding,
	 * where a chain (its links wait for each other on one agent) takes one.
	 */
	if ((rc = store_int(s->st, &taken, "SELECT count(*) FROM tasks t LEFT JOIN tasks prev ON prev.id = "
			    "t.after_task WHERE t.job_id = ? AND t.state IN ('queued', 'claimed') AND "
			    "(prev.id IS NULL OR prev.state NOT IN ('queued', 'claimed'))", "i", c->id)))
		goto out;
	k = (pool ? live_agents(s, pool) : 1) - (int)taken;
	if ((rc = engine_load(s, c, &b)))
		goto out;
	/*
	 * With every agent busy the engine is still asked, for one: it only
	 * decides with k > 0, and an end found unmeasurable or a spent budget
	 * should end the job now, not once the chain that keeps the agents
	 * busy is through (ten boots of a kernel that cannot run). The
	 * queries it chose then wait for an idle agent: the next step asks
	 * again, from the store.
	 */
	q = xcalloc((size_t)BISECT_MAX_QUERIES(k > 0 ? k : 1), sizeof(*q));
	nq = bisect_next(b, q, k > 0 ? k : 1, busy);
	bisect_result(b, &res);
	if (k <= 0 && res.state != BISECT_DONE)
		nq = 0;
	if (res.state != BISECT_DONE && budget_seconds_of(c, &res) > 0 && job_elapsed(c) > budget_seconds_of(c, &res)) {
		json_t *rep = engine_report(s, c, b, &res);
		char why[160];

		snprintf(why, sizeof(why), "the wall-time budget is spent (%lld s%s, %lld s since the job was created)",
			 budget_seconds_of(c, &res),
			 json_integer_value(json_object_get(c->job, "budget_seconds")) > 0 ? "" : ", derived",
			 job_elapsed(c));
		rc = engine_finish_undecided(s, c, &res, rep, why);
		json_decref(rep);
		goto out;
	}
	if ((rc = store_budgets(s, c, &res)))
		goto out;
	if (nq > 0 || res.state == BISECT_DONE)
		if ((rc = store_decision(s, c, b, q, nq)))
			goto out;
	/* Call the measured commits the posterior is sure of, for show and the dashboard. */
	for (int i = 0; i < c->n && rc == 0 && res.state != BISECT_ENDS; i++) {
		double m;

		if (c->cls[i] == CLASS_SKIPPED || c->sum[i].n == 0)
			continue;
		m = bisect_bad_mass(b, i);
		if (m >= res_confidence(c) && c->cls[i] != CLASS_BAD)
			rc = set_commit_state(s, c, i, "bad");
		else if (m <= 1 - res_confidence(c) && c->cls[i] != CLASS_GOOD)
			rc = set_commit_state(s, c, i, "good");
	}
	if (rc)
		goto out;
	if (res.state == BISECT_DONE) {
		json_t *rep = engine_report(s, c, b, &res);

		if (res.verdict == VERDICT_CULPRIT)
			rc = engine_finish_culprit(s, c, &res, rep);
		else if (res.verdict == VERDICT_RANGE)
			rc = finish(s, c, "done", -1, rep, NULL);
		else if (res.verdict == VERDICT_NONE && (bisect_skipped(b, 0) || bisect_skipped(b, c->n - 1)))
			rc = fail_end(s, c, bisect_skipped(b, 0) ? 0 : c->n - 1);
		else if (res.verdict == VERDICT_NOT_REPRODUCED)
			rc = finish(s, c, "not-reproduced", -1, rep, NULL);
		else if (res.verdict == VERDICT_UNDECIDED)
			rc = engine_finish_undecided(s, c, &res, rep, NULL);
		else
			rc = finish(s, c, "failed", -1, NULL, res.why);
		json_decref(rep);
		goto out;
	}
	rc = queue_queries(s, c, q, nq);
out:
	free(q);
	free(busy);
	bisect_free(b);
	return rc;
}

/* One step of a job after anything changed, by the job's policy. */
static int job_step(struct sched *s, long long id)
{
	struct jobctx c;
	const char *st;
	int rc;

	if ((rc = jobctx_load(s, &c, id)))
		return rc;
	st = json_string_value(json_object_get(c.job, "state"));
	if (strcmp(st, "queued") && strcmp(st, "running"))
		rc = 0;
	else if (!strcmp(json_string_value(json_object_get(c.job, "policy")), "split"))
		rc = split_step(s, id);
	else
		rc = engine_step(s, &c);
	jobctx_release(&c);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Jobs */

static struct mirror *mirror_find(struct sched *s, const char *name)
{
	for (size_t i = 0; i < s->conf->nr_repos; i++)
		if (!strcmp(s->mirrors[i].conf->name, name))
			return &s->mirrors[i];
	return NULL;
}

static const char *names_of(struct sbuf *sb, const void *arr, size_t n, size_t stride)
{
	for (size_t i = 0; i < n; i++) {
		const char *name = *(char *const *)(const void *)((const char *)arr + i * stride);

		sbuf_addf(sb, "%s%s", i ? ", " : "", name);
	}
	if (n == 0)
		sbuf_adds(sb, "none");
	return sb->buf;
}

static int check_keys(json_t *req, const char *const *allowed)
{
	const char *key;
	json_t *v;

	json_object_foreach(req, key, v) {
		const char *const *a;

		for (a = allowed; *a; a++)
			if (!strcmp(*a, key))
				break;
		if (!*a) {
			struct sbuf sb = SBUF_INIT;
			int rc;

			for (a = allowed; *a; a++)
				sbuf_addf(&sb, "%s%s", a == allowed ? "" : ", ", *a);
			rc = err_set(ERR_INVALID, "unknown field '%.64s' (expected: %s)", key, sb.buf);
			sbuf_release(&sb);
			return rc;
		}
	}
	return 0;
}

static json_t *job_json(struct sched *s, long long id, int full);

/* Resolves the range in the repo's mirror, fetching first. Outside s->lock. */
static int resolve_range(struct sched *s, struct mirror *m, struct repo_range *rr,
			 const char *good_ref, const char *bad_ref)
{
	char good[41], bad[41];
	char *path;
	int rc;

	pthread_mutex_lock(&m->lock);
	if (!m->repo) {
		path = xasprintf("%s/%s.git", s->conf->mirrors, m->conf->name);
		if (mkdir_p(s->conf->mirrors, 0755) == 0)
			rc = repo_open(&m->repo, path, m->conf->url, 1);
		else
			rc = err_code();
		free(path);
		if (rc) {
			rc = err_set(ERR_UNPROCESSABLE, "cannot mirror repo '%s' from %s: %s", m->conf->name,
				     m->conf->url, err_msg());
			goto out;
		}
	} else if (repo_fetch(m->repo)) {
		log_warn("repo %s: fetch from %s failed, using the mirror as it is: %s",
			 m->conf->name, m->conf->url, err_msg());
	}
	if ((rc = repo_resolve(m->repo, good, good_ref)) || (rc = repo_resolve(m->repo, bad, bad_ref))) {
		rc = err_set(ERR_UNPROCESSABLE, "%s", err_msg());
		goto out;
	}
	if ((rc = repo_range(rr, m->repo, good, bad, MAX_COMMITS)))
		rc = err_set(ERR_UNPROCESSABLE, "%s", err_msg());
out:
	pthread_mutex_unlock(&m->lock);
	return rc;
}

/*
 * A job's kernel command line variant: words of letters, digits and
 * "_.,=:/+-" separated by single spaces, so that it stays one line of
 * parameters ("mitigations=off nosmt") and nothing a shell or the
 * initramfs could read otherwise.
 */
static int check_append(const char *append)
{
	if (!append)
		return 0;
	if (!*append || *append == ' ' || append[strlen(append) - 1] == ' ' || strstr(append, "  "))
		goto bad;
	for (const char *p = append; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_.,=:/+- ", *p))
			goto bad;
	return 0;
bad:
	return err_set(ERR_INVALID, "field 'append' must be kernel parameters such as \"mitigations=off nosmt\": "
		       "words of A-Z a-z 0-9 _ . , = : / + - separated by single spaces");
}

int sched_job_create(struct sched *s, json_t **reply, json_t *req)
{
	static const char *const allowed[] = { "repo", "good", "bad", "workload", "pool", "runs", "policy",
					       "confidence", "alpha", "min_effect", "budget_runs", "budget_builds",
					       "budget_seconds", "direction", "append", NULL };
	const char *repo, *good, *bad, *workload, *pool = NULL, *policy, *direction, *append;
	double confidence, alpha, min_effect;
	long long budget_runs, budget_builds, budget_seconds;
	const struct conf_workload *w = NULL;
	const struct conf_pool *p = NULL;
	struct repo_range rr = { .nr = 0 };
	struct sbuf names = SBUF_INIT;
	struct mirror *m;
	long long runs, id = 0, repo_id;
	struct jobctx c;
	int rc;

	*reply = NULL;
	if ((rc = check_keys(req, allowed)) ||
	    (rc = jsonx_str(&repo, req, "repo", 64, 1, NULL)) ||
	    (rc = jsonx_str(&good, req, "good", 256, 1, NULL)) ||
	    (rc = jsonx_str(&bad, req, "bad", 256, 1, NULL)) ||
	    (rc = jsonx_str(&workload, req, "workload", 64, 1, NULL)) ||
	    (rc = jsonx_str(&pool, req, "pool", 64, 0, NULL)) ||
	    (rc = jsonx_int(&runs, req, "runs", 1, 100, 0, s->conf->default_runs)) ||
	    (rc = jsonx_str(&policy, req, "policy", 16, 0, "bisectd")) ||
	    (rc = jsonx_num(&confidence, req, "confidence", 0.5, 0.999999, 0, 0.99)) ||
	    (rc = jsonx_num(&alpha, req, "alpha", 1e-6, 0.5, 0, 0.01)) ||
	    (rc = jsonx_num(&min_effect, req, "min_effect", 0, 0.9, 0, 0.01)) ||
	    (rc = jsonx_int(&budget_runs, req, "budget_runs", 0, 1000000, 0, 0)) ||
	    (rc = jsonx_int(&budget_builds, req, "budget_builds", 0, 1000000, 0, 0)) ||
	    (rc = jsonx_int(&budget_seconds, req, "budget_seconds", 0, BUDGET_S_MAX, 0, 0)) ||
	    (rc = jsonx_str(&direction, req, "direction", 16, 0, NULL)) ||
	    (rc = jsonx_str(&append, req, "append", 256, 0, NULL)) ||
	    (rc = check_append(append)))
		return rc;
	if (strcmp(policy, "bisectd") && strcmp(policy, "split"))
		return err_set(ERR_INVALID, "field 'policy' must be bisectd or split, not '%s'", policy);
	if (direction && strcmp(direction, "higher") && strcmp(direction, "lower"))
		return err_set(ERR_INVALID, "field 'direction' must be higher or lower (which is better), not '%s'",
			       direction);
	if (!*good || !*bad)
		return err_set(ERR_INVALID, "fields 'good' and 'bad' must name commits");
	if (!(m = mirror_find(s, repo)))
		rc = err_set(ERR_NOTFOUND, "unknown repo '%s' (configured: %s)", repo,
			     names_of(&names, s->conf->repos, s->conf->nr_repos, sizeof(*s->conf->repos)));
	else if (!(w = conf_workload_find(s->conf, workload)))
		rc = err_set(ERR_NOTFOUND, "unknown workload '%s' (configured: %s)", workload,
			     names_of(&names, s->conf->workloads, s->conf->nr_workloads,
				      sizeof(*s->conf->workloads)));
	else if (!pool && s->conf->nr_pools == 0)
		rc = err_set(ERR_INVALID, "no pool given and none configured");
	else if (!(p = pool ? conf_pool_find(s->conf, pool) : &s->conf->pools[0]))
		rc = err_set(ERR_NOTFOUND, "unknown pool '%s' (configured: %s)", pool,
			     names_of(&names, s->conf->pools, s->conf->nr_pools, sizeof(*s->conf->pools)));
	sbuf_release(&names);
	if (rc)
		return rc;
	if (append && strcmp(w->boot, "qemu"))
		return err_set(ERR_INVALID, "field 'append' is a kernel command line for boot qemu; workload '%s' "
			       "boots %s", w->name, w->boot);
	if ((rc = resolve_range(s, m, &rr, good, bad)))
		return rc;

	pthread_mutex_lock(&s->lock);
	if ((rc = store_begin(s->st)))
		goto unlock;
	if ((rc = store_int(s->st, &repo_id, "SELECT id FROM repos WHERE name = ?", "s", repo)))
		goto rollback;
	rc = store_exec(s->st, "INSERT INTO jobs (repo_id, workload, pool, good, bad, good_ref, bad_ref, runs, "
			"unit, direction, created, policy, confidence, alpha, min_effect, budget_runs, budget_builds, "
			"append, budget_seconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			"issssssissisdddiisi", repo_id, workload, p->name, rr.good, rr.bad, good, bad, runs, w->unit,
			direction ? direction : w->direction == DIR_LOWER ? "lower" : "higher", (long long)now_unix(),
			policy, confidence, alpha, min_effect, budget_runs, budget_builds, append, budget_seconds);
	if (rc < 0)
		goto rollback;
	id = store_last_id(s->st);
	{
		char *subject = xasprintf("good end (%s)", good);

		rc = store_exec(s->st, "INSERT INTO job_commits (job_id, idx, sha, subject) VALUES (?, 0, ?, ?)",
				"iss", id, rr.good, subject);
		free(subject);
	}
	for (int i = 0; i < rr.nr && rc >= 0; i++) {
		const struct repo_commit *rc_ = &rr.commits[i];
		struct sbuf ps = SBUF_INIT;

		sbuf_adds(&ps, "[");
		for (int j = 0; j < rc_->nr_parents; j++)
			sbuf_addf(&ps, "%s%d", j ? "," : "", rc_->parents[j] + 1);
		sbuf_adds(&ps, "]");
		rc = store_exec(s->st, "INSERT INTO job_commits (job_id, idx, sha, subject, parents) "
				"VALUES (?, ?, ?, ?, ?)", "iisss", id, (long long)i + 1, rc_->sha,
				rc_->subject ? rc_->subject : "", ps.buf);
		sbuf_release(&ps);
	}
	if (rc < 0)
		goto rollback;
	if ((rc = event(s, id, "created", "%s %s..%s (%d candidates), workload %s, pool %s, %lld runs per task",
			repo, good, bad, rr.nr, workload, p->name, runs)))
		goto rollback;
	/* Both ends first: the job never bisects a difference it has not seen. */
	if ((rc = jobctx_load(s, &c, id)))
		goto rollback;
	rc = queue_task(s, &c, 0);
	if (rc == 0)
		rc = queue_task(s, &c, c.n - 1);
	jobctx_release(&c);
	if (rc || (rc = store_commit(s->st)))
		goto rollback;
	*reply = job_json(s, id, 0);
	goto unlock;
rollback:
	store_rollback(s->st);
unlock:
	pthread_mutex_unlock(&s->lock);
	repo_range_release(&rr);
	return rc;
}

static json_t *job_json(struct sched *s, long long id, int full)
{
	json_t *j = NULL, *x = NULL;
	long long v;

	if (store_row(s->st, &j, "SELECT j.id, r.name AS repo, j.workload, j.pool, j.good, j.bad, j.good_ref, "
		      "j.bad_ref, j.runs, j.unit, j.direction, j.state, j.created, j.finished, j.culprit, "
		      "j.error, j.report AS report_json, j.policy, j.confidence, j.alpha, j.min_effect, "
		      "j.budget_runs, j.budget_builds, j.append, j.budget_seconds, j.budget_runs_auto, "
		      "j.budget_seconds_auto FROM jobs j JOIN repos r ON r.id = j.repo_id WHERE j.id = ?", "i", id))
		return NULL;
	if (!full || json_is_null(json_object_get(j, "report")))
		json_object_del(j, "report");
	if (store_int(s->st, &v, "SELECT count(*) FROM job_commits WHERE job_id = ?", "i", id) == 0)
		json_object_set_new(j, "nr_commits", json_integer(v - 1));
	if (!json_is_null(json_object_get(j, "culprit")) &&
	    store_row(s->st, &x, "SELECT idx, sha, subject FROM job_commits WHERE job_id = ? AND idx = ?",
		      "ii", id, json_integer_value(json_object_get(j, "culprit"))) == 0)
		json_object_set_new(j, "culprit", x);
	x = NULL;
	if (store_row(s->st, &x, "SELECT (SELECT count(*) FROM tasks WHERE job_id = ?1 AND state IN "
		      "('done', 'skipped', 'failed')) AS tasks_done, (SELECT count(*) FROM tasks WHERE job_id = ?1 "
		      "AND state != 'cancelled') AS tasks_total, (SELECT count(*) FROM samples WHERE job_id = ?1) "
		      "AS samples, (SELECT count(*) FROM job_commits WHERE job_id = ?1 AND state IN ('good', 'bad')) "
		      "AS classified, (SELECT count(DISTINCT idx) FROM samples WHERE job_id = ?1) AS measured",
		      "i", id) == 0) {
		/* The budgets in force: the job's own, else what the engine derived at its last step. */
		json_t *br = json_object_get(j, "budget_runs"), *bs = json_object_get(j, "budget_seconds");

		json_object_set(x, "budget_runs", json_integer_value(br) > 0 ? br : json_object_get(j, "budget_runs_auto"));
		json_object_set(x, "budget_seconds", json_integer_value(bs) > 0 ? bs :
				json_object_get(j, "budget_seconds_auto"));
		json_object_set_new(x, "elapsed_seconds", json_integer((json_is_integer(json_object_get(j, "finished")) ?
			json_integer_value(json_object_get(j, "finished")) : (long long)now_unix()) -
			json_integer_value(json_object_get(j, "created"))));
		json_object_set_new(j, "progress", x);
	}
	x = NULL;
	if (store_rows(s->st, &x, "SELECT t.id AS task, t.idx, a.name AS agent, t.claimed, t.progress FROM tasks t "
		       "JOIN agents a ON a.id = t.agent_id WHERE t.job_id = ? AND t.state = 'claimed' ORDER BY t.id",
		       "i", id) == 0)
		json_object_set_new(j, "running", x);
	if (full) {
		struct jobctx c;

		x = NULL;
		if (jobctx_load(s, &c, id) == 0) {
			unsigned char *in_c = xcalloc((size_t)c.n, 1);

			json_object_set_new(json_object_get(j, "progress"), "candidates",
					    json_integer(policy_candidates(c.pol, c.cls, in_c)));
			free(in_c);
			jobctx_release(&c);
		}
		if (store_rows(s->st, &x, "SELECT c.idx, c.sha, c.subject, c.parents AS parents_json, c.state, "
			       "s.n, s.failures, s.hmean, s.amean, s.cv FROM job_commits c LEFT JOIN summaries s "
			       "ON s.job_id = c.job_id AND s.idx = c.idx WHERE c.job_id = ? AND (c.state != 'untested' "
			       "OR c.idx = 0 OR c.idx = (SELECT max(idx) FROM job_commits WHERE job_id = c.job_id)) "
			       "ORDER BY c.idx", "i", id) == 0)
			json_object_set_new(j, "commits", x);
		x = NULL;
		if (store_rows(s->st, &x, "SELECT time, state, queries AS queries_json, top AS top_json, why FROM "
			       "(SELECT * FROM decisions WHERE job_id = ? ORDER BY id DESC LIMIT 50) ORDER BY id",
			       "i", id) == 0)
			json_object_set_new(j, "decisions", x);
		x = NULL;
		if (store_rows(s->st, &x, "SELECT time, kind, message FROM (SELECT * FROM events WHERE job_id = ? "
			       "ORDER BY id DESC LIMIT 200) ORDER BY id", "i", id) == 0)
			json_object_set_new(j, "events", x);
	}
	return j;
}

int sched_job_list(struct sched *s, json_t **reply)
{
	json_t *ids = NULL, *r, *jobs = json_array();
	size_t i;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store_rows(s->st, &ids, "SELECT id FROM jobs ORDER BY id DESC LIMIT 500", "");
	if (rc == 0)
		json_array_foreach(ids, i, r) {
			json_t *j = job_json(s, json_integer_value(json_object_get(r, "id")), 0);

			if (j)
				json_array_append_new(jobs, j);
		}
	pthread_mutex_unlock(&s->lock);
	json_decref(ids);
	if (rc) {
		json_decref(jobs);
		return rc;
	}
	*reply = json_pack("{s:o}", "jobs", jobs);
	return 0;
}

int sched_job_get(struct sched *s, json_t **reply, long long id)
{
	pthread_mutex_lock(&s->lock);
	*reply = job_json(s, id, 1);
	pthread_mutex_unlock(&s->lock);
	return *reply ? 0 : err_set(ERR_NOTFOUND, "job %lld does not exist", id);
}

int sched_job_cancel(struct sched *s, json_t **reply, long long id)
{
	struct jobctx c;
	const char *st;
	int rc;

	*reply = NULL;
	pthread_mutex_lock(&s->lock);
	if ((rc = jobctx_load(s, &c, id)))
		goto unlock;
	st = json_string_value(json_object_get(c.job, "state"));
	if (strcmp(st, "queued") && strcmp(st, "running")) {
		rc = err_set(ERR_CONFLICT, "job %lld has ended already (%s)", id, st);
		goto release;
	}
	if ((rc = store_begin(s->st)))
		goto release;
	if ((rc = finish(s, &c, "cancelled", -1, NULL, NULL)) || (rc = store_commit(s->st)))
		store_rollback(s->st);
	else
		*reply = job_json(s, id, 0);
release:
	jobctx_release(&c);
unlock:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

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

int sched_job_report_text(struct sched *s, char **out, long long id)
{
	struct sbuf sb = SBUF_INIT;
	json_t *j, *rep, *x;
	const char *verdict, *unit;
	int rc = 0;

	*out = NULL;
	pthread_mutex_lock(&s->lock);
	j = job_json(s, id, 1);
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

/* ------------------------------------------------------------------ */
/* Agents and tasks */

static void agent_labels(char ***out, json_t *labels)
{
	json_t *l;
	size_t i;

	*out = xcalloc(json_array_size(labels) + 1, sizeof(char *));
	json_array_foreach(labels, i, l)
		(*out)[i] = xstrdup(json_string_value(l) ? json_string_value(l) : "");
}

int sched_agent_list(struct sched *s, json_t **reply)
{
	json_t *rows = NULL, *r;
	long long cutoff = now_unix() - s->conf->lease_seconds;
	size_t i;
	int rc;

	pthread_mutex_lock(&s->lock);
	rc = store_rows(s->st, &rows, "SELECT a.name, a.labels AS labels_json, a.last_seen, "
			"(SELECT t.id FROM tasks t WHERE t.agent_id = a.id AND t.state = 'claimed' LIMIT 1) AS task "
			"FROM agents a ORDER BY a.name", "");
	pthread_mutex_unlock(&s->lock);
	if (rc)
		return rc;
	json_array_foreach(rows, i, r) {
		const char *st = json_integer_value(json_object_get(r, "last_seen")) < cutoff ? "offline" :
				 json_is_null(json_object_get(r, "task")) ? "idle" : "busy";

		json_object_set_new(r, "state", json_string(st));
	}
	*reply = json_pack("{s:o}", "agents", rows);
	return 0;
}

int sched_agent_register(struct sched *s, json_t **reply, json_t *req)
{
	static const char *const allowed[] = { "name", "labels", NULL };
	const char *name;
	json_t *labels, *l;
	char *lj;
	size_t i;
	int rc;

	*reply = NULL;
	if ((rc = check_keys(req, allowed)) || (rc = jsonx_str(&name, req, "name", 64, 1, NULL)))
		return rc;
	if (!sched_valid_name(name))
		return err_set(ERR_INVALID, "agent name '%s' must be 1-64 of [A-Za-z0-9._-]", name);
	labels = json_object_get(req, "labels");
	if (labels && !json_is_array(labels))
		return err_set(ERR_INVALID, "field 'labels' must be an array of strings");
	if (json_array_size(labels) > 32)
		return err_set(ERR_INVALID, "at most 32 labels");
	json_array_foreach(labels, i, l)
		if (!json_is_string(l) || !sched_valid_name(json_string_value(l)))
			return err_set(ERR_INVALID, "label %zu must be 1-64 of [A-Za-z0-9._-]", i);
	lj = labels ? jsonx_dump(labels) : xstrdup("[]");
	pthread_mutex_lock(&s->lock);
	if ((rc = store_begin(s->st)) == 0) {
		rc = store_exec(s->st, "INSERT INTO agents (name, labels, registered, last_seen) VALUES (?, ?, ?, ?) "
				"ON CONFLICT(name) DO UPDATE SET labels = excluded.labels, last_seen = excluded.last_seen",
				"ssii", name, lj, (long long)now_unix(), (long long)now_unix());
		if (rc >= 0)
			rc = event(s, 0, "agent", "%s registered with labels %s", name, lj);
		if (rc < 0 || (rc = store_commit(s->st)))
			store_rollback(s->st);
	}
	pthread_mutex_unlock(&s->lock);
	free(lj);
	if (rc < 0)
		return rc;
	*reply = json_pack("{s:s, s:i, s:i}", "name", name, "heartbeat", 5, "lease", s->conf->lease_seconds);
	return 0;
}

static int agent_seen(struct sched *s, long long *id, char ***labels, const char *name)
{
	json_t *row = NULL;
	int rc;

	if (!sched_valid_name(name))
		return err_set(ERR_INVALID, "agent name must be 1-64 of [A-Za-z0-9._-]");
	rc = store_row(s->st, &row, "SELECT id, labels AS labels_json FROM agents WHERE name = ?", "s", name);
	if (rc == ERR_NOTFOUND)
		return err_set(ERR_NOTFOUND, "agent '%s' is not registered: POST /api/v1/agents/register first", name);
	if (rc)
		return rc;
	*id = json_integer_value(json_object_get(row, "id"));
	if (labels)
		agent_labels(labels, json_object_get(row, "labels"));
	json_decref(row);
	rc = store_exec(s->st, "UPDATE agents SET last_seen = ? WHERE id = ?", "ii", (long long)now_unix(), *id);
	return rc < 0 ? rc : 0;
}

int sched_agent_heartbeat(struct sched *s, json_t **reply, const char *name, json_t *req)
{
	long long agent, task, attempt;
	const char *progress;
	int cancel = 0, rc;

	*reply = NULL;
	if ((rc = jsonx_int(&task, req, "task", 0, 1LL << 53, 0, 0)) ||
	    (rc = jsonx_int(&attempt, req, "attempt", 0, 1000, 0, 0)) ||
	    (rc = jsonx_str(&progress, req, "progress", 200, 0, NULL)))
		return rc;
	pthread_mutex_lock(&s->lock);
	if ((rc = agent_seen(s, &agent, NULL, name)))
		goto out;
	if (task > 0) {
		rc = store_exec(s->st, "UPDATE tasks SET lease = ?, progress = coalesce(?, progress) WHERE id = ? "
				"AND agent_id = ? AND attempt = ? AND state = 'claimed'", "isiii",
				(long long)(now_unix() + s->conf->lease_seconds), progress, task, agent, attempt);
		if (rc < 0)
			goto out;
		cancel = rc == 0;
		rc = 0;
	}
	*reply = json_pack("{s:b, s:b}", "ok", 1, "cancel", cancel);
out:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* The definition an agent runs; append (may be NULL) is the job's variant of the command line. */
static json_t *workload_json(const struct conf_workload *w, const char *append)
{
	return conf_workload_def(w, append);
}

/* Gives the oldest queued task this agent's labels fit to it. */
static int try_claim(struct sched *s, json_t **reply, long long agent, char **labels, const char *name)
{
	json_t *rows = NULL, *r;
	size_t i;
	int rc;

	/*
	 * A link of a confirmation chain waits for the link before it, and
	 * goes to the agent that ran it while that agent is alive.
	 */
	rc = store_rows(s->st, &rows, "SELECT t.id, t.job_id, t.idx, t.runs, t.attempt, j.pool, j.workload, j.append, "
			"r.name AS repo, r.url, c.sha FROM tasks t JOIN jobs j ON j.id = t.job_id "
			"JOIN repos r ON r.id = j.repo_id JOIN job_commits c ON c.job_id = t.job_id AND c.idx = t.idx "
			"LEFT JOIN tasks prev ON prev.id = t.after_task LEFT JOIN agents pa ON pa.id = prev.agent_id "
			"WHERE t.state = 'queued' AND j.state IN ('queued', 'running') AND (t.after_task IS NULL OR "
			"(prev.state NOT IN ('queued', 'claimed') AND (prev.agent_id = ?1 OR pa.last_seen < ?2))) "
			"ORDER BY t.id LIMIT 500", "ii", agent, (long long)(now_unix() - s->conf->lease_seconds));
	if (rc)
		return rc;
	json_array_foreach(rows, i, r) {
		const struct conf_pool *p = conf_pool_find(s->conf, json_string_value(json_object_get(r, "pool")));
		const struct conf_workload *w = conf_workload_find(s->conf,
								   json_string_value(json_object_get(r, "workload")));
		long long id = json_integer_value(json_object_get(r, "id"));
		long long job = json_integer_value(json_object_get(r, "job_id"));
		long long attempt = json_integer_value(json_object_get(r, "attempt")) + 1;
		struct task_wire tw = { 0 };
		json_t *def;

		if (!p || !w || !conf_pool_matches(p, labels))
			continue;
		if ((rc = store_begin(s->st)))
			break;
		rc = store_exec(s->st, "UPDATE tasks SET state = 'claimed', attempt = ?, agent_id = ?, lease = ?, "
				"claimed = ?, progress = NULL WHERE id = ?", "iiiii", attempt, agent,
				(long long)(now_unix() + s->conf->lease_seconds), (long long)now_unix(), id);
		if (rc >= 0)
			rc = store_exec(s->st, "UPDATE jobs SET state = 'running' WHERE id = ? AND state = 'queued'",
					"i", job);
		if (rc >= 0)
			rc = event(s, job, "claim", "task %lld (commit %lld, %.12s) attempt %lld to %s", id,
				   json_integer_value(json_object_get(r, "idx")),
				   json_string_value(json_object_get(r, "sha")), attempt, name);
		if (rc < 0 || (rc = store_commit(s->st))) {
			store_rollback(s->st);
			break;
		}
		/* The job's variant after the workload's own parameters: the later one wins. */
		def = workload_json(w, json_string_value(json_object_get(r, "append")));
		tw.task = id;
		tw.attempt = attempt;
		tw.job = job;
		tw.commit = json_string_value(json_object_get(r, "sha"));
		tw.runs = json_integer_value(json_object_get(r, "runs"));
		tw.lease = s->conf->lease_seconds;
		tw.repo_name = json_string_value(json_object_get(r, "repo"));
		tw.repo_url = json_string_value(json_object_get(r, "url"));
		tw.workload = def;
		/* Cannot fail on what the store and the config hold; if it does, the lease runs out. */
		rc = taskwire_encode(reply, &tw);
		json_decref(def);
		break;
	}
	json_decref(rows);
	return rc;
}

int sched_agent_claim(struct sched *s, json_t **reply, const char *name, int wait_s)
{
	int64_t deadline = now_ms() + (int64_t)wait_s * 1000;
	char **labels = NULL;
	long long agent;
	int rc;

	*reply = NULL;
	pthread_mutex_lock(&s->lock);
	if ((rc = agent_seen(s, &agent, &labels, name)))
		goto out;
	for (;;) {
		struct timespec ts;
		int64_t until, now;

		if ((rc = try_claim(s, reply, agent, labels, name)) || *reply)
			break;
		now = now_ms();
		if (s->shutdown || now >= deadline)
			break;
		/* Wake at least every second so a waiting agent stays "seen". */
		until = deadline < now + 1000 ? deadline : now + 1000;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += (until - now) / 1000;
		ts.tv_nsec += (long)((until - now) % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
		if ((rc = agent_seen(s, &agent, NULL, name)))
			break;
	}
out:
	pthread_mutex_unlock(&s->lock);
	strv_free(labels);
	return rc;
}

static int update_summary(struct sched *s, long long job, int idx)
{
	struct summary sum;
	double *v = NULL;
	size_t n;
	int rc;

	if ((rc = commit_values(s, &v, &n, job, idx)))
		return rc;
	stats_summary(&sum, v, n);
	free(v);
	rc = store_exec(s->st, "INSERT OR REPLACE INTO summaries (job_id, idx, n, failures, hmean, amean, cv) "
			"VALUES (?, ?, ?, ?, ?, ?, ?)", "iiiiddd", job, (long long)idx, (long long)sum.n,
			(long long)sum.failures, sum.hmean, sum.amean, sum.cv);
	return rc < 0 ? rc : 0;
}

/* A task that could not be done goes back to the queue, or after the last attempt skips its commit. */
static int task_retry(struct sched *s, long long task, long long job, int idx, long long attempt,
		      const char *why)
{
	int rc;

	if (attempt < MAX_ATTEMPTS) {
		rc = store_exec(s->st, "UPDATE tasks SET state = 'queued', agent_id = NULL, lease = NULL, error = ? "
				"WHERE id = ?", "si", why, task);
		if (rc >= 0)
			rc = event(s, job, "retry", "task %lld attempt %lld: %s", task, attempt, why);
		pthread_cond_broadcast(&s->cond);
		return rc < 0 ? rc : 0;
	}
	rc = store_exec(s->st, "UPDATE tasks SET state = 'failed', finished = ?, error = ? WHERE id = ?", "isi",
			(long long)now_unix(), why, task);
	if (rc >= 0)
		rc = store_exec(s->st, "UPDATE job_commits SET state = 'skipped' WHERE job_id = ? AND idx = ?", "ii",
				job, (long long)idx);
	if (rc >= 0)
		rc = event(s, job, "skip", "commit %d: task %lld failed %d times, last: %s", idx, task,
			   MAX_ATTEMPTS, why);
	return rc < 0 ? rc : 0;
}

int sched_task_result(struct sched *s, json_t **reply, long long task_id, json_t *req)
{
	static const char *const allowed[] = { "agent", "attempt", "status", "samples", "build_seconds",
					       "run_seconds", "error", "log_tail", NULL };
	const char *agent_name, *status, *error, *log_tail;
	json_t *samples, *task = NULL, *x;
	long long attempt, agent, job;
	double build_s, run_s;
	int idx, rc;
	size_t i;

	*reply = NULL;
	if ((rc = check_keys(req, allowed)) ||
	    (rc = jsonx_str(&agent_name, req, "agent", 64, 1, NULL)) ||
	    (rc = jsonx_int(&attempt, req, "attempt", 1, 1000, 1, 0)) ||
	    (rc = jsonx_str(&status, req, "status", 16, 1, NULL)) ||
	    (rc = jsonx_num(&build_s, req, "build_seconds", 0, 1e7, 0, 0)) ||
	    (rc = jsonx_num(&run_s, req, "run_seconds", 0, 1e7, 0, 0)) ||
	    (rc = jsonx_str(&error, req, "error", 4096, 0, NULL)))
		return rc;
	/* A log tail may hold anything a compiler printed; bound it, keep it. */
	x = json_object_get(req, "log_tail");
	log_tail = json_is_string(x) ? json_string_value(x) : NULL;
	if (x && !json_is_string(x) && !json_is_null(x))
		return err_set(ERR_INVALID, "field 'log_tail' must be a string");
	if (log_tail && strlen(log_tail) > 65536)
		return err_set(ERR_INVALID, "field 'log_tail' must be at most 65536 bytes");
	if (strcmp(status, "ok") && strcmp(status, "skipped") && strcmp(status, "failed"))
		return err_set(ERR_INVALID, "field 'status' must be ok, skipped or failed, not '%s'", status);
	samples = json_object_get(req, "samples");
	if (samples && !json_is_array(samples))
		return err_set(ERR_INVALID, "field 'samples' must be an array");
	if (json_array_size(samples) > 1000)
		return err_set(ERR_INVALID, "at most 1000 samples per upload");
	if (!strcmp(status, "ok") && json_array_size(samples) == 0)
		return err_set(ERR_INVALID, "status ok needs at least one sample");
	json_array_foreach(samples, i, x) {
		double v;
		const char *u, *e;

		if (!json_is_object(x))
			return err_set(ERR_INVALID, "sample %zu must be an object", i);
		if (jsonx_num(&v, x, "value", -1e300, 1e300, 1, 0) || jsonx_str(&u, x, "unit", 32, 0, "") ||
		    jsonx_str(&e, x, "error", 1024, 0, NULL))
			return err_set(ERR_INVALID, "sample %zu: %s", i, err_msg());
	}

	pthread_mutex_lock(&s->lock);
	if ((rc = agent_seen(s, &agent, NULL, agent_name)))
		goto unlock;
	rc = store_row(s->st, &task, "SELECT t.id, t.job_id, t.idx, t.state, t.attempt, t.agent_id, j.state AS "
		       "job_state, j.unit FROM tasks t JOIN jobs j ON j.id = t.job_id WHERE t.id = ?", "i", task_id);
	if (rc == ERR_NOTFOUND)
		rc = err_set(ERR_NOTFOUND, "task %lld does not exist", task_id);
	if (rc)
		goto unlock;
	job = json_integer_value(json_object_get(task, "job_id"));
	idx = (int)json_integer_value(json_object_get(task, "idx"));
	{
		long long cur = json_integer_value(json_object_get(task, "attempt"));
		const char *tst = json_string_value(json_object_get(task, "state"));
		const char *jst = json_string_value(json_object_get(task, "job_state"));
		long long n;

		if (store_int(s->st, &n, "SELECT count(*) FROM samples WHERE task_id = ? AND attempt = ?", "ii",
			      task_id, attempt) == 0 && n > 0) {
			*reply = json_pack("{s:b, s:b}", "ok", 1, "duplicate", 1);
			goto unlock;
		}
		if (cur == attempt && (!strcmp(tst, "done") || !strcmp(tst, "skipped") ||
				       (!strcmp(tst, "queued") && !strcmp(status, "failed")))) {
			*reply = json_pack("{s:b, s:b}", "ok", 1, "duplicate", 1);
			goto unlock;
		}
		if (cur != attempt || strcmp(tst, "claimed") ||
		    json_integer_value(json_object_get(task, "agent_id")) != agent) {
			rc = err_set(ERR_CONFLICT, "task %lld attempt %lld is not yours any more (now attempt %lld, %s)",
				     task_id, attempt, cur, tst);
			goto unlock;
		}
		if (strcmp(jst, "queued") && strcmp(jst, "running")) {
			rc = err_set(ERR_CONFLICT, "job %lld has ended (%s): result dropped", job, jst);
			goto unlock;
		}
	}
	if ((rc = store_begin(s->st)))
		goto unlock;
	if (!strcmp(status, "failed")) {
		rc = task_retry(s, task_id, job, idx, attempt, error ? error : "the agent could not do the task");
	} else {
		rc = store_exec(s->st, "UPDATE tasks SET state = ?, finished = ?, build_s = ?, run_s = ?, error = ?, "
				"log_tail = ? WHERE id = ?", "siddssi", !strcmp(status, "ok") ? "done" : "skipped",
				(long long)now_unix(), build_s, run_s, error, log_tail, task_id);
		json_array_foreach(samples, i, x) {
			if (rc < 0)
				break;
			rc = store_exec(s->st, "INSERT INTO samples (task_id, attempt, run, job_id, idx, value, unit, "
					"error, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", "iiiiidssi", task_id,
					attempt, (long long)i, job, (long long)idx,
					json_number_value(json_object_get(x, "value")),
					json_string_value(json_object_get(x, "unit")) ?
					json_string_value(json_object_get(x, "unit")) :
					json_string_value(json_object_get(task, "unit")),
					json_string_value(json_object_get(x, "error")), (long long)now_unix());
		}
		if (rc >= 0 && !strcmp(status, "skipped")) {
			rc = store_exec(s->st, "UPDATE job_commits SET state = 'skipped' WHERE job_id = ? AND idx = ?",
					"ii", job, (long long)idx);
			if (rc >= 0)
				rc = event(s, job, "skip", "commit %d: %s", idx, error ? error : "skipped by the agent");
		} else if (rc >= 0) {
			rc = update_summary(s, job, idx);
			if (rc >= 0)
				rc = event(s, job, "result", "task %lld: %zu runs of commit %d from %s", task_id,
					   json_array_size(samples), idx, agent_name);
		}
	}
	if (rc >= 0)
		rc = job_step(s, job);
	if (rc < 0 || (rc = store_commit(s->st))) {
		store_rollback(s->st);
		goto unlock;
	}
	rc = 0;
	*reply = json_pack("{s:b, s:b}", "ok", 1, "duplicate", 0);
unlock:
	pthread_mutex_unlock(&s->lock);
	json_decref(task);
	return rc;
}

void sched_tick(struct sched *s)
{
	json_t *rows = NULL, *r;
	size_t i;

	pthread_mutex_lock(&s->lock);
	if (store_rows(s->st, &rows, "SELECT t.id, t.job_id, t.idx, t.attempt, a.name FROM tasks t "
		       "LEFT JOIN agents a ON a.id = t.agent_id WHERE t.state = 'claimed' AND t.lease < ?", "i",
		       (long long)now_unix()))
		goto out;
	json_array_foreach(rows, i, r) {
		long long job = json_integer_value(json_object_get(r, "job_id"));
		char *why = xasprintf("lease expired: agent %s stopped heartbeating",
				      json_string_value(json_object_get(r, "name")) ?
				      json_string_value(json_object_get(r, "name")) : "?");
		int rc = store_begin(s->st);

		if (rc == 0)
			rc = task_retry(s, json_integer_value(json_object_get(r, "id")), job,
					(int)json_integer_value(json_object_get(r, "idx")),
					json_integer_value(json_object_get(r, "attempt")), why);
		if (rc == 0)
			rc = job_step(s, job);
		if (rc || (rc = store_commit(s->st))) {
			log_error("expiring task %lld: %s", json_integer_value(json_object_get(r, "id")), err_msg());
			store_rollback(s->st);
		}
		free(why);
	}
out:
	pthread_mutex_unlock(&s->lock);
	json_decref(rows);
}

void sched_wake_all(struct sched *s)
{
	pthread_mutex_lock(&s->lock);
	s->shutdown = 1;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}
