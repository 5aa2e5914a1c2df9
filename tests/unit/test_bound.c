/* test_bound: the capacity bound reproduces the table in STATISTICS.md. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "bound.h"

static void near(double got, double want, double tol)
{
	if (fabs(got - want) > tol)
		fail_msg("got %.6f, want %.6f +- %g", got, want, tol);
}

static void test_table(void **state)
{
	static const struct {
		double d, c, cap, b64, b1024, b16384;
	} rows[] = {
		{ 0.07, 0.04, 0.403, 17.9, 27.8, 37.7 },
		{ 0.12, 0.13, 0.139, 53.9, 82.7, 111.4 },
		{ 0.02, 0.01, 0.486, 14.6, 22.9, 31.1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		near(bound_capacity(rows[i].d / (2 * rows[i].c)), rows[i].cap, 0.0005);
		near(bound_runs(64, rows[i].d, rows[i].c, 0.01), rows[i].b64, 0.05);
		near(bound_runs(1024, rows[i].d, rows[i].c, 0.01), rows[i].b1024, 0.05);
		near(bound_runs(16384, rows[i].d, rows[i].c, 0.01), rows[i].b16384, 0.05);
	}
}

static void test_limits(void **state)
{
	double prev = 0;

	(void)state;
	/* Small amplitude: C ~ a^2 / (2 ln 2); large: one full bit. */
	near(bound_capacity(0.01) / (0.0001 / (2 * M_LN2)), 1.0, 1e-3);
	near(bound_capacity(8.0), 1.0, 1e-9);
	assert_true(bound_capacity(0) == 0);
	for (double a = 0.05; a < 4; a += 0.05) {
		double c = bound_capacity(a);

		assert_true(c > prev && c <= 1.0);
		prev = c;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
