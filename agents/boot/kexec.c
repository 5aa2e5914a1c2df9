/*
 * kexec: the agent's own machine is the device under test. start() puts
 * the task in the journal (journal.h), loads the built kernel with
 * `kexec -l` (the pool's command line, the job's variant and a
 * bisect.build=<id> marker) and `kexec -e`s into it: the process ends
 * there. The agent the boot starts (etc/systemd/bisect-agent.service)
 * finds the journal and runs the task again: start() now checks that the
 * running kernel is the built one (the marker in /proc/cmdline, uname -r
 * against the image's release) and in time, run() runs the workload's
 * argv on this machine (under the agent's perf for a profile task),
 * keeping each sample in the journal, and after the upload kexec_finish()
 * goes back to the known-good kernel (kexec.h).
 *
 * What does not come back (a hang or a panic ends in the firmware's
 * default kernel, the good one, through panic= or a watchdog) is found
 * by the agent of the next boot: skipped, never bad. Its build id is
 * remembered in kexec/noreturn/, so a later attempt of the same kernel
 * on this machine is skipped without a second kexec, until `bisect-agent
 * --forget` lets it be tried again (after a power loss, say, that was not
 * the kernel's fault).
 *
 * BISECT_KEXEC_PROC names a folder read in place of /proc (cmdline,
 * sys/kernel/osrelease, sys/kernel/random/boot_id): the test's stand-in
 * for a reboot (tests/t0015-kexec.sh).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "boot.h"
#include "err.h"
#include "initramfs.h"
#include "journal.h"
#include "jsonx.h"
#include "kexec.h"
#include "log.h"
#include "run.h"
#include "taskwire.h"
#include "util.h"

#define MAX_LINE 2048               /* x86's COMMAND_LINE_SIZE */
#define RUN_OUTPUT_MAX (4 << 20)
#define KEXEC_TIMEOUT_MS 120000     /* kexec -l reads and places the image */
#define MAX_REBOOT_ARGS 32

struct settings {
	const char *image;              /* kernel_image, relative to the build */
	const char *append;             /* the definition's append: the pool's line and the job's variant */
	int own_line;                   /* the kexec mapping set append: it is the whole line */
	const char *initrd;             /* absolute, or relative to the build; NULL: none */
	long long return_timeout;       /* seconds from kexec -e to the agent's start in the built kernel */
	long long run_timeout;          /* seconds per run */
	const char *good_kernel;        /* kexec back into it; NULL: reboot */
	const char *good_initrd;
	json_t *reboot;                 /* an argv; NULL: systemctl reboot */
};

struct session {
	struct journal j;
	char *path;                     /* the journal's */
	long long run_timeout;          /* settings.run_timeout */
};

/* --- the running kernel ---------------------------------------------------- */

/* A file of /proc (or of the stand-in's folder), its trailing newline dropped. */
static int proc_read(char **out, const char *name)
{
	const char *root = getenv("BISECT_KEXEC_PROC");
	char *path = xasprintf("%s/%s", root && *root ? root : "/proc", name);
	size_t len = 0;
	int rc = file_read(out, &len, path, 64 * 1024);

	free(path);
	if (rc < 0)
		return rc;
	while (len > 0 && ((*out)[len - 1] == '\n' || (*out)[len - 1] == ' '))
		(*out)[--len] = '\0';
	return 0;
}

struct running {
	char *cmdline, *release, *boot_id;
};

static int running_read(struct running *k)
{
	memset(k, 0, sizeof(*k));
	if (proc_read(&k->cmdline, "cmdline") < 0 || proc_read(&k->release, "sys/kernel/osrelease") < 0 ||
	    proc_read(&k->boot_id, "sys/kernel/random/boot_id") < 0 || !k->boot_id[0]) {
		free(k->cmdline);
		free(k->release);
		free(k->boot_id);
		memset(k, 0, sizeof(*k));
		return err_set(ERR_FAIL, "cannot read the running kernel: %s", err_msg());
	}
	return 0;
}

static void running_release(struct running *k)
{
	free(k->cmdline);
	free(k->release);
	free(k->boot_id);
	memset(k, 0, sizeof(*k));
}

