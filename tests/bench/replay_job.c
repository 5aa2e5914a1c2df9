/*
 * replay-job: a kept job's runs through this build's engine.
 *
 *   replay-job DB [--job ID] [--every N]
 *   replay-job DB [--job ID] --export > FILE
 *
 * Reads a bisectd store (bench-lab --keep leaves one a job), makes the
 * engine as bisectd makes it for that job (its settings, its commits and
 * those that did not build, the costs its tasks measured), and adds the
 * job's runs in the order they were taken, each with its task, agent and
 * kind. Every N runs (default 20) it prints what the engine concludes on
 * the runs so far: its state and sentence, the three most probable
 * commits, the effect with its 95% interval, the noise of a task and of a
 * run, and the runs set aside. The last line is its decision on all of
 * them, beside the job's own.
 *
 * The runs are the job's whichever engine asked for them, so a change to
 * the engine can be read on a real lab's data: how soon it would have
 * found the split, or where its model went wrong. It cannot say what the
 * engine would have measured instead. Once the replayed engine is past
 * the ends they count as differing, as bisectd has it.
 *
 * --export prints the job as text instead (its settings, costs, commits
 * and runs, the format tests/fixtures/jobs/README describes), so that a
 * lab job worth keeping becomes a fixture the unit tests replay.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bisect.h"
#include "err.h"
#include "store.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: replay-job DB [--job ID] [--every N | --export]\n"
		   "  DB: a bisectd store (make bench-lab BENCH_LAB_FLAGS=--keep keeps one a job)\n"
		   "  --job ID: the job to replay (default: the newest)\n"
		   "  --every N: print the engine's view every N runs (default 20)\n"
		   "  --export: print the job's settings, commits and runs as text (tests/fixtures/jobs/)\n");
}

static int parse_long(const char *s, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 10);
	return errno || end == s || *end || *out <= 0 ? -1 : 0;
}

static const char *verdict_name(enum bisect_verdict v)
{
	switch (v) {
	case VERDICT_CULPRIT:
		return "culprit";
	case VERDICT_RANGE:
		return "range";
	case VERDICT_NOT_REPRODUCED:
		return "not-reproduced";
	case VERDICT_UNDECIDED:
		return "undecided";
	default:
		return "none";
	}
}

/* One line of what the engine concludes on the runs so far (stepped on a clone: the base only takes runs). */
static void show(struct bisect *base, long runs, int *past_ends)
{
	struct bisect *b = bisect_clone(base);
	struct bisect_query q[BISECT_MAX_QUERIES(2)];
	struct bisect_result r;
	int top[3];
	double p[3];
	int nt;

	bisect_next(q, b, 2, NULL);
	bisect_result(&r, b);
	nt = bisect_top(top, p, b, 3);
	printf("%5ld runs  %-14s effect %+6.2f%% [%+6.2f, %+6.2f]  task cv %5.2f%%  run cv %5.2f%%  set aside %3d  top",
	       runs, r.state == BISECT_DONE ? verdict_name(r.verdict) : r.state == BISECT_ENDS ? "ends"
	       : r.state == BISECT_CONFIRM ? "confirm" : "search", 100 * r.effect, 100 * r.effect_lo,
	       100 * r.effect_hi, 100 * r.task_cv, 100 * r.run_cv, r.outliers);
	for (int i = 0; i < nt; i++)
		printf(" %d:%.4f", top[i], p[i]);
	printf("\n       %s\n", r.why);
	if (r.state != BISECT_ENDS && !*past_ends) {
		*past_ends = 1;
		bisect_assume_reproduced(base);
	}
	bisect_free(b);
}

