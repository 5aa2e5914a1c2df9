/*
 * fuzz_kconfig: kernel config fragments (kconfig.h), which the coordinator
 * reads from kconfig_dir and the agents get in each task. The input is
 * two fragments, split at its first "\n--\n" (or one); the second is
 * parsed on top of the first. Whatever parses formats back into a
 * fragment that parses to the same options, the same hash, and that
 * kconfig_verify() finds as requested.
 */
#include <string.h>

#include "err.h"
#include "fuzz.h"
#include "kconfig.h"

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

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct kconfig kc = KCONFIG_INIT, back = KCONFIG_INIT;
	struct kconfig_overrides ov = KCONFIG_OVERRIDES_INIT;
	const char *text = (const char *)data, *sep = memmem(text, size, "\n--\n", 4);
	size_t first = sep ? (size_t)(sep - text) + 1 : size;
	char *formatted = NULL, buf[512];
	int rc;

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
