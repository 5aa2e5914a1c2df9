/*
 * taskwire: the task an agent claims, as it travels in the claim reply
 * (POST /api/v1/agents/NAME/claim, docs/API.md). One definition of the
 * format for both sides: the coordinator encodes, the agent decodes and
 * validates, so a field renamed on one side cannot go unnoticed.
 */
#ifndef BISECT_TASKWIRE_H
#define BISECT_TASKWIRE_H

#include <jansson.h>

#define TASKWIRE_MAX_NAME 64
#define TASKWIRE_MAX_URL 4096
#define TASKWIRE_MAX_RUNS 1000      /* the API takes at most 1000 samples */
#define TASKWIRE_MAX_ATTEMPT 1000000
#define TASKWIRE_MAX_BUILD_TIMEOUT (7 * 24 * 3600)

struct task_wire {
	long long task;             /* the task's id, >= 1 */
	long long attempt;          /* 1 for the first claim of the task */
	long long job;              /* the job it belongs to (informative) */
	long long runs;             /* 1..TASKWIRE_MAX_RUNS */
	long long lease;            /* seconds the claim lives without a heartbeat */
	const char *commit;         /* 40 hex digits */
	const char *repo_name;      /* 1..64 of A-Z a-z 0-9 . _ -, not "." nor ".." */
	const char *repo_url;       /* non-empty */
	json_t *workload;           /* the workload definition (workload.h): an object */
	const char *profile;        /* "parent" or "culprit": a profile task (record the runs under
				     * perf, upload the report); NULL: a task that measures */

	/* Read from the workload definition by taskwire_decode(); encode ignores them. */
	const char *type;           /* "type", default "command" */
	const char *boot;           /* "boot", default "none" */
	long long build_timeout;    /* "build_timeout", default 1800 s */
};

/*
 * The claim reply for t: a new object (the caller's), holding a new
 * reference to t->workload. ERR_INVALID (nothing made) when a field is out
 * of its bounds: the coordinator never sends what the agent would refuse.
 */
int taskwire_encode(json_t **out, const struct task_wire *t);

/*
 * Reads and validates a claim reply into t. Strings and t->workload are
 * borrowed from j. The id and attempt are read first: when they are set
 * (non-zero) and a later field is bad, the task can still be reported as
 * failed. Returns 0, or ERR_INVALID with err_msg() naming the field.
 */
int taskwire_decode(struct task_wire *t, json_t *j);

#endif
