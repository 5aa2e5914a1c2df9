/*
 * http: a small HTTP/1.1 server on libmicrohttpd that hands whole requests
 * (body read and bounded) to one handler. A few threads serve every
 * connection (epoll, a thread pool): a handler must not block. A reply
 * that is not ready yet (a claim's long poll) and a streamed reply that
 * has nothing to send (the dashboard's server-sent events) are parked
 * instead: the connection is set aside, holding no thread, until a wait
 * queue it waits on is woken or its deadline comes, and then asked again.
 * TLS (GnuTLS through libmicrohttpd) when a certificate and key are given.
 */
#ifndef BISECT_HTTP_H
#define BISECT_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct http_request {
	const char *method;
	const char *path;           /* without the query string */
	const char *body;           /* NUL-terminated, may be "" */
	size_t body_len;
	int body_too_large;         /* the body passed max_body and was dropped */
	void *conn;                 /* for http_query */
};

/*
 * A wait queue: what parked replies and streams wait for ("a task was
 * queued", "the dashboard's documents changed"). Its generation counts
 * the wakes, so that one between a look that found nothing and the
 * parking is not lost: read http_waitq_gen() BEFORE looking, give it as
 * http_wait.seen, and the reply is asked again at once if a wake came
 * in between. Queues do not need a server; they outlive the servers
 * parked on them.
 */
struct http_waitq;

struct http_waitq *http_waitq_new(void);
void http_waitq_free(struct http_waitq *q);          /* nothing may be parked on it */
unsigned long http_waitq_gen(struct http_waitq *q);
/* Asks every reply and stream parked on q again. Any thread, any lock held. */
void http_wake(struct http_waitq *q);
/*
 * Asks again at most n of those parked on q, the longest parked first,
 * for which want(tag, arg) is true (want NULL: any): one task queued
 * wakes one agent's claim, not all of them (the thundering herd that was
 * most of a claim's p99 with 500 agents). want runs under the lot's
 * mutex and must not block; the generation moves as with http_wake, so a
 * look in flight is asked again too. Any thread, any lock held.
 */
void http_wake_some(struct http_waitq *q, size_t n, int (*want)(const void *tag, const void *arg),
		    const void *arg);
/*
 * As http_wake_some, but fires none: the waiters taken out (at most n)
 * are put in out and returned; the caller may fill in what their tags
 * point to (a task claimed for a parked claim) and must then fire each,
 * once, with http_fire(). Any thread, any lock held.
 */
struct http_waiter;
size_t http_take_some(struct http_waiter **out, struct http_waitq *q, size_t n,
		      int (*want)(const void *tag, const void *arg), const void *arg);
void *http_waiter_tag(struct http_waiter *w);
void http_fire(struct http_waiter *w);

/* What a parked reply or stream waits for: a wake of queue, or until. */
struct http_wait {
	struct http_waitq *queue;   /* NULL: only the deadline */
	unsigned long seen;         /* http_waitq_gen(queue) read before looking */
	int64_t until;              /* now_ms() time to ask again at the latest */
	void *tag;                  /* what http_wake_some's want is asked about; owned by the parker */
};

/*
 * A body of unknown length, sent as it comes (server-sent events).
 * read() runs on a pool thread and must not block: it returns the bytes
 * it put in buf (1..max); 0 when it has nothing now, with *wait filled
 * (the stream is parked and read again after a wake or at wait->until);
 * or -1 to end the response. release() is called once when the
 * connection is done with it (the client went away, the stream ended, or
 * the server stops), and also when the response could not be made.
 */
struct http_stream {
	ssize_t (*read)(void *arg, char *buf, size_t max, struct http_wait *wait);
	void (*release)(void *arg);
	void *arg;
};

struct http_response;

/*
 * A reply not ready yet (a long poll). The handler leaves status 0 and
 * sets later.poll: the connection is parked on later.wait, and poll runs
 * on a pool thread after a wake of the queue or at wait.until. poll
 * fills res as a handler does (a status and body), or sets res->later
 * again (with a new wait) to keep waiting. When the server stops, poll
 * is called once more with stopping set and must answer (else: 503).
 * release(arg) is called once when the connection is done with arg.
 */
struct http_later {
	void (*poll)(struct http_response *res, void *arg, int stopping);
	void (*release)(void *arg);
	void *arg;
	struct http_wait wait;
};

struct http_response {
	int status;
	const char *content_type;   /* "application/json" when NULL */
	char *body;                 /* heap, freed by the server; NULL for none */
	struct http_stream stream;  /* read set: the body is this stream, not body */
	size_t body_len;            /* bytes of body (a chart's PNG); 0: strlen(body) */
	struct http_later later;    /* poll set (and status 0): not ready yet */
	int retry_after;            /* > 0: a Retry-After header of that many seconds (429) */
};

typedef void (*http_handler_fn)(struct http_response *res, const struct http_request *req, void *arg);

struct http_config {
	const char *listen;         /* "HOST:PORT": IPv4, "[IPv6]", "localhost" */
	size_t max_body;
	unsigned threads;           /* the pool; 0: 4 */
	unsigned max_connections;   /* 0: libmicrohttpd's default */
	unsigned max_per_address;   /* 0: no limit */
	unsigned idle_timeout;      /* seconds a connection may sit idle (not parked); 0: none */
	const char *tls_cert;       /* PEM files; both or neither */
	const char *tls_key;
};

struct http_server;

/*
 * Listens on cfg->listen and serves until http_stop(). ERR_INVALID for a
 * bad address or an unreadable certificate or key, ERR_FAIL when it
 * cannot bind (or libmicrohttpd has no TLS).
 */
int http_start(struct http_server **out, const struct http_config *cfg,
	       http_handler_fn handler, void *arg);
/* Asks every parked reply and stream a last time (stopping), then stops. */
void http_stop(struct http_server *srv);
/*
 * Checks a certificate and its key as http_start() will use them: both or
 * neither, readable, PEM, and the key the certificate's (GnuTLS loads
 * them). ERR_INVALID with what is wrong. `bisectd -n` runs it.
 */
int http_check_tls(const char *cert, const char *key);

/* A query-string argument of the request, or NULL. Borrowed. */
const char *http_query(const struct http_request *req, const char *key);
/* A request header (case-insensitive name), or NULL. Borrowed. */
const char *http_header(const struct http_request *req, const char *name);
/* The client's address as text ("127.0.0.1", "::1") into buf; "?" when unknown. */
void http_peer(const struct http_request *req, char *buf, size_t len);
/*
 * 0 when the client has closed the connection (a request's conn, parked
 * or not: a killed agent's socket is closed by its kernel); 1 while it is
 * open, or when that cannot be told. Any thread; it reads nothing.
 */
int http_conn_alive(void *conn);

/* 1 when "HOST:PORT"'s host is a loopback address (127.0.0.0/8, ::1, localhost). */
int http_listen_is_loopback(const char *listen);

#endif
