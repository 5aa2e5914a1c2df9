/*
 * test_jsonx: request bodies and field getters refuse what they must, with
 * messages that name the field.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jsonx.h"

static json_t *parse_ok(const char *body)
{
	json_t *j = NULL;

	if (jsonx_parse_object(&j, body, strlen(body), 4096) != 0)
		fail_msg("'%s': %s", body, err_msg());
	assert_non_null(j);
	return j;
}

static void test_parse_object(void **state)
{
	json_t *j;

	(void)state;
	j = parse_ok("{\"a\": 1}");
	assert_int_equal(json_integer_value(json_object_get(j, "a")), 1);
	json_decref(j);

	assert_int_equal(jsonx_parse_object(&j, "{\"a\": }", 7, 4096), ERR_INVALID);
	assert_null(j);
	assert_string_equal(err_msg(),
		"request body is not valid JSON: unexpected token near '}' at line 1 column 7");

	assert_int_equal(jsonx_parse_object(&j, "{\n\"a\": 1,\n", 10, 4096), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "request body is not valid JSON: "));
	assert_non_null(strstr(err_msg(), " at line 3 column"));

	assert_int_equal(jsonx_parse_object(&j, "", 0, 4096), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "request body is not valid JSON"));

	assert_int_equal(jsonx_parse_object(&j, "[1, 2]", 6, 4096), ERR_INVALID);
	assert_string_equal(err_msg(), "request body must be a JSON object");
	assert_int_equal(jsonx_parse_object(&j, "\"s\"", 3, 4096), ERR_INVALID);
	assert_string_equal(err_msg(), "request body must be a JSON object");
	assert_null(j);

	assert_int_equal(jsonx_parse_object(&j, "{\"a\": \"xxxxxxxx\"}", 17, 16), ERR_INVALID);
	assert_string_equal(err_msg(), "request body is larger than 16 bytes");
	assert_null(j);

	/* The length given counts, not a NUL: trailing bytes past it are not read. */
	assert_int_equal(jsonx_parse_object(&j, "{}garbage", 2, 4096), 0);
	assert_int_equal(json_object_size(j), 0);
	json_decref(j);

	/* Two values for one field: which one would win is not the sender's choice. */
	assert_int_equal(jsonx_parse_object(&j, "{\"a\": 1, \"a\": 2}", 16, 4096), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "duplicate"));
}

static void test_str(void **state)
{
	json_t *j = parse_ok("{\"good\": \"v1.0\", \"n\": 5, \"ctl\": \"a\\nb\", \"del\": \"a\\u007fb\","
			     " \"nul\": null, \"long\": \"0123456789\", \"utf\": \"caf\\u00e9\"}");
	const char *s = NULL;

	(void)state;
	assert_int_equal(jsonx_str(&s, j, "good", 256, 1, NULL), 0);
	assert_string_equal(s, "v1.0");

	assert_int_equal(jsonx_str(&s, j, "pool", 64, 0, "local"), 0);
	assert_string_equal(s, "local");
	assert_int_equal(jsonx_str(&s, j, "nul", 64, 0, "dflt"), 0);
	assert_string_equal(s, "dflt");
	assert_int_equal(jsonx_str(&s, j, "pool", 64, 0, NULL), 0);
	assert_null(s);

	assert_int_equal(jsonx_str(&s, j, "bad", 256, 1, NULL), ERR_INVALID);
	assert_string_equal(err_msg(), "field 'bad' is required");
	assert_int_equal(jsonx_str(&s, j, "nul", 256, 1, NULL), ERR_INVALID);
	assert_string_equal(err_msg(), "field 'nul' is required");

	assert_int_equal(jsonx_str(&s, j, "n", 256, 1, NULL), ERR_INVALID);
	assert_string_equal(err_msg(), "field 'n' must be a string of at most 256 characters");

	assert_int_equal(jsonx_str(&s, j, "long", 10, 1, NULL), 0);
	assert_string_equal(s, "0123456789");
	assert_int_equal(jsonx_str(&s, j, "long", 9, 1, NULL), ERR_INVALID);
	assert_string_equal(err_msg(), "field 'long' must be a string of at most 9 characters");

	assert_int_equal(jsonx_str(&s, j, "ctl", 256, 1, NULL), ERR_INVALID);
	assert_string_equal(err_msg(), "field 'ctl' must not contain control characters");
	assert_int_equal(jsonx_str(&s, j, "del", 256, 1, NULL), ERR_INVALID);
	assert_string_equal(err_msg(), "field 'del' must not contain control characters");

	assert_int_equal(jsonx_str(&s, j, "utf", 256, 1, NULL), 0);
	assert_string_equal(s, "caf\xc3\xa9");
	json_decref(j);
}

