/*
 * bisect-agent: registers with bisectd, claims tasks with long polls, and
 * for each one checks the commit out, builds it, boots it, measures it and
 * uploads the samples. Every result is spooled to disk before its upload,
 * so a crash or an unreachable coordinator loses nothing.
 *
 *   bisect-agent -f etc/agent.yaml [-v]
 *
 * This room starts the agent and runs its loop; waiting and signals are
 * in agent_wait.c, the coordinator in agent_coord.c, builds in
 * agent_build.c and a task in hand in agent_run.c (agent_internal.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "agent_internal.h"
#include "client.h"
#include "conf.h"
#include "err.h"
#include "jsonx.h"
#include "kexec.h"
#include "log.h"
#include "util.h"

static int valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > MAX_NAME || !strcmp(s, ".") || !strcmp(s, ".."))
		return 0;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

/* The loop: register, flush the spool, claim, run, upload, until stopped. */
static void agent_loop(struct agent *a, int registered)
{
	char *path = xasprintf("/api/v1/agents/%s/claim?wait=%d", a->conf.name, a->conf.poll_wait);
	struct note n = { "" };
	long backoff = BACKOFF_FIRST_MS;

	while (!agent_stopping) {
		json_t *reply = NULL;
		long status = 0;
		int rc;
		char *msg = NULL;

		if (!registered) {
			if (agent_register(a) < 0)
				break;
			registered = 1;
		}
		/* Results an earlier run or a failed upload left behind go first. */
		if (agent_spool_flush(a, 1) < 0) {
			msg = xasprintf("spool: results wait for the coordinator (%s); retrying",
					err_msg());
		} else {
			rc = client_request(&reply, &status, a->cl, "POST", path, NULL,
					    a->conf.poll_wait + REQUEST_TIMEOUT_S);
			if (rc == 0 && status == 200 && json_is_object(reply)) {
				agent_note_clear(&n, "claim: coordinator answers again");
				backoff = BACKOFF_FIRST_MS;
				agent_handle_task(a, reply, 0);
			} else if (rc == 0 && status == 204) {
				agent_note_clear(&n, "claim: coordinator answers again");
				backoff = BACKOFF_FIRST_MS;
			} else if (rc == 0 && status == 404) {
				log_warn("claim: the coordinator does not know '%s'; registering again",
					 a->conf.name);
				registered = 0;
			} else if (rc == 0) {
				msg = xasprintf("claim: HTTP %ld: %s; retrying", status,
						client_error_text(reply, status));
			} else {
				msg = xasprintf("claim: %s; retrying", err_msg());
			}
		}
		json_decref(reply);
		if (msg) {
			agent_note(&n, LOG_WARN, msg);
			free(msg);
			agent_nap(a, backoff);
			backoff = agent_backoff_next(backoff);
		}
	}
	free(path);
}

/*
 * A task a kexec left in the journal (agents/boot/kexec.h) is carried on
 * before anything is claimed; then the machine goes back to its
 * known-good kernel. The heartbeats name it from now on: its lease
 * lives on if the reboot took less than the lease.
 */
static void resume_kexec(struct agent *a)
{
	json_t *claim = NULL;

	if (kexec_journal_claim(&claim, a->conf.workdir) < 0)
		fatal("%s", err_msg());
	if (!claim)
		return;
	agent_handle_task(a, claim, 1);
	json_decref(claim);
	if (!agent_stopping && kexec_finish(a->conf.workdir) < 0)
		fatal("kexec: %s", err_msg());
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bisect-agent -f CONFIG [-v]\n"
		   "       bisect-agent -f CONFIG --noreturn | --forget BUILD_ID|all\n"
		   "  -f CONFIG           the agent's YAML configuration (etc/agent.yaml)\n"
		   "  -v                  log debug messages\n"
		   "  --noreturn          list the kernels this machine skips because a kexec into them\n"
		   "                      did not come back (build id, when, why), and exit\n"
		   "  --forget ID|all     forget one of them (or all), so that its next task boots it\n"
		   "                      again, and exit\n");
}

static char *workdir_sub(const char *workdir, const char *sub)
{
	char *p = xasprintf("%s/%s", workdir, sub);

	if (mkdir_p(p, 0755) < 0)
		fatal("%s", err_msg());
	return p;
}

/* A lock file shared by the agents of one host; -1 when none is configured. */
static int open_host_lock(const char *path, const char *key)
{
	char *dir, *slash;
	int fd;

	if (!path)
		return -1;
	dir = xstrdup(path);
	slash = strrchr(dir, '/');
	/* /run/bisect-agent does not survive a reboot. */
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir_p(dir, 0755) < 0)
			fatal("%s: %s", key, err_msg());
	}
	free(dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		fatal("%s %s: %s", key, path, strerror(errno));
	return fd;
}

