/* api_req: request bodies into structs, every field checked. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "api_req.h"
#include "err.h"
#include "jsonx.h"
#include "kconfig.h"
#include "perfreport.h"
#include "util.h"

static int check_keys(json_t *req, const char *const *allowed)
{
	const char *key;
	json_t *v;

	json_object_foreach(req, key, v) {
		const char *const *a;

		for (a = allowed; *a; a++)
			if (!strcmp(*a, key))
				break;
		if (!*a) {
			struct sbuf sb = SBUF_INIT;
			int rc;

			for (a = allowed; *a; a++)
				sbuf_addf(&sb, "%s%s", a == allowed ? "" : ", ", *a);
			rc = err_set(ERR_INVALID, "unknown field '%.64s' (expected: %s)", key, sb.buf);
			sbuf_release(&sb);
			return rc;
		}
	}
	return 0;
}

/*
 * A job's kernel command line variant: words of letters, digits and
 * "_.,=:/+-" separated by single spaces, so that it stays one line of
 * parameters ("mitigations=off nosmt") and nothing a shell or the
 * initramfs could read otherwise.
 */
static int check_append(const char *append)
{
	if (!append)
		return 0;
	if (!*append || *append == ' ' || append[strlen(append) - 1] == ' ' || strstr(append, "  "))
		goto bad;
	for (const char *p = append; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_.,=:/+- ", *p))
			goto bad;
	return 0;
bad:
	return err_set(ERR_INVALID, "field 'append' must be kernel parameters such as \"mitigations=off nosmt\": "
		       "words of A-Z a-z 0-9 _ . , = : / + - separated by single spaces");
}

/*
 * A job's kernel config variant: an array of "CONFIG_X=value" strings,
 * each checked as the agent will (kconfig_job_parse()), no name twice.
 * An empty array is none.
 */
static int check_config(json_t **out, json_t *req)
{
	json_t *a = json_object_get(req, "config"), *x;
	const char *opts[KCONFIG_JOB_MAX];
	struct kconfig kc = KCONFIG_INIT;
	size_t i;
	int rc;

	*out = NULL;
	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a))
		return err_set(ERR_INVALID, "field 'config' must be an array of kernel config options such as "
			       "[\"CONFIG_MITIGATION_RETPOLINE=n\"]");
	if (json_array_size(a) > KCONFIG_JOB_MAX)
		return err_set(ERR_INVALID, "field 'config': at most %d options, not %zu", KCONFIG_JOB_MAX,
			       json_array_size(a));
	json_array_foreach(a, i, x) {
		if (!(opts[i] = json_string_value(x)))
			return err_set(ERR_INVALID, "field 'config': option %zu is not a string", i + 1);
		/* What is checked is the whole string: no bytes behind a NUL. */
		if (json_string_length(x) != strlen(opts[i]))
			return err_set(ERR_INVALID, "field 'config': option %zu has a NUL byte", i + 1);
	}
	rc = kconfig_job_parse(&kc, opts, json_array_size(a));
	kconfig_release(&kc);
	if (rc)
		return err_set(ERR_INVALID, "field 'config': %s", err_msg());
	if (json_array_size(a))
		*out = a;
	return 0;
}

