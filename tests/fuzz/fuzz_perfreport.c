/*
 * fuzz_perfreport: `perf report --stdio` text as the coordinator reads an
 * agent's upload (perfreport_parse), the input's two halves as a parent's
 * and a culprit's profile, and their diff. A parse gives rows or an error,
 * never both; names are printable, unique and bounded; shares finite and
 * not negative; the diff is in order and within its bounds.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "fuzz.h"
#include "perfreport.h"

static void check_profile(const struct perf_profile *p, int rc)
{
	FUZZ_CHECK((rc == 0) == (p->n > 0), "rc %d with %zu rows", rc, p->n);
	FUZZ_CHECK(rc == 0 || rc == ERR_INVALID, "rc %d", rc);
	FUZZ_CHECK(p->n <= PERFREPORT_MAX_SYMS, "%zu rows", p->n);
	FUZZ_CHECK(memchr(p->event, 0, sizeof(p->event)), "event not terminated");
	for (size_t i = 0; i < p->n; i++) {
		const struct perf_sym *s = &p->syms[i];
		size_t len = strlen(s->name);

		FUZZ_CHECK(len > 0 && len < PERFREPORT_MAX_NAME, "name of %zu bytes", len);
		for (size_t k = 0; k < len; k++)
			FUZZ_CHECK(s->name[k] >= 0x20 && s->name[k] < 0x7f, "byte %#x in a name", s->name[k]);
		FUZZ_CHECK(isfinite(s->share) && s->share >= 0 && isfinite(s->self) && s->self >= 0,
			   "share %g self %g", s->share, s->self);
		FUZZ_CHECK(strchr("k.guH", s->level) && s->level, "level %#x", s->level);
		FUZZ_CHECK(perfreport_find(p, s->name) == s, "name '%s' twice", s->name);
	}
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct perf_profile a, b;
	struct perf_delta *d;
	size_t n, half = size / 2;
	int ra = perfreport_parse(&a, (const char *)data, half);
	int rb = perfreport_parse(&b, (const char *)data + half, size - half);

	check_profile(&a, ra);
	check_profile(&b, rb);
	FUZZ_CHECK(perfreport_diff(&d, &n, &a, &b, 20, 0.1) == 0, "diff failed");
	FUZZ_CHECK(n <= 20 && n <= a.n + b.n, "%zu deltas of %zu + %zu", n, a.n, b.n);
	for (size_t i = 0; i < n; i++) {
		double c = fabs(d[i].after - d[i].before);

		FUZZ_CHECK(c >= 0.1, "change %g under the minimum", c);
		FUZZ_CHECK(!i || fabs(d[i - 1].after - d[i - 1].before) >= c, "delta %zu out of order", i);
		FUZZ_CHECK((!perfreport_find(&a, d[i].name) || perfreport_find(&a, d[i].name)->share == d[i].before) &&
			   (!perfreport_find(&b, d[i].name) || perfreport_find(&b, d[i].name)->share == d[i].after),
			   "delta %zu: '%s' %g -> %g not the profiles'", i, d[i].name, d[i].before, d[i].after);
	}
	free(d);
	perfreport_release(&a);
	perfreport_release(&b);
	return 0;
}
