/*
 * ssh: the device under test is another host, reached with OpenSSH's
 * client, in the manner of the kernel's ktest.pl: copy the built kernel
 * (and the extra build outputs the definition lists) to the device,
 * install it there with the configured command, reboot it through the
 * configured power command (run on the agent: an IPMI or PDU command
 * line), wait for ssh with a deadline, power-cycle again on timeout, check
 * that the running kernel is the one built, run the workload's argv there
 * over ssh (a profile task's under the device's perf, reported there), and
 * at the end bring the device back to its known-good kernel.
 *
 * The built kernel is known by its release (its bzImage header, what
 * `uname -r` prints) and its build id: a hash of what was copied, passed
 * to the install command in the command line ({cmdline} ends with
 * "bisect.build=ID") and looked for in the device's /proc/cmdline.
 *
 * A kernel that does not come back, or a wrong one that does, is the
 * commit's ("skipped", with the console's tail); an ssh error of the
 * agent's own (no key, a host key that does not match, a refused login),
 * a failed copy, install or power command are the lab's ("failed", with
 * the tool's message). docs/LAB.md has the settings.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boot.h"
#include "err.h"
#include "initramfs.h"
#include "jsonx.h"
#include "log.h"
#include "perfreport.h"
#include "run.h"
#include "util.h"

#define RUN_OUTPUT_MAX (4 << 20)
#define CONSOLE_MAX (16u << 20)
#define TAIL_BYTES 4096
#define MAX_COPY 8
/* A power or restore command that takes longer than this is stuck. */
#define POWER_TIMEOUT_MS (300 * 1000)
/* How long a copy of one file may take. */
#define COPY_TIMEOUT_MS (600 * 1000)
/* How long perf report of a profile task's runs may take on the device. */
#define REPORT_TIMEOUT_MS (300 * 1000)

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
};

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
static int settings_read(struct settings *s, json_t *def)
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
static int ssh_fatal(const char *err)
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

/* The last non-empty line of s, for a message. */
static void last_line(char *buf, size_t n, const char *s)
{
	const char *end, *start;

	if (!s)
		s = "";
	end = s + strlen(s);
	while (end > s && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	start = end;
	while (start > s && start[-1] != '\n')
		start--;
	snprintf(buf, n, "%.*s", (int)(end - start), start);
}

/*
 * Runs the remote command line cmd (already quoted for the device's
 * shell) over ssh; stdin from stdin_path (NULL: none).
 */
static int ssh_run(struct run_result *res, const struct settings *s, const char *cmd, const char *stdin_path,
		   long long connect_to, int timeout_ms)
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
	rc = run_cmd(res, &o);
	for (char **w = words; *w; w++)
		free(*w);
	return rc;
}

/* A message for a failed ssh run: ssh's own words when it failed itself. */
static void ssh_describe(char *buf, size_t n, const struct run_result *res)
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
static char *remote_cmd(json_t *a, const struct session *ss)
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
static int local_run(char *why, size_t n, json_t *a, const struct session *ss, const char *what)
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

static void console_start(struct session *ss)
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
static char *console_text(struct console *c)
{
	char *s;

	if (!c->argv)
		return NULL;
	pthread_mutex_lock(&c->lock);
	s = xstrdup(c->text.buf ? c->text.buf : "");
	pthread_mutex_unlock(&c->lock);
	return s;
}

static void console_stop(struct console *c)
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

/* --- the steps ------------------------------------------------------------- */

/*
 * Waits up to timeout_s for the device to answer over ssh. 0 when it does,
 * ERR_TIMEOUT when it did not (why: ssh's last words), ERR_FAIL for an
 * ssh error of the agent's own (why says it).
 */
static int wait_ssh(char *why, size_t n, const struct session *ss, long long timeout_s)
{
	int64_t end = now_ms() + timeout_s * 1000;

	snprintf(why, n, "no answer");
	for (;;) {
		struct run_result res;
		int64_t left = end - now_ms();
		long long to = left / 1000 < ss->set.connect_timeout ? left / 1000 : ss->set.connect_timeout;

		if (left <= 0)
			return ERR_TIMEOUT;
		if (to < 1)
			to = 1;
		if (ssh_run(&res, &ss->set, "true", NULL, to, (int)(to * 1000 + 10000)) < 0) {
			snprintf(why, n, "cannot run ssh: %s", err_msg());
			return ERR_FAIL;
		}
		if (run_ok(&res)) {
			run_result_release(&res);
			return 0;
		}
		ssh_describe(why, n, &res);
		if (res.exited && res.status == 255 && ssh_fatal(res.err)) {
			run_result_release(&res);
			return ERR_FAIL;
		}
		run_result_release(&res);
		if (end - now_ms() > 1000)
			sleep(1);
	}
}