int api_req_job(struct job_request *out, json_t *req)
{
	static const char *const allowed[] = { "repo", "good", "bad", "workload", "pool", "runs", "policy",
					       "confidence", "alpha", "min_effect", "budget_runs", "budget_builds",
					       "budget_seconds", "direction", "append", "config", "end_runs", NULL };
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = check_keys(req, allowed)) ||
	    (rc = jsonx_str(&out->repo, req, "repo", 64, 1, NULL)) ||
	    (rc = jsonx_str(&out->good, req, "good", 256, 1, NULL)) ||
	    (rc = jsonx_str(&out->bad, req, "bad", 256, 1, NULL)) ||
	    (rc = jsonx_str(&out->workload, req, "workload", 64, 1, NULL)) ||
	    (rc = jsonx_str(&out->pool, req, "pool", 64, 0, NULL)) ||
	    (rc = jsonx_int(&out->runs, req, "runs", 1, 100, 0, 0)) ||
	    (rc = jsonx_str(&out->policy, req, "policy", 16, 0, "bisectd")) ||
	    (rc = jsonx_num(&out->confidence, req, "confidence", 0.5, 0.999999, 0, 0.99)) ||
	    (rc = jsonx_num(&out->alpha, req, "alpha", 1e-6, 0.5, 0, 0.01)) ||
	    (rc = jsonx_num(&out->min_effect, req, "min_effect", 0, 0.9, 0, 0.01)) ||
	    (rc = jsonx_int(&out->budget_runs, req, "budget_runs", 0, 1000000, 0, 0)) ||
	    (rc = jsonx_int(&out->budget_builds, req, "budget_builds", 0, 1000000, 0, 0)) ||
	    (rc = jsonx_int(&out->budget_seconds, req, "budget_seconds", 0, COORD_BUDGET_S_MAX, 0, 0)) ||
	    (rc = jsonx_int(&out->end_runs, req, "end_runs", 0, COORD_END_RUNS_MAX, 0, 0)) ||
	    (rc = jsonx_str(&out->direction, req, "direction", 16, 0, NULL)) ||
	    (rc = jsonx_str(&out->append, req, "append", 256, 0, NULL)) ||
	    (rc = check_append(out->append)) ||
	    (rc = check_config(&out->config, req)))
		return rc;
	if (!coord_policy_valid(out->policy))
		return err_set(ERR_INVALID, "field 'policy' must be %s, not '%s'", coord_policy_names(), out->policy);
	if (out->direction && strcmp(out->direction, "higher") && strcmp(out->direction, "lower"))
		return err_set(ERR_INVALID, "field 'direction' must be higher or lower (which is better), not '%s'",
			       out->direction);
	if (!*out->good || !*out->bad)
		return err_set(ERR_INVALID, "fields 'good' and 'bad' must name commits");
	return 0;
}

int api_req_resume(long long *more_runs, long long *more_seconds, json_t *req)
{
	static const char *const allowed[] = { "more_runs", "more_seconds", NULL };
	int rc;

	if ((rc = check_keys(req, allowed)) ||
	    (rc = jsonx_int(more_runs, req, "more_runs", 1, 1000000, 0, 0)) ||
	    (rc = jsonx_int(more_seconds, req, "more_seconds", 1, COORD_BUDGET_S_MAX, 0, 0)))
		return rc;
	return 0;
}

int api_req_register(struct register_request *out, json_t *req)
{
	static const char *const allowed[] = { "name", "labels", NULL };
	json_t *labels, *l;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = check_keys(req, allowed)) || (rc = jsonx_str(&out->name, req, "name", 64, 1, NULL)))
		return rc;
	if (!is_valid_name(out->name))
		return err_set(ERR_INVALID, "agent name '%s' must be 1-64 of [A-Za-z0-9._-]", out->name);
	labels = json_object_get(req, "labels");
	if (labels && !json_is_array(labels))
		return err_set(ERR_INVALID, "field 'labels' must be an array of strings");
	if (json_array_size(labels) > COORD_MAX_LABELS)
		return err_set(ERR_INVALID, "at most %d labels", COORD_MAX_LABELS);
	json_array_foreach(labels, i, l) {
		if (!json_is_string(l) || !is_valid_name(json_string_value(l)))
			return err_set(ERR_INVALID, "label %zu must be 1-64 of [A-Za-z0-9._-]", i);
		out->labels[out->nr_labels++] = json_string_value(l);
	}
	return 0;
}

int api_req_heartbeat(struct heartbeat_request *out, json_t *req)
{
	json_t *held, *h;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = jsonx_int(&out->task, req, "task", 0, 1LL << 53, 0, 0)) ||
	    (rc = jsonx_int(&out->attempt, req, "attempt", 0, 1000, 0, 0)) ||
	    (rc = jsonx_str(&out->progress, req, "progress", 200, 0, NULL)))
		return rc;
	held = json_object_get(req, "held");
	if (held && !json_is_array(held))
		return err_set(ERR_INVALID, "field 'held' must be an array of {\"task\": ID, \"attempt\": N}");
	if (json_array_size(held) > COORD_MAX_HELD)
		return err_set(ERR_INVALID, "field 'held': at most %d tasks", COORD_MAX_HELD);
	json_array_foreach(held, i, h) {
		if (!json_is_object(h) ||
		    jsonx_int(&out->held[i].task, h, "task", 1, 1LL << 53, 1, 0) ||
		    jsonx_int(&out->held[i].attempt, h, "attempt", 1, 1000, 1, 0))
			return err_set(ERR_INVALID, "field 'held': entry %zu must be {\"task\": ID, \"attempt\": N} "
				       "with ID a task id and N from 1 to 1000", i);
		out->nr_held = i + 1;
	}
	return 0;
}

