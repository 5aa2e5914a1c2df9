/*
 * Unit tests of initramfs: the newc cpio writer checked by GNU cpio itself
 * (`cpio -t`, `cpio -tv`, `cpio -i --to-stdout`), determinism, path
 * checks, clashes, ldd output parsing, and the "install X" messages.
 * Tests that need cpio(1), ldd or busybox skip when the machine lacks them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "initramfs.h"
#include "run.h"
#include "util.h"

#define assert_contains(hay, needle) do { \
	const char *h_ = (hay); \
	if (!strstr(h_, (needle))) { \
		print_error("'%s' does not contain '%s'\n", h_, (needle)); \
		fail(); \
	} \
} while (0)

static char tmpdir[64];

static int setup_dir(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-initramfs.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	(void)state;
	return remove_tree(tmpdir);
}

static int have(const char *prog)
{
	char *p = NULL;
	int ok = initramfs_find_program(&p, prog) == 0;

	free(p);
	err_clear();
	return ok;
}

/* Runs argv with stdin from path; the caller releases res. Asserts it ran. */
static void run_in(struct run_result *res, const char *const *argv, const char *stdin_path)
{
	struct run_opts o = RUN_OPTS_INIT;

	o.argv = argv;
	o.stdin_path = stdin_path;
	o.timeout_ms = 20000;
	o.max_output = 64 << 20; /* a whole decompressed archive */
	assert_int_equal(run_cmd(res, &o), 0);
	assert_false(res->out_truncated);
}

/* A small archive of every entry kind, in a scrambled order. */
static struct initramfs *sample_fs(const char *host_file, int reversed)
{
	struct initramfs *fs = initramfs_new();

	if (!reversed) {
		assert_int_equal(initramfs_add_data(fs, "/etc/hello", 0644, "hello\n", 6), 0);
		assert_int_equal(initramfs_add_dir(fs, "/tmp", 01777), 0);
		assert_int_equal(initramfs_add_symlink(fs, "/bin/sh", "busybox"), 0);
		assert_int_equal(initramfs_add_chardev(fs, "/dev/console", 0600, 5, 1), 0);
		assert_int_equal(initramfs_add_host_file(fs, "/usr/lib/blob", 0, host_file), 0);
		assert_int_equal(initramfs_add_data(fs, "/empty", 0600, "", 0), 0);
	} else {
		assert_int_equal(initramfs_add_data(fs, "/empty", 0600, "", 0), 0);
		assert_int_equal(initramfs_add_host_file(fs, "/usr/lib/blob", 0, host_file), 0);
		assert_int_equal(initramfs_add_chardev(fs, "/dev/console", 0600, 5, 1), 0);
		assert_int_equal(initramfs_add_symlink(fs, "/bin/sh", "busybox"), 0);
		assert_int_equal(initramfs_add_dir(fs, "/tmp", 01777), 0);
		assert_int_equal(initramfs_add_data(fs, "/etc/hello", 0644, "hello\n", 6), 0);
	}
	return fs;
}

static char *write_blob(size_t n)
{
	char *path = xasprintf("%s/blob", tmpdir);
	char *data = xmalloc(n);

	/* Odd sizes and every byte value: padding and binary data both get exercised. */
	for (size_t i = 0; i < n; i++)
		data[i] = (char)(i * 7 + 3);
	assert_int_equal(file_write_atomic(path, data, n), 0);
	free(data);
	return path;
}

