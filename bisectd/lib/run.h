/*
 * run: start a child process from an argv (never a shell string), wait for
 * it with a deadline, and capture its stdout and stderr up to a bound.
 *
 * The child leads a process group of its own; on timeout the whole group
 * gets SIGTERM, then SIGKILL after a grace period, so a build's or a
 * workload's grandchildren do not outlive the task (git's run-command.h,
 * smaller). When the child itself exits, what is left of its group is
 * killed too. A CPU the child cannot be pinned to makes it exit 126.
 */
#ifndef BISECT_RUN_H
#define BISECT_RUN_H

#include <stddef.h>
#include <sys/types.h>

struct run_opts {
	const char *const *argv;  /* argv[0] is looked up in PATH */
	const char *cwd;          /* NULL: inherit */
	const char *const *env;   /* extra "K=V" entries added to the environment; NULL-terminated */
	int timeout_ms;           /* <= 0: no deadline */
	size_t max_output;        /* per stream; what is past it is dropped, tail kept */
	int cpu;                  /* >= 0: pin the child to this CPU */
	const char *stdin_path;   /* NULL: /dev/null */
	/* Called with output as it arrives (stream 1 or 2), before capture; may be NULL. */
	void (*on_output)(void *arg, int stream, const char *data, size_t n);
	void *arg;
	/* When another thread sets *cancel, the child is stopped as at its deadline; may be NULL. */
	const int *cancel;
};
#define RUN_OPTS_INIT { NULL, NULL, NULL, 0, 1 << 20, -1, NULL, NULL, NULL, NULL }

struct run_result {
	int exited;        /* 1 when it exited normally */
	int status;        /* exit status when exited, else the signal number */
	int timed_out;     /* 1 when the deadline (or a cancel) killed it */
	int cancelled;     /* 1 when it was *opts->cancel that did */
	char *out, *err;   /* captured output, NUL-terminated; owned by the result */
	size_t out_len, err_len;
	int out_truncated, err_truncated; /* 1 when output past max_output was dropped */
	long wall_ms;
};

/*
 * Runs the command and waits for it. Returns 0 when the child was started
 * and waited for (whatever its exit status: read res), ERR_INVALID for an
 * empty argv, ERR_FAIL when it could not be started (the message says why;
 * a missing program is reported as exit status 127 in res instead).
 */
int run_cmd(struct run_result *res, const struct run_opts *opts);
/* Did it exit with status 0? */
int run_ok(const struct run_result *res);
/* "exit 2", "killed by signal 9", "timed out after 5000 ms", "cancelled after 120 ms" into buf. */
const char *run_describe(const struct run_result *res, char *buf, size_t n);
void run_result_release(struct run_result *res);

/* The last n bytes of s (at a line start when possible). Borrowed pointer into s. */
const char *run_tail(const char *s, size_t n);

#endif