/* The first JOURNAL_BUILD_ID_LEN hex digits of the image's SHA-256 into id. */
static int image_id(char *id, const char *path)
{
	unsigned char buf[65536], md[32];
	gnutls_hash_hd_t h;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return err_set(ERR_FAIL, "%s: %s", path, strerror(errno));
	if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0) {
		close(fd);
		return err_set(ERR_FAIL, "sha256: cannot start");
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		gnutls_hash(h, buf, (size_t)n);
	if (n < 0)
		rc = err_set(ERR_FAIL, "%s: %s", path, strerror(errno));
	gnutls_hash_deinit(h, md);
	close(fd);
	for (int i = 0; i < JOURNAL_BUILD_ID_LEN / 2; i++)
		snprintf(id + 2 * i, 3, "%02x", md[i]);
	return rc;
}

/* cmdline without BOOT_IMAGE= (the boot loader's) and bisect.build= words, into sb. */
static void add_reused_line(struct sbuf *sb, const char *cmdline)
{
	for (const char *p = cmdline; *p;) {
		size_t n;

		p += strspn(p, " \t\n");
		n = strcspn(p, " \t\n");
		if (n && strncmp(p, "BOOT_IMAGE=", 11) && strncmp(p, "bisect.build=", 13)) {
			if (sb->len)
				sbuf_adds(sb, " ");
			sbuf_add(sb, p, n);
		}
		p += n;
	}
}

/* --- settings ----------------------------------------------------------------- */

static int settings_read(struct settings *s, json_t *def)
{
	json_t *k = json_object_get(def, "kexec");
	const char *own = NULL;

	memset(s, 0, sizeof(*s));
	if (k && !json_is_object(k))
		return err_set(ERR_INVALID, "workload: 'kexec' must be an object");
	if (jsonx_str(&s->image, def, "kernel_image", 1024, 0, "arch/x86/boot/bzImage") < 0 ||
	    jsonx_str(&s->append, def, "append", MAX_LINE, 0, NULL) < 0 ||
	    jsonx_int(&s->run_timeout, def, "run_timeout", 1, 86400, 0, 300) < 0)
		return err_set(ERR_INVALID, "workload: %s", err_msg());
	if (k && (jsonx_str(&own, k, "append", MAX_LINE, 0, NULL) < 0 ||
		  jsonx_str(&s->initrd, k, "initrd", 4096, 0, NULL) < 0 ||
		  jsonx_int(&s->return_timeout, k, "return_timeout", 10, 86400, 0, 300) < 0 ||
		  jsonx_str(&s->good_kernel, k, "good_kernel", 4096, 0, NULL) < 0 ||
		  jsonx_str(&s->good_initrd, k, "good_initrd", 4096, 0, NULL) < 0))
		return err_set(ERR_INVALID, "workload: kexec: %s", err_msg());
	if (!k)
		s->return_timeout = 300;
	s->own_line = own != NULL;
	if (!path_inside(s->image))
		return err_set(ERR_INVALID, "workload: kernel_image '%s' is not a path inside the build", s->image);
	if ((s->good_kernel && s->good_kernel[0] != '/') || (s->good_initrd && s->good_initrd[0] != '/'))
		return err_set(ERR_INVALID, "workload: kexec: good_kernel and good_initrd must be absolute paths");
	s->reboot = k ? json_object_get(k, "reboot") : NULL;
	if (s->reboot) {
		size_t i;
		json_t *v;

		if (!json_is_array(s->reboot) || !json_array_size(s->reboot) ||
		    json_array_size(s->reboot) > MAX_REBOOT_ARGS)
			return err_set(ERR_INVALID, "workload: kexec: 'reboot' must be an argv of 1 to %d strings",
				       MAX_REBOOT_ARGS);
		json_array_foreach(s->reboot, i, v)
			if (!json_is_string(v) || !json_string_value(v)[0])
				return err_set(ERR_INVALID, "workload: kexec: 'reboot' must be an argv of strings");
	}
	return 0;
}

/* --- commands ------------------------------------------------------------------- */

/*
 * Runs argv; 0 when it exited 0, else ERR_FAIL with its words, and
 * *denied for what is this machine's, not the image's: no permission
 * (not root, kexec_load_disabled, lockdown), no CONFIG_KEXEC, no kexec.
 */