static void test_cpio_lists(void **state)
{
	struct sbuf sb = SBUF_INIT;
	struct run_result res;
	struct initramfs *fs;
	char *blob = write_blob(1001), *arch = xasprintf("%s/a.cpio", tmpdir);
	const char *list[] = { "cpio", "-t", "--quiet", NULL };
	const char *listv[] = { "cpio", "-tv", "--quiet", NULL };
	const char *cat[] = { "cpio", "-i", "--quiet", "--to-stdout", "etc/hello", NULL };
	const char *catblob[] = { "cpio", "-i", "--quiet", "--to-stdout", "usr/lib/blob", NULL };
	char *want;
	size_t blen;

	(void)state;
	if (!have("cpio"))
		skip();
	fs = sample_fs(blob, 0);
	assert_int_equal(initramfs_write(&sb, fs), 0);
	/* newc magic first; whole 512-byte blocks, like cpio(1) writes. */
	assert_memory_equal(sb.buf, "070701", 6);
	assert_int_equal(sb.len % 512, 0);
	assert_non_null(memmem(sb.buf, sb.len, "TRAILER!!!", 11));
	assert_int_equal(file_write_atomic(arch, sb.buf, sb.len), 0);

	run_in(&res, list, arch);
	assert_true(run_ok(&res));
	/* Sorted, parents added, no leading slash. */
	assert_string_equal(res.out,
			    "bin\nbin/sh\ndev\ndev/console\nempty\netc\netc/hello\ntmp\n"
			    "usr\nusr/lib\nusr/lib/blob\n");
	assert_string_equal(res.err, "");
	run_result_release(&res);

	run_in(&res, listv, arch);
	assert_true(run_ok(&res));
	assert_contains(res.out, "lrwxrwxrwx");
	assert_contains(res.out, "bin/sh -> busybox");
	assert_contains(res.out, "crw-------");
	assert_contains(res.out, "5,");
	assert_contains(res.out, "drwxrwxrwt"); /* /tmp's sticky bit */
	assert_contains(res.out, "root");
	/* mtime 0: the epoch, whatever cpio's date format. */
	assert_contains(res.out, "1970");
	run_result_release(&res);

	run_in(&res, cat, arch);
	assert_true(run_ok(&res));
	assert_string_equal(res.out, "hello\n");
	run_result_release(&res);

	run_in(&res, catblob, arch);
	assert_true(run_ok(&res));
	assert_int_equal(file_read(&want, &blen, blob, 1 << 20), 0);
	assert_int_equal(res.out_len, 1001);
	assert_memory_equal(res.out, want, 1001);
	free(want);
	run_result_release(&res);

	sbuf_release(&sb);
	initramfs_free(fs);
	free(arch);
	free(blob);
}

static void test_deterministic(void **state)
{
	struct sbuf a = SBUF_INIT, b = SBUF_INIT;
	struct initramfs *fa, *fb;
	char *blob = write_blob(77);

	(void)state;
	fa = sample_fs(blob, 0);
	fb = sample_fs(blob, 1);
	assert_int_equal(initramfs_write(&a, fa), 0);
	assert_int_equal(initramfs_write(&b, fb), 0);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.buf, b.buf, a.len);
	/* Writing again gives the same bytes too. */
	b.len = 0;
	assert_int_equal(initramfs_write(&b, fa), 0);
	assert_memory_equal(a.buf, b.buf, a.len);
	sbuf_release(&a);
	sbuf_release(&b);
	initramfs_free(fa);
	initramfs_free(fb);
	free(blob);
}

/* The first header's fields, read back as hex: they must be what newc says. */
static void test_header_fields(void **state)
{
	struct sbuf sb = SBUF_INIT;
	struct initramfs *fs = initramfs_new();
	char field[9];

	(void)state;
	assert_int_equal(initramfs_add_data(fs, "/init", 0755, "#!/bin/sh\n", 10), 0);
	assert_int_equal(initramfs_write(&sb, fs), 0);
	/* magic, ino, mode, uid, gid, nlink, mtime, filesize, ..., namesize, check */
	memcpy(field, sb.buf + 6 + 8, 8);
	field[8] = '\0';
	assert_string_equal(field, "000081ED"); /* S_IFREG | 0755 */
	memcpy(field, sb.buf + 6 + 6 * 8, 8);
	assert_string_equal(field, "0000000A"); /* 10 bytes */
	memcpy(field, sb.buf + 6 + 11 * 8, 8);
	assert_string_equal(field, "00000005"); /* "init" + NUL */
	assert_memory_equal(sb.buf + 110, "init\0", 5);
	/* 110 + 5 = 115: padded to 116, then the data. */
	assert_memory_equal(sb.buf + 116, "#!/bin/sh\n", 10);
	assert_memory_equal(sb.buf + 128, "070701", 6); /* the trailer, 4-aligned */
	sbuf_release(&sb);
	initramfs_free(fs);
}

