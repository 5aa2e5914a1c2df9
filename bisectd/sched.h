/*
 * sched: the coordinator's state machine. Jobs, agents, task leases and
 * the bisection steps, on top of the store. One lock serialises it; claim
 * long-polls wait on a condition variable that new tasks signal.
 *
 * Every function that takes a request takes its parsed JSON body, checks
 * every field, and on bad input returns ERR_INVALID / ERR_NOTFOUND /
 * ERR_UNPROCESSABLE / ERR_CONFLICT with a message for the user, having
 * changed nothing in the store. Replies are JSON the caller owns.
 */
#ifndef BISECT_SCHED_H
#define BISECT_SCHED_H

#include <jansson.h>

#include "conf.h"
#include "store.h"

struct sched;

/* conf and st are borrowed and must outlive the scheduler. */
int sched_new(struct sched **out, const struct conf_bisectd *conf, struct store *st);
void sched_free(struct sched *s);
/* Makes the repos' mirrors in a thread of their own; sched_free() waits for it. */
void sched_start_mirrors(struct sched *s);

/* Records the configured repos in the store. */
int sched_sync_conf(struct sched *s);

int sched_job_create(struct sched *s, json_t **reply, json_t *req);
int sched_job_list(struct sched *s, json_t **reply);
int sched_job_get(struct sched *s, json_t **reply, long long id);
int sched_job_cancel(struct sched *s, json_t **reply, long long id);
/* The culprit report as text; caller frees. ERR_CONFLICT while the job runs. */
int sched_job_report_text(struct sched *s, char **out, long long id);

int sched_agent_list(struct sched *s, json_t **reply);
int sched_agent_register(struct sched *s, json_t **reply, json_t *req);
int sched_agent_heartbeat(struct sched *s, json_t **reply, const char *name, json_t *req);
/* Waits up to wait_s seconds for a task; *reply NULL when none came. */
int sched_agent_claim(struct sched *s, json_t **reply, const char *name, int wait_s);
int sched_task_result(struct sched *s, json_t **reply, long long task_id, json_t *req);

/* Returns expired leases to the queue; called about once a second. */
void sched_tick(struct sched *s);
/* Wakes every long poll (at shutdown). */
void sched_wake_all(struct sched *s);

/* 1 when name is 1..64 of [A-Za-z0-9._-]. */
int sched_valid_name(const char *name);

#endif
