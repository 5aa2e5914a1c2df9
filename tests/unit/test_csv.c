/*
 * test_csv: fields quoted as RFC 4180 has them (the subjects of kernel
 * commits hold commas, quotes and, in a broken mail, newlines), and
 * numbers that read back exactly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "util.h"

static void field_is(const char *in, const char *want)
{
	struct sbuf sb = SBUF_INIT;

	csv_field(&sb, in);
	if (strcmp(sb.len ? sb.buf : "", want))
		fail_msg("csv_field(\"%s\"): got [%s], want [%s]", in ? in : "(null)", sb.len ? sb.buf : "", want);
	sbuf_release(&sb);
}

static void test_fields(void **state)
{
	(void)state;
	field_is("net: sched: Micro-optimize egress handling", "net: sched: Micro-optimize egress handling");
	field_is("udp: re-score reuseport groups, when connected",
		 "\"udp: re-score reuseport groups, when connected\"");
	field_is("Revert \"udp: Avoid call to compute_score\"", "\"Revert \"\"udp: Avoid call to compute_score\"\"\"");
	field_is("first line\nsecond, line", "\"first line\nsecond, line\"");
	field_is("two\nlines", "\"two\nlines\"");
	field_is("cr\rhere", "\"cr\rhere\"");
	field_is(" padded", "\" padded\"");
	field_is("padded ", "\"padded \"");
	field_is("\"", "\"\"\"\"");
	field_is("", "");
	field_is(NULL, "");
}

/* A quoted field read back by the RFC's rules gives the original. */
static void test_round_trip(void **state)
{
	static const char *const in[] = { "a,b", "say \"hi\", then\r\nleave", "\"\"", "plain" };

	(void)state;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		struct sbuf sb = SBUF_INIT, back = SBUF_INIT;
		const char *p;

		csv_field(&sb, in[i]);
		p = sb.buf;
		if (*p == '"') {
			for (p++; *p; p++) {
				if (*p == '"' && p[1] == '"')
					sbuf_add(&back, p++, 1);
				else if (*p == '"')
					break;
				else
					sbuf_add(&back, p, 1);
			}
			assert_true(*p == '"' && p[1] == '\0');
		} else {
			sbuf_adds(&back, p);
		}
		assert_string_equal(back.buf, in[i]);
		sbuf_release(&sb);
		sbuf_release(&back);
	}
}

static void number_is(double v, const char *want)
{
	struct sbuf sb = SBUF_INIT;

	csv_double(&sb, v);
	assert_string_equal(sb.len ? sb.buf : "", want);
	if (*want)
		assert_true(strtod(sb.buf, NULL) == v);
	sbuf_release(&sb);
}

static void test_numbers(void **state)
{
	(void)state;
	number_is(1234.5, "1234.5");
	number_is(1726716.59, "1726716.59");
	number_is(0.1, "0.1");
	number_is(1.0 / 3.0, "0.33333333333333331");
	number_is(0, "0");
	number_is(NAN, "");
	number_is(INFINITY, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_numbers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