static void test_bad_paths(void **state)
{
	struct initramfs *fs = initramfs_new();
	static const char *const bad[] = {
		"etc/x", "/", "", "/a//b", "/a/./b", "/a/../b", "/..", "/a/", "/.",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(initramfs_add_data(fs, bad[i], 0644, "x", 1), ERR_INVALID);
	assert_int_equal(initramfs_add_dir(fs, NULL, 0755), ERR_INVALID);
	assert_int_equal(initramfs_add_symlink(fs, "/l", ""), ERR_INVALID);
	assert_int_equal(initramfs_add_host_file(fs, "/x", 0, "/nonexistent/file"), ERR_NOTFOUND);
	assert_int_equal(initramfs_add_host_file(fs, "/x", 0, "/tmp"), ERR_NOTFOUND);
	/* Names that merely contain dots are fine. */
	assert_int_equal(initramfs_add_data(fs, "/lib/ld-linux-x86-64.so.2", 0755, "x", 1), 0);
	assert_int_equal(initramfs_add_data(fs, "/..hidden", 0644, "x", 1), 0);
	initramfs_free(fs);
}

static void test_clashes(void **state)
{
	struct sbuf sb = SBUF_INIT;
	struct initramfs *fs = initramfs_new();
	char *blob = write_blob(10);

	(void)state;
	assert_int_equal(initramfs_add_dir(fs, "/bin", 0755), 0);
	assert_int_equal(initramfs_add_dir(fs, "/bin", 0755), 0);
	assert_int_equal(initramfs_add_host_file(fs, "/lib/x", 0644, blob), 0);
	assert_int_equal(initramfs_add_host_file(fs, "/lib/x", 0644, blob), 0);
	assert_int_equal(initramfs_add_data(fs, "/lib/x", 0644, "y", 1), ERR_EXISTS);
	assert_contains(err_msg(), "/lib/x");
	assert_int_equal(initramfs_add_symlink(fs, "/bin", "x"), ERR_EXISTS);
	/* A file cannot hold children. */
	assert_int_equal(initramfs_add_data(fs, "/lib/x/y", 0644, "y", 1), ERR_EXISTS);
	assert_int_equal(initramfs_write(&sb, fs), 0);
	sbuf_release(&sb);
	initramfs_free(fs);
	free(blob);
}

static void test_parse_ldd(void **state)
{
	static const char iperf3[] =
		"\tlinux-vdso.so.1 (0x00007fd55295c000)\n"
		"\tlibiperf.so.0 => /lib/x86_64-linux-gnu/libiperf.so.0 (0x00007fd552912000)\n"
		"\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007fd552730000)\n"
		"\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007fd552120000)\n"
		"\t/lib64/ld-linux-x86-64.so.2 (0x00007fd55295e000)\n"
		"\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007fd552120000)\r\n";
	char **v = NULL;
	size_t n = 99;

	(void)state;
	assert_int_equal(initramfs_parse_ldd(&v, &n, iperf3), 0);
	assert_int_equal(n, 4);
	assert_string_equal(v[0], "/lib/x86_64-linux-gnu/libiperf.so.0");
	assert_string_equal(v[1], "/lib/x86_64-linux-gnu/libc.so.6");
	assert_string_equal(v[2], "/lib/x86_64-linux-gnu/libm.so.6");
	assert_string_equal(v[3], "/lib64/ld-linux-x86-64.so.2");
	assert_null(v[4]);
	initramfs_strv_free(v);

	assert_int_equal(initramfs_parse_ldd(&v, &n, "\tstatically linked\n"), 0);
	assert_int_equal(n, 0);
	assert_null(v[0]);
	initramfs_strv_free(v);
	assert_int_equal(initramfs_parse_ldd(&v, &n, "\tnot a dynamic executable\n"), 0);
	assert_int_equal(n, 0);
	initramfs_strv_free(v);
	assert_int_equal(initramfs_parse_ldd(&v, NULL, ""), 0);
	initramfs_strv_free(v);
	/* No trailing newline, spaces instead of tabs, old "=>  (0x...)" vDSO form. */
	assert_int_equal(initramfs_parse_ldd(&v, &n,
		"  linux-gate.so.1 =>  (0x0)\n  libz.so.1 => /usr/lib/libz.so.1 (0x1)"), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0], "/usr/lib/libz.so.1");
	initramfs_strv_free(v);

	v = (char **)1;
	assert_int_equal(initramfs_parse_ldd(&v, &n,
		"\tlibc.so.6 => /lib/libc.so.6 (0x1)\n\tlibbpf.so.1 => not found\n"), ERR_NOTFOUND);
	assert_null(v);
	assert_contains(err_msg(), "libbpf.so.1");
}

