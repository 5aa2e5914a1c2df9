/*
 * Unit tests of qemu's pure parts: finding the runs between the markers in
 * a serial console log (clean, CRLF, garbage, truncated, out of order) and
 * the /init script the guest runs (its checks, quoting, and that sh
 * accepts it). Booting a real kernel is tests/t0100-qemu-boot.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "iperf3.h"
#include "pktgen.h"
#include "qemu.h"
#include "workload.h"
#include "run.h"
#include "util.h"
#include "cancelfix.h"

#define assert_contains(hay, needle) do { \
	const char *h_ = (hay); \
	if (!strstr(h_, (needle))) { \
		print_error("'%s' does not contain '%s'\n", h_, (needle)); \
		fail(); \
	} \
} while (0)

#define assert_lacks(hay, needle) do { \
	const char *h_ = (hay); \
	if (strstr(h_, (needle))) { \
		print_error("'%s' contains '%s'\n", h_, (needle)); \
		fail(); \
	} \
} while (0)

static void parse(struct qemu_console *c, const char *log, int nruns)
{
	assert_int_equal(qemu_parse_console(c, log, strlen(log), nruns), 0);
}

static void test_clean_crlf(void **state)
{
	struct qemu_console c;
	const char *log =
		"SeaBIOS (version 1.16.2)\r\n"
		"[    0.000000] Linux version 6.1.0\r\n"
		"BISECT-READY\r\n"
		"BISECT-BEGIN 1\r\n"
		"{\r\n\t\"end\": {}\r\n}\r\n"
		"BISECT-END 1 rc=0\r\n"
		"BISECT-BEGIN 2\r\n"
		"line a\r\n"
		"\r\n"
		"line b\r\n"
		"BISECT-END 2 rc=1\r\n"
		"BISECT-DONE\r\n"
		"[    7.7] reboot: Restarting system\r\n";

	(void)state;
	parse(&c, log, 2);
	assert_true(c.ready);
	assert_true(c.done);
	assert_true(c.complete);
	assert_int_equal(c.nruns, 2);
	assert_true(c.runs[0].present);
	assert_string_equal(c.runs[0].text, "{\n\t\"end\": {}\n}\n");
	assert_int_equal(c.runs[0].rc, 0);
	assert_string_equal(c.runs[1].text, "line a\n\nline b\n");
	assert_int_equal(c.runs[1].rc, 1);
	qemu_console_release(&c);
	qemu_console_release(&c); /* released twice is harmless */
}

static void test_empty_run_and_no_rc(void **state)
{
	struct qemu_console c;

	(void)state;
	parse(&c, "BISECT-READY\nBISECT-BEGIN 1\nBISECT-END 1\n", 1);
	assert_true(c.complete);
	assert_string_equal(c.runs[0].text, "");
	assert_int_equal(c.runs[0].rc, -1);
	assert_false(c.done);
	qemu_console_release(&c);
	parse(&c, "BISECT-READY\nBISECT-BEGIN 1\nx\nBISECT-END 1 rc=abc\n", 1);
	assert_true(c.runs[0].present);
	assert_int_equal(c.runs[0].rc, -1);
	qemu_console_release(&c);
	parse(&c, "BISECT-READY\nBISECT-BEGIN 1\nx\nBISECT-END 1 rc=127\n", 1);
	assert_int_equal(c.runs[0].rc, 127);
	qemu_console_release(&c);
}

static void test_nothing(void **state)
{
	struct qemu_console c;

	(void)state;
	assert_int_equal(qemu_parse_console(&c, NULL, 0, 3), 0);
	assert_false(c.ready);
	assert_false(c.complete);
	assert_int_equal(c.nruns, 3);
	for (int i = 0; i < 3; i++) {
		assert_false(c.runs[i].present);
		assert_null(c.runs[i].text);
		assert_int_equal(c.runs[i].rc, -1);
	}
	qemu_console_release(&c);
	assert_int_equal(qemu_parse_console(&c, "", 0, 0), ERR_INVALID);
	assert_int_equal(qemu_parse_console(&c, "", 0, QEMU_MAX_RUNS + 1), ERR_INVALID);
	qemu_console_release(&c);
}

