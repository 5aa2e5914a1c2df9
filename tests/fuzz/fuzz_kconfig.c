/*
 * fuzz_kconfig: kernel config fragments (kconfig.h), which the coordinator
 * reads from kconfig_dir and the agents get in each task. The input is
 * two fragments, split at its first "\n--\n" (or one); the second is
 * parsed on top of the first. Whatever parses formats back into a
 * fragment that parses to the same options, the same hash, and that
 * kconfig_verify() finds as requested. Each line that kconfig_job_check()
 * takes as a job's option (bisectctl submit --config) parses as a
 * fragment line to the same option.
 */
#include <string.h>

#include "err.h"
#include "fuzz.h"
#include "kconfig.h"
#include "util.h"

static void same(const struct kconfig *a, const struct kconfig *b)
{
	char ha[KCONFIG_HASH_HEX + 1], hb[KCONFIG_HASH_HEX + 1];
	char *report = NULL;

	FUZZ_CHECK(a->nr == b->nr, "%zu options formatted, %zu read back", a->nr, b->nr);
	for (size_t i = 0; i < a->nr; i++) {
		const struct kconfig_opt *o = kconfig_get(b, a->opt[i].name);

		FUZZ_CHECK(kconfig_get(a, a->opt[i].name) == &a->opt[i], "%s: not found by name", a->opt[i].name);
		FUZZ_CHECK(o && !strcmp(o->value, a->opt[i].value), "%s=%s read back as %s", a->opt[i].name,
			   a->opt[i].value, o ? o->value : "(absent)");
	}
	kconfig_hash(ha, a, "tinyconfig");
	kconfig_hash(hb, b, "tinyconfig");
	FUZZ_CHECK(!strcmp(ha, hb), "hash %s, read back %s", ha, hb);
	FUZZ_CHECK(kconfig_verify(&report, a, b) == 0, "verify: %s", report ? report : err_msg());
	free(report);
}

/* Each line a job's option: what the job check takes, the fragment parser reads alike. */
static void job_lines(const char *text, size_t size)
{
	const char *p = text, *end = text + size;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *line = xstrndup(p, n);
		struct kconfig job = KCONFIG_INIT, frag = KCONFIG_INIT;
		const char *opts[1] = { line };

		if (strlen(line) == n && kconfig_job_check(line) == 0) {
			FUZZ_CHECK(kconfig_job_parse(&job, opts, 1) == 0 && job.nr == 1, "job parse: %s", err_msg());
			FUZZ_CHECK(kconfig_parse(&frag, NULL, line, n, "job") == 0 && frag.nr == 1,
				   "'%s' is a job's option but no fragment line: %s", line, err_msg());
			FUZZ_CHECK(!strcmp(frag.opt[0].name, job.opt[0].name) &&
				   !strcmp(frag.opt[0].value, job.opt[0].value), "'%s' read two ways", line);
		} else if (strlen(line) == n) {
			FUZZ_CHECK(err_msg()[0], "'%s' refused without a message", line);
		}
		kconfig_release(&job);
		kconfig_release(&frag);
		free(line);
		p = nl ? nl + 1 : end;
	}
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct kconfig kc = KCONFIG_INIT, back = KCONFIG_INIT;
	struct kconfig_overrides ov = KCONFIG_OVERRIDES_INIT;
	const char *text = (const char *)data, *sep = memmem(text, size, "\n--\n", 4);
	size_t first = sep ? (size_t)(sep - text) + 1 : size;
	char *formatted = NULL, buf[512];
	int rc;

	job_lines(text, size);
	rc = kconfig_parse(&kc, &ov, text, first, "a.config");
	if (rc == 0 && sep)
		rc = kconfig_parse(&kc, &ov, sep + 4, size - first - 3, "b.config");
	if (rc) {
		FUZZ_CHECK(rc == ERR_INVALID && (!strncmp(err_msg(), "a.config:", 9) ||
						 !strncmp(err_msg(), "b.config:", 9)), "rc %d '%s'", rc, err_msg());
		goto out;
	}
	for (size_t i = 0; i < ov.nr; i++)
		FUZZ_CHECK(kconfig_override_describe(&ov.v[i], buf, sizeof(buf)) && memchr(buf, 0, sizeof(buf)),
			   "override %zu", i);
	formatted = kconfig_format(&kc, "fuzz\nheader");
	rc = kconfig_parse(&back, NULL, formatted, strlen(formatted), "formatted");
	FUZZ_CHECK(rc == 0, "the formatted fragment does not parse: %s\n%s", err_msg(), formatted);
	same(&kc, &back);
out:
	free(formatted);
	kconfig_release(&kc);
	kconfig_release(&back);
	kconfig_overrides_release(&ov);
	return 0;
}
