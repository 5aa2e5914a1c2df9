/*
 * bisectd: the coordinator. Reads its config, opens the store, serves the
 * API, and expires leases once a second until SIGINT or SIGTERM.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
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

	if (store_open(&st, conf.database))
		fatal("%s", err_msg());
	coord_new(&s, &conf, st);
	if (coord_sync_conf(s))
		fatal("%s", err_msg());
	if (http_start(&srv, conf.listen, conf.max_body, api_handle, s))
		fatal("%s", err_msg());
	log_info("listening on http://%s, database %s (schema version %d)", conf.listen, conf.database,
		 store_version(st));
	coord_start_mirrors(s);
	if (coord_start_steps(s))
		fatal("%s", err_msg());
	while (!stopping) {
		coord_tick(s);
		sleep(1);
	}
	log_info("stopping");
	coord_wake_all(s);
	events_shutdown();
	http_stop(srv);
	coord_free(s);
	store_close(st);
	conf_bisectd_release(&conf);
	return 0;
}
