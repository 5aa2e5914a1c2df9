/*
 * web: the dashboard's page and assets (bisectd/web/, compiled in by
 * tests/lib/embed-web.sh) and its routes: "/" and "/jobs/ID" are the
 * page, "/web/NAME" an asset, "/api/v1/events" the live feed (events.h).
 */
#ifndef BISECT_WEB_H
#define BISECT_WEB_H

#include <stddef.h>

#include "coord.h"
#include "http.h"

struct web_asset {
	const char *name;            /* "app.js" */
	const char *content_type;
	const char *data;
	size_t len;
};

/* web_assets.c, generated. */
extern const struct web_asset web_assets[];
extern const int web_nr_assets;

/* The asset of that name, or NULL. Borrowed, static. */
const struct web_asset *web_asset_find(const char *name);

/*
 * A GET request of path segments seg[0..n): 1 when it is the dashboard's
 * (answered in res, or *rc set to an error code with its message for the
 * caller to reply with), 0 when it is not.
 */
int web_route(int *rc, struct http_response *res, const struct http_request *req, struct coord *s,
	      char *const *seg, int n);

#endif
