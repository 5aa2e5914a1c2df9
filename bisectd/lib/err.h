/*
 * err: error codes and a thread-local last-error message.
 *
 * Functions return 0 on success or a negative ERR_* code; the place that
 * fails sets a message with err_set(), the caller that reports it reads
 * err_msg(). The HTTP server runs handlers on threads, so the message is
 * per thread (libgit2's giterr_last() habit).
 */
#ifndef BISECT_ERR_H
#define BISECT_ERR_H

enum {
	ERR_OK = 0,
	ERR_FAIL = -1,      /* anything else */
	ERR_NOTFOUND = -2,  /* a named thing does not exist */
	ERR_EXISTS = -3,    /* it exists already */
	ERR_INVALID = -4,   /* bad input: caller's fault */
	ERR_BUSY = -5,      /* try again later */
	ERR_TIMEOUT = -6,   /* a deadline passed */
	ERR_CONFLICT = -7,  /* state does not allow it (stale attempt, ended job) */
	ERR_UNPROCESSABLE = -8, /* well-formed but cannot be acted on (a ref that does not resolve) */
};

/* Sets the message and returns code, so that `return err_set(...)` works. */
int err_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The last message set on this thread; "" when none. Borrowed. */
const char *err_msg(void);
/* The last code set on this thread. */
int err_code(void);
void err_clear(void);
/* A short name for a code: "not found", "invalid input", ... */
const char *err_name(int code);

#endif
