/* http: libmicrohttpd glue; the only file that speaks MHD. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "http.h"
#include "log.h"
#include "util.h"

struct http_server {
	struct MHD_Daemon *d;
	size_t max_body;
	http_handler_fn handler;
	void *arg;
};

struct conn_state {
	struct sbuf body;
	int too_large;
};

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct http_stream *st = cls;
	ssize_t n;

	(void)pos;
	n = st->read(st->arg, buf, max);
	return n > 0 ? n : MHD_CONTENT_READER_END_OF_STREAM;
}

static void stream_free(void *cls)
{
	struct http_stream *st = cls;

	st->release(st->arg);
	free(st);
}

static struct MHD_Response *stream_response(struct http_stream *src)
{
	struct http_stream *st = xmalloc(sizeof(*st));
	struct MHD_Response *r;

	*st = *src;
	memset(src, 0, sizeof(*src));
	/* From here MHD calls stream_free when the response goes; before, we do. */
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, st, stream_free);
	if (!r)
		stream_free(st);
	return r;
}

static enum MHD_Result respond(struct MHD_Connection *conn, struct http_response *res)
{
	const char *body = res->body ? res->body : "";
	size_t len = res->body && res->body_len ? res->body_len : strlen(body);
	struct MHD_Response *r = res->stream.read ? stream_response(&res->stream) :
				 MHD_create_response_from_buffer(len, (void *)(uintptr_t)body,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	if (res->status != 204)
		MHD_add_response_header(r, "Content-Type", res->content_type ? res->content_type :
					"application/json");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	if (res->retry_after > 0) {
		char ra[16];

		snprintf(ra, sizeof(ra), "%d", res->retry_after);
		MHD_add_response_header(r, "Retry-After", ra);
	}
	ret = MHD_queue_response(conn, (unsigned)res->status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_size, void **con_cls)
{
	struct http_server *srv = cls;
	struct conn_state *cs = *con_cls;
	struct http_request req;
	struct http_response res = { 500, NULL, NULL, { NULL, NULL, NULL }, 0, 0 };
	enum MHD_Result ret;

	(void)version;
	if (!cs) {
		cs = xcalloc(1, sizeof(*cs));
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
	req.method = method;
	req.path = url;
	req.body = cs->body.buf ? cs->body.buf : "";
	req.body_len = cs->body.len;
	req.body_too_large = cs->too_large;
	req.conn = conn;
	srv->handler(&res, &req, srv->arg);
	ret = respond(conn, &res);
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
		sbuf_release(&cs->body);
		free(cs);
		*con_cls = NULL;
	}
}

int http_start(struct http_server **out, const char *listen, size_t max_body,
	       http_handler_fn handler, void *arg)
{
	struct http_server *srv;
	struct sockaddr_in sa;
	const char *colon = strrchr(listen, ':');
	char host[64];
	char *end;
	long port;

	*out = NULL;
	if (!colon || (size_t)(colon - listen) >= sizeof(host))
		return err_set(ERR_INVALID, "listen address '%s' must be HOST:PORT", listen);
	memcpy(host, listen, (size_t)(colon - listen));
	host[colon - listen] = '\0';
	port = strtol(colon + 1, &end, 10);
	if (*end || port <= 0 || port > 65535)
		return err_set(ERR_INVALID, "listen address '%s': bad port", listen);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	if (!strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return err_set(ERR_INVALID, "listen address '%s': '%s' is not an IPv4 address", listen, host);
	srv = xcalloc(1, sizeof(*srv));
	srv->max_body = max_body;
	srv->handler = handler;
	srv->arg = arg;
	srv->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
				  MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, srv,
				  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				  MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)120,
				  MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned int)1,
				  MHD_OPTION_END);
	if (!srv->d) {
		free(srv);
		return err_set(ERR_FAIL, "cannot listen on %s (in use, or not an address of this host?)", listen);
	}
	*out = srv;
	return 0;
}

void http_stop(struct http_server *srv)
{
	if (!srv)
		return;
	MHD_stop_daemon(srv->d);
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
