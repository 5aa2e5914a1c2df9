/*
 * store_charts: what the charts read from the store (store_charts.c),
 * beyond store.h: a job's commits with their names and summaries, its
 * decisions with the posterior's top commits parsed, a stamp that changes
 * whenever the job does (the chart cache's key), and the jobs measuring
 * the same range (the compare chart's variants).
 *
 * Same rules as store.h: 0 or a negative code with the message set,
 * output parameters first and the caller's, freed by the _free() below.
 */
#ifndef BISECT_STORE_CHARTS_H
#define BISECT_STORE_CHARTS_H

#include <stddef.h>

#include "stats.h"
#include "store.h"

/* A commit of a job with its summary (sum.n 0: never measured). */
struct commit_row {
	int idx;
	char *sha, *subject;
	char state[16];
	struct summary sum;          /* n, failures, hmean, amean, cv only */
};

/* Every commit of the job by idx. */
int store_commit_rows(struct commit_row **out, int *n, struct store *s, long long job);
void store_commit_rows_free(struct commit_row *c, int n);

#define DECISION_TOP_MAX 5
struct decision_row {
	long long id, time;
	char state[16];              /* ends, search, confirm, done */
	int nr_top;
	int top_idx[DECISION_TOP_MAX];   /* the posterior's most probable commits */
	double top_p[DECISION_TOP_MAX];
};

/* Every decision of the job, oldest first; *out is the caller's (free()). */
int store_decision_rows(struct decision_row **out, size_t *n, struct store *s, long long job);

/* What changes whenever a job does: a new sample, a new decision, its end. */
struct job_stamp {
	long long last_sample, nr_samples, last_decision, finished;
	char state[16];
};

/* ERR_NOTFOUND when the job does not exist. */
int store_job_stamp(struct job_stamp *out, struct store *s, long long job);

/*
 * The jobs of the same repo, range and workload as job (job itself
 * included), oldest first, at most max: one range under several kernel
 * command line variants. *ids is the caller's.
 */
int store_job_siblings(long long **ids, size_t *n, struct store *s, long long job, int max);

#endif
