/*
 * Tests for kbuild.c against a stand-in kernel tree (fakekernel.h): the
 * fake make is first in PATH, so kbuild runs it as it would run Kbuild.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "fakekernel.h"
#include "kbuild.h"
#include "util.h"

#define TREE1 "1111111111111111111111111111111111111111"
#define TREE2 "2222222222222222222222222222222222222222"
#define TREE3 "3333333333333333333333333333333333333333"

struct fx {
	char *dir, *src, *out, *cache, *log, *old_path;
	json_t *kernel;
	int locks, unlocks;
	long last_files, progress_calls;
	long cancel_at;  /* progress() sets cancel once this many files are compiled; 0: never */
	int cancel;
};

static void write_file(const char *path, const char *text, int exec)
{
	assert_int_equal(file_write_atomic(path, text, strlen(text)), 0);
	if (exec)
		assert_int_equal(chmod(path, 0755), 0);
}

static int setup(void **state)
{
	struct fx *fx = xcalloc(1, sizeof(*fx));
	char tmpl[] = "/tmp/test_kbuild.XXXXXX";
	char *p, *bin;

	if (!mkdtemp(tmpl))
		return -1;
	fx->dir = xstrdup(tmpl);
	fx->src = xasprintf("%s/linux", fx->dir);
	fx->out = xasprintf("%s/kbuild/linux", fx->dir);
	fx->cache = xasprintf("%s/kcache", fx->dir);
	fx->log = xasprintf("%s/log", fx->dir);
	bin = xasprintf("%s/bin", fx->dir);
	p = xasprintf("%s/scripts/kconfig", fx->src);
	assert_int_equal(mkdir_p(p, 0755), 0);
	assert_int_equal(mkdir_p(bin, 0755), 0);
	assert_int_equal(mkdir_p(fx->cache, 0755), 0);
	free(p);
	p = xasprintf("%s/scripts/kconfig/merge_config.sh", fx->src);
	write_file(p, fake_merge, 1);
	free(p);
	p = xasprintf("%s/make", bin);
	write_file(p, fake_make, 1);
	free(p);
	p = xasprintf("%s/VERSION", fx->src);
	write_file(p, "v1\n", 0);
	free(p);
	fx->old_path = xstrdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	p = xasprintf("%s:%s", bin, fx->old_path);
	setenv("PATH", p, 1);
	free(p);
	free(bin);
	setenv("KC_LOG", fx->log, 1);
	unsetenv("KB_FILES");
	fx->kernel = json_pack("{s:s, s:s, s:[{s:s, s:s}, {s:s, s:s}], s:[]}", "base", "tinyconfig",
			       "target", "bzImage", "fragments", "name", "qemu-guest", "text", "CONFIG_TTY=y\n",
			       "name", "udp", "text", "CONFIG_NET=y\nCONFIG_INET=y\n", "make_args");
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	setenv("PATH", fx->old_path, 1);
	remove_tree(fx->dir);
	json_decref(fx->kernel);
	free(fx->dir);
	free(fx->src);
	free(fx->out);
	free(fx->cache);
	free(fx->log);
	free(fx->old_path);
	free(fx);
	return 0;
}

static void serialize(void *arg, int on)
{
	struct fx *fx = arg;

	if (on)
		fx->locks++;
	else
		fx->unlocks++;
}

static void progress(void *arg, long files)
{
	struct fx *fx = arg;

	assert_true(files > fx->last_files);
	fx->last_files = files;
	fx->progress_calls++;
	if (fx->cancel_at && files >= fx->cancel_at)
		__atomic_store_n(&fx->cancel, 1, __ATOMIC_RELEASE);
}

static const char *const tools[] = { "make", "sh", NULL };

