/* run: child processes with deadlines and bounded capture. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "run.h"
#include "util.h"

#define KILL_GRACE_MS 2000
/* How often the capture loop looks whether the child has exited. */
#define REAP_POLL_MS 20

struct capture {
	struct sbuf sb;
	size_t max;
	int truncated;
};

/* Keeps the last `max` bytes: a failing build's tail is what matters. */
static void capture_add(struct capture *c, const char *data, size_t n)
{
	sbuf_add(&c->sb, data, n);
	if (c->sb.len > 2 * c->max + 4096) {
		size_t drop = c->sb.len - c->max;

		memmove(c->sb.buf, c->sb.buf + drop, c->sb.len - drop + 1);
		c->sb.len -= drop;
		c->truncated = 1;
	}
}

static void capture_finish(struct capture *c, char **out, size_t *len, int *trunc)
{
	if (c->sb.len > c->max) {
		size_t drop = c->sb.len - c->max;

		memmove(c->sb.buf, c->sb.buf + drop, c->sb.len - drop + 1);
		c->sb.len -= drop;
		c->truncated = 1;
	}
	*len = c->sb.len;
	*trunc = c->truncated;
	*out = sbuf_detach(&c->sb);
}

static void child(const struct run_opts *o, int outfd, int errfd)
{
	sigset_t none;
	int in;

	setpgid(0, 0);
	signal(SIGPIPE, SIG_DFL);
	/*
	 * A blocked mask survives exec: a daemon that blocks SIGTERM for
	 * sigwait() would otherwise hand its children a deaf SIGTERM.
	 */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	in = open(o->stdin_path ? o->stdin_path : "/dev/null", O_RDONLY);
	if (in < 0)
		in = open("/dev/null", O_RDONLY);
	dup2(in, 0);
	if (in > 2)
		close(in);
	dup2(outfd, 1);
	dup2(errfd, 2);
	if (o->cpu >= 0) {
		cpu_set_t set;

		/* An unpinned run would be measured as if pinned: refuse instead. */
		CPU_ZERO(&set);
		CPU_SET(o->cpu, &set);
		if (o->cpu >= CPU_SETSIZE || sched_setaffinity(0, sizeof(set), &set) < 0) {
			dprintf(2, "cannot pin to CPU %d: %s\n", o->cpu,
				o->cpu >= CPU_SETSIZE ? "out of range" : strerror(errno));
			_exit(126);
		}
	}
	if (o->cwd && chdir(o->cwd) < 0) {
		dprintf(2, "cannot chdir to %s: %s\n", o->cwd, strerror(errno));
		_exit(126);
	}
	for (const char *const *e = o->env; e && *e; e++)
		putenv((char *)(uintptr_t)*e);
	execvp(o->argv[0], (char *const *)(uintptr_t)o->argv);
	dprintf(2, "cannot run %s: %s\n", o->argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* Has the child exited? Leaves it unreaped, so its pid still names its group. */
static int child_exited(pid_t pid)
{
	siginfo_t si;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0)
			return si.si_pid == pid;
		if (errno != EINTR)
			return 1; /* ECHILD: reaped behind our back (SIGCHLD ignored) */
	}
}