static int command(const char *const *argv, int *denied)
{
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	char how[64];
	int rc;

	if (denied)
		*denied = 0;
	o.argv = argv;
	o.timeout_ms = KEXEC_TIMEOUT_MS;
	o.max_output = 64 * 1024;
	if (run_cmd(&res, &o) < 0)
		return err_set(ERR_FAIL, "cannot run %s: %s", argv[0], err_msg());
	rc = run_ok(&res) ? 0 : ERR_FAIL;
	if (rc < 0) {
		const char *words = res.err && res.err_len ? res.err : res.out ? res.out : "";
		char *tail = xstrdup(run_tail(words, 400));

		for (char *p = tail; *p; p++)
			if (*p == '\n')
				*p = ' ';
		if (denied)
			*denied = strstr(words, "not permitted") || strstr(words, "ermission denied") ||
				  strstr(words, "not implemented") || (res.exited && res.status == 127);
		err_set(ERR_FAIL, "%s: %s%s%s", argv[0], run_describe(&res, how, sizeof(how)),
			tail[0] ? ": " : "", tail);
		free(tail);
	}
	run_result_release(&res);
	return rc;
}

/* kexec -l IMAGE --command-line=LINE [--initrd=INITRD] */
static int kexec_load(int *denied, const char *image, const char *line, const char *initrd)
{
	char *cl = xasprintf("--command-line=%s", line), *ir = initrd ? xasprintf("--initrd=%s", initrd) : NULL;
	const char *argv[] = { "kexec", "-l", image, cl, ir, NULL };
	int rc = command(argv, denied);

	free(cl);
	free(ir);
	return rc;
}

/* Everything written so far reaches the disk, then kexec -e: it returns only when it failed. */
static int kexec_exec(void)
{
	const char *argv[] = { "kexec", "-e", NULL };
	int rc;

	sync();
	rc = command(argv, NULL);
	return rc < 0 ? rc : err_set(ERR_FAIL, "kexec -e returned without booting the loaded kernel");
}

/* --- the record of kernels that did not come back ------------------------------- */

static char *noreturn_path(const char *workdir, const char *id)
{
	return xasprintf("%s/noreturn/%s", workdir, id);
}

static void noreturn_note(const char *workdir, const char *id, const char *why)
{
	char *dir = xasprintf("%s/noreturn", workdir), *path = noreturn_path(workdir, id);

	if (mkdir_p(dir, 0755) < 0 || file_write_atomic(path, why, strlen(why)) < 0)
		log_warn("kexec: cannot note that kernel %s did not come back: %s", id, err_msg());
	free(dir);
	free(path);
}

static int is_record(const struct dirent *e)
{
	return journal_build_id_ok(e->d_name);
}

/* The records in dir, sorted, into *names: how many (0 when dir is not there), or -1. */
static int records(const char *dir, struct dirent ***names)
{
	int n = scandir(dir, names, is_record, alphasort);

	if (n < 0 && errno == ENOENT) {
		*names = NULL;
		return 0;
	}
	return n < 0 ? err_set(ERR_FAIL, "%s: %s", dir, strerror(errno)) : n;
}

int kexec_noreturn_list(const char *agent_workdir, FILE *out)
{
	char *dir = xasprintf("%s/kexec/noreturn", agent_workdir);
	struct dirent **names = NULL;
	int n = records(dir, &names);

	for (int i = 0; i < n; i++) {
		char *path = xasprintf("%s/%s", dir, names[i]->d_name), *why = NULL, when[32] = "?";
		struct stat st;
		size_t len = 0;

		if (stat(path, &st) == 0)
			fmt_time(when, sizeof(when), (int64_t)st.st_mtime);
		if (file_read(&why, &len, path, 4096) < 0)
			why = xstrdup("(unreadable)");
		fprintf(out, "%s %s %s\n", names[i]->d_name, when, why);
		free(why);
		free(path);
		free(names[i]);
	}
	free(names);
	free(dir);
	return n;
}

