/*
 * qemu: boot a kernel under QEMU, watch its serial console until the runs
 * are done, and probe whether KVM works. The /init that prints the
 * markers, and the parse of the console they come back on, are
 * qemu_guest.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "err.h"
#include "qemu.h"
#include "run.h"
#include "util.h"

#define DEFAULT_QEMU "qemu-system-x86_64"
#define BASE_APPEND "console=ttyS0 panic=-1 quiet"
#define DEFAULT_MEM_MB 512
#define DEFAULT_CPUS 2
#define DEFAULT_PROBE_MS 10000
#define DEFAULT_BOOT_MS 60000
#define DEFAULT_RUN_MS 600000
/* How often the watcher reads the console. */
#define WATCH_POLL_MS 50
/* After DONE the guest reboots, which ends QEMU; if it does not, it is stopped. */
#define DONE_GRACE_MS 5000
/* A QEMU that ignores the monitor's quit is killed by run.h this much later. */
#define KILL_SLACK_MS 15000
#define MAX_APPEND 2048
#define PROBE_MARK "Linux version"

const char *qemu_accel_name(int accel)
{
	switch (accel) {
	case QEMU_ACCEL_KVM: return "kvm";
	case QEMU_ACCEL_TCG: return "tcg";
	default: return "auto";
	}
}

/* --- watching a running QEMU ---------------------------------------------- */

struct watch {
	/* set before the thread starts */
	const char *log_path, *mon_path;
	int64_t start;
	int boot_ms, run_ms;
	const char *stop_on;       /* quit as soon as a line holds this (the probe) */
	/* shared */
	pthread_mutex_t lock;
	int stop;
	/* the thread's findings, read after join */
	int64_t ready_at, done_at;
	int boot_timed_out, run_timed_out, overflow, matched, quit_sent;
};

/* Asks QEMU to quit through its monitor. Fails quietly: run.h's deadline is the backstop. */
static void monitor_quit(const char *mon_path)
{
	struct sockaddr_un sa;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(mon_path) >= sizeof(sa.sun_path))
		return;
	strcpy(sa.sun_path, mon_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		static const char cmd[] = "quit\n";

		/* No SIGPIPE for the agent when QEMU goes away first. */
		if (send(fd, cmd, sizeof(cmd) - 1, MSG_NOSIGNAL) < 0) {
			/* nothing to do: the deadline kills it */
		}
		/* Give the monitor the time to read it before the socket goes. */
		usleep(100000);
	}
	close(fd);
}

/* One complete console line ('\r' stripped) seen by the watcher. */
static void watch_line(struct watch *w, const char *line, size_t len, int64_t now)
{
	if (w->stop_on && memmem(line, len, w->stop_on, strlen(w->stop_on)))
		w->matched = 1;
	if (w->ready_at < 0 && qemu_marker(line, len, QEMU_MARK_READY))
		w->ready_at = now;
	else if (w->ready_at >= 0 && w->done_at < 0 && qemu_marker(line, len, QEMU_MARK_DONE))
		w->done_at = now;
}

static void *watch_main(void *arg)
{
	struct watch *w = arg;
	struct sbuf line = SBUF_INIT;
	size_t total = 0;
	int fd = -1, quit = 0;
	int64_t quit_at = -1;

	for (;;) {
		int64_t now;
		int stop;

		pthread_mutex_lock(&w->lock);
		stop = w->stop;
		pthread_mutex_unlock(&w->lock);
		if (stop)
			break;
		usleep(WATCH_POLL_MS * 1000);
		if (fd < 0)
			fd = open(w->log_path, O_RDONLY | O_CLOEXEC);
		now = now_ms();
		while (fd >= 0) {
			char buf[16384];
			ssize_t r = read(fd, buf, sizeof(buf));

			if (r <= 0)
				break;
			total += (size_t)r;
			for (ssize_t i = 0; i < r; i++) {
				if (buf[i] == '\n') {
					size_t l = line.len;

					while (l > 0 && line.buf[l - 1] == '\r')
						l--;
					watch_line(w, line.buf ? line.buf : "", l, now);
					line.len = 0;
				} else if (line.len < 4096) {
					sbuf_add(&line, &buf[i], 1);
				}
			}
		}
		if (total > QEMU_MAX_CONSOLE) {
			w->overflow = 1;
			quit = 1;
		}
		if (w->matched)
			quit = 1;
		if (w->ready_at < 0 && w->boot_ms > 0 && now - w->start >= w->boot_ms) {
			w->boot_timed_out = 1;
			quit = 1;
		}
		if (w->ready_at >= 0 && w->done_at < 0 && w->run_ms > 0 && now - w->ready_at >= w->run_ms) {
			w->run_timed_out = 1;
			quit = 1;
		}
		if (w->done_at >= 0 && now - w->done_at >= DONE_GRACE_MS)
			quit = 1;
		/* Ask again now and then: an early quit may reach a monitor not yet listening. */
		if (quit && (quit_at < 0 || now - quit_at >= 2000)) {
			monitor_quit(w->mon_path);
			w->quit_sent = 1;
			quit_at = now;
		}
	}
	if (fd >= 0)
		close(fd);
	sbuf_release(&line);
	return NULL;
}