/* A panic before READY: no run counts, even with markers in the noise. */
static void test_panic_before_ready(void **state)
{
	struct qemu_console c;

	(void)state;
	parse(&c, "BISECT-BEGIN 1\nfake\nBISECT-END 1 rc=0\n"
		  "[ 2.1] Kernel panic - not syncing: VFS: Unable to mount root fs\n", 1);
	assert_false(c.ready);
	assert_false(c.runs[0].present);
	qemu_console_release(&c);
}

/* The log ends mid-run: a guest killed by the run deadline. */
static void test_truncated(void **state)
{
	struct qemu_console c;

	(void)state;
	parse(&c, "BISECT-READY\nBISECT-BEGIN 1\nok\nBISECT-END 1 rc=0\n"
		  "BISECT-BEGIN 2\n{\"start\": {", 2);
	assert_true(c.runs[0].present);
	assert_false(c.runs[1].present);
	assert_null(c.runs[1].text);
	assert_false(c.complete);
	qemu_console_release(&c);

	/* An END cut before its newline may be "BISECT-END 1" of "... 12": not trusted. */
	parse(&c, "BISECT-READY\nBISECT-BEGIN 1\nok\nBISECT-END 1", 1);
	assert_false(c.runs[0].present);
	qemu_console_release(&c);
	parse(&c, "BISECT-READY", 1);
	assert_false(c.ready);
	qemu_console_release(&c);
}

static void test_out_of_order(void **state)
{
	struct qemu_console c;

	(void)state;
	/* BEGIN 1 lost its END (a second BEGIN came); run 2 is fine. */
	parse(&c, "BISECT-READY\nBISECT-BEGIN 1\nhalf\nBISECT-BEGIN 2\ntwo\nBISECT-END 2 rc=0\n", 2);
	assert_false(c.runs[0].present);
	assert_true(c.runs[1].present);
	assert_string_equal(c.runs[1].text, "two\n");
	qemu_console_release(&c);

	/* Another run's END closes nothing and discards the open one. */
	parse(&c, "BISECT-READY\nBISECT-BEGIN 1\nx\nBISECT-END 2 rc=0\nBISECT-END 1 rc=0\n", 2);
	assert_false(c.runs[0].present);
	assert_false(c.runs[1].present);
	qemu_console_release(&c);

	/* Out of range, zero, negative, huge: ignored; a repeated run keeps the first. */
	parse(&c, "BISECT-READY\n"
		  "BISECT-BEGIN 0\nz\nBISECT-END 0\n"
		  "BISECT-BEGIN 3\nt\nBISECT-END 3\n"
		  "BISECT-BEGIN -1\nn\nBISECT-END -1\n"
		  "BISECT-BEGIN 99999999999999999999\nh\nBISECT-END 99999999999999999999\n"
		  "BISECT-BEGIN 1\nfirst\nBISECT-END 1 rc=0\n"
		  "BISECT-BEGIN 1\nsecond\nBISECT-END 1 rc=3\n", 2);
	assert_true(c.runs[0].present);
	assert_string_equal(c.runs[0].text, "first\n");
	assert_int_equal(c.runs[0].rc, 0);
	assert_false(c.runs[1].present);
	qemu_console_release(&c);

	/* END without BEGIN; DONE inside a run ends it unfinished. */
	parse(&c, "BISECT-READY\nBISECT-END 1 rc=0\nBISECT-BEGIN 2\nx\nBISECT-DONE\nBISECT-END 2\n", 2);
	assert_false(c.runs[0].present);
	assert_false(c.runs[1].present);
	assert_true(c.done);
	qemu_console_release(&c);
}

/* Markers count only as whole words at the start of a line. */
static void test_not_markers(void **state)
{
	struct qemu_console c;

	(void)state;
	parse(&c, "echo BISECT-READY\nBISECT-READYX\n BISECT-READY\n", 1);
	assert_false(c.ready);
	qemu_console_release(&c);
	parse(&c, "BISECT-READY\nBISECT-BEGIN 1\n  \"x\": \"BISECT-END 1\"\nBISECT-BEGIN1\n"
		  "BISECT-END 1x\nBISECT-END 1 rc=0\n", 1);
	assert_true(c.runs[0].present);
	assert_string_equal(c.runs[0].text, "  \"x\": \"BISECT-END 1\"\nBISECT-BEGIN1\nBISECT-END 1x\n");
	qemu_console_release(&c);
}

