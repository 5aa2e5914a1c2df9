/*
 * coord: the coordinator's state machine. Jobs, agents, task leases and
 * the bisection steps, on top of the store. One lock serialises it; a
 * claim is one try, and the API parks a long poll on coord_claim_queue(),
 * which new tasks wake.
 *
 * Requests come in as the structs below, their fields checked already at
 * the API's edge (api_req.h) for type, bounds and syntax. What needs the
 * configuration or the store (an unknown repo, a stale attempt) is
 * checked here: on bad input a function returns ERR_INVALID /
 * ERR_NOTFOUND / ERR_UNPROCESSABLE / ERR_CONFLICT with a message for the
 * user, having changed nothing in the store. Replies are JSON the caller
 * owns. Strings in a request are borrowed for the call.
 */
#ifndef BISECT_COORD_H
#define BISECT_COORD_H

#include <jansson.h>
#include <stddef.h>

#include "conf.h"
#include "http.h"
#include "store.h"

/* The most wall time a job may ask for: a year. */
#define COORD_BUDGET_S_MAX 31536000
#define COORD_END_RUNS_MAX 200  /* a job's end_runs: rules out a change in 2.6% of the runs at 0.99 */
#define COORD_ENDS_MAX 100000   /* the runs a resume lets each end be measured to */

struct coord;

/* conf and st are borrowed and must outlive the coordinator. */
int coord_new(struct coord **out, const struct conf_bisectd *conf, struct store *st);
void coord_free(struct coord *s);
/* Makes the repos' mirrors in a thread of their own; coord_free() waits for it. */
void coord_start_mirrors(struct coord *s);
/*
 * Starts the thread that steps jobs after uploads (coord_step_later()),
 * first every job still running (a crash may have come between an upload
 * and its step); coord_free() waits for it.
 */
int coord_start_steps(struct coord *s);

/* Records the configured repos in the store. */
int coord_sync_conf(struct coord *s);

/* POST /jobs. */
struct job_request {
	const char *repo, *good, *bad, *workload;
	const char *pool;            /* NULL: the first configured */
	long long runs;              /* 0: the configured default */
	const char *policy;          /* a name coord_policy_valid() knows */
	double confidence, alpha, min_effect;
	long long budget_runs, budget_builds, budget_seconds;
	long long end_runs;          /* runs of each end before not-reproduced; 0: the engine's own */
	const char *direction;       /* "higher", "lower"; NULL: the workload's */
	const char *append;          /* NULL: none */
	json_t *config;              /* the kernel config variant: an array of "CONFIG_X=value"
				      * strings kconfig_job_parse() accepts; borrowed; NULL: none */
};

/* 1 when a job may name this policy; the names for a message ("bisectd or split"). */
int coord_policy_valid(const char *name);
const char *coord_policy_names(void);

int coord_job_create(json_t **reply, struct coord *s, const struct job_request *req);
int coord_job_list(json_t **reply, struct coord *s);
int coord_job_get(json_t **reply, struct coord *s, long long id);
int coord_job_cancel(json_t **reply, struct coord *s, long long id);
/*
 * An undecided job runs on with more runs and wall time (0: derived from
 * its report), every run it has kept; ERR_CONFLICT for a job not undecided,
 * or one its first step would end again at once (the reason in err_msg()).
 */
int coord_job_resume(json_t **reply, struct coord *s, long long id, long long more_runs, long long more_seconds);
/*
 * Reports and exports of a job, as text the caller frees; ERR_NOTFOUND
 * for a job that does not exist.
 *
 * coord_job_report_text (coord_report.c): the report as the netdev
 * threads print it, each commit's hmean with its CV, which cv says:
 * stddev / arithmetic mean, or mmtests' harmonic CoV. A queued or
 * running job gets what is known so far, saying it is not finished;
 * ERR_CONFLICT for a job that ended without a report (failed, cancelled).
 *
 * coord_job_report_mail (coord_mail.c): the culprit as the kernel test
 * robot mails it: the commit, its author, the change with its interval,
 * the machines, the workload's command line, the kernel config and
 * variant, a %stddev %change %stddev table and how to reproduce it.
 * ERR_CONFLICT for a job that named no culprit (yet).
 *
 * coord_job_samples_csv (coord_export.c): every sample of the job as CSV
 * with a header line (docs/API.md); a job without samples gets the header.
 */
enum report_cv { REPORT_CV_AMEAN, REPORT_CV_HMEAN };
int coord_job_report_text(char **out, struct coord *s, long long id, enum report_cv cv);
int coord_job_report_mail(char **out, struct coord *s, long long id);
int coord_job_samples_csv(char **out, struct coord *s, long long id);
/*
 * GET /jobs/ID/profiles/ROLE (coord_profiles.c): the `perf report --stdio`
 * text of the parent's or the culprit's profile as the agent uploaded it.
 * ERR_NOTFOUND: no such job or role, or the job has no profiles; ERR_CONFLICT:
 * that profile is not in (queued, or failed: the message says why).
 */
