/*
 * fuzz_workload: one run's output through each workload kind's parse()
 * (workload.h), with the definitions of the sample configs: command with a
 * pattern (the lab's, and one that lets strtod see anything), iperf3,
 * pktgen, trex, xdp; the run ended well or not. Every parse gives a sample: a
 * positive finite value without an error, or 0 with one.
 */
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "fuzz.h"
#include "util.h"
#include "workload.h"

static const char *const defs[] = {
	"{\"type\": \"command\", \"command\": [\"./bench\"], \"pattern\": \"throughput: ([0-9.]+)\", \"unit\": \"ops/s\"}",
	"{\"type\": \"command\", \"command\": [\"./bench\"], \"pattern\": \"= *([^ ]*)\"}",
	"{\"type\": \"command\", \"command\": [\"./bench\"], \"pattern\": \"[0-9]+\"}",
	"{\"type\": \"iperf3\", \"iperf3\": [\"-u\"], \"metric\": \"Gbits/s\"}",
	"{\"type\": \"pktgen\", \"metric\": \"Mpps\"}",
	"{\"type\": \"pktgen\", \"metric\": \"Mb/s\"}",
	"{\"type\": \"trex\", \"metric\": \"rx_mpps\"}",
	"{\"type\": \"xdp\", \"mode\": \"drop\", \"metric\": \"pps\"}",
	"{\"type\": \"xdp\", \"mode\": \"redirect\", \"metric\": \"xmit_pps\"}",
};

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);

	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		json_t *def = json_loads(defs[i], 0, NULL);
		const struct workload_ops *ops = workload_find(json_string_value(json_object_get(def, "type")));

		FUZZ_CHECK(def && ops && ops->parse, "definition %zu", i);
		for (int ok = 0; ok <= 1; ok++) {
			struct run_output o = { text, size, ok ? NULL : "stderr line\n", ok ? 0 : 12, ok,
						ok ? 0 : 3, ok ? "" : "exit 3" };
			struct run_sample s;

			ops->parse(&s, def, &o);
			FUZZ_CHECK(memchr(s.error, 0, sizeof(s.error)) && memchr(s.unit, 0, sizeof(s.unit)),
				   "strings not terminated");
			FUZZ_CHECK(isfinite(s.value), "%s: value %g", ops->name, s.value);
			FUZZ_CHECK((s.value > 0 && !s.error[0]) || (s.value == 0 && s.error[0]),
				   "%s: value %g, error '%s'", ops->name, s.value, s.error);
			/* (a guest kind reads its tool's own word on the run: iperf3's "error", pktgen's Result) */
			FUZZ_CHECK(ok || s.value == 0 || (ops->places & WORKLOAD_GUEST), "%s: a failed run gave %g",
				   ops->name, s.value);
			json_decref(s.extra);
		}
		json_decref(def);
	}
	free(text);
	return 0;
}
