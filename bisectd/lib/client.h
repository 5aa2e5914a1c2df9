/*
 * client: HTTP requests to bisectd's JSON API (libcurl), for bisectctl and
 * the agents. One struct client per thread.
 */
#ifndef BISECT_CLIENT_H
#define BISECT_CLIENT_H

#include <jansson.h>

struct client;

/* base: "http://127.0.0.1:7878" (no trailing slash needed). */
struct client *client_new(const char *base);
void client_free(struct client *c);
/*
 * https: the server's certificate must chain to a CA in path (PEM), not
 * the system's store; NULL: the system's store again. The server is
 * always verified (certificate and host name); there is no switch to
 * skip it.
 */
void client_set_ca_file(struct client *c, const char *path);
/* Sends "Authorization: Bearer token" with every request from now on (NULL: none). token is copied. */
void client_set_token(struct client *c, const char *token);

/*
 * Sends method (GET, POST) to base + path with body (a JSON value, or NULL)
 * and waits up to timeout_s seconds. On a reply, *status is the HTTP status
 * and *reply the parsed JSON body (NULL for an empty body or 204); caller
 * owns it. Returns 0 on any HTTP reply (read *status), ERR_FAIL when the
 * server could not be reached (the message says so), ERR_TIMEOUT on timeout,
 * ERR_INVALID when the reply is not JSON.
 * An error status (>= 400) whose body is not JSON (a proxy's page) still
 * returns 0, with *reply NULL. Replies are bounded at 16 MiB (ERR_INVALID
 * past that). timeout_s <= 0: no overall deadline.
 */
int client_request(json_t **reply, long *status, struct client *c, const char *method,
		   const char *path, json_t *body, long timeout_s);

/*
 * GET base + path for a text reply (text/plain, e.g. a job's report). On any
 * HTTP reply returns 0 with *status set and *out the whole body,
 * NUL-terminated ("" when empty), which the caller frees; an error status
 * carries the API's JSON error body in *out. Fails as client_request().
 */
int client_get_text(char **out, long *status, struct client *c, const char *path, long timeout_s);

/*
 * GET base + path for a reply of bytes (a chart: PNG, SVG, PDF). As
 * client_get_text(), with *len the body's length (*out is NUL-terminated
 * past it, so an error status's JSON body reads as a string).
 */
int client_get_bytes(char **out, size_t *len, long *status, struct client *c, const char *path,
		     long timeout_s);

/* The reply's "error" string, or a generic text for status. Borrowed. */
const char *client_error_text(json_t *reply, long status);

#endif
