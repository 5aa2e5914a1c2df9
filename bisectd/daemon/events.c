/*
 * events: the event streams of the dashboard. A stream is a reader that
 * libmicrohttpd calls on a pool thread (http.h's http_stream): when
 * nothing changed it parks on the coordinator's change queue
 * (coord_change_queue(); no thread held) until something does or the
 * recheck comes; then it rebuilds the documents the API shows through
 * coord.h, and sends those that differ from what this client last got. Cost: a rebuild per stream at most
 * twice a second, EVENTS_MAX_STREAMS streams.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "events.h"
#include "util.h"

/* Changes no call announces: leases that expire, agents going offline. */
#define RECHECK_MS 5000
/* The least time between two rebuilds of one stream. */
#define MIN_GAP_MS 500
/* A comment line after this much silence, so that a gone client is found. */
#define KEEPALIVE_MS 15000

static struct {
	pthread_mutex_t mu;
	int streams;
	int stopping;
} hub = { PTHREAD_MUTEX_INITIALIZER, 0, 0 };

struct stream {
	struct coord *s;
	long long job;
	unsigned long seen;          /* the change queue's generation at the last rebuild */
	int started;
	int64_t last_build, last_write;
	struct sbuf out;             /* what is still to send, from off */
	size_t off;
	json_t *last;                /* key ("agent:lab1", "job:3", "detail") -> JSON text sent */
};

void events_shutdown(struct coord *s)
{
	pthread_mutex_lock(&hub.mu);
	hub.stopping = 1;
	pthread_mutex_unlock(&hub.mu);
	http_wake(coord_change_queue(s));
}

int events_nr_streams(void)
{
	int n;

	pthread_mutex_lock(&hub.mu);
	n = hub.streams;
	pthread_mutex_unlock(&hub.mu);
	return n;
}

static void add_event(struct stream *st, const char *name, const char *text)
{
	/* A compact dump is one line: SSE's data field needs no splitting. */
	sbuf_addf(&st->out, "event: %s\ndata: %s\n\n", name, text);
}

/* Records what key now holds; 1 when it differs from what was sent, with *text the heap dump. */
static int changed(char **text, struct stream *st, const char *key, const json_t *v)
{
	const char *old;

	*text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	if (!*text)
		return 0;
	old = json_string_value(json_object_get(st->last, key));
	if (old && !strcmp(old, *text)) {
		free(*text);
		*text = NULL;
		return 0;
	}
	json_object_set_new_nocheck(st->last, key, json_string_nocheck(*text));
	return 1;
}

/* Each item of arr under "PREFIX:ID"; an event per item that changed unless first. */
static void diff_items(struct stream *st, json_t *arr, const char *prefix, const char *idkey, int first)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v) {
		json_t *id = json_object_get(v, idkey);
		char *key, *text;

		key = json_is_integer(id) ? xasprintf("%s:%lld", prefix, (long long)json_integer_value(id)) :
		      xasprintf("%s:%s", prefix, json_string_value(id) ?: "?");
		if (changed(&text, st, key, v) && !first)
			add_event(st, prefix, text);
		free(text);
		free(key);
	}
}

static void rebuild(struct stream *st)
{
	json_t *agents = NULL, *jobs = NULL, *job = NULL;
	int first = !st->started;

	err_clear();
	if (coord_agent_list(&agents, st->s))
		agents = NULL;
	if (coord_job_list(&jobs, st->s))
		jobs = NULL;
	if (st->job > 0 && coord_job_get(&job, st->s, st->job))
		job = NULL;
	diff_items(st, json_object_get(agents, "agents"), "agent", "name", first);
	diff_items(st, json_object_get(jobs, "jobs"), "job", "id", first);
	if (job) {
		char *text;

		if (changed(&text, st, "detail", job) && !first)
			add_event(st, "detail", text);
		free(text);
	}
	if (first) {
		json_t *snap = json_pack("{s:I, s:O?, s:O?, s:O?, s:i}", "time", (json_int_t)now_unix(),
					 "agents", json_object_get(agents, "agents"),
					 "jobs", json_object_get(jobs, "jobs"), "job", job,
					 "max_streams", EVENTS_MAX_STREAMS);
		char *text = snap ? json_dumps(snap, JSON_COMPACT) : NULL;

		/* retry: how soon EventSource comes back after a drop. */
		sbuf_adds(&st->out, "retry: 2000\n\n");
		if (text)
			add_event(st, "snapshot", text);
		free(text);
		json_decref(snap);
		st->started = 1;
	}
	st->last_build = now_ms();
	json_decref(agents);
	json_decref(jobs);
	json_decref(job);
}

