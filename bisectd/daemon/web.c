/* web: serves the dashboard from the assets compiled into bisectd. */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "events.h"
#include "util.h"
#include "web.h"

const struct web_asset *web_asset_find(const char *name)
{
	for (int i = 0; i < web_nr_assets; i++)
		if (!strcmp(web_assets[i].name, name))
			return &web_assets[i];
	return NULL;
}

static int serve(struct http_response *res, const char *name)
{
	const struct web_asset *a = web_asset_find(name);

	if (!a)
		return err_set(ERR_NOTFOUND, "no such dashboard file '%s'", name);
	res->status = 200;
	res->content_type = a->content_type;
	res->body = xstrndup(a->data, a->len);
	return 0;
}

static int is_id(const char *s)
{
	char *end;
	long long v = strtoll(s, &end, 10);

	return !*end && v > 0;
}

int web_route(int *rc, struct http_response *res, const struct http_request *req, struct coord *s,
	      char *const *seg, int n)
{
	*rc = 0;
	if (n == 0) {
		*rc = serve(res, "index.html");
	} else if (n == 2 && !strcmp(seg[0], "jobs") && is_id(seg[1])) {
		/* The job page is the same page; it reads its id from the path. */
		*rc = serve(res, "index.html");
	} else if (n == 2 && !strcmp(seg[0], "web")) {
		*rc = serve(res, seg[1]);
	} else if (n == 3 && !strcmp(seg[0], "api") && !strcmp(seg[1], "v1") && !strcmp(seg[2], "events")) {
		const char *j = http_query(req, "job");

		if (j && !is_id(j))
			*rc = err_set(ERR_INVALID, "job must be a job's id");
		else
			*rc = events_open(res, s, j ? strtoll(j, NULL, 10) : 0);
	} else {
		return 0;
	}
	return 1;
}
