/*
 * agent_wait: stopping and waiting. The first SIGTERM or SIGINT stops the
 * agent after the step in hand, a second kills the running command; naps
 * and backoffs that a stop cuts short; conditions logged once, not per retry.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent_internal.h"
#include "log.h"

/* Set by the first SIGTERM/SIGINT (agent_internal.h). */
volatile sig_atomic_t agent_stopping;
int agent_sig_pipe[2] = { -1, -1 };

void agent_note(struct note *n, enum log_level level, const char *msg)
{
	if (strncmp(n->last, msg, sizeof(n->last) - 1)) {
		log_msg(level, "%s", msg);
		snprintf(n->last, sizeof(n->last), "%s", msg);
	} else {
		log_debug("%s", msg);
	}
}

void agent_note_clear(struct note *n, const char *msg)
{
	if (n->last[0] && msg)
		log_info("%s", msg);
	n->last[0] = '\0';
}

void agent_on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	if (write(agent_sig_pipe[1], &c, 1) < 0) {
		/* nothing to do in a handler */
	}
	errno = saved;
}

/*
 * Kills the process groups of our children (run_cmd starts each command in
 * a group of its own), so that an aborted build does not run on.
 */
static void kill_children(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t self = getpid();

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[64], buf[512], *p;
		int fd, ppid = 0;
		ssize_t n;
		long pid = strtol(e->d_name, &p, 10);

		if (*p || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		p = strrchr(buf, ')');
		if (p && sscanf(p + 1, " %*c %d", &ppid) == 1 && ppid == self) {
			kill(-(pid_t)pid, SIGKILL);
			kill((pid_t)pid, SIGKILL);
		}
	}
	closedir(d);
}

void *agent_signal_main(void *arg)
{
	struct agent *a = arg;
	char c;

	for (;;) {
		ssize_t n = read(agent_sig_pipe[0], &c, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		if (!agent_stopping) {
			log_info("%s: stopping after the current step (send it again to abort now)",
				 strsignal(c));
			pthread_mutex_lock(&a->mu);
			agent_stopping = 1;
			pthread_cond_broadcast(&a->wake);
			pthread_mutex_unlock(&a->mu);
		} else {
			log_warn("%s again: aborting the current step", strsignal(c));
			kill_children();
			_exit(1);
		}
	}
}

void agent_deadline_after(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* Sleeps ms, or less when the agent is asked to stop. 0 when it was not. */
int agent_nap(struct agent *a, long ms)
{
	struct timespec until;

	agent_deadline_after(&until, ms);
	pthread_mutex_lock(&a->mu);
	while (!agent_stopping && pthread_cond_timedwait(&a->wake, &a->mu, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&a->mu);
	return agent_stopping ? -1 : 0;
}

/* Doubles a back-off, with some jitter so that agents do not move in step. */
long agent_backoff_next(long ms)
{
	ms *= 2;
	if (ms > BACKOFF_MAX_MS)
		ms = BACKOFF_MAX_MS;
	return ms - ms / 8 + random() % (ms / 4 + 1);
}
