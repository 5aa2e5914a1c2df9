/*
 * coord_internal: what the coordinator's rooms share (coord.c and
 * coord_*.c): the struct, the job context a step works on, and the
 * helpers more than one room calls. Everything here runs under s->lock
 * unless it says otherwise.
 *
 * The rooms stand in layers, each calling only the rooms below it (the
 * order of this file, bottom first; t0025 checks it): coord_event,
 * coord_ecache, coord_mirror, coord_claims, coord_job, coord_dash,
 * coord_profiles, the policies (coord_split, coord_engine), coord_steps,
 * coord_live, coord_agents, coord_intake, coord_jobs, coord_tasks, the
 * views (coord_charts, coord_export, coord_report, coord_mail), and
 * coord.c, the coordinator's life. Nothing calls up: the store reaches
 * the claims through a function it is handed (store_on_end()), and the
 * dashboard's streams learn of a change from the wait queue they park on
 * (coord_change_queue()).
 */
#ifndef BISECT_COORD_INTERNAL_H
#define BISECT_COORD_INTERNAL_H

#include <jansson.h>
#include <pthread.h>

#include "conf.h"
#include "coord.h"
#include "policy.h"
#include "repo.h"
#include "stats.h"
#include "store.h"

#define MAX_ATTEMPTS 3
#define COORD_LIVE_SLOTS 8      /* pools whose live agents are counted at once (coord_live_agents()) */

struct mirror {
	const struct conf_repo *conf;
	struct repo *repo;
	pthread_mutex_t lock;   /* held while fetching: outside s->lock */
};

struct coord {
	const struct conf_bisectd *conf;
	struct store *st;
	pthread_mutex_t lock;
	struct http_waitq *claims;  /* woken when a task was queued, or at shutdown */
	struct http_waitq *changes; /* woken when what the dashboard shows changed (coord_changed()) */
	/*
	 * Parked claims handed a task in the open transaction
	 * (coord_hand_task()), fired when it ends: with their reply once it
	 * is committed, without (to claim again) when it was rolled back.
	 */
	struct http_waiter **handoffs;
	size_t nr_handoffs, handoffs_cap;
	int shutdown;
	struct mirror *mirrors;
	pthread_t warm;              /* makes the mirrors at start-up */
	int warming;                 /* warm was started */
	volatile int stop_warm;
	long long started;           /* unix time of coord_new(): leases expire lease_grace_seconds after */
	long long last_sweep;        /* coord_sweep()'s last pass */
	struct ecache *ecache;       /* coord_ecache.c: running jobs' engines between steps */
	/* coord_steps.c: jobs to step after an upload, by the stepper thread, outside the upload */
	long long *pending;
	size_t nr_pending, pending_cap;
	pthread_cond_t step_cond;    /* a job is pending, or shutdown */
	pthread_t stepper;
	int stepping;                /* the stepper was started */
	unsigned long long step_epoch; /* bumped by every step applied and every job ended */
	/* coord_live_agents()'s counts, kept for the second they were counted in */
	struct live_count { char *pool; int live; long long at; } live[COORD_LIVE_SLOTS];
	unsigned live_next;
};

