/*
 * agent_internal: what the agent's rooms share (agent.c and agent_*.c):
 * its struct, a task and its result, and the calls one room makes into
 * another. The rooms stand in layers, each calling only those below it:
 * agent_wait.c, agent_coord.c, agent_build.c, agent_run.c, agent.c.
 */
#ifndef BISECT_AGENT_INTERNAL_H
#define BISECT_AGENT_INTERNAL_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "client.h"
#include "conf.h"
#include "log.h"

#define MAX_NAME 64
#define MAX_ARGS 256
#define MAX_ARG_LEN 4096
#define BUILD_OUTPUT_MAX (16 << 20) /* per stream, kept whole in the build log */
#define LOG_TAIL_MAX 4096
#define SPOOL_MAX (8 << 20)
#define REQUEST_TIMEOUT_S 30
#define BACKOFF_FIRST_MS 1000
#define BACKOFF_MAX_MS 30000
#define UPLOAD_TRIES 5


struct agent {
	struct conf_agent conf;
	struct client *cl;          /* the main thread's */
	struct client *hb_cl;       /* the heartbeat thread's */
	char *repos, *logs, *spool; /* under workdir */
	int workdir_fd;             /* holds workdir/agent.lock */
	int lock_fd;                /* measure_lock, -1 when none */
	int build_fd;               /* build_lock, -1 when none */
	char *kbuild, *kcache;      /* kernel build output per repo, built images by key */

	pthread_mutex_t mu;         /* guards what follows */
	pthread_cond_t wake;        /* stop, quit, or a new heartbeat interval */
	int hb_interval;            /* seconds */
	long long task, attempt;    /* the task in hand, 0 when idle */
	int cancel;                 /* the coordinator said to drop the task in hand (stored atomically: builds read it unlocked) */
	int quit;                   /* the heartbeat thread should end */
	int beat_now;               /* send the next heartbeat at once */
	const char *phase;          /* what the task in hand is doing, for the coordinator; NULL: idle */
	int64_t phase_t0;           /* when it started */
	long files;                 /* files a kernel build compiled so far */
	char detail[96];            /* where a checkout is ("receiving objects, 40% of 10,519,014") */
};

/* How often a long step's progress changes what the coordinator shows. */
#define PROGRESS_EVERY_MS 15000

/* A condition that is logged when it changes, not on every retry. */
struct note {
	char last[512];
};

struct task {
	long long id, attempt, runs;
	const char *commit, *repo_name, *repo_url, *type, *boot;
	long long build_timeout;
	json_t *def;                /* the workload definition; borrowed from the claim reply */
	const char *profile;        /* a profile task's role ("parent", "culprit"); NULL: measure */
	json_t *claim;              /* the claim reply; borrowed */
	int resumed;                /* carried on from the journal after a kexec: built already */
};

struct result {
	const char *status;         /* "ok", "skipped", "failed", "refused" */
	char *error, *log_tail;
	json_t *samples;
	double build_s, run_s;
	char *profile;              /* a profile task's perf report; NULL: none */
};

enum { UP_DONE, UP_KEEP, UP_REJECTED };


/*
 * Set by the first SIGTERM/SIGINT: the agent stops after the step in hand.
 * A second one kills the running command's process group and exits.
 */
extern volatile sig_atomic_t agent_stopping;
extern int agent_sig_pipe[2];

/* agent_wait.c: stopping and waiting */
void agent_note(struct note *n, enum log_level level, const char *msg);
void agent_note_clear(struct note *n, const char *msg);
void agent_on_signal(int sig);
void *agent_signal_main(void *arg);
void agent_deadline_after(struct timespec *ts, long ms);
int agent_nap(struct agent *a, long ms);
long agent_backoff_next(long ms);

/* agent_coord.c: the coordinator */
void *agent_heartbeat_main(void *arg);
void agent_set_current(struct agent *a, long long task, long long attempt);
void agent_set_phase(struct agent *a, const char *phase);
void agent_git_progress(void *arg, const char *text);
int agent_abandoned(struct agent *a, const struct task *t);
int agent_load_token(struct agent *a);
int agent_register(struct agent *a);
int agent_upload(struct agent *a, long long id, json_t *body, int tries);
void agent_spool_reject(const char *path);
int agent_spool_flush(struct agent *a, int tries);
void agent_result_set(struct result *r, const char *status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void agent_result_release(struct result *r);
json_t *agent_text_json(const char *s, int keep_lines);

/* agent_build.c: builds */
void agent_measure_lock(struct agent *a, int op, const struct task *t);
int agent_build(struct result *r, struct agent *a, const struct task *t, const char *dir);
int agent_kernel_build(char **image_dir, struct result *r, struct agent *a, const struct task *t,
		       const char *dir);

/* agent_run.c: a task in hand */
void agent_handle_task(struct agent *a, json_t *reply, int resumed);

#endif