static void opts(struct fx *fx, struct kbuild *k, const char *tree)
{
	memset(k, 0, sizeof(*k));
	fx->last_files = 0;
	k->kernel = fx->kernel;
	k->kernel_image = "arch/x86/boot/bzImage";
	k->srcdir = fx->src;
	k->tree_id = tree;
	k->outdir = fx->out;
	k->cachedir = fx->cache;
	k->jobs = 2;
	k->timeout_ms = 20000;
	k->tools = tools;
	k->serialize = serialize;
	k->progress = progress;
	k->arg = fx;
}

static int calls(struct fx *fx, const char *what)
{
	char *text = NULL;
	int n = 0;

	if (file_read(&text, NULL, fx->log, 1 << 20) < 0)
		return 0;
	for (const char *p = text; (p = strstr(p, what)); p++)
		n++;
	free(text);
	return n;
}

static char *image_text(const struct kbuild_result *r)
{
	char *path = xasprintf("%s/arch/x86/boot/bzImage", r->image_dir), *text = NULL;

	assert_int_equal(file_read(&text, NULL, path, 1 << 20), 0);
	free(path);
	return text;
}

static void test_build_then_cache(void **state)
{
	struct fx *fx = *state;
	struct kbuild k;
	struct kbuild_result r, r2;
	char *text, *key;

	setenv("KB_FILES", "700", 1);
	opts(fx, &k, TREE1);
	if (kbuild_run(&r, &k))
		fail_msg("kbuild_run: %s: %s", r.status, r.error);
	assert_string_equal(r.status, "ok");
	assert_int_equal(r.cached, 0);
	assert_int_equal(r.files, 700);
	assert_int_equal(fx->last_files, 700);
	assert_true(fx->progress_calls >= 1);
	assert_int_equal(fx->locks, 1);
	assert_int_equal(fx->unlocks, 1);
	/* The key names the tree and the config. */
	key = xasprintf("%s-%s-", TREE1, r.config_hash);
	assert_memory_equal(r.key, key, strlen(key));
	free(key);
	text = image_text(&r);
	assert_string_equal(text, "v1\n");
	free(text);
	/* Configured with -j and O=, built with the target last; the log says so. */
	assert_int_equal(calls(fx, " tinyconfig\n"), 1);
	assert_int_equal(calls(fx, " olddefconfig\n"), 1);
	assert_int_equal(calls(fx, " bzImage\n"), 1);
	assert_int_equal(calls(fx, "-j2 "), 1);
	assert_non_null(strstr(r.log, "# $ make -j2 "));
	assert_non_null(strstr(r.log, "700 files compiled"));
	assert_null(r.tail);

	/* The same tree again: from the cache, without make or the lock. */
	write_file(fx->log, "", 0);
	fx->progress_calls = 0;
	assert_int_equal(kbuild_run(&r2, &k), 0);
	assert_int_equal(r2.cached, 1);
	assert_string_equal(r2.key, r.key);
	assert_string_equal(r2.image_dir, r.image_dir);
	assert_int_equal(calls(fx, "make"), 0);
	assert_int_equal(calls(fx, "O="), 0);
	assert_int_equal(fx->locks, 1);
	kbuild_result_release(&r2);

	/* Another tree builds; its image is its own. */
	{
		char *v = xasprintf("%s/VERSION", fx->src);

		write_file(v, "v2\n", 0);
		free(v);
	}
	opts(fx, &k, TREE2);
	assert_int_equal(kbuild_run(&r2, &k), 0);
	assert_int_equal(r2.cached, 0);
	assert_string_not_equal(r2.key, r.key);
	text = image_text(&r2);
	assert_string_equal(text, "v2\n");
	free(text);
	text = image_text(&r);
	assert_string_equal(text, "v1\n");
	free(text);
	kbuild_result_release(&r2);

	/* Another fragment set is another key for the same tree. */
	json_array_append_new(json_object_get(fx->kernel, "fragments"),
			      json_pack("{s:s, s:s}", "name", "xdp", "text", "CONFIG_BPF=y\n"));
	opts(fx, &k, TREE1);
	assert_int_equal(kbuild_run(&r2, &k), 0);
	assert_int_equal(r2.cached, 0);
	assert_string_not_equal(r2.config_hash, r.config_hash);
	kbuild_result_release(&r2);
	kbuild_result_release(&r);
}