int kexec_noreturn_forget(const char *agent_workdir, const char *id)
{
	char *dir = xasprintf("%s/kexec/noreturn", agent_workdir), *path;
	struct dirent **names = NULL;
	int n = 0, rc = 0;

	if (strcmp(id, "all")) {
		if (!journal_build_id_ok(id)) {
			free(dir);
			return err_set(ERR_INVALID, "'%s' is not a build id (%d lower-case hex digits, as --noreturn lists "
				       "them) nor 'all'", id, JOURNAL_BUILD_ID_LEN);
		}
		path = xasprintf("%s/%s", dir, id);
		if (unlink(path) < 0)
			rc = errno == ENOENT ? err_set(ERR_NOTFOUND, "kernel %s is not remembered as not come back on "
						       "this machine (--noreturn lists those that are)", id)
					     : err_set(ERR_FAIL, "%s: %s", path, strerror(errno));
		free(path);
		free(dir);
		return rc < 0 ? rc : 1;
	}
	n = records(dir, &names);
	for (int i = 0; i < n; i++) {
		path = xasprintf("%s/%s", dir, names[i]->d_name);
		if (unlink(path) < 0 && errno != ENOENT && rc == 0)
			rc = err_set(ERR_FAIL, "%s: %s", path, strerror(errno));
		free(path);
		free(names[i]);
	}
	free(names);
	free(dir);
	return n < 0 ? n : rc < 0 ? rc : n;
}

/* --- boot_ops --------------------------------------------------------------------- */

static int prepare(const struct boot_task *t)
{
	struct settings s;
	const char **argv = NULL;
	int rc;

	if ((rc = settings_read(&s, t->def)) < 0)
		return rc;
	if (!in_path("kexec"))
		return err_set(ERR_NOTFOUND, "boot kexec: program 'kexec' not found in PATH on this agent "
			       "(apt-get install kexec-tools)");
	if (!s.good_kernel && !s.reboot && !in_path("systemctl"))
		return err_set(ERR_NOTFOUND, "boot kexec: no good_kernel, no reboot command, and no systemctl "
			       "to reboot with");
	if ((rc = t->wl->argv(&argv, t->def)) < 0)
		return rc;
	free(argv);
	return 0;
}

static char *journal_file(const struct boot_task *t)
{
	return xasprintf("%s/journal.json", t->workdir);
}

/* The first half: journal, kexec -l, kexec -e. Returns only on failure. */
static int go(struct boot_result *r, const struct boot_task *t, const struct settings *s, const char *path)
{
	struct running k = { 0 };
	struct sbuf line = SBUF_INIT;
	struct task_wire w;
	json_t *doc = NULL, *claim = t->claim;
	char id[JOURNAL_BUILD_ID_LEN + 1], release[128] = "", *image = NULL, *abs = NULL, *initrd = NULL;
	char *note = NULL, *why = NULL;
	struct stat st;
	size_t len = 0;
	int rc = ERR_FAIL, denied;

	if (!json_is_object(claim) || taskwire_decode(&w, claim) < 0) {
		boot_fail(r, "failed", "boot kexec: the task's claim is not at hand to journal");
		goto out;
	}
	/* The build ran: no image is the commit's fault, as a failed build is. */
	image = xasprintf("%s/%s", t->srcdir, s->image);
	if (stat(image, &st) < 0 || !S_ISREG(st.st_mode)) {
		boot_fail(r, "skipped", "build produced no %s", s->image);
		goto out;
	}
	if (!(abs = realpath(image, NULL)) || image_id(id, abs) < 0) {
		boot_fail(r, "failed", "boot kexec: %s: %s", image, abs ? err_msg() : strerror(errno));
		goto out;
	}
	note = noreturn_path(t->workdir, id);
	if (file_read(&why, &len, note, 4096) == 0) {
		boot_fail(r, "skipped", "kernel %s did not come back after an earlier kexec on this machine: %s "
			  "(bisect-agent --forget %s lets it be tried again)", id, why, id);
		goto out;
	}
	/* Not a bzImage: kexec -l is the judge of what it can load. */
	if (initramfs_kernel_release(release, sizeof(release), abs) < 0)
		release[0] = '\0';
	if (running_read(&k) < 0) {
		boot_fail(r, "failed", "boot kexec: %s", err_msg());
		goto out;
	}
	if (!s->own_line)
		add_reused_line(&line, k.cmdline);
	if (s->append)
		sbuf_addf(&line, "%s%s", line.len ? " " : "", s->append);
	sbuf_addf(&line, "%sbisect.build=%s", line.len ? " " : "", id);
	if (line.len > MAX_LINE - 1) {
		boot_fail(r, "failed", "boot kexec: the command line is %zu bytes, more than %d", line.len, MAX_LINE - 1);
		goto out;
	}
	if (s->initrd)
		initrd = s->initrd[0] == '/' ? xstrdup(s->initrd) : xasprintf("%s/%s", t->srcdir, s->initrd);

	doc = json_pack("{s:i, s:I, s:I, s:I, s:I, s:s, s:s, s:O, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:[]}",
			"version", JOURNAL_VERSION, "task", (json_int_t)w.task, "attempt", (json_int_t)w.attempt,
			"lease", (json_int_t)w.lease, "deadline", (json_int_t)(now_unix() + s->return_timeout),
			"state", JOURNAL_KEXEC, "commit", w.commit, "claim", claim, "image", abs,
			"build_id", id, "release", release, "cmdline", line.buf, "srcdir", t->srcdir,
			"from_boot", k.boot_id, "run_boot", "", "good_cmdline", k.cmdline, "samples");
	if (!doc || journal_save(path, doc) < 0) {
		boot_fail(r, "failed", "boot kexec: cannot journal the task: %s", doc ? err_msg() : "encoding");
		goto out;
	}
	log_info("kexec: task %lld: loading %s (release %s) with '%s'", w.task, abs, release[0] ? release : "?",
		 line.buf);
	if (kexec_load(&denied, abs, line.buf, initrd) < 0) {
		/* Not allowed to kexec is this agent's problem; an image kexec cannot load is the commit's. */
		boot_fail(r, denied ? "failed" : "skipped", "kexec -l refused the built kernel: %s", err_msg());
		journal_clear(path);
		goto out;
	}
	log_info("kexec: task %lld: kexec -e into kernel %s; the agent of the next boot carries on", w.task, id);
	kexec_exec();
	boot_fail(r, "failed", "boot kexec: %s", err_msg());
	journal_clear(path);
out:
	running_release(&k);
	sbuf_release(&line);
	json_decref(doc);
	free(image);
	free(abs);
	free(initrd);
	free(note);
	free(why);
	return rc;
}

