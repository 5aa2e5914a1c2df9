/*
 * test_api: the API's routing, status codes and request validation
 * (api.c, api_req.c), against a coordinator of stubs that records what
 * it was asked, so that a route and its checks are seen without a store.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <strings.h>

#include "api.h"
#include "coord.h"
#include "err.h"
#include "events.h"
#include "http.h"
#include "perfreport.h"
#include "util.h"

/* --- the coordinator, stubbed ------------------------------------------ */

static struct {
	char call[32];
	long long id;
	char name[80];
	int wait;                    /* claim tries */
	struct job_request job;
	char job_repo[80], job_policy[32];
	struct register_request reg;
	size_t nr_labels;
	struct heartbeat_request hb;
	char progress[64];
	struct result_request res;
	size_t nr_samples;
	char first_unit[16];
	char profile[64];            /* the result's profile report, "(null)" without one */
	int rc;                      /* what the stub returns */
	int no_reply;                /* claim: nothing came */
	long long more_runs, more_seconds;  /* resume */
} seen;

static const char *query_wait, *query_job, *query_cv, *query_format;

const char *http_query(const struct http_request *req, const char *key)
{
	(void)req;
	if (!strcmp(key, "cv"))
		return query_cv;
	if (!strcmp(key, "format"))
		return query_format;
	return !strcmp(key, "wait") ? query_wait : !strcmp(key, "job") ? query_job : NULL;
}

/* The request's headers: a JSON body from this host unless a test says otherwise. */
static const char *hdr_ctype, *hdr_origin;

const char *http_header(const struct http_request *req, const char *name)
{
	(void)req;
	if (!strcasecmp(name, "Content-Type"))
		return hdr_ctype;
	if (!strcasecmp(name, "Origin"))
		return hdr_origin;
	if (!strcasecmp(name, "Host"))
		return "bisectd.example:7878";
	return NULL;
}

void http_peer(const struct http_request *req, char *buf, size_t len)
{
	(void)req;
	snprintf(buf, len, "192.0.2.1");
}

static int called(json_t **reply, const char *call)
{
	snprintf(seen.call, sizeof(seen.call), "%s", call);
	if (seen.rc)
		return err_set(seen.rc, "stub says no");
	if (reply)
		*reply = seen.no_reply ? NULL : json_pack("{s:s}", "call", call);
	return 0;
}

int coord_policy_valid(const char *name)
{
	return !strcmp(name, "bisectd") || !strcmp(name, "split");
}

const char *coord_policy_names(void)
{
	return "bisectd or split";
}

int coord_job_create(json_t **reply, struct coord *s, const struct job_request *req)
{
	(void)s;
	seen.job = *req;
	snprintf(seen.job_repo, sizeof(seen.job_repo), "%s", req->repo);
	snprintf(seen.job_policy, sizeof(seen.job_policy), "%s", req->policy);
	return called(reply, "job_create");
}

int coord_job_list(json_t **reply, struct coord *s)
{
	(void)s;
	return called(reply, "job_list");
}

int coord_job_get(json_t **reply, struct coord *s, long long id)
{
	(void)s;
	seen.id = id;
	return called(reply, "job_get");
}

int coord_job_cancel(json_t **reply, struct coord *s, long long id)
{
	(void)s;
	seen.id = id;
	return called(reply, "job_cancel");
}

int coord_job_resume(json_t **reply, struct coord *s, long long id, long long more_runs, long long more_seconds)
{
	(void)s;
	seen.id = id;
	seen.more_runs = more_runs;
	seen.more_seconds = more_seconds;
	return called(reply, "job_resume");
}

int coord_job_samples(json_t **reply, struct coord *s, long long id)
{
	(void)s;
	seen.id = id;
	return called(reply, "job_samples");
}

int coord_job_report_text(char **out, struct coord *s, long long id, enum report_cv cv)
{
	(void)s;
	seen.id = id;
	if (called(NULL, cv == REPORT_CV_HMEAN ? "job_report_hcv" : "job_report"))
		return seen.rc;
	*out = xstrdup("the report\n");
	return 0;
}

int coord_job_chart(char **out, size_t *len, const char **type, struct coord *s, long long id,
		    const char *chart, const char *format)
{
	(void)s;
	seen.id = id;
	snprintf(seen.name, sizeof(seen.name), "%s|%s", chart, format);
	if (called(NULL, "job_chart"))
		return seen.rc;
	*out = xmalloc(4);
	memcpy(*out, "P\0N\0", 4);   /* bytes, not a string */
	*len = 4;
	*type = "image/png";
	return 0;
}

int coord_job_report_mail(char **out, struct coord *s, long long id)
{
	(void)s;
	seen.id = id;
	if (called(NULL, "job_mail"))
		return seen.rc;
	*out = xstrdup("the mail\n");
	return 0;
}

int coord_job_profile_text(char **out, struct coord *s, long long id, const char *role)
{
	(void)s;
	seen.id = id;
	if (called(NULL, "job_profile"))
		return seen.rc;
	*out = xasprintf("# Samples: 4K of event 'cpu-clock'\n    1.00%%  [k] %s\n", role);
	return 0;
}

