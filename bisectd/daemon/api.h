/*
 * api: the routes of the versioned JSON API (see docs/API.md) on top of the coordinator (coord.h).
 */
#ifndef BISECT_API_H
#define BISECT_API_H

#include "http.h"

struct auth;

/* The http handler; arg is the struct coord. */
void api_handle(struct http_response *res, const struct http_request *req, void *arg);
/*
 * Who may call which route (auth.h); set once before the server starts.
 * NULL (the unit tests') checks only a POST's Content-Type and Origin.
 */
void api_set_auth(struct auth *a);

#endif
