/*
 * boot: the methods that get a built commit running before its workload,
 * chosen by the "boot" of the task's workload definition. "none": the
 * build output runs on the agent itself. "qemu": the built kernel boots in
 * a guest whose /init runs every run of the task (boot_qemu_task()).
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "boot.h"
#include "conf.h"
#include "err.h"
#include "initramfs.h"
#include "jsonx.h"
#include "netparse.h"
#include "qemu.h"
#include "util.h"

#define MAX_APPEND 1024
#define MAX_IPERF3_ARGS 64
#define PKTGEN_DEV "bisect0"

static int boot_none(json_t *def, const char *srcdir)
{
	(void)def;
	(void)srcdir;
	return 0;
}

static const struct boot_ops boots[] = {
	{ "none", boot_none, NULL },
};

const struct boot_ops *boot_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(boots) / sizeof(boots[0]); i++)
		if (!strcmp(boots[i].name, name))
			return &boots[i];
	return NULL;
}

/* --- qemu -------------------------------------------------------------------- */

__attribute__((format(printf, 3, 4)))
static int result_say(struct boot_qemu_result *r, const char *status, const char *fmt, ...)
{
	va_list ap;

	r->status = status;
	va_start(ap, fmt);
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	return ERR_FAIL;
}

/* The definition's "iperf3" array through conf_iperf3_parse() into the script's options. */
static int iperf3_opts(struct qemu_iperf3_opts *io, char *bitrate, size_t blen, json_t *def)
{
	json_t *arr = json_object_get(def, "iperf3"), *v;
	struct conf_iperf3 c;
	char **argv;
	size_t i;
	int rc;

	if (arr && !json_is_array(arr))
		return err_set(ERR_INVALID, "workload: 'iperf3' must be an array of strings");
	if (json_array_size(arr) > MAX_IPERF3_ARGS)
		return err_set(ERR_INVALID, "workload: 'iperf3' has more than %d options", MAX_IPERF3_ARGS);
	argv = xcalloc(json_array_size(arr) + 1, sizeof(*argv));
	json_array_foreach(arr, i, v) {
		if (!json_is_string(v)) {
			strv_free(argv);
			return err_set(ERR_INVALID, "workload: 'iperf3'[%zu] is not a string", i);
		}
		argv[i] = xstrdup(json_string_value(v));
	}
	rc = conf_iperf3_parse(&c, NULL, argv);
	strv_free(argv);
	if (rc < 0)
		return err_set(rc, "workload: %s", err_msg());
	io->udp = c.udp;
	io->ipv6 = c.ipv6;
	io->reverse = c.reverse;
	io->streams = c.streams;
	io->time_s = c.time_s;
	io->omit_s = c.omit_s;
	io->length = c.length;
	io->port = c.port;
	if (c.bitrate[0]) {
		snprintf(bitrate, blen, "%s", c.bitrate);
		io->bitrate = bitrate;
	}
	return 0;
}

/* One run's console text into s: a parse failure is a failed sample with the parser's words. */
static void run_sample(struct sample *s, const struct qemu_run *run, int i, int pktgen,
		       const char *metric, const char *why)
{
	memset(s, 0, sizeof(*s));
	if (!run->present) {
		snprintf(s->unit, sizeof(s->unit), "%s", metric);
		snprintf(s->error, sizeof(s->error), "run %d is missing from the guest's console%s%.200s",
			 i, why[0] ? ": " : "", why);
		return;
	}
	if (pktgen) {
		struct pktgen_result pr;

		netparse_pktgen(&pr, run->text, strlen(run->text));
		netparse_pktgen_sample(s, &pr, metric);
	} else {
		struct iperf3_result ir;

		netparse_iperf3(&ir, run->text, strlen(run->text));
		netparse_iperf3_sample(s, &ir, metric);
	}
	if (s->value <= 0 && run->rc > 0) {
		size_t n = strlen(s->error);

		snprintf(s->error + n, sizeof(s->error) - n, " (exit %d)", run->rc);
	}
}