int coord_job_samples_csv(char **out, struct coord *s, long long id)
{
	(void)s;
	seen.id = id;
	if (called(NULL, "job_csv"))
		return seen.rc;
	*out = xstrdup("commit\r\n");
	return 0;
}

/* What the agent list stub answers when set (the event stream's test). */
static json_t *agents_doc;

int coord_agent_list(json_t **reply, struct coord *s)
{
	(void)s;
	if (agents_doc) {
		*reply = json_deep_copy(agents_doc);
		return 0;
	}
	return called(reply, "agent_list");
}

int coord_agent_register(json_t **reply, struct coord *s, const struct register_request *req)
{
	(void)s;
	snprintf(seen.name, sizeof(seen.name), "%s", req->name);
	seen.nr_labels = req->nr_labels;
	return called(reply, "agent_register");
}

int coord_agent_heartbeat(json_t **reply, struct coord *s, const char *name, const struct heartbeat_request *req)
{
	(void)s;
	snprintf(seen.name, sizeof(seen.name), "%s", name);
	seen.hb = *req;
	snprintf(seen.progress, sizeof(seen.progress), "%s", req->progress ? req->progress : "(null)");
	return called(reply, "agent_heartbeat");
}

int coord_agent_claim(json_t **reply, struct coord *s, const char *name, struct coord_claimer *who)
{
	(void)s;
	(void)who;
	snprintf(seen.name, sizeof(seen.name), "%s", name);
	seen.wait++;                 /* the tries */
	return called(reply, "agent_claim");
}

static struct http_waitq *claims;
static int conn_gone, claims_gone;   /* http_conn_alive() says the client left; coord_claim_gone() calls */

int http_conn_alive(void *conn)
{
	(void)conn;
	return !conn_gone;
}

void coord_claim_gone(struct coord *s, struct coord_claimer *who)
{
	(void)s;
	(void)who;
	claims_gone++;
}

int coord_claim_recheck_ms(struct coord *s)
{
	(void)s;
	return 1000;
}

struct http_waitq *coord_claim_queue(struct coord *s)
{
	(void)s;
	if (!claims)
		claims = http_waitq_new();
	return claims;
}

/* The coordinator's change queue: the event streams park on it; a change wakes it. */
static struct http_waitq *changes;

struct http_waitq *coord_change_queue(struct coord *s)
{
	(void)s;
	if (!changes)
		changes = http_waitq_new();
	return changes;
}

int coord_task_result(json_t **reply, struct coord *s, long long task_id, const struct result_request *req)
{
	(void)s;
	seen.id = task_id;
	seen.nr_samples = req->nr_samples;
	snprintf(seen.first_unit, sizeof(seen.first_unit), "%s",
		 req->nr_samples && req->samples[0].unit ? req->samples[0].unit : "(null)");
	snprintf(seen.profile, sizeof(seen.profile), "%s", req->profile_report ? req->profile_report : "(null)");
	return called(reply, "task_result");
}

void result_request_release(struct result_request *req)
{
	free(req->samples);
	req->samples = NULL;
}

/* --- requests ------------------------------------------------------------ */

struct answer {
	int status;
	char *body;
	const char *content_type;
};

static struct answer ask(const char *method, const char *path, const char *body)
{
	struct http_request r = { .method = method, .path = path, .body = body ? body : "",
				  .body_len = body ? strlen(body) : 0 };
	struct http_response res = { 0 };
	struct answer a;

	memset(seen.call, 0, sizeof(seen.call));
	api_handle(&res, &r, NULL);
	a.status = res.status;
	a.body = res.body;
	a.content_type = res.content_type;
	return a;
}

/* The answer's "error", or "" when it has none. */
static const char *error_of(struct answer *a)
{
	static char buf[512];
	json_t *j = a->body ? json_loads(a->body, 0, NULL) : NULL;

	snprintf(buf, sizeof(buf), "%s", json_string_value(json_object_get(j, "error")) ?
		 json_string_value(json_object_get(j, "error")) : "");
	json_decref(j);
	return buf;
}

static void expect(const char *method, const char *path, const char *body, int status, const char *call,
		   const char *error)
{
	struct answer a = ask(method, path, body);

	if (a.status != status || strcmp(seen.call, call) || (error && !strstr(error_of(&a), error)))
		print_error("%s %s %s: status %d, call '%s', body %s\n", method, path, body ? body : "",
			    a.status, seen.call, a.body ? a.body : "(none)");
	assert_int_equal(a.status, status);
	assert_string_equal(seen.call, call);
	if (error)
		assert_non_null(strstr(error_of(&a), error));
	free(a.body);
}

static int setup(void **state)
{
	(void)state;
	memset(&seen, 0, sizeof(seen));
	query_wait = query_job = query_cv = query_format = NULL;
	hdr_ctype = "application/json";
	hdr_origin = NULL;
	return 0;
}

/* --- routing ------------------------------------------------------------- */

