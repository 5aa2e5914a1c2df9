/* queryfix.h: comparing two engines' queries in the unit tests (header only). */
#ifndef BISECT_TEST_QUERYFIX_H
#define BISECT_TEST_QUERYFIX_H

#include "bisect.h"

/*
 * Asserts that the n queries of a and b are the same, field by field: a
 * query's padding is whatever the compound literal left there, so a
 * memcmp of the structs can differ where the engines do not.
 */
static inline void assert_same_queries(const struct bisect_query *a, const struct bisect_query *b, int n)
{
	for (int i = 0; i < n; i++) {
		assert_int_equal(a[i].commit, b[i].commit);
		assert_int_equal(a[i].runs, b[i].runs);
		assert_int_equal(a[i].confirm, b[i].confirm);
		assert_true(a[i].mass == b[i].mass && a[i].gain == b[i].gain && a[i].cost == b[i].cost);
		assert_int_equal(a[i].chain, b[i].chain);
	}
}

#endif