/* Binary garbage, NULs and all, is just text that is not a marker. */
static void test_garbage(void **state)
{
	struct qemu_console c;
	char log[4096];
	size_t n = 0;
	const char *a = "BISECT-READY\nBISECT-BEGIN 1\n", *b = "\nBISECT-END 1 rc=0\n";

	(void)state;
	for (int i = 0; i < 1000; i++)
		log[n++] = (char)((i * 131 + 7) % 256);
	log[n++] = '\n';
	memcpy(log + n, a, strlen(a));
	n += strlen(a);
	for (int i = 0; i < 300; i++)
		log[n++] = (char)((i * 37) % 256 == '\n' ? 'x' : (i * 37) % 256);
	memcpy(log + n, b, strlen(b));
	n += strlen(b);
	assert_int_equal(qemu_parse_console(&c, log, n, 1), 0);
	assert_true(c.ready);
	assert_true(c.runs[0].present);
	assert_int_equal(c.runs[0].rc, 0);
	qemu_console_release(&c);
	/* Cut anywhere: never a crash, never a run that was not whole. */
	for (size_t cut = 0; cut < n; cut += 7) {
		assert_int_equal(qemu_parse_console(&c, log, cut, 1), 0);
		if (c.runs[0].present)
			assert_true(cut >= n - 1);
		qemu_console_release(&c);
	}
}

/* sh -n: the generated script parses. */
static void sh_check(const char *script)
{
	char path[] = "/tmp/test-qemu-init.XXXXXX";
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	const char *argv[] = { "sh", "-n", path, NULL };
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(file_write_atomic(path, script, strlen(script)), 0);
	o.argv = argv;
	o.timeout_ms = 10000;
	assert_int_equal(run_cmd(&res, &o), 0);
	if (!run_ok(&res)) {
		print_error("sh -n: %s\n%s\n", res.err, script);
		fail();
	}
	run_result_release(&res);
	unlink(path);
}

/* The /init for runs runs of the run_once text in sb (released). */
static int init_of(char **s, struct sbuf *sb, int runs, int dmesg)
{
	struct qemu_script_opts o = QEMU_SCRIPT_OPTS_INIT;
	int rc;

	o.runs = runs;
	o.dmesg_level = dmesg;
	o.run_once = sb->buf;
	rc = qemu_init_script(s, &o);
	sbuf_release(sb);
	return rc;
}

static int iperf3_init(char **s, const struct iperf3_script_opts *io, int runs, int dmesg)
{
	struct sbuf sb = SBUF_INIT;
	int rc = iperf3_script(&sb, io);

	if (rc) {
		sbuf_release(&sb);
		*s = NULL;
		return rc;
	}
	return init_of(s, &sb, runs, dmesg);
}

static int pktgen_init(char **s, const struct pktgen_script_opts *po, int runs)
{
	struct sbuf sb = SBUF_INIT;
	int rc = pktgen_script(&sb, po);

	if (rc) {
		sbuf_release(&sb);
		*s = NULL;
		return rc;
	}
	return init_of(s, &sb, runs, 0);
}

/* A command workload's guest script through its table entry. */
static int command_init(char **s, const char *const *argv, int runs)
{
	const struct workload_ops *ops = workload_find("command");
	json_t *def = json_object(), *a = json_array();
	struct sbuf sb = SBUF_INIT;
	int rc;

	for (; argv && *argv; argv++)
		json_array_append_new(a, json_string(*argv));
	json_object_set_new(def, "command", a);
	rc = ops->script(&sb, def, NULL);
	json_decref(def);
	if (rc) {
		sbuf_release(&sb);
		*s = NULL;
		return rc;
	}
	return init_of(s, &sb, runs, 0);
}

