/*
 * store: bisectd's state in SQLite (WAL mode, foreign keys on), with the
 * numbered migrations of schema/ applied at open and recorded in
 * PRAGMA user_version.
 *
 * The store owns every SQL statement: the rest of bisectd calls the typed
 * functions below, by table group (store_jobs.c: repos, jobs, their
 * commits, decisions, events; store_tasks.c: tasks and their leases;
 * store_results.c: samples and summaries; store_agents.c: agents).
 * Functions return 0 or a negative code with the message set (sqlite's
 * errors are translated here, once: ERR_BUSY, ERR_EXISTS for a broken
 * constraint, ERR_FAIL); output parameters come first and are the
 * caller's. Strings in a struct the store filled are heap copies that its
 * _release() or _free() frees; strings the caller passes in are borrowed.
 * A struct store is not thread-safe: the coordinator serialises its use.
 */
#ifndef BISECT_STORE_H
#define BISECT_STORE_H

#include <jansson.h>
#include <stddef.h>

#include "stats.h"

struct store_migration {
	int version;
	const char *name;
	const char *sql;
};
extern const struct store_migration store_migrations[];
extern const int store_nr_migrations;

struct store;

/* Opens or creates the database at path and migrates it to the newest version. */
int store_open(struct store **out, const char *path);
void store_close(struct store *s);   /* stops its checkpointer first */

/*
 * Moves the WAL's checkpoints off the writers' path: from now on a thread
 * of the store's, on a connection of its own, checkpoints (PASSIVE, so it
 * never blocks a writer) when the WAL passes 1,000 pages and every
 * second it has grown; the writers' commits no longer wait for the
 * checkpoint's fsync, which with the coordinator's lock held stalled
 * every request behind it (bench-api). Without it SQLite checkpoints in
 * the commit that crosses the mark, as before.
 */
int store_checkpointer_start(struct store *s);
/* Checkpoints the checkpointer has run (for the tests). */
long long store_checkpoints(struct store *s);
/* The schema version (PRAGMA user_version). */
int store_version(struct store *s);

int store_begin(struct store *s);
int store_commit(struct store *s);
/* Rolls back the open transaction, if any. */
void store_rollback(struct store *s);

/* --- repos and events (store_jobs.c) ------------------------------------ */

/* Adds the repo, or sets its url when it is known. */
int store_repo_put(struct store *s, const char *name, const char *url);
/* ERR_NOTFOUND when no repo has the name. */
int store_repo_id(long long *id, struct store *s, const char *name);

/* Adds an event to a job's log (job 0: the coordinator's own). */
int store_event_add(struct store *s, long long job, long long time, const char *kind, const char *msg);

/* --- jobs (store_jobs.c) ---------------------------------------------- */

struct job {
	long long id, repo_id;
	char *workload, *pool;
	char *good, *bad;            /* full commit ids */
	char *good_ref, *bad_ref;    /* as the user wrote them */
	long long runs;              /* per task */
	char *unit;
	int higher;                  /* direction: higher is better */
	char state[16];              /* queued, running, done, failed, not-reproduced, undecided, cancelled */
	long long created;
	long long finished;          /* 0: not yet */
	int culprit;                 /* idx of the culprit; -1: none */
	char *error;                 /* NULL: none */
	char policy[16];             /* bisectd, split */
	double confidence, alpha, min_effect;
	long long budget_runs, budget_builds, budget_seconds;   /* 0: none given */
	char *append;                /* kernel command line variant; NULL: none */
	char *config;                /* kernel config variant: a JSON array of "CONFIG_X=value"; NULL: none */
	long long end_runs;          /* runs of each end before not-reproduced; 0: the engine's own */
	long long ends_max;          /* runs each end may be measured to before they are undecided, as a
					resume raised it; 0: the engine's own */
};

/* The job; ERR_NOTFOUND when there is none. Release with store_job_release(). */
int store_job_get(struct job *job, struct store *s, long long id);
void store_job_release(struct job *job);
/* Adds a job from job's fields (id, state, finished, culprit and error are not read); *id is its id. */
int store_job_insert(long long *id, struct store *s, const struct job *job);
/* Ends the job: its state, when, the culprit (-1: none), the report (JSON text, NULL: none) and error. */
int store_job_finish(struct store *s, long long id, const char *state, long long finished, int culprit,
		     const char *report, const char *error);
