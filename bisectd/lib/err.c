/* err: thread-local last error. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "err.h"

static __thread char last_msg[1024];
static __thread int last_code;

int err_set(int code, const char *fmt, ...)
{
	char buf[sizeof(last_msg)];
	va_list ap;

	/* Through a copy: callers may wrap the last message, err_set(c, "x: %s", err_msg()). */
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	memcpy(last_msg, buf, sizeof(buf));
	last_code = code;
	return code;
}

const char *err_msg(void)
{
	return last_msg;
}

int err_code(void)
{
	return last_code;
}

void err_clear(void)
{
	last_msg[0] = '\0';
	last_code = 0;
}

const char *err_name(int code)
{
	switch (code) {
	case ERR_OK: return "ok";
	case ERR_NOTFOUND: return "not found";
	case ERR_EXISTS: return "already exists";
	case ERR_INVALID: return "invalid input";
	case ERR_BUSY: return "busy";
	case ERR_TIMEOUT: return "timed out";
	case ERR_CONFLICT: return "conflict";
	case ERR_UNPROCESSABLE: return "unprocessable";
	default: return "error";
	}
}
