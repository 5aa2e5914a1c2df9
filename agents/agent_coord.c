/*
 * agent_coord: the agent and its coordinator. Enrolment and registration,
 * the heartbeat thread (what the task in hand is doing, a cancel), and the
 * results: spooled to disk first, uploaded with retries, none lost.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent_internal.h"
#include "client.h"
#include "err.h"
#include "jsonx.h"
#include "log.h"
#include "token.h"
#include "util.h"

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

void *agent_heartbeat_main(void *arg)
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

		agent_deadline_after(&until, (long)a->hb_interval * 1000);
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

			agent_note(&n, LOG_WARN, msg);
			free(msg);
		} else if (status != 200) {
			char *msg = xasprintf("heartbeat: HTTP %ld: %s", status,
					      client_error_text(reply, status));

			agent_note(&n, LOG_WARN, msg);
			free(msg);
		} else {
			agent_note_clear(&n, "heartbeat: coordinator answers again");
			if (task && json_is_true(json_object_get(reply, "cancel"))) {
				pthread_mutex_lock(&a->mu);
				if (a->task == task && a->attempt == attempt && !a->cancel) {
					/* Atomic too: a build's run_cmd() reads it without the lock. */
					__atomic_store_n(&a->cancel, 1, __ATOMIC_RELEASE);
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

void agent_set_current(struct agent *a, long long task, long long attempt)
{
	pthread_mutex_lock(&a->mu);
	a->task = task;
	a->attempt = attempt;
	__atomic_store_n(&a->cancel, 0, __ATOMIC_RELEASE);
	a->phase = NULL;
	a->files = 0;
	pthread_mutex_unlock(&a->mu);
}

/* What the task in hand does now ("building the kernel"); a static string. */
void agent_set_phase(struct agent *a, const char *phase)
{
	pthread_mutex_lock(&a->mu);
	a->phase = phase;
	a->phase_t0 = now_ms();
	a->files = 0;
	a->detail[0] = '\0';
	pthread_mutex_unlock(&a->mu);
}

/* gitx's progress hook: a first clone of a kernel takes minutes. */
void agent_git_progress(void *arg, const char *text)
{
	struct agent *a = arg;

	pthread_mutex_lock(&a->mu);
	snprintf(a->detail, sizeof(a->detail), "%s", text);
	pthread_mutex_unlock(&a->mu);
}

/* At a step boundary: should the task in hand be dropped? */
int agent_abandoned(struct agent *a, const struct task *t)
{
	int cancel;

	pthread_mutex_lock(&a->mu);
	cancel = a->cancel;
	pthread_mutex_unlock(&a->mu);
	if (cancel) {
		log_warn("task %lld: abandoned, not uploaded", t->id);
		return 1;
	}
	if (agent_stopping) {
		log_info("task %lld: interrupted, not uploaded (its lease will expire)", t->id);
		return 1;
	}
	return 0;
}

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
	while (!agent_stopping) {
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
		agent_nap(a, backoff);
		backoff = agent_backoff_next(backoff);
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
int agent_load_token(struct agent *a)
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
int agent_register(struct agent *a)
{
	json_t *body = json_pack("{s:s, s:[]}", "name", a->conf.name, "labels");
	struct note n = { "" };
	long backoff = BACKOFF_FIRST_MS;
	int rc = ERR_FAIL;

	for (char **l = a->conf.labels; l && *l; l++)
		json_array_append_new(json_object_get(body, "labels"), json_string(*l));
	while (!agent_stopping) {
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
			agent_note_clear(&n, NULL);
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
		agent_note(&n, status ? LOG_ERROR : LOG_WARN, msg);
		free(msg);
		json_decref(reply);
		agent_nap(a, backoff);
		backoff = agent_backoff_next(backoff);
	}
	json_decref(body);
	return rc;
}

/*
 * Posts a result, retrying transport errors and 5xx up to tries times
 * (the upload is idempotent on the server).
 */
int agent_upload(struct agent *a, long long id, json_t *body, int tries)
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
		if (i >= tries || agent_stopping) {
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
		if (agent_nap(a, backoff) < 0)
			break;
		backoff = agent_backoff_next(backoff);
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

void agent_spool_reject(const char *path)
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
int agent_spool_flush(struct agent *a, int tries)
{
	DIR *d = opendir(a->spool);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return err_set(ERR_FAIL, "%s: %s", a->spool, strerror(errno));
	while (rc == 0 && !agent_stopping && (e = readdir(d))) {
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
			agent_spool_reject(path);
			json_decref(body);
			free(text);
			free(path);
			continue;
		}
		log_msg(tries > 1 ? LOG_INFO : LOG_DEBUG,
			"spool: uploading the result of task %lld attempt %lld", id, attempt);
		switch (agent_upload(a, id, body, tries)) {
		case UP_DONE:
			unlink(path);
			break;
		case UP_REJECTED:
			agent_spool_reject(path);
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

void agent_result_set(struct result *r, const char *status, const char *fmt, ...)
{
	va_list ap;

	r->status = status;
	free(r->error);
	va_start(ap, fmt);
	if (vasprintf(&r->error, fmt, ap) < 0)
		r->error = NULL;
	va_end(ap);
}

void agent_result_release(struct result *r)
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
json_t *agent_text_json(const char *s, int keep_lines)
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
