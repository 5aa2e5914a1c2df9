/*
 * test_http: the HTTP server's model (http.h): the parking lot of wait
 * queues and deadlines (http_wait.c), and a real server on loopback with
 * a pool of one thread, where a parked long poll and a parked stream hold
 * no thread, are answered when woken, and when the server stops.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client.h"
#include "err.h"
#include "http.h"
#include "http_wait.h"
#include "util.h"

/* --- the parking lot ----------------------------------------------------- */

struct counted {
	struct http_waiter w;
	atomic_int fired;
};

static void count_fire(struct http_waiter *w)
{
	atomic_fetch_add(&((struct counted *)(void *)w)->fired, 1);
}

/* Waits (bounded) until c fired n times in all. */
static int fired_within(struct counted *c, int n, int ms)
{
	for (int i = 0; i < ms / 10 && atomic_load(&c->fired) < n; i++)
		usleep(10 * 1000);
	return atomic_load(&c->fired);
}

static void test_park_lot(void **state)
{
	struct http_waitq *q = http_waitq_new();
	struct counted a = { .w.fire = count_fire }, b = { .w.fire = count_fire };
	struct http_wait wait;
	unsigned long g;

	(void)state;
	assert_int_equal(http_park_start(), 0);
	g = http_waitq_gen(q);

	/* A wake between the look and the parking is not lost: fired at once. */
	http_wake(q);
	wait = (struct http_wait){ q, g, now_ms() + 60000, NULL };
	http_park(&a.w, &wait);
	assert_int_equal(atomic_load(&a.fired), 1);
	assert_int_equal(http_park_count(), 0);

	/* Parked: a wake fires it, once, and takes it out. */
	wait.seen = http_waitq_gen(q);
	http_park(&a.w, &wait);
	http_park(&b.w, &wait);
	assert_int_equal(http_park_count(), 2);
	assert_int_equal(atomic_load(&a.fired), 1);
	http_wake(q);
	assert_int_equal(atomic_load(&a.fired), 2);
	assert_int_equal(atomic_load(&b.fired), 1);
	assert_int_equal(http_park_count(), 0);
	http_wake(q);
	assert_int_equal(atomic_load(&a.fired), 2);

	/* The deadline fires it (the timer thread), the earliest first; no queue needed. */
	wait = (struct http_wait){ NULL, 0, now_ms() + 60000, NULL };
	http_park(&b.w, &wait);
	wait.until = now_ms() + 50;
	http_park(&a.w, &wait);
	assert_int_equal(fired_within(&a, 3, 5000), 3);
	assert_int_equal(atomic_load(&b.fired), 1);
	assert_int_equal(http_park_count(), 1);
	/* A deadline already past: at once. */
	wait.until = now_ms() - 1;
	http_park(&a.w, &wait);
	assert_int_equal(atomic_load(&a.fired), 4);

	/* Stopping fires every parked waiter, and any parked after it at once. */
	http_park_stop();
	assert_int_equal(atomic_load(&b.fired), 2);
	assert_int_equal(http_park_count(), 0);
	assert_true(http_park_stopping());
	wait = (struct http_wait){ q, http_waitq_gen(q), now_ms() + 60000, NULL };
	http_park(&a.w, &wait);
	assert_int_equal(atomic_load(&a.fired), 5);
	http_park_end();
	assert_false(http_park_stopping());
	http_waitq_free(q);
}

static int tag_is(const void *tag, const void *arg)
{
	return tag && !strcmp(tag, arg);
}

/*
 * A selective wake fires at most n of the parked, the longest parked
 * first, only those want() takes; the rest stay parked, and the queue's
 * tail is kept right as waiters leave from anywhere in it.
 */