static void test_missing_program(void **state)
{
	char *p = (char *)1;

	(void)state;
	assert_int_equal(initramfs_find_program(&p, "/nonexistent/iperf3"), ERR_NOTFOUND);
	assert_null(p);
	assert_string_equal(err_msg(), "iperf3 not found on the agent: install iperf3");
	assert_int_equal(initramfs_find_program(&p, "/nonexistent/tc"), ERR_NOTFOUND);
	assert_string_equal(err_msg(), "tc not found on the agent: install iproute2");
	assert_int_equal(initramfs_find_program(&p, "no-such-tool-xyz"), ERR_NOTFOUND);
	assert_string_equal(err_msg(), "no-such-tool-xyz not found on the agent: install no-such-tool-xyz");
	assert_int_equal(initramfs_find_program(&p, ""), ERR_INVALID);
	{
		struct initramfs *fs = initramfs_new();

		assert_int_equal(initramfs_add_busybox(fs, "/nonexistent/busybox"), ERR_NOTFOUND);
		assert_string_equal(err_msg(), "busybox not found on the agent: install busybox-static");
		assert_int_equal(initramfs_add_program(NULL, fs, "/nonexistent/iperf3"), ERR_NOTFOUND);
		assert_string_equal(err_msg(), "iperf3 not found on the agent: install iperf3");
		initramfs_free(fs);
	}
	/* sbin directories are searched even when PATH lacks them. */
	if (access("/usr/sbin/tc", X_OK) == 0 || access("/sbin/tc", X_OK) == 0) {
		char *old = getenv("PATH") ? xstrdup(getenv("PATH")) : NULL;

		setenv("PATH", "/usr/bin:/bin", 1);
		assert_int_equal(initramfs_find_program(&p, "tc"), 0);
		assert_contains(p, "sbin/tc");
		free(p);
		if (old)
			setenv("PATH", old, 1);
		free(old);
	}
}

/* A real dynamic program: /bin/sh with the libraries ldd names, loader included. */
static void test_add_program(void **state)
{
	struct sbuf sb = SBUF_INIT;
	struct initramfs *fs;
	struct run_result res;
	char *guest = NULL, *arch = xasprintf("%s/p.cpio", tmpdir);
	const char *list[] = { "cpio", "-t", "--quiet", NULL };

	(void)state;
	if (!have("cpio") || !have("ldd"))
		skip();
	fs = initramfs_new();
	assert_int_equal(initramfs_add_program(&guest, fs, "/bin/sh"), 0);
	assert_string_equal(guest, "/bin/sh");
	/* Twice is fine: the same host files at the same paths. */
	assert_int_equal(initramfs_add_program(NULL, fs, "/bin/sh"), 0);
	assert_int_equal(initramfs_write(&sb, fs), 0);
	assert_int_equal(file_write_atomic(arch, sb.buf, sb.len), 0);
	run_in(&res, list, arch);
	assert_true(run_ok(&res));
	assert_contains(res.out, "bin/sh\n");
	assert_contains(res.out, "libc.so.6\n");
	assert_contains(res.out, "ld-linux");
	run_result_release(&res);
	sbuf_release(&sb);
	initramfs_free(fs);
	free(guest);
	free(arch);
}