static void test_int(void **state)
{
	json_t *j = parse_ok("{\"runs\": 5, \"neg\": -3, \"real\": 2.5, \"s\": \"5\", \"big\": 1000}");
	long long n = 0;

	(void)state;
	assert_int_equal(jsonx_int(&n, j, "runs", 1, 100, 1, 0), 0);
	assert_int_equal(n, 5);
	assert_int_equal(jsonx_int(&n, j, "neg", -10, 10, 1, 0), 0);
	assert_int_equal(n, -3);
	assert_int_equal(jsonx_int(&n, j, "absent", 1, 100, 0, 7), 0);
	assert_int_equal(n, 7);

	assert_int_equal(jsonx_int(&n, j, "absent", 1, 100, 1, 7), ERR_INVALID);
	assert_string_equal(err_msg(), "field 'absent' is required");
	assert_int_equal(jsonx_int(&n, j, "big", 1, 100, 1, 0), ERR_INVALID);
	assert_string_equal(err_msg(), "field 'big' must be an integer from 1 to 100, not 1000");
	assert_int_equal(jsonx_int(&n, j, "neg", 0, 100, 1, 0), ERR_INVALID);
	assert_int_equal(jsonx_int(&n, j, "real", 1, 100, 1, 0), ERR_INVALID);
	assert_string_equal(err_msg(), "field 'real' must be an integer from 1 to 100");
	assert_int_equal(jsonx_int(&n, j, "s", 1, 100, 1, 0), ERR_INVALID);
	assert_string_equal(err_msg(), "field 's' must be an integer from 1 to 100");
	json_decref(j);
}

static void test_num(void **state)
{
	json_t *j = parse_ok("{\"v\": 1.5e6, \"i\": 3, \"neg\": -0.5, \"s\": \"1\", \"b\": true}");
	double d = 0;

	(void)state;
	assert_int_equal(jsonx_num(&d, j, "v", 0, 1e9, 1, 0), 0);
	assert_true(d == 1.5e6);
	assert_int_equal(jsonx_num(&d, j, "i", 0, 10, 1, 0), 0);
	assert_true(d == 3.0);
	assert_int_equal(jsonx_num(&d, j, "absent", 0, 10, 0, 2.5), 0);
	assert_true(d == 2.5);

	assert_int_equal(jsonx_num(&d, j, "absent", 0, 10, 1, 0), ERR_INVALID);
	assert_string_equal(err_msg(), "field 'absent' is required");
	assert_int_equal(jsonx_num(&d, j, "neg", 0, 10, 1, 0), ERR_INVALID);
	assert_string_equal(err_msg(), "field 'neg' must be a number from 0 to 10, not -0.5");
	assert_int_equal(jsonx_num(&d, j, "s", 0, 10, 1, 0), ERR_INVALID);
	assert_string_equal(err_msg(), "field 's' must be a number from 0 to 10");
	assert_int_equal(jsonx_num(&d, j, "b", 0, 10, 1, 0), ERR_INVALID);
	assert_string_equal(err_msg(), "field 'b' must be a number from 0 to 10");
	json_decref(j);
}

static void test_dump(void **state)
{
	json_t *j = json_pack("{s:i, s:[s, b]}", "a", 1, "b", "x", 1);
	json_t *s = json_string("plain");
	char *out;

	(void)state;
	out = jsonx_dump(j);
	assert_string_equal(out, "{\"a\":1,\"b\":[\"x\",true]}");
	free(out);
	out = jsonx_dump(s);
	assert_string_equal(out, "\"plain\"");
	free(out);
	json_decref(j);
	json_decref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_object),
		cmocka_unit_test(test_str),
		cmocka_unit_test(test_int),
		cmocka_unit_test(test_num),
		cmocka_unit_test(test_dump),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
