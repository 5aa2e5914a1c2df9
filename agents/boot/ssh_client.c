/*
 * ssh_client: what boot ssh (ssh.c) runs on the agent: the definition's
 * "ssh" settings, read and checked; OpenSSH's client with the lab's fixed
 * options, and ssh's own words when it fails; the definition's argvs with
 * their words ({kernel}, {build}, ...) substituted; and the console
 * command, read in a thread of its own.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jsonx.h"
#include "log.h"
#include "ssh_client.h"
#include "util.h"
#include "workload.h"

#define RUN_OUTPUT_MAX (4 << 20)
#define CONSOLE_MAX (16u << 20)

static int argv_key(json_t **out, json_t *obj, const char *key, int required)
{
	json_t *v = json_object_get(obj, key), *item;
	size_t i;

	*out = NULL;
	if (!v || json_is_null(v)) {
		if (required)
			return err_set(ERR_INVALID, "ssh: '%s' is required", key);
		return 0;
	}
	if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > 256)
		return err_set(ERR_INVALID, "ssh: '%s' must be an array of 1 to 256 strings", key);
	json_array_foreach(v, i, item)
		if (!json_is_string(item) || (i == 0 && !json_string_length(item)))
			return err_set(ERR_INVALID, "ssh: '%s'[%zu] is not a valid argument", key, i);
	*out = v;
	return 0;
}

/* Reads and checks the settings: the agent checks what the coordinator sent again. */
int ssh_settings_read(struct settings *s, json_t *def)
{
	json_t *o = json_object_get(def, "ssh"), *v;
	size_t i;

	memset(s, 0, sizeof(*s));
	if (!json_is_object(o))
		return err_set(ERR_INVALID, "ssh: the workload has no 'ssh' settings (host, known_hosts, "
			       "install, power_cycle)");
	if (jsonx_str(&s->host, o, "host", 255, 1, NULL) < 0 ||
	    jsonx_str(&s->user, o, "user", 64, 0, "root") < 0 ||
	    jsonx_int(&s->port, o, "port", 1, 65535, 0, 22) < 0 ||
	    jsonx_str(&s->identity, o, "identity", 1024, 0, NULL) < 0 ||
	    jsonx_str(&s->known_hosts, o, "known_hosts", 1024, 1, NULL) < 0 ||
	    jsonx_str(&s->dir, o, "dir", 256, 0, "/tmp/bisect") < 0 ||
	    jsonx_str(&s->good_kernel, o, "good_kernel", 128, 0, NULL) < 0 ||
	    jsonx_str(&s->tools_dir, o, "tools_dir", 200, 0, "/usr/bin") < 0 ||
	    jsonx_int(&s->connect_timeout, o, "connect_timeout", 1, 300, 0, 10) < 0 ||
	    jsonx_int(&s->boot_timeout, o, "boot_timeout", 1, 7200, 0, 300) < 0 ||
	    jsonx_int(&s->power_tries, o, "power_tries", 1, 10, 0, 2) < 0 ||
	    jsonx_int(&s->run_timeout, def, "run_timeout", 1, 86400, 0, 300) < 0)
		return err_set(ERR_INVALID, "ssh: %s", err_msg());
	/* Words ssh would read as its own options, or that a remote shell would split. */
	if (s->host[0] == '-' || strpbrk(s->host, " \t\n@'\"\\;") ||
	    !workload_only(s->user, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", 64) ||
	    s->user[0] == '-')
		return err_set(ERR_INVALID, "ssh: 'host' and 'user' must be a host name or address and a "
			       "login name");
	if (s->dir[0] != '/' || strpbrk(s->dir, "\n"))
		return err_set(ERR_INVALID, "ssh: 'dir' must be an absolute path on the device");
	if (s->tools_dir[0] != '/' || strpbrk(s->tools_dir, " \t\n'\"\\$`"))
		return err_set(ERR_INVALID, "ssh: 'tools_dir' must be an absolute path on the device, without spaces "
			       "or quotes");
	if (argv_key(&s->install, o, "install", 1) < 0 || argv_key(&s->power_cycle, o, "power_cycle", 1) < 0 ||
	    argv_key(&s->restore, o, "restore", 0) < 0 || argv_key(&s->console, o, "console", 0) < 0)
		return ERR_INVALID;
	v = json_object_get(o, "copy");
	if (v && !json_is_null(v)) {
		json_t *item;

		if (!json_is_array(v) || json_array_size(v) > MAX_COPY)
			return err_set(ERR_INVALID, "ssh: 'copy' must be a list of at most %d build outputs",
				       MAX_COPY);
		json_array_foreach(v, i, item) {
			const char *p = json_string_value(item), *base;

			if (!p || !path_inside(p) || strlen(p) > 256)
				return err_set(ERR_INVALID, "ssh: 'copy'[%zu] must be a path inside the build "
					       "output", i);
			base = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
			if (!workload_only(base, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+",
					   128) || !strcmp(base, "kernel"))
				return err_set(ERR_INVALID, "ssh: 'copy'[%zu]: its file name must be plain "
					       "(A-Z a-z 0-9 . _ - +) and not 'kernel'", i);
		}
		s->copy = v;
	}
	if (!s->restore)
		s->restore = s->power_cycle;
	return 0;
}

/* --- the ssh client -------------------------------------------------------- */

/* The ssh command line up to and including the destination; *words owns the strings. */
static void ssh_base(const char **argv, size_t *n, char **words, const struct settings *s, long long to)
{
	size_t k = 0;

	*n = 0;
	argv[(*n)++] = "ssh";
	/* The agent user's ~/.ssh/config does not change what the lab runs. */
	argv[(*n)++] = "-F";
	argv[(*n)++] = "/dev/null";
	argv[(*n)++] = "-o";
	argv[(*n)++] = "BatchMode=yes";
	argv[(*n)++] = "-o";
	argv[(*n)++] = "StrictHostKeyChecking=yes";
	argv[(*n)++] = "-o";
	argv[(*n)++] = words[k++] = xasprintf("UserKnownHostsFile=%s", s->known_hosts);
	argv[(*n)++] = "-o";
	argv[(*n)++] = "GlobalKnownHostsFile=/dev/null";
	argv[(*n)++] = "-o";
	argv[(*n)++] = words[k++] = xasprintf("ConnectTimeout=%lld", to);
	/* A device that dies during a run ends the run within a minute. */
	argv[(*n)++] = "-o";
	argv[(*n)++] = "ServerAliveInterval=15";
	argv[(*n)++] = "-o";
	argv[(*n)++] = "ServerAliveCountMax=4";
	argv[(*n)++] = "-o";
	argv[(*n)++] = "LogLevel=ERROR";
	if (s->identity) {
		argv[(*n)++] = "-o";
		argv[(*n)++] = "IdentitiesOnly=yes";
		argv[(*n)++] = "-i";
		argv[(*n)++] = s->identity;
	}
	argv[(*n)++] = "-p";
	argv[(*n)++] = words[k++] = xasprintf("%lld", s->port);
	argv[(*n)++] = "-l";
	argv[(*n)++] = s->user;
	argv[(*n)++] = s->host;
	words[k] = NULL;
}

#define SSH_WORDS 4
#define SSH_ARGS 40

/* ssh's own failure (exit 255) that waiting will not mend: the agent's or the lab's set-up. */
int ssh_fatal(const char *err)
{
	static const char *const fatal[] = {
		"Host key verification failed", "REMOTE HOST IDENTIFICATION HAS CHANGED",
		"Permission denied", "no such identity", "Load key", "Bad configuration option",
		"Could not resolve hostname", "No such file or directory", "bad permissions",
		"UNPROTECTED PRIVATE KEY FILE", NULL
	};

	for (const char *const *f = fatal; *f; f++)
		if (err && strstr(err, *f))
			return 1;
	return 0;
}

/* The last non-empty line of s (NUL-terminated, NULL: none), for a message. */
static void last_line(char *buf, size_t n, const char *s)
{
	if (!s)
		s = "";
	str_last_line(buf, n, s, strlen(s));
}

/*
 * Runs the remote command line cmd (already quoted for the device's
 * shell) over ssh; stdin from stdin_path (NULL: none).
 */
int ssh_run(struct run_result *res, const struct settings *s, const char *cmd, const char *stdin_path,
		   long long connect_to, int timeout_ms, const int *cancel)
{
	const char *argv[SSH_ARGS];
	char *words[SSH_WORDS];
	struct run_opts o = RUN_OPTS_INIT;
	size_t n;
	int rc;

	ssh_base(argv, &n, words, s, connect_to);
	argv[n++] = cmd;
	argv[n] = NULL;
	o.argv = argv;
	o.stdin_path = stdin_path;
	o.timeout_ms = timeout_ms;
	o.max_output = RUN_OUTPUT_MAX;
	o.cancel = cancel;
	rc = run_cmd(res, &o);
	for (char **w = words; *w; w++)
		free(*w);
	return rc;
}

/* A message for a failed ssh run: ssh's own words when it failed itself. */
void ssh_describe(char *buf, size_t n, const struct run_result *res)
{
	char how[64], line[400];

	last_line(line, sizeof(line), res->err);
	if (!*line)
		last_line(line, sizeof(line), res->out);
	run_describe(res, how, sizeof(how));
	if (res->exited && res->status == 255)
		snprintf(buf, n, "%s%s", strncmp(line, "ssh: ", 5) ? "ssh: " : "", *line ? line : "failed (exit 255)");
	else
		snprintf(buf, n, "%s%s%s", how, *line ? ": " : "", line);
}

/* --- the definition's argvs ------------------------------------------------ */

/* {kernel} {dir} {cmdline} {build} {release} {host} {port} in word w. */
static char *subst(const char *w, const struct session *ss)
{
	struct sbuf sb = SBUF_INIT;
	char port[16];

	snprintf(port, sizeof(port), "%lld", ss->set.port);
	while (*w) {
		static const char *const names[] = { "{kernel}", "{dir}", "{cmdline}", "{build}", "{release}",
						     "{host}", "{port}", NULL };
		const char *vals[] = { ss->kernel_path, ss->set.dir, ss->cmdline ? ss->cmdline : "", ss->build,
				       ss->release, ss->set.host, port };
		int hit = 0;

		for (size_t i = 0; names[i]; i++) {
			size_t len = strlen(names[i]);

			if (!strncmp(w, names[i], len)) {
				sbuf_adds(&sb, vals[i]);
				w += len;
				hit = 1;
				break;
			}
		}
		if (!hit)
			sbuf_add(&sb, w++, 1);
	}
	return sbuf_detach(&sb);
}

/* The argv a with its words substituted; *words owns them. */
static const char **argv_of(char ***words, json_t *a, const struct session *ss)
{
	size_t n = json_array_size(a);
	const char **argv = xcalloc(n + 1, sizeof(*argv));

	*words = xcalloc(n + 1, sizeof(**words));
	for (size_t i = 0; i < n; i++)
		argv[i] = (*words)[i] = subst(json_string_value(json_array_get(a, i)), ss);
	return argv;
}

static void words_free(char **words)
{
	for (char **w = words; w && *w; w++)
		free(*w);
	free(words);
}

/* The argv a as one command line for the device's shell, each word quoted. */
char *ssh_remote_cmd(json_t *a, const struct session *ss)
{
	struct sbuf sb = SBUF_INIT;
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v) {
		char *w = subst(json_string_value(v), ss);

		if (i)
			sbuf_adds(&sb, " ");
		workload_sh_quote(&sb, w);
		free(w);
	}
	return sbuf_detach(&sb);
}

