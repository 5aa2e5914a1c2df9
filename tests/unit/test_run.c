/*
 * test_run: child processes: capture, exit status, deadlines, and that a
 * command's whole process group is gone when run_cmd returns.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "run.h"
#include "util.h"
#include "cancelfix.h"

/* Runs argv with opts (argv filled in) and asserts it was started. */
static void run(struct run_result *res, struct run_opts *o, const char *const *argv)
{
	o->argv = argv;
	if (run_cmd(res, o) != 0)
		fail_msg("run_cmd %s: %s", argv[0], err_msg());
}

/*
 * Is pid gone? Its parent died, so it may linger as a zombie until init
 * reaps it (in a container, init may never): 'Z' counts as gone.
 */
static int pid_gone(pid_t pid)
{
	for (int i = 0; i < 100; i++) {
		char path[64], buf[256], *p;
		FILE *f;
		int zombie = 0;

		if (kill(pid, 0) == -1 && errno == ESRCH)
			return 1;
		snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
		f = fopen(path, "r");
		if (f) {
			if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ')
				zombie = p[2] == 'Z';
			fclose(f);
		}
		if (zombie)
			return 1;
		usleep(10 * 1000);
	}
	return 0;
}

static void test_capture(void **state)
{
	const char *argv[] = { "sh", "-c", "echo out; echo err >&2; echo more; exit 3", NULL };
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	char buf[64];

	(void)state;
	run(&res, &o, argv);
	assert_string_equal(res.out, "out\nmore\n");
	assert_int_equal(res.out_len, 9);
	assert_string_equal(res.err, "err\n");
	assert_int_equal(res.err_len, 4);
	assert_int_equal(res.exited, 1);
	assert_int_equal(res.status, 3);
	assert_int_equal(res.timed_out, 0);
	assert_int_equal(res.out_truncated, 0);
	assert_false(run_ok(&res));
	assert_string_equal(run_describe(&res, buf, sizeof(buf)), "exit 3");
	run_result_release(&res);
	assert_null(res.out);
}

static void test_status(void **state)
{
	const char *ok[] = { "true", NULL };
	const char *sig[] = { "sh", "-c", "kill -TERM $$; sleep 5", NULL };
	const char *empty[] = { NULL };
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	char buf[64];

	(void)state;
	run(&res, &o, ok);
	assert_true(run_ok(&res));
	assert_string_equal(res.out, "");
	assert_string_equal(run_describe(&res, buf, sizeof(buf)), "exit 0");
	run_result_release(&res);

	run(&res, &o, sig);
	assert_int_equal(res.exited, 0);
	assert_int_equal(res.status, SIGTERM);
	assert_int_equal(res.timed_out, 0);
	assert_false(run_ok(&res));
	assert_string_equal(run_describe(&res, buf, sizeof(buf)), "killed by signal 15");
	run_result_release(&res);

	o.argv = empty;
	assert_int_equal(run_cmd(&res, &o), ERR_INVALID);
	o.argv = NULL;
	assert_int_equal(run_cmd(&res, &o), ERR_INVALID);
}

static void test_missing_program(void **state)
{
	const char *in_path[] = { "bisectd-no-such-program", "x", NULL };
	const char *by_path[] = { "/nonexistent/prog", NULL };
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;

	(void)state;
	run(&res, &o, in_path);
	assert_int_equal(res.exited, 1);
	assert_int_equal(res.status, 127);
	assert_non_null(strstr(res.err, "cannot run bisectd-no-such-program"));
	run_result_release(&res);

	run(&res, &o, by_path);
	assert_int_equal(res.exited, 1);
	assert_int_equal(res.status, 127);
	run_result_release(&res);
}

static void test_timeout(void **state)
{
	const char *argv[] = { "sh", "-c", "echo started; sleep 10; echo never", NULL };
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	char buf[64];

	(void)state;
	o.timeout_ms = 200;
	run(&res, &o, argv);
	assert_int_equal(res.timed_out, 1);
	assert_int_equal(res.cancelled, 0);
	assert_int_equal(res.exited, 0);
	assert_int_equal(res.status, SIGTERM);
	assert_string_equal(res.out, "started\n");
	assert_true(res.wall_ms >= 200);
	assert_true(res.wall_ms < 200 + 2000);
	assert_false(run_ok(&res));
	assert_true(strncmp(run_describe(&res, buf, sizeof(buf)), "timed out after ", 16) == 0);
	run_result_release(&res);
}

