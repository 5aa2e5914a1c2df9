/*
 * bisectd: the coordinator. Reads its config, opens the store, serves the
 * API, and expires leases once a second until SIGINT or SIGTERM.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "api.h"
#include "auth.h"
#include "conf.h"
#include "err.h"
#include "events.h"
#include "http.h"
#include "log.h"
#include "coord.h"
#include "store.h"
#include "util.h"

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

/* Descriptors the process needs besides its connections: the store, logs, pipes, mirrors. */
#define SPARE_FDS 64

/*
 * Raises the soft limit on open files to the hard one, and returns how
 * many connections fit under it (want, or fewer with a warning).
 */
static unsigned raise_nofile(unsigned want)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)want + SPARE_FDS;

	if (getrlimit(RLIMIT_NOFILE, &rl)) {
		log_warn("getrlimit(RLIMIT_NOFILE): %s; keeping max_connections %u", strerror(errno), want);
		return want;
	}
	if (rl.rlim_cur < need && rl.rlim_cur < rl.rlim_max) {
		rlim_t old = rl.rlim_cur;

		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			log_warn("setrlimit(RLIMIT_NOFILE, %llu): %s", (unsigned long long)rl.rlim_cur, strerror(errno));
		getrlimit(RLIMIT_NOFILE, &rl);
		log_info("open files limit raised from %llu to %llu (hard limit %llu)", (unsigned long long)old,
			 (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
		unsigned fit = rl.rlim_cur > 2 * SPARE_FDS ? (unsigned)(rl.rlim_cur - SPARE_FDS) : SPARE_FDS;

		log_warn("max_connections %u does not fit under the open files limit %llu (hard limit %llu): "
			 "serving at most %u; raise the hard limit (ulimit -Hn, LimitNOFILE= in systemd) to serve more",
			 want, (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max, fit);
		return fit;
	}
	return want;
}

/*
 * Says so at start when bisectd is reachable beyond this host without
 * protection: without TLS, and with "auth: none".
 */
static void warn_exposure(const struct conf_bisectd *conf)
{
	if (http_listen_is_loopback(conf->listen))
		return;
	if (!conf->tls_cert)
		log_warn("listening on %s beyond loopback without TLS: anyone on the path can read and change "
			 "what agents are sent (set tls_cert and tls_key, see docs/LAB.md)", conf->listen);
	if (conf->auth.none)
		log_warn("auth: none, listening on %s beyond loopback: anyone who reaches it can submit, cancel "
			 "and act as any agent (remove auth: none, see docs/API.md)", conf->listen);
}

static void usage(FILE *f)
{
	fputs("usage: bisectd [-f CONFIG] [-n] [-v] [-l LISTEN] [-d DATABASE]\n"
	      "  -f CONFIG    configuration file (default etc/bisectd.yaml)\n"
	      "  -n           check the configuration and exit\n"
	      "  -v           log debug messages\n"
	      "  -l HOST:PORT listen here instead of the config's address\n"
	      "  -d PATH      database path instead of the config's\n", f);
}

int main(int argc, char **argv)
{
	const char *path = "etc/bisectd.yaml", *listen_arg = NULL, *db_arg = NULL;
	struct conf_bisectd conf;
	struct store *st = NULL;
	struct coord *s = NULL;
	struct http_server *srv = NULL;
	struct http_config hc = { 0 };
	struct auth *auth = NULL;
	struct sigaction sa;
	int check = 0, verbose = 0, opt, lvl;

	log_init("bisectd", LOG_INFO);
	while ((opt = getopt(argc, argv, "f:nvl:d:h")) != -1) {
		switch (opt) {
		case 'f': path = optarg; break;
		case 'n': check = 1; break;
		case 'v': verbose = 1; break;
		case 'l': listen_arg = optarg; break;
		case 'd': db_arg = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (conf_bisectd_load(&conf, path))
		fatal("%s", err_msg());
	if (check) {
		if (http_check_tls(conf.tls_cert, conf.tls_key))
			fatal("%s: %s", path, err_msg());
		printf("%s: configuration OK (%zu repos, %zu workloads, %zu pools)\n", path,
		       conf.nr_repos, conf.nr_workloads, conf.nr_pools);
		conf_bisectd_release(&conf);
		return 0;
	}
	if (listen_arg) {
		free(conf.listen);
		conf.listen = xstrdup(listen_arg);
	}
	if (db_arg) {
		free(conf.database);
		conf.database = xstrdup(db_arg);
	}
	lvl = log_level_parse(conf.log_level);
	log_init("bisectd", verbose ? LOG_DEBUG : lvl < 0 ? LOG_INFO : (enum log_level)lvl);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (store_open(&st, conf.database) || store_checkpointer_start(st))
		fatal("%s", err_msg());
	if (auth_new(&auth, &conf))
		fatal("%s", err_msg());
	api_set_auth(auth);
	coord_new(&s, &conf, st);
	if (coord_sync_conf(s))
		fatal("%s", err_msg());
	hc.listen = conf.listen;
	hc.max_body = conf.max_body;
	hc.threads = (unsigned)conf.threads;
	hc.max_connections = raise_nofile((unsigned)conf.max_connections);
	hc.max_per_address = (unsigned)conf.max_per_address;
	hc.idle_timeout = (unsigned)conf.idle_timeout;
	hc.tls_cert = conf.tls_cert;
	hc.tls_key = conf.tls_key;
	if (http_start(&srv, &hc, api_handle, s))
		fatal("%s", err_msg());
	log_info("listening on %s://%s (%u threads, at most %u connections, %u per address), database %s "
		 "(schema version %d)", conf.tls_cert ? "https" : "http", conf.listen, hc.threads,
		 hc.max_connections, hc.max_per_address, conf.database, store_version(st));
	warn_exposure(&conf);
	coord_start_mirrors(s);
	if (coord_start_steps(s))
		fatal("%s", err_msg());
	while (!stopping) {
		coord_tick(s);
		sleep(1);
	}
	log_info("stopping");
	coord_wake_all(s);
	events_shutdown(s);
	http_stop(srv);
	coord_free(s);
	auth_free(auth);
	store_close(st);
	conf_bisectd_release(&conf);
	return 0;
}