/*
 * A cancel while make runs (the coordinator's, through the agent's
 * flag) stops make's process group at once, not at its end: the build
 * fails as cancelled, not as the commit's failure, and nothing is cached.
 * (Before, an agent built a cancelled job's kernel to the end, minutes,
 * for a result the coordinator then refused.)
 */
static void test_cancel_stops_make(void **state)
{
	struct fx *fx = *state;
	struct kbuild k;
	struct kbuild_result r;
	int64_t t0;

	setenv("KB_FILES", "3", 1);
	setenv("KB_SLOW", "60", 1);
	opts(fx, &k, TREE3);
	fx->cancel_at = 2;
	k.cancel = &fx->cancel;
	t0 = now_ms();
	assert_int_not_equal(kbuild_run(&r, &k), 0);
	unsetenv("KB_SLOW");
	print_message("cancelled after %.1f s: %s\n", (double)(now_ms() - t0) / 1000, r.error);
	assert_true(now_ms() - t0 < 10000);  /* its deadline (opts()) is 20 s */
	assert_string_equal(r.status, "failed");
	assert_non_null(strstr(r.error, "the build was cancelled after "));
	assert_int_equal(fx->unlocks, fx->locks);
	kbuild_result_release(&r);
	/* Not cached: the same tree builds again (make asked for bzImage twice in all). */
	fx->cancel_at = 0;
	fx->cancel = 0;
	opts(fx, &k, TREE3);
	assert_int_equal(kbuild_run(&r, &k), 0);
	assert_int_equal(r.cached, 0);
	assert_int_equal(calls(fx, " bzImage\n"), 2);
	kbuild_result_release(&r);
}

static void test_dropped_option_is_skipped(void **state)
{
	struct fx *fx = *state;
	struct kbuild k;
	struct kbuild_result r;

	json_array_append_new(json_object_get(fx->kernel, "fragments"),
			      json_pack("{s:s, s:s}", "name", "typo", "text",
					"CONFIG_NET=y\nCONFIG_NEEDS_MISSING_DEP=y\n"));
	opts(fx, &k, TREE1);
	assert_int_equal(kbuild_run(&r, &k), ERR_FAIL);
	assert_string_equal(r.status, "skipped");
	assert_non_null(strstr(r.error, "CONFIG_NEEDS_MISSING_DEP"));
	assert_non_null(strstr(r.error, "typo.config:2"));
	assert_non_null(r.tail);
	assert_int_equal(calls(fx, " bzImage\n"), 0);
	assert_int_equal(fx->locks, fx->unlocks);
	kbuild_result_release(&r);
}

static void test_broken_tree_is_skipped(void **state)
{
	struct fx *fx = *state;
	struct kbuild k;
	struct kbuild_result r;
	char *p = xasprintf("%s/BROKEN", fx->src);

	write_file(p, "", 0);
	free(p);
	opts(fx, &k, TREE1);
	assert_int_equal(kbuild_run(&r, &k), ERR_FAIL);
	assert_string_equal(r.status, "skipped");
	assert_non_null(strstr(r.error, "kernel build failed: exit 2"));
	assert_non_null(strstr(r.tail, "udp.c:9:1: error: expected ;"));
	assert_null(r.image_dir);
	/* Nothing half-built went into the cache. */
	{
		char *e = xasprintf("%s/%s", fx->cache, r.key);
		struct stat st;

		assert_int_equal(stat(e, &st), -1);
		free(e);
	}
	assert_int_equal(fx->locks, 1);
	assert_int_equal(fx->unlocks, 1);
	kbuild_result_release(&r);
}

