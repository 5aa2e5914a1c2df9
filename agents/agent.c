/*
 * bisect-agent: registers with bisectd, claims tasks with long polls, and
 * for each one checks the commit out, builds it, boots it, measures it and
 * uploads the samples. Every result is spooled to disk before its upload,
 * so a crash or an unreachable coordinator loses nothing.
 *
 *   bisect-agent -f etc/agent.yaml [-v]
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "boot.h"
#include "methods.h"
#include "client.h"
#include "conf.h"
#include "err.h"
#include "gitx.h"
#include "jsonx.h"
#include "kbuild.h"
#include "kexec.h"
#include "log.h"
#include "perfreport.h"
#include "run.h"
#include "taskwire.h"
#include "token.h"
#include "util.h"
#include "workload.h"
#include "worktree.h"

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

/*
 * Set by the first SIGTERM/SIGINT: the agent stops after the step in hand.
 * A second one kills the running command's process group and exits.
 */
static volatile sig_atomic_t stopping;
static int sig_pipe[2] = { -1, -1 };

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
	int cancel;                 /* the coordinator said to drop the task in hand */
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

static void note(struct note *n, enum log_level level, const char *msg)
{
	if (strncmp(n->last, msg, sizeof(n->last) - 1)) {
		log_msg(level, "%s", msg);
		snprintf(n->last, sizeof(n->last), "%s", msg);
	} else {
		log_debug("%s", msg);
	}
}

static void note_clear(struct note *n, const char *msg)
{
	if (n->last[0] && msg)
		log_info("%s", msg);
	n->last[0] = '\0';
}

static int valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > MAX_NAME || !strcmp(s, ".") || !strcmp(s, ".."))
		return 0;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

/* --- signals and sleeping -------------------------------------------------- */

static void on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	if (write(sig_pipe[1], &c, 1) < 0) {
		/* nothing to do in a handler */
	}
	errno = saved;
}

/*
 * Kills the process groups of our children (run_cmd starts each command in
 * a group of its own), so that an aborted build does not run on.
 */
static void kill_children(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t self = getpid();

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[64], buf[512], *p;
		int fd, ppid = 0;
		ssize_t n;
		long pid = strtol(e->d_name, &p, 10);

		if (*p || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		p = strrchr(buf, ')');
		if (p && sscanf(p + 1, " %*c %d", &ppid) == 1 && ppid == self) {
			kill(-(pid_t)pid, SIGKILL);
			kill((pid_t)pid, SIGKILL);
		}
	}
	closedir(d);
}

