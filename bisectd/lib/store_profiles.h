/*
 * store_profiles: the perf profiles of a job's culprit and its parent
 * (schema/0009-profiles.sql): the verdict a job holds while they are
 * recorded, the profile tasks, and what their agents uploaded.
 */
#ifndef BISECT_STORE_PROFILES_H
#define BISECT_STORE_PROFILES_H

#include "store.h"

struct profile {
	long long id, job, task;
	int idx;                    /* the commit it profiles */
	char role[8];               /* "parent" or "culprit" */
	char state[8];              /* "queued" (also while claimed), "ok", "failed" */
	char task_state[16];        /* its task's: queued, claimed, done, failed, cancelled ... */
	char *agent;                /* who recorded it; NULL: none yet */
	char *error;                /* why it failed; NULL: it did not */
	char *report;               /* `perf report --stdio` as uploaded; NULL: none */
	long long finished;         /* unix time; 0: not yet */
};

void store_profile_release(struct profile *p);
void store_profiles_free(struct profile *p, size_t n);

/* Holds the job's verdict (its culprit and report, JSON text) while its profiles are recorded. */
int store_profile_hold(struct store *s, long long job, int culprit, const char *report, long long time);
/*
 * The jobs, still queued or running, that hold a verdict since before
 * time, and since when; *ids and *since are the caller's.
 */
int store_profile_holds_before(long long **ids, long long **since, size_t *n, struct store *s, long long time);
/* The held verdict; ERR_NOTFOUND when the job holds none. *report is the caller's. */
int store_profile_held(int *culprit, char **report, struct store *s, long long job);
/* The profile of commit idx in role, recorded by task. */
int store_profile_add(struct store *s, long long job, const char *role, int idx, long long task);
/* The job's profiles, parent first; *out is the caller's (store_profiles_free()). */
int store_profiles_of_job(struct profile **out, size_t *n, struct store *s, long long job);
/* The profile task records; ERR_NOTFOUND when it is not a profile task. */
int store_profile_of_task(struct profile *out, struct store *s, long long task);
/* The task's profile is in (state "ok", with its report) or failed (with error). */
int store_profile_finish(struct store *s, long long task, const char *state, const char *agent,
			 const char *error, const char *report, long long time);

#endif