static void test_script_iperf3(void **state)
{
	struct iperf3_script_opts o = IPERF3_SCRIPT_OPTS_INIT;
	char *s = NULL;

	(void)state;
	o.udp = 1;
	o.streams = 4;
	o.time_s = 3;
	o.bitrate = "0";
	o.length = 8920;
	o.omit_s = 1;
	assert_int_equal(iperf3_init(&s, &o, 3, 0), 0);
	assert_contains(s, "#!/bin/sh\n");
	assert_contains(s, "mount -t proc proc /proc\n");
	assert_contains(s, "mount -t devtmpfs devtmpfs /dev");
	assert_contains(s, "ip link set lo up");
	assert_contains(s, "'/usr/bin/iperf3' -s -1 -p 5201");
	assert_contains(s, "'/usr/bin/iperf3' -c 127.0.0.1 -4 -p 5201 -J -t 3 -P 4 -u -b 0 -l 8920 -O 1\n");
	/* The console log says which kernel booted with which command line, before the runs. */
	assert_contains(s, "echo \"booted: $(uname -r) $(cat /proc/cmdline)\"\necho BISECT-READY\n");
	assert_contains(s, "while [ $i -le 3 ]");
	assert_contains(s, "echo \"BISECT-BEGIN $i\"");
	assert_contains(s, "echo \"BISECT-END $i rc=$rc\"");
	assert_contains(s, "echo BISECT-DONE\n");
	assert_contains(s, "reboot -f\n");
	assert_lacks(s, "\npoweroff");
	/* A missing iperf3 in the guest says so in the run's text. */
	assert_contains(s, "/usr/bin/iperf3 not found in the guest");
	assert_contains(s, "return 127");
	sh_check(s);
	free(s);

	o.ipv6 = 1;
	o.reverse = 1;
	o.bitrate = "2.5G";
	o.path = "/opt/it's/iperf3";
	assert_int_equal(iperf3_init(&s, &o, 3, 1), 0);
	assert_contains(s, "-c ::1 -6");
	assert_contains(s, "-b 2.5G");
	assert_contains(s, " -R\n");
	assert_contains(s, "'/opt/it'\\''s/iperf3'");
	assert_contains(s, "dmesg -n 1\n");
	sh_check(s);
	free(s);
}

static void test_script_bad(void **state)
{
	struct iperf3_script_opts o = IPERF3_SCRIPT_OPTS_INIT;
	struct pktgen_script_opts p = PKTGEN_SCRIPT_OPTS_INIT;
	struct qemu_script_opts q = QEMU_SCRIPT_OPTS_INIT;
	static const char *const bad_rates[] = { "1G; reboot", "", "G", "1GG", ".5G", "1 G", "$(x)" };
	char *s = (char *)1;

	(void)state;
	for (size_t i = 0; i < sizeof(bad_rates) / sizeof(bad_rates[0]); i++) {
		o.bitrate = bad_rates[i];
		assert_int_equal(iperf3_init(&s, &o, 1, 0), ERR_INVALID);
		assert_null(s);
	}
	o.bitrate = NULL;
	o.streams = 129;
	assert_int_equal(iperf3_init(&s, &o, 1, 0), ERR_INVALID);
	o.streams = 0;
	o.path = "iperf3";
	assert_int_equal(iperf3_init(&s, &o, 1, 0), ERR_INVALID);
	o.path = NULL;
	assert_int_equal(iperf3_init(&s, &o, 0, 0), ERR_INVALID);
	assert_int_equal(iperf3_init(&s, &o, QEMU_MAX_RUNS + 1, 0), ERR_INVALID);
	/* No workload script: no /init. */
	s = (char *)1;
	assert_int_equal(qemu_init_script(&s, &q), ERR_INVALID);
	assert_null(s);

	p.dev = "foo bar";
	assert_int_equal(pktgen_init(&s, &p, 1), ERR_INVALID);
	p.dev = "foo";
	p.clsact_bpf = 1; /* without tc's full path */
	assert_int_equal(pktgen_init(&s, &p, 1), ERR_INVALID);
	assert_contains(err_msg(), "full path");
	p.tc = "tc";
	assert_int_equal(pktgen_init(&s, &p, 1), ERR_INVALID);
	p.tc = "/usr/sbin/tc";
	p.xmit_mode = "burst";
	assert_int_equal(pktgen_init(&s, &p, 1), ERR_INVALID);
	p.xmit_mode = NULL;
	p.dst = "1.1.1.1;x";
	assert_int_equal(pktgen_init(&s, &p, 1), ERR_INVALID);

	assert_int_equal(command_init(&s, NULL, 1), ERR_INVALID);
	{
		const char *argv[] = { "relative", NULL };

		assert_int_equal(command_init(&s, argv, 1), ERR_INVALID);
	}
}

