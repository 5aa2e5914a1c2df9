/*
 * coord_export: a job's samples as CSV (GET /jobs/ID/samples.csv), one
 * line per run with its commit, task, agent and attempt, so that any
 * number a report prints can be computed again elsewhere.
 */
#include <pthread.h>
#include <stdlib.h>

#include "coord_internal.h"
#include "csv.h"
#include "err.h"
#include "util.h"

#define CSV_HEADER "commit,idx,subject,task,agent,attempt,run,value,unit,error,time\r\n"

static void csv_int(struct sbuf *sb, long long v)
{
	sbuf_addf(sb, "%lld", v);
}

int coord_job_samples_csv(char **out, struct coord *s, long long id)
{
	struct sbuf sb = SBUF_INIT;
	struct export_sample *x = NULL;
	struct job job;
	size_t n = 0;
	int rc;

	*out = NULL;
	pthread_mutex_lock(&s->lock);
	rc = store_job_get(&job, s->st, id);
	if (rc == 0) {
		store_job_release(&job);
		rc = store_export_samples(&x, &n, s->st, id);
	}
	pthread_mutex_unlock(&s->lock);
	if (rc == ERR_NOTFOUND)
		return err_set(ERR_NOTFOUND, "job %lld does not exist", id);
	if (rc)
		return rc;
	sbuf_adds(&sb, CSV_HEADER);
	for (size_t i = 0; i < n; i++) {
		csv_field(&sb, x[i].sha);
		sbuf_adds(&sb, ",");
		csv_int(&sb, x[i].idx);
		sbuf_adds(&sb, ",");
		csv_field(&sb, x[i].subject);
		sbuf_adds(&sb, ",");
		csv_int(&sb, x[i].task);
		sbuf_adds(&sb, ",");
		csv_field(&sb, x[i].agent);
		sbuf_adds(&sb, ",");
		csv_int(&sb, x[i].attempt);
		sbuf_adds(&sb, ",");
		csv_int(&sb, x[i].run);
		sbuf_adds(&sb, ",");
		csv_double(&sb, x[i].value);
		sbuf_adds(&sb, ",");
		csv_field(&sb, x[i].unit);
		sbuf_adds(&sb, ",");
		csv_field(&sb, x[i].error);
		sbuf_adds(&sb, ",");
		csv_int(&sb, x[i].created);
		sbuf_adds(&sb, "\r\n");
	}
	store_export_samples_free(x, n);
	*out = sbuf_detach(&sb);
	return 0;
}