/* The job as tests/fixtures/jobs/README describes it. */
static void export_job(const struct job *job, long long id, const struct job_commit *jc, int n,
		       const struct sample *runs, size_t nr, const struct task_costs *cost, int have_cost)
{
	printf("# bisectd job %lld (%s..%s), ended %s; replay-job --export\n", id,
	       job->good_ref ? job->good_ref : job->good, job->bad_ref ? job->bad_ref : job->bad, job->state);
	printf("job confidence %.15g alpha %.15g min_effect %.15g budget_runs %lld budget_builds %lld higher %d "
	       "runs %lld\n", job->confidence, job->alpha, job->min_effect, (long long)job->budget_runs,
	       (long long)job->budget_builds, job->higher, (long long)job->runs);
	if (job->end_runs)
		printf("job end_runs %lld\n", (long long)job->end_runs);
	if (job->ends_max)
		printf("job ends_max %lld\n", (long long)job->ends_max);
	if (have_cost)
		printf("costs %.15g %.15g\n", cost->build, cost->run);
	for (int i = 0; i < n; i++) {
		printf("commit %d", jc[i].idx);
		for (int j = 0; j < jc[i].nr_parents; j++)
			printf(" %d", jc[i].parents[j]);
		printf("\n");
		if (!strcmp(jc[i].state, "skipped"))
			printf("skipped %d\n", jc[i].idx);
	}
	for (size_t i = 0; i < nr; i++)
		printf("run %d %.17g %lld %lld %d\n", runs[i].idx, runs[i].value, runs[i].task, runs[i].agent,
		       runs[i].confirm);
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	long long job_id = 0, every = 20;
	struct store *st = NULL;
	struct job job;
	struct job_commit *jc = NULL;
	struct sample *runs = NULL;
	struct task_costs cost;
	struct bisect_opts o;
	struct bisect *b = NULL;
	int n = 0, **par = NULL, *npar = NULL, past_ends = 0, rc = 1, export = 0, have_cost;
	size_t nr = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--export")) {
			export = 1;
		} else if ((!strcmp(argv[i], "--job") || !strcmp(argv[i], "--every")) && i + 1 < argc) {
			if (parse_long(argv[i + 1], !strcmp(argv[i], "--job") ? &job_id : &every)) {
				fprintf(stderr, "replay-job: %s wants a positive number, not '%s'\n", argv[i], argv[i + 1]);
				return 2;
			}
			i++;
		} else if (argv[i][0] != '-' && !path) {
			path = argv[i];
		} else {
			fprintf(stderr, "replay-job: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (!path) {
		usage(stderr);
		return 2;
	}
	if (access(path, R_OK)) {
		fprintf(stderr, "replay-job: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (store_open(&st, path))
		goto fail;
	if (!job_id) {
		long long *ids = NULL;
		size_t ni = 0;

		if (store_job_ids(&ids, &ni, st, 1))
			goto fail;
		job_id = ni ? ids[0] : 0;
		free(ids);
		if (!job_id) {
			fprintf(stderr, "replay-job: %s holds no job\n", path);
			goto out;
		}
	}
	if (store_job_get(&job, st, job_id))
		goto fail;
	if (store_job_commits(&jc, &n, st, job_id) || store_job_samples_after(&runs, &nr, st, job_id, 0)) {
		store_job_release(&job);
		goto fail;
	}
	have_cost = store_task_costs(&cost, st, job_id) == 0;
	if (export) {
		export_job(&job, job_id, jc, n, runs, nr, &cost, have_cost);
		store_job_release(&job);
		rc = 0;
		goto out;
	}
	par = xcalloc((size_t)n, sizeof(*par));
	npar = xcalloc((size_t)n, sizeof(*npar));
	for (int i = 0; i < n; i++) {
		par[jc[i].idx] = jc[i].parents;
		npar[jc[i].idx] = jc[i].nr_parents;
	}
	bisect_job_opts(&o, job.confidence, job.alpha, job.min_effect, (long)job.budget_runs, (long)job.budget_builds,
			job.higher, (int)job.runs);
	o.equal_runs = (int)job.end_runs;
	if (job.ends_max > o.end_runs_max)
		o.end_runs_max = (int)job.ends_max;
	if (bisect_new(&b, n, par, npar, &o)) {
		store_job_release(&job);
		goto fail;
	}
	for (int i = 0; i < n; i++)
		if (!strcmp(jc[i].state, "skipped"))
			bisect_mark_skipped(b, jc[i].idx);
	if (have_cost)
		bisect_set_costs(b, cost.build, cost.run);
	printf("job %lld: %s..%s, %d commits, %zu runs, %lld a task, confidence %.4g, min effect %.2f%%; it ended %s\n",
	       job_id, job.good_ref ? job.good_ref : job.good, job.bad_ref ? job.bad_ref : job.bad, n, nr, job.runs,
	       job.confidence, 100 * job.min_effect, job.state);
	for (size_t i = 0; i < nr; i++) {
		/* As coord_ecache.c adds them: each with its task, its agent and its kind. */
		bisect_add_stored_run(b, runs[i].idx, runs[i].value, runs[i].task, runs[i].agent, runs[i].confirm);
		if ((long long)(i + 1) % every == 0 && i + 1 < nr)
			show(b, (long)(i + 1), &past_ends);
	}
	show(b, (long)nr, &past_ends);
	if (job.culprit >= 0)
		printf("the job ended %s, naming commit %d\n", job.state, job.culprit);
	else
		printf("the job ended %s, naming no commit\n", job.state);
	store_job_release(&job);
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "replay-job: %s\n", err_msg());
out:
	bisect_free(b);
	free(par);
	free(npar);
	free(runs);
	store_job_commits_free(jc, n);
	store_close(st);
	return rc;
}