static void *signal_main(void *arg)
{
	struct agent *a = arg;
	char c;

	for (;;) {
		ssize_t n = read(sig_pipe[0], &c, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		if (!stopping) {
			log_info("%s: stopping after the current step (send it again to abort now)",
				 strsignal(c));
			pthread_mutex_lock(&a->mu);
			stopping = 1;
			pthread_cond_broadcast(&a->wake);
			pthread_mutex_unlock(&a->mu);
		} else {
			log_warn("%s again: aborting the current step", strsignal(c));
			kill_children();
			_exit(1);
		}
	}
}

static void deadline_after(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* Sleeps ms, or less when the agent is asked to stop. 0 when it was not. */
static int nap(struct agent *a, long ms)
{
	struct timespec until;

	deadline_after(&until, ms);
	pthread_mutex_lock(&a->mu);
	while (!stopping && pthread_cond_timedwait(&a->wake, &a->mu, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&a->mu);
	return stopping ? -1 : 0;
}

/* Doubles a back-off, with some jitter so that agents do not move in step. */
static long backoff_next(long ms)
{
	ms *= 2;
	if (ms > BACKOFF_MAX_MS)
		ms = BACKOFF_MAX_MS;
	return ms - ms / 8 + random() % (ms / 4 + 1);
}

/* --- heartbeats ------------------------------------------------------------ */

static int spool_name(long long *id, long long *attempt, const char *name);

/* The max of held tasks a heartbeat names (the coordinator's COORD_MAX_HELD). */
#define HELD_MAX 64

/*
 * The results in the spool, not uploaded yet, as the heartbeat names them
 * ([{"task", "attempt"}], but the task in hand): the coordinator keeps
 * their leases while it cannot be reached or the upload waits its turn,
 * so a result spooled through an outage longer than the lease still lands.
 */
static json_t *spool_held(struct agent *a, long long in_hand)
{
	json_t *held = json_array();
	DIR *d = opendir(a->spool);
	struct dirent *e;

	while (d && (e = readdir(d)) && json_array_size(held) < HELD_MAX) {
		long long id, attempt;

		if (spool_name(&id, &attempt, e->d_name) && id != in_hand && attempt > 0)
			json_array_append_new(held, json_pack("{s:I, s:I}", "task", (json_int_t)id,
							      "attempt", (json_int_t)attempt));
	}
	if (d)
		closedir(d);
	return held;
}

static void *heartbeat_main(void *arg)
{
	struct agent *a = arg;
	char *path = xasprintf("/api/v1/agents/%s/heartbeat", a->conf.name);
	struct note n = { "" };
	struct timespec until;

	pthread_mutex_lock(&a->mu);
	while (!a->quit) {
		long long task, attempt;
		json_t *body, *held, *reply = NULL;
		long status = 0, timeout;
		int rc;

		deadline_after(&until, (long)a->hb_interval * 1000);
		while (!a->quit && !a->beat_now && pthread_cond_timedwait(&a->wake, &a->mu, &until) != ETIMEDOUT)
			;
		if (a->quit)
			break;
		a->beat_now = 0;
		task = a->task;
		attempt = a->attempt;
		timeout = a->hb_interval * 2L < 10 ? 10 : a->hb_interval * 2L;
		body = task ? json_pack("{s:I, s:I}", "task", (json_int_t)task,
					"attempt", (json_int_t)attempt)
			    : json_object();
		if (task && a->phase) {
			/* Coarse steps: a watcher sees a line per change, not one per heartbeat. */
			long s = (long)((now_ms() - a->phase_t0) / PROGRESS_EVERY_MS * PROGRESS_EVERY_MS / 1000);
			char *text = a->files >= 10 ?
				     xasprintf("%s, %ld:%02ld, %ld files compiled", a->phase, s / 60, s % 60,
					       a->files / 10 * 10) :
				     a->detail[0] ? xasprintf("%s, %ld:%02ld, %s", a->phase, s / 60, s % 60, a->detail) :
				     xasprintf("%s, %ld:%02ld", a->phase, s / 60, s % 60);

			json_object_set_new(body, "progress", json_string(text));
			free(text);
		}
		pthread_mutex_unlock(&a->mu);

		held = spool_held(a, task);
		if (json_array_size(held))
			json_object_set_new(body, "held", held);
		else
			json_decref(held);
		rc = client_request(&reply, &status, a->hb_cl, "POST", path, body, timeout);
		if (rc < 0) {
			char *msg = xasprintf("heartbeat: %s", err_msg());

			note(&n, LOG_WARN, msg);
			free(msg);
		} else if (status != 200) {
			char *msg = xasprintf("heartbeat: HTTP %ld: %s", status,
					      client_error_text(reply, status));

			note(&n, LOG_WARN, msg);
			free(msg);
		} else {
			note_clear(&n, "heartbeat: coordinator answers again");
			if (task && json_is_true(json_object_get(reply, "cancel"))) {
				pthread_mutex_lock(&a->mu);
				if (a->task == task && a->attempt == attempt && !a->cancel) {
					a->cancel = 1;
					log_warn("task %lld: the coordinator cancelled it (job ended or lease lost)",
						 task);
				}
				pthread_mutex_unlock(&a->mu);
			}
		}
		json_decref(body);
		json_decref(reply);
		pthread_mutex_lock(&a->mu);
	}
	pthread_mutex_unlock(&a->mu);
	free(path);
	return NULL;
}

static void set_current(struct agent *a, long long task, long long attempt)
{
	pthread_mutex_lock(&a->mu);
	a->task = task;
	a->attempt = attempt;
	a->cancel = 0;
	a->phase = NULL;
	a->files = 0;
	pthread_mutex_unlock(&a->mu);
}

/* What the task in hand does now ("building the kernel"); a static string. */
static void set_phase(struct agent *a, const char *phase)
{
	pthread_mutex_lock(&a->mu);
	a->phase = phase;
	a->phase_t0 = now_ms();
	a->files = 0;
	a->detail[0] = '\0';
	pthread_mutex_unlock(&a->mu);
}

/* gitx's progress hook: a first clone of a kernel takes minutes. */
static void git_progress(void *arg, const char *text)
{
	struct agent *a = arg;

	pthread_mutex_lock(&a->mu);
	snprintf(a->detail, sizeof(a->detail), "%s", text);
	pthread_mutex_unlock(&a->mu);
}


/* At a step boundary: should the task in hand be dropped? */
static int abandoned(struct agent *a, const struct task *t)
{
	int cancel;

	pthread_mutex_lock(&a->mu);
	cancel = a->cancel;
	pthread_mutex_unlock(&a->mu);
	if (cancel) {
		log_warn("task %lld: abandoned, not uploaded", t->id);
		return 1;
	}
	if (stopping) {
		log_info("task %lld: interrupted, not uploaded (its lease will expire)", t->id);
		return 1;
	}
	return 0;
}

/* --- the coordinator --------------------------------------------------------- */

/* Enrols with the enrolment token once: the coordinator answers with this agent's own, kept in path. */
static int enrol(struct agent *a, char **out, const char *path)
{
	struct client *c = client_new(a->conf.coordinator);
	json_t *body = json_pack("{s:s}", "name", a->conf.name);
	long backoff = BACKOFF_FIRST_MS;
	char *etok = NULL;
	int rc = token_read_file(&etok, a->conf.enrol_token_file);

	*out = NULL;
	if (rc < 0)
		fatal("enrol_token_file: %s", err_msg());
	client_set_token(c, etok);
	client_set_ca_file(c, a->conf.ca_file);
	while (!stopping) {
		json_t *reply = NULL;
		long status = 0;
		const char *tok;

		rc = client_request(&reply, &status, c, "POST", "/api/v1/agents/enrol", body, REQUEST_TIMEOUT_S);
		tok = json_string_value(json_object_get(reply, "token"));
		if (rc == 0 && status == 201 && tok) {
			char *line = xasprintf("%s\n", tok);

			if (token_write_file(path, line, strlen(line)) < 0)
				fatal("enrolled as '%s', but cannot keep the token: %s (an admin must revoke it: "
				      "bisectctl token list, token revoke ID)", a->conf.name, err_msg());
			free(line);
			log_info("enrolled as '%s' with %s: its token is in %s", a->conf.name, a->conf.coordinator, path);
			*out = xstrdup(tok);
			json_decref(reply);
			break;
		}
		if (rc == 0 && status >= 400 && status < 500 && status != 429)
			fatal("enrolling as '%s' with %s: HTTP %ld: %s", a->conf.name, a->conf.coordinator, status,
			      client_error_text(reply, status));
		log_warn("enrol: %s; retrying", rc ? err_msg() : client_error_text(reply, status));
		json_decref(reply);
		nap(a, backoff);
		backoff = backoff_next(backoff);
	}
	json_decref(body);
	free(etok);
	client_free(c);
	return *out ? 0 : ERR_FAIL;
}

/*
 * The token this agent sends: token_file when the config names one, else
 * workdir/agent.token, made by enrolling (enrol_token_file) the first
 * time. Neither: no token (a coordinator with auth: none).
 */
static int load_token(struct agent *a)
{
	char *path = a->conf.token_file ? xstrdup(a->conf.token_file) : xasprintf("%s/agent.token", a->conf.workdir);
	char *tok = NULL;
	int rc = token_read_file(&tok, path);

	if (rc == ERR_NOTFOUND && !a->conf.token_file && a->conf.enrol_token_file)
		rc = enrol(a, &tok, path);
	else if (rc == ERR_NOTFOUND && !a->conf.token_file) {
		log_info("no token (%s) and no enrol_token_file: calling the coordinator without one", path);
		rc = 0;
	} else if (rc < 0) {
		fatal("%s", err_msg());
	}
	if (tok) {
		client_set_token(a->cl, tok);
		client_set_token(a->hb_cl, tok);
	}
	free(tok);
	free(path);
	return rc;
}

/* Registers, retrying while the coordinator cannot be reached. */
static int register_agent(struct agent *a)
{
	json_t *body = json_pack("{s:s, s:[]}", "name", a->conf.name, "labels");
	struct note n = { "" };
	long backoff = BACKOFF_FIRST_MS;
	int rc = ERR_FAIL;

	for (char **l = a->conf.labels; l && *l; l++)
		json_array_append_new(json_object_get(body, "labels"), json_string(*l));
	while (!stopping) {
		json_t *reply = NULL;
		long status = 0;
		char *msg;

		if (client_request(&reply, &status, a->cl, "POST", "/api/v1/agents/register",
				   body, REQUEST_TIMEOUT_S) == 0 && status == 200) {
			json_t *hbv = json_object_get(reply, "heartbeat");
			json_t *lv = json_object_get(reply, "lease");
			long long hb = json_is_integer(hbv) ? json_integer_value(hbv) : 0;
			long long lease = json_is_integer(lv) ? json_integer_value(lv) : 0;

			pthread_mutex_lock(&a->mu);
			a->hb_interval = a->conf.heartbeat > 0 ? a->conf.heartbeat : 5;
			if (hb > 0 && hb < a->hb_interval)
				a->hb_interval = (int)hb;
			if (lease > 0 && a->hb_interval * 2 > lease)
				log_warn("heartbeat every %d s is too slow for a lease of %lld s",
					 a->hb_interval, lease);
			pthread_cond_broadcast(&a->wake);
			pthread_mutex_unlock(&a->mu);
			note_clear(&n, NULL);
			log_info("registered as '%s' with %s (heartbeat %d s, lease %lld s)",
				 a->conf.name, a->conf.coordinator, a->hb_interval, lease);
			json_decref(reply);
			rc = 0;
			break;
		}
		if (status)
			msg = xasprintf("register: HTTP %ld: %s; retrying", status,
					client_error_text(reply, status));
		else
			msg = xasprintf("register: %s; retrying", err_msg());
		note(&n, status ? LOG_ERROR : LOG_WARN, msg);
		free(msg);
		json_decref(reply);
		nap(a, backoff);
		backoff = backoff_next(backoff);
	}
	json_decref(body);
	return rc;
}

/*
 * Posts a result, retrying transport errors and 5xx up to tries times
 * (the upload is idempotent on the server).
 */
static int upload(struct agent *a, long long id, json_t *body, int tries)
{
	char *path = xasprintf("/api/v1/tasks/%lld/result", id);
	json_int_t attempt = json_integer_value(json_object_get(body, "attempt"));
	long backoff = BACKOFF_FIRST_MS;
	int ret = UP_KEEP;

	for (int i = 1; ; i++) {
		json_t *reply = NULL;
		long status = 0;
		int rc = client_request(&reply, &status, a->cl, "POST", path, body, REQUEST_TIMEOUT_S);
		char *why;

		if (rc == 0 && status >= 200 && status < 300) {
			log_info("task %lld attempt %lld: result uploaded%s", id, (long long)attempt,
				 json_is_true(json_object_get(reply, "duplicate")) ? " (duplicate)" : "");
			ret = UP_DONE;
		} else if (rc == 0 && status == 409) {
			log_warn("task %lld attempt %lld: result refused, the attempt is no longer ours: %s",
				 id, (long long)attempt, client_error_text(reply, status));
			ret = UP_DONE;
		} else if (rc == 0 && status >= 400 && status < 500 && status != 408 && status != 429) {
			log_error("task %lld attempt %lld: result rejected: HTTP %ld: %s",
				  id, (long long)attempt, status, client_error_text(reply, status));
			ret = UP_REJECTED;
		}
		if (ret != UP_KEEP) {
			json_decref(reply);
			break;
		}
		why = rc == 0 ? xasprintf("HTTP %ld: %s", status, client_error_text(reply, status))
			      : xstrdup(err_msg());
		json_decref(reply);
		if (i >= tries || stopping) {
			/* A single try is the claim loop's: it says so once per change. */
			log_msg(tries > 1 ? LOG_WARN : LOG_DEBUG,
				"task %lld attempt %lld: upload failed (%s); kept in the spool",
				id, (long long)attempt, why);
			err_set(ERR_FAIL, "task %lld: %s", id, why);
			free(why);
			break;
		}
		log_warn("task %lld attempt %lld: upload failed (%s); retrying", id,
			 (long long)attempt, why);
		free(why);
		if (nap(a, backoff) < 0)
			break;
		backoff = backoff_next(backoff);
	}
	free(path);
	return ret;
}

/* Parses "task-<id>-<attempt>.json"; 0 when name is not a spool file. */
static int spool_name(long long *id, long long *attempt, const char *name)
{
	int end = 0;

	return sscanf(name, "task-%lld-%lld.json%n", id, attempt, &end) == 2 &&
	       end > 0 && name[end] == '\0' && *id > 0;
}

static void spool_reject(const char *path)
{
	char *to = xasprintf("%s.rejected", path);

	if (rename(path, to) < 0)
		log_error("rename %s: %s", path, strerror(errno));
	free(to);
}

/*
 * Uploads the results left in the spool. tries: attempts per file. Stops at
 * the first one that cannot be delivered; 0 when the spool is empty.
 */
static int spool_flush(struct agent *a, int tries)
{
	DIR *d = opendir(a->spool);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return err_set(ERR_FAIL, "%s: %s", a->spool, strerror(errno));
	while (rc == 0 && !stopping && (e = readdir(d))) {
		long long id, attempt;
		char *path, *text = NULL;
		size_t len = 0;
		json_t *body;

		if (strstr(e->d_name, ".json.tmp.")) {
			/* A write that a crash interrupted; its result was never uploaded. */
			path = xasprintf("%s/%s", a->spool, e->d_name);
			unlink(path);
			free(path);
			continue;
		}
		if (!spool_name(&id, &attempt, e->d_name))
			continue;
		path = xasprintf("%s/%s", a->spool, e->d_name);
		body = file_read(&text, &len, path, SPOOL_MAX) == 0 ? json_loadb(text, len, 0, NULL) : NULL;
		if (!json_is_object(body)) {
			log_error("spool: %s is unreadable; set aside", path);
			spool_reject(path);
			json_decref(body);
			free(text);
			free(path);
			continue;
		}
		log_msg(tries > 1 ? LOG_INFO : LOG_DEBUG,
			"spool: uploading the result of task %lld attempt %lld", id, attempt);
		switch (upload(a, id, body, tries)) {
		case UP_DONE:
			unlink(path);
			break;
		case UP_REJECTED:
			spool_reject(path);
			break;
		default:
			rc = ERR_FAIL;
		}
		json_decref(body);
		free(text);
		free(path);
	}
	closedir(d);
	return rc;
}

/* --- running a task ---------------------------------------------------------- */

static void result_set(struct result *r, const char *status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void result_set(struct result *r, const char *status, const char *fmt, ...)
{
	va_list ap;

	r->status = status;
	free(r->error);
	va_start(ap, fmt);
	if (vasprintf(&r->error, fmt, ap) < 0)
		r->error = NULL;
	va_end(ap);
}

static void result_release(struct result *r)
{
	free(r->error);
	free(r->log_tail);
	free(r->profile);
	json_decref(r->samples);
	memset(r, 0, sizeof(*r));
}

/*
 * A JSON string of text that came from a command: control characters other
 * than newline and tab become spaces (keep_lines: newlines too), and when
 * it is not valid UTF-8, every non-ASCII byte becomes '?'.
 */
static json_t *text_json(const char *s, int keep_lines)
{
	char *c = xstrdup(s);
	json_t *j;

	for (unsigned char *p = (unsigned char *)c; *p; p++)
		if ((*p < 0x20 && !(keep_lines && (*p == '\n' || *p == '\t'))) || *p == 0x7f)
			*p = ' ';
	j = json_string(c);
	if (!j) {
		for (unsigned char *p = (unsigned char *)c; *p; p++)
			if (*p >= 0x80)
				*p = '?';
		j = json_string(c);
	}
	free(c);
	return j;
}

/* Is a program without a '/' in PATH? One with a '/' may be built yet. */
/*
 * Host locks. The measure lock is shared while building and exclusive
 * while measuring; the build lock is exclusive while building.
 */
static void host_lock(int fd, const char *what, int op, const struct task *t)
{
	int64_t t0 = now_ms();

	if (fd < 0)
		return;
	while (flock(fd, op) < 0) {
		if (errno != EINTR) {
			log_warn("flock %s: %s", what, strerror(errno));
			return;
		}
	}
	if (op != LOCK_UN && now_ms() - t0 >= 1000)
		log_info("task %lld: waited %.1f s for the %s", t->id, (double)(now_ms() - t0) / 1000, what);
}

static void measure_lock(struct agent *a, int op, const struct task *t)
{
	host_lock(a->lock_fd, "measure lock", op, t);
}

/* kbuild's serialize callback: the build lock around configuring and building. */
struct build_turn {
	struct agent *a;
	const struct task *t;
};

static void build_turn(void *arg, int on)
{
	struct build_turn *bt = arg;

	if (on)
		set_phase(bt->a, "waiting for the build lock");
	host_lock(bt->a->build_fd, "build lock", on ? LOCK_EX : LOCK_UN, bt->t);
	if (on)
		set_phase(bt->a, "building the kernel");
}

static void kbuild_progress(void *arg, long files)
{
	struct build_turn *bt = arg;

	pthread_mutex_lock(&bt->a->mu);
	bt->a->files = files;
	pthread_mutex_unlock(&bt->a->mu);
}

static void write_build_log(struct agent *a, const struct task *t, const char *const *argv,
			    const struct run_result *res)
{
	struct sbuf sb = SBUF_INIT;
	char *path = xasprintf("%s/task-%lld-build.log", a->logs, t->id);
	char how[64];

	sbuf_addf(&sb, "# task %lld attempt %lld, commit %s of %s\n# $", t->id, t->attempt,
		  t->commit, t->repo_name);
	for (const char *const *p = argv; *p; p++)
		sbuf_addf(&sb, " %s", *p);
	sbuf_addf(&sb, "\n# stdout%s:\n", res->out_truncated ? " (its start was dropped)" : "");
	sbuf_add(&sb, res->out, res->out_len);
	if (res->out_len && res->out[res->out_len - 1] != '\n')
		sbuf_adds(&sb, "\n");
	sbuf_addf(&sb, "# stderr%s:\n", res->err_truncated ? " (its start was dropped)" : "");
	sbuf_add(&sb, res->err, res->err_len);
	if (res->err_len && res->err[res->err_len - 1] != '\n')
		sbuf_adds(&sb, "\n");
	sbuf_addf(&sb, "# %s after %.1f s\n", run_describe(res, how, sizeof(how)),
		  (double)res->wall_ms / 1000);
	if (file_write_atomic(path, sb.buf, sb.len) < 0)
		log_warn("task %lld: cannot keep the build log: %s", t->id, err_msg());
	sbuf_release(&sb);
	free(path);
}

/* Builds the work tree; on failure fills r and returns -1. */
static int build(struct agent *a, const struct task *t, const char *dir, struct result *r)
{
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	const char **argv = NULL;
	json_t *b = json_object_get(t->def, "build");
	int64_t t0;
	int rc = 0;

	/* No build: the coordinator sends [] for a workload without one (a TRex run, a plain command). */
	if (!b || json_is_null(b) || (json_is_array(b) && json_array_size(b) == 0))
		return 0;
	if (workload_def_argv(&argv, t->def, "build") < 0) {
		result_set(r, "failed", "%s", err_msg());
		return -1;
	}
	if (!in_path(argv[0])) {
		result_set(r, "failed", "build program '%s' not found in PATH on this agent", argv[0]);
		free(argv);
		return -1;
	}
	o.argv = argv;
	o.cwd = dir;
	o.timeout_ms = (int)t->build_timeout * 1000;
	o.max_output = BUILD_OUTPUT_MAX;
	log_info("task %lld: building", t->id);
	set_phase(a, "waiting for the build lock");
	host_lock(a->build_fd, "build lock", LOCK_EX, t);
	set_phase(a, "building");
	t0 = now_ms();
	if (run_cmd(&res, &o) < 0) {
		host_lock(a->build_fd, "build lock", LOCK_UN, t);
		result_set(r, "failed", "cannot start the build: %s", err_msg());
		free(argv);
		return -1;
	}
	r->build_s = (double)(now_ms() - t0) / 1000;
	host_lock(a->build_fd, "build lock", LOCK_UN, t);
	write_build_log(a, t, argv, &res);
	if (!run_ok(&res)) {
		struct sbuf all = SBUF_INIT;
		char how[64];

		result_set(r, "skipped", "build failed: %s", run_describe(&res, how, sizeof(how)));
		sbuf_add(&all, res.out, res.out_len);
		if (res.out_len && res.out[res.out_len - 1] != '\n' && res.err_len)
			sbuf_adds(&all, "\n");
		sbuf_add(&all, res.err, res.err_len);
		r->log_tail = xstrdup(run_tail(all.buf ? all.buf : "", LOG_TAIL_MAX));
		sbuf_release(&all);
		log_warn("task %lld: %s (log in %s/task-%lld-build.log)", t->id, r->error,
			 a->logs, t->id);
		rc = -1;
	} else {
		log_info("task %lld: built in %.1f s", t->id, r->build_s);
	}
	run_result_release(&res);
	free(argv);
	return rc;
}

/*
 * Builds the kernel of a workload with a "kernel" object (kbuild.h); on
 * success *image_dir is the directory kernel_image is relative to.
 * On failure fills r and returns -1.
 */
static int kernel_build(struct agent *a, const struct task *t, const char *dir, struct result *r,
			char **image_dir)
{
	struct build_turn bt = { a, t };
	struct kbuild k = { 0 };
	struct kbuild_result kr;
	char tree[41], *outdir, *path;

	if (worktree_tree_id(tree, dir, t->commit) < 0) {
		result_set(r, "failed", "cannot read the tree of %.12s: %s", t->commit, err_msg());
		return -1;
	}
	outdir = xasprintf("%s/%s", a->kbuild, t->repo_name);
	k.kernel = json_object_get(t->def, "kernel");
	k.kernel_image = json_string_value(json_object_get(t->def, "kernel_image")) ?: "arch/x86/boot/bzImage";
	k.srcdir = dir;
	k.tree_id = tree;
	k.outdir = outdir;
	k.cachedir = a->kcache;
	k.cache_max = a->conf.kcache_max;
	k.ccache_base = a->conf.workdir;
	k.jobs = a->conf.build_jobs;
	k.timeout_ms = (int)t->build_timeout * 1000;
	k.serialize = build_turn;
	k.progress = kbuild_progress;
	k.arg = &bt;
	log_info("task %lld: kernel of tree %.12s", t->id, tree);
	kbuild_run(&kr, &k);
	if (kr.log && !kr.cached) {
		path = xasprintf("%s/task-%lld-build.log", a->logs, t->id);
		if (file_write_atomic(path, kr.log, strlen(kr.log)) < 0)
			log_warn("task %lld: cannot keep the build log: %s", t->id, err_msg());
		free(path);
	}
	free(outdir);
	if (strcmp(kr.status, "ok")) {
		result_set(r, kr.status, "%s", kr.error);
		r->log_tail = kr.tail;
		kr.tail = NULL;
		log_warn("task %lld: %s (log in %s/task-%lld-build.log)", t->id, kr.error, a->logs, t->id);
		kbuild_result_release(&kr);
		return -1;
	}
	if (kr.cached) {
		log_info("task %lld: kernel %s is in the build cache", t->id, kr.key);
	} else {
		r->build_s = kr.seconds;
		log_info("task %lld: kernel %s built in %.1f s (%ld files compiled)", t->id, kr.key,
			 kr.seconds, kr.files);
	}
	*image_dir = kr.image_dir;
	kr.image_dir = NULL;
	kbuild_result_release(&kr);
	return 0;
}

static json_t *sample_json(struct run_sample *s)
{
	json_t *j = json_pack("{s:f, s:o}", "value", s->value > 0 ? s->value : 0.0,
			      "unit", text_json(s->unit, 0));

	if (s->value <= 0)
		json_object_set_new(j, "error", text_json(s->error[0] ? s->error : "run failed", 0));
	if (json_is_object(s->extra))
		json_object_update_missing(j, s->extra);
	json_decref(s->extra);
	s->extra = NULL;
	return j;
}

/* Keeps what a boot method's console showed beside the build log. */
static void keep_console(struct agent *a, const struct task *t, const char *console)
{
	char *path;

	if (!console)
		return;
	path = xasprintf("%s/task-%lld-console.log", a->logs, t->id);
	if (file_write_atomic(path, console, strlen(console)) < 0)
		log_warn("task %lld: cannot keep the console log: %s", t->id, err_msg());
	free(path);
}

/*
 * A profile task (docs/REPORTS.md, "Profiles"): the boot method must record
 * its runs under perf, and perf must be here. *data: where the runs are
 * recorded, beside the build log (kept, for perf report by hand). -1 with
 * r failed when it cannot be done.
 */
static int profile_prepare(struct agent *a, const struct task *t, struct result *r, char **data)
{
	int perf = boot_method_profiles(t->boot);

	if (!perf) {
		result_set(r, "failed", "boot %s cannot record perf profiles (boot %s can)", t->boot,
			   boot_profile_methods);
		return -1;
	}
	/* boot ssh: the device's perf records and reports (and says so when it is not there). */
	if (perf == BOOT_PROFILE_AGENT && !in_path("perf")) {
		result_set(r, "failed", "perf not found in PATH on this agent: a profile task needs it "
			   "(Debian: linux-perf)");
		return -1;
	}
	*data = xasprintf("%s/task-%lld-%s.perf.data", a->logs, t->id, t->profile);
	/* Carried on after a kexec, the runs the journal holds were recorded in this boot before a restart. */
	if (!t->resumed)
		unlink(*data);
	return 0;
}

/* A perf report (len bytes) into r->profile, its head cut to what the coordinator takes; or r failed. */
static void profile_take(const struct task *t, struct result *r, const char *text, size_t len, const char *said)
{
	struct perf_profile p = PERF_PROFILE_INIT;

	/* The head: perf sorts the rows by share. */
	if (len > PERFREPORT_MAX_TEXT)
		len = PERFREPORT_MAX_TEXT;
	while (len > 0 && text[len - 1] != '\n')
		len--;
	if (perfreport_parse(&p, text, len) < 0) {
		result_set(r, "failed", "perf recorded nothing to profile: %s%s%s", err_msg(),
			   said && *said ? "; perf said: " : "", said ? said : "");
		return;
	}
	log_info("task %lld: %s's profile, %zu symbols, %lld samples of %s", t->id, t->profile, p.n, p.samples,
		 p.event);
	r->profile = xstrndup(text, len);
	perfreport_release(&p);
}

/* perf report of the recorded runs, here, into r->profile; or r failed. */
static void profile_report(const struct task *t, struct result *r, const char *data)
{
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	const char **argv = perfreport_report_argv(data);
	char how[64];

	o.argv = argv;
	o.timeout_ms = 300 * 1000;
	o.max_output = 4 * PERFREPORT_MAX_TEXT;
	if (run_cmd(&res, &o) < 0) {
		result_set(r, "failed", "cannot run perf report: %s", err_msg());
		free(argv);
		return;
	}
	free(argv);
	if (!run_ok(&res)) {
		result_set(r, "failed", "perf report of the runs failed (%s): %s", run_describe(&res, how, sizeof(how)),
			   res.err ? run_tail(res.err, 300) : "");
		goto out;
	}
	profile_take(t, r, res.out, res.out_len, res.err ? run_tail(res.err, 300) : NULL);
out:
	run_result_release(&res);
}

/*
 * Runs the task into r. 0 when r is to be uploaded; ERR_CONFLICT when the
 * task was abandoned (cancelled, or the agent is stopping).
 */
static int run_task(struct agent *a, const struct task *t, struct result *r)
{
	const struct workload_ops *wl = workload_find(t->type);
	const struct boot_ops *boot = boot_find(t->boot);
	char *dir = xasprintf("%s/%s", a->repos, t->repo_name), *image_dir = NULL;
	char *scratch = xasprintf("%s/%s", a->conf.workdir, t->boot), *perf_data = NULL;
	struct boot_task bt = { t->def, wl, dir, scratch, (int)t->runs, a->conf.cpu, NULL, t->claim };
	struct boot_result br = { 0 };
	void *session = NULL;
	int started = 0, rc = 0;
	int kernel = json_object_get(t->def, "kernel") != NULL;
	int64_t t0;

	r->samples = json_array();
	/* Checked before the long steps, reported as those steps would. */
	if (!wl) {
		result_set(r, "failed", "unknown workload type '%s' on this agent", t->type);
		goto out;
	}
	if (!boot) {
		result_set(r, "skipped", "unknown boot method '%s'", t->boot);
		goto out;
	}
	if (!(wl->places & boot_method_find(t->boot)->places)) {
		result_set(r, "failed", "boot %s does not run workloads of type %s", boot->name, wl->name);
		goto out;
	}
	if (workload_check_msg(wl, t->def) < 0 || (boot->prepare && boot->prepare(&bt) < 0)) {
		result_set(r, "failed", "%s", err_msg());
		goto out;
	}
	if (t->profile && profile_prepare(a, t, r, &perf_data) < 0)
		goto out;
	bt.perf_data = perf_data;
	/* Built and booted before the kexec: its start() finds the journal. */
	if (t->resumed)
		goto boot;

	/* Checkout and build hold the lock shared: no neighbour measures meanwhile. */
	if (abandoned(a, t)) {
		rc = ERR_CONFLICT;
		goto out;
	}
	measure_lock(a, LOCK_SH, t);
	set_phase(a, "checking out");
	log_info("task %lld: checking out %.12s of %s", t->id, t->commit, t->repo_name);
	gitx_set_progress(git_progress, a);
	rc = worktree_checkout(dir, t->repo_url, t->commit);
	gitx_set_progress(NULL, NULL);
	if (rc < 0) {
		result_set(r, "failed", "checkout of %.12s failed: %s", t->commit, err_msg());
		measure_lock(a, LOCK_UN, t);
		rc = 0;
		goto out;
	}
	if (abandoned(a, t)) {
		measure_lock(a, LOCK_UN, t);
		rc = ERR_CONFLICT;
		goto out;
	}
	if (kernel ? kernel_build(a, t, dir, r, &image_dir) < 0 : build(a, t, dir, r) < 0) {
		measure_lock(a, LOCK_UN, t);
		goto out;
	}
	measure_lock(a, LOCK_UN, t);
	if (image_dir)
		bt.srcdir = image_dir;

	/* Boot once, run N times, stop. */
boot:
	if (abandoned(a, t)) {
		rc = ERR_CONFLICT;
		goto out;
	}
	if (boot->what) {
		set_phase(a, boot->what);
		log_info("task %lld: boot %s of %s for %lld run%s", t->id, boot->name,
			 json_string_value(json_object_get(t->def, "kernel_image")) ?: "the build",
			 t->runs, t->runs == 1 ? "" : "s");
	}
	measure_lock(a, LOCK_EX, t);
	t0 = now_ms();
	rc = boot->start(&session, &br, &bt);
	measure_lock(a, LOCK_UN, t);
	/* A method that measured in start() says how long; else the wall time counts. */
	r->run_s += br.run_s > 0 ? br.run_s : (double)(now_ms() - t0) / 1000;
	keep_console(a, t, br.console);
	if (rc < 0) {
		result_set(r, br.status ? br.status : "failed", "%s", br.error);
		if (br.log_tail)
			r->log_tail = xstrdup(br.log_tail);
		rc = 0;
		goto out;
	}
	started = 1;
	if (br.accel)
		log_info("task %lld: guest ran under %s in %.1f s", t->id, br.accel, br.run_s);

	set_phase(a, "running the workload");
	for (long long i = 1; i <= t->runs; i++) {
		struct run_sample s;

		pthread_mutex_lock(&a->mu);
		snprintf(a->detail, sizeof(a->detail), "run %lld of %lld", i, t->runs);
		pthread_mutex_unlock(&a->mu);
		if (abandoned(a, t)) {
			rc = ERR_CONFLICT;
			goto out;
		}
		measure_lock(a, LOCK_EX, t);
		t0 = now_ms();
		if (boot->run(&s, session, &bt, (int)i) < 0) {
			memset(&s, 0, sizeof(s));
			snprintf(s.unit, sizeof(s.unit), "%s",
				 json_string_value(json_object_get(t->def, "unit")) ?: "ops/s");
			snprintf(s.error, sizeof(s.error), "%s", err_msg());
		}
		if (br.run_s <= 0)
			r->run_s += (double)(now_ms() - t0) / 1000;
		measure_lock(a, LOCK_UN, t);
		if (s.value > 0)
			log_info("task %lld: run %lld/%lld: %g %s", t->id, i, t->runs, s.value, s.unit);
		else
			log_warn("task %lld: run %lld/%lld failed: %s", t->id, i, t->runs, s.error);
		json_array_append_new(r->samples, sample_json(&s));
	}
	r->status = "ok";
	/*
	 * A guest's report came with its console, a device's from its own
	 * perf (boot_profile_text()); on the agent's own machine perf reports
	 * here.
	 */
	if (perf_data) {
		char *text = NULL;
		int prc = boot_profile_text(&text, boot, session, &bt, &br);

		if (prc == 1)
			profile_report(t, r, perf_data);
		else if (prc < 0)
			result_set(r, "failed", "%s", err_msg());
		else
			profile_take(t, r, text, strlen(text), NULL);
		free(text);
	}
out:
	if (started)
		boot->stop(session, &bt);
	boot_result_release(&br);
	free(perf_data);
	free(image_dir);
	free(scratch);
	free(dir);
	return rc;
}

/* Reads the claim reply (taskwire.h); the id and attempt first, so that the rest can be reported. */
static int task_parse(struct task *t, json_t *reply)
{
	struct task_wire w;
	int rc;

	memset(t, 0, sizeof(*t));
	rc = taskwire_decode(&w, reply);
	t->id = w.task;
	t->attempt = w.attempt;
	if (rc < 0)
		return rc;
	t->runs = w.runs;
	t->commit = w.commit;
	t->repo_name = w.repo_name;
	t->repo_url = w.repo_url;
	t->type = w.type;
	t->boot = w.boot;
	t->build_timeout = w.build_timeout;
	t->def = w.workload;
	t->profile = w.profile;
	t->claim = reply;
	return 0;
}

static json_t *result_json(struct agent *a, const struct task *t, struct result *r)
{
	json_t *j;

	if (!r->samples)
		r->samples = json_array();
	j = json_pack("{s:s, s:I, s:s, s:O, s:f, s:f}",
			      "agent", a->conf.name, "attempt", (json_int_t)t->attempt,
			      "status", r->status,
			      "samples", r->samples,
			      "build_seconds", (double)(long long)(r->build_s * 1000) / 1000,
			      "run_seconds", (double)(long long)(r->run_s * 1000) / 1000);

	json_object_set_new(j, "error", r->error ? text_json(r->error, 0) : json_null());
	json_object_set_new(j, "log_tail", r->log_tail ? text_json(r->log_tail, 1) : json_null());
	if (r->profile)
		json_object_set_new(j, "profile", json_pack("{s:o}", "report", text_json(r->profile, 1)));
	return j;
}

/* Runs a claimed task (resumed: one the kexec journal carried over) and delivers its result through the spool. */
static void handle_task(struct agent *a, json_t *reply, int resumed)
{
	struct task t;
	struct result r = { 0 };
	json_t *body = NULL;
	char *path = NULL, *text = NULL;
	int64_t t0 = now_ms();

	if (task_parse(&t, reply) < 0) {
		if (!t.id || !t.attempt) {
			log_error("claim: unusable task: %s", err_msg());
			return;
		}
		result_set(&r, "failed", "agent cannot use the task: %s", err_msg());
		log_error("task %lld: %s", t.id, r.error);
	}
	t.resumed = resumed;
	set_current(a, t.id, t.attempt);
	if (resumed) {
		/* Its lease ran down while the machine rebooted: say at once that it is still ours. */
		pthread_mutex_lock(&a->mu);
		a->beat_now = 1;
		pthread_cond_broadcast(&a->wake);
		pthread_mutex_unlock(&a->mu);
	}
	if (!r.status) {
		log_info("task %lld attempt %lld: job %lld, commit %.12s, %lld run%s of '%s'",
			 t.id, t.attempt, (long long)json_integer_value(json_object_get(reply, "job")),
			 t.commit, t.runs, t.runs == 1 ? "" : "s",
			 json_string_value(json_object_get(t.def, "name")) ?: "?");
		if (run_task(a, &t, &r) < 0)
			goto out;
	}
	/* The work is done: a stop request no longer throws it away, a cancel does. */
	pthread_mutex_lock(&a->mu);
	if (a->cancel) {
		pthread_mutex_unlock(&a->mu);
		log_warn("task %lld: cancelled, not uploaded", t.id);
		goto out;
	}
	pthread_mutex_unlock(&a->mu);
	if (strcmp(r.status, "ok"))
		log_warn("task %lld: %s: %s", t.id, r.status, r.error ? r.error : "");
	else
		log_info("task %lld: %lld run%s in %.1f s", t.id, t.runs, t.runs == 1 ? "" : "s",
			 (double)(now_ms() - t0) / 1000);

	body = result_json(a, &t, &r);
	path = xasprintf("%s/task-%lld-%lld.json", a->spool, t.id, t.attempt);
	text = json_dumps(body, JSON_COMPACT);
	if (!text || file_write_atomic(path, text, strlen(text)) < 0) {
		log_error("task %lld: cannot spool the result: %s", t.id, text ? err_msg() : "encoding");
		free(path);
		path = NULL;
	}
	switch (upload(a, t.id, body, UPLOAD_TRIES)) {
	case UP_DONE:
		if (path)
			unlink(path);
		break;
	case UP_REJECTED:
		if (path)
			spool_reject(path);
		break;
	default:
		break; /* stays in the spool for the next flush */
	}
out:
	set_current(a, 0, 0);
	json_decref(body);
	free(text);
	free(path);
	result_release(&r);
}

/* The loop: register, flush the spool, claim, run, upload, until stopped. */
static void agent_loop(struct agent *a, int registered)
{
	char *path = xasprintf("/api/v1/agents/%s/claim?wait=%d", a->conf.name, a->conf.poll_wait);
	struct note n = { "" };
	long backoff = BACKOFF_FIRST_MS;

	while (!stopping) {
		json_t *reply = NULL;
		long status = 0;
		int rc;
		char *msg = NULL;

		if (!registered) {
			if (register_agent(a) < 0)
				break;
			registered = 1;
		}
		/* Results an earlier run or a failed upload left behind go first. */
		if (spool_flush(a, 1) < 0) {
			msg = xasprintf("spool: results wait for the coordinator (%s); retrying",
					err_msg());
		} else {
			rc = client_request(&reply, &status, a->cl, "POST", path, NULL,
					    a->conf.poll_wait + REQUEST_TIMEOUT_S);
			if (rc == 0 && status == 200 && json_is_object(reply)) {
				note_clear(&n, "claim: coordinator answers again");
				backoff = BACKOFF_FIRST_MS;
				handle_task(a, reply, 0);
			} else if (rc == 0 && status == 204) {
				note_clear(&n, "claim: coordinator answers again");
				backoff = BACKOFF_FIRST_MS;
			} else if (rc == 0 && status == 404) {
				log_warn("claim: the coordinator does not know '%s'; registering again",
					 a->conf.name);
				registered = 0;
			} else if (rc == 0) {
				msg = xasprintf("claim: HTTP %ld: %s; retrying", status,
						client_error_text(reply, status));
			} else {
				msg = xasprintf("claim: %s; retrying", err_msg());
			}
		}
		json_decref(reply);
		if (msg) {
			note(&n, LOG_WARN, msg);
			free(msg);
			nap(a, backoff);
			backoff = backoff_next(backoff);
		}
	}
	free(path);
}

/*
 * A task a kexec left in the journal (agents/boot/kexec.h) is carried on
 * before anything is claimed; then the machine goes back to its
 * known-good kernel. The heartbeats name it from now on: its lease
 * lives on if the reboot took less than the lease.
 */
static void resume_kexec(struct agent *a)
{
	json_t *claim = NULL;

	if (kexec_journal_claim(&claim, a->conf.workdir) < 0)
		fatal("%s", err_msg());
	if (!claim)
		return;
	handle_task(a, claim, 1);
	json_decref(claim);
	if (!stopping && kexec_finish(a->conf.workdir) < 0)
		fatal("kexec: %s", err_msg());
}

/* --- start-up ---------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f, "usage: bisect-agent -f CONFIG [-v]\n"
		   "       bisect-agent -f CONFIG --noreturn | --forget BUILD_ID|all\n"
		   "  -f CONFIG           the agent's YAML configuration (etc/agent.yaml)\n"
		   "  -v                  log debug messages\n"
		   "  --noreturn          list the kernels this machine skips because a kexec into them\n"
		   "                      did not come back (build id, when, why), and exit\n"
		   "  --forget ID|all     forget one of them (or all), so that its next task boots it\n"
		   "                      again, and exit\n");
}

static char *workdir_sub(const char *workdir, const char *sub)
{
	char *p = xasprintf("%s/%s", workdir, sub);

	if (mkdir_p(p, 0755) < 0)
		fatal("%s", err_msg());
	return p;
}

/* A lock file shared by the agents of one host; -1 when none is configured. */
static int open_host_lock(const char *path, const char *key)
{
	char *dir, *slash;
	int fd;

	if (!path)
		return -1;
	dir = xstrdup(path);
	slash = strrchr(dir, '/');
	/* /run/bisect-agent does not survive a reboot. */
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir_p(dir, 0755) < 0)
			fatal("%s: %s", key, err_msg());
	}
	free(dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		fatal("%s %s: %s", key, path, strerror(errno));
	return fd;
}

static void setup(struct agent *a)
{
	char *lock = xasprintf("%s/agent.lock", a->conf.workdir);
	struct sigaction sa;
	pthread_condattr_t ca;

	if (!valid_name(a->conf.name))
		fatal("agent name '%s' must be 1 to %d of A-Z a-z 0-9 . _ -", a->conf.name, MAX_NAME);
	if (mkdir_p(a->conf.workdir, 0755) < 0)
		fatal("%s", err_msg());
	a->workdir_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (a->workdir_fd < 0)
		fatal("%s: %s", lock, strerror(errno));
	if (flock(a->workdir_fd, LOCK_EX | LOCK_NB) < 0)
		fatal("%s: another bisect-agent uses this work dir", a->conf.workdir);
	free(lock);
	a->repos = workdir_sub(a->conf.workdir, "repos");
	a->logs = workdir_sub(a->conf.workdir, "logs");
	a->spool = workdir_sub(a->conf.workdir, "spool");
	a->kbuild = workdir_sub(a->conf.workdir, "kbuild");
	a->kcache = workdir_sub(a->conf.workdir, "kcache");
	a->lock_fd = open_host_lock(a->conf.measure_lock, "measure_lock");
	a->build_fd = open_host_lock(a->conf.build_lock, "build_lock");
	if (a->conf.poll_wait > 60) {
		/* The coordinator holds a claim at most 60 s (docs/API.md). */
		log_warn("poll_wait %d s is more than a claim can wait; using 60 s", a->conf.poll_wait);
		a->conf.poll_wait = 60;
	} else if (a->conf.poll_wait < 0) {
		a->conf.poll_wait = 0;
	}
	a->hb_interval = a->conf.heartbeat > 0 ? a->conf.heartbeat : 5;

	pthread_mutex_init(&a->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->wake, &ca);
	pthread_condattr_destroy(&ca);

	/* A handler, not a blocked mask: commands we start must get signals as usual. */
	if (pipe2(sig_pipe, O_CLOEXEC) < 0)
		fatal("pipe: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	a->cl = client_new(a->conf.coordinator);
	a->hb_cl = client_new(a->conf.coordinator);
	if (!a->cl || !a->hb_cl)
		fatal("cannot set up HTTP to %s", a->conf.coordinator);
	client_set_ca_file(a->cl, a->conf.ca_file);
	client_set_ca_file(a->hb_cl, a->conf.ca_file);
	srandom((unsigned)(getpid() ^ now_ms()));
}

int main(int argc, char **argv)
{
	struct agent a;
	const char *config = NULL;
	pthread_t sig_thread, hb_thread;
	int verbose = 0, opt, level, noreturn = 0;
	const char *forget = NULL;
	static const struct option longopts[] = {
		{ "noreturn", no_argument, NULL, 'N' },
		{ "forget", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};

	memset(&a, 0, sizeof(a));
	log_init("bisect-agent", LOG_INFO);
	while ((opt = getopt_long(argc, argv, "f:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			config = optarg;
			break;
		case 'N':
			noreturn = 1;
			break;
		case 'F':
			forget = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!config || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (conf_agent_load(&a.conf, config) < 0)
		fatal("%s", err_msg());
	if (noreturn || forget) {
		/* Offline: the running agent, if any, reads the records at each kexec task. */
		int n = noreturn && forget ? err_set(ERR_INVALID, "--noreturn and --forget: one at a time")
			: noreturn ? kexec_noreturn_list(a.conf.workdir, stdout)
				   : kexec_noreturn_forget(a.conf.workdir, forget);

		if (n < 0) {
			fprintf(stderr, "bisect-agent: %s\n", err_msg());
			conf_agent_release(&a.conf);
			return err_code() == ERR_INVALID ? 2 : 1;
		}
		if (forget && n == 0)
			printf("forgot nothing: no kernel was remembered as not come back\n");
		else if (forget)
			printf("forgot %d kernel%s: %s\n", n, n == 1 ? "" : "s",
			       n == 1 ? "its next task boots it again" : "their next tasks boot them again");
		conf_agent_release(&a.conf);
		return 0;
	}
	level = verbose ? LOG_DEBUG : log_level_parse(a.conf.log_level ? a.conf.log_level : "info");
	if (level < 0)
		fatal("%s: unknown log_level '%s'", config, a.conf.log_level);
	log_init("bisect-agent", (enum log_level)level);
	setup(&a);

	if (pthread_create(&sig_thread, NULL, signal_main, &a))
		fatal("cannot start a thread");
	pthread_detach(sig_thread);
	log_info("agent '%s' starting: coordinator %s, work dir %s%s%s", a.conf.name,
		 a.conf.coordinator, a.conf.workdir,
		 a.conf.measure_lock ? ", measure lock " : "",
		 a.conf.measure_lock ? a.conf.measure_lock : "");

	if (load_token(&a) == 0 && register_agent(&a) == 0) {
		if (pthread_create(&hb_thread, NULL, heartbeat_main, &a))
			fatal("cannot start a thread");
		resume_kexec(&a);
		/* Nothing lost: what a crash left in the spool goes first. */
		spool_flush(&a, UPLOAD_TRIES);
		agent_loop(&a, 1);
		pthread_mutex_lock(&a.mu);
		a.quit = 1;
		pthread_cond_broadcast(&a.wake);
		pthread_mutex_unlock(&a.mu);
		pthread_join(hb_thread, NULL);
	}
	log_info("agent '%s' stopped", a.conf.name);
	client_free(a.cl);
	client_free(a.hb_cl);
	if (a.lock_fd >= 0)
		close(a.lock_fd);
	if (a.build_fd >= 0)
		close(a.build_fd);
	close(a.workdir_fd);
	free(a.repos);
	free(a.logs);
	free(a.spool);
	free(a.kbuild);
	free(a.kcache);
	conf_agent_release(&a.conf);
	return 0;
}
