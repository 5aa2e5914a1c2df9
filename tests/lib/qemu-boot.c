/*
 * qemu-boot: drives agents/initramfs.c and agents/qemu.c from the shell for
 * tests/t0100-qemu-boot.sh (and by hand, to try a kernel):
 *
 *   qemu-boot probe KERNEL [DEADLINE_MS]
 *   qemu-boot run --kernel K --dir D [--accel auto|kvm|tcg] [--runs N]
 *           [--append ARGS] [--boot-timeout S] [--run-timeout S]
 *           [--udp] [--streams N] [--time S] [--bitrate B] [--length N]
 *           [--no-iperf3] [--init FILE] [--gzip] [--perf PERF]
 *   qemu-boot initramfs OUT INIT_FILE [--program P]... [--modules-dir D]
 *           [--module M]...
 *
 * run builds D/initramfs (busybox, iperf3 unless --no-iperf3, and the
 * iperf3 /init of qemu_init_script(), or FILE's text with --init), boots
 * it, and prints key=value lines: accel, boot_ms, run_ms, wall_ms,
 * complete, why, then per run "run I present=P rc=R bps=X" (X from
 * netparse_iperf3: the received rate, or the parse error). Exit 0 when the
 * guest reached READY, 2 when it did not (the console tail on stdout as
 * "# " lines), 1 on any other error. --perf PERF records the runs under
 * that perf in the guest as a profile task does (qemu_script_opts.perf)
 * and adds profile_rc (perf report's status, -1: no report on the console)
 * and profile_rows (perfreport_parse's symbols), the report in D/profile.txt.
 *
 * initramfs writes OUT (uncompressed) as initramfs_build() makes it:
 * busybox, INIT_FILE as /init, each program with its libraries at its host
 * path, the modules with what they need from D (listed in load order in
 * /etc/bisect-modules), for a guest whose /init the test writes itself
 * (tests/guest/kexec.sh). Exit 0, or 1 with the reason.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "initramfs.h"
#include "iperf3.h"
#include "netparse.h"
#include "perfreport.h"
#include "qemu.h"
#include "util.h"

static int usage(void)
{
	fprintf(stderr, "usage: qemu-boot probe KERNEL [DEADLINE_MS]\n"
			"       qemu-boot run --kernel K --dir D [options]\n");
	return 1;
}

static int cmd_probe(int argc, char **argv)
{
	char why[512];
	int usable, rc;

	if (argc < 2)
		return usage();
	rc = qemu_probe_kvm(&usable, why, sizeof(why), argv[1], argc > 2 ? atoi(argv[2]) : 0);
	if (rc) {
		fprintf(stderr, "probe: %s\n", err_msg());
		return 1;
	}
	printf("kvm=%d\nwhy=%s\n", usable, why);
	return 0;
}

static void print_tail(const char *s)
{
	char *copy = xstrdup(s), *save = NULL;

	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		size_t n = strlen(l);

		while (n && l[n - 1] == '\r')
			l[--n] = '\0';
		printf("# %s\n", l);
	}
	free(copy);
}

static int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "kernel", required_argument, NULL, 'k' },
		{ "dir", required_argument, NULL, 'd' },
		{ "accel", required_argument, NULL, 'a' },
		{ "runs", required_argument, NULL, 'r' },
		{ "append", required_argument, NULL, 'A' },
		{ "boot-timeout", required_argument, NULL, 'B' },
		{ "run-timeout", required_argument, NULL, 'R' },
		{ "udp", no_argument, NULL, 'u' },
		{ "streams", required_argument, NULL, 'P' },
		{ "time", required_argument, NULL, 't' },
		{ "bitrate", required_argument, NULL, 'b' },
		{ "length", required_argument, NULL, 'l' },
		{ "no-iperf3", no_argument, NULL, 'N' },
		{ "init", required_argument, NULL, 'i' },
		{ "gzip", no_argument, NULL, 'z' },
		{ "perf", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	struct qemu_opts qo = QEMU_OPTS_INIT;
	struct qemu_script_opts so = QEMU_SCRIPT_OPTS_INIT;
	struct iperf3_script_opts io = IPERF3_SCRIPT_OPTS_INIT;
	struct sbuf run_once = SBUF_INIT;
	struct initramfs_spec spec = INITRAMFS_SPEC_INIT;
	struct qemu_result res;
	const char *dir = NULL, *init_file = NULL;
	const char *progs[] = { "iperf3", NULL, NULL };
	char *init = NULL, *initrd = NULL, *iperf3 = NULL;
	int c, rc, no_iperf3 = 0, ret = 1;
	int64_t t0;

	io.time_s = 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'k': qo.kernel = optarg; break;
		case 'd': dir = optarg; break;
		case 'a':
			qo.accel = !strcmp(optarg, "kvm") ? QEMU_ACCEL_KVM :
				   !strcmp(optarg, "tcg") ? QEMU_ACCEL_TCG : QEMU_ACCEL_AUTO;
			break;
		case 'r': qo.runs = so.runs = atoi(optarg); break;
		case 'A': qo.append = optarg; break;
		case 'B': qo.boot_timeout_ms = atoi(optarg) * 1000; break;
		case 'R': qo.run_timeout_ms = atoi(optarg) * 1000; break;
		case 'u': io.udp = 1; break;
		case 'P': io.streams = atoi(optarg); break;
		case 't': io.time_s = atoi(optarg); break;
		case 'b': io.bitrate = optarg; break;
		case 'l': io.length = atoi(optarg); break;
		case 'N': no_iperf3 = 1; break;
		case 'i': init_file = optarg; break;
		case 'z': spec.compress = 1; break;
		case 'p': so.perf = progs[1] = optarg; break;
		default: return usage();
		}
	}
	if (!qo.kernel || !dir)
		return usage();
	if (mkdir_p(dir, 0755) < 0) {
		fprintf(stderr, "qemu-boot: %s\n", err_msg());
		return 1;
	}
	if (init_file) {
		size_t len;

		if (file_read(&init, &len, init_file, 1 << 20) < 0) {
			fprintf(stderr, "qemu-boot: %s\n", err_msg());
			return 1;
		}
	} else {
		/* Where the agent has iperf3 is where the guest has it. */
		if (!no_iperf3 && initramfs_find_program(&iperf3, "iperf3") < 0) {
			fprintf(stderr, "qemu-boot: %s\n", err_msg());
			goto out;
		}
		io.path = iperf3 ? iperf3 : "/usr/bin/iperf3";
		if (iperf3_script(&run_once, &io) < 0) {
			fprintf(stderr, "qemu-boot: %s\n", err_msg());
			goto out;
		}
		so.run_once = run_once.buf;
		if (qemu_init_script(&init, &so) < 0) {
			fprintf(stderr, "qemu-boot: %s\n", err_msg());
			goto out;
		}
	}
	initrd = xasprintf("%s/initramfs%s", dir, spec.compress ? ".cpio.gz" : ".cpio");
	spec.init = init;
	spec.programs = no_iperf3 ? NULL : progs;
	t0 = now_ms();
	if (initramfs_build(initrd, &spec) < 0) {
		fprintf(stderr, "qemu-boot: %s\n", err_msg());
		goto out;
	}
	printf("initramfs_ms=%ld\n", (long)(now_ms() - t0));
	qo.initrd = initrd;
	qo.workdir = dir;
	rc = qemu_boot_run(&res, &qo);
	if (rc < 0 && rc != QEMU_ERR_NOBOOT) {
		fprintf(stderr, "qemu-boot: %s\n", err_msg());
		qemu_result_release(&res);
		goto out;
	}
	printf("accel=%s\nboot_ms=%ld\nrun_ms=%ld\nwall_ms=%ld\nready=%d\ncomplete=%d\n"
	       "boot_timed_out=%d\nrun_timed_out=%d\nwhy=%s\n",
	       qemu_accel_name(res.accel), res.boot_ms, res.run_ms, res.wall_ms, res.con.ready,
	       res.con.complete, res.boot_timed_out, res.run_timed_out, res.why);
	for (int i = 0; i < res.con.nruns; i++) {
		const struct qemu_run *r = &res.con.runs[i];
		struct iperf3_result ir;

		printf("run %d present=%d rc=%d", i + 1, r->present, r->rc);
		if (r->present && netparse_iperf3(&ir, r->text, strlen(r->text)) == 0)
			printf(" bps=%.0f\n", ir.bits_per_second);
		else if (r->present)
			printf(" error=%s\n", ir.error);
		else
			printf("\n");
		if (r->present) {
			char *p = xasprintf("%s/run-%d.txt", dir, i + 1);

			file_write_atomic(p, r->text, strlen(r->text));
			free(p);
		}
	}
	if (so.perf) {
		struct perf_profile pp = PERF_PROFILE_INIT;
		char *text = NULL, *p = xasprintf("%s/profile.txt", dir);
		int prc = -1;

		if (qemu_console_profile(&text, &prc, res.console ? res.console : "") == 0) {
			file_write_atomic(p, text, strlen(text));
			perfreport_parse(&pp, text, strlen(text));
		}
		printf("profile_rc=%d\nprofile_rows=%zu\nprofile_event=%s\n", prc, pp.n, pp.event);
		perfreport_release(&pp);
		free(text);
		free(p);
	}
	if (rc == QEMU_ERR_NOBOOT) {
		printf("error=%s\n", err_msg());
		print_tail(res.console_tail);
		ret = 2;
	} else {
		ret = 0;
	}
	{
		char *p = xasprintf("%s/console.txt", dir);

		file_write_atomic(p, res.console, strlen(res.console));
		free(p);
	}
	qemu_result_release(&res);
