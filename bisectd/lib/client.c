/*
 * client: HTTP requests to bisectd's API over libcurl's easy interface.
 *
 * One easy handle per struct client, reused so that libcurl keeps the
 * connection alive between requests (an agent's claim loop, a watch). This
 * is the only file that sees curl's error codes; callers get ERR_* codes and
 * a message meant for a person.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "client.h"
#include "err.h"
#include "util.h"

/* A reply larger than this is not one bisectd would send. */
#define MAX_REPLY (16u << 20)
/* Connecting should never take long on a lab network; the rest may (long polls). */
#define CONNECT_TIMEOUT_S 10L

struct client {
	CURL *curl;
	char *base;                     /* without trailing slashes */
	char *ca_file;                  /* NULL: the system's CA store */
	char *auth;                     /* "Authorization: Bearer ..." header; NULL: none */
	char errbuf[CURL_ERROR_SIZE];
};

struct reply_buf {
	struct sbuf sb;
	int too_big;
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

struct client *client_new(const char *base)
{
	struct client *c;
	size_t n = strlen(base);

	pthread_once(&global_once, global_init);
	if (global_rc != CURLE_OK) {
		fprintf(stderr, "curl_global_init: %s\n", curl_easy_strerror(global_rc));
		abort();
	}
	c = xcalloc(1, sizeof(*c));
	c->curl = curl_easy_init();
	if (!c->curl) {
		/* Only fails when memory is exhausted, which util.c treats the same way. */
		fputs("curl_easy_init failed\n", stderr);
		abort();
	}
	while (n > 0 && base[n - 1] == '/')
		n--;
	c->base = xstrndup(base, n);
	return c;
}

void client_free(struct client *c)
{
	if (!c)
		return;
	curl_easy_cleanup(c->curl);
	free(c->base);
	free(c->ca_file);
	free(c->auth);
	free(c);
}

void client_set_ca_file(struct client *c, const char *path)
{
	free(c->ca_file);
	c->ca_file = path ? xstrdup(path) : NULL;
}

void client_set_token(struct client *c, const char *token)
{
	free(c->auth);
	c->auth = token ? xasprintf("Authorization: Bearer %s", token) : NULL;
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *arg)
{
	struct reply_buf *rb = arg;
	size_t n = size * nmemb;

	if (rb->sb.len + n > MAX_REPLY) {
		rb->too_big = 1;
		return 0; /* makes curl stop with CURLE_WRITE_ERROR */
	}
	sbuf_add(&rb->sb, data, n);
	return n;
}

static int is_unreachable(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_SSL_CONNECT_ERROR:
		return 1;
	default:
		return 0;
	}
}

/*
 * Does one exchange; on any HTTP reply fills *status and rb and returns 0.
 * body may be NULL (an empty POST).
 */
static int perform(struct reply_buf *rb, long *status, struct client *c, const char *method,
		   const char *path, const char *body, const char *accept, long timeout_s)
{
	struct curl_slist *hdrs = NULL;
	char *url;
	CURLcode rc;
	int ret = 0;

	*status = 0;
	url = xasprintf("%s%s%s", c->base, path[0] == '/' ? "" : "/", path);

	/* Reset drops the last request's options but keeps the connection cache. */
	curl_easy_reset(c->curl);
	c->errbuf[0] = '\0';
	hdrs = curl_slist_append(hdrs, accept);
	if (c->auth)
		hdrs = curl_slist_append(hdrs, c->auth);
	if (body || strcmp(method, "GET"))
		hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	/* No "Expect: 100-continue" round trip for bodies past 1 KiB. */
	hdrs = curl_slist_append(hdrs, "Expect:");
	if (!hdrs) {
		ret = err_set(ERR_FAIL, "out of memory building a request");
		goto out;
	}

	curl_easy_setopt(c->curl, CURLOPT_URL, url);
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c->curl, CURLOPT_USERAGENT, "bisectd-client/1");
	curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, c->errbuf);
	/* Handles live on threads of their own: no SIGALRM for timeouts. */
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	/* https: always verify the server (curl's default, said out loud). */
	curl_easy_setopt(c->curl, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c->curl, CURLOPT_SSL_VERIFYHOST, 2L);
	if (c->ca_file)
		curl_easy_setopt(c->curl, CURLOPT_CAINFO, c->ca_file);
	curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT,
			 timeout_s > 0 && timeout_s < CONNECT_TIMEOUT_S ? timeout_s : CONNECT_TIMEOUT_S);
	if (timeout_s > 0)
		curl_easy_setopt(c->curl, CURLOPT_TIMEOUT, timeout_s);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, rb);
	if (!strcmp(method, "GET")) {
		curl_easy_setopt(c->curl, CURLOPT_HTTPGET, 1L);
	} else {
		/* POSTFIELDS does not copy: body outlives the perform below. */
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body ? body : "");
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE, (long)(body ? strlen(body) : 0));
		if (strcmp(method, "POST"))
			curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, method);
	}

	rc = curl_easy_perform(c->curl);
	if (rc != CURLE_OK) {
		const char *why = c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc);

		if (rb->too_big)
			ret = err_set(ERR_INVALID, "%s %s%s: reply larger than %u MiB",
				      method, c->base, path, MAX_REPLY >> 20);
		else if (rc == CURLE_PEER_FAILED_VERIFICATION)
			ret = err_set(ERR_FAIL, "bisectd at %s is not trusted: %s (give the CA that signed its "
				      "certificate: ca_file in the agent's config, --ca-file or BISECTD_CA for bisectctl)",
				      c->base, why);
		else if (rc == CURLE_SSL_CACERT_BADFILE)
			ret = err_set(ERR_FAIL, "cannot use the CA file '%s' for %s: %s", c->ca_file ? c->ca_file : "(system)",
				      c->base, why);
		else if (rc == CURLE_OPERATION_TIMEDOUT)
			ret = err_set(ERR_TIMEOUT, "bisectd at %s did not answer %s %s: %s",
				      c->base, method, path, why);
		else if (is_unreachable(rc))
			ret = err_set(ERR_FAIL, "cannot reach bisectd at %s: %s "
				      "(is it running? set --server or BISECTD_URL)", c->base, why);
		else
			ret = err_set(ERR_FAIL, "%s %s%s: %s", method, c->base, path, why);
		goto out;
	}
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, status);
out:
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	free(url);
	return ret;
}

