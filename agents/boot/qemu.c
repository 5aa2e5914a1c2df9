/*
 * qemu: the built kernel image boots under QEMU (qemu.h) with an initramfs
 * the agent assembles (initramfs.h): busybox, the workload's tools, and an
 * /init that runs the workload's script once per run and prints each run
 * between markers on the serial console. One boot carries every run, so
 * start() does the measuring and run() hands out what the console held.
 */
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "boot.h"
#include "err.h"
#include "initramfs.h"
#include "jsonx.h"
#include "qemu.h"
#include "util.h"

#define MAX_APPEND 1024
#define MAX_TOOLS 9     /* a workload's, and perf for a profile task */

struct session {
	struct qemu_result res;     /* the console's runs and how the guest ended */
};

/*
 * The agent's perf, to run in the guest: Debian's /usr/bin/perf may be a
 * script that picks perf_X.Y for the running kernel (which is not the
 * guest's): then the newest perf_X.Y beside it, the real binary.
 */
static int perf_binary(char **path)
{
	char head[2] = { 0 }, *dir, *best = NULL;
	FILE *f;
	struct dirent *e;
	DIR *d;

	if (initramfs_find_program(path, "perf") < 0)
		return err_set(ERR_NOTFOUND, "perf not found on this agent: a profile task in the guest needs "
			       "it (Debian: linux-perf)");
	if ((f = fopen(*path, "rb"))) {
		if (fread(head, 1, 2, f) != 2)
			head[0] = 0;
		fclose(f);
	}
	if (head[0] != '#' || head[1] != '!')
		return 0;
	dir = xstrdup(*path);
	*strrchr(dir, '/') = '\0';
	if ((d = opendir(dir))) {
		while ((e = readdir(d)))
			if (!strncmp(e->d_name, "perf_", 5) && e->d_name[5] >= '0' && e->d_name[5] <= '9' &&
			    (!best || strverscmp(e->d_name, best) > 0)) {
				free(best);
				best = xstrdup(e->d_name);
			}
		closedir(d);
	}
	free(*path);
	*path = best ? xasprintf("%s/%s", dir, best) : NULL;
	free(best);
	free(dir);
	return *path ? 0 : err_set(ERR_NOTFOUND, "perf on this agent is a wrapper script and no perf_X.Y is "
				  "beside it: the guest needs the real binary");
}

/* The /init for t: the workload's script with the guest paths of its tools. */
static int init_script(char **init, char **found, size_t *nfound, struct boot_result *r,
		       const struct boot_task *t)
{
	struct qemu_script_opts so = QEMU_SCRIPT_OPTS_INIT;
	struct sbuf sb = SBUF_INIT;
	const char *names[MAX_TOOLS];
	int n, rc;

	*init = NULL;
	*nfound = 0;
	n = t->wl->tools ? t->wl->tools(names, MAX_TOOLS, t->def) : 0;
	if (n < 0)
		return boot_fail(r, "failed", "%s", err_msg());
	/* The guest's tools are the agent's: missing ones are this agent's problem. */
	for (int i = 0; i < n; i++) {
		if (initramfs_find_program(&found[i], names[i]) < 0)
			return boot_fail(r, "failed", "%s", err_msg());
		(*nfound)++;
	}
	found[n] = NULL;
	if ((rc = t->wl->script(&sb, t->def, (const char *const *)found)) < 0) {
		sbuf_release(&sb);
		return boot_fail(r, "failed", "%s", err_msg());
	}
	so.runs = t->runs;
	so.dmesg_level = 1;
	so.run_once = sb.buf;
	/* A profile task: the agent's perf goes into the guest with the tools, and records the runs there. */
	if (t->perf_data) {
		if (*nfound >= MAX_TOOLS) {
			sbuf_release(&sb);
			return boot_fail(r, "failed", "boot qemu: no room for perf beside %zu tools", *nfound);
		}
		if (perf_binary(&found[*nfound]) < 0) {
			sbuf_release(&sb);
			return boot_fail(r, "failed", "%s", err_msg());
		}
		so.perf = found[(*nfound)++];
		found[*nfound] = NULL;
	}
	rc = qemu_init_script(init, &so);
	sbuf_release(&sb);
	if (rc < 0)
		return boot_fail(r, "failed", "%s", err_msg());
	return 0;
}