/* The seed's reproducer: dummy device, clsact + bpf by tc's full path, pktgen queue_xmit. */
static void test_script_pktgen(void **state)
{
	struct pktgen_script_opts o = PKTGEN_SCRIPT_OPTS_INIT;
	char *s = NULL;

	(void)state;
	o.dev = "foo";
	o.tc = "/usr/sbin/tc";
	o.clsact_bpf = 1;
	assert_int_equal(pktgen_init(&s, &o, 6), 0);
	assert_contains(s, "ip link add dev foo type dummy");
	assert_contains(s, "'/usr/sbin/tc' qdisc add dev foo clsact");
	assert_contains(s, "'/usr/sbin/tc' filter add dev foo egress bpf da bytecode '1,6 0 0 0,'");
	assert_lacks(s, "\ttc ");
	assert_contains(s, "pg /proc/net/pktgen/kpktgend_0 'add_device foo'");
	assert_contains(s, "'count 200000'");
	assert_contains(s, "'pkt_size 60'");
	assert_contains(s, "'xmit_mode queue_xmit'");
	assert_contains(s, "'dst 1.1.1.1'");
	assert_contains(s, "'dst_mac 11:11:11:11:11:11'");
	assert_contains(s, "pg /proc/net/pktgen/pgctrl start");
	assert_contains(s, "cat /proc/net/pktgen/foo");
	assert_contains(s, "/usr/sbin/tc not found in the guest");
	assert_contains(s, "CONFIG_NET_PKTGEN");
	sh_check(s);
	free(s);
}

static void test_script_command(void **state)
{
	const char *argv[] = { "/usr/bin/xdp-bench", "redirect", "it's", "$HOME", "a b", NULL };
	char *s = NULL;

	(void)state;
	assert_int_equal(command_init(&s, argv, 1), 0);
	assert_contains(s, "'/usr/bin/xdp-bench' 'redirect' 'it'\\''s' '$HOME' 'a b'\n");
	sh_check(s);
	free(s);
}

/* The script really prints the markers: run its loop with sh on the host. */
static void test_script_runs_on_host(void **state)
{
	const char *argv[] = { "/bin/echo", "hello from run", NULL };
	struct run_opts ro = RUN_OPTS_INIT;
	struct run_result res;
	struct qemu_console c;
	char *s = NULL, *body, path[] = "/tmp/test-qemu-run.XXXXXX";
	const char *sh[] = { "sh", path, NULL };
	int fd;

	(void)state;
	assert_int_equal(command_init(&s, argv, 2), 0);
	/* From run_once on, without the mounts and the reboot; /tmp as the guest has it. */
	body = strstr(s, "run_once() {");
	assert_non_null(body);
	*strstr(body, "sync\n") = '\0';
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(file_write_atomic(path, body, strlen(body)), 0);
	ro.argv = sh;
	ro.timeout_ms = 10000;
	ro.cwd = "/tmp";
	assert_int_equal(run_cmd(&res, &ro), 0);
	assert_true(run_ok(&res));
	parse(&c, res.out, 2);
	assert_true(c.ready && c.done && c.complete);
	assert_string_equal(c.runs[0].text, "hello from run\n");
	assert_int_equal(c.runs[1].rc, 0);
	qemu_console_release(&c);
	run_result_release(&res);
	unlink(path);
	free(s);
}

/*
 * A profile task's /init, run on the host with a stand-in for perf (it
 * records until SIGTERM, as perf record -a does, and reports a fixed
 * table), without the lines that set the guest's sysctls: the whole guest
 * recorded around the runs, the report between its markers before DONE.
 */