static void test_wake_some(void **state)
{
	struct http_waitq *q = http_waitq_new();
	struct counted w[4];
	static char x[] = "x", y[] = "y";
	char *tags[4] = { x, y, x, x };
	struct http_waiter *taken[2];
	struct http_wait wait;

	(void)state;
	memset(w, 0, sizeof(w));
	assert_int_equal(http_park_start(), 0);
	for (int i = 0; i < 4; i++) {
		w[i].w.fire = count_fire;
		wait = (struct http_wait){ q, http_waitq_gen(q), now_ms() + 60000, tags[i] };
		http_park(&w[i].w, &wait);
	}
	assert_int_equal(http_park_count(), 4);
	http_wake_some(q, 1, tag_is, "y");
	assert_int_equal(atomic_load(&w[1].fired), 1);
	assert_int_equal(http_park_count(), 3);
	http_wake_some(q, 1, tag_is, "x");             /* the oldest "x": w[0] */
	assert_int_equal(atomic_load(&w[0].fired), 1);
	assert_int_equal(atomic_load(&w[2].fired) + atomic_load(&w[3].fired), 0);
	http_wake_some(q, 5, tag_is, "y");             /* none left */
	assert_int_equal(http_park_count(), 2);
	/* The newest one parks again; the oldest still goes first. */
	wait = (struct http_wait){ q, http_waitq_gen(q), now_ms() + 60000, "x" };
	http_park(&w[0].w, &wait);
	http_wake_some(q, 2, tag_is, "x");
	assert_int_equal(atomic_load(&w[2].fired), 1);
	assert_int_equal(atomic_load(&w[3].fired), 1);
	assert_int_equal(atomic_load(&w[0].fired), 1);
	/* A look in flight sees the wake: the generation moved. */
	wait = (struct http_wait){ q, http_waitq_gen(q) - 1, now_ms() + 60000, "x" };
	http_park(&w[1].w, &wait);
	assert_int_equal(atomic_load(&w[1].fired), 2);
	http_wake_some(q, 1, NULL, NULL);              /* any: the last one */
	assert_int_equal(atomic_load(&w[0].fired), 2);
	assert_int_equal(http_park_count(), 0);
	/* Taken out, not fired: the caller fills in what the tag points to, then fires. */
	wait = (struct http_wait){ q, http_waitq_gen(q), now_ms() + 60000, y };
	http_park(&w[2].w, &wait);
	assert_int_equal(http_take_some(taken, q, 2, tag_is, "y"), 1);
	assert_ptr_equal(taken[0], &w[2].w);
	assert_ptr_equal(http_waiter_tag(taken[0]), y);
	assert_int_equal(http_park_count(), 0);
	assert_int_equal(atomic_load(&w[2].fired), 1);
	http_fire(taken[0]);
	assert_int_equal(atomic_load(&w[2].fired), 2);
	assert_int_equal(http_take_some(taken, q, 2, NULL, NULL), 0);
	http_park_stop();
	http_park_end();
	http_waitq_free(q);
}

static void test_listen_addresses(void **state)
{
	struct http_server *srv = NULL;
	struct http_config cfg = { .listen = "[::1:80", .max_body = 1024 };

	(void)state;
	assert_true(http_listen_is_loopback("127.0.0.1:7878"));
	assert_true(http_listen_is_loopback("127.9.8.7:1"));
	assert_true(http_listen_is_loopback("localhost:7878"));
	assert_true(http_listen_is_loopback("[::1]:7878"));
	assert_false(http_listen_is_loopback("0.0.0.0:7878"));
	assert_false(http_listen_is_loopback("[::]:7878"));
	assert_false(http_listen_is_loopback("10.1.2.3:7878"));
	assert_false(http_listen_is_loopback("lab.example:7878"));

	assert_int_equal(http_start(&srv, &cfg, NULL, NULL), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "in brackets"));
	cfg.listen = "::1:80";
	assert_int_equal(http_start(&srv, &cfg, NULL, NULL), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "IPv6 goes in brackets"));
	cfg.listen = "127.0.0.1:0";
	assert_int_equal(http_start(&srv, &cfg, NULL, NULL), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "bad port"));
	cfg.listen = "127.0.0.1:1";
	cfg.tls_cert = "/nonexistent/cert.pem";
	assert_int_equal(http_start(&srv, &cfg, NULL, NULL), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "both tls_cert and tls_key"));
	cfg.tls_key = "/nonexistent/key.pem";
	assert_int_equal(http_start(&srv, &cfg, NULL, NULL), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "tls_cert '/nonexistent/cert.pem'"));
	cfg.tls_cert = cfg.tls_key = "/etc/hostname";
	assert_int_equal(http_start(&srv, &cfg, NULL, NULL), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "is not a PEM file"));
	assert_null(srv);
}

/* --- a server of one thread ---------------------------------------------- */

static struct http_waitq *tq;
static atomic_int go;                /* what the parked replies wait for */