static void setup(struct agent *a)
{
	char *lock = xasprintf("%s/agent.lock", a->conf.workdir);
	struct sigaction sa;
	pthread_condattr_t ca;

	if (!valid_name(a->conf.name))
		fatal("agent name '%s' must be 1 to %d of A-Z a-z 0-9 . _ -", a->conf.name, MAX_NAME);
	if (mkdir_p(a->conf.workdir, 0755) < 0)
		fatal("%s", err_msg());
	a->workdir_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (a->workdir_fd < 0)
		fatal("%s: %s", lock, strerror(errno));
	if (flock(a->workdir_fd, LOCK_EX | LOCK_NB) < 0)
		fatal("%s: another bisect-agent uses this work dir", a->conf.workdir);
	free(lock);
	a->repos = workdir_sub(a->conf.workdir, "repos");
	a->logs = workdir_sub(a->conf.workdir, "logs");
	a->spool = workdir_sub(a->conf.workdir, "spool");
	a->kbuild = workdir_sub(a->conf.workdir, "kbuild");
	a->kcache = workdir_sub(a->conf.workdir, "kcache");
	a->lock_fd = open_host_lock(a->conf.measure_lock, "measure_lock");
	a->build_fd = open_host_lock(a->conf.build_lock, "build_lock");
	if (a->conf.poll_wait > 60) {
		/* The coordinator holds a claim at most 60 s (docs/API.md). */
		log_warn("poll_wait %d s is more than a claim can wait; using 60 s", a->conf.poll_wait);
		a->conf.poll_wait = 60;
	} else if (a->conf.poll_wait < 0) {
		a->conf.poll_wait = 0;
	}
	a->hb_interval = a->conf.heartbeat > 0 ? a->conf.heartbeat : 5;

	pthread_mutex_init(&a->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->wake, &ca);
	pthread_condattr_destroy(&ca);

	/* A handler, not a blocked mask: commands we start must get signals as usual. */
	if (pipe2(agent_sig_pipe, O_CLOEXEC) < 0)
		fatal("pipe: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = agent_on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	a->cl = client_new(a->conf.coordinator);
	a->hb_cl = client_new(a->conf.coordinator);
	if (!a->cl || !a->hb_cl)
		fatal("cannot set up HTTP to %s", a->conf.coordinator);
	client_set_ca_file(a->cl, a->conf.ca_file);
	client_set_ca_file(a->hb_cl, a->conf.ca_file);
	srandom((unsigned)(getpid() ^ now_ms()));
}

int main(int argc, char **argv)
{
	struct agent a;
	const char *config = NULL;
	pthread_t sig_thread, hb_thread;
	int verbose = 0, opt, level, noreturn = 0;
	const char *forget = NULL;
	static const struct option longopts[] = {
		{ "noreturn", no_argument, NULL, 'N' },
		{ "forget", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};

	memset(&a, 0, sizeof(a));
	log_init("bisect-agent", LOG_INFO);
	while ((opt = getopt_long(argc, argv, "f:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			config = optarg;
			break;
		case 'N':
			noreturn = 1;
			break;
		case 'F':
			forget = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!config || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (conf_agent_load(&a.conf, config) < 0)
		fatal("%s", err_msg());
	if (noreturn || forget) {
		/* Offline: the running agent, if any, reads the records at each kexec task. */
		int n = noreturn && forget ? err_set(ERR_INVALID, "--noreturn and --forget: one at a time")
			: noreturn ? kexec_noreturn_list(a.conf.workdir, stdout)
				   : kexec_noreturn_forget(a.conf.workdir, forget);

		if (n < 0) {
			fprintf(stderr, "bisect-agent: %s\n", err_msg());
			conf_agent_release(&a.conf);
			return err_code() == ERR_INVALID ? 2 : 1;
		}
		if (forget && n == 0)
			printf("forgot nothing: no kernel was remembered as not come back\n");
		else if (forget)
			printf("forgot %d kernel%s: %s\n", n, n == 1 ? "" : "s",
			       n == 1 ? "its next task boots it again" : "their next tasks boot them again");
		conf_agent_release(&a.conf);
		return 0;
	}
	level = verbose ? LOG_DEBUG : log_level_parse(a.conf.log_level ? a.conf.log_level : "info");
	if (level < 0)
		fatal("%s: unknown log_level '%s'", config, a.conf.log_level);
	log_init("bisect-agent", (enum log_level)level);
	setup(&a);

	if (pthread_create(&sig_thread, NULL, agent_signal_main, &a))
		fatal("cannot start a thread");
	pthread_detach(sig_thread);
	log_info("agent '%s' starting: coordinator %s, work dir %s%s%s", a.conf.name,
		 a.conf.coordinator, a.conf.workdir,
		 a.conf.measure_lock ? ", measure lock " : "",
		 a.conf.measure_lock ? a.conf.measure_lock : "");

	if (agent_load_token(&a) == 0 && agent_register(&a) == 0) {
		if (pthread_create(&hb_thread, NULL, agent_heartbeat_main, &a))
			fatal("cannot start a thread");
		resume_kexec(&a);
		/* Nothing lost: what a crash left in the spool goes first. */
		agent_spool_flush(&a, UPLOAD_TRIES);
		agent_loop(&a, 1);
		pthread_mutex_lock(&a.mu);
		a.quit = 1;
		pthread_cond_broadcast(&a.wake);
		pthread_mutex_unlock(&a.mu);
		pthread_join(hb_thread, NULL);
	}
	log_info("agent '%s' stopped", a.conf.name);
	client_free(a.cl);
	client_free(a.hb_cl);
	if (a.lock_fd >= 0)
		close(a.lock_fd);
	if (a.build_fd >= 0)
		close(a.build_fd);
	close(a.workdir_fd);
	free(a.repos);
	free(a.logs);
	free(a.spool);
	free(a.kbuild);
	free(a.kcache);
	conf_agent_release(&a.conf);
	return 0;
}