/* --- running QEMU --------------------------------------------------------- */

struct launch {
	const char *qemu, *kernel, *initrd, *append, *dir;
	int accel, mem_mb, cpus, host_cpu;
	int boot_ms, run_ms;
	const char *stop_on;
	const int *cancel;
};

struct launched {
	struct run_result res;
	struct watch w;
	char *console;
	size_t console_len;
};

static int launch(struct launched *L, const struct launch *a)
{
	struct run_opts ro = RUN_OPTS_INIT;
	const char *argv[40];
	char mem[32], smp[32];
	char *log_path = xasprintf("%s/console.log", a->dir);
	char *mon_path = xasprintf("%s/monitor.sock", a->dir);
	char *serial = xasprintf("file:%s", log_path);
	char *monitor = xasprintf("unix:%s,server=on,wait=off", mon_path);
	pthread_t th;
	int n = 0, rc = 0, started;

	memset(L, 0, sizeof(*L));
	unlink(log_path);
	unlink(mon_path);
	snprintf(mem, sizeof(mem), "%d", a->mem_mb);
	snprintf(smp, sizeof(smp), "%d", a->cpus);
	argv[n++] = a->qemu;
	argv[n++] = "-nodefaults";
	argv[n++] = "-no-user-config";
	argv[n++] = "-display";
	argv[n++] = "none";
	argv[n++] = "-no-reboot";
	argv[n++] = "-accel";
	if (a->accel == QEMU_ACCEL_KVM) {
		argv[n++] = "kvm";
		argv[n++] = "-cpu";
		argv[n++] = "host";
	} else {
		argv[n++] = "tcg";
	}
	argv[n++] = "-m";
	argv[n++] = mem;
	argv[n++] = "-smp";
	argv[n++] = smp;
	argv[n++] = "-kernel";
	argv[n++] = a->kernel;
	if (a->initrd) {
		argv[n++] = "-initrd";
		argv[n++] = a->initrd;
	}
	argv[n++] = "-append";
	argv[n++] = a->append;
	argv[n++] = "-serial";
	argv[n++] = serial;
	argv[n++] = "-monitor";
	argv[n++] = monitor;
	argv[n] = NULL;

	L->w.log_path = log_path;
	L->w.mon_path = mon_path;
	L->w.boot_ms = a->boot_ms;
	L->w.run_ms = a->run_ms;
	L->w.stop_on = a->stop_on;
	L->w.ready_at = L->w.done_at = -1;
	pthread_mutex_init(&L->w.lock, NULL);
	L->w.start = now_ms();
	started = pthread_create(&th, NULL, watch_main, &L->w) == 0;
	if (!started) {
		rc = err_set(ERR_FAIL, "qemu: cannot start the console watcher");
		goto out;
	}
	ro.argv = argv;
	ro.cpu = a->host_cpu;
	ro.max_output = 64 << 10;
	ro.timeout_ms = a->boot_ms + a->run_ms + DONE_GRACE_MS + KILL_SLACK_MS;
	ro.cancel = a->cancel;
	if (run_cmd(&L->res, &ro) < 0)
		rc = err_set(ERR_FAIL, "cannot run %s: %s", a->qemu, err_msg());
	pthread_mutex_lock(&L->w.lock);
	L->w.stop = 1;
	pthread_mutex_unlock(&L->w.lock);
	pthread_join(th, NULL);
	if (!rc && L->res.exited && L->res.status == 127)
		rc = err_set(ERR_FAIL, "%s not found on the agent: install qemu-system-x86", a->qemu);
	if (!rc) {
		if (file_read(&L->console, &L->console_len, log_path, QEMU_MAX_CONSOLE + (1u << 20)) < 0) {
			/* QEMU that failed early never made the file: an empty console. */
			err_clear();
			L->console = xstrdup("");
			L->console_len = 0;
		}
	}
out:
	pthread_mutex_destroy(&L->w.lock);
	unlink(mon_path);
	free(serial);
	free(monitor);
	free(log_path);
	free(mon_path);
	L->w.log_path = L->w.mon_path = NULL;
	return rc;
}