/* Copies the local file path to the device as name in its dir. */
static int copy_one(char *why, size_t n, const struct session *ss, const char *path, const char *name)
{
	struct sbuf cmd = SBUF_INIT;
	struct run_result res;
	char *dest = xasprintf("%s/%s", ss->set.dir, name);
	int rc = 0;

	/* ssh's stdin into cat: the device needs a shell, no sftp-server or scp. */
	sbuf_adds(&cmd, "mkdir -p ");
	workload_sh_quote(&cmd, ss->set.dir);
	sbuf_adds(&cmd, " && cat > ");
	workload_sh_quote(&cmd, dest);
	if (ssh_run(&res, &ss->set, cmd.buf, path, ss->set.connect_timeout, COPY_TIMEOUT_MS) < 0) {
		snprintf(why, n, "cannot run ssh: %s", err_msg());
		rc = ERR_FAIL;
	} else {
		if (!run_ok(&res)) {
			char msg[600];

			ssh_describe(msg, sizeof(msg), &res);
			snprintf(why, n, "copy of %s to %s:%s failed: %s", name, ss->device, dest, msg);
			rc = ERR_FAIL;
		}
		run_result_release(&res);
	}
	sbuf_release(&cmd);
	free(dest);
	return rc;
}

/* FNV-1a over the file's bytes into *h. */
static int hash_file(uint64_t *h, const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char buf[65536];
	size_t got;

	if (!f)
		return err_set(ERR_NOTFOUND, "cannot read %s", path);
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
		for (size_t i = 0; i < got; i++)
			*h = (*h ^ buf[i]) * 1099511628211ull;
	fclose(f);
	return 0;
}

/* Asks the device what runs: its release and its command line. */
static int running_kernel(char *why, size_t n, char *release, size_t rlen, char **cmdline, const struct session *ss)
{
	struct run_result res;
	char *nl;
	int rc = 0;

	*cmdline = NULL;
	if (ssh_run(&res, &ss->set, "uname -r; cat /proc/cmdline", NULL, ss->set.connect_timeout, 60000) < 0) {
		snprintf(why, n, "cannot run ssh: %s", err_msg());
		return ERR_FAIL;
	}
	if (!run_ok(&res) || !res.out) {
		char msg[600];

		ssh_describe(msg, sizeof(msg), &res);
		snprintf(why, n, "cannot read the running kernel: %s", msg);
		rc = ERR_FAIL;
		goto out;
	}
	nl = strchr(res.out, '\n');
	snprintf(release, rlen, "%.*s", nl ? (int)(nl - res.out) : (int)strlen(res.out), res.out);
	*cmdline = xstrdup(nl ? nl + 1 : "");
	if ((nl = strchr(*cmdline, '\n')))
		*nl = '\0';
out:
	run_result_release(&res);
	return rc;
}

/* Does the command line hold the word bisect.build=ID? */
static int has_build(const char *cmdline, const char *id)
{
	char *want = xasprintf("bisect.build=%s", id);
	size_t len = strlen(want);
	int found = 0;

	for (const char *p = cmdline; (p = strstr(p, want)); p += len)
		if ((p == cmdline || p[-1] == ' ') && (p[len] == '\0' || p[len] == ' ' || p[len] == '\n'))
			found = 1;
	free(want);
	return found;
}

/*
 * Brings the device back to its known-good kernel: the restore command
 * (by default the power command), ssh within the boot deadline, and the
 * good kernel's release when one is configured. 0, or ERR_FAIL with why.
 */
