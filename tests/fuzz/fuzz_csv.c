/*
 * fuzz_csv: the CSV export's fields (csv.h) read back. There is no CSV
 * reader in bisectd (the export only writes), so this target carries a
 * strict RFC 4180 one: a field csv_field() writes must read back as the
 * same string, and a double csv_double() writes as the same double.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "fuzz.h"
#include "util.h"

/* One RFC 4180 field of s (all of it); a new string, or NULL when s is not exactly one field. */
static char *read_field(const char *s)
{
	struct sbuf out = SBUF_INIT;

	if (*s != '"') {
		if (strpbrk(s, ",\"\r\n"))
			return NULL;
		return xstrdup(s);
	}
	for (s++; *s; s++) {
		if (*s == '"') {
			if (s[1] != '"')
				break;
			s++;
		}
		sbuf_add(&out, s, 1);
	}
	if (*s != '"' || s[1]) {
		sbuf_release(&out);
		return NULL;
	}
	return out.buf ? sbuf_detach(&out) : xstrdup("");
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	char *s = xstrndup((const char *)data, size), *back;
	struct sbuf sb = SBUF_INIT;
	double v;

	csv_field(&sb, s);
	back = read_field(sb.buf ? sb.buf : "");
	FUZZ_CHECK(back && !strcmp(back, s), "'%s' wrote '%s', read back '%s'", s, sb.buf, back);
	free(back);
	sbuf_release(&sb);

	if (size >= sizeof(v)) {
		memcpy(&v, data, sizeof(v));
		csv_double(&sb, v);
		if (isfinite(v))
			FUZZ_CHECK(sb.buf && strtod(sb.buf, NULL) == v && !strpbrk(sb.buf, ",\"\r\n "),
				   "%a wrote '%s'", v, sb.buf);
		else
			FUZZ_CHECK(!sb.buf || !sb.buf[0], "%a wrote '%s'", v, sb.buf);
		sbuf_release(&sb);
	}
	free(s);
	return 0;
}