static void set_job_config(struct fx *fx, const char *const *opts, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(opts[i]));
	json_object_set_new(fx->kernel, "config", a);
}

/*
 * The job's options ("config" in the kernel object): applied after the
 * fragments, in the build's key, so that two jobs on one range with other
 * options never share a build and two with the same ones do.
 */
static void test_job_config_is_its_own_build(void **state)
{
	struct fx *fx = *state;
	static const char *const off[] = { "CONFIG_NET=n", "CONFIG_HZ=250" };
	static const char *const off2[] = { "CONFIG_HZ=250", "CONFIG_NET=n" };
	static const char *const other[] = { "CONFIG_NET=n", "CONFIG_HZ=1000" };
	static const char *const same_as_fragment[] = { "CONFIG_NET=y" };
	struct kbuild k;
	struct kbuild_result plain, r, r2;
	char *cfg, *text = NULL;

	opts(fx, &k, TREE1);
	assert_int_equal(kbuild_run(&plain, &k), 0);

	set_job_config(fx, off, 2);
	opts(fx, &k, TREE1);
	if (kbuild_run(&r, &k))
		fail_msg("kbuild_run: %s: %s", r.status, r.error);
	assert_int_equal(r.cached, 0);
	assert_string_not_equal(r.key, plain.key);
	assert_string_not_equal(r.config_hash, plain.config_hash);
	/* Applied after the fragments: the fragment's CONFIG_NET=y lost; the log says so. */
	cfg = xasprintf("%s/config", r.image_dir);
	assert_int_equal(file_read(&text, NULL, cfg, 1 << 20), 0);
	assert_non_null(strstr(text, "# CONFIG_NET is not set"));
	assert_null(strstr(text, "CONFIG_NET=y"));
	assert_non_null(strstr(text, "CONFIG_HZ=250"));
	free(text);
	free(cfg);
	assert_non_null(strstr(r.log, "# the job's config: CONFIG_NET=n"));
	assert_non_null(strstr(r.log, "# job: # CONFIG_NET is not set (the job's --config) overrides CONFIG_NET=y ("));
	assert_non_null(strstr(r.log, "/udp.config:1)\n"));

	/* The same options in another order: the same build, from the cache. */
	set_job_config(fx, off2, 2);
	opts(fx, &k, TREE1);
	assert_int_equal(kbuild_run(&r2, &k), 0);
	assert_int_equal(r2.cached, 1);
	assert_string_equal(r2.key, r.key);
	kbuild_result_release(&r2);
	/* Other options: another build. */
	set_job_config(fx, other, 2);
	opts(fx, &k, TREE1);
	assert_int_equal(kbuild_run(&r2, &k), 0);
	assert_int_equal(r2.cached, 0);
	assert_string_not_equal(r2.key, r.key);
	assert_string_not_equal(r2.key, plain.key);
	kbuild_result_release(&r2);
	/* Even an option the fragments already set so: the job's build is its own. */
	set_job_config(fx, same_as_fragment, 1);
	opts(fx, &k, TREE1);
	assert_int_equal(kbuild_run(&r2, &k), 0);
	assert_int_equal(r2.cached, 0);
	assert_string_not_equal(r2.key, plain.key);
	kbuild_result_release(&r2);
	/* None again: the plain build, cached, its key as before the options existed. */
	json_object_del(fx->kernel, "config");
	opts(fx, &k, TREE1);
	assert_int_equal(kbuild_run(&r2, &k), 0);
	assert_int_equal(r2.cached, 1);
	assert_string_equal(r2.key, plain.key);
	kbuild_result_release(&r2);
	kbuild_result_release(&r);
	kbuild_result_release(&plain);
}

/*
 * An option the kernel's Kconfig refuses is the job's: refused (the job
 * fails at once), naming it, nothing built; a definition the coordinator
 * should not have sent is failed.
 */