/* Cancelled from another thread (boot ssh's console): stopped as at a deadline, output kept. */
static void test_cancel(void **state)
{
	const char *argv[] = { "sh", "-c", "echo started; sleep 30; echo never", NULL };
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	pthread_t th;
	char how[64];
	int cancel;

	(void)state;
	/* With no deadline, and with one far off (a build's): stopped at the cancel either way. */
	for (int timeout = 0; timeout <= 1; timeout++) {
		int64_t t0 = now_ms();

		cancel = 0;
		o.cancel = &cancel;
		o.timeout_ms = timeout ? 60000 : 0;
		assert_int_equal(pthread_create(&th, NULL, cancel_later, &cancel), 0);
		run(&res, &o, argv);
		pthread_join(th, NULL);
		assert_int_equal(res.timed_out, 1);
		assert_int_equal(res.cancelled, 1);
		assert_int_equal(res.exited, 0);
		assert_int_equal(res.status, SIGTERM);
		assert_string_equal(res.out, "started\n");
		assert_true(now_ms() - t0 < 20000);
		assert_non_null(strstr(run_describe(&res, how, sizeof(how)), "cancelled after "));
		run_result_release(&res);
	}
}

/* on_output of test_cancel_after_exit: "gone" sets the cancel (arg). */
static void cancel_on_gone(void *arg, int stream, const char *data, size_t n)
{
	(void)stream;
	if (memmem(data, n, "gone", 4))
		__atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);
}

/*
 * A cancel that comes after the child exited stops nothing: the command
 * ran to its end, neither cancelled nor timed out. The child leaves a
 * grandchild of its own session holding the pipes, which run_cmd()
 * drains for the grace period; once the child has exited (a zombie until
 * run_cmd() reaps it at the end) the grandchild prints "gone", and that
 * output sets the cancel.
 */
static void test_cancel_after_exit(void **state)
{
	char mark[] = "/tmp/test-run-mark.XXXXXX";
	/* The child exits once the grandchild is in its session (mark made), which is when the group kill spares it. */
	const char *argv[] = { "sh", "-c", "setsid sh -c ': > \"$1\"; until [ \"$(cut -d\" \" -f3 /proc/$0/stat)\" = Z ]; "
			       "do sleep 0.02; done; echo gone' $$ \"$0\" & while [ ! -e \"$0\" ]; do sleep 0.01; done", mark,
			       NULL };
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	int cancel = 0, fd;

	(void)state;
	assert_true((fd = mkstemp(mark)) >= 0);
	close(fd);
	unlink(mark);
	o.cancel = &cancel;
	o.on_output = cancel_on_gone;
	o.arg = &cancel;
	run(&res, &o, argv);
	assert_int_equal(cancel, 1);
	assert_true(run_ok(&res));
	assert_int_equal(res.cancelled, 0);
	assert_int_equal(res.timed_out, 0);
	assert_string_equal(res.out, "gone\n");
	run_result_release(&res);
	unlink(mark);
}

/* A command that ignores SIGTERM gets SIGKILL once the grace period is over. */
static void test_timeout_kill(void **state)
{
	const char *argv[] = { "sh", "-c", "trap '' TERM; sleep 10", NULL };
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;

	(void)state;
	o.timeout_ms = 200;
	run(&res, &o, argv);
	assert_int_equal(res.timed_out, 1);
	assert_int_equal(res.exited, 0);
	assert_int_equal(res.status, SIGKILL);
	assert_true(res.wall_ms >= 200 + 2000);
	assert_true(res.wall_ms < 200 + 2000 + 1500);
	run_result_release(&res);
}

static pid_t first_pid(const char *out)
{
	long pid = strtol(out, NULL, 10);

	if (pid <= 1)
		fail_msg("no pid in output '%s'", out);
	return (pid_t)pid;
}

/* The deadline takes the whole process group, not just the child. */
static void test_group_killed(void **state)
{
	const char *argv[] = { "sh", "-c", "sleep 100 & echo $!; wait", NULL };
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	pid_t pid;

	(void)state;
	o.timeout_ms = 300;
	run(&res, &o, argv);
	assert_int_equal(res.timed_out, 1);
	assert_true(res.wall_ms < 300 + 2000);
	pid = first_pid(res.out);
	assert_true(pid_gone(pid));
	run_result_release(&res);
}

/*
 * A background grandchild holding the pipes must neither keep run_cmd
 * waiting after the child exited nor outlive it.
 */
static void test_background_grandchild(void **state)
{
	const char *argv[] = { "sh", "-c", "sleep 100 & echo $!; echo done >&2", NULL };
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	int64_t t0 = now_ms();
	pid_t pid;

	(void)state;
	o.timeout_ms = 20000;
	run(&res, &o, argv);
	assert_true(now_ms() - t0 < 2000);
	assert_int_equal(res.timed_out, 0);
	assert_true(run_ok(&res));
	assert_string_equal(res.err, "done\n");
	pid = first_pid(res.out);
	assert_true(pid_gone(pid));
	run_result_release(&res);

	/* Same without a deadline: it used to wait for the grandchild. */
	o.timeout_ms = 0;
	t0 = now_ms();
	run(&res, &o, argv);
	assert_true(now_ms() - t0 < 2000);
	assert_true(run_ok(&res));
	assert_true(pid_gone(first_pid(res.out)));
	run_result_release(&res);
}

/* What lines 1..n of seq print, in a new string. */
static char *seq_text(int n)
{
	struct sbuf sb = SBUF_INIT;

	for (int i = 1; i <= n; i++)
		sbuf_addf(&sb, "%d\n", i);
	return sbuf_detach(&sb);
}