/*
 * 1 when it is time to rebuild; 0 with *wait filled when not yet (a
 * change within MIN_GAP_MS of the last rebuild, or none before the
 * recheck); -1 when the server stops.
 */
static int due(struct stream *st, struct http_wait *wait)
{
	unsigned long gen = http_waitq_gen(coord_change_queue(st->s));  /* before looking: see http.h */
	int64_t now = now_ms();
	int stopping;

	pthread_mutex_lock(&hub.mu);
	stopping = hub.stopping;
	pthread_mutex_unlock(&hub.mu);
	if (stopping)
		return -1;
	if (gen != st->seen && now < st->last_build + MIN_GAP_MS) {
		*wait = (struct http_wait){ NULL, 0, st->last_build + MIN_GAP_MS, NULL };
		return 0;
	}
	if (gen == st->seen && now < st->last_build + RECHECK_MS) {
		*wait = (struct http_wait){ coord_change_queue(st->s), gen, st->last_build + RECHECK_MS, NULL };
		return 0;
	}
	st->seen = gen;
	return 1;
}

static ssize_t stream_read(void *arg, char *buf, size_t max, struct http_wait *wait)
{
	struct stream *st = arg;
	size_t n;

	while (st->off >= st->out.len) {
		int d;

		sbuf_release(&st->out);
		st->off = 0;
		if (st->started && (d = due(st, wait)) <= 0)
			return d;
		rebuild(st);
		if (!st->out.len && now_ms() - st->last_write >= KEEPALIVE_MS)
			sbuf_adds(&st->out, ": keepalive\n\n");
		/* Nothing changed at the recheck: wait for the next. */
		if (!st->out.len) {
			*wait = (struct http_wait){ coord_change_queue(st->s), st->seen, st->last_build + RECHECK_MS, NULL };
			return 0;
		}
	}
	n = st->out.len - st->off < max ? st->out.len - st->off : max;
	memcpy(buf, st->out.buf + st->off, n);
	st->off += n;
	st->last_write = now_ms();
	return (ssize_t)n;
}

static void stream_release(void *arg)
{
	struct stream *st = arg;

	sbuf_release(&st->out);
	json_decref(st->last);
	free(st);
	pthread_mutex_lock(&hub.mu);
	hub.streams--;
	pthread_mutex_unlock(&hub.mu);
}

int events_open(struct http_response *res, struct coord *s, long long job)
{
	struct stream *st;
	int rc = 0;

	pthread_mutex_lock(&hub.mu);
	if (hub.stopping)
		rc = err_set(ERR_FAIL, "bisectd is stopping");
	else if (hub.streams >= EVENTS_MAX_STREAMS)
		rc = err_set(ERR_BUSY, "too many event streams (%d open): poll GET /api/v1/agents and /api/v1/jobs "
			     "instead, or close a dashboard", hub.streams);
	else
		hub.streams++;
	pthread_mutex_unlock(&hub.mu);
	if (rc)
		return rc;
	st = xcalloc(1, sizeof(*st));
	st->s = s;
	st->job = job;
	st->last = json_object();
	st->last_write = now_ms();
	st->seen = http_waitq_gen(coord_change_queue(s));
	res->status = 200;
	res->content_type = "text/event-stream";
	res->stream.read = stream_read;
	res->stream.release = stream_release;
	res->stream.arg = st;
	return 0;
}