static void test_job_config_refused_is_failed(void **state)
{
	struct fx *fx = *state;
	static const char *const refused[] = { "CONFIG_NEEDS_MISSING_DEP=y" };
	static const char *const bad[] = { "CONFIG_NET=yes" };
	static const char *const twice[] = { "CONFIG_NET=y", "CONFIG_NET=n" };
	struct kbuild k;
	struct kbuild_result r;

	set_job_config(fx, refused, 1);
	opts(fx, &k, TREE1);
	assert_int_equal(kbuild_run(&r, &k), ERR_FAIL);
	assert_string_equal(r.status, "refused");
	assert_non_null(strstr(r.error, "the job's --config"));
	assert_non_null(strstr(r.error, "CONFIG_NEEDS_MISSING_DEP=y requested (the job's --config) but the "
			       "kernel's olddefconfig dropped it"));
	assert_non_null(r.tail);
	assert_int_equal(calls(fx, " bzImage\n"), 0);
	assert_int_equal(fx->locks, fx->unlocks);
	kbuild_result_release(&r);

	/* A definition the coordinator should not have sent: failed, before any make. */
	set_job_config(fx, bad, 1);
	opts(fx, &k, TREE1);
	assert_int_equal(kbuild_run(&r, &k), ERR_FAIL);
	assert_string_equal(r.status, "failed");
	assert_non_null(strstr(r.error, "CONFIG_NET=yes"));
	kbuild_result_release(&r);
	set_job_config(fx, twice, 2);
	opts(fx, &k, TREE1);
	assert_int_equal(kbuild_run(&r, &k), ERR_FAIL);
	assert_string_equal(r.status, "failed");
	assert_non_null(strstr(r.error, "given twice"));
	kbuild_result_release(&r);
	json_object_set_new(fx->kernel, "config", json_string("CONFIG_NET=y"));
	opts(fx, &k, TREE1);
	assert_int_equal(kbuild_run(&r, &k), ERR_FAIL);
	assert_string_equal(r.status, "failed");
	assert_non_null(strstr(r.error, "'config' must be an array"));
	assert_int_equal(fx->locks, 1);
	kbuild_result_release(&r);
}

static void test_agent_faults_are_failed(void **state)
{
	struct fx *fx = *state;
	static const char *const missing[] = { "make", "no-such-compiler-for-kbuild", NULL };
	struct kbuild k;
	struct kbuild_result r;

	opts(fx, &k, TREE1);
	k.tools = missing;
	assert_int_equal(kbuild_run(&r, &k), ERR_FAIL);
	assert_string_equal(r.status, "failed");
	assert_non_null(strstr(r.error, "'no-such-compiler-for-kbuild' is not installed"));
	kbuild_result_release(&r);

	opts(fx, &k, TREE1);
	json_object_del(fx->kernel, "target");
	assert_int_equal(kbuild_run(&r, &k), ERR_FAIL);
	assert_string_equal(r.status, "failed");
	assert_non_null(strstr(r.error, "target"));
	kbuild_result_release(&r);
	json_object_set_new(fx->kernel, "target", json_string("bzImage"));

	opts(fx, &k, TREE1);
	k.kernel_image = "../../etc/passwd";
	assert_int_equal(kbuild_run(&r, &k), ERR_FAIL);
	assert_string_equal(r.status, "failed");
	kbuild_result_release(&r);

	json_array_append_new(json_object_get(fx->kernel, "fragments"),
			      json_pack("{s:s, s:s}", "name", "../x", "text", "CONFIG_NET=y\n"));
	opts(fx, &k, TREE1);
	assert_int_equal(kbuild_run(&r, &k), ERR_FAIL);
	assert_string_equal(r.status, "failed");
	assert_int_equal(fx->locks, 0);
	kbuild_result_release(&r);
}

