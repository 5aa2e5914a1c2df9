/*
 * fuzz_taskwire: a claim reply as the agent reads it (taskwire_decode).
 * What it accepts the coordinator's encoder must also accept, and the
 * encoded reply must decode to the same task.
 */
#include <string.h>

#include <jansson.h>

#include "err.h"
#include "fuzz.h"
#include "taskwire.h"

static void same(const struct task_wire *a, const struct task_wire *b)
{
	FUZZ_CHECK(a->task == b->task && a->attempt == b->attempt && a->job == b->job && a->runs == b->runs &&
		   a->lease == b->lease && a->build_timeout == b->build_timeout, "numbers differ");
	FUZZ_CHECK(!strcmp(a->commit, b->commit) && !strcmp(a->repo_name, b->repo_name) &&
		   !strcmp(a->repo_url, b->repo_url) && !strcmp(a->type, b->type) && !strcmp(a->boot, b->boot),
		   "strings differ");
	FUZZ_CHECK(json_equal(a->workload, b->workload), "workload differs");
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct task_wire t, t2;
	json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL), *enc = NULL;
	int rc;

	if (!j)
		return 0;
	rc = taskwire_decode(&t, j);
	if (rc) {
		FUZZ_CHECK(rc == ERR_INVALID && err_msg()[0], "rc %d '%s'", rc, err_msg());
		/* Set only when both were read: the agent reports the task failed with them. */
		FUZZ_CHECK((t.task == 0) == (t.attempt == 0), "task %lld attempt %lld", t.task, t.attempt);
		goto out;
	}
	FUZZ_CHECK(t.task >= 1 && t.attempt >= 1 && t.runs >= 1 && t.runs <= TASKWIRE_MAX_RUNS, "bounds");
	FUZZ_CHECK(strlen(t.commit) == 40 && strlen(t.repo_name) <= TASKWIRE_MAX_NAME && t.type && t.boot,
		   "strings");
	rc = taskwire_encode(&enc, &t);
	FUZZ_CHECK(rc == 0 && enc, "decoded but not encodable: %s", err_msg());
	rc = taskwire_decode(&t2, enc);
	FUZZ_CHECK(rc == 0, "encoded but not decodable: %s", err_msg());
	same(&t, &t2);
out:
	json_decref(enc);
	json_decref(j);
	return 0;
}