static int restore(char *why, size_t n, struct session *ss)
{
	char release[128], *cmdline = NULL, msg[600];
	int rc;

	if ((rc = local_run(why, n, ss->set.restore, ss, "restore")) < 0)
		return rc;
	if ((rc = wait_ssh(msg, sizeof(msg), ss, ss->set.boot_timeout)) < 0) {
		snprintf(why, n, "the device did not come back on its good kernel within %lld s: %.400s",
			 ss->set.boot_timeout, msg);
		return ERR_FAIL;
	}
	if (!ss->set.good_kernel)
		return 0;
	if ((rc = running_kernel(why, n, release, sizeof(release), &cmdline, ss)) < 0)
		return rc;
	if (strcmp(release, ss->set.good_kernel) || has_build(cmdline, ss->build)) {
		snprintf(why, n, "after the restore the device runs %s (%s), not the good kernel %s", release,
			 cmdline, ss->set.good_kernel);
		rc = ERR_FAIL;
	}
	free(cmdline);
	return rc;
}

/* After a failed start: the device back on its good kernel; a failure to do so joins r's error. */
static void restore_after(struct boot_result *r, struct session *ss)
{
	char why[600];

	if (restore(why, sizeof(why), ss) == 0) {
		log_info("ssh: %s is back on its good kernel", ss->device);
		return;
	}
	log_warn("ssh: %s", why);
	if (strlen(r->error) + 20 < sizeof(r->error))
		snprintf(r->error + strlen(r->error), sizeof(r->error) - strlen(r->error),
			 "; and then %s", why);
}

static void session_free(struct session *ss)
{
	if (!ss)
		return;
	console_stop(&ss->con);
	pthread_mutex_destroy(&ss->con.lock);
	free(ss->cmdline);
	free(ss->device);
	free(ss);
}

/* r gets the console's text, and its tail when start() failed. */
static void keep_console(struct boot_result *r, struct session *ss, int tail)
{
	free(r->console);
	r->console = console_text(&ss->con);
	if (!tail)
		return;
	free(r->log_tail);
	if (r->console)
		r->log_tail = xstrdup(run_tail(r->console, TAIL_BYTES));
	else
		r->log_tail = xstrdup("(no console: the workload's ssh settings have no 'console' command)");
}

/*
 * A guest workload's run (iperf3, pktgen, xdp) as the QEMU guest runs it:
 * its script's run_once(), by busybox or the device's sh, with its tools
 * in tools_dir on the device (the modules and files it needs are the
 * device's to have). NULL with err_msg() when the script cannot be made.
 */
static char *guest_cmd(const struct boot_task *t, const struct session *ss)
{
	const char *names[16], *paths[16];
	char *full[16];
	struct sbuf sb = SBUF_INIT, cmd = SBUF_INIT;
	int n = t->wl->tools ? t->wl->tools(names, 16, t->def) : 0, rc;

	if (n < 0)
		return NULL;
	for (int k = 0; k < n; k++)
		paths[k] = full[k] = xasprintf("%s/%s", ss->set.tools_dir, names[k]);
	rc = t->wl->script(&sb, t->def, paths);
	for (int k = 0; k < n; k++)
		free(full[k]);
	if (rc < 0) {
		sbuf_release(&sb);
		return NULL;
	}
	sbuf_adds(&sb, "run_once\n");
	sbuf_adds(&cmd, "sh -c ");
	workload_sh_quote(&cmd, sb.buf);
	sbuf_release(&sb);
	return sbuf_detach(&cmd);
}

static int prepare(const struct boot_task *t)
{
	struct settings s;
	const char **argv = NULL;
	int rc;

	if ((rc = settings_read(&s, t->def)) < 0)
		return rc;
	/* An argv workload's words, or a guest workload's script, as run() will make them. */
	if (t->wl->argv && (rc = t->wl->argv(&argv, t->def)) < 0)
		return rc;
	free(argv);
	if (!t->wl->argv) {
		struct session ss = { .set = s };
		char *cmd = guest_cmd(t, &ss);

		if (!cmd)
			return ERR_INVALID;
		free(cmd);
	}
	if (!in_path("ssh"))
		return err_set(ERR_NOTFOUND, "ssh: the ssh client is not in PATH on this agent (apt-get install "
			       "openssh-client)");
	if (access(s.known_hosts, R_OK) < 0)
		return err_set(ERR_NOTFOUND, "ssh: known_hosts file '%s' is not readable on this agent",
			       s.known_hosts);
	if (s.identity && access(s.identity, R_OK) < 0)
		return err_set(ERR_NOTFOUND, "ssh: identity file '%s' is not readable on this agent", s.identity);
	if (!in_path(json_string_value(json_array_get(s.power_cycle, 0))))
		return err_set(ERR_NOTFOUND, "ssh: power_cycle program '%s' not found on this agent",
			       json_string_value(json_array_get(s.power_cycle, 0)));
	if (!in_path(json_string_value(json_array_get(s.restore, 0))))
		return err_set(ERR_NOTFOUND, "ssh: restore program '%s' not found on this agent",
			       json_string_value(json_array_get(s.restore, 0)));
	if (s.console && !in_path(json_string_value(json_array_get(s.console, 0))))
		return err_set(ERR_NOTFOUND, "ssh: console program '%s' not found on this agent",
			       json_string_value(json_array_get(s.console, 0)));
	return 0;
}

