/*
 * http: libmicrohttpd glue; the only file that speaks MHD.
 *
 * Model: an epoll thread pool (MHD_USE_EPOLL_INTERNAL_THREAD with
 * MHD_OPTION_THREAD_POOL_SIZE); each pool thread owns the connections it
 * accepted. A reply that is not ready (http_later) or a stream with
 * nothing to send suspends its connection (MHD_ALLOW_SUSPEND_RESUME) and
 * parks it in http_wait.c; the waiter's fire resumes it, from any thread,
 * and MHD calls the access handler (or the stream's reader) again on the
 * owning pool thread. Suspended connections neither time out nor hold a
 * thread; idle ones are closed after idle_timeout.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "http.h"
#include "http_wait.h"
#include "log.h"
#include "util.h"

#define DEFAULT_THREADS 4
/* How long http_stop() lets the requests in flight end before it closes them. */
#define STOP_GRACE_MS 2000
#define MAX_PEM (1 << 20)

struct http_server {
	struct MHD_Daemon *d;
	size_t max_body;
	http_handler_fn handler;
	void *arg;
	char *cert, *key;            /* PEM text; MHD keeps pointers to them */
	atomic_int in_flight;        /* requests begun and not yet answered in full (on_completed()) */
};

struct conn_state {
	struct sbuf body;
	int too_large;
	struct http_server *srv;
	struct MHD_Connection *conn;
	struct http_later later;     /* later.poll set: the reply is not ready yet */
	struct http_waiter waiter;
	int64_t parked_at;           /* now_ms() when it was last parked */
	_Atomic int64_t woken_at;    /* now_ms() when the waker fired it */
	int64_t waited_ms;           /* parked, in all: the reply's Server-Timing "wait" */
	int64_t begun_us;            /* now_us() when the request's headers were in */
};

struct stream_state {
	struct http_stream st;
	struct MHD_Connection *conn;
	struct http_waiter waiter;
};

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

#define container_of(p, type, member) ((type *)(void *)((char *)(p) - offsetof(type, member)))

static void conn_fire(struct http_waiter *w)
{
	struct conn_state *cs = container_of(w, struct conn_state, waiter);

	atomic_store(&cs->woken_at, now_ms());
	MHD_resume_connection(cs->conn);
}

static void stream_fire(struct http_waiter *w)
{
	MHD_resume_connection(container_of(w, struct stream_state, waiter)->conn);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream_state *ss = cls;
	struct http_wait wait = { NULL, 0, 0, NULL };
	ssize_t n;

	(void)pos;
	n = ss->st.read(ss->st.arg, buf, max, &wait);
	if (n > 0)
		return n;
	if (n < 0 || http_park_stopping())
		return MHD_CONTENT_READER_END_OF_STREAM;
	/* Nothing now: set the connection aside until a wake or the deadline. */
	MHD_suspend_connection(ss->conn);
	http_park(&ss->waiter, &wait);
	return 0;
}

static void stream_free(void *cls)
{
	struct stream_state *ss = cls;

	ss->st.release(ss->st.arg);
	free(ss);
}

static struct MHD_Response *stream_response(struct http_stream *src, struct MHD_Connection *conn)
{
	struct stream_state *ss = xcalloc(1, sizeof(*ss));
	struct MHD_Response *r;

	ss->st = *src;
	ss->conn = conn;
	ss->waiter.fire = stream_fire;
	memset(src, 0, sizeof(*src));
	/* From here MHD calls stream_free when the response goes; before, we do. */
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, ss, stream_free);
	if (!r)
		stream_free(ss);
	return r;
}

/*
 * W3C Server-Timing: "svc", the milliseconds the server spent on the
 * request from its headers to its reply, less any wait; and when the
 * reply waited parked (a long poll), "wait", that long. A client tells
 * the time it was served in from the time it waited for work, and both
 * from its own queueing (bench-api).
 */
