/* api: routes, request parsing, error codes to HTTP statuses. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "auth.h"
#include "err.h"
#include "jsonx.h"
#include "log.h"
#include "api_req.h"
#include "coord.h"
#include "util.h"
#include "web.h"

/* The longest claim wait; conf.c's idle_timeout must be longer. */
#define MAX_WAIT_S 60
#define MAX_SEG 6

static struct auth *api_auth;  /* set before the server starts, read only after */

void api_set_auth(struct auth *a)
{
	api_auth = a;
}

static int status_of(int code)
{
	switch (code) {
	case ERR_INVALID: return 400;
	case ERR_NOTFOUND: return 404;
	case ERR_CONFLICT: case ERR_EXISTS: return 409;
	case ERR_UNPROCESSABLE: return 422;
	case ERR_BUSY: return 503;
	case ERR_TIMEOUT: return 504;
	default: return 500;
	}
}

static void reply_error(struct http_response *res, int status, const char *msg)
{
	json_t *j = json_pack("{s:s}", "error", msg);

	res->status = status;
	res->body = jsonx_dump(j);
	json_decref(j);
}

/* Splits "/api/v1/a/b/c/d" into at most MAX_SEG segments ("api", "v1", ...); MAX_SEG + 1 when there are more. */
static int split(char **seg, char *path)
{
	char *save = NULL;
	int n = 0;

	/* strtok_r: handlers run on many threads at once. */
	for (char *tok = strtok_r(path, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (n == MAX_SEG)
			return n + 1;
		seg[n++] = tok;
	}
	return n;
}

static int parse_id(long long *id, const char *s)
{
	char *end;

	*id = strtoll(s, &end, 10);
	if (*end || *id <= 0)
		return err_set(ERR_NOTFOUND, "'%s' is not an id", s);
	return 0;
}

static int body_json(json_t **req, const struct http_request *r)
{
	if (r->body_len == 0) {  /* cancel, resume, claim and heartbeat may come without a body */
		*req = json_object();
		return 0;
	}
	return jsonx_parse_object(req, r->body, r->body_len, (size_t)-1);
}

/* What a route of /api/v1 needs of its caller (docs/API.md, "Authentication"). */
static enum auth_need route_need(char **seg, int n, int post)
{
	int tokens = n >= 3 && !strcmp(seg[2], "tokens");

	if (!post && n == 3 && !strcmp(seg[2], "whoami"))
		return AUTH_ANY;
	if (!post)
		return tokens ? AUTH_ADMIN : AUTH_READ;
	if (tokens)
		return AUTH_ADMIN;
	if (n >= 3 && !strcmp(seg[2], "jobs"))
		return AUTH_SUBMIT;
	if (n == 4 && !strcmp(seg[2], "agents") && !strcmp(seg[3], "enrol"))
		return AUTH_ENROL;
	if (n >= 3 && (!strcmp(seg[2], "agents") || !strcmp(seg[2], "tasks")))
		return AUTH_AGENT;
	return AUTH_ANY;
}

/* A string field of the body for the binding checks, or NULL (the request checks then refuse it). */
static const char *body_str(json_t *req, const char *key)
{
	return json_string_value(json_object_get(req, key));
}

/* An agent token acts only as its agent, and uploads only for its own leases: 0 or the status. */
static int check_binding(const struct auth_who *who, char **seg, int n, json_t *req)
{
	const char *name;
	long long id;

	if (n == 4 && !strcmp(seg[2], "agents") && !strcmp(seg[3], "register"))
		return (name = body_str(req, "name")) ? auth_as_agent(who, name) : 0;
	if (n == 5 && !strcmp(seg[2], "agents"))
		return auth_as_agent(who, seg[3]);
	if (n == 5 && !strcmp(seg[2], "tasks") && (name = body_str(req, "agent")) && !parse_id(&id, seg[3]))
		return auth_for_task(api_auth, who, name, id,
				     (long long)json_integer_value(json_object_get(req, "attempt")));
	return 0;
}

/* The bodies that come with a request, validated at the edge before the coordinator sees them. */
static int job_resume(struct coord *s, json_t **reply, long long id, json_t *body)
{
	long long more_runs, more_seconds;
	int rc = api_req_resume(&more_runs, &more_seconds, body);

	return rc ? rc : coord_job_resume(reply, s, id, more_runs, more_seconds);
}

static int job_create(struct coord *s, json_t **reply, json_t *body)
{
	struct job_request req;
	int rc = api_req_job(&req, body);

	return rc ? rc : coord_job_create(reply, s, &req);
}

/* A chart's bytes for the reply (GET /jobs/ID/charts/NAME.EXT). */
struct chart_reply {
	char *body;
	size_t len;
	const char *type;
};

static int job_chart(struct coord *s, struct chart_reply *out, long long id, const char *file)
{
	const char *dot = strrchr(file, '.');
	char *name = dot ? xstrndup(file, (size_t)(dot - file)) : xstrdup(file);
	int rc = coord_job_chart(&out->body, &out->len, &out->type, s, id, name, dot ? dot + 1 : "");

	free(name);
	return rc;
}

static int agent_register(struct coord *s, json_t **reply, json_t *body)
{
	struct register_request req;
	int rc = api_req_register(&req, body);

	return rc ? rc : coord_agent_register(reply, s, &req);
}

static int agent_heartbeat(struct coord *s, json_t **reply, const char *name, json_t *body)
{
	struct heartbeat_request req;
	int rc = api_req_heartbeat(&req, body);

	return rc ? rc : coord_agent_heartbeat(reply, s, name, &req);
}

static int task_result(struct coord *s, json_t **reply, long long id, json_t *body)
{
	struct result_request req;
	int rc = api_req_result(&req, body);

	if (rc == 0)
		rc = coord_task_result(reply, s, id, &req);
	result_request_release(&req);
	return rc;
}

/*
 * POST /agents/NAME/claim?wait=S: a long poll. One try now; when nothing
 * came and S > 0 the reply is parked (http.h's http_later) on the
 * coordinator's claim queue, tried again when a task is queued, and every
 * coord_claim_recheck_ms() (a third of the lease) so that a waiting agent
 * stays seen, until S has passed: then 204.
 */
struct claim_wait {
	struct coord *s;
	char *name;
	struct coord_claimer who;    /* the parked reply's tag */
	int64_t deadline;            /* now_ms() */
};

static void claim_poll(struct http_response *res, void *arg, int stopping);

static void claim_free(void *arg)
{
	struct claim_wait *cw = arg;

	/* Handed but never sent (the connection went first): back to the queue. */
	coord_claim_gone(cw->s, &cw->who);
	free(cw->name);
	strv_free(cw->who.labels);
	free(cw);
}

static void claim_try(struct http_response *res, struct claim_wait *cw, int stopping)
{
	struct http_waitq *q = coord_claim_queue(cw->s);
	unsigned long seen = q ? http_waitq_gen(q) : 0;  /* before looking: see http.h */
	json_t *reply = NULL;
	int64_t now, again;
	int rc;

	err_clear();
	/* Its agent went away while it waited: it takes nothing, and what was handed to it goes back. */
	if (cw->who.conn && !http_conn_alive(cw->who.conn)) {
		coord_claim_gone(cw->s, &cw->who);
		res->status = 204;
		return;
	}
	rc = coord_agent_claim(&reply, cw->s, cw->name, &cw->who);
	now = now_ms();
	if (rc) {
		if (status_of(rc) >= 500)
			log_error("POST /api/v1/agents/%s/claim: %s", cw->name, err_msg());
		reply_error(res, status_of(rc), *err_msg() ? err_msg() : err_name(rc));
	} else if (reply) {
		res->status = 200;
		res->body = jsonx_dump(reply);
	} else if (stopping || now >= cw->deadline) {
		res->status = 204;  /* a long poll that found nothing */
	} else {
		res->later.poll = claim_poll;
		res->later.release = claim_free;
		res->later.arg = cw;
		again = now + coord_claim_recheck_ms(cw->s);
		res->later.wait = (struct http_wait){ q, seen, cw->deadline < again ? cw->deadline : again, &cw->who };
	}
	json_decref(reply);
}

static void claim_poll(struct http_response *res, void *arg, int stopping)
{
	claim_try(res, arg, stopping);
}

/* Fills res: an answer, or a parked reply that owns a struct claim_wait. */
static void agent_claim(struct http_response *res, struct coord *s, const char *name, int wait_s, void *conn)
{
	struct claim_wait *cw = xcalloc(1, sizeof(*cw));

	cw->s = s;
	cw->who.conn = conn;
	cw->name = xstrdup(name);
	cw->deadline = now_ms() + (int64_t)wait_s * 1000;
	claim_try(res, cw, wait_s == 0);
	if (!res->later.poll)
		claim_free(cw);
}

/* Reports and exports: GET /jobs/ID/report[?cv=amean|hmean][&format=text|mail], /jobs/ID/samples.csv. */
static int job_text(struct coord *s, char **text, const char **ctype, long long id, const char *what,
		    const struct http_request *r)
{
	const char *cv = http_query(r, "cv"), *format = http_query(r, "format");

	if (!strcmp(what, "samples.csv")) {
		*ctype = "text/csv; charset=utf-8";
		return coord_job_samples_csv(text, s, id);
	}
	if (cv && strcmp(cv, "amean") && strcmp(cv, "hmean"))
		return err_set(ERR_INVALID, "cv must be amean (stddev / arithmetic mean) or hmean (mmtests' harmonic CoV)");
	if (format && strcmp(format, "text") && strcmp(format, "mail"))
		return err_set(ERR_INVALID, "format must be text or mail");
	if (format && !strcmp(format, "mail"))
		return coord_job_report_mail(text, s, id);
	return coord_job_report_text(text, s, id, cv && !strcmp(cv, "hmean") ? REPORT_CV_HMEAN : REPORT_CV_AMEAN);
}

void api_handle(struct http_response *res, const struct http_request *r, void *arg)
{
	struct coord *s = arg;
	char *path = xstrdup(r->path), *seg[MAX_SEG] = { 0 };
	struct chart_reply chart = { NULL, 0, NULL };
	int post = !strcmp(r->method, "POST"), get = !strcmp(r->method, "GET");
	json_t *req = NULL, *reply = NULL;
	struct auth_who who;
	int denied, created = 0;
	char *text = NULL;
	const char *ctype = "text/plain; charset=utf-8";
	int n, rc = ERR_NOTFOUND, routed = 1;
	long long id = 0;

	err_clear();
	memset(&who, 0, sizeof(who));
	if (r->body_too_large) {
		reply_error(res, 413, "request body too large");
		goto out;
	}
	n = split(seg, path);
	/* Every write is checked, and reads of the API when the config says so; the dashboard's files are open. */
	if ((post || get) && (post || (n >= 2 && !strcmp(seg[0], "api"))) &&
	    (denied = auth_check(&who, &res->retry_after, api_auth, r, route_need(seg, n, post)))) {
		reply_error(res, denied, err_msg());
		goto out;
	}
	/* The dashboard (web.c): its page, its files and the event stream. */
	if (get && web_route(&rc, res, r, s, seg, n)) {
		if (rc)
			goto fail;
		goto out;
	}
	if (n < 3 || strcmp(seg[0], "api") || strcmp(seg[1], "v1")) {
		reply_error(res, 404, "no such endpoint: the API is under /api/v1 (see docs/API.md)");
		goto out;
	}
	if (post && (rc = body_json(&req, r)))
		goto fail;
	if (post && (denied = check_binding(&who, seg, n, req))) {
		reply_error(res, denied, err_msg());
		goto out;
	}
	if (!strcmp(seg[2], "whoami")) {
		if (n == 3 && get) {
			reply = json_pack("{s:s?, s:s?}", "role", who.open || !who.role[0] ? NULL : who.role,
					  "agent", who.agent[0] ? who.agent : NULL);
			rc = 0;
		} else {
			routed = 0;
		}
	} else if (!strcmp(seg[2], "tokens")) {
		if (n == 3 && get)
			rc = auth_token_list(&reply, api_auth);
		else if (n == 3 && post)
			rc = auth_token_create(&reply, api_auth, req);
		else if (n == 5 && post && !strcmp(seg[4], "revoke"))
			rc = parse_id(&id, seg[3]) ? ERR_NOTFOUND : auth_token_revoke(&reply, api_auth, id);
		else
			routed = 0;
	} else if (!strcmp(seg[2], "jobs")) {
		if (n == 3 && get)
			rc = coord_job_list(&reply, s);
		else if (n == 3 && post)
			rc = job_create(s, &reply, req);
		else if (n >= 4 && (rc = parse_id(&id, seg[3])))
			;
		else if (n == 4 && get)
			rc = coord_job_get(&reply, s, id);
		else if (n == 5 && post && !strcmp(seg[4], "cancel"))
			rc = coord_job_cancel(&reply, s, id);
		else if (n == 5 && post && !strcmp(seg[4], "resume"))
			rc = job_resume(s, &reply, id, req);
		else if (n == 5 && get && (!strcmp(seg[4], "report") || !strcmp(seg[4], "samples.csv")))
			rc = job_text(s, &text, &ctype, id, seg[4], r);
		else if (n == 5 && get && !strcmp(seg[4], "samples"))
			rc = coord_job_samples(&reply, s, id);
		else if (n == 6 && get && !strcmp(seg[4], "profiles")) {
			rc = coord_job_profile_text(&text, s, id, seg[5]);
			ctype = "text/plain; charset=utf-8";
		}
		else if (n == 6 && get && !strcmp(seg[4], "charts"))
			rc = job_chart(s, &chart, id, seg[5]);
		else
			routed = 0;
	} else if (!strcmp(seg[2], "agents")) {
		if (n == 3 && get)
			rc = coord_agent_list(&reply, s);
		else if (n == 4 && post && !strcmp(seg[3], "register"))
			rc = agent_register(s, &reply, req);
		else if (n == 4 && post && !strcmp(seg[3], "enrol"))
			rc = auth_enrol(&reply, api_auth, req);
		else if (n == 5 && post && !strcmp(seg[4], "heartbeat"))
			rc = agent_heartbeat(s, &reply, seg[3], req);
		else if (n == 5 && post && !strcmp(seg[4], "claim")) {
			const char *w = http_query(r, "wait");
			char *end = NULL;
			long wait = w ? strtol(w, &end, 10) : 20;

			if (w && (*end || wait < 0 || wait > MAX_WAIT_S))
				rc = err_set(ERR_INVALID, "wait must be 0..%d seconds", MAX_WAIT_S);
			else {
				agent_claim(res, s, seg[3], (int)wait, r->conn);
				goto out;
			}
		} else
			routed = 0;
	} else if (!strcmp(seg[2], "tasks")) {
		if (n == 5 && post && !strcmp(seg[4], "result") && !(rc = parse_id(&id, seg[3])))
			rc = task_result(s, &reply, id, req);
		else if (n != 5 || !post || strcmp(seg[4], "result"))
			routed = 0;
	} else {
		routed = 0;
	}
	if (!routed) {
		reply_error(res, get || post ? 404 : 405, "no such endpoint or method (see docs/API.md)");
		goto out;
	}
	if (rc)
		goto fail;
	/* Only a request that was served counts as a use: a refused one leaves the store as it was. */
	auth_touch(api_auth, &who);
	if (chart.body) {
		res->status = 200;
		res->content_type = chart.type;
		res->body = chart.body;
		res->body_len = chart.len;
		chart.body = NULL;
	} else if (text) {
		res->status = 200;
		res->content_type = ctype;
		res->body = text;
		text = NULL;
	} else if (reply) {
		/* What a POST makes: a job, a token, an enrolled agent's token. */
		created = post && ((n == 3 && (!strcmp(seg[2], "jobs") || !strcmp(seg[2], "tokens"))) ||
				   (n == 4 && !strcmp(seg[2], "agents") && !strcmp(seg[3], "enrol")));
		res->status = created ? 201 : 200;
		res->body = jsonx_dump(reply);
	} else {
		res->status = 204;  /* a long poll that found nothing */
	}
	goto out;
fail:
	if (status_of(rc) >= 500)
		log_error("%s %s: %s", r->method, r->path, err_msg());
	reply_error(res, status_of(rc), *err_msg() ? err_msg() : err_name(rc));
out:
	json_decref(req);
	json_decref(reply);
	free(text);
	free(chart.body);
	free(path);
}