/* Every POST: a JSON Content-Type and no other site's Origin, before anything is called. */
static void test_write_hygiene(void **state)
{
	(void)state;
	hdr_ctype = "text/plain";
	expect("POST", "/api/v1/jobs", "{}", 415, "", "Content-Type: application/json");
	hdr_ctype = NULL;
	expect("POST", "/api/v1/jobs/3/cancel", NULL, 415, "", "Content-Type");
	hdr_ctype = "application/jsonp";
	expect("POST", "/api/v1/jobs/3/cancel", NULL, 415, "", "Content-Type");
	hdr_ctype = "Application/JSON; charset=utf-8";
	expect("POST", "/api/v1/jobs/3/cancel", NULL, 200, "job_cancel", NULL);
	hdr_origin = "http://evil.example";
	expect("POST", "/api/v1/jobs/3/cancel", NULL, 403, "", "another site");
	hdr_origin = "http://bisectd.example:7878.evil.example";
	expect("POST", "/api/v1/jobs/3/cancel", NULL, 403, "", "another site");
	hdr_origin = "null";
	expect("POST", "/api/v1/jobs/3/cancel", NULL, 403, "", "another site");
	hdr_origin = "http://bisectd.example:7878";
	expect("POST", "/api/v1/jobs/3/cancel", NULL, 200, "job_cancel", NULL);
	/* Reads need neither. */
	hdr_ctype = "text/plain";
	hdr_origin = "http://evil.example";
	expect("GET", "/api/v1/jobs", NULL, 200, "job_list", NULL);
}

static void test_routes(void **state)
{
	(void)state;
	expect("GET", "/api/v1/jobs", NULL, 200, "job_list", NULL);
	expect("GET", "/api/v1/jobs/12", NULL, 200, "job_get", NULL);
	assert_int_equal(seen.id, 12);
	expect("POST", "/api/v1/jobs/7/cancel", NULL, 200, "job_cancel", NULL);
	assert_int_equal(seen.id, 7);
	expect("GET", "/api/v1/jobs/5/samples", NULL, 200, "job_samples", NULL);
	assert_int_equal(seen.id, 5);
	/* resume: its body is optional; its fields bounded; no other field. */
	expect("POST", "/api/v1/jobs/6/resume", NULL, 200, "job_resume", NULL);
	assert_int_equal(seen.id, 6);
	assert_int_equal(seen.more_runs, 0);
	assert_int_equal(seen.more_seconds, 0);
	expect("POST", "/api/v1/jobs/6/resume", "{\"more_runs\": 40, \"more_seconds\": 600}", 200, "job_resume", NULL);
	assert_int_equal(seen.more_runs, 40);
	assert_int_equal(seen.more_seconds, 600);
	expect("POST", "/api/v1/jobs/6/resume", "{\"more_runs\": 0}", 400, "", "more_runs");
	expect("POST", "/api/v1/jobs/6/resume", "{\"more_seconds\": \"1h\"}", 400, "", "more_seconds");
	expect("POST", "/api/v1/jobs/6/resume", "{\"budget_runs\": 9}", 400, "", "budget_runs");
	expect("GET", "/api/v1/agents", NULL, 200, "agent_list", NULL);
	expect("POST", "/api/v1/agents/register", "{\"name\": \"lab1\"}", 200, "agent_register", NULL);
	expect("POST", "/api/v1/agents/lab1/heartbeat", NULL, 200, "agent_heartbeat", NULL);
	assert_string_equal(seen.name, "lab1");
	expect("POST", "/api/v1/agents/lab1/claim", NULL, 200, "agent_claim", NULL);
	assert_int_equal(seen.wait, 1);
	expect("POST", "/api/v1/tasks/9/result", "{\"agent\": \"lab1\", \"attempt\": 1, \"status\": \"failed\"}",
	       200, "task_result", NULL);
	assert_int_equal(seen.id, 9);
}

static void test_created_report_and_empty_poll(void **state)
{
	struct answer a;

	(void)state;
	expect("POST", "/api/v1/jobs", "{\"repo\": \"r\", \"good\": \"v1\", \"bad\": \"v2\", \"workload\": \"w\"}",
	       201, "job_create", NULL);
	a = ask("GET", "/api/v1/jobs/3/report", NULL);
	assert_int_equal(a.status, 200);
	assert_string_equal(a.content_type, "text/plain; charset=utf-8");
	assert_string_equal(a.body, "the report\n");
	free(a.body);
	seen.no_reply = 1;
	query_wait = "0";
	expect("POST", "/api/v1/agents/lab1/claim", NULL, 204, "agent_claim", NULL);
}

/* A chart is bytes of its own type; the coordinator's refusals are the API's JSON errors. */
static void test_chart_route(void **state)
{
	struct http_request r = { .method = "GET", .path = "/api/v1/jobs/5/charts/timeline.png", .body = "" };
	struct http_response res = { 0 };

	(void)state;
	api_handle(&res, &r, NULL);
	assert_int_equal(res.status, 200);
	assert_string_equal(res.content_type, "image/png");
	assert_int_equal(res.body_len, 4);
	assert_memory_equal(res.body, "P\0N\0", 4);
	assert_string_equal(seen.call, "job_chart");
	assert_int_equal(seen.id, 5);
	assert_string_equal(seen.name, "timeline|png");
	free(res.body);
	expect("GET", "/api/v1/jobs/5/charts/a.b.svg", NULL, 200, "job_chart", NULL);
	assert_string_equal(seen.name, "a.b|svg");  /* the extension is after the last dot */
	expect("GET", "/api/v1/jobs/5/charts/timeline", NULL, 200, "job_chart", NULL);
	assert_string_equal(seen.name, "timeline|");
	expect("POST", "/api/v1/jobs/5/charts/timeline.svg", NULL, 404, "", "no such endpoint");
	expect("GET", "/api/v1/jobs/5/charts", NULL, 404, "", "no such endpoint");
	expect("GET", "/api/v1/jobs/5/charts/timeline.svg/x", NULL, 404, "", "no such endpoint");
	expect("GET", "/api/v1/jobs/x/charts/timeline.svg", NULL, 404, "", "'x' is not an id");
	seen.rc = ERR_CONFLICT;
	expect("GET", "/api/v1/jobs/5/charts/timeline.svg", NULL, 409, "job_chart", "stub says no");
	seen.rc = ERR_TIMEOUT;
	expect("GET", "/api/v1/jobs/5/charts/timeline.svg", NULL, 504, "job_chart", "stub says no");
	seen.rc = ERR_BUSY;
	expect("GET", "/api/v1/jobs/5/charts/timeline.svg", NULL, 503, "job_chart", "stub says no");
}