int boot_qemu_task(struct boot_qemu_result *out, const struct boot_qemu_task *t)
{
	struct qemu_script_opts so = QEMU_SCRIPT_OPTS_INIT;
	struct qemu_opts qo = QEMU_OPTS_INIT;
	struct initramfs_spec spec = INITRAMFS_SPEC_INIT;
	struct qemu_result res;
	const char *type, *image, *append, *metric;
	const char *progs[2] = { NULL, NULL };
	long long mem, cpus, boot_to, run_to, count, pkt_size;
	char *kernel = NULL, *initrd = NULL, *init = NULL, *tool = NULL;
	char bitrate[24];
	struct stat st;
	int rc = ERR_FAIL, pktgen, qrc;

	memset(out, 0, sizeof(*out));
	memset(&res, 0, sizeof(res));
	if (jsonx_str(&type, t->def, "type", 64, 1, NULL) < 0 ||
	    jsonx_str(&image, t->def, "kernel_image", 1024, 0, "arch/x86/boot/bzImage") < 0 ||
	    jsonx_str(&append, t->def, "append", MAX_APPEND, 0, NULL) < 0 ||
	    jsonx_int(&mem, t->def, "memory_mb", 64, 65536, 0, 512) < 0 ||
	    jsonx_int(&cpus, t->def, "cpus", 1, 64, 0, 2) < 0 ||
	    jsonx_int(&boot_to, t->def, "boot_timeout", 1, 3600, 0, 120) < 0 ||
	    jsonx_int(&run_to, t->def, "run_timeout", 1, 86400, 0, 300) < 0 ||
	    jsonx_int(&count, t->def, "count", 1, 1000000000, 0, 200000) < 0 ||
	    jsonx_int(&pkt_size, t->def, "pkt_size", 60, 9000, 0, 60) < 0)
		return result_say(out, "failed", "workload: %s", err_msg());
	pktgen = !strcmp(type, "pktgen");
	if (!pktgen && strcmp(type, "iperf3"))
		return result_say(out, "failed", "boot qemu runs type iperf3 or pktgen, not '%s'", type);
	if (jsonx_str(&metric, t->def, "metric", 31, 0, pktgen ? "pps" : "KBytes/s") < 0)
		return result_say(out, "failed", "workload: %s", err_msg());
	if (!path_inside(image))
		return result_say(out, "failed", "workload: kernel_image '%s' is not a path inside "
				  "the work tree", image);
	if (t->runs < 1 || t->runs > QEMU_MAX_RUNS)
		return result_say(out, "failed", "boot qemu carries 1 to %d runs per task, not %d",
				  QEMU_MAX_RUNS, t->runs);

	/* The build ran: no image is the commit's fault, as a failed build is. */
	kernel = xasprintf("%s/%s", t->srcdir, image);
	if (stat(kernel, &st) < 0 || !S_ISREG(st.st_mode)) {
		result_say(out, "skipped", "build produced no %s", image);
		goto out;
	}

	/* The guest's tools are the agent's: missing ones are this agent's problem. */
	so.runs = t->runs;
	so.dmesg_level = 1;
	if (pktgen) {
		so.workload = QEMU_WL_PKTGEN;
		so.pktgen.count = (unsigned long)count;
		so.pktgen.pkt_size = (unsigned)pkt_size;
		so.pktgen.dev = PKTGEN_DEV;
		so.pktgen.clsact_bpf = json_is_true(json_object_get(t->def, "clsact_bpf"));
		if (so.pktgen.clsact_bpf) {
			if (initramfs_find_program(&tool, "tc") < 0) {
				result_say(out, "failed", "%s (iproute2)", err_msg());
				goto out;
			}
			/* By full path: busybox's own tc applet knows no clsact. */
			so.pktgen.tc = tool;
			progs[0] = tool;
		}
	} else {
		so.workload = QEMU_WL_IPERF3;
		if (iperf3_opts(&so.iperf3, bitrate, sizeof(bitrate), t->def) < 0) {
			result_say(out, "failed", "%s", err_msg());
			goto out;
		}
		if (initramfs_find_program(&tool, "iperf3") < 0) {
			result_say(out, "failed", "%s", err_msg());
			goto out;
		}
		so.iperf3.path = tool;
		progs[0] = tool;
	}
	if (qemu_init_script(&init, &so) < 0) {
		result_say(out, "failed", "%s", err_msg());
		goto out;
	}
	if (mkdir_p(t->workdir, 0755) < 0) {
		result_say(out, "failed", "%s", err_msg());
		goto out;
	}
	initrd = xasprintf("%s/initramfs.cpio", t->workdir);
	spec.init = init;
	spec.programs = progs[0] ? progs : NULL;
	if (initramfs_build(initrd, &spec) < 0) {
		result_say(out, "failed", "initramfs: %s", err_msg());
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
	qo.host_cpu = t->host_cpu;
	qo.workdir = t->workdir;
	qrc = qemu_boot_run(&res, &qo);
	out->run_s = res.wall_ms > 0 ? (double)res.wall_ms / 1000 : 0;
	if (res.console)
		out->console = xstrdup(res.console);
	if (qrc == QEMU_ERR_NOBOOT) {
		result_say(out, "skipped", "the kernel did not boot: %s", res.why[0] ? res.why : err_msg());
		out->log_tail = xstrdup(res.console_tail ? res.console_tail : "");
		goto out;
	}
	if (qrc < 0) {
		result_say(out, "failed", "qemu: %s", err_msg());
		goto out;
	}
	out->accel = qemu_accel_name(res.accel);
	out->samples = xcalloc((size_t)t->runs, sizeof(*out->samples));
	out->nsamples = t->runs;
	for (int i = 0; i < t->runs; i++) {
		static const struct qemu_run absent = { 0, -1, NULL };
		const struct qemu_run *run = i < res.con.nruns ? &res.con.runs[i] : &absent;

		run_sample(&out->samples[i], run, i + 1, pktgen, metric, res.why);
	}
	out->status = "ok";
	rc = 0;
out:
	qemu_result_release(&res);
	free(kernel);
	free(initrd);
	free(init);
	free(tool);
	return rc;
}

void boot_qemu_result_release(struct boot_qemu_result *r)
{
	for (int i = 0; i < r->nsamples; i++)
		json_decref(r->samples[i].extra);
	free(r->samples);
	free(r->log_tail);
	free(r->console);
	memset(r, 0, sizeof(*r));
}