static void test_output_bound(void **state)
{
	const char *big[] = { "seq", "1", "50000", NULL };
	const char *small[] = { "seq", "1", "10", NULL };
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	char *want = seq_text(50000);
	size_t want_len = strlen(want);

	(void)state;
	o.max_output = 100;
	run(&res, &o, big);
	assert_true(run_ok(&res));
	assert_int_equal(res.out_truncated, 1);
	assert_int_equal(res.out_len, 100);
	assert_int_equal(strlen(res.out), 100);
	assert_string_equal(res.out, want + want_len - 100);
	assert_int_equal(res.err_truncated, 0);
	run_result_release(&res);

	/* Exactly at the bound is not truncated. */
	o.max_output = strlen("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n");
	run(&res, &o, small);
	assert_int_equal(res.out_truncated, 0);
	assert_string_equal(res.out, "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n");
	run_result_release(&res);
	free(want);
}

static void test_cwd_env_stdin(void **state)
{
	char dir[] = "/tmp/test_run.XXXXXX", real[PATH_MAX], *want, *file;
	const char *pwd[] = { "pwd", NULL };
	const char *env_argv[] = { "sh", "-c", "echo \"$BISECT_A-$BISECT_B-$HOME\"", NULL };
	const char *env[] = { "BISECT_A=one", "BISECT_B=two words", NULL };
	const char *cat[] = { "cat", NULL };
	const char *nodir[] = { "true", NULL };
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_non_null(realpath(dir, real));
	o.cwd = dir;
	run(&res, &o, pwd);
	want = xasprintf("%s\n", real);
	assert_string_equal(res.out, want);
	free(want);
	run_result_release(&res);

	o.cwd = NULL;
	o.env = env;
	setenv("HOME", "/home/kept", 1);
	run(&res, &o, env_argv);
	assert_string_equal(res.out, "one-two words-/home/kept\n");
	run_result_release(&res);
	o.env = NULL;

	/* stdin is /dev/null by default, or the file given. */
	run(&res, &o, cat);
	assert_true(run_ok(&res));
	assert_string_equal(res.out, "");
	run_result_release(&res);
	file = xasprintf("%s/in", dir);
	assert_int_equal(file_write_atomic(file, "input\n", 6), 0);
	o.stdin_path = file;
	run(&res, &o, cat);
	assert_string_equal(res.out, "input\n");
	run_result_release(&res);
	o.stdin_path = NULL;
	unlink(file);
	free(file);

	o.cwd = "/nonexistent/dir";
	run(&res, &o, nodir);
	assert_int_equal(res.status, 126);
	assert_non_null(strstr(res.err, "cannot chdir to /nonexistent/dir"));
	run_result_release(&res);
	rmdir(dir);
}

static void test_cpu(void **state)
{
	const char *argv[] = { "grep", "Cpus_allowed_list", "/proc/self/status", NULL };
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	cpu_set_t set;
	int cpu = -1, off = -1;
	char *want;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int i = 0; i < CPU_SETSIZE; i++) {
		if (cpu < 0 && CPU_ISSET(i, &set))
			cpu = i;
		if (off < 0 && !CPU_ISSET(i, &set))
			off = i;
	}
	assert_true(cpu >= 0);

	/* CPU 0 on most machines: the first one this process may use. */
	o.cpu = cpu;
	run(&res, &o, argv);
	want = xasprintf("Cpus_allowed_list:\t%d\n", cpu);
	assert_string_equal(res.out, want);
	free(want);
	run_result_release(&res);

	/* A CPU it may not use is an error, not an unpinned run. */
	o.cpu = off;
	run(&res, &o, argv);
	assert_int_equal(res.exited, 1);
	assert_int_equal(res.status, 126);
	assert_non_null(strstr(res.err, "cannot pin to CPU"));
	assert_string_equal(res.out, "");
	run_result_release(&res);

	o.cpu = -1;
	run(&res, &o, argv);
	assert_non_null(strstr(res.out, "Cpus_allowed_list:"));
	run_result_release(&res);
}

static void test_tail(void **state)
{
	const char *s = "aaaa\nbbbb\ncccc\n";

	(void)state;
	assert_ptr_equal(run_tail(s, 100), s);
	assert_ptr_equal(run_tail(s, 15), s);
	/* Cut just after a line's start: moves to the next line. */
	assert_string_equal(run_tail(s, 12), "bbbb\ncccc\n");
	/* The next line start is too far: keeps the bytes. */
	assert_string_equal(run_tail(s, 8), "bb\ncccc\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capture),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_missing_program),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_timeout_kill),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_cancel_after_exit),
		cmocka_unit_test(test_group_killed),
		cmocka_unit_test(test_background_grandchild),
		cmocka_unit_test(test_output_bound),
		cmocka_unit_test(test_cwd_env_stdin),
		cmocka_unit_test(test_cpu),
		cmocka_unit_test(test_tail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