/* Runs the argv a on the agent. 0, or ERR_FAIL with what went wrong in why. */
int ssh_local_run(char *why, size_t n, json_t *a, const struct session *ss, const char *what)
{
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	char **words = NULL, line[400], how[64];
	const char **argv = argv_of(&words, a, ss);
	int rc = 0;

	o.argv = argv;
	o.timeout_ms = POWER_TIMEOUT_MS;
	if (run_cmd(&res, &o) < 0) {
		snprintf(why, n, "%s: cannot run %s: %s", what, argv[0], err_msg());
		rc = ERR_FAIL;
	} else if (!run_ok(&res)) {
		last_line(line, sizeof(line), res.err && *res.err ? res.err : res.out);
		snprintf(why, n, "%s '%s' failed (%s)%s%s", what, argv[0], run_describe(&res, how, sizeof(how)),
			 *line ? ": " : "", line);
		rc = ERR_FAIL;
	}
	run_result_release(&res);
	free(argv);
	words_free(words);
	return rc;
}

/* --- the console ----------------------------------------------------------- */

static void console_output(void *arg, int stream, const char *data, size_t n)
{
	struct console *c = arg;

	(void)stream;
	pthread_mutex_lock(&c->lock);
	if (c->text.len + n <= CONSOLE_MAX)
		sbuf_add(&c->text, data, n);
	pthread_mutex_unlock(&c->lock);
}