/* The second half, in the next boot: is this the built kernel, and in time? */
static int back(void **session, struct boot_result *r, const struct boot_task *t, struct session *ss)
{
	struct journal *j = &ss->j;
	struct running k = { 0 };
	char marker[JOURNAL_BUILD_ID_LEN + 1];
	long long late;
	int rc = ERR_FAIL, m;

	if (running_read(&k) < 0) {
		boot_fail(r, "failed", "boot kexec: %s", err_msg());
		goto out;
	}
	if (!strcmp(j->state, JOURNAL_RUNNING)) {
		/* The agent restarted in the built kernel: the runs so far are in the journal. */
		if (strcmp(j->run_boot, k.boot_id)) {
			boot_fail(r, "failed", "the machine rebooted while the runs went on in the built kernel %s "
			    "(now %s); the task is tried again", j->build_id, k.release);
			goto out;
		}
		goto ok;
	}
	if (!strcmp(j->from_boot, k.boot_id)) {
		boot_fail(r, "failed", "the agent stopped between journalling the task and kexec -e "
		    "(this is still the boot that was to kexec)");
		goto out;
	}
	m = journal_cmdline_marker(marker, k.cmdline);
	late = now_unix() - j->deadline;
	if (m == ERR_NOTFOUND) {
		char *why = xasprintf("the machine came back in %s without bisect.build=%s on its command line: "
				      "the built kernel hung, panicked or was reset%s", k.release, j->build_id,
				      late > 0 ? ", past the return deadline" : "");

		boot_fail(r, "skipped", "the built kernel did not come back: %s", why);
		noreturn_note(t->workdir, j->build_id, why);
		free(why);
		goto out;
	}
	if (m < 0 || strcmp(marker, j->build_id)) {
		boot_fail(r, "skipped", "wrong kernel: the command line has bisect.build=%s, the built one is %s",
		    m < 0 ? "(invalid)" : marker, j->build_id);
		goto out;
	}
	if (j->release[0] && strcmp(j->release, k.release)) {
		boot_fail(r, "skipped", "wrong kernel: uname -r says %s, the built image is %s", k.release, j->release);
		goto out;
	}
	if (late > 0) {
		boot_fail(r, "skipped", "the built kernel %s came up %lld s after its return deadline", j->build_id, late);
		goto out;
	}
	json_object_set_new(j->root, "state", json_string(JOURNAL_RUNNING));
	json_object_set_new(j->root, "run_boot", json_string(k.boot_id));
	if (journal_save(ss->path, j->root) < 0) {
		boot_fail(r, "failed", "boot kexec: %s", err_msg());
		goto out;
	}
	/* The borrowed strings moved with the new values: read them again. */
	journal_release(j);
	if (journal_load(j, ss->path) < 0) {
		boot_fail(r, "failed", "boot kexec: %s", err_msg());
		goto out;
	}
	log_info("kexec: task %lld: back in the built kernel %s (%s)", j->task, j->build_id, k.release);
ok:
	r->status = "ok";
	r->accel = "kexec";
	*session = ss;
	rc = 0;
out:
	running_release(&k);
	return rc;
}