static void test_script_profile(void **state)
{
	static const char fake[] =
		"#!/bin/sh\n"
		"case $1 in\n"
		"record) trap 'echo stopped >> /tmp/test-qemu-perf.log; exit 0' TERM\n"
		"\techo \"record $*\" >> /tmp/test-qemu-perf.log\n"
		"\twhile :; do sleep 0.05; done ;;\n"
		"report) echo \"report $*\" >> /tmp/test-qemu-perf.log\n"
		"\tprintf '# Samples: 1K of event cpu-clock\\n    50.00%%  [k] udp_sendmsg\\n' ;;\n"
		"esac\n";
	const char *argv[] = { "/bin/echo", "a run", NULL };
	struct qemu_script_opts o = QEMU_SCRIPT_OPTS_INIT;
	struct run_opts ro = RUN_OPTS_INIT;
	struct run_result res;
	struct qemu_console c;
	struct sbuf sb = SBUF_INIT, body = SBUF_INIT;
	char *s = NULL, *text = NULL, *log = NULL, script[] = "/tmp/test-qemu-prof.XXXXXX";
	char perf[] = "/tmp/test-qemu-fakeperf.XXXXXX";
	const char *sh[] = { "sh", script, NULL }, *p;
	size_t len;
	int fd, rc;

	(void)state;
	unlink("/tmp/test-qemu-perf.log");
	assert_true((fd = mkstemp(perf)) >= 0);
	close(fd);
	assert_int_equal(file_write_atomic_mode(perf, fake, strlen(fake), 0755), 0);
	json_t *def = json_pack("{s:[s,s]}", "command", argv[0], argv[1]);

	assert_int_equal(workload_find("command")->script(&sb, def, NULL), 0);
	json_decref(def);
	o.runs = 2;
	o.run_once = sb.buf;
	o.perf = perf;
	assert_int_equal(qemu_init_script(&s, &o), 0);
	sbuf_release(&sb);
	assert_non_null(strstr(s, " record -q -a -g -e cpu-clock -o /tmp/perf.data "));
	assert_non_null(strstr(s, " report -i /tmp/perf.data --stdio --no-children --sort symbol -g none "));
	assert_true(strstr(s, "record -q") < strstr(s, "BISECT-BEGIN"));
	assert_true(strstr(s, "echo " QEMU_MARK_PROFILE "\n") < strstr(s, "echo " QEMU_MARK_DONE));
	/* From run_once to the reboot, without the guest's sysctls. */
	p = strstr(s, "run_once() {");
	assert_non_null(p);
	*strstr(p, "sync\n") = '\0';
	for (const char *l = p, *nl; *l; l = nl ? nl + 1 : l + strlen(l)) {
		nl = strchr(l, '\n');
		len = nl ? (size_t)(nl - l) + 1 : strlen(l);
		if (!memmem(l, len, "/proc/sys", 9))
			sbuf_add(&body, l, len);
	}
	assert_true((fd = mkstemp(script)) >= 0);
	close(fd);
	assert_int_equal(file_write_atomic(script, body.buf, body.len), 0);
	sbuf_release(&body);
	ro.argv = sh;
	ro.timeout_ms = 20000;
	ro.cwd = "/tmp";
	assert_int_equal(run_cmd(&res, &ro), 0);
	assert_true(run_ok(&res));
	parse(&c, res.out, 2);
	assert_true(c.ready && c.done && c.complete);
	assert_string_equal(c.runs[0].text, "a run\n");
	qemu_console_release(&c);
	assert_int_equal(qemu_console_profile(&text, &rc, res.out), 0);
	assert_int_equal(rc, 0);
	assert_string_equal(text, "# Samples: 1K of event cpu-clock\n    50.00%  [k] udp_sendmsg\n");
	free(text);
	/* perf was asked to record before the runs, stopped after them, then asked for the report. */
	assert_int_equal(file_read(&log, &len, "/tmp/test-qemu-perf.log", 4096), 0);
	assert_non_null(strstr(log, "record record -q -a -g -e cpu-clock -o /tmp/perf.data\nstopped\nreport report -i"));
	free(log);
	run_result_release(&res);
	unlink(script);
	unlink(perf);
	unlink("/tmp/test-qemu-perf.log");
	unlink("/tmp/perf.txt");
	unlink("/tmp/perf.err");
	unlink("/tmp/perf.rec");
	free(s);
}

