/*
 * fuzz_journal: a kexec journal as the agent reads it after a boot
 * (journal_parse), and the bisect.build= marker of a command line
 * (journal_cmdline_marker). What parses must parse again, to the same
 * fields, once written out (journal_save writes json_dumps of it).
 */
#include <string.h>

#include <jansson.h>

#include "err.h"
#include "fuzz.h"
#include "journal.h"
#include "util.h"

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct journal j, k;
	char *text = xstrndup((const char *)data, size), *out = NULL;
	char marker[JOURNAL_BUILD_ID_LEN + 1];
	int rc = journal_cmdline_marker(marker, text);

	FUZZ_CHECK(rc == 0 || rc == ERR_NOTFOUND || rc == ERR_INVALID, "marker rc %d", rc);
	FUZZ_CHECK(rc != 0 || journal_build_id_ok(marker), "marker '%s' accepted", marker);
	FUZZ_CHECK(rc == 0 || !marker[0], "marker '%s' set on failure", marker);

	rc = journal_parse(&j, (const char *)data, size);
	if (rc) {
		FUZZ_CHECK(rc == ERR_INVALID && err_msg()[0] && !j.root, "rc %d '%s'", rc, err_msg());
		goto out;
	}
	FUZZ_CHECK(j.task >= 1 && j.attempt >= 1 && journal_build_id_ok(j.build_id) && j.image[0] == '/' &&
		   json_is_object(j.claim) && json_is_array(j.samples), "fields");
	out = json_dumps(j.root, JSON_COMPACT);
	FUZZ_CHECK(out != NULL, "not encodable");
	rc = journal_parse(&k, out, strlen(out));
	FUZZ_CHECK(rc == 0, "written but not readable: %s", err_msg());
	FUZZ_CHECK(k.task == j.task && k.attempt == j.attempt && k.deadline == j.deadline &&
		   !strcmp(k.state, j.state) && !strcmp(k.cmdline, j.cmdline) &&
		   json_array_size(k.samples) == json_array_size(j.samples), "differs once written");
	journal_release(&k);
	journal_release(&j);
out:
	free(out);
	free(text);
	return 0;
}