static int start(void **session, struct boot_result *r, const struct boot_task *t)
{
	struct session *ss = xcalloc(1, sizeof(*ss));
	const char *image, *append;
	char *kernel = NULL, *extra[MAX_COPY] = { NULL }, *cmd = NULL, *cmdline = NULL;
	char why[700], release[128];
	uint64_t h = 14695981039346656037ull;
	size_t ncopy = 0;
	struct stat st;
	long long tries;
	int rc = ERR_FAIL, installed = 0, wrc = ERR_TIMEOUT;

	memset(r, 0, sizeof(*r));
	*session = NULL;
	pthread_mutex_init(&ss->con.lock, NULL);
	if (settings_read(&ss->set, t->def) < 0 ||
	    jsonx_str(&image, t->def, "kernel_image", 1024, 0, "arch/x86/boot/bzImage") < 0 ||
	    jsonx_str(&append, t->def, "append", 1024, 0, NULL) < 0) {
		boot_fail(r, "failed", "workload: %s", err_msg());
		goto out;
	}
	ss->device = xasprintf("%s@%s:%lld", ss->set.user, ss->set.host, ss->set.port);
	if (!path_inside(image)) {
		boot_fail(r, "failed", "workload: kernel_image '%s' is not a path inside the work tree", image);
		goto out;
	}

	/* What the build made, and who it says it is: missing or not a kernel is the commit's fault. */
	kernel = xasprintf("%s/%s", t->srcdir, image);
	if (stat(kernel, &st) < 0 || !S_ISREG(st.st_mode)) {
		boot_fail(r, "skipped", "build produced no %s", image);
		goto out;
	}
	if (initramfs_kernel_release(ss->release, sizeof(ss->release), kernel) < 0) {
		boot_fail(r, "skipped", "the build's %s is not a kernel: %s", image, err_msg());
		goto out;
	}
	hash_file(&h, kernel);
	for (size_t i = 0; ss->set.copy && i < json_array_size(ss->set.copy); i++) {
		const char *p = json_string_value(json_array_get(ss->set.copy, i));

		extra[ncopy] = xasprintf("%s/%s", t->srcdir, p);
		if (stat(extra[ncopy], &st) < 0 || !S_ISREG(st.st_mode)) {
			ncopy++;
			boot_fail(r, "skipped", "build produced no %s (listed in the ssh settings' copy)", p);
			goto out;
		}
		hash_file(&h, extra[ncopy++]);
	}
	snprintf(ss->build, sizeof(ss->build), "%016llx", (unsigned long long)h);
	snprintf(ss->kernel_path, sizeof(ss->kernel_path), "%s/kernel", ss->set.dir);
	ss->cmdline = append && *append ? xasprintf("%s bisect.build=%s", append, ss->build)
					: xasprintf("bisect.build=%s", ss->build);

	/* The console watches from before the copy to the end of the task. */
	console_start(ss);

	/* Copy and install: the device is on its good kernel, and answers. */
	if (copy_one(why, sizeof(why), ss, kernel, "kernel") < 0) {
		boot_fail(r, "failed", "ssh: %s", why);
		goto out;
	}
	for (size_t i = 0; i < ncopy; i++) {
		const char *p = json_string_value(json_array_get(ss->set.copy, i));

		if (copy_one(why, sizeof(why), ss, extra[i], strrchr(p, '/') ? strrchr(p, '/') + 1 : p) < 0) {
			boot_fail(r, "failed", "ssh: %s", why);
			goto out;
		}
	}
	cmd = remote_cmd(ss->set.install, ss);
	installed = 1;
	{
		struct run_result res;

		if (ssh_run(&res, &ss->set, cmd, NULL, ss->set.connect_timeout, POWER_TIMEOUT_MS) < 0) {
			boot_fail(r, "failed", "ssh: cannot run ssh: %s", err_msg());
			goto out;
		}
		if (!run_ok(&res)) {
			ssh_describe(why, sizeof(why), &res);
			run_result_release(&res);
			boot_fail(r, "failed", "ssh: install on %s failed: %s", ss->device, why);
			goto out;
		}
		run_result_release(&res);
	}
	log_info("ssh: kernel %s (build %s) installed on %s", ss->release, ss->build, ss->device);

	/* Reboot into it; power-cycle again while it does not answer. */
	for (tries = 1; tries <= ss->set.power_tries; tries++) {
		if (local_run(why, sizeof(why), ss->set.power_cycle, ss, "power_cycle") < 0) {
			boot_fail(r, "failed", "ssh: %s", why);
			goto out;
		}
		wrc = wait_ssh(why, sizeof(why), ss, ss->set.boot_timeout);
		if (wrc != ERR_TIMEOUT)
			break;
		log_warn("ssh: %s did not answer within %lld s after power cycle %lld of %lld: %s", ss->device,
			 ss->set.boot_timeout, tries, ss->set.power_tries, why);
	}
	if (wrc == ERR_TIMEOUT) {
		boot_fail(r, "skipped", "the kernel did not come back: no ssh on %s within %lld s, %lld power cycle%s "
		    "(last: %s)", ss->device, ss->set.boot_timeout, ss->set.power_tries,
		    ss->set.power_tries == 1 ? "" : "s", why);
		keep_console(r, ss, 1);
		goto out;
	}
	if (wrc < 0) {
		boot_fail(r, "failed", "%s", why);
		goto out;
	}

	/* The one built, or another? */
	if (running_kernel(why, sizeof(why), release, sizeof(release), &cmdline, ss) < 0) {
		boot_fail(r, "failed", "ssh: %s", why);
		goto out;
	}
	if (strcmp(release, ss->release) || !has_build(cmdline, ss->build)) {
		boot_fail(r, "skipped", "the wrong kernel runs on %s: expected %s with bisect.build=%s, running %s with "
		    "command line '%.300s'", ss->device, ss->release, ss->build, release, cmdline);
		keep_console(r, ss, 1);
		goto out;
	}
	log_info("ssh: %s runs the built kernel %s (build %s)", ss->device, release, ss->build);
	keep_console(r, ss, 0);
	r->status = "ok";
	*session = ss;
	ss = NULL;
	rc = 0;
out:
	if (ss && installed)
		restore_after(r, ss);
	if (ss && !r->console)
		keep_console(r, ss, 0);
	session_free(ss);
	free(kernel);
	for (size_t i = 0; i < ncopy; i++)
		free(extra[i]);
	free(cmd);
	free(cmdline);
	return rc;
}

