/*
 * fuzz_iperf3: the output of `iperf3 -J` as an agent reads it
 * (netparse_iperf3, then a sample in each unit). A parse that succeeds
 * gives a positive, finite rate; one that fails says why, and so does its
 * sample.
 */
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "fuzz.h"
#include "netparse.h"

static const char *const units[] = { "bits/s", "Mbits/s", "KBytes/s", "GBytes/sec", "furlongs", NULL };

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct iperf3_result r;
	int rc = netparse_iperf3(&r, (const char *)data, size);

	FUZZ_CHECK(memchr(r.error, 0, sizeof(r.error)), "error not terminated");
	if (rc == 0) {
		FUZZ_CHECK(!r.error[0], "success with error '%s'", r.error);
		FUZZ_CHECK(isfinite(r.bits_per_second) && r.bits_per_second > 0, "rate %g", r.bits_per_second);
		FUZZ_CHECK(isfinite(r.duration) && isfinite(r.bytes), "duration %g bytes %g", r.duration, r.bytes);
		FUZZ_CHECK(r.protocol >= NETPARSE_TCP && r.protocol <= NETPARSE_SCTP, "protocol %d", r.protocol);
	} else {
		FUZZ_CHECK(rc == NETPARSE_ERR_RUN || rc == ERR_INVALID, "rc %d", rc);
		FUZZ_CHECK(r.error[0], "failure without error");
	}
	for (const char *const *u = units; *u; u++) {
		struct run_sample s;
		int src = netparse_iperf3_sample(&s, &r, *u);

		FUZZ_CHECK(isfinite(s.value), "value %g", s.value);
		if (src == 0 && rc == 0)
			FUZZ_CHECK(s.value > 0 && !s.error[0] && s.extra, "sample %g '%s'", s.value, s.error);
		else
			FUZZ_CHECK(s.value == 0 && s.error[0] && !s.extra, "failed sample %g", s.value);
		json_decref(s.extra);
	}
	return 0;
}