/* The report off a console: CRs gone, an empty one, a failed one, none. */
static void test_console_profile(void **state)
{
	char *text = NULL;
	int rc;

	(void)state;
	assert_int_equal(qemu_console_profile(&text, &rc, "BISECT-END 1 rc=0\r\nBISECT-PROFILE\r\n# x\r\n  1.00%  [k] a\r\n"
					      "BISECT-PROFILE-END rc=0\r\nBISECT-DONE\r\n"), 0);
	assert_string_equal(text, "# x\n  1.00%  [k] a\n");
	assert_int_equal(rc, 0);
	free(text);
	assert_int_equal(qemu_console_profile(&text, &rc, "x\nBISECT-PROFILE\nBISECT-PROFILE-END rc=255\nperf: no\n"), 0);
	assert_string_equal(text, "");
	assert_int_equal(rc, 255);
	free(text);
	assert_int_equal(qemu_console_profile(&text, &rc, "x\nBISECT-PROFILE\n  1.00%  [k] a\n"), ERR_NOTFOUND);
	assert_null(text);
	assert_non_null(strstr(err_msg(), "no perf report"));
	assert_int_equal(qemu_console_profile(&text, &rc, "BISECT-READY\nBISECT-PROFILE-END rc=0\n"), ERR_NOTFOUND);
}

/*
 * A cancel stops QEMU at once, not at its boot deadline, and says so
 * rather than that the kernel did not boot. QEMU here is a stand-in that
 * never prints READY (it writes its pid and sleeps): what it does is
 * what a guest stuck in a long run looks like from the host.
 */
static void test_cancel_stops_qemu(void **state)
{
	char dir[] = "/tmp/test-qemu-cancel.XXXXXX";
	char *fake, *kernel, *initrd, *pidfile, *work, *script, *pid = NULL;
	struct qemu_opts o = QEMU_OPTS_INIT;
	struct qemu_result r;
	pthread_t th;
	size_t len;
	int cancel = 0, rc;
	int64_t t0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	fake = xasprintf("%s/qemu", dir);
	kernel = xasprintf("%s/bzImage", dir);
	initrd = xasprintf("%s/initrd", dir);
	pidfile = xasprintf("%s/pid", dir);
	work = xasprintf("%s/work", dir);
	script = xasprintf("#!/bin/sh\necho $$ > %s\nexec sleep 60\n", pidfile);
	assert_int_equal(file_write_atomic_mode(fake, script, strlen(script), 0755), 0);
	assert_int_equal(file_write_atomic(kernel, "k", 1), 0);
	assert_int_equal(file_write_atomic(initrd, "i", 1), 0);
	o.qemu = fake;
	o.kernel = kernel;
	o.initrd = initrd;
	o.accel = QEMU_ACCEL_TCG;
	o.boot_timeout_ms = 30000;
	o.run_timeout_ms = 30000;
	o.workdir = work;
	o.cancel = &cancel;
	t0 = now_ms();
	assert_int_equal(pthread_create(&th, NULL, cancel_later, &cancel), 0);
	rc = qemu_boot_run(&r, &o);
	pthread_join(th, NULL);
	assert_int_equal(rc, ERR_FAIL);
	assert_int_equal(r.cancelled, 1);
	assert_int_equal(r.boot_timed_out, 0);
	assert_non_null(strstr(r.why, "the task was cancelled: QEMU stopped after "));
	assert_true(now_ms() - t0 < 20000);
	/* Its process is gone, not left behind. */
	assert_int_equal(file_read(&pid, &len, pidfile, 64), 0);
	assert_int_equal(kill(atoi(pid), 0), -1);
	qemu_result_release(&r);
	free(pid);
	remove_tree(dir);
	free(fake);
	free(kernel);
	free(initrd);
	free(pidfile);
	free(work);
	free(script);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_crlf),
		cmocka_unit_test(test_empty_run_and_no_rc),
		cmocka_unit_test(test_nothing),
		cmocka_unit_test(test_panic_before_ready),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_out_of_order),
		cmocka_unit_test(test_not_markers),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_script_iperf3),
		cmocka_unit_test(test_script_bad),
		cmocka_unit_test(test_script_pktgen),
		cmocka_unit_test(test_script_command),
		cmocka_unit_test(test_script_runs_on_host),
		cmocka_unit_test(test_script_profile),
		cmocka_unit_test(test_console_profile),
		cmocka_unit_test(test_cancel_stops_qemu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