/*
 * A profile task's runs are recorded on the device by its own perf
 * (tools_dir/perf) into dir/perf.data, each run over the last (the last
 * run's is the one reported, as boot none keeps it): the words before
 * the run's command, quoted for the device's shell, into sb. dir is made
 * first: what the copy put there may have gone with the reboot (a /tmp
 * in memory).
 */
static void perf_record_words(struct sbuf *sb, const struct session *ss)
{
	static const char *const nothing[] = { NULL };
	char *perf = xasprintf("%s/perf", ss->set.tools_dir), *data = xasprintf("%s/perf.data", ss->set.dir);
	const char **rec = perfreport_record_argv(nothing, data);

	sbuf_adds(sb, "mkdir -p ");
	workload_sh_quote(sb, ss->set.dir);
	sbuf_adds(sb, " && ");
	rec[0] = perf;
	workload_sh_quote_argv(sb, rec);
	sbuf_adds(sb, " ");
	free(rec);
	free(perf);
	free(data);
}

static int run(struct run_sample *s, void *session, const struct boot_task *t, int i)
{
	struct session *ss = session;
	struct run_result res;
	struct sbuf line = SBUF_INIT;
	char *cmd, msg[600];
	json_t *argv;

	(void)i;
	memset(s, 0, sizeof(*s));
	if (!t->wl->argv && !t->wl->script) {
		snprintf(s->unit, sizeof(s->unit), "%s", workload_def_str(t->def, "unit", "ops/s"));
		workload_sample_fail(s, "boot ssh runs argv and guest workloads, not type %s", t->wl->name);
		return 0;
	}
	if (!t->wl->argv) {
		if (!(cmd = guest_cmd(t, ss))) {
			snprintf(s->unit, sizeof(s->unit), "%s", workload_def_str(t->def, "unit", "ops/s"));
			workload_sample_fail(s, "%s", err_msg());
			return 0;
		}
		goto remote;
	}
	/* The workload's argv (checked by its kind), run on the device. */
	{
		const char **av = NULL;

		if (t->wl->argv(&av, t->def) < 0)
			return ERR_INVALID;
		argv = json_array();
		for (size_t k = 0; av[k]; k++)
			json_array_append_new(argv, json_string(av[k]));
		free(av);
	}
	cmd = remote_cmd(argv, ss);
	json_decref(argv);
remote:
	if (t->perf_data)
		perf_record_words(&line, ss);
	sbuf_adds(&line, cmd);
	free(cmd);
	if (ssh_run(&res, &ss->set, line.buf, NULL, ss->set.connect_timeout, (int)ss->set.run_timeout * 1000) < 0) {
		snprintf(s->unit, sizeof(s->unit), "%s", workload_def_str(t->def, "unit", "ops/s"));
		workload_sample_fail(s, "cannot run ssh: %s", err_msg());
		sbuf_release(&line);
		return 0;
	}
	sbuf_release(&line);
	if (res.exited && res.status == 255) {
		/* ssh itself failed: the device went away or refused us; not the workload's output. */
		ssh_describe(msg, sizeof(msg), &res);
		snprintf(s->unit, sizeof(s->unit), "%s", workload_def_str(t->def, "unit", "ops/s"));
		workload_sample_fail(s, "run on %s: %s", ss->device, msg);
		run_result_release(&res);
		return 0;
	}
	boot_parse_output(s, t, &res);
	run_result_release(&res);
	return 0;
}