/* What perf printed after a failed report: the console from its end marker's line to DONE, one line. */
static const char *perf_said(const char *console)
{
	static __thread char buf[320];
	const char *p = strstr(console, QEMU_MARK_PROFILE_END), *d;
	size_t n = 0;

	buf[0] = '\0';
	if (!p || !(p = strchr(p, '\n')))
		return buf;
	d = strstr(++p, QEMU_MARK_DONE);
	for (; *p && p != d && n + 1 < sizeof(buf); p++)
		buf[n++] = *p == '\r' || *p == '\n' ? ' ' : *p;
	buf[n] = '\0';
	return buf;
}

/*
 * The workload's data files and kernel modules (workload.h) for the
 * guest. Modules come from the agent's /lib/modules/RELEASE when the
 * image's release is installed there (a distribution kernel); a kernel
 * built from the tree has no such directory and must have them built in.
 */
static int guest_extras(const char **files, const char **mods, char *moddir, size_t moddir_len,
			struct boot_result *r, const struct boot_task *t, const char *kernel)
{
	char release[128], *dep;
	struct stat st;
	int n, have;

	files[0] = mods[0] = NULL;
	moddir[0] = '\0';
	n = t->wl->files ? t->wl->files(files, MAX_TOOLS, t->def) : 0;
	if (n < 0)
		return boot_fail(r, "failed", "%s", err_msg());
	files[n] = NULL;
	for (int i = 0; i < n; i++)
		if (stat(files[i], &st) < 0 || !S_ISREG(st.st_mode))
			return boot_fail(r, "failed", "workload %s needs %s on the agent, which lacks it",
				   t->wl->name, files[i]);
	n = t->wl->modules ? t->wl->modules(mods, MAX_TOOLS, t->def) : 0;
	if (n < 0)
		return boot_fail(r, "failed", "%s", err_msg());
	mods[n] = NULL;
	if (n == 0 || initramfs_kernel_release(release, sizeof(release), kernel) < 0) {
		mods[0] = NULL;
		return 0;
	}
	snprintf(moddir, moddir_len, "/lib/modules/%s", release);
	dep = xasprintf("%s/modules.dep", moddir);
	have = stat(dep, &st) == 0;
	free(dep);
	if (!have) {
		mods[0] = NULL;
		moddir[0] = '\0';
	}
	return 0;
}