static enum MHD_Result respond(struct MHD_Connection *conn, struct http_response *res, int64_t waited_ms,
			       int64_t begun_us)
{
	const char *body = res->body ? res->body : "";
	size_t len = res->body && res->body_len ? res->body_len : strlen(body);
	int streamed = res->stream.read != NULL;
	struct MHD_Response *r = streamed ? stream_response(&res->stream, conn) :
				 MHD_create_response_from_buffer(len, (void *)(uintptr_t)body,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	if (res->status != 204)
		MHD_add_response_header(r, "Content-Type", res->content_type ? res->content_type :
					"application/json");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	/* A stream goes out as it comes: asks proxies such as nginx not to buffer it. */
	if (streamed)
		MHD_add_response_header(r, "X-Accel-Buffering", "no");
	if (begun_us > 0) {
		double svc = (double)(now_us() - begun_us) / 1e3 - (double)waited_ms;
		char st[64];

		if (waited_ms > 0)
			snprintf(st, sizeof(st), "wait;dur=%lld, svc;dur=%.1f", (long long)waited_ms, svc > 0 ? svc : 0);
		else
			snprintf(st, sizeof(st), "svc;dur=%.1f", svc > 0 ? svc : 0);
		MHD_add_response_header(r, "Server-Timing", st);
	}
	if (res->retry_after > 0) {
		char ra[16];

		snprintf(ra, sizeof(ra), "%d", res->retry_after);
		MHD_add_response_header(r, "Retry-After", ra);
	}
	ret = MHD_queue_response(conn, (unsigned)res->status, r);
	MHD_destroy_response(r);
	return ret;
}

static void later_release(struct conn_state *cs)
{
	if (!cs->later.poll)
		return;
	if (cs->later.release)
		cs->later.release(cs->later.arg);
	memset(&cs->later, 0, sizeof(cs->later));
}

/* The reply is not ready: keeps what res->later holds and parks the connection. */
static enum MHD_Result park(struct conn_state *cs, struct http_response *res)
{
	if (cs->later.poll && cs->later.arg != res->later.arg && cs->later.release)
		cs->later.release(cs->later.arg);
	cs->later = res->later;
	cs->parked_at = now_ms();
	atomic_store(&cs->woken_at, 0);
	MHD_suspend_connection(cs->conn);
	http_park(&cs->waiter, &cs->later.wait);
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_size, void **con_cls)
{
	struct http_server *srv = cls;
	struct conn_state *cs = *con_cls;
	struct http_request req;
	struct http_response res = { 0 };
	enum MHD_Result ret;

	(void)version;
	if (!cs) {
		cs = xcalloc(1, sizeof(*cs));
		cs->srv = srv;
		cs->conn = conn;
		cs->waiter.fire = conn_fire;
		cs->begun_us = now_us();
		/* http_stop() lets it end, its reply written, until on_completed(). */
		atomic_fetch_add(&srv->in_flight, 1);
		*con_cls = cs;
		return MHD_YES;
	}
	if (*upload_size) {
		/* Keep reading past the bound, but drop it: the reply is a clean 413. */
		if (!cs->too_large && cs->body.len + *upload_size <= srv->max_body)
			sbuf_add(&cs->body, upload_data, *upload_size);
		else {
			cs->too_large = 1;
			sbuf_release(&cs->body);
		}
		*upload_size = 0;
		return MHD_YES;
	}
	if (cs->later.poll) {
		/* Resumed: a wake, the deadline, or the server stopping. */
		int stopping = http_park_stopping();
		int64_t woken = atomic_load(&cs->woken_at);

		if (woken >= cs->parked_at)
			cs->waited_ms += woken - cs->parked_at;

		cs->later.poll(&res, cs->later.arg, stopping);
		if (res.later.poll && res.status == 0 && stopping) {
			if (res.later.arg != cs->later.arg && res.later.release)
				res.later.release(res.later.arg);
			memset(&res, 0, sizeof(res));
			res.status = 503;
			res.body = xstrdup("{\"error\": \"bisectd is stopping\"}");
		}
	} else {
		req.method = method;
		req.path = url;
		req.body = cs->body.buf ? cs->body.buf : "";
		req.body_len = cs->body.len;
		req.body_too_large = cs->too_large;
		req.conn = conn;
		srv->handler(&res, &req, srv->arg);
	}
	if (res.later.poll && res.status == 0)
		return park(cs, &res);
	later_release(cs);  /* answered: done with what the handler parked */
	if (res.status == 0)
		res.status = 500;
	ret = respond(conn, &res, cs->waited_ms, cs->begun_us);
	cs->waited_ms = 0;
	free(res.body);
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct conn_state *cs = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (cs) {
		later_release(cs);
		/*
		 * Counted down here, not when the reply was made: MHD calls this
		 * once the reply is written, and http_stop() must not close the
		 * connection between the two (the client would see no reply, or
		 * a download cut short).
		 */
		atomic_fetch_sub(&cs->srv->in_flight, 1);
		sbuf_release(&cs->body);
		free(cs);
		*con_cls = NULL;
	}
}

/*
 * libmicrohttpd's messages, at most LOG_BURST a second: a client that
 * opens connections past a limit makes one each, and must not fill the
 * log. What is dropped is counted in the next line that goes out.
 */
#define LOG_BURST 10

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static int64_t second;
	static unsigned in_second, dropped;
	unsigned was_dropped = 0;
	int64_t now = now_ms() / 1000;
	char msg[512];
	size_t n;

	(void)cls;
	pthread_mutex_lock(&mu);
	if (now != second) {
		second = now;
		in_second = 0;
	}
	if (++in_second > LOG_BURST) {
		dropped++;
		pthread_mutex_unlock(&mu);
		return;
	}
	was_dropped = dropped;
	dropped = 0;
	pthread_mutex_unlock(&mu);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && msg[n - 1] == '\n')
		msg[--n] = '\0';
	if (was_dropped)
		log_warn("http: %s (and %u more messages of libmicrohttpd not logged)", msg, was_dropped);
	else
		log_warn("http: %s", msg);
}