/* A queued job starts running (its first claim); a job in any other state stays as it is. */
int store_job_set_running(struct store *s, long long id);
/*
 * A job in state from (undecided or cancelled) running again with these
 * budgets (and ends_max, the runs each end may be measured to; 0: as it
 * was), its report and end cleared; ERR_CONFLICT if it is not in from.
 */
int store_job_resume(struct store *s, long long id, const char *from, long long budget_runs, long long budget_builds,
		     long long ends_max, long long budget_seconds);
/* Keeps the budgets the engine derived (0: none), changing the row only when they differ. */
int store_job_set_auto_budgets(struct store *s, long long id, long long runs, long long seconds);
/* The ids of the jobs queued or running, oldest first; *ids is the caller's. */
int store_job_active_ids(long long **ids, size_t *n, struct store *s);
/* The newest jobs' ids, newest first, at most max; *ids is the caller's. */
int store_job_ids(long long **ids, size_t *n, struct store *s, int max);
/* 1 in *yes when the job has a decision past the ends (they differed at an earlier step). */
int store_job_reproduced(int *yes, struct store *s, long long id);

/* --- a job's commits (store_jobs.c) --------------------------------- */

struct job_commit {
	int idx;                     /* 0 the good end, n-1 the bad end */
	char state[16];              /* untested, queued, good, bad, skipped */
	int *parents;                /* idx of the parents inside the set */
	int nr_parents;
};

/* The job's commits by idx; free with store_job_commits_free(). */
int store_job_commits(struct job_commit **out, int *n, struct store *s, long long job);
void store_job_commits_free(struct job_commit *c, int n);
/* Adds commit idx of a job; parents NULL: none recorded (the column's default, an empty list). */
int store_job_commit_add(struct store *s, long long job, int idx, const char *sha, const char *subject,
			 const int *parents, int nr_parents);
int store_job_commit_set_state(struct store *s, long long job, int idx, const char *state);
/* An untested commit becomes queued; one in any other state stays. */
int store_job_commit_queued(struct store *s, long long job, int idx);

/*
 * Records an engine decision; queries, top and agents are JSON text
 * (agents: each agent's level at this step, NULL with fewer than two).
 */
int store_decision_add(struct store *s, long long job, long long time, const char *state, const char *queries,
		       const char *top, const char *why, const char *agents);
/* The agents with a successful run of the job (agent_sums), by id (0: none); *ids is the caller's. */
int store_job_agent_ids(long long **ids, size_t *n, struct store *s, long long job);
/* The agents' levels at the job's last step that had two agents or more ([{id, level_pct, reference}]); NULL: none. */
int store_job_levels_doc(json_t **out, struct store *s, long long job);

/*
 * The documents the API shows (docs/API.md), as JSON the caller owns:
 * a job's row with its repo's name and its report parsed; ERR_NOTFOUND
 * when the job does not exist.
 */
int store_job_doc(json_t **out, struct store *s, long long id);
/* The job's commit count (both ends included). */
int store_job_nr_commits(long long *n, struct store *s, long long id);
/* {idx, sha, subject} of commit idx. */
int store_job_commit_doc(json_t **out, struct store *s, long long job, int idx);
/* {idx, sha, subject, state, n, failures, hmean, amean, cv} of commit idx (no summary: nulls). */
int store_job_commit_summary_doc(json_t **out, struct store *s, long long job, int idx);
/* {tasks_done, tasks_total, samples, classified, measured}. */
int store_job_progress_doc(json_t **out, struct store *s, long long id);
/* The job's claimed tasks: [{task, idx, agent, claimed, progress}]. */
int store_job_running_doc(json_t **out, struct store *s, long long id);
/* The commits measured, decided or at an end, with their summaries. */
int store_job_commits_doc(json_t **out, struct store *s, long long id);
/* The last 50 decisions and the last 200 events, oldest first. */
int store_job_decisions_doc(json_t **out, struct store *s, long long id);
int store_job_events_doc(json_t **out, struct store *s, long long id);

/* --- tasks and leases (store_tasks.c) ---------------------------------- */