static int start(void **session, struct boot_result *r, const struct boot_task *t)
{
	struct session *ss = xcalloc(1, sizeof(*ss));
	struct settings s;
	json_t *claim = t->claim;
	long long task = json_integer_value(json_object_get(claim, "task"));
	long long attempt = json_integer_value(json_object_get(claim, "attempt"));
	int rc = ERR_FAIL, lrc;

	memset(r, 0, sizeof(*r));
	*session = NULL;
	ss->path = journal_file(t);
	if (settings_read(&s, t->def) < 0) {
		boot_fail(r, "failed", "%s", err_msg());
		goto out;
	}
	ss->run_timeout = s.run_timeout;
	lrc = journal_load(&ss->j, ss->path);
	if (lrc == 0 && ss->j.task == task && ss->j.attempt == attempt) {
		if ((rc = back(session, r, t, ss)) == 0)
			ss = NULL;
		goto out;
	}
	if (lrc == 0 || lrc != ERR_NOTFOUND) {
		/* The agent resumes a journal before it claims: this one is not for the task in hand. */
		log_warn("kexec: %s: %s; set aside", ss->path, lrc ? err_msg() : "another task's journal");
		journal_release(&ss->j);
		journal_set_aside(ss->path);
	}
	if (mkdir_p(t->workdir, 0755) < 0) {
		boot_fail(r, "failed", "%s", err_msg());
		goto out;
	}
	rc = go(r, t, &s, ss->path);
out:
	if (ss) {
		journal_release(&ss->j);
		free(ss->path);
		free(ss);
	}
	return rc;
}

static int run(struct run_sample *out, void *session, const struct boot_task *t, int i)
{
	struct session *ss = session;
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	const char **argv = NULL;
	json_t *have = json_array_get(ss->j.samples, (size_t)i - 1), *js;
	int rc;

	memset(out, 0, sizeof(*out));
	if (have) {
		/* Measured before the agent restarted in this boot. */
		out->value = json_number_value(json_object_get(have, "value"));
		snprintf(out->unit, sizeof(out->unit), "%s", json_string_value(json_object_get(have, "unit")));
		snprintf(out->error, sizeof(out->error), "%s",
			 json_string_value(json_object_get(have, "error")) ?: "");
		return 0;
	}
	/* A profile task's under the agent's perf, in the built kernel. */
	if ((rc = boot_workload_argv(&argv, t)) < 0)
		return rc;
	o.argv = argv;
	o.cwd = ss->j.srcdir;
	o.cpu = t->cpu;
	o.timeout_ms = (int)ss->run_timeout * 1000;
	o.cancel = t->cancel;
	o.max_output = RUN_OUTPUT_MAX;
	if (run_cmd(&res, &o) < 0) {
		snprintf(out->unit, sizeof(out->unit), "%s", workload_def_str(t->def, "unit", "ops/s"));
		workload_sample_fail(out, "cannot run %s: %s", argv[0], err_msg());
	} else {
		boot_parse_output(out, t, &res);
		run_result_release(&res);
	}
	free(argv);
	/* The runs so far outlive an agent restart in this boot. */
	js = json_pack("{s:f, s:s}", "value", out->value > 0 ? out->value : 0.0, "unit", out->unit);
	if (js && out->value <= 0)
		json_object_set_new(js, "error", json_string(out->error[0] ? out->error : "run failed"));
	if (js && json_array_size(ss->j.samples) == (size_t)i - 1) {
		json_array_append_new(ss->j.samples, js);
		if (journal_save(ss->path, ss->j.root) < 0)
			log_warn("kexec: cannot keep run %d in the journal: %s", i, err_msg());
	} else {
		json_decref(js);
	}
	return 0;
}