out:
	sbuf_release(&run_once);
	free(init);
	free(initrd);
	free(iperf3);
	return ret;
}

static int cmd_initramfs(int argc, char **argv)
{
	struct initramfs_spec spec = INITRAMFS_SPEC_INIT;
	const char **progs = xcalloc((size_t)argc + 1, sizeof(*progs));
	const char **mods = xcalloc((size_t)argc + 1, sizeof(*mods));
	size_t np = 0, nm = 0;
	char *init = NULL;
	size_t len = 0;
	int ret = 1;

	if (argc < 3)
		goto out;
	for (int i = 3; i < argc; i++) {
		if (i + 1 >= argc)
			goto out;
		if (!strcmp(argv[i], "--program"))
			progs[np++] = argv[++i];
		else if (!strcmp(argv[i], "--module"))
			mods[nm++] = argv[++i];
		else if (!strcmp(argv[i], "--modules-dir"))
			spec.modules_dir = argv[++i];
		else
			goto out;
	}
	if (file_read(&init, &len, argv[2], 1 << 20) < 0) {
		fprintf(stderr, "qemu-boot: %s\n", err_msg());
		goto out;
	}
	spec.init = init;
	spec.programs = np ? progs : NULL;
	spec.modules = nm ? mods : NULL;
	if (initramfs_build(argv[1], &spec) < 0) {
		fprintf(stderr, "qemu-boot: initramfs: %s\n", err_msg());
		goto out;
	}
	ret = 0;
out:
	if (argc < 3)
		usage();
	free(progs);
	free(mods);
	free(init);
	return ret;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "probe"))
		return cmd_probe(argc - 1, argv + 1);
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "initramfs"))
		return cmd_initramfs(argc - 1, argv + 1);
	return usage();
}