static void long_poll(struct http_response *res, void *arg, int stopping)
{
	unsigned long g = http_waitq_gen(tq);  /* before looking */

	if (stopping) {
		res->status = 503;
		res->body = xstrdup("{\"error\": \"stopping\"}");
	} else if (atomic_load(&go)) {
		res->status = 200;
		res->body = xstrdup("{\"woken\": true}");
	} else {
		res->later = (struct http_later){ long_poll, free, arg, { tq, g, now_ms() + 30000, NULL } };
	}
}

struct sse {
	int sent;
};

static ssize_t sse_read(void *arg, char *buf, size_t max, struct http_wait *wait)
{
	struct sse *s = arg;

	(void)max;
	if (s->sent == 0) {
		s->sent = 1;
		buf[0] = 'a';
		return 1;
	}
	if (s->sent == 1) {
		unsigned long g = http_waitq_gen(tq);  /* before looking */

		if (!atomic_load(&go)) {
			*wait = (struct http_wait){ tq, g, now_ms() + 30000, NULL };
			return 0;
		}
		s->sent = 2;
		buf[0] = 'b';
		return 1;
	}
	return -1;
}

#define BIG_BODY (32 << 20)      /* more than loopback's socket buffers hold */
static atomic_int slow_entered;  /* /slow's handler is at work */

static void handler(struct http_response *res, const struct http_request *req, void *arg)
{
	(void)arg;
	if (!strcmp(req->path, "/slow")) {
		atomic_store(&slow_entered, 1);
		usleep(300 * 1000);
		res->status = 200;
		res->body = xstrdup("{\"slow\": true}");
	} else if (!strcmp(req->path, "/big")) {
		res->status = 200;
		res->content_type = "text/plain";
		res->body = xmalloc(BIG_BODY);
		memset(res->body, 'x', BIG_BODY);
		res->body_len = BIG_BODY;
	} else if (!strcmp(req->path, "/wait")) {
		long_poll(res, xstrdup("state"), 0);
		if (!res->later.poll)
			free(res->later.arg);
	} else if (!strcmp(req->path, "/stream")) {
		res->status = 200;
		res->content_type = "text/plain";
		res->stream = (struct http_stream){ sse_read, free, xcalloc(1, sizeof(struct sse)) };
	} else {
		res->status = 200;
		res->body = xstrdup("{\"now\": true}");
	}
}

static char base[96];

struct call {
	pthread_t t;
	const char *path;
	int text;
	long status;
	char *body;
};

static void *call_main(void *arg)
{
	struct call *c = arg;
	struct client *cl = client_new(base);
	json_t *reply = NULL;

	if (c->text) {
		client_get_text(&c->body, &c->status, cl, c->path, 30);
	} else if (client_request(&reply, &c->status, cl, "GET", c->path, NULL, 30) == 0 && reply) {
		c->body = json_dumps(reply, JSON_COMPACT);
	}
	json_decref(reply);
	client_free(cl);
	return NULL;
}

static void start_call(struct call *c, const char *path, int text)
{
	memset(c, 0, sizeof(*c));
	c->path = path;
	c->text = text;
	assert_int_equal(pthread_create(&c->t, NULL, call_main, c), 0);
}

/* GET path over a raw socket, so that the headers show: the whole response, the caller's. */
struct raw {
	pthread_t t;
	int port;
	const char *path;
	int pause_ms;        /* > 0: after the first bytes, reads nothing for that long */
	atomic_int begun;    /* the first bytes are in */
	char *text;
	size_t len;
};

static void *raw_main(void *arg)
{
	struct raw *r = arg;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct sbuf sb = SBUF_INIT;
	char req[128], buf[4096];
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)r->port);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", r->path);
		if (write(fd, req, strlen(req)) == (ssize_t)strlen(req))
			while ((n = read(fd, buf, sizeof(buf))) > 0) {
				sbuf_add(&sb, buf, (size_t)n);
				if (!atomic_exchange(&r->begun, 1) && r->pause_ms > 0)
					usleep((useconds_t)r->pause_ms * 1000);
			}
	}
	if (fd >= 0)
		close(fd);
	r->len = sb.len;
	r->text = sb.buf ? sbuf_detach(&sb) : xstrdup("");
	return NULL;
}