int coord_job_profile_text(char **out, struct coord *s, long long id, const char *role);
/* GET /jobs/ID/samples: every run in range order, for the dashboard (coord_dash.c). */
int coord_job_samples(json_t **reply, struct coord *s, long long id);

/*
 * GET /jobs/ID/charts/NAME.EXT (coord_charts.c): the chart drawn by
 * gnuplot, or its cached copy while the job has not changed; *out (len
 * bytes) is the caller's, *type its MIME type. ERR_NOTFOUND for an
 * unknown job, chart or format, ERR_CONFLICT when the job has nothing to
 * draw yet, ERR_BUSY when too many charts are being drawn, ERR_TIMEOUT
 * when gnuplot ran past chart_timeout, ERR_FAIL when it is missing or
 * failed (the message says which).
 */
int coord_job_chart(char **out, size_t *len, const char **type, struct coord *s, long long id,
		    const char *chart, const char *format);

/* POST /agents/register. */
#define COORD_MAX_LABELS 32
struct register_request {
	const char *name;
	const char *labels[COORD_MAX_LABELS];
	size_t nr_labels;
};

/*
 * POST /agents/NAME/heartbeat: task 0 when the agent holds none; held:
 * the tasks whose results it holds and has not uploaded yet (their leases
 * are extended as the task's is).
 */
#define COORD_MAX_HELD 64
struct heartbeat_request {
	long long task, attempt;
	const char *progress;        /* NULL: keep what it said last */
	struct { long long task, attempt; } held[COORD_MAX_HELD];
	size_t nr_held;
};

int coord_agent_list(json_t **reply, struct coord *s);
int coord_agent_register(json_t **reply, struct coord *s, const struct register_request *req);
int coord_agent_heartbeat(json_t **reply, struct coord *s, const char *name, const struct heartbeat_request *req);
/*
 * Who a parked claim is: the tag (http_wait.tag) of every reply parked on
 * coord_claim_queue(), so that a queued task wakes one claim that can
 * take it. coord_agent_claim() fills it; the parker owns it and frees
 * labels (strv_free()).
 */
struct coord_claimer {
	long long agent;
	char **labels;
	void *conn;             /* its connection (http_conn_alive()); NULL: not told */
	/*
	 * A task claimed for it while it was parked (coord_queue_runs()
	 * hands a new task to the longest parked claim that fits): the
	 * reply, fired once the step's transaction has committed the claim
	 * (coord_handoffs_end()). NULL: none.
	 */
	json_t *handed;
	long long handed_task, handed_attempt;
};

/*
 * Gives the agent the task handed to its parked claim (who->handed), or
 * the oldest queued task its labels fit, now; *reply NULL when there is
 * none. Waiting is the caller's (api.c parks the reply on
 * coord_claim_queue(), tagged with *who, which each try refreshes); each
 * try marks the agent seen.
 */
int coord_agent_claim(json_t **reply, struct coord *s, const char *name, struct coord_claimer *who);
/*
 * A parked claim whose agent has gone (its connection closed) or whose
 * reply was never sent: a task handed to it goes back to the queue at
 * once, and to a live parked claim that fits, rather than waiting out a
 * lease. Clears who->handed. Takes s->lock.
 */
void coord_claim_gone(struct coord *s, struct coord_claimer *who);
/*
 * What claims wait on: a queued task wakes as many parked claims as it
 * needs, of agents its pool fits (coord_wake_claims()); shutdown, a retry
 * and a change of agents wake them all.
 */
struct http_waitq *coord_claim_queue(struct coord *s);
/*
 * What the dashboard's event streams wait on (events.c): woken by every
 * event and every change of what the agent list and the jobs show.
 */
struct http_waitq *coord_change_queue(struct coord *s);
/* How often a waiting claim tries again anyway, so that its agent stays seen: a third of the lease, >= 1 s. */
int coord_claim_recheck_ms(struct coord *s);

/* POST /tasks/ID/result. */
struct result_sample {
	double value;
	const char *unit;            /* NULL: the job's */
	const char *error;           /* NULL: none */
};
struct result_request {
	const char *agent;
	long long attempt;
	const char *status;          /* "ok", "skipped", "failed" */
	struct result_sample *samples;  /* owned: result_request_release() */
	size_t nr_samples;
	double build_s, run_s;
	const char *error, *log_tail;   /* NULL: none */
	const char *profile_report;     /* a profile task's `perf report --stdio`; NULL: none */
};
void result_request_release(struct result_request *req);

int coord_task_result(json_t **reply, struct coord *s, long long task_id, const struct result_request *req);

/*
 * Returns expired leases to the queue (none for lease_grace_seconds after
 * start-up) and runs the sweep (coord_live.c); called about once a second.
 */
void coord_tick(struct coord *s);
/* Wakes every long poll (at shutdown). */
void coord_wake_all(struct coord *s);

#endif