struct task {
	long long id, job;
	int idx;
	long long runs, attempt;
	char state[16];              /* queued, claimed, done, skipped, failed, cancelled */
	long long agent;             /* agent_id; 0: none */
	/* Filled by the functions that say so, from the rows the task joins: */
	char job_state[16];
	char *unit;                  /* the job's */
	char *pool, *workload, *append;
	char *config;                /* the job's: a JSON array of "CONFIG_X=value"; NULL: none */
	char *repo, *url, *sha;
	char *agent_name;            /* NULL: no agent */
};

void store_task_release(struct task *t);
void store_tasks_free(struct task *t, size_t n);

/*
 * Queues a task of runs of commit idx, created at time; after > 0 chains
 * it behind that task (on the same agent); confirm keeps the kind of
 * query it answers. *id is the new task's.
 */
int store_task_add(long long *id, struct store *s, long long job, int idx, long long runs, long long time,
		   int confirm, long long after);
/* The task with its job's state and unit; ERR_NOTFOUND when none. */
int store_task_get(struct task *t, struct store *s, long long id);
/* Queued or claimed tasks per commit of the job, into out[0..n) (zeroed first). */
int store_tasks_outstanding(int *out, int n, struct store *s, long long job);
/* The job's queued or claimed tasks, a chain (links waiting on each other) counted once. */
int store_tasks_busy(long long *n, struct store *s, long long job);
/*
 * The queued or running jobs with no task queued or claimed, oldest
 * first, with their pools: *ids and *pools (strv_free()) the caller's,
 * NULL when none.
 */
int store_jobs_idle(long long **ids, char ***pools, size_t *n, struct store *s);
/* Cancels the job's queued tasks. */
int store_tasks_cancel_queued(struct store *s, long long job, long long time);
/* Cancels the job's queued and claimed tasks: their agents' next heartbeat says cancel. */
int store_tasks_cancel_open(struct store *s, long long job, long long time);
/*
 * The queued tasks of live jobs an agent may take, oldest first, at most
 * 16, with pool, workload, append, config, repo, url and sha: of the
 * pools named in pools (a JSON array of names; NULL: any), a link of a
 * chain only once the link before is through, and only by its agent,
 * unless that one was last seen before seen_since.
 */
int store_tasks_claimable(struct task **out, size_t *n, struct store *s, long long agent, long long seen_since,
			  const char *pools);
/* Task id as store_tasks_claimable() reads it (release it); ERR_NOTFOUND unless it is queued. */
int store_task_claimable_get(struct task *t, struct store *s, long long id);
/* Gives the task to the agent as attempt, leased until lease. */
int store_task_claim(struct store *s, long long id, long long attempt, long long agent, long long lease,
		     long long time);
/*
 * Extends the lease of a task the agent holds as attempt, and sets its
 * progress (NULL: keeps it); *held 0 when the agent does not hold it.
 */
int store_task_heartbeat(int *held, struct store *s, long long id, long long agent, long long attempt,
			 long long lease, const char *progress);
/* Back to the queue, with why it could not be done. */
int store_task_requeue(struct store *s, long long id, const char *why);
/* Failed for good, with why. */
int store_task_fail(struct store *s, long long id, long long time, const char *why);
/* Done or skipped (state), with what it cost and said. */
int store_task_finish(struct store *s, long long id, const char *state, long long time, double build_s,
		      double run_s, const char *error, const char *log_tail);
/* The claimed tasks whose lease is before time, with agent_name. */
int store_tasks_expired(struct task **out, size_t *n, struct store *s, long long time);
/* The error of the job's last task on commit idx that gave one; *out NULL when none. Caller frees. */
int store_task_last_error(char **out, struct store *s, long long job, int idx);

/* What building and running cost on a job so far, in seconds; 0 unknown. */
struct task_costs {
	double build;      /* mean build_s of its done tasks that ran */
	double run;        /* run_s per run */
	double per_build;  /* mean build_s of the done tasks that built */
};
int store_task_costs(struct task_costs *out, struct store *s, long long job);

/* --- samples and summaries (store_results.c) ---------------------------- */

struct sample {
	long long id, task, attempt, run, job;
	int idx;
	double value;                /* <= 0: a failed run */
	const char *unit, *error;    /* store_sample_add() only; borrowed */
	long long created;
	/* store_job_samples() only, from the sample's task: */
	long long agent;             /* 0: none */
	int confirm;                 /* the kind of query the task answered */
};