/* The report's forms and the export, each with its content type; a bad option is a 400. */
static void test_report_forms_and_export(void **state)
{
	struct answer a;

	(void)state;
	query_cv = "hmean";
	expect("GET", "/api/v1/jobs/4/report", NULL, 200, "job_report_hcv", NULL);
	query_cv = "amean";
	expect("GET", "/api/v1/jobs/4/report", NULL, 200, "job_report", NULL);
	query_cv = "geo";
	memset(seen.call, 0, sizeof(seen.call));
	expect("GET", "/api/v1/jobs/4/report", NULL, 400, "", "cv must be amean");
	query_cv = NULL;
	query_format = "mail";
	a = ask("GET", "/api/v1/jobs/5/report", NULL);
	assert_int_equal(a.status, 200);
	assert_string_equal(seen.call, "job_mail");
	assert_int_equal(seen.id, 5);
	assert_string_equal(a.body, "the mail\n");
	free(a.body);
	query_format = "html";
	memset(seen.call, 0, sizeof(seen.call));
	expect("GET", "/api/v1/jobs/5/report", NULL, 400, "", "format must be text or mail");
	query_format = NULL;
	a = ask("GET", "/api/v1/jobs/6/samples.csv", NULL);
	assert_int_equal(a.status, 200);
	assert_string_equal(seen.call, "job_csv");
	assert_string_equal(a.content_type, "text/csv; charset=utf-8");
	free(a.body);
	seen.rc = ERR_NOTFOUND;
	expect("GET", "/api/v1/jobs/6/samples.csv", NULL, 404, "job_csv", "stub says no");
	seen.rc = ERR_CONFLICT;
	expect("GET", "/api/v1/jobs/6/report", NULL, 409, "job_report", "stub says no");
	expect("POST", "/api/v1/jobs/6/samples.csv", NULL, 404, "", NULL);
	/* A profile's perf report, as text. */
	seen.rc = 0;
	a = ask("GET", "/api/v1/jobs/7/profiles/culprit", NULL);
	assert_int_equal(a.status, 200);
	assert_string_equal(seen.call, "job_profile");
	assert_int_equal(seen.id, 7);
	assert_string_equal(a.content_type, "text/plain; charset=utf-8");
	assert_non_null(strstr(a.body, "[k] culprit"));
	free(a.body);
	seen.rc = ERR_CONFLICT;
	expect("GET", "/api/v1/jobs/7/profiles/parent", NULL, 409, "job_profile", "stub says no");
	memset(seen.call, 0, sizeof(seen.call));
	expect("POST", "/api/v1/jobs/7/profiles/parent", NULL, 404, "", NULL);
}

static void test_unknown_routes(void **state)
{
	(void)state;
	expect("GET", "/jobs", NULL, 404, "", "the API is under /api/v1");
	expect("GET", "/api/v2/jobs", NULL, 404, "", "the API is under /api/v1");
	expect("GET", "/api/v1/nothing", NULL, 404, "", "no such endpoint or method");
	expect("DELETE", "/api/v1/jobs", NULL, 405, "", "no such endpoint or method");
	expect("GET", "/api/v1/jobs/7/cancel", NULL, 404, "", "no such endpoint or method");
	expect("POST", "/api/v1/tasks/9/results", "{}", 404, "", "no such endpoint or method");
	expect("GET", "/api/v1/jobs/abc", NULL, 404, "", "'abc' is not an id");
	expect("GET", "/api/v1/jobs/0", NULL, 404, "", "'0' is not an id");
	expect("POST", "/api/v1/tasks/x/result", "{}", 404, "", "'x' is not an id");
}

/* --- the dashboard ------------------------------------------------------ */

static void test_dashboard_files(void **state)
{
	struct answer a;

	(void)state;
	a = ask("GET", "/", NULL);
	assert_int_equal(a.status, 200);
	assert_string_equal(a.content_type, "text/html; charset=utf-8");
	assert_non_null(strstr(a.body, "/web/app.js"));
	free(a.body);
	a = ask("GET", "/jobs/4", NULL);
	assert_int_equal(a.status, 200);
	assert_string_equal(a.content_type, "text/html; charset=utf-8");
	free(a.body);
	a = ask("GET", "/web/app.js", NULL);
	assert_int_equal(a.status, 200);
	assert_string_equal(a.content_type, "text/javascript; charset=utf-8");
	free(a.body);
	a = ask("GET", "/web/app.css", NULL);
	assert_string_equal(a.content_type, "text/css; charset=utf-8");
	free(a.body);
	expect("GET", "/web/nope.js", NULL, 404, "", "no such dashboard file 'nope.js'");
	expect("GET", "/jobs/x", NULL, 404, "", "the API is under /api/v1");
	expect("POST", "/", "{}", 404, "", "the API is under /api/v1");
}