/* Splits "HOST:PORT" / "[V6]:PORT" into a socket address. */
static int parse_listen(struct sockaddr_storage *ss, int *v6, const char *listen)
{
	const char *colon = strrchr(listen, ':');
	char host[64];
	char *end;
	long port;
	size_t hlen;

	memset(ss, 0, sizeof(*ss));
	*v6 = 0;
	if (!colon || colon == listen || (size_t)(colon - listen) >= sizeof(host))
		return err_set(ERR_INVALID, "listen address '%s' must be HOST:PORT or [IPV6]:PORT", listen);
	hlen = (size_t)(colon - listen);
	memcpy(host, listen, hlen);
	host[hlen] = '\0';
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || port <= 0 || port > 65535)
		return err_set(ERR_INVALID, "listen address '%s': bad port", listen);
	if (host[0] == '[') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		if (hlen < 3 || host[hlen - 1] != ']')
			return err_set(ERR_INVALID, "listen address '%s': an IPv6 address goes in brackets, "
				       "as [::1]:7878", listen);
		host[hlen - 1] = '\0';
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1)
			return err_set(ERR_INVALID, "listen address '%s': '%s' is not an IPv6 address", listen,
				       host + 1);
		*v6 = 1;
		return 0;
	}
	{
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		if (!strcmp(host, "localhost"))
			strcpy(host, "127.0.0.1");
		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			return err_set(ERR_INVALID, "listen address '%s': '%s' is not an IPv4 address "
				       "(IPv6 goes in brackets: [::1]:7878)", listen, host);
	}
	return 0;
}

int http_listen_is_loopback(const char *listen)
{
	struct sockaddr_storage ss;
	int v6;

	if (parse_listen(&ss, &v6, listen))
		return 0;
	if (v6)
		return IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr);
	return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
}


static int read_pem(char **out, const char *path, const char *what)
{
	size_t len;

	if (file_read(out, &len, path, MAX_PEM))
		return err_set(ERR_INVALID, "tls_%s '%s': %s", what, path, err_msg());
	if (!strstr(*out, "-----BEGIN ")) {
		free(*out);
		*out = NULL;
		return err_set(ERR_INVALID, "tls_%s '%s' is not a PEM file (no -----BEGIN line)", what, path);
	}
	return 0;
}

int http_check_tls(const char *cert, const char *key)
{
	gnutls_certificate_credentials_t cred;
	int g;

	if (!cert != !key)
		return err_set(ERR_INVALID, "TLS needs both tls_cert and tls_key (PEM files), or neither");
	if (!cert)
		return 0;
	/* Readable and PEM, each said by its name (read_pem()), then the pair as GnuTLS loads it. */
	for (int i = 0; i < 2; i++) {
		char *pem = NULL;
		int rc = read_pem(&pem, i ? key : cert, i ? "key" : "cert");

		free(pem);
		if (rc)
			return rc;
	}
	if (gnutls_certificate_allocate_credentials(&cred) < 0)
		return err_set(ERR_FAIL, "GnuTLS: cannot allocate credentials");
	g = gnutls_certificate_set_x509_key_file(cred, cert, key, GNUTLS_X509_FMT_PEM);
	gnutls_certificate_free_credentials(cred);
	if (g < 0)
		return err_set(ERR_INVALID, "tls_cert '%s' with tls_key '%s': %s; give both as PEM files, the key the certificate's own",
			       cert, key, gnutls_strerror(g));
	return 0;
}