int store_sample_add(struct store *s, const struct sample *x);
/* x[0..n) in order; the first that cannot be added (ERR_EXISTS: taken already) stops it with its code. */
int store_samples_add(struct store *s, const struct sample *x, size_t n);
/* The samples of a job in the order they were taken, with agent and confirm; *out is the caller's. */
int store_job_samples(struct sample **out, size_t *n, struct store *s, long long job);
/* The same, only the samples with an id above after: what came since a caller read up to it. */
int store_job_samples_after(struct sample **out, size_t *n, struct store *s, long long job, long long after);
/* The values of commit idx in the order they were taken; *out is the caller's (NULL when none). */
int store_commit_values(double **out, size_t *n, struct store *s, long long job, int idx);
/* How many samples an attempt of a task uploaded. */
int store_task_nr_samples(long long *n, struct store *s, long long task, long long attempt);
/* The error of the last failed run of commit idx; *out NULL when none. Caller frees. */
int store_sample_last_error(char **out, struct store *s, long long job, int idx);

/* Sets commit idx's summary (n, failures, hmean, amean, cv). */
int store_summary_put(struct store *s, long long job, int idx, const struct summary *sum);
/*
 * Commit idx's running summary (zeroed when it has none). A summary
 * written before schema 8 keeps no sums: they are made from its samples.
 */
int store_summary_acc(struct stats_acc *a, struct store *s, long long job, int idx);
/* Sets commit idx's summary from its running sums: n, failures, hmean, amean, cv and the sums. */
int store_summary_acc_put(struct store *s, long long job, int idx, const struct stats_acc *a);

/* Each agent's running sums of its runs of a commit (agent_sums): the commits at one agent's level. */
struct agent_acc {
	int idx;
	long long agent;             /* 0: none */
	struct stats_acc acc;
};
/* Agent agent's sums of commit idx (zero when it has none). */
int store_agent_acc(struct stats_acc *a, struct store *s, long long job, int idx, long long agent);
int store_agent_acc_put(struct store *s, long long job, int idx, long long agent, const struct stats_acc *a);
/* Every commit and agent's sums of the job, by idx then agent; *out is the caller's. */
int store_job_agent_accs(struct agent_acc **out, size_t *n, struct store *s, long long job);
/*
 * How many transactions were rolled back since the store was opened: a
 * cache of what the store held (the coordinator's engines) that was
 * filled since the count last changed may hold rows that are gone.
 */
long long store_rollbacks(const struct store *s);
/*
 * fn(arg, 1) after each COMMIT that held, fn(arg, 0) after each
 * store_rollback() of an open transaction: what waits for a transaction
 * to end (replies that may go only once their rows are in). NULL: none.
 */
void store_on_end(struct store *s, void (*fn)(void *arg, int committed), void *arg);
/* 1 inside store_begin() ... store_commit() / store_rollback(). */
int store_in_transaction(const struct store *s);
/* The job's summaries into sum[0..n) by idx (zeroed first); rows outside are ignored. */
int store_summaries(struct summary *sum, int n, struct store *s, long long job);

/* --- agents (store_agents.c) ------------------------------------------ */

struct agent {
	long long id;
	char *name;
	char **labels;               /* NULL-terminated */
	long long registered, last_seen;
	long long last_claim;        /* 0: never claimed */
	long long retired;           /* when it was retired; 0: active */
};

void store_agent_release(struct agent *a);
void store_agents_free(struct agent *a, size_t n);
/* Registers the agent, or sets its labels (JSON text) and last_seen when it is known. */
int store_agent_put(struct store *s, const char *name, const char *labels, long long time);
/* ERR_NOTFOUND when no agent has the name. */
int store_agent_get(struct agent *a, struct store *s, const char *name);
/* The name of agent id (*name the caller's); ERR_NOTFOUND when there is none. */
int store_agent_name(char **name, struct store *s, long long id);
/* Marks the agent seen at time (and, with claim, claiming at time); clears retired. */
int store_agent_seen(struct store *s, long long id, long long time, int claim);
/* The agents seen at or after since. */
int store_agents_live(struct agent **out, size_t *n, struct store *s, long long since);
/*
 * The agents that count for a step: not retired, and either claimed at or
 * after since or hold a claimed task.
 */
