/*
 * test_util: xgrow(), the array growth every list the store returns is
 * made with: each element kept as it was written, however many times the
 * array moved; str_last_line(), the one-line reason the agent's messages
 * take from a program's output.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "util.h"

static void test_xgrow_keeps_every_element(void **state)
{
	long long *a = NULL;
	size_t n = 0, cap = 0;

	(void)state;
	for (long long i = 0; i < 1000; i++) {
		a = xgrow(a, n, &cap, sizeof(*a));
		assert_true(cap > n);
		a[n++] = 3 * i + 1;
	}
	assert_int_equal(n, 1000);
	assert_true(cap >= 1000 && cap < 2000);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(a[i], 3 * (long long)i + 1);
	free(a);
}

static void test_xgrow_leaves_room_alone(void **state)
{
	char buf[4], *p;
	size_t cap = 4;

	(void)state;
	/* Not full: the same array back, untouched (a stack array here would crash realloc). */
	p = xgrow(buf, 3, &cap, 1);
	assert_ptr_equal(p, buf);
	assert_int_equal(cap, 4);
}

static void last(char *buf, size_t n, const char *s)
{
	str_last_line(buf, n, s, strlen(s));
}

static void test_str_last_line(void **state)
{
	char buf[64];

	(void)state;
	last(buf, sizeof(buf), "first\nsecond line\n");
	assert_string_equal(buf, "second line");
	/* Blank lines, returns and spaces at the end are not the last line. */
	last(buf, sizeof(buf), "ssh: connect refused\r\n\n  \n");
	assert_string_equal(buf, "ssh: connect refused");
	last(buf, sizeof(buf), "one line, no newline");
	assert_string_equal(buf, "one line, no newline");
	last(buf, sizeof(buf), "\n\n");
	assert_string_equal(buf, "");
	last(buf, sizeof(buf), "");
	assert_string_equal(buf, "");
	/* Only len bytes are read: the rest of the buffer is not the output. */
	str_last_line(buf, sizeof(buf), "a\nbc\nnot this", 5);
	assert_string_equal(buf, "bc");
	/* Cut to fit the buffer. */
	last(buf, 5, "x\nabcdefgh\n");
	assert_string_equal(buf, "abcd");
	/* Tabs at the end go too (the trex client's output). */
	last(buf, sizeof(buf), "{\"ok\": true}\t\n");
	assert_string_equal(buf, "{\"ok\": true}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xgrow_keeps_every_element),
		cmocka_unit_test(test_xgrow_leaves_room_alone),
		cmocka_unit_test(test_str_last_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