int client_request(json_t **reply, long *status, struct client *c, const char *method,
		   const char *path, json_t *body, long timeout_s)
{
	struct reply_buf rb = { SBUF_INIT, 0 };
	char *text = NULL;
	json_error_t jerr;
	int rc;

	*reply = NULL;
	if (body) {
		text = json_dumps(body, JSON_COMPACT);
		if (!text) {
			rc = err_set(ERR_INVALID, "%s %s: body cannot be encoded as JSON", method, path);
			goto out;
		}
	}
	rc = perform(&rb, status, c, method, path, text, "Accept: application/json", timeout_s);
	if (rc < 0)
		goto out;
	if (*status == 204 || rb.sb.len == 0)
		goto out;
	*reply = json_loadb(rb.sb.buf, rb.sb.len, 0, &jerr);
	if (!*reply) {
		/*
		 * An error status with a body that is not ours (a proxy's page,
		 * a server's default 404) still has a status worth reporting:
		 * the caller gets it with *reply NULL.
		 */
		if (*status >= 400)
			goto out;
		rc = err_set(ERR_INVALID, "%s %s%s: HTTP %ld reply is not JSON: %s",
			     method, c->base, path, *status, jerr.text);
	}
out:
	free(text);
	sbuf_release(&rb.sb);
	return rc;
}

int client_get_text(char **out, long *status, struct client *c, const char *path, long timeout_s)
{
	struct reply_buf rb = { SBUF_INIT, 0 };
	int rc;

	*out = NULL;
	rc = perform(&rb, status, c, "GET", path, NULL, "Accept: text/plain, application/json",
		     timeout_s);
	if (rc < 0) {
		sbuf_release(&rb.sb);
		return rc;
	}
	*out = sbuf_detach(&rb.sb);
	return 0;
}

int client_get_bytes(char **out, size_t *len, long *status, struct client *c, const char *path,
		     long timeout_s)
{
	struct reply_buf rb = { SBUF_INIT, 0 };
	int rc;

	*out = NULL;
	*len = 0;
	rc = perform(&rb, status, c, "GET", path, NULL, "Accept: image/*, application/pdf, application/json",
		     timeout_s);
	if (rc < 0) {
		sbuf_release(&rb.sb);
		return rc;
	}
	*len = rb.sb.len;
	*out = sbuf_detach(&rb.sb);
	return 0;
}

static const char *reason(long status)
{
	switch (status) {
	case 400: return "bad request";
	case 401: return "unauthorized";
	case 403: return "forbidden";
	case 404: return "not found";
	case 405: return "method not allowed";
	case 409: return "conflict";
	case 413: return "request too large";
	case 422: return "unprocessable";
	case 429: return "too many requests";
	case 500: return "internal server error";
	case 502: return "bad gateway";
	case 503: return "service unavailable";
	case 504: return "gateway timeout";
	default: return status >= 500 ? "server error" : status >= 400 ? "client error" : "unexpected status";
	}
}

const char *client_error_text(json_t *reply, long status)
{
	static __thread char buf[96];
	json_t *e = json_is_object(reply) ? json_object_get(reply, "error") : NULL;

	if (json_is_string(e) && json_string_length(e) > 0)
		return json_string_value(e);
	snprintf(buf, sizeof(buf), "HTTP %ld (%s)", status, reason(status));
	return buf;
}