/* perf report of the recorded runs, by the device's perf, over ssh. */
static int report(char **out, void *session, const struct boot_task *t)
{
	struct session *ss = session;
	char *perf = xasprintf("%s/perf", ss->set.tools_dir), *data = xasprintf("%s/perf.data", ss->set.dir);
	const char **argv = perfreport_report_argv(data);
	struct sbuf line = SBUF_INIT;
	struct run_result res;
	char msg[600];
	int rc = 0;

	(void)t;
	*out = NULL;
	argv[0] = perf;
	workload_sh_quote_argv(&line, argv);
	free(argv);
	free(perf);
	free(data);
	if (ssh_run(&res, &ss->set, line.buf, NULL, ss->set.connect_timeout, REPORT_TIMEOUT_MS) < 0) {
		rc = err_set(ERR_FAIL, "ssh: cannot run ssh for perf report: %s", err_msg());
	} else {
		if (!run_ok(&res)) {
			ssh_describe(msg, sizeof(msg), &res);
			rc = err_set(ERR_FAIL, "perf report on %s failed: %s", ss->device, msg);
		} else {
			*out = xstrndup(res.out ? res.out : "", res.out ? res.out_len : 0);
		}
		run_result_release(&res);
	}
	sbuf_release(&line);
	return rc;
}

static void stop(void *session, const struct boot_task *t)
{
	struct session *ss = session;
	char why[600];

	if (!ss)
		return;
	/* The console's text after start() goes beside the agent's other logs. */
	if (t->workdir && ss->con.argv && mkdir_p(t->workdir, 0755) == 0) {
		char *text = console_text(&ss->con), *path = xasprintf("%s/console.log", t->workdir);

		if (text && file_write_atomic(path, text, strlen(text)) < 0)
			log_warn("ssh: cannot keep the console: %s", err_msg());
		free(text);
		free(path);
	}
	if (restore(why, sizeof(why), ss) < 0)
		log_warn("ssh: %s", why);
	else
		log_info("ssh: %s is back on its good kernel", ss->device);
	session_free(ss);
}

const struct boot_ops boot_ssh = {
	.name = "ssh",
	.what = "installing and booting the kernel on the device over ssh",
	.prepare = prepare,
	.start = start,
	.run = run,
	.report = report,
	.stop = stop,
};
