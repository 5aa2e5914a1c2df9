/*
 * fuzz_pktgen: /proc/net/pktgen/<dev> after a run, as an agent reads it
 * (netparse_pktgen, then a sample in each metric). A parse that succeeds
 * gives a positive rate consistent with the Result line; one that fails
 * says why, and so does its sample.
 */
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "fuzz.h"
#include "netparse.h"

static const char *const metrics[] = { "pps", "Kpps", "Mpps", "bps", "Mb/s", "Mb/sec", "parsecs", NULL };

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct pktgen_result r;
	unsigned long long parts;
	int rc = netparse_pktgen(&r, (const char *)data, size);

	FUZZ_CHECK(memchr(r.error, 0, sizeof(r.error)), "error not terminated");
	if (rc == 0) {
		FUZZ_CHECK(!r.error[0], "success with error '%s'", r.error);
		FUZZ_CHECK(r.pps > 0 && r.bps > 0, "pps %llu bps %llu", r.pps, r.bps);
		/* elapsed - idle and idle, each truncated to microseconds: one apart at most */
		FUZZ_CHECK(!__builtin_add_overflow(r.busy_us, r.idle_us, &parts) &&
			   (parts > r.duration_us ? parts - r.duration_us : r.duration_us - parts) <= 1,
			   "c%llu + d%llu vs %llu", r.busy_us, r.idle_us, r.duration_us);
	} else {
		FUZZ_CHECK(rc == NETPARSE_ERR_RUN || rc == ERR_INVALID, "rc %d", rc);
		FUZZ_CHECK(r.error[0], "failure without error");
	}
	for (const char *const *m = metrics; *m; m++) {
		struct run_sample s;
		int src = netparse_pktgen_sample(&s, &r, *m);

		FUZZ_CHECK(isfinite(s.value), "value %g", s.value);
		if (src == 0 && rc == 0)
			FUZZ_CHECK(s.value > 0 && !s.error[0] && s.extra, "sample %g '%s'", s.value, s.error);
		else
			FUZZ_CHECK(s.value == 0 && s.error[0] && !s.extra, "failed sample %g", s.value);
		json_decref(s.extra);
	}
	return 0;
}
