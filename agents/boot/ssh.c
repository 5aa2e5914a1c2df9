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
 * the tool's message). docs/LAB.md has the settings; ssh_client.c reads
 * them and runs the ssh client, the definition's commands and the console.
 */
#include <pthread.h>
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
#include "ssh_client.h"
#include "util.h"

#define TAIL_BYTES 4096
/* How long a copy of one file may take. */
#define COPY_TIMEOUT_MS (600 * 1000)
/* How long perf report of a profile task's runs may take on the device. */
#define REPORT_TIMEOUT_MS (300 * 1000)

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

		if (ss->cancel && __atomic_load_n(ss->cancel, __ATOMIC_ACQUIRE)) {
			snprintf(why, n, "the task was cancelled while waiting for %s", ss->device);
			return ERR_FAIL;
		}
		if (left <= 0)
			return ERR_TIMEOUT;
		if (to < 1)
			to = 1;
		if (ssh_run(&res, &ss->set, "true", NULL, to, (int)(to * 1000 + 10000), ss->cancel) < 0) {
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
	if (ssh_run(&res, &ss->set, cmd.buf, path, ss->set.connect_timeout, COPY_TIMEOUT_MS, NULL) < 0) {
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
	if (ssh_run(&res, &ss->set, "uname -r; cat /proc/cmdline", NULL, ss->set.connect_timeout, 60000, NULL) < 0) {
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

	/* A cancel does not stop it: the lab needs the device back on its good kernel. */
	ss->cancel = NULL;
	if ((rc = ssh_local_run(why, n, ss->set.restore, ss, "restore")) < 0)
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
	ssh_console_stop(&ss->con);
	pthread_mutex_destroy(&ss->con.lock);
	free(ss->cmdline);
	free(ss->device);
	free(ss);
}

/* r gets the console's text, and its tail when start() failed. */
static void keep_console(struct boot_result *r, struct session *ss, int tail)
{
	free(r->console);
	r->console = ssh_console_text(&ss->con);
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

	if ((rc = ssh_settings_read(&s, t->def)) < 0)
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
	ss->cancel = t->cancel;
	pthread_mutex_init(&ss->con.lock, NULL);
	if (ssh_settings_read(&ss->set, t->def) < 0 ||
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
	ssh_console_start(ss);

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
	cmd = ssh_remote_cmd(ss->set.install, ss);
	installed = 1;
	{
		struct run_result res;

		if (ssh_run(&res, &ss->set, cmd, NULL, ss->set.connect_timeout, POWER_TIMEOUT_MS, NULL) < 0) {
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
		if (ssh_local_run(why, sizeof(why), ss->set.power_cycle, ss, "power_cycle") < 0) {
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
	cmd = ssh_remote_cmd(argv, ss);
	json_decref(argv);
remote:
	if (t->perf_data)
		perf_record_words(&line, ss);
	sbuf_adds(&line, cmd);
	free(cmd);
	if (ssh_run(&res, &ss->set, line.buf, NULL, ss->set.connect_timeout, (int)ss->set.run_timeout * 1000,
		    ss->cancel) < 0) {
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
	if (ssh_run(&res, &ss->set, line.buf, NULL, ss->set.connect_timeout, REPORT_TIMEOUT_MS, NULL) < 0) {
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
		char *text = ssh_console_text(&ss->con), *path = xasprintf("%s/console.log", t->workdir);

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
