/*
 * ssh_client: the parts of boot ssh (ssh.c) that run on the agent: its
 * settings, the ssh client, the definition's argvs and the console. A
 * session is one task's device, from start() to stop().
 */
#ifndef AGENT_BOOT_SSH_CLIENT_H
#define AGENT_BOOT_SSH_CLIENT_H

#include <jansson.h>
#include <pthread.h>

#include "run.h"
#include "util.h"

#define MAX_COPY 8
/* A power or restore command that takes longer than this is stuck. */
#define POWER_TIMEOUT_MS (300 * 1000)

/* The definition's "ssh" object, strings borrowed from it. */
struct settings {
	const char *host, *user, *identity, *known_hosts, *dir, *good_kernel;
	const char *tools_dir;          /* where the guest workloads' tools are on the device */
	long long port, connect_timeout, boot_timeout, power_tries, run_timeout;
	json_t *install, *power_cycle, *restore, *console, *copy;
};

/* The console command, running in a thread of its own from start() to stop(). */
struct console {
	pthread_t thread;
	int running, cancel;
	pthread_mutex_t lock;
	struct sbuf text;           /* what it printed, up to CONSOLE_MAX */
	const char *const *argv;
	char **words;               /* argv's storage */
};

struct session {
	struct settings set;
	struct console con;
	char build[17];             /* the build id */
	char release[128];          /* the release the built kernel says it is */
	char kernel_path[512];      /* the kernel on the device */
	char *cmdline;              /* what {cmdline} gave the install command */
	const char *device_what;    /* "root@10.0.0.5:22" for messages */
	char *device;
	const int *cancel;          /* the task's (boot_task.cancel): it stops the waits for the device and
				     * the runs, never an install, a power cycle or a restore */
};

/*
 * Reads def's "ssh" settings into s (strings borrowed from def), checked
 * again on the agent: ERR_INVALID with a message naming the key.
 */
int ssh_settings_read(struct settings *s, json_t *def);

/* 1 when ssh's own failure (its stderr err) is one waiting will not mend: the agent's or the lab's set-up. */
int ssh_fatal(const char *err);
/*
 * Runs the remote command line cmd (already quoted for the device's
 * shell) over ssh, connecting within connect_to seconds, all of it
 * within timeout_ms; stdin from stdin_path (NULL: none); stopped as at
 * its deadline when *cancel is set (cancel may be NULL). As run_cmd().
 */
int ssh_run(struct run_result *res, const struct settings *s, const char *cmd, const char *stdin_path,
	    long long connect_to, int timeout_ms, const int *cancel);
/* A message for a failed ssh run into buf: ssh's own words when it failed itself. */
void ssh_describe(char *buf, size_t n, const struct run_result *res);

/* The argv a, its words substituted, as one command line for the device's shell (the caller frees it). */
char *ssh_remote_cmd(json_t *a, const struct session *ss);
/* Runs the argv a, its words substituted, on the agent. 0, or ERR_FAIL with what went wrong in why. */
int ssh_local_run(char *why, size_t n, json_t *a, const struct session *ss, const char *what);

/* Starts the console command in a thread of its own, when the settings have one. */
void ssh_console_start(struct session *ss);
/* What the console printed so far (a copy the caller frees), or NULL without one. */
char *ssh_console_text(struct console *c);
/* Stops the console command and frees what it printed. */
void ssh_console_stop(struct console *c);

#endif