static struct http_response open_stream(void)
{
	struct http_request r = { .method = "GET", .path = "/api/v1/events", .body = "" };
	struct http_response res = { 0 };

	api_handle(&res, &r, NULL);
	return res;
}

static void test_events_stream(void **state)
{
	struct http_response res[EVENTS_MAX_STREAMS + 1];
	struct http_wait wait = { NULL, 0, 0, NULL };
	char buf[8192];
	ssize_t n;

	(void)state;
	res[0] = open_stream();
	assert_int_equal(res[0].status, 200);
	assert_string_equal(res[0].content_type, "text/event-stream");
	assert_non_null(res[0].stream.read);
	assert_null(res[0].body);
	/* The first read is the snapshot, at once: the agents and jobs as the API shows them. */
	n = res[0].stream.read(res[0].stream.arg, buf, sizeof(buf) - 1, &wait);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "event: snapshot\ndata: {"));
	assert_non_null(strstr(buf, "\"agents\":"));
	assert_non_null(strstr(buf, "\"jobs\":"));
	assert_int_equal(events_nr_streams(), 1);

	/* Bounded: one past the most is refused with the API's error, and the page polls. */
	for (int i = 1; i < EVENTS_MAX_STREAMS; i++) {
		res[i] = open_stream();
		assert_int_equal(res[i].status, 200);
	}
	res[EVENTS_MAX_STREAMS] = open_stream();
	assert_int_equal(res[EVENTS_MAX_STREAMS].status, 503);
	assert_null(res[EVENTS_MAX_STREAMS].stream.read);
	assert_non_null(strstr(res[EVENTS_MAX_STREAMS].body, "too many event streams"));
	free(res[EVENTS_MAX_STREAMS].body);
	for (int i = 0; i < EVENTS_MAX_STREAMS; i++)
		res[i].stream.release(res[i].stream.arg);
	assert_int_equal(events_nr_streams(), 0);

	query_job = "x";
	expect("GET", "/api/v1/events", NULL, 400, "", "job must be a job's id");
}

/* After the snapshot a stream sends only what changed, once, when woken. */
static void test_events_changes(void **state)
{
	struct http_response res;
	struct http_wait wait = { NULL, 0, 0, NULL };
	char buf[8192];
	ssize_t n;

	(void)state;
	agents_doc = json_pack("{s:[{s:s, s:s}, {s:s, s:s}]}", "agents", "name", "lab1", "phase", "build",
			       "name", "lab2", "phase", "run");
	res = open_stream();
	n = res.stream.read(res.stream.arg, buf, sizeof(buf) - 1, &wait);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "event: snapshot"));
	assert_non_null(strstr(buf, "\"phase\":\"build\""));

	/* Nothing changed: parked on the change queue, its generation now, until the recheck. */
	n = res.stream.read(res.stream.arg, buf, sizeof(buf) - 1, &wait);
	assert_int_equal(n, 0);
	assert_non_null(wait.queue);
	assert_true(wait.seen == http_waitq_gen(wait.queue));
	assert_true(wait.until > now_ms());

	json_object_set_new(json_array_get(json_object_get(agents_doc, "agents"), 0), "phase", json_string("run"));
	http_wake(coord_change_queue(NULL));
	/* The wake is not lost: the queue moved past what the stream saw. */
	assert_true(wait.seen != http_waitq_gen(wait.queue));
	/* Within half a second of the last rebuild: asked again at the gap's end, not before. */
	n = res.stream.read(res.stream.arg, buf, sizeof(buf) - 1, &wait);
	if (n == 0) {
		assert_null(wait.queue);
		assert_true(wait.until <= now_ms() + 500);
		usleep((useconds_t)(wait.until - now_ms() + 10) * 1000);
		n = res.stream.read(res.stream.arg, buf, sizeof(buf) - 1, &wait);
	}
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "event: agent\ndata: {"));
	assert_non_null(strstr(buf, "\"name\":\"lab1\""));
	assert_null(strstr(buf, "lab2"));           /* unchanged: not sent again */
	assert_null(strstr(buf, "snapshot"));
	res.stream.release(res.stream.arg);
	json_decref(agents_doc);
	agents_doc = NULL;
}

static void test_codes_of_errors(void **state)
{
	struct http_request r = { .method = "POST", .path = "/api/v1/jobs", .body = "", .body_too_large = 1 };
	struct http_response res = { 0 };
	static const struct { int code, status; } codes[] = {
		{ ERR_INVALID, 400 }, { ERR_NOTFOUND, 404 }, { ERR_CONFLICT, 409 }, { ERR_EXISTS, 409 },
		{ ERR_UNPROCESSABLE, 422 }, { ERR_BUSY, 503 }, { ERR_FAIL, 500 },
	};

	(void)state;
	api_handle(&res, &r, NULL);
	assert_int_equal(res.status, 413);
	free(res.body);
	expect("POST", "/api/v1/jobs", "{not json", 400, "", NULL);
	expect("POST", "/api/v1/jobs", "[1, 2]", 400, "", NULL);
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		seen.rc = codes[i].code;
		expect("GET", "/api/v1/jobs/1", NULL, codes[i].status, "job_get", "stub says no");
	}
}

