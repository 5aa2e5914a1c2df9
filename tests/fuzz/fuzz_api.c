/*
 * fuzz_api: a request body as the API reads it (api.c's body_json):
 * jsonx_parse_object, then each parser of api_req.h over the same object
 * (job submit, agent register, heartbeat, results upload). Whatever it
 * accepts must be within the bounds docs/API.md gives; whatever it
 * refuses must say why.
 */
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "api_req.h"
#include "err.h"
#include "fuzz.h"
#include "jsonx.h"
#include "kconfig.h"

/* The coordinator's policy table (coord_steps.c) without the coordinator. */
int coord_policy_valid(const char *name)
{
	return !strcmp(name, "bisectd") || !strcmp(name, "split");
}

const char *coord_policy_names(void)
{
	return "bisectd or split";
}

#define REFUSED(rc) FUZZ_CHECK((rc) == ERR_INVALID && err_msg()[0], "rc %d, message '%s'", (rc), err_msg())

static int str_ok(const char *s, size_t max)
{
	return s && strlen(s) <= max;
}

static void job(json_t *body)
{
	struct job_request r;
	int rc = api_req_job(&r, body);

	if (rc) {
		REFUSED(rc);
		return;
	}
	FUZZ_CHECK(str_ok(r.repo, 64) && str_ok(r.good, 256) && *r.good && str_ok(r.bad, 256) && *r.bad &&
		   str_ok(r.workload, 64) && (!r.pool || str_ok(r.pool, 64)) && str_ok(r.policy, 16),
		   "a string out of bounds");
	FUZZ_CHECK(r.runs >= 0 && r.runs <= 100, "runs %lld", r.runs);
	FUZZ_CHECK(r.confidence >= 0.5 && r.confidence <= 0.999999, "confidence %g", r.confidence);
	FUZZ_CHECK(r.alpha >= 1e-6 && r.alpha <= 0.5, "alpha %g", r.alpha);
	FUZZ_CHECK(r.min_effect >= 0 && r.min_effect <= 0.9, "min_effect %g", r.min_effect);
	FUZZ_CHECK(!r.direction || !strcmp(r.direction, "higher") || !strcmp(r.direction, "lower"),
		   "direction '%s'", r.direction);
	FUZZ_CHECK(!r.append || (str_ok(r.append, 256) && !strchr(r.append, '\n') && !strchr(r.append, '\'')),
		   "append '%s'", r.append);
	if (r.config) {
		json_t *x;
		size_t i;

		FUZZ_CHECK(json_is_array(r.config) && json_array_size(r.config) >= 1 &&
			   json_array_size(r.config) <= KCONFIG_JOB_MAX, "config of %zu", json_array_size(r.config));
		json_array_foreach(r.config, i, x) {
			const char *o = json_string_value(x);

			FUZZ_CHECK(o && json_string_length(x) == strlen(o) && kconfig_job_check(o) == 0 &&
				   !strchr(o, '\n'), "config option %zu", i);
		}
	}
}

static void reg(json_t *body)
{
	struct register_request r;
	int rc = api_req_register(&r, body);

	if (rc) {
		REFUSED(rc);
		return;
	}
	FUZZ_CHECK(str_ok(r.name, 64) && *r.name, "name");
	FUZZ_CHECK(r.nr_labels <= COORD_MAX_LABELS, "%zu labels", r.nr_labels);
	for (size_t i = 0; i < r.nr_labels; i++) {
		json_t *l = json_array_get(json_object_get(body, "labels"), i);

		FUZZ_CHECK(str_ok(r.labels[i], 64) && *r.labels[i], "label %zu", i);
		/* What was checked is all the label: no bytes hidden behind a NUL. */
		FUZZ_CHECK(json_string_length(l) == strlen(r.labels[i]), "label %zu: %zu bytes, %zu checked", i,
			   json_string_length(l), strlen(r.labels[i]));
	}
}

static void heartbeat(json_t *body)
{
	struct heartbeat_request r;
	int rc = api_req_heartbeat(&r, body);

	if (rc) {
		REFUSED(rc);
		return;
	}
	FUZZ_CHECK(r.task >= 0 && r.attempt >= 0 && r.attempt <= 1000, "task %lld attempt %lld", r.task, r.attempt);
	FUZZ_CHECK(!r.progress || str_ok(r.progress, 200), "progress");
}

static void result(json_t *body)
{
	struct result_request r;
	int rc = api_req_result(&r, body);

	if (rc) {
		REFUSED(rc);
		goto out;
	}
	FUZZ_CHECK(str_ok(r.agent, 64) && r.attempt >= 1 && r.attempt <= 1000, "agent, attempt");
	FUZZ_CHECK(!strcmp(r.status, "ok") || !strcmp(r.status, "skipped") || !strcmp(r.status, "failed"),
		   "status '%s'", r.status);
	FUZZ_CHECK(r.nr_samples <= 1000 && (strcmp(r.status, "ok") || r.nr_samples > 0), "%zu samples",
		   r.nr_samples);
	FUZZ_CHECK(isfinite(r.build_s) && isfinite(r.run_s), "seconds");
	for (size_t i = 0; i < r.nr_samples; i++) {
		FUZZ_CHECK(isfinite(r.samples[i].value), "sample %zu", i);
		FUZZ_CHECK(!r.samples[i].unit || strlen(r.samples[i].unit) <= 32, "sample %zu unit", i);
	}
	FUZZ_CHECK(!r.log_tail || strlen(r.log_tail) <= 65536, "log_tail");
out:
	free(r.samples);
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	json_t *body = NULL;
	int rc = jsonx_parse_object(&body, (const char *)data, size, 1 << 20);

	if (rc) {
		REFUSED(rc);
		FUZZ_CHECK(!body, "a body on failure");
		return 0;
	}
	job(body);
	reg(body);
	heartbeat(body);
	result(body);
	json_decref(body);
	return 0;
}