static void *console_main(void *arg)
{
	struct console *c = arg;
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;

	o.argv = c->argv;
	o.cancel = &c->cancel;
	o.max_output = 4096; /* the text is kept by console_output */
	o.on_output = console_output;
	o.arg = c;
	if (run_cmd(&res, &o) < 0) {
		console_output(c, 2, "bisect-agent: cannot start the console command: ", 48);
		console_output(c, 2, err_msg(), strlen(err_msg()));
	} else {
		run_result_release(&res);
	}
	return NULL;
}

void ssh_console_start(struct session *ss)
{
	struct console *c = &ss->con;

	if (!ss->set.console)
		return;
	c->argv = argv_of(&c->words, ss->set.console, ss);
	if (pthread_create(&c->thread, NULL, console_main, c) == 0)
		c->running = 1;
	else
		log_warn("ssh: cannot start the console thread");
}

/* What the console printed so far (a copy), or NULL without one. */
char *ssh_console_text(struct console *c)
{
	char *s;

	if (!c->argv)
		return NULL;
	pthread_mutex_lock(&c->lock);
	s = xstrdup(c->text.buf ? c->text.buf : "");
	pthread_mutex_unlock(&c->lock);
	return s;
}

void ssh_console_stop(struct console *c)
{
	if (c->running) {
		__atomic_store_n(&c->cancel, 1, __ATOMIC_RELEASE);
		pthread_join(c->thread, NULL);
		c->running = 0;
	}
	free((void *)(uintptr_t)c->argv);
	c->argv = NULL;
	words_free(c->words);
	c->words = NULL;
	sbuf_release(&c->text);
}
