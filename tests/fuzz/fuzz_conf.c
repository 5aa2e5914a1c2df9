/*
 * fuzz_conf: a config file's text through both loaders (conf.h): bisectd's
 * and an agent's, from a buffer. A refusal names its place
 * ("fuzz.yaml:LINE:COL: ", within the text) and leaves nothing to free; an
 * accepted config has names that find their entries, and each workload's
 * definition, as bisectd sends it in a task, passes the agent's check.
 */
#include <ctype.h>
#include <string.h>

#include <jansson.h>

#include "conf.h"
#include "err.h"
#include "fuzz.h"
#include "workload.h"

#define NAME "fuzz.yaml"

/* "fuzz.yaml:LINE:COL: " with LINE within the text's lines (one past the last: its end), at most. */
static void check_place(const char *msg, const uint8_t *data, size_t size)
{
	const char *p = msg + strlen(NAME ":");
	unsigned long line, col, lines = 1;
	char *end;

	FUZZ_CHECK(!strncmp(msg, NAME ":", strlen(NAME ":")), "'%s' does not start with the file's name", msg);
	FUZZ_CHECK(isdigit((unsigned char)*p), "'%s' has no line", msg);
	line = strtoul(p, &end, 10);
	FUZZ_CHECK(*end == ':' && isdigit((unsigned char)end[1]), "'%s' has no column", msg);
	col = strtoul(end + 1, &end, 10);
	FUZZ_CHECK(!strncmp(end, ": ", 2), "'%s': no ': ' after the column", msg);
	/* YAML's line breaks: LF, CR, CR LF, and NEL, LS, PS (libyaml counts those too). */
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n' || (data[i] == '\r' && (i + 1 == size || data[i + 1] != '\n')) ||
			 data[i] == 0x85 || (data[i] == 0xa8 && i && data[i - 1] == 0x80) ||
			 (data[i] == 0xa9 && i && data[i - 1] == 0x80);
	FUZZ_CHECK(line >= 1 && line <= lines + 1 && col >= 1 && col <= size + 1, "'%s': %lu lines", msg, lines);
}

static void bisectd(const uint8_t *data, size_t size)
{
	struct conf_bisectd c;
	int rc = conf_bisectd_parse(&c, NAME, (const char *)data, size);

	if (rc) {
		FUZZ_CHECK(rc == ERR_INVALID || rc == ERR_FAIL, "rc %d", rc);
		if (rc == ERR_INVALID)
			check_place(err_msg(), data, size);
		FUZZ_CHECK(!c.listen && !c.repos && !c.workloads && !c.pools, "something left to free");
		return;
	}
	for (size_t i = 0; i < c.nr_repos; i++)
		FUZZ_CHECK(conf_repo_find(&c, c.repos[i].name) == &c.repos[i] && c.repos[i].url, "repo %zu", i);
	for (size_t i = 0; i < c.nr_pools; i++)
		FUZZ_CHECK(conf_pool_find(&c, c.pools[i].name) == &c.pools[i] && c.pools[i].labels, "pool %zu", i);
	for (size_t i = 0; i < c.nr_workloads; i++) {
		const struct conf_workload *w = &c.workloads[i];
		const struct workload_ops *ops = workload_find(w->type);
		json_t *def;

		FUZZ_CHECK(conf_workload_find(&c, w->name) == w && ops, "workload %zu", i);
		def = conf_workload_def(w, "quiet");
		FUZZ_CHECK(def, "workload '%s' has no definition", w->name);
		FUZZ_CHECK(workload_check_msg(ops, def) == 0, "workload '%s': the agent refuses bisectd's "
			   "definition: %s", w->name, err_msg());
		json_decref(def);
	}
	conf_bisectd_release(&c);
}

static void agent(const uint8_t *data, size_t size)
{
	struct conf_agent c;
	int rc = conf_agent_parse(&c, NAME, (const char *)data, size);

	if (rc) {
		FUZZ_CHECK(rc == ERR_INVALID || rc == ERR_FAIL, "rc %d", rc);
		if (rc == ERR_INVALID)
			check_place(err_msg(), data, size);
		FUZZ_CHECK(!c.name && !c.labels && !c.workdir && !c.coordinator, "something left to free");
		return;
	}
	FUZZ_CHECK(c.name && c.workdir && c.coordinator && c.labels, "a required value missing");
	conf_agent_release(&c);
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	/* conf_*_load() reads at most 1 MiB; bigger inputs only slow the search. */
	if (size > (1 << 16))
		return 0;
	bisectd(data, size);
	agent(data, size);
	return 0;
}