/* The whole root with busybox: applet links, /init, /dev/console, gzip'd. */
static void test_build(void **state)
{
	struct initramfs_spec spec = INITRAMFS_SPEC_INIT;
	struct run_result res;
	char *out = xasprintf("%s/root.cpio.gz", tmpdir), *cpio = xasprintf("%s/root.cpio", tmpdir);
	char *data = NULL;
	size_t len;
	const char *gunzip[] = { "gzip", "-dc", out, NULL };
	const char *list[] = { "cpio", "-tv", "--quiet", NULL };

	(void)state;
	if (!have("cpio") || !have("busybox") || !have("gzip"))
		skip();
	spec.init = "#!/bin/sh\necho hi\n";
	spec.compress = 1;
	assert_int_equal(initramfs_build(out, &spec), 0);
	assert_int_equal(file_read(&data, &len, out, 64 << 20), 0);
	assert_true(len > 2 && (unsigned char)data[0] == 0x1f && (unsigned char)data[1] == 0x8b);
	free(data);
	run_in(&res, gunzip, NULL);
	if (!run_ok(&res)) {
		char how[64];

		print_error("gzip: %s: %s\n", run_describe(&res, how, sizeof(how)), res.err);
		fail();
	}
	assert_int_equal(file_write_atomic(cpio, res.out, res.out_len), 0);
	run_result_release(&res);
	run_in(&res, list, cpio);
	assert_true(run_ok(&res));
	assert_contains(res.out, " init\n");
	assert_contains(res.out, "dev/console");
	assert_contains(res.out, "bin/busybox\n");
	assert_contains(res.out, "bin/sh -> /bin/busybox");
	assert_contains(res.out, "reboot -> /bin/busybox");
	run_result_release(&res);

	/* The same inputs, the same bytes: gzip -n leaves no name or time. */
	{
		char *out2 = xasprintf("%s/root2.cpio.gz", tmpdir), *d1 = NULL, *d2 = NULL;
		size_t l1, l2;

		assert_int_equal(initramfs_build(out2, &spec), 0);
		assert_int_equal(file_read(&d1, &l1, out, 64 << 20), 0);
		assert_int_equal(file_read(&d2, &l2, out2, 64 << 20), 0);
		assert_int_equal(l1, l2);
		assert_memory_equal(d1, d2, l1);
		free(d1);
		free(d2);
		free(out2);
	}
	spec.init = NULL;
	assert_int_equal(initramfs_build(out, &spec), ERR_INVALID);
	free(out);
	free(cpio);
}

/* spec.files: each data file at its host path in the guest; a missing one is named. */
static void test_build_files(void **state)
{
	struct initramfs_spec spec = INITRAMFS_SPEC_INIT;
	struct run_result res;
	char *out = xasprintf("%s/files.cpio", tmpdir), *blob = write_blob(1001);
	char *missing = xasprintf("%s/no-such.o", tmpdir);
	const char *files[] = { blob, NULL };
	const char *list[] = { "cpio", "-t", "--quiet", NULL };

	(void)state;
	if (!have("cpio") || !have("busybox"))
		skip();
	spec.init = "#!/bin/sh\necho hi\n";
	spec.files = files;
	assert_int_equal(initramfs_build(out, &spec), 0);
	run_in(&res, list, out);
	assert_true(run_ok(&res));
	/* cpio -t lists paths without their leading '/'. */
	assert_contains(res.out, blob + 1);
	run_result_release(&res);
	files[0] = missing;
	assert_int_equal(initramfs_build(out, &spec), ERR_NOTFOUND);
	assert_contains(err_msg(), missing);
	free(out);
	free(blob);
	free(missing);
}

