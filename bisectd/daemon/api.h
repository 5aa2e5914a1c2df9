/*
 * api: the routes of the versioned JSON API (see docs/API.md) on top of the coordinator (coord.h).
 */
#ifndef BISECT_API_H
#define BISECT_API_H

#include "http.h"

/* The http handler; arg is the struct coord. */
void api_handle(struct http_response *res, const struct http_request *req, void *arg);

#endif