int http_start(struct http_server **out, const struct http_config *cfg,
	       http_handler_fn handler, void *arg)
{
	struct http_server *srv;
	struct sockaddr_storage sa;
	struct MHD_OptionItem opts[16];
	unsigned int flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
	size_t n = 0;
	int v6, rc;

	*out = NULL;
	if ((rc = parse_listen(&sa, &v6, cfg->listen)))
		return rc;
	if ((rc = http_check_tls(cfg->tls_cert, cfg->tls_key)))
		return rc;
	srv = xcalloc(1, sizeof(*srv));
	srv->max_body = cfg->max_body;
	srv->handler = handler;
	srv->arg = arg;
	if (v6)
		flags |= MHD_USE_IPv6;
	if (cfg->tls_cert) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			rc = err_set(ERR_FAIL, "this libmicrohttpd was built without TLS: drop tls_cert and tls_key, "
				     "or install one with GnuTLS (Debian's has it)");
			goto fail;
		}
		if ((rc = read_pem(&srv->cert, cfg->tls_cert, "cert")) || (rc = read_pem(&srv->key, cfg->tls_key, "key")))
			goto fail;
		flags |= MHD_USE_TLS;
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, srv->cert };
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, srv->key };
	}
	/* One thread: MHD's internal thread is the pool (it warns at a pool size of 1). */
	if ((cfg->threads ? cfg->threads : DEFAULT_THREADS) > 1)
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE,
						     cfg->threads ? cfg->threads : DEFAULT_THREADS, NULL };
	if (cfg->max_connections)
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, cfg->max_connections, NULL };
	if (cfg->max_per_address)
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT, cfg->max_per_address, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, cfg->idle_timeout, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_LISTEN_BACKLOG_SIZE, 4096, NULL };
	/*
	 * No MHD_OPTION_LISTENING_ADDRESS_REUSE: its 1 is SO_REUSEPORT on Linux,
	 * which let a second bisectd bind the same port and take half of the
	 * connections. The default, SO_REUSEADDR, restarts at once all the same.
	 */
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	if ((rc = http_park_start()))
		goto fail;
	srv->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, srv,
				  MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, srv,
				  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				  MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
				  MHD_OPTION_ARRAY, opts,
				  MHD_OPTION_END);
	if (!srv->d) {
		http_park_end();  /* nothing of this server was parked */
		rc = err_set(ERR_FAIL, "cannot listen on %s (in use, not an address of this host, or a bad "
			     "certificate or key: see the lines above)", cfg->listen);
		goto fail;
	}
	*out = srv;
	return 0;
fail:
	free(srv->cert);
	free(srv->key);
	free(srv);
	return rc;
}

void http_stop(struct http_server *srv)
{
	int64_t until = now_ms() + STOP_GRACE_MS;
	MHD_socket listen_fd;

	if (!srv)
		return;
	/*
	 * No new connection (a client's connect is refused, and it retries
	 * elsewhere or later); parked replies answer (their poll sees
	 * stopping), streams end, and what is in flight (a handler at work, a
	 * download being written) ends. Once MHD has written them all
	 * (on_completed()), or after the grace, MHD closes the rest.
	 */
	http_park_stop();
	listen_fd = MHD_quiesce_daemon(srv->d);
	if (listen_fd != MHD_INVALID_SOCKET)
		close(listen_fd);
	while (atomic_load(&srv->in_flight) > 0 && now_ms() < until)
		usleep(10 * 1000);
	MHD_stop_daemon(srv->d);
	http_park_end();
	free(srv->cert);
	free(srv->key);
	free(srv);
}

const char *http_query(const struct http_request *req, const char *key)
{
	return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *http_header(const struct http_request *req, const char *name)
{
	return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

void http_peer(const struct http_request *req, char *buf, size_t len)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(req->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	snprintf(buf, len, "?");
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, buf, (socklen_t)len);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, buf, (socklen_t)len);
}

int http_conn_alive(void *conn)
{
	const union MHD_ConnectionInfo *ci = conn ? MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD)
						  : NULL;
	char c;
	ssize_t n;

	if (!ci)
		return 1;
	/* A peek: 0 is the peer's FIN; bytes (a pipelined request) or nothing yet are an open connection. */
	n = recv(ci->connect_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR));
}