/* coord_event.c: logs an event and adds it to the job's (job 0: the coordinator's). */
int coord_event(struct coord *s, long long job, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Something the dashboard shows changed: its streams wake (coord_change_queue()). Any lock held. */
void coord_changed(struct coord *s);

/*
 * coord_ecache.c: the job's engine as a rebuild from its samples would
 * make it with opts (a copy the caller steps and bisect_free()s), from the
 * engine kept since the last step and the samples taken since.
 */
struct jobctx;
struct bisect_opts;
struct bisect;
int coord_ecache_engine(struct bisect **out, struct coord *s, struct jobctx *c, const struct bisect_opts *o);
/* Forgets a job's engine (it ended); the next step, if any, rebuilds it. */
void coord_ecache_drop(struct coord *s, long long job);
void coord_ecache_free(struct coord *s);
/* Steps served from a kept engine, and engines made from every sample of their job. */
void coord_ecache_stats(struct coord *s, long long *hits, long long *rebuilds);

/* coord_mirror.c */
struct mirror *coord_mirror_find(struct coord *s, const char *name);
/* Resolves the range in the repo's mirror, fetching first. Outside s->lock. */
int coord_resolve_range(struct coord *s, struct mirror *m, struct repo_range *rr,
			const char *good_ref, const char *bad_ref);

/* coord_claims.c: gives the oldest queued task this agent's labels fit to it, in the caller's transaction. */
int coord_try_claim(json_t **reply, struct coord *s, long long agent, char **labels, const char *name);
/*
 * Claims queued task for the longest parked claim of an agent pool fits
 * and wakes it with the task in hand (struct coord_claimer.handed) once
 * the caller's transaction is committed (coord_handoffs_end()): a burst
 * of queued tasks is handed out in the step that queued them, not
 * claimed again one by one, and the replies need no look at the store.
 * Nothing when no such claim is parked. In the caller's transaction,
 * s->lock held.
 */
int coord_hand_task(struct coord *s, const char *pool, long long task);
/* The store's end of a transaction (store_on_end()): fires s->handoffs. s->lock held. */
void coord_handoffs_end(void *arg, int committed);
/*
 * Wakes at most n parked claims (coord_claim_queue()), the longest parked
 * first, of agents pool fits (NULL: any) and, when agent > 0, of that
 * agent only. s->lock held.
 */
void coord_wake_claims(struct coord *s, const char *pool, long long agent, size_t n);

/* coord_job.c: a job as a step sees it. */
struct jobctx {
	long long id;
	struct job job;
	int n;                       /* commits 0..n-1: 0 good end, n-1 bad end */
	int runs;
	int higher;                  /* higher is better */
	struct job_commit *commits;
	int **parents;               /* borrowed from commits */
	int *nr_parents;
	enum commit_class *cls;
	struct summary *sum;
	int *outstanding;            /* queued or claimed tasks per commit */
	struct policy *pol;
	int reproduced;              /* engine_load(): the ends differed at an earlier step */
	double build_cost, run_cost; /* engine_load(): mean seconds per build and per run so far, 0 unknown */
};

int jobctx_load(struct coord *s, struct jobctx *c, long long id);
void jobctx_release(struct jobctx *c);
/* What the policies and the rooms above share to act on a job. */
int coord_set_commit_state(struct coord *s, struct jobctx *c, int idx, const char *state);
/*
 * Queues runs of commit idx; after > 0 chains it behind that task, on the
 * same agent. *id may be NULL. A task not chained is handed at once to a
 * parked claim that fits (coord_hand_task()), its reply made now.
 */
int coord_queue_runs(long long *id, struct coord *s, struct jobctx *c, int idx, int runs, int confirm,
		     long long after);
/*
 * The same, handed to no one: for a task whose own rows (a profile's role)
 * must be in the store before its claim reply is made. The caller hands
 * it with coord_hand_task() once they are.
 */
int coord_queue_unhanded(long long *id, struct coord *s, struct jobctx *c, int idx, int runs, int confirm,
			 long long after);
int coord_queue_task(struct coord *s, struct jobctx *c, int idx);
/* Commit idx with its summary, as reports show it; json null when it cannot be read. */
json_t *coord_commit_json(struct coord *s, struct jobctx *c, int idx);
/* The two-sample comparison a report shows: change of b against a, and its p-value. */
int coord_compare(double *change, double *p, struct coord *s, struct jobctx *c, int a, int b, enum stats_alt alt);
/*
 * coord_levels.c: with two agents or more, each row of an engine report
 * (good, parent, culprit, bad, top, range) gets hmean_ref, cv_ref and
 * hcv_ref, its runs at the reference agent's level; the report gets
 * "agents" ([{id, name, runs, level_pct, reference}]) and, with a culprit,
 * change_pct and p_value on those runs. Nothing with one agent.
 */
struct bisect;
int coord_report_levels(struct coord *s, struct jobctx *c, const struct bisect *b, json_t *rep);
/* The successful runs of commit idx, at the reference agent's level by rep's "agents" (none: as stored). */
int coord_levels_values(double **v, size_t *n, struct coord *s, long long job, int idx, json_t *rep);
/* The agents' levels at this step, to keep with its decision: [{id, level_pct, reference}]; NULL with one agent. */
json_t *coord_levels_now(struct coord *s, long long job, const struct bisect *b);
/*
 * A full job document's commits at one agent's level: j gets "agents" and
 * each commit hmean_ref, cv_ref and hcv_ref, from the report's levels of
 * an ended job or the last step's of a running one. Nothing with one agent.
 */
int coord_job_levels(struct coord *s, long long id, json_t *j);
/* The job's agents as coord_job_levels() gives them ([{id, name, runs, level_pct, reference}]); NULL: one. */
int coord_job_agents(json_t **agents, struct coord *s, long long id);
/*
 * Ends the job in state, with its culprit (-1: none), report (borrowed,
 * NULL: none) and error. A policy naming its culprit ends the job with
 * coord_finish_culprit() instead, which holds the verdict for profiles.
 */
int coord_finish(struct coord *s, struct jobctx *c, const char *state, int culprit, json_t *report,
		 const char *error);
int coord_fail_job(struct coord *s, struct jobctx *c, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Ends the job because end e could not be measured, with the reason its last task gave. */
int coord_fail_end(struct coord *s, struct jobctx *c, int e);
/*
 * How many agents of the pool count for a step: not retired, and asked
 * for work (claim) within a lease or hold a task. Agents that only
 * heartbeat do not count.
 */
int coord_live_agents(struct coord *s, const struct conf_pool *pool);
/* Forgets coord_live_agents()' counts: an agent came back, registered, or was retired. */
void coord_live_forget(struct coord *s);
int coord_parent_of(struct jobctx *c, int idx);

/* coord_dash.c: adds what the dashboard shows to the agent list's rows and to a job's document. */
void coord_dash_agents(struct coord *s, json_t *agents);
void coord_dash_job(struct coord *s, json_t *job, long long id, int full);

/*
 * coord_profiles.c: perf profiles at the culprit (a workload's `profile: true`).
 * hold: a job about to end done with a culprit holds its verdict and queues
 * the profile tasks instead: 1 when it did, 0 when the workload profiles
 * nothing or the job is ending from its hold.
 */
int coord_profile_hold(struct coord *s, struct jobctx *c, int culprit, json_t *report);
/*
 * Ends the job done with its culprit (report borrowed), as a policy names
 * it: or, when the workload profiles, holds the verdict (coord_profile_hold())
 * and the job ends from its hold once the profiles are in.
 */
int coord_finish_culprit(struct coord *s, struct jobctx *c, int culprit, json_t *report);
/* 1 when the job holds a verdict for its profiles, 0 when not, or a code. */
int coord_profile_held(struct coord *s, long long job);
/* A held job's step: waits for its profiles, or ends with the held verdict and their diff. */
int coord_profile_step(struct coord *s, struct jobctx *c);
/* An upload of a profile task: 1 when taken (the task was one), 0 when t is no profile task. */
int coord_profile_result(struct coord *s, const struct task *t, const struct result_request *req);
/* A profile task that could not be done: 1 when its last attempt failed it, 0 to try again as any task. */
int coord_profile_retry(struct coord *s, long long task, long long attempt, const char *why);
/*
 * From the sweep: a verdict held past its limit (an hour, or four builds
 * and runs of the workload) ends the job with the profiles that are in;
 * the others fail as not recorded in time.
 */
void coord_profile_sweep(struct coord *s);
/* The report's "profiles" as text, each line after indent (coord_report.c, coord_mail.c). */
struct sbuf;
void coord_profile_text(struct sbuf *sb, json_t *rep, const char *indent);

/* A bisection policy, chosen by the job's name for it (coord_steps.c holds the table). */
struct policy_ops {
	const char *name;
	/* One step of a queued or running job after anything changed. */
	int (*step)(struct coord *s, struct jobctx *c);
};
extern const struct policy_ops policy_bisectd;  /* coord_engine.c: the probabilistic engine */
extern const struct policy_ops policy_split;    /* coord_split.c: the walking skeleton's */
/*
 * coord_engine.c: a step of the engine whose work (bisect_next) runs
 * with s->lock released: called with it held, returns with it held, the
 * decision applied in a transaction of its own. 1 when another step ran
 * or a job ended meanwhile: nothing was applied, ask again.
 */
int coord_engine_step_unlocked(struct coord *s, struct jobctx *c);

/* coord_steps.c: one step of a job after anything changed, by the job's policy. */
int coord_job_step(struct coord *s, long long id);
/*
 * The job is stepped soon by the stepper thread, in a transaction of its
 * own (coord_start_steps() started it; else at once, in the caller's).
 * Uploads use it: their reply does not wait for the engine, and uploads
 * that come while it works are taken by one step.
 */
int coord_step_later(struct coord *s, long long id);

/* coord_live.c: nothing stalls. */
/* 1 during the lease grace after start-up: no lease expires, no agent is retired. */
int coord_in_grace(struct coord *s);
/* Steps again the idle jobs (nothing queued or claimed) of the pools an agent with labels is in. */
void coord_wake_pool(struct coord *s, char **labels);
/* From the tick: steps every idle job, retires agents not seen for agent_retire_seconds. */
void coord_sweep(struct coord *s);
/* What a job (its document) waits for, as the API shows it: a string, or json null. */
json_t *coord_job_waiting(struct coord *s, json_t *job);

/*
 * coord_agents.c: the agent's id (and labels, unless NULL: strv_free()) as
 * it is seen now; claim: it asks for work or delivers a result (last_claim), and *appeared
 * (unless NULL) is 1 when it did not count for a step before.
 */
int coord_agent_seen(long long *id, char ***labels, int *appeared, struct coord *s, const char *name, int claim);
/* The same without marking it seen: a request it may yet be refused leaves the store as it was. */
int coord_agent_find(long long *id, char ***labels, struct coord *s, const char *name);

/* coord_intake.c: a task that could not be done goes back to the queue, or after the last attempt skips its commit. */
int coord_task_retry(struct coord *s, long long task, long long job, int idx, long long attempt, const char *why);

/* coord_jobs.c: a job as the API shows it; NULL when it does not exist. */
json_t *coord_job_json(struct coord *s, long long id, int full);

#endif