static void test_claim_wait(void **state)
{
	(void)state;
	query_wait = "0";
	expect("POST", "/api/v1/agents/a/claim", NULL, 200, "agent_claim", NULL);
	query_wait = "60";
	expect("POST", "/api/v1/agents/a/claim", NULL, 200, "agent_claim", NULL);
	query_wait = "61";
	expect("POST", "/api/v1/agents/a/claim", NULL, 400, "", "wait must be 0..60 seconds");
	query_wait = "5s";
	expect("POST", "/api/v1/agents/a/claim", NULL, 400, "", "wait must be 0..60 seconds");
}

/* A claim that finds nothing is parked (http.h), not a thread held, and asked again. */
static void test_claim_parks(void **state)
{
	struct http_request r = { .method = "POST", .path = "/api/v1/agents/lab1/claim", .body = "" };
	struct http_response res = { 0 }, again = { 0 };
	struct http_later later;
	int64_t t0 = now_ms();

	(void)state;
	seen.no_reply = 1;
	query_wait = "30";
	api_handle(&res, &r, NULL);
	assert_int_equal(res.status, 0);
	assert_null(res.body);
	assert_non_null(res.later.poll);
	assert_non_null(res.later.release);
	later = res.later;
	assert_int_equal(seen.wait, 1);
	/* On the claim queue, with its generation from before the try, back within a second (seen). */
	assert_ptr_equal(later.wait.queue, coord_claim_queue(NULL));
	assert_true(later.wait.seen == http_waitq_gen(later.wait.queue));
	assert_true(later.wait.until > t0 && later.wait.until <= now_ms() + 1000);

	/* Woken, still nothing: parked again, same state. */
	later.poll(&again, later.arg, 0);
	assert_int_equal(again.status, 0);
	assert_ptr_equal(again.later.arg, later.arg);
	assert_int_equal(seen.wait, 2);
	/* Woken with a task: the reply. */
	seen.no_reply = 0;
	memset(&again, 0, sizeof(again));
	later.poll(&again, later.arg, 0);
	assert_int_equal(again.status, 200);
	assert_null(again.later.poll);
	assert_non_null(strstr(again.body, "agent_claim"));
	free(again.body);
	/* The server stops: nothing came, so 204 at once. */
	seen.no_reply = 1;
	memset(&again, 0, sizeof(again));
	later.poll(&again, later.arg, 1);
	assert_int_equal(again.status, 204);
	assert_null(again.later.poll);
	later.release(later.arg);

	/* Its agent went away while it waited: 204, no try, and what was handed to it goes back. */
	seen.wait = 0;
	claims_gone = 0;
	r.conn = &r;  /* a connection http_conn_alive() can be asked of */
	memset(&res, 0, sizeof(res));
	api_handle(&res, &r, NULL);
	later = res.later;
	assert_non_null(later.poll);
	assert_int_equal(seen.wait, 1);
	conn_gone = 1;
	memset(&again, 0, sizeof(again));
	later.poll(&again, later.arg, 0);
	assert_int_equal(again.status, 204);
	assert_null(again.later.poll);
	assert_int_equal(seen.wait, 1);
	assert_int_equal(claims_gone, 1);
	conn_gone = 0;
	later.release(later.arg);
	r.conn = NULL;

	/* The deadline passed: 204, not parked again. */
	query_wait = "1";
	memset(&res, 0, sizeof(res));
	api_handle(&res, &r, NULL);
	assert_int_equal(res.status, 0);
	assert_true(res.later.wait.until <= now_ms() + 1000);
	later = res.later;
	usleep(1100 * 1000);
	memset(&again, 0, sizeof(again));
	later.poll(&again, later.arg, 0);
	assert_int_equal(again.status, 204);
	later.release(later.arg);
}

/* --- validation ---------------------------------------------------------- */

#define JOB "\"repo\": \"demo\", \"good\": \"v1.0\", \"bad\": \"main\", \"workload\": \"bench\""

static void test_job_defaults(void **state)
{
	(void)state;
	expect("POST", "/api/v1/jobs", "{" JOB ", \"pool\": null}", 201, "job_create", NULL);
	assert_string_equal(seen.job_repo, "demo");
	assert_string_equal(seen.job_policy, "bisectd");
	assert_int_equal(seen.job.runs, 0);    /* the coordinator's default */
	assert_true(seen.job.confidence == 0.99 && seen.job.alpha == 0.01 && seen.job.min_effect == 0.01);
	assert_int_equal(seen.job.budget_runs, 0);
	assert_int_equal(seen.job.budget_seconds, 0);
	expect("POST", "/api/v1/jobs", "{" JOB ", \"runs\": 7, \"policy\": \"split\", \"confidence\": 0.9, "
	       "\"budget_seconds\": 3600, \"direction\": \"lower\", \"append\": \"mitigations=off nosmt\"}",
	       201, "job_create", NULL);
	assert_int_equal(seen.job.runs, 7);
	assert_string_equal(seen.job_policy, "split");
	assert_true(seen.job.confidence == 0.9);
	assert_int_equal(seen.job.budget_seconds, 3600);
}