/* A made-up /lib/modules/RELEASE: modules.dep, modules.builtin and the files. */
static void fake_moddir(char *dir, size_t len)
{
	static const char *const files[] = {
		"kernel/drivers/net/virtio_net.ko", "kernel/drivers/net/net_failover.ko",
		"kernel/net/core/failover.ko", "kernel/drivers/net/veth.ko", "kernel/fs/zz.ko.xz",
	};
	static const char dep[] =
		"kernel/drivers/net/veth.ko:\n"
		"kernel/drivers/net/virtio_net.ko: kernel/drivers/net/net_failover.ko kernel/net/core/failover.ko\n"
		"kernel/drivers/net/net_failover.ko: kernel/net/core/failover.ko\n"
		"kernel/net/core/failover.ko:\n"
		"kernel/fs/zz.ko.xz:\n";
	char p[512];

	snprintf(dir, len, "%s/lib/modules/6.1.0-test", tmpdir);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		*strrchr(p, '/') = '\0';
		assert_int_equal(mkdir_p(p, 0755), 0);
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		assert_int_equal(file_write_atomic(p, "ko", 2), 0);
	}
	snprintf(p, sizeof(p), "%s/modules.dep", dir);
	assert_int_equal(file_write_atomic(p, dep, strlen(dep)), 0);
	snprintf(p, sizeof(p), "%s/modules.builtin", dir);
	assert_int_equal(file_write_atomic(p, "kernel/drivers/virtio/virtio-pci.ko\n", 36), 0);
}

static void test_modules(void **state)
{
	char dir[256], want[2048];
	struct initramfs *fs = initramfs_new();
	struct sbuf load = SBUF_INIT;
	const char *const names[] = { "virtio-net", "virtio_pci", "failover", "veth", NULL };
	const char *const missing[] = { "e1000", NULL };
	const char *const xz[] = { "zz", NULL };

	(void)state;
	fake_moddir(dir, sizeof(dir));
	assert_int_equal(initramfs_add_modules(fs, &load, dir, names), 0);
	/* what virtio_net needs first, the last needed first; each once; the built-in nothing */
	snprintf(want, sizeof(want),
		 "%s/kernel/net/core/failover.ko\n%s/kernel/drivers/net/net_failover.ko\n"
		 "%s/kernel/drivers/net/virtio_net.ko\n%s/kernel/drivers/net/veth.ko\n",
		 dir, dir, dir, dir);
	assert_string_equal(load.buf, want);
	assert_int_equal(initramfs_add_modules(fs, &load, dir, missing), ERR_NOTFOUND);
	assert_contains(err_msg(), "e1000");
	assert_int_equal(initramfs_add_modules(fs, &load, dir, xz), ERR_INVALID);
	assert_contains(err_msg(), "compressed");
	assert_int_equal(initramfs_add_modules(fs, &load, "/nonexistent/modules", names), ERR_NOTFOUND);
	assert_contains(err_msg(), "modules.dep");
	sbuf_release(&load);
	initramfs_free(fs);
}

static void test_kernel_release(void **state)
{
	unsigned char img[0x400] = { 0 };
	char path[256], rel[64];

	(void)state;
	snprintf(path, sizeof(path), "%s/bzImage", tmpdir);
	memcpy(img + 0x202, "HdrS", 4);
	img[0x20e] = 0x00;   /* the string at 0x100 + 0x200 */
	img[0x20f] = 0x01;
	memcpy(img + 0x300, "6.1.0-test (root@lab) #1 SMP", 28);
	assert_int_equal(file_write_atomic(path, img, sizeof(img)), 0);
	assert_int_equal(initramfs_kernel_release(rel, sizeof(rel), path), 0);
	assert_string_equal(rel, "6.1.0-test");
	memset(img + 0x202, 0, 4);
	assert_int_equal(file_write_atomic(path, img, sizeof(img)), 0);
	assert_int_equal(initramfs_kernel_release(rel, sizeof(rel), path), ERR_INVALID);
	assert_contains(err_msg(), "not a bzImage");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpio_lists),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_header_fields),
		cmocka_unit_test(test_bad_paths),
		cmocka_unit_test(test_clashes),
		cmocka_unit_test(test_parse_ldd),
		cmocka_unit_test(test_missing_program),
		cmocka_unit_test(test_add_program),
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_build_files),
		cmocka_unit_test(test_modules),
		cmocka_unit_test(test_kernel_release),
	};

	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