int store_agents_active(struct agent **out, size_t *n, struct store *s, long long since);
/*
 * Retires the agents not seen since before (and not retired yet): sets
 * retired to time and the lease of each task they hold to time, so the
 * next expiry returns it to the queue. Their names in *names
 * (strv_free(); NULL when none).
 */
int store_agents_retire(char ***names, struct store *s, long long before, long long time);
/* The API's agent list: [{name, labels, last_seen, last_claim, retired, task}] by name, task the one it holds or null. */
int store_agents_doc(json_t **out, struct store *s);

/* --- the dashboard (store_dash.c) -------------------------------------- */

/*
 * Documents the dashboard adds to the API's (docs/API.md), as JSON the
 * caller owns. Agents: [{name, tasks_done, tasks_failed, task, job, idx,
 * commit_sha, commit_subject, claimed, progress, confirm}] by name, the
 * task fields null when it holds none. A job: {runs, failed_runs, builds,
 * best_idx, best_p, best_sha, best_subject, nr_decisions}, best_* from
 * the engine's last decision (null before one). Samples: at most max, in
 * range order [{idx, task, agent, attempt, run, value, error, created}].
 */
int store_dash_agents_doc(json_t **out, struct store *s);
int store_dash_job_doc(json_t **out, struct store *s, long long id);
int store_dash_samples_doc(json_t **out, struct store *s, long long job, long long max);

/* --- exports (store_export.c) ------------------------------------------ */

/* A sample as a job's export shows it: its commit, task and agent by name. */
struct export_sample {
	int idx;
	char *sha, *subject;
	long long task, attempt, run;
	char *agent;                 /* NULL: no agent */
	double value;                /* <= 0: a failed run */
	char *unit, *error;          /* error NULL: none */
	long long created;
};

/* Every sample of a job in the order they were taken (none: *out NULL, *n 0). */
int store_export_samples(struct export_sample **out, size_t *n, struct store *s, long long job);
void store_export_samples_free(struct export_sample *x, size_t n);

/* An agent that was given tasks of a job, with what it did for it. */
struct job_agent {
	char *name;
	char **labels;               /* NULL-terminated */
	long long last_seen;
	long long tasks;             /* its tasks of the job that are done */
	long long runs;              /* its successful runs of the job */
};

/* The agents given tasks of a job, by name. */
int store_job_agents(struct job_agent **out, size_t *n, struct store *s, long long job);
void store_job_agents_free(struct job_agent *a, size_t n);

/* --- API tokens (store_tokens.c) ---------------------------------------- */

/* A token's row: never the token itself, only its keyed hash. */
struct token {
	long long id;
	char prefix[16];             /* the token's public part, which names it */
	char hash[72];               /* HMAC-SHA256 of the whole token, hex */
	char role[8];                /* admin, submit, agent */
	char *agent;                 /* bound agent's name; NULL: none */
	char *note;                  /* NULL: none */
	long long created;
	long long last_used;         /* 0: never */
	long long revoked;           /* 0: live */
};

void store_token_release(struct token *t);
void store_tokens_free(struct token *t, size_t n);
/* Adds t's prefix, hash, role, agent, note and created; *id is its id. ERR_EXISTS for a prefix taken. */
int store_token_insert(long long *id, struct store *s, const struct token *t);
/* The token with this prefix (revoked ones too); ERR_NOTFOUND when none. */
int store_token_by_prefix(struct token *t, struct store *s, const char *prefix);
/* Every token, oldest first; *out is the caller's (store_tokens_free). */
int store_tokens_list(struct token **out, size_t *n, struct store *s);
/* Revokes the token at time; ERR_NOTFOUND when no token has the id, ERR_CONFLICT when revoked already. */
int store_token_revoke(struct store *s, long long id, long long time);
int store_token_used(struct store *s, long long id, long long time);
/* How many live tokens have the role (agent NULL; role NULL too: all) or are agent tokens bound to agent. */
int store_tokens_live(long long *n, struct store *s, const char *role, const char *agent);
/*
 * Who holds task id's current attempt: *agent the agent's name (NULL when
 * it is not claimed; caller frees), *attempt the attempt. ERR_NOTFOUND
 * for no such task.
 */
int store_task_holder(char **agent, long long *attempt, struct store *s, long long id);

#endif
