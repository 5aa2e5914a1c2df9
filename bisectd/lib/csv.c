/* csv: RFC 4180 fields (csv.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "util.h"

static int needs_quotes(const char *s)
{
	size_t n = strlen(s);

	return strpbrk(s, ",\"\r\n") || (n && (s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' ||
					    s[n - 1] == '\t'));
}

void csv_field(struct sbuf *sb, const char *s)
{
	if (!s)
		return;
	if (!needs_quotes(s)) {
		sbuf_adds(sb, s);
		return;
	}
	sbuf_add(sb, "\"", 1);
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			sbuf_add(sb, "\"", 1);
		sbuf_add(sb, p, 1);
	}
	sbuf_add(sb, "\"", 1);
}

void csv_double(struct sbuf *sb, double v)
{
	char buf[32];

	if (!isfinite(v))
		return;
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	sbuf_adds(sb, buf);
}
