/*
 * http: a small HTTP/1.1 server on libmicrohttpd that hands whole requests
 * (body read and bounded) to one handler. A thread per connection, so a
 * handler may block (claim long polls do), and so may the reader of a
 * streamed reply (the dashboard's server-sent events).
 */
#ifndef BISECT_HTTP_H
#define BISECT_HTTP_H

#include <stddef.h>
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
 * A body of unknown length, sent as it comes (server-sent events).
 * read() runs on the connection's thread and may block: it returns the
 * bytes it put in buf (1..max), or -1 to end the response. release() is
 * called once when the connection is done with it (the client went away,
 * the stream ended, or the server stops), and also when the response
 * could not be made.
 */
struct http_stream {
	ssize_t (*read)(void *arg, char *buf, size_t max);
	void (*release)(void *arg);
	void *arg;
};

struct http_response {
	int status;
	const char *content_type;   /* "application/json" when NULL */
	char *body;                 /* heap, freed by the server; NULL for none */
	struct http_stream stream;  /* read set: the body is this stream, not body */
	size_t body_len;            /* bytes of body (a chart's PNG); 0: strlen(body) */
	int retry_after;            /* > 0: a Retry-After header of that many seconds (429) */
};

typedef void (*http_handler_fn)(struct http_response *res, const struct http_request *req, void *arg);

struct http_server;

/*
 * Listens on "HOST:PORT" (IPv4 address or "localhost") and serves until
 * http_stop(). ERR_INVALID for a bad address, ERR_FAIL when it cannot bind.
 */
int http_start(struct http_server **out, const char *listen, size_t max_body,
	       http_handler_fn handler, void *arg);
void http_stop(struct http_server *srv);

/* A query-string argument of the request, or NULL. Borrowed. */
const char *http_query(const struct http_request *req, const char *key);
/* A request header (case-insensitive name), or NULL. Borrowed. */
const char *http_header(const struct http_request *req, const char *name);
/* The client's address as text ("127.0.0.1", "::1") into buf; "?" when unknown. */
void http_peer(const struct http_request *req, char *buf, size_t len);

#endif