/* A tree whose image is 10,000 bytes: VERSION is what the fake make installs. */
static void big_version(struct fx *fx, char c)
{
	char *v = xasprintf("%s/VERSION", fx->src), text[10001];

	memset(text, c, 10000);
	text[10000] = '\0';
	write_file(v, text, 0);
	free(v);
}

static int entry_exists(struct fx *fx, const char *key)
{
	char *e = xasprintf("%s/%s", fx->cache, key);
	struct stat st;
	int ok = stat(e, &st) == 0;

	free(e);
	return ok;
}

static void set_used(struct fx *fx, const char *key, time_t when)
{
	char *e = xasprintf("%s/%s", fx->cache, key);
	struct timespec ts[2] = { { when, 0 }, { when, 0 } };

	assert_int_equal(utimensat(AT_FDCWD, e, ts, 0), 0);
	free(e);
}

/*
 * cache_max bounds the cache: after a build, the entries used longest ago
 * go until it fits; a hit counts as a use, and the entry just built stays
 * whatever its size.
 */
static void test_cache_keeps_within_its_size(void **state)
{
	struct fx *fx = *state;
	struct kbuild k;
	struct kbuild_result a, b, c, hit;

	opts(fx, &k, TREE1);
	k.cache_max = 25000;           /* two 10,000-byte images and their configs */
	k.progress = NULL;
	big_version(fx, 'a');
	assert_int_equal(kbuild_run(&a, &k), 0);
	big_version(fx, 'b');
	k.tree_id = TREE2;
	assert_int_equal(kbuild_run(&b, &k), 0);
	assert_true(entry_exists(fx, a.key) && entry_exists(fx, b.key));
	assert_null(strstr(b.log, "kernel cache: removed"));

	/* A was built first but is used again after B: B is the one to go. */
	set_used(fx, a.key, 1000000000);
	set_used(fx, b.key, 1000000100);
	k.tree_id = TREE1;
	assert_int_equal(kbuild_run(&hit, &k), 0);
	assert_int_equal(hit.cached, 1);
	kbuild_result_release(&hit);
	big_version(fx, 'c');
	k.tree_id = TREE3;
	assert_int_equal(kbuild_run(&c, &k), 0);
	assert_non_null(strstr(c.log, "# kernel cache: removed 1 image used longest ago"));
	assert_true(entry_exists(fx, a.key));
	assert_false(entry_exists(fx, b.key));
	assert_true(entry_exists(fx, c.key));

	/* B again is a build, not a hit; with no limit nothing goes. */
	k.tree_id = TREE2;
	k.cache_max = 0;
	big_version(fx, 'b');
	kbuild_result_release(&b);
	assert_int_equal(kbuild_run(&b, &k), 0);
	assert_int_equal(b.cached, 0);
	assert_true(entry_exists(fx, a.key) && entry_exists(fx, b.key) && entry_exists(fx, c.key));

	/* A limit below one image keeps the image just built, and only it. */
	k.cache_max = 1;
	k.tree_id = TREE1;
	big_version(fx, 'd');
	{
		struct kbuild_result d;

		/* TREE1 is cached: a hit never trims; the next build does. */
		assert_int_equal(kbuild_run(&d, &k), 0);
		assert_int_equal(d.cached, 1);
		kbuild_result_release(&d);
		k.tree_id = "4444444444444444444444444444444444444444";
		assert_int_equal(kbuild_run(&d, &k), 0);
		assert_non_null(strstr(d.log, "removed 3 images"));
		assert_true(entry_exists(fx, d.key));
		assert_false(entry_exists(fx, a.key) || entry_exists(fx, b.key) || entry_exists(fx, c.key));
		kbuild_result_release(&d);
	}
	kbuild_result_release(&a);
	kbuild_result_release(&b);
	kbuild_result_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_build_then_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_stops_make, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dropped_option_is_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_broken_tree_is_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_agent_faults_are_failed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_config_is_its_own_build, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_config_refused_is_failed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_keeps_within_its_size, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