/* A free port on loopback: its address in *sa, "127.0.0.1:PORT" in listen. */
static void free_port(struct sockaddr_in *sa, char *listen, size_t n)
{
	socklen_t len = sizeof(*sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)sa, sizeof(*sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)sa, &len), 0);
	close(fd);
	snprintf(listen, n, "127.0.0.1:%d", ntohs(sa->sin_port));
}

/* A connection while the server stops (its download is still written): refused, late_refused 1. */
static int late_port;
static atomic_int late_refused;

static void *late_main(void *arg)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd;

	(void)arg;
	for (int i = 0; i < 1000 && !http_park_stopping(); i++)
		usleep(10 * 1000);
	usleep(100 * 1000);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)late_port);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	atomic_store(&late_refused, http_park_stopping() ? connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 : -1);
	close(fd);
	return NULL;
}

static int parked_within(size_t n, int ms)
{
	for (int i = 0; i < ms / 10 && http_park_count() != n; i++)
		usleep(10 * 1000);
	return http_park_count() == n;
}

static void test_server(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct http_server *srv = NULL;
	struct http_config cfg = { .max_body = 1024, .threads = 1, .idle_timeout = 120 };
	struct call poll1, poll2, now, stream;
	char listen[64];

	(void)state;
	free_port(&sa, listen, sizeof(listen));
	snprintf(base, sizeof(base), "http://%s", listen);
	cfg.listen = listen;
	tq = http_waitq_new();
	assert_int_equal(http_start(&srv, &cfg, handler, NULL), 0);
	/* A second server cannot take the port (no SO_REUSEPORT sharing it). */
	{
		struct http_server *srv2 = NULL;

		assert_int_equal(http_start(&srv2, &cfg, handler, NULL), ERR_FAIL);
		assert_non_null(strstr(err_msg(), "cannot listen on"));
		assert_null(srv2);
	}

	/* Two long polls and a stream parked on a pool of one thread: a GET is still served. */
	start_call(&poll1, "/wait", 0);
	start_call(&poll2, "/wait", 0);
	start_call(&stream, "/stream", 1);
	assert_true(parked_within(3, 10000));
	start_call(&now, "/now", 0);
	pthread_join(now.t, NULL);
	assert_int_equal(now.status, 200);
	assert_string_equal(now.body, "{\"now\":true}");
	free(now.body);
	assert_int_equal(http_park_count(), 3);

	/* A wake without the condition: asked again, parked again. */
	http_wake(tq);
	assert_true(parked_within(3, 10000));
	/* The condition and a wake: all three answer. */
	atomic_store(&go, 1);
	http_wake(tq);
	pthread_join(poll1.t, NULL);
	pthread_join(poll2.t, NULL);
	pthread_join(stream.t, NULL);
	assert_int_equal(poll1.status, 200);
	assert_string_equal(poll1.body, "{\"woken\":true}");
	assert_int_equal(poll2.status, 200);
	assert_int_equal(stream.status, 200);
	assert_string_equal(stream.body, "ab");
	free(poll1.body);
	free(poll2.body);
	free(stream.body);

	/*
	 * A reply that waited parked says how long (Server-Timing "wait"), so
	 * that a client tells its service time from its wait: at least the
	 * second it was kept parked here, and its service ("svc") apart. One
	 * that did not wait says only its service.
	 */
	atomic_store(&go, 0);
	{
		struct raw r = { .port = ntohs(sa.sin_port), .path = "/wait" };
		const char *st;

		assert_int_equal(pthread_create(&r.t, NULL, raw_main, &r), 0);
		assert_true(parked_within(1, 10000));
		usleep(1000 * 1000);
		atomic_store(&go, 1);
		http_wake(tq);
		pthread_join(r.t, NULL);
		st = strstr(r.text, "Server-Timing: wait;dur=");
		assert_non_null(st);
		assert_true(atol(st + strlen("Server-Timing: wait;dur=")) >= 1000);
		st = strstr(st, ", svc;dur=");
		assert_non_null(st);
		assert_true(strtod(st + strlen(", svc;dur="), NULL) < 1000);
		free(r.text);
		r.path = "/now";
		assert_int_equal(pthread_create(&r.t, NULL, raw_main, &r), 0);
		pthread_join(r.t, NULL);
		assert_non_null(strstr(r.text, "200 OK"));
		assert_null(strstr(r.text, "wait;dur="));
		assert_non_null(strstr(r.text, "Server-Timing: svc;dur="));
		free(r.text);
	}

	/*
	 * Stopping answers what is parked (the poll sees stopping), ends a
	 * stream, and lets what is in flight end: a handler at work, a
	 * download its client reads slowly. Each reply is whole before the
	 * connection closes: a client reads the 503, the stream's end (curl
	 * fails a chunked body cut short, and its status is then 0), the
	 * handler's reply and every byte of the download. A connection
	 * after the stop is refused.
	 */
	atomic_store(&go, 0);
	start_call(&poll1, "/wait", 0);
	start_call(&stream, "/stream", 1);
	assert_true(parked_within(2, 10000));
	{
		struct raw big = { .port = ntohs(sa.sin_port), .path = "/big", .pause_ms = 800 };
		const char *hdr_end;
		pthread_t late;

		assert_int_equal(pthread_create(&big.t, NULL, raw_main, &big), 0);
		for (int i = 0; i < 1000 && !atomic_load(&big.begun); i++)
			usleep(10 * 1000);
		assert_true(atomic_load(&big.begun));
		atomic_store(&slow_entered, 0);
		start_call(&now, "/slow", 0);
		for (int i = 0; i < 1000 && !atomic_load(&slow_entered); i++)
			usleep(10 * 1000);
		assert_true(atomic_load(&slow_entered));
		late_port = ntohs(sa.sin_port);
		assert_int_equal(pthread_create(&late, NULL, late_main, NULL), 0);
		http_stop(srv);
		pthread_join(big.t, NULL);
		pthread_join(now.t, NULL);
		hdr_end = strstr(big.text, "\r\n\r\n");
		assert_non_null(hdr_end);
		assert_non_null(strstr(big.text, "200 OK"));
		assert_int_equal(big.len - (size_t)(hdr_end + 4 - big.text), BIG_BODY);
		free(big.text);
		assert_int_equal(now.status, 200);
		assert_string_equal(now.body, "{\"slow\":true}");
		free(now.body);
		pthread_join(late, NULL);
		assert_int_equal(late_refused, 1);
	}
	pthread_join(poll1.t, NULL);
	pthread_join(stream.t, NULL);
	assert_int_equal(poll1.status, 503);
	assert_int_equal(stream.status, 200);
	assert_string_equal(stream.body, "a");
	free(poll1.body);
	free(stream.body);
	assert_int_equal(http_park_count(), 0);
	http_waitq_free(tq);
}

