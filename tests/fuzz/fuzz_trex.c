/*
 * fuzz_trex: what a TRex server (or a broken one) can send the trex
 * workload's client, and what the client can print to the agent: the
 * same bytes as one JSON-RPC reply (trex_reply_parse) and as the client's
 * output (trex_output_parse, in each metric). A reply gives a result or
 * a message, never both; an output gives a positive sample with its
 * rates, or a failed one that says why.
 */
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "err.h"
#include "fuzz.h"
#include "trex.h"
#include "workload.h"

static const char *const metrics[] = {
	"rx_pps", "tx_pps", "rx_mpps", "tx_mpps", "rx_bps", "tx_bps", "rx_gbps", "tx_gbps", "rx_pct", NULL
};

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	json_t *result = NULL;
	int rc = trex_reply_parse(&result, (const char *)data, size, 1);
	struct trex_counters c;

	if (rc == 0) {
		FUZZ_CHECK(result != NULL, "success without a result");
		trex_counters_parse(&c, result);
		json_decref(result);
	} else {
		FUZZ_CHECK(result == NULL, "failure %d with a result", rc);
		FUZZ_CHECK(rc == ERR_FAIL || rc == ERR_INVALID, "rc %d", rc);
		FUZZ_CHECK(err_msg()[0], "failure without a message");
	}
	for (const char *const *m = metrics; *m; m++) {
		struct run_sample s;

		rc = trex_output_parse(&s, (const char *)data, size, *m);
		FUZZ_CHECK(rc == 0 || rc == ERR_NOTFOUND, "rc %d for %s", rc, *m);
		FUZZ_CHECK(memchr(s.error, 0, sizeof(s.error)), "error not terminated");
		FUZZ_CHECK(isfinite(s.value) && s.value >= 0, "value %g", s.value);
		if (s.value > 0)
			FUZZ_CHECK(!s.error[0] && s.extra && rc == 0, "sample %g '%s'", s.value, s.error);
		else
			FUZZ_CHECK(s.error[0] && !s.extra, "failed sample without a reason");
		FUZZ_CHECK(!strcmp(s.unit, trex_metric_unit(*m)), "unit '%s' for %s", s.unit, *m);
		json_decref(s.extra);
	}
	return 0;
}