int run_cmd(struct run_result *res, const struct run_opts *o)
{
	struct capture cap[2] = { { SBUF_INIT, o->max_output, 0 }, { SBUF_INIT, o->max_output, 0 } };
	int pout[2], perr[2];
	struct pollfd pfd[2];
	int64_t start = now_ms(), kill_at = -1;
	int64_t drain_until = -1;
	int open_fds = 2, wstatus = 0, term_sent = 0, child_done = 0;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	if (!o->argv || !o->argv[0])
		return err_set(ERR_INVALID, "run: empty argv");
	if (pipe2(pout, O_CLOEXEC) < 0)
		return err_set(ERR_FAIL, "pipe: %s", strerror(errno));
	if (pipe2(perr, O_CLOEXEC) < 0) {
		close(pout[0]);
		close(pout[1]);
		return err_set(ERR_FAIL, "pipe: %s", strerror(errno));
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(pout[0]); close(pout[1]); close(perr[0]); close(perr[1]);
		return err_set(ERR_FAIL, "fork: %s", strerror(e));
	}
	if (pid == 0)
		child(o, pout[1], perr[1]);
	setpgid(pid, pid); /* also in the parent: no race with kill() below */
	close(pout[1]);
	close(perr[1]);
	pfd[0].fd = pout[0];
	pfd[1].fd = perr[0];
	pfd[0].events = pfd[1].events = POLLIN;
	if (o->timeout_ms > 0)
		kill_at = start + o->timeout_ms;

	while (open_fds > 0) {
		int64_t now = now_ms();
		int wait_ms = REAP_POLL_MS, n;

		/*
		 * The child is done but something holds its pipes: a grandchild
		 * left running in the background. It goes now, with the rest of
		 * the group, or the pipes never close and a successful command
		 * would wait for its deadline, or forever without one.
		 */
		if (!child_done && child_exited(pid)) {
			kill(-pid, SIGKILL);
			child_done = 1;
			kill_at = -1;
			drain_until = now + KILL_GRACE_MS;
			continue;
		}
		/* Left the group (setsid) and still holds the pipes: stop reading. */
		if (child_done) {
			if (now >= drain_until)
				break;
			wait_ms = (int)(drain_until - now);
		}
		/*
		 * Cancelled from another thread: now is its deadline, whatever
		 * deadline it had (with a timeout too, a cancelled kernel build
		 * ran on to its timeout before). A child already done (its pipes
		 * draining) finished on its own: neither cancelled nor timed out.
		 */
		if (o->cancel && __atomic_load_n(o->cancel, __ATOMIC_ACQUIRE) && !child_done && !term_sent &&
		    (kill_at < 0 || kill_at > now)) {
			kill_at = now;
			res->cancelled = 1;
		}
		if (kill_at >= 0) {
			if (now >= kill_at) {
				if (!term_sent) {
					res->timed_out = 1;
					kill(-pid, SIGTERM);
					term_sent = 1;
					kill_at = now + KILL_GRACE_MS;
				} else {
					kill(-pid, SIGKILL);
					kill_at = -1;
				}
				continue;
			}
			if (kill_at - now < wait_ms)
				wait_ms = (int)(kill_at - now);
		}
		n = poll(pfd, 2, wait_ms);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			char buf[16384];
			ssize_t r;

			if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = read(pfd[i].fd, buf, sizeof(buf));
			if (r > 0) {
				if (o->on_output)
					o->on_output(o->arg, i + 1, buf, (size_t)r);
				capture_add(&cap[i], buf, (size_t)r);
			} else if (r == 0 || errno != EINTR) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				open_fds--;
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (pfd[i].fd >= 0)
			close(pfd[i].fd);
	/*
	 * Both pipes are closed: the child (and whatever kept its pipes) is
	 * done writing. Wait for it, still honouring the deadline.
	 */
	for (;;) {
		if (child_exited(pid))
			break;
		if (kill_at >= 0 && now_ms() >= kill_at) {
			res->timed_out = 1;
			kill(-pid, term_sent ? SIGKILL : SIGTERM);
			kill_at = term_sent ? -1 : now_ms() + KILL_GRACE_MS;
			term_sent = 1;
		}
		usleep(2000);
	}
	/*
	 * Whatever is left of the group (a daemonised grandchild) goes too,
	 * before the leader is reaped: until then its pid cannot be reused.
	 */
	kill(-pid, SIGKILL);
	while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	res->wall_ms = (long)(now_ms() - start);
	if (WIFEXITED(wstatus)) {
		res->exited = 1;
		res->status = WEXITSTATUS(wstatus);
	} else if (WIFSIGNALED(wstatus)) {
		res->status = WTERMSIG(wstatus);
	}
	capture_finish(&cap[0], &res->out, &res->out_len, &res->out_truncated);
	capture_finish(&cap[1], &res->err, &res->err_len, &res->err_truncated);
	return 0;
}

int run_ok(const struct run_result *res)
{
	return res->exited && res->status == 0 && !res->timed_out;
}

const char *run_describe(const struct run_result *res, char *buf, size_t n)
{
	if (res->cancelled)
		snprintf(buf, n, "cancelled after %ld ms", res->wall_ms);
	else if (res->timed_out)
		snprintf(buf, n, "timed out after %ld ms", res->wall_ms);
	else if (res->exited)
		snprintf(buf, n, "exit %d", res->status);
	else
		snprintf(buf, n, "killed by signal %d", res->status);
	return buf;
}

void run_result_release(struct run_result *res)
{
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
}

const char *run_tail(const char *s, size_t n)
{
	size_t len = strlen(s);
	const char *p;

	if (len <= n)
		return s;
	p = s + len - n;
	for (const char *q = p; *q; q++)
		if (*q == '\n' && q[1]) {
			if ((size_t)(q + 1 - p) < n / 4)
				return q + 1;
			break;
		}
	return p;
}
