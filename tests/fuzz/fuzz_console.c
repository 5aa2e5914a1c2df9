/*
 * fuzz_console: a guest's serial console as the agent reads it
 * (qemu_parse_console, agents/qemu.h). The kernel under test prints what
 * it likes, so any bytes may come; the first byte of the input picks how
 * many runs are expected (1..QEMU_MAX_RUNS). A run is present with its
 * text or absent without, runs count only after READY, and complete
 * means every run is present.
 */
#include <string.h>

#include "fuzz.h"
#include "qemu.h"

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct qemu_console c;
	int nruns, all = 1, rc;

	if (size < 1)
		return 0;
	nruns = 1 + data[0] % QEMU_MAX_RUNS;
	rc = qemu_parse_console(&c, (const char *)data + 1, size - 1, nruns);
	FUZZ_CHECK(rc == 0, "rc %d for %d runs", rc, nruns);
	FUZZ_CHECK(c.nruns == nruns && c.runs, "%d runs, %d expected", c.nruns, nruns);
	for (int i = 0; i < c.nruns; i++) {
		const struct qemu_run *r = &c.runs[i];

		FUZZ_CHECK(!r->present || c.ready, "run %d present without READY", i + 1);
		FUZZ_CHECK(!!r->present == !!r->text, "run %d: present %d, text %p", i + 1, r->present,
			   (const void *)r->text);
		FUZZ_CHECK(r->rc >= -1 && r->rc <= 255, "run %d: rc %d", i + 1, r->rc);
		FUZZ_CHECK(!r->text || strlen(r->text) <= size, "run %d: more text than input", i + 1);
		all &= !!r->present;
	}
	FUZZ_CHECK(c.complete == all, "complete %d, every run present %d", c.complete, all);
	FUZZ_CHECK(!c.done || c.ready, "DONE without READY");
	qemu_console_release(&c);
	return 0;
}