static void launched_release(struct launched *L)
{
	run_result_release(&L->res);
	free(L->console);
	L->console = NULL;
}

/* The last non-empty line of s (len bytes), for a one-line reason: at most 200 characters. */
static void last_line(char *buf, size_t n, const char *s, size_t len)
{
	str_last_line(buf, n < 201 ? n : 201, s, len);
}

/* A console line that tells why a kernel stopped, else its last line. */
static void console_reason(char *buf, size_t n, const char *con, size_t len)
{
	static const char *const marks[] = { "Kernel panic", "No working init found", "BUG:", "Oops:" };

	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		const char *p = memmem(con, len, marks[i], strlen(marks[i]));

		if (p) {
			const char *e = memchr(p, '\n', (size_t)(con + len - p));
			size_t l = e ? (size_t)(e - p) : (size_t)(con + len - p);

			while (l > 0 && p[l - 1] == '\r')
				l--;
			snprintf(buf, n, "%.*s", (int)(l > 200 ? 200 : l), p);
			return;
		}
	}
	last_line(buf, n, con, len);
	if (!*buf)
		snprintf(buf, n, "(no console output)");
}

static int make_workdir(char **dir, int *temp, const char *given)
{
	*temp = 0;
	if (given) {
		/* QEMU splits option values at commas; sun_path holds ~108 bytes. */
		if (strchr(given, ',') || strlen(given) > 80)
			return err_set(ERR_INVALID, "qemu: work dir '%s' has a comma or is too long", given);
		if (mkdir_p(given, 0700) < 0)
			return err_code();
		*dir = xstrdup(given);
		return 0;
	}
	*dir = xstrdup("/tmp/bisect-qemu.XXXXXX");
	if (!mkdtemp(*dir)) {
		int e = errno;

		free(*dir);
		*dir = NULL;
		return err_set(ERR_FAIL, "mkdtemp: %s", strerror(e));
	}
	*temp = 1;
	return 0;
}

static int check_file(const char *what, const char *path)
{
	struct stat st;

	if (!path || !*path)
		return err_set(ERR_INVALID, "qemu: no %s given", what);
	if (strchr(path, ',') && !strcmp(what, "initrd"))
		return err_set(ERR_INVALID, "qemu: %s path '%s' has a comma", what, path);
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return err_set(ERR_INVALID, "qemu: %s '%s' is not a file", what, path);
	return 0;
}

/* --- the KVM probe -------------------------------------------------------- */

static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static int probe_done, probe_usable;
static char probe_why[512];