static int start(void **session, struct boot_result *r, const struct boot_task *t)
{
	struct qemu_opts qo = QEMU_OPTS_INIT;
	struct initramfs_spec spec = INITRAMFS_SPEC_INIT;
	struct session *s = xcalloc(1, sizeof(*s));
	const char *image, *append;
	long long mem, cpus, boot_to, run_to;
	char *kernel = NULL, *initrd = NULL, *init = NULL, *tools[MAX_TOOLS + 1] = { NULL };
	const char *progs[MAX_TOOLS + 1] = { NULL };
	const char *files[MAX_TOOLS + 1], *mods[MAX_TOOLS + 1];
	char moddir[PATH_MAX];
	size_t ntools = 0;
	struct stat st;
	int rc = ERR_FAIL, qrc;

	memset(r, 0, sizeof(*r));
	*session = NULL;
	if (jsonx_str(&image, t->def, "kernel_image", 1024, 0, "arch/x86/boot/bzImage") < 0 ||
	    jsonx_str(&append, t->def, "append", MAX_APPEND, 0, NULL) < 0 ||
	    jsonx_int(&mem, t->def, "memory_mb", 64, 65536, 0, 512) < 0 ||
	    jsonx_int(&cpus, t->def, "cpus", 1, 64, 0, 2) < 0 ||
	    jsonx_int(&boot_to, t->def, "boot_timeout", 1, 3600, 0, 120) < 0 ||
	    jsonx_int(&run_to, t->def, "run_timeout", 1, 86400, 0, 300) < 0) {
		boot_fail(r, "failed", "workload: %s", err_msg());
		goto out;
	}
	if (!path_inside(image)) {
		boot_fail(r, "failed", "workload: kernel_image '%s' is not a path inside the work tree", image);
		goto out;
	}
	if (t->runs < 1 || t->runs > QEMU_MAX_RUNS) {
		boot_fail(r, "failed", "boot qemu carries 1 to %d runs per task, not %d", QEMU_MAX_RUNS, t->runs);
		goto out;
	}

	/* The build ran: no image is the commit's fault, as a failed build is. */
	kernel = xasprintf("%s/%s", t->srcdir, image);
	if (stat(kernel, &st) < 0 || !S_ISREG(st.st_mode)) {
		boot_fail(r, "skipped", "build produced no %s", image);
		goto out;
	}
	if (init_script(&init, tools, &ntools, r, t) < 0)
		goto out;
	if (guest_extras(files, mods, moddir, sizeof(moddir), r, t, kernel) < 0)
		goto out;
	if (mkdir_p(t->workdir, 0755) < 0) {
		boot_fail(r, "failed", "%s", err_msg());
		goto out;
	}
	initrd = xasprintf("%s/initramfs.cpio", t->workdir);
	spec.init = init;
	for (size_t i = 0; i < ntools; i++)
		progs[i] = tools[i];
	spec.programs = ntools ? progs : NULL;
	spec.files = files[0] ? files : NULL;
	spec.modules = mods[0] ? mods : NULL;
	spec.modules_dir = moddir[0] ? moddir : NULL;
	if (initramfs_build(initrd, &spec) < 0) {
		boot_fail(r, "failed", "initramfs: %s", err_msg());
		goto out;
	}

	qo.kernel = kernel;
	qo.initrd = initrd;
	qo.append = append;
	qo.mem_mb = (int)mem;
	qo.cpus = (int)cpus;
	qo.accel = QEMU_ACCEL_AUTO;
	qo.boot_timeout_ms = (int)boot_to * 1000;
	qo.run_timeout_ms = run_to * t->runs > INT_MAX / 1000 ? INT_MAX : (int)(run_to * t->runs * 1000);
	qo.runs = t->runs;
	qo.host_cpu = t->cpu;
	qo.workdir = t->workdir;
	qo.cancel = t->cancel;
	qrc = qemu_boot_run(&s->res, &qo);
	r->run_s = s->res.wall_ms > 0 ? (double)s->res.wall_ms / 1000 : 0;
	if (s->res.console)
		r->console = xstrdup(s->res.console);
	if (qrc == QEMU_ERR_NOBOOT) {
		boot_fail(r, "skipped", "the kernel did not boot: %s", s->res.why[0] ? s->res.why : err_msg());
		r->log_tail = xstrdup(s->res.console_tail ? s->res.console_tail : "");
		goto out;
	}
	if (qrc < 0) {
		boot_fail(r, "failed", "qemu: %s", err_msg());
		goto out;
	}
	r->accel = qemu_accel_name(s->res.accel);
	r->status = "ok";
	if (t->perf_data) {
		int prc;

		if (qemu_console_profile(&r->profile, &prc, s->res.console ? s->res.console : "") < 0)
			snprintf(r->profile_error, sizeof(r->profile_error), "%s", err_msg());
		else if (prc != 0)
			snprintf(r->profile_error, sizeof(r->profile_error), "perf report in the guest failed "
				 "(exit %d): %.300s", prc, perf_said(s->res.console));
		if (r->profile_error[0]) {
			free(r->profile);
			r->profile = NULL;
		}
	}
	*session = s;
	s = NULL;
	rc = 0;
out:
	if (s) {
		qemu_result_release(&s->res);
		free(s);
	}
	free(kernel);
	free(initrd);
	free(init);
	for (size_t i = 0; i < ntools; i++)
		free(tools[i]);
	return rc;
}

/* Run i's console text into s: a parse failure is a failed sample with the parser's words. */
static int run(struct run_sample *out, void *session, const struct boot_task *t, int i)
{
	struct session *s = session;
	const struct qemu_run *run = i >= 1 && i <= s->res.con.nruns ? &s->res.con.runs[i - 1] : NULL;
	const char *why = s->res.why;
	struct run_output o;

	memset(out, 0, sizeof(*out));
	if (!run || !run->present) {
		snprintf(out->unit, sizeof(out->unit), "%s", workload_def_str(t->def, "unit", ""));
		snprintf(out->error, sizeof(out->error), "run %d is missing from the guest's console%s%.200s",
			 i, why[0] ? ": " : "", why);
		return 0;
	}
	memset(&o, 0, sizeof(o));
	o.out = run->text;
	o.out_len = strlen(run->text);
	o.ok = run->rc == 0;
	o.rc = run->rc;
	o.how = "";
	t->wl->parse(out, t->def, &o);
	return 0;
}

static void stop(void *session, const struct boot_task *t)
{
	struct session *s = session;

	(void)t;
	if (!s)
		return;
	qemu_result_release(&s->res);
	free(s);
}

const struct boot_ops boot_qemu = {
	.name = "qemu",
	.what = "booting and measuring in QEMU",
	.prepare = NULL,
	.start = start,
	.run = run,
	.stop = stop,
};
