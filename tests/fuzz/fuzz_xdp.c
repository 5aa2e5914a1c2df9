/*
 * fuzz_xdp: xdp-bench's output as an agent reads it (xdp_parse, then a
 * sample in each metric and mode). A parse that succeeds gives a positive
 * average beside its count; one that fails says why, and so does its
 * sample. The number reader runs on the input too.
 */
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "err.h"
#include "fuzz.h"
#include "util.h"
#include "xdp.h"

static const char *const metrics[] = { "pps", "redir_pps", "xmit_pps", "parsecs", NULL };
static const char *const modes[] = { "drop", "redirect", NULL };

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct xdp_result r;
	int rc = xdp_parse(&r, (const char *)data, size);
	char *text;
	size_t used;
	double v;

	FUZZ_CHECK(memchr(r.error, 0, sizeof(r.error)), "error not terminated");
	FUZZ_CHECK(memchr(r.heading, 0, sizeof(r.heading)), "heading not terminated");
	FUZZ_CHECK(memchr(r.warning, 0, sizeof(r.warning)), "warning not terminated");
	if (rc == 0) {
		FUZZ_CHECK(!r.error[0], "success with error '%s'", r.error);
		FUZZ_CHECK(r.rx_pps > 0 && isfinite(r.rx_pps) && r.rx_packets >= 0, "pps %g packets %g",
			   r.rx_pps, r.rx_packets);
		FUZZ_CHECK((r.redir_pps < 0) == (r.redir_packets < 0), "redir %g %g", r.redir_pps, r.redir_packets);
		FUZZ_CHECK((r.xmit_pps < 0) == (r.xmit_packets < 0), "xmit %g %g", r.xmit_pps, r.xmit_packets);
		FUZZ_CHECK(r.duration_s > 0 || r.intervals > 0, "no duration and no intervals");
	} else {
		FUZZ_CHECK(rc == ERR_UNPROCESSABLE || rc == ERR_INVALID, "rc %d", rc);
		FUZZ_CHECK(r.error[0], "failure without error");
	}
	for (const char *const *m = metrics; *m; m++) {
		for (const char *const *md = modes; *md; md++) {
			struct run_sample s;
			int src = xdp_sample(&s, &r, *md, *m);

			FUZZ_CHECK(isfinite(s.value) && s.value >= 0, "value %g", s.value);
			FUZZ_CHECK(!strcmp(s.unit, XDP_UNIT), "unit %s", s.unit);
			if (src == 0 && s.value > 0)
				FUZZ_CHECK(rc == 0 && !s.error[0] && s.extra, "sample %g '%s'", s.value, s.error);
			else
				FUZZ_CHECK(s.value == 0 && s.error[0] && !s.extra, "failed sample %g", s.value);
			json_decref(s.extra);
		}
	}
	/* The number reader on the same bytes, NUL-terminated. */
	text = xstrndup((const char *)data, size);
	if (xdp_parse_number(&v, &used, text) == 0)
		FUZZ_CHECK(used > 0 && used <= strlen(text) && isfinite(v) && v >= 0, "number %g used %zu", v, used);
	else
		FUZZ_CHECK(v == 0 && used == 0, "failed number %g used %zu", v, used);
	free(text);
	return 0;
}