static int probe(const char *kernel, int deadline_ms)
{
	struct launch a = { 0 };
	struct launched L;
	char *dir = NULL, line[256], how[64];
	int temp, rc, fd;

	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(probe_why, sizeof(probe_why), "/dev/kvm: %s", strerror(errno));
		probe_usable = 0;
		return 0;
	}
	close(fd);
	rc = make_workdir(&dir, &temp, NULL);
	if (rc)
		return rc;
	a.qemu = DEFAULT_QEMU;
	a.kernel = kernel;
	a.append = "console=ttyS0 earlyprintk=serial panic=-1";
	a.dir = dir;
	a.accel = QEMU_ACCEL_KVM;
	a.mem_mb = 256;
	a.cpus = 1;
	a.host_cpu = -1;
	a.boot_ms = deadline_ms;
	a.run_ms = 0;
	a.stop_on = PROBE_MARK;
	rc = launch(&L, &a);
	if (!rc) {
		if (L.w.matched) {
			probe_usable = 1;
			snprintf(probe_why, sizeof(probe_why),
				 "KVM works: the kernel printed \"%s\" after %ld ms", PROBE_MARK,
				 L.res.wall_ms);
		} else if (L.w.boot_timed_out) {
			snprintf(probe_why, sizeof(probe_why),
				 "KVM hangs: no \"%s\" on the console within %d ms (stuck in firmware?)",
				 PROBE_MARK, deadline_ms);
		} else {
			last_line(line, sizeof(line), L.res.err, L.res.err_len);
			snprintf(probe_why, sizeof(probe_why), "KVM fails: QEMU %s: %.300s",
				 run_describe(&L.res, how, sizeof(how)), *line ? line : "(no message)");
		}
		launched_release(&L);
	}
	if (temp)
		remove_tree(dir);
	free(dir);
	return rc;
}

int qemu_probe_kvm(int *usable, char *why, size_t why_len, const char *kernel, int deadline_ms)
{
	int rc = 0;

	*usable = 0;
	pthread_mutex_lock(&probe_lock);
	if (!probe_done) {
		rc = check_file("kernel", kernel);
		if (!rc)
			rc = probe(kernel, deadline_ms > 0 ? deadline_ms : DEFAULT_PROBE_MS);
		probe_done = rc == 0;
	}
	if (probe_done) {
		*usable = probe_usable;
		if (why && why_len)
			snprintf(why, why_len, "%s", probe_why);
	}
	pthread_mutex_unlock(&probe_lock);
	return rc;
}

/* --- booting -------------------------------------------------------------- */

void qemu_result_release(struct qemu_result *r)
{
	if (!r)
		return;
	qemu_console_release(&r->con);
	free(r->console);
	free(r->qemu_stderr);
	r->console = r->qemu_stderr = NULL;
	r->console_tail = NULL;
}