static void test_job_refused(void **state)
{
	static const struct { const char *body, *error; } bad[] = {
		{ "{" JOB ", \"colour\": 1}", "unknown field 'colour' (expected: repo, good, bad, workload, pool, runs," },
		{ "{\"good\": \"a\", \"bad\": \"b\", \"workload\": \"w\"}", "field 'repo' is required" },
		{ "{" JOB ", \"runs\": 0}", "runs" },
		{ "{" JOB ", \"runs\": 101}", "runs" },
		{ "{" JOB ", \"confidence\": 1}", "confidence" },
		{ "{" JOB ", \"budget_seconds\": 31536001}", "budget_seconds" },
		{ "{" JOB ", \"append\": \"a  b\"}", "field 'append' must be kernel parameters" },
		{ "{" JOB ", \"append\": \"x;reboot\"}", "field 'append' must be kernel parameters" },
		{ "{" JOB ", \"policy\": \"guess\"}", "field 'policy' must be bisectd or split, not 'guess'" },
		{ "{" JOB ", \"direction\": \"up\"}", "field 'direction' must be higher or lower" },
		{ "{\"repo\": \"r\", \"good\": \"\", \"bad\": \"b\", \"workload\": \"w\"}",
		  "fields 'good' and 'bad' must name commits" },
		/* The checks run in order: the policy is refused before the direction. */
		{ "{" JOB ", \"policy\": \"guess\", \"direction\": \"up\"}", "field 'policy'" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect("POST", "/api/v1/jobs", bad[i].body, 400, "", bad[i].error);
}

static void test_register(void **state)
{
	(void)state;
	expect("POST", "/api/v1/agents/register", "{\"name\": \"lab-1.x\", \"labels\": [\"kvm\", \"big\"]}", 200,
	       "agent_register", NULL);
	assert_string_equal(seen.name, "lab-1.x");
	assert_int_equal(seen.nr_labels, 2);
	expect("POST", "/api/v1/agents/register", "{\"name\": \"a b\"}", 400, "", "agent name 'a b' must be 1-64");
	expect("POST", "/api/v1/agents/register", "{}", 400, "", "field 'name' is required");
	expect("POST", "/api/v1/agents/register", "{\"name\": \"a\", \"labels\": \"kvm\"}", 400, "",
	       "field 'labels' must be an array of strings");
	expect("POST", "/api/v1/agents/register", "{\"name\": \"a\", \"labels\": null}", 400, "",
	       "field 'labels' must be an array of strings");
	expect("POST", "/api/v1/agents/register", "{\"name\": \"a\", \"labels\": [\"ok\", 3]}", 400, "",
	       "label 1 must be 1-64");
	expect("POST", "/api/v1/agents/register", "{\"name\": \"a\", \"labels\": [\"ok\", \"no/slash\"]}", 400, "",
	       "label 1 must be 1-64");
	expect("POST", "/api/v1/agents/register", "{\"name\": \"a\", \"labels\": [\"a\",\"a\",\"a\",\"a\",\"a\","
	       "\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
	       "\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\"]}", 400, "", "at most 32 labels");
	expect("POST", "/api/v1/agents/register", "{\"name\": \"a\", \"host\": \"x\"}", 400, "",
	       "unknown field 'host' (expected: name, labels)");
}

static void test_heartbeat(void **state)
{
	(void)state;
	expect("POST", "/api/v1/agents/a/heartbeat", "{\"task\": 5, \"attempt\": 2, \"progress\": \"building\"}", 200,
	       "agent_heartbeat", NULL);
	assert_int_equal(seen.hb.task, 5);
	assert_int_equal(seen.hb.attempt, 2);
	assert_string_equal(seen.progress, "building");
	expect("POST", "/api/v1/agents/a/heartbeat", "{\"task\": -1}", 400, "", "task");
	expect("POST", "/api/v1/agents/a/heartbeat", "{\"attempt\": 1001}", 400, "", "attempt");
	expect("POST", "/api/v1/agents/a/heartbeat", "{\"progress\": 3}", 400, "", "progress");
	/* The results it holds, not uploaded yet. */
	expect("POST", "/api/v1/agents/a/heartbeat", "{\"held\": [{\"task\": 7, \"attempt\": 1}, {\"task\": 9, "
	       "\"attempt\": 3}]}", 200, "agent_heartbeat", NULL);
	assert_int_equal(seen.hb.nr_held, 2);
	assert_int_equal(seen.hb.held[0].task, 7);
	assert_int_equal(seen.hb.held[0].attempt, 1);
	assert_int_equal(seen.hb.held[1].task, 9);
	assert_int_equal(seen.hb.held[1].attempt, 3);
	assert_int_equal(seen.hb.task, 0);
	expect("POST", "/api/v1/agents/a/heartbeat", "{\"held\": 7}", 400, "", "field 'held' must be an array");
	expect("POST", "/api/v1/agents/a/heartbeat", "{\"held\": [{\"task\": 7}]}", 400, "",
	       "field 'held': entry 0 must be");
	expect("POST", "/api/v1/agents/a/heartbeat", "{\"held\": [{\"task\": 7, \"attempt\": 1}, 3]}", 400, "",
	       "field 'held': entry 1 must be");
	expect("POST", "/api/v1/agents/a/heartbeat", "{\"held\": [{\"task\": 0, \"attempt\": 1}]}", 400, "",
	       "entry 0");
	{
		struct sbuf sb = SBUF_INIT;

		sbuf_adds(&sb, "{\"held\": [");
		for (int i = 0; i <= COORD_MAX_HELD; i++)
			sbuf_addf(&sb, "%s{\"task\": %d, \"attempt\": 1}", i ? ", " : "", i + 1);
		sbuf_adds(&sb, "]}");
		expect("POST", "/api/v1/agents/a/heartbeat", sb.buf, 400, "", "at most 64 tasks");
		sbuf_release(&sb);
	}
}

#define RES "\"agent\": \"a\", \"attempt\": 1"

static void test_result(void **state)
{
	static const struct { const char *body, *error; } bad[] = {
		{ "{" RES ", \"status\": \"ok\", \"samples\": []}", "status ok needs at least one sample" },
		{ "{" RES ", \"status\": \"great\"}", "field 'status' must be ok, skipped, failed or refused, not 'great'" },
		{ "{\"attempt\": 1, \"status\": \"ok\"}", "field 'agent' is required" },
		{ "{\"agent\": \"a\", \"status\": \"ok\"}", "field 'attempt' is required" },
		{ "{" RES ", \"status\": \"ok\", \"samples\": {}}", "field 'samples' must be an array" },
		{ "{" RES ", \"status\": \"ok\", \"samples\": [1]}", "sample 0 must be an object" },
		{ "{" RES ", \"status\": \"ok\", \"samples\": [{\"value\": 1}, {\"unit\": \"x\"}]}", "sample 1: " },
		{ "{" RES ", \"status\": \"failed\", \"log_tail\": 5}", "field 'log_tail' must be a string" },
		{ "{" RES ", \"status\": \"failed\", \"stdout\": \"\"}", "unknown field 'stdout'" },
		{ "{" RES ", \"status\": \"failed\", \"build_seconds\": -1}", "build_seconds" },
		{ "{" RES ", \"status\": \"failed\", \"profile\": \"text\"}", "field 'profile' must be {\"report\": TEXT}" },
		{ "{" RES ", \"status\": \"failed\", \"profile\": {\"report\": 5}}", "field 'profile' must be" },
	};
	struct sbuf big = SBUF_INIT;

	(void)state;
	expect("POST", "/api/v1/tasks/4/result", "{" RES ", \"status\": \"ok\", \"samples\": [{\"value\": 1.5}, "
	       "{\"value\": 2, \"unit\": \"Mb/s\"}], \"log_tail\": null}", 200, "task_result", NULL);
	assert_int_equal(seen.nr_samples, 2);
	assert_string_equal(seen.first_unit, "(null)");   /* absent: the job's unit */
	assert_string_equal(seen.profile, "(null)");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect("POST", "/api/v1/tasks/4/result", bad[i].body, 400, "", bad[i].error);
	/* A profile task's upload: perf report's text beside the samples, bounded. */
	expect("POST", "/api/v1/tasks/4/result", "{" RES ", \"status\": \"ok\", \"samples\": [{\"value\": 1}], "
	       "\"profile\": {\"report\": \"    1.00%  [k] tcf_pedit_act\\n\"}}", 200, "task_result", NULL);
	assert_string_equal(seen.profile, "    1.00%  [k] tcf_pedit_act\n");
	memset(seen.call, 0, sizeof(seen.call));
	sbuf_adds(&big, "{" RES ", \"status\": \"ok\", \"samples\": [{\"value\": 1}], \"profile\": {\"report\": \"");
	for (size_t i = 0; i <= PERFREPORT_MAX_TEXT; i += 8)
		sbuf_adds(&big, "  1.00% ");
	sbuf_adds(&big, "\"}}");
	expect("POST", "/api/v1/tasks/4/result", big.buf, 400, "", "the report must be at most");
	sbuf_release(&big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_write_hygiene, setup),
		cmocka_unit_test_setup(test_routes, setup),
		cmocka_unit_test_setup(test_created_report_and_empty_poll, setup),
		cmocka_unit_test_setup(test_chart_route, setup),
		cmocka_unit_test_setup(test_report_forms_and_export, setup),
		cmocka_unit_test_setup(test_unknown_routes, setup),
		cmocka_unit_test_setup(test_codes_of_errors, setup),
		cmocka_unit_test_setup(test_claim_wait, setup),
		cmocka_unit_test_setup(test_claim_parks, setup),
		cmocka_unit_test_setup(test_job_defaults, setup),
		cmocka_unit_test_setup(test_job_refused, setup),
		cmocka_unit_test_setup(test_register, setup),
		cmocka_unit_test_setup(test_heartbeat, setup),
		cmocka_unit_test_setup(test_result, setup),
		cmocka_unit_test_setup(test_dashboard_files, setup),
		cmocka_unit_test_setup(test_events_stream, setup),
		cmocka_unit_test_setup(test_events_changes, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