static void stop(void *session, const struct boot_task *t)
{
	struct session *ss = session;

	(void)t;
	if (!ss)
		return;
	/* The journal stays until the result is spooled: kexec_finish() ends it. */
	journal_release(&ss->j);
	free(ss->path);
	free(ss);
}

const struct boot_ops boot_kexec = {
	.name = "kexec",
	.what = "kexec into the built kernel",
	.prepare = prepare,
	.start = start,
	.run = run,
	.stop = stop,
};

/* --- the agent's start-up (kexec.h) --------------------------------------------- */

int kexec_journal_claim(json_t **claim, const char *agent_workdir)
{
	char *path = journal_path(agent_workdir), marker[JOURNAL_BUILD_ID_LEN + 1];
	struct journal j;
	struct running k;
	int rc = journal_load(&j, path);

	*claim = NULL;
	if (rc == 0) {
		*claim = json_incref(j.claim);
		log_info("kexec: the journal holds task %lld attempt %lld (kernel %s, %s): carrying it on",
			 j.task, j.attempt, j.build_id, j.state);
		journal_release(&j);
		goto out;
	}
	if (rc != ERR_NOTFOUND) {
		log_error("kexec: %s; set aside as %s.bad", err_msg(), path);
		journal_set_aside(path);
	}
	rc = 0;
	/* A built kernel without its journal must not take tasks: the machine is not the lab's. */
	if (running_read(&k) == 0) {
		if (journal_cmdline_marker(marker, k.cmdline) != ERR_NOTFOUND)
			rc = err_set(ERR_CONFLICT, "this machine runs a built kernel (bisect.build on its command "
				     "line: %s) and no task is journalled in %s: reboot it into its known-good "
				     "kernel", k.cmdline, path);
		running_release(&k);
	}
out:
	free(path);
	return rc;
}

/* Back to the good kernel: kexec into good_kernel with the line it had, or the reboot command. */
static int go_back(json_t *def, const char *good_cmdline)
{
	struct settings s;
	const char *argv[MAX_REBOOT_ARGS + 1];
	int rc;

	if ((rc = settings_read(&s, def)) < 0)
		return rc;
	if (s.good_kernel) {
		log_info("kexec: back to the known-good kernel %s", s.good_kernel);
		/* A built kernel without CONFIG_KEXEC cannot kexec: the firmware's default is good too. */
		if (kexec_load(NULL, s.good_kernel, good_cmdline, s.good_initrd) == 0)
			kexec_exec();
		log_warn("kexec: cannot go back to %s (%s); rebooting instead", s.good_kernel, err_msg());
	}
	if (s.reboot) {
		size_t i;
		json_t *v;

		json_array_foreach(s.reboot, i, v)
			argv[i] = json_string_value(v);
		argv[json_array_size(s.reboot)] = NULL;
	} else {
		argv[0] = "systemctl";
		argv[1] = "reboot";
		argv[2] = NULL;
	}
	log_info("kexec: rebooting into the default (known-good) kernel: %s", argv[0]);
	sync();
	if ((rc = command(argv, NULL)) < 0)
		return rc;
	/* systemctl reboot returns at once and the machine goes down after. */
	sleep(600);
	return err_set(ERR_FAIL, "%s returned and the machine is still up after 600 s", argv[0]);
}

int kexec_finish(const char *agent_workdir)
{
	char *path = journal_path(agent_workdir), marker[JOURNAL_BUILD_ID_LEN + 1];
	struct journal j;
	struct running k = { 0 };
	int rc = journal_load(&j, path);

	if (rc == ERR_NOTFOUND) {
		rc = 0;
		goto out;
	}
	if (rc < 0) {
		journal_set_aside(path);
		goto out;
	}
	if ((rc = journal_clear(path)) < 0 || (rc = running_read(&k)) < 0)
		goto out;
	if (journal_cmdline_marker(marker, k.cmdline) == ERR_NOTFOUND) {
		log_info("kexec: task %lld ended in the known-good kernel %s", j.task, k.release);
		goto out;
	}
	rc = go_back(json_object_get(j.claim, "workload"), j.good_cmdline);
out:
	running_release(&k);
	journal_release(&j);
	free(path);
	return rc;
}