int qemu_boot_run(struct qemu_result *out, const struct qemu_opts *o)
{
	struct launch a = { 0 };
	struct launched L;
	char *dir = NULL, *append = NULL, reason[256], how[64];
	int temp = 0, rc;

	memset(out, 0, sizeof(*out));
	out->boot_ms = out->run_ms = -1;
	out->console = xstrdup("");
	out->console_tail = out->console;
	out->qemu_stderr = xstrdup("");
	if (o->runs < 1 || o->runs > QEMU_MAX_RUNS)
		return err_set(ERR_INVALID, "qemu: runs must be 1..%d, not %d", QEMU_MAX_RUNS, o->runs);
	if ((rc = check_file("kernel", o->kernel)) || (rc = check_file("initrd", o->initrd)))
		return rc;
	if (o->append && strlen(o->append) > MAX_APPEND)
		return err_set(ERR_INVALID, "qemu: kernel command line longer than %d bytes", MAX_APPEND);
	if (o->mem_mb < 0 || o->mem_mb > (1 << 20) || o->cpus < 0 || o->cpus > 256)
		return err_set(ERR_INVALID, "qemu: bad memory (%d MB) or cpus (%d)", o->mem_mb, o->cpus);

	out->accel = o->accel;
	if (o->accel == QEMU_ACCEL_AUTO) {
		int usable;

		rc = qemu_probe_kvm(&usable, NULL, 0, o->kernel, o->probe_timeout_ms);
		if (rc)
			return rc;
		out->accel = usable ? QEMU_ACCEL_KVM : QEMU_ACCEL_TCG;
	}
	rc = make_workdir(&dir, &temp, o->workdir);
	if (rc)
		return rc;
	append = o->append && *o->append ? xasprintf("%s %s", BASE_APPEND, o->append)
					 : xstrdup(BASE_APPEND);
	a.qemu = o->qemu ? o->qemu : DEFAULT_QEMU;
	a.kernel = o->kernel;
	a.initrd = o->initrd;
	a.append = append;
	a.dir = dir;
	a.accel = out->accel;
	a.mem_mb = o->mem_mb > 0 ? o->mem_mb : DEFAULT_MEM_MB;
	a.cpus = o->cpus > 0 ? o->cpus : DEFAULT_CPUS;
	a.host_cpu = o->host_cpu;
	a.boot_ms = o->boot_timeout_ms > 0 ? o->boot_timeout_ms : DEFAULT_BOOT_MS;
	a.run_ms = o->run_timeout_ms > 0 ? o->run_timeout_ms : DEFAULT_RUN_MS;
	a.cancel = o->cancel;
	rc = launch(&L, &a);
	if (rc)
		goto out;

	free(out->console);
	free(out->qemu_stderr);
	out->console = L.console;
	L.console = NULL;
	out->qemu_stderr = L.res.err;
	L.res.err = NULL;
	out->console_tail = run_tail(out->console, QEMU_TAIL_BYTES);
	out->wall_ms = L.res.wall_ms;
	out->boot_timed_out = L.w.boot_timed_out;
	out->run_timed_out = L.w.run_timed_out;
	qemu_parse_console(&out->con, out->console, L.console_len, o->runs);
	if (L.w.ready_at >= 0 || out->con.ready) {
		/* The watcher may have missed a READY printed just before QEMU ended. */
		out->boot_ms = L.w.ready_at >= 0 ? (long)(L.w.ready_at - L.w.start) : out->wall_ms;
		out->run_ms = (long)((L.w.done_at >= 0 ? L.w.done_at : L.w.start + out->wall_ms) -
				     (L.w.start + out->boot_ms));
	}

	out->cancelled = L.res.cancelled;
	if (out->cancelled) {
		/* Nothing the guest did or did not print says anything of the kernel. */
		snprintf(out->why, sizeof(out->why), "the task was cancelled: QEMU stopped after %.1f s",
			 (double)out->wall_ms / 1000);
		rc = err_set(ERR_FAIL, "%s", out->why);
	} else if (!out->con.ready) {
		console_reason(reason, sizeof(reason), out->console, L.console_len);
		if (L.w.boot_timed_out) {
			snprintf(out->why, sizeof(out->why),
				 "no %s within %d s (%s): %s", QEMU_MARK_READY, a.boot_ms / 1000,
				 qemu_accel_name(a.accel), reason);
		} else if (L.w.overflow) {
			snprintf(out->why, sizeof(out->why), "console output past %u MB before %s",
				 QEMU_MAX_CONSOLE >> 20, QEMU_MARK_READY);
		} else if (!run_ok(&L.res)) {
			char line[256];

			last_line(line, sizeof(line), out->qemu_stderr, strlen(out->qemu_stderr));
			snprintf(out->why, sizeof(out->why), "QEMU %s before %s: %s",
				 run_describe(&L.res, how, sizeof(how)), QEMU_MARK_READY,
				 *line ? line : reason);
		} else {
			snprintf(out->why, sizeof(out->why), "the guest stopped before %s: %s",
				 QEMU_MARK_READY, reason);
		}
		rc = err_set(QEMU_ERR_NOBOOT, "kernel did not boot: %s", out->why);
	} else if (!out->con.complete) {
		int missing = 0;

		for (int i = 0; i < out->con.nruns; i++)
			missing += !out->con.runs[i].present;
		console_reason(reason, sizeof(reason), out->console, L.console_len);
		if (L.w.run_timed_out)
			snprintf(out->why, sizeof(out->why), "%d of %d runs missing: run deadline %d s passed: %s",
				 missing, o->runs, a.run_ms / 1000, reason);
		else if (L.w.overflow)
			snprintf(out->why, sizeof(out->why), "%d of %d runs missing: console output past %u MB",
				 missing, o->runs, QEMU_MAX_CONSOLE >> 20);
		else
			snprintf(out->why, sizeof(out->why), "%d of %d runs missing: the guest stopped (%s): %s",
				 missing, o->runs, run_describe(&L.res, how, sizeof(how)), reason);
	}
	launched_release(&L);
out:
	if (temp)
		remove_tree(dir);
	free(dir);
	free(append);
	return rc;
}