int api_req_result(struct result_request *out, json_t *req)
{
	static const char *const allowed[] = { "agent", "attempt", "status", "samples", "build_seconds",
					       "run_seconds", "error", "log_tail", "profile", NULL };
	json_t *samples, *x;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = check_keys(req, allowed)) ||
	    (rc = jsonx_str(&out->agent, req, "agent", 64, 1, NULL)) ||
	    (rc = jsonx_int(&out->attempt, req, "attempt", 1, 1000, 1, 0)) ||
	    (rc = jsonx_str(&out->status, req, "status", 16, 1, NULL)) ||
	    (rc = jsonx_num(&out->build_s, req, "build_seconds", 0, 1e7, 0, 0)) ||
	    (rc = jsonx_num(&out->run_s, req, "run_seconds", 0, 1e7, 0, 0)) ||
	    (rc = jsonx_str(&out->error, req, "error", 4096, 0, NULL)))
		return rc;
	/* A log tail may hold anything a compiler printed; bound it, keep it. */
	x = json_object_get(req, "log_tail");
	out->log_tail = json_is_string(x) ? json_string_value(x) : NULL;
	if (x && !json_is_string(x) && !json_is_null(x))
		return err_set(ERR_INVALID, "field 'log_tail' must be a string");
	if (out->log_tail && strlen(out->log_tail) > 65536)
		return err_set(ERR_INVALID, "field 'log_tail' must be at most 65536 bytes");
	/* A profile task's report (docs/API.md): bounded here, parsed by the coordinator. */
	x = json_object_get(req, "profile");
	if (x && !json_is_null(x)) {
		json_t *r = json_object_get(x, "report");

		if (!json_is_object(x) || !json_is_string(r))
			return err_set(ERR_INVALID, "field 'profile' must be {\"report\": TEXT}, TEXT what perf "
				       "report --stdio printed");
		if (strlen(json_string_value(r)) > PERFREPORT_MAX_TEXT)
			return err_set(ERR_INVALID, "field 'profile': the report must be at most %d bytes",
				       PERFREPORT_MAX_TEXT);
		out->profile_report = json_string_value(r);
	}
	if (strcmp(out->status, "ok") && strcmp(out->status, "skipped") && strcmp(out->status, "failed") &&
	    strcmp(out->status, "refused"))
		return err_set(ERR_INVALID, "field 'status' must be ok, skipped, failed or refused, not '%s'",
			       out->status);
	samples = json_object_get(req, "samples");
	if (samples && !json_is_array(samples))
		return err_set(ERR_INVALID, "field 'samples' must be an array");
	if (json_array_size(samples) > 1000)
		return err_set(ERR_INVALID, "at most 1000 samples per upload");
	if (!strcmp(out->status, "ok") && json_array_size(samples) == 0)
		return err_set(ERR_INVALID, "status ok needs at least one sample");
	out->samples = xcalloc(json_array_size(samples) + 1, sizeof(*out->samples));
	json_array_foreach(samples, i, x) {
		struct result_sample *r = &out->samples[i];
		const char *u, *e;

		if (!json_is_object(x))
			return err_set(ERR_INVALID, "sample %zu must be an object", i);
		if (jsonx_num(&r->value, x, "value", -1e300, 1e300, 1, 0) || jsonx_str(&u, x, "unit", 32, 0, "") ||
		    jsonx_str(&e, x, "error", 1024, 0, NULL))
			return err_set(ERR_INVALID, "sample %zu: %s", i, err_msg());
		/* What the agent sent: an absent or null unit is the job's. */
		r->unit = json_string_value(json_object_get(x, "unit"));
		r->error = json_string_value(json_object_get(x, "error"));
		out->nr_samples++;
	}
	return 0;
}