/*
 * idle_timeout closes a connection that sends nothing, and never one
 * whose reply waits parked (a long poll longer than the timeout is
 * answered when it is woken).
 */
static void test_idle_timeout(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct http_server *srv = NULL;
	struct http_config cfg = { .max_body = 1024, .threads = 1, .idle_timeout = 1 };
	struct raw r;
	char listen[64], buf[64];
	int fd, closed = 0;

	(void)state;
	free_port(&sa, listen, sizeof(listen));
	cfg.listen = listen;
	tq = http_waitq_new();
	atomic_store(&go, 0);
	assert_int_equal(http_start(&srv, &cfg, handler, NULL), 0);

	/* Silent: closed by the server (read() sees the end), within a bound. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	{
		struct timeval tv = { 30, 0 };

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		closed = read(fd, buf, sizeof(buf)) == 0;
	}
	close(fd);
	assert_true(closed);

	/* Parked three times the timeout, then woken: answered. */
	r = (struct raw){ .port = ntohs(sa.sin_port), .path = "/wait" };
	assert_int_equal(pthread_create(&r.t, NULL, raw_main, &r), 0);
	assert_true(parked_within(1, 10000));
	usleep(3000 * 1000);
	atomic_store(&go, 1);
	http_wake(tq);
	pthread_join(r.t, NULL);
	assert_non_null(strstr(r.text, "200 OK"));
	assert_non_null(strstr(r.text, "\"woken\": true"));
	free(r.text);
	http_stop(srv);
	http_waitq_free(tq);
	tq = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_park_lot),
		cmocka_unit_test(test_wake_some),
		cmocka_unit_test(test_listen_addresses),
		cmocka_unit_test(test_server),
		cmocka_unit_test(test_idle_timeout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
