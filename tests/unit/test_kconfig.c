/*
 * Tests for kconfig.c: fragments and .config files made up here, and
 * kconfig_apply() against a stand-in kernel tree whose make and
 * merge_config.sh are small shell scripts, so no kernel is needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "err.h"
#include "fakekernel.h"
#include "kconfig.h"
#include "kconfig_apply.h"
#include "util.h"

static int parse(struct kconfig *kc, struct kconfig_overrides *ov, const char *text, const char *name)
{
	return kconfig_parse(kc, ov, text, strlen(text), name);
}

static const char *val(const struct kconfig *kc, const char *name)
{
	const struct kconfig_opt *o = kconfig_get(kc, name);

	return o ? o->value : NULL;
}

static void test_parse_values(void **state)
{
	struct kconfig kc = KCONFIG_INIT;
	const char *text =
		"# a comment, then a blank line\n"
		"\n"
		"CONFIG_NET=y\n"
		"CONFIG_DUMMY=m   \n"
		"# CONFIG_MODULES is not set\n"
		"CONFIG_EXPERT=n\r\n"
		"CONFIG_CMDLINE=\"console=ttyS0 \\\"quiet\\\" a\\\\b\"\n"
		"CONFIG_NR_CPUS=64\n"
		"CONFIG_LOG_BUF_SHIFT=-1\n"
		"CONFIG_PHYSICAL_START=0x1000000\n"
		"#CONFIG_NOT_A_SETTING is not set\n"
		"# CONFIG_ALSO_COMMENT is not set, really\n"
		"CONFIG_LAST=y"; /* no newline at the end */

	(void)state;
	assert_int_equal(parse(&kc, NULL, text, "t.config"), 0);
	assert_int_equal(kc.nr, 9);
	assert_string_equal(val(&kc, "CONFIG_NET"), "y");
	assert_string_equal(val(&kc, "CONFIG_DUMMY"), "m");
	assert_string_equal(val(&kc, "CONFIG_MODULES"), "n");
	assert_string_equal(val(&kc, "CONFIG_EXPERT"), "n");
	assert_string_equal(val(&kc, "CONFIG_CMDLINE"), "\"console=ttyS0 \\\"quiet\\\" a\\\\b\"");
	assert_string_equal(val(&kc, "CONFIG_NR_CPUS"), "64");
	assert_string_equal(val(&kc, "CONFIG_LOG_BUF_SHIFT"), "-1");
	assert_string_equal(val(&kc, "CONFIG_PHYSICAL_START"), "0x1000000");
	assert_string_equal(val(&kc, "CONFIG_LAST"), "y");
	assert_null(kconfig_get(&kc, "CONFIG_NOT_A_SETTING"));
	assert_null(kconfig_get(&kc, "CONFIG_ALSO_COMMENT"));
	assert_string_equal(kconfig_get(&kc, "CONFIG_MODULES")->where, "t.config:5");
	assert_string_equal(kconfig_get(&kc, "CONFIG_LAST")->where, "t.config:13");
	/* Kept in the order read. */
	assert_string_equal(kc.opt[0].name, "CONFIG_NET");
	assert_string_equal(kc.opt[8].name, "CONFIG_LAST");
	kconfig_release(&kc);
}

/* Each bad line is rejected with file:line and the line's text. */
static void test_parse_errors(void **state)
{
	static const struct {
		const char *line;
		const char *expect;
	} bad[] = {
		{ "CONFIG_NET=yes", "bad value for CONFIG_NET" },
		{ "CONFIG_NET", "expected CONFIG_NAME=value" },
		{ "CONFIG_NET=", "bad value for CONFIG_NET" },
		{ "CONFIG_=y", "expected CONFIG_NAME=value" },
		{ "  CONFIG_NET=y", "expected CONFIG_NAME=value" },
		{ "NET=y", "expected CONFIG_NAME=value" },
		{ "CONFIG_NET = y", "expected CONFIG_NAME=value" },
		{ "CONFIG_CMDLINE=\"open", "bad value for CONFIG_CMDLINE" },
		{ "CONFIG_CMDLINE=\"a\"b\"", "bad value for CONFIG_CMDLINE" },
		{ "CONFIG_CMDLINE=\"a\\\"", "bad value for CONFIG_CMDLINE" },
		{ "CONFIG_NR_CPUS=12x", "bad value for CONFIG_NR_CPUS" },
		{ "CONFIG_NR_CPUS=0x", "bad value for CONFIG_NR_CPUS" },
		{ "CONFIG_NR_CPUS=-", "bad value for CONFIG_NR_CPUS" },
		{ "CONFIG_NET=y # trailing comment", "bad value for CONFIG_NET" },
		{ "garbage", "got 'garbage'" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct kconfig kc = KCONFIG_INIT;
		char *text = xasprintf("# header\nCONFIG_A=y\n\n%s\nCONFIG_B=y\n", bad[i].line);

		err_clear();
		assert_int_equal(parse(&kc, NULL, text, "frag.config"), ERR_INVALID);
		if (!strstr(err_msg(), "frag.config:4: ") || !strstr(err_msg(), bad[i].expect))
			fail_msg("line '%s': message '%s'", bad[i].line, err_msg());
		/* What came before the bad line is kept; nothing after it. */
		assert_string_equal(val(&kc, "CONFIG_A"), "y");
		assert_null(kconfig_get(&kc, "CONFIG_B"));
		kconfig_release(&kc);
		free(text);
	}
}

static void test_parse_binary_and_long(void **state)
{
	struct kconfig kc = KCONFIG_INIT;
	char text[] = "CONFIG_A=y\nCONFIG_B=\0y\n";
	struct sbuf long_line = SBUF_INIT;
	size_t i;

	(void)state;
	assert_int_equal(kconfig_parse(&kc, NULL, text, sizeof(text) - 1, "bin"), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "bin:2: "));
	kconfig_release(&kc);
	/* Nor behind a backslash in a string (found by fuzz_kconfig: it was kept cut at the NUL). */
	{
		char esc[] = "CONFIG_A=y\nCONFIG_S=\"a\\\0b\"\n";

		assert_int_equal(kconfig_parse(&kc, NULL, esc, sizeof(esc) - 1, "bin"), ERR_INVALID);
		assert_non_null(strstr(err_msg(), "bin:2: bad value for CONFIG_S"));
		kconfig_release(&kc);
	}

	/* A very long bad line is cut short in the message. */
	for (i = 0; i < 5000; i++)
		sbuf_adds(&long_line, "x");
	assert_int_equal(parse(&kc, NULL, long_line.buf, "long"), ERR_INVALID);
	assert_true(strlen(err_msg()) < 200);
	assert_non_null(strstr(err_msg(), "..."));
	kconfig_release(&kc);
	sbuf_release(&long_line);
}

static void test_merge_overrides(void **state)
{
	struct kconfig a = KCONFIG_INIT, b = KCONFIG_INIT, m = KCONFIG_INIT;
	struct kconfig_overrides ov = KCONFIG_OVERRIDES_INIT;
	char buf[512];

	(void)state;
	assert_int_equal(parse(&a, NULL, "CONFIG_NET=y\nCONFIG_BPF_JIT=y\nCONFIG_VETH=y\n", "a.config"), 0);
	assert_int_equal(parse(&b, NULL, "CONFIG_NET=y\n# CONFIG_BPF_JIT is not set\nCONFIG_DUMMY=y\n"
			       "CONFIG_VETH=m\n", "b.config"), 0);
	kconfig_merge(&m, &ov, &a);
	assert_int_equal(ov.nr, 0);
	kconfig_merge(&m, &ov, &b);

	/* Later wins; the same value again is no override. */
	assert_int_equal(m.nr, 4);
	assert_string_equal(val(&m, "CONFIG_NET"), "y");
	assert_string_equal(val(&m, "CONFIG_BPF_JIT"), "n");
	assert_string_equal(val(&m, "CONFIG_VETH"), "m");
	assert_string_equal(val(&m, "CONFIG_DUMMY"), "y");
	assert_int_equal(ov.nr, 2);
	assert_string_equal(ov.v[0].name, "CONFIG_BPF_JIT");
	assert_string_equal(ov.v[0].old_value, "y");
	assert_string_equal(ov.v[0].old_where, "a.config:2");
	assert_string_equal(ov.v[0].new_value, "n");
	assert_string_equal(ov.v[0].new_where, "b.config:2");
	assert_string_equal(kconfig_override_describe(&ov.v[0], buf, sizeof(buf)),
			    "# CONFIG_BPF_JIT is not set (b.config:2) overrides CONFIG_BPF_JIT=y (a.config:2)");
	assert_string_equal(kconfig_override_describe(&ov.v[1], buf, sizeof(buf)),
			    "CONFIG_VETH=m (b.config:4) overrides CONFIG_VETH=y (a.config:3)");
	/* The first place a name was set keeps its order. */
	assert_string_equal(m.opt[1].name, "CONFIG_BPF_JIT");
	assert_string_equal(m.opt[1].where, "b.config:2");
	assert_string_equal(m.opt[3].name, "CONFIG_DUMMY");

	/* Parsing straight into one set is the same merge; a repeat inside a file counts too. */
	kconfig_release(&m);
	kconfig_overrides_release(&ov);
	assert_int_equal(parse(&m, &ov, "CONFIG_NET=y\nCONFIG_NET=m\n", "c.config"), 0);
	assert_int_equal(ov.nr, 1);
	assert_string_equal(ov.v[0].old_where, "c.config:1");
	assert_string_equal(ov.v[0].new_where, "c.config:2");

	kconfig_overrides_release(&ov);
	kconfig_overrides_release(&ov); /* twice is fine */
	kconfig_release(&a);
	kconfig_release(&b);
	kconfig_release(&m);
}

/* Many names: the index grows and every name is still found. */
static void test_many_options(void **state)
{
	struct kconfig kc = KCONFIG_INIT;
	struct sbuf sb = SBUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < 5000; i++)
		sbuf_addf(&sb, "CONFIG_OPT_%zu=%s\n", i, i % 3 ? "y" : "m");
	assert_int_equal(parse(&kc, NULL, sb.buf, "big"), 0);
	assert_int_equal(kc.nr, 5000);
	for (i = 0; i < 5000; i++) {
		char name[32];

		snprintf(name, sizeof(name), "CONFIG_OPT_%zu", i);
		assert_string_equal(val(&kc, name), i % 3 ? "y" : "m");
	}
	assert_null(kconfig_get(&kc, "CONFIG_OPT_5000"));
	kconfig_release(&kc);
	sbuf_release(&sb);
	assert_null(kconfig_get(&kc, "CONFIG_ANY"));
}

/* A .config as olddefconfig writes it, for the requests below. */
static const char final_config[] =
	"#\n"
	"# Automatically generated file; DO NOT EDIT.\n"
	"# Linux/x86 6.1.192 Kernel Configuration\n"
	"#\n"
	"CONFIG_64BIT=y\n"
	"CONFIG_NET=y\n"
	"CONFIG_NET_SCHED=y\n"
	"# CONFIG_NET_CLS_ACT is not set\n"
	"CONFIG_VETH=m\n"
	"CONFIG_CMDLINE=\"console=ttyS0\"\n"
	"CONFIG_NR_CPUS=8\n"
	"CONFIG_PHYSICAL_START=0x1000000\n"
	"CONFIG_BPF=y\n"
	"\n"
	"#\n"
	"# General setup\n"
	"#\n"
	"# CONFIG_MODULES is not set\n";

static void test_verify_ok(void **state)
{
	struct kconfig want = KCONFIG_INIT, got = KCONFIG_INIT;
	char *report = (char *)"untouched";

	(void)state;
	assert_int_equal(parse(&got, NULL, final_config, ".config"), 0);
	assert_int_equal(parse(&want, NULL,
			       "CONFIG_64BIT=y\nCONFIG_NET=y\nCONFIG_VETH=m\n"
			       "CONFIG_CMDLINE=\"console=ttyS0\"\nCONFIG_NR_CPUS=8\n"
			       "CONFIG_PHYSICAL_START=0X1000000\n"
			       "# CONFIG_MODULES is not set\n"   /* off in the .config */
			       "CONFIG_NET_CLS_ACT=n\n"          /* likewise */
			       "# CONFIG_XDP_SOCKETS is not set\n" /* absent: off too */,
			       "want"), 0);
	assert_int_equal(kconfig_verify(&report, &want, &got), 0);
	assert_null(report);
	assert_int_equal(kconfig_verify(NULL, &want, &got), 0);
	kconfig_release(&want);
	kconfig_release(&got);
}

static void test_verify_catches(void **state)
{
	struct kconfig want = KCONFIG_INIT, got = KCONFIG_INIT;
	char *report = NULL;
	const char *m;

	(void)state;
	assert_int_equal(parse(&got, NULL, final_config, ".config"), 0);
	assert_int_equal(parse(&want, NULL,
			       "CONFIG_NET=y\n"
			       "CONFIG_NET_CLS_BPF=y\n"          /* 2: dropped */
			       "CONFIG_VETH=y\n"                 /* 3: became m */
			       "CONFIG_NET_CLS_ACT=y\n"          /* 4: left unset */
			       "CONFIG_CMDLINE=\"console=hvc0\"\n" /* 5: other string */
			       "# CONFIG_BPF is not set\n"       /* 6: selected anyway */
			       "CONFIG_NR_CPUS=8\n",
			       "egress.config"), 0);
	err_clear();
	assert_int_equal(kconfig_verify(&report, &want, &got), ERR_UNPROCESSABLE);
	m = err_msg();
	assert_non_null(strstr(m, "5 of 7 requested options"));
	assert_non_null(strstr(m, "(CONFIG_NET_CLS_BPF, CONFIG_VETH, CONFIG_NET_CLS_ACT, "
			       "CONFIG_CMDLINE, CONFIG_BPF)"));
	assert_null(strstr(m, "CONFIG_NR_CPUS"));
	assert_non_null(report);
	assert_non_null(strstr(report,
		"CONFIG_NET_CLS_BPF=y requested (egress.config:2) but the kernel's olddefconfig "
		"dropped it (its dependencies are not met, or this kernel has no such option)\n"));
	assert_non_null(strstr(report,
		"CONFIG_VETH=y requested (egress.config:3) but the kernel's olddefconfig made it "
		"CONFIG_VETH=m"));
	assert_non_null(strstr(report, "CONFIG_NET_CLS_ACT=y requested (egress.config:4) but the "
			       "kernel's olddefconfig left it unset"));
	assert_non_null(strstr(report, "CONFIG_CMDLINE=\"console=hvc0\" requested (egress.config:5) "
			       "but the final .config has CONFIG_CMDLINE=\"console=ttyS0\"\n"));
	assert_non_null(strstr(report, "# CONFIG_BPF is not set requested (egress.config:6) but the "
			       "final .config has CONFIG_BPF=y (another option selects it)\n"));
	{
		/* One line per option. */
		size_t lines = 0;
		const char *c;

		for (c = report; *c; c++)
			lines += *c == '\n';
		assert_int_equal(lines, 5);
	}
	free(report);
	kconfig_release(&want);
	kconfig_release(&got);
}

/* Twenty failures overflow the message, never the names' list at its head. */
static void test_verify_many_failures(void **state)
{
	struct kconfig want = KCONFIG_INIT, got = KCONFIG_INIT;
	struct sbuf sb = SBUF_INIT;
	char *report = NULL;
	int i;

	(void)state;
	for (i = 0; i < 20; i++)
		sbuf_addf(&sb, "CONFIG_MISSING_%d=y\n", i);
	assert_int_equal(parse(&want, NULL, sb.buf, "w"), 0);
	assert_int_equal(kconfig_verify(&report, &want, &got), ERR_UNPROCESSABLE);
	assert_non_null(strstr(err_msg(), "CONFIG_MISSING_19)"));
	assert_non_null(strstr(report, "CONFIG_MISSING_19=y requested (w:20)"));
	free(report);
	sbuf_release(&sb);
	kconfig_release(&want);
	kconfig_release(&got);
}

static void hash_of(char out[KCONFIG_HASH_HEX + 1], const char *text, const char *base)
{
	struct kconfig kc = KCONFIG_INIT;

	assert_int_equal(parse(&kc, NULL, text, "h"), 0);
	kconfig_hash(out, &kc, base);
	kconfig_release(&kc);
}

static void test_hash(void **state)
{
	char h1[KCONFIG_HASH_HEX + 1], h2[KCONFIG_HASH_HEX + 1];
	struct kconfig a = KCONFIG_INIT, b = KCONFIG_INIT, m1 = KCONFIG_INIT, m2 = KCONFIG_INIT;
	char *text;

	(void)state;
	hash_of(h1, "CONFIG_NET=y\nCONFIG_INET=y\n# CONFIG_IPV6 is not set\n", "tinyconfig");
	assert_int_equal(strlen(h1), KCONFIG_HASH_HEX);
	/* Pinned (checked with a Python FNV-1a): a cache key must not move by accident. */
	assert_string_equal(h1, "0e6af251794679de");

	/* Order, comments, blank lines and "=n" spelling do not matter. */
	hash_of(h2, "# IPv6 off\nCONFIG_IPV6=n\n\nCONFIG_INET=y\nCONFIG_NET=y\n", "tinyconfig");
	assert_string_equal(h1, h2);
	/* The base, a value and an extra option do. */
	hash_of(h2, "CONFIG_NET=y\nCONFIG_INET=y\n# CONFIG_IPV6 is not set\n", "defconfig");
	assert_string_not_equal(h1, h2);
	hash_of(h2, "CONFIG_NET=y\nCONFIG_INET=y\nCONFIG_IPV6=y\n", "tinyconfig");
	assert_string_not_equal(h1, h2);
	hash_of(h2, "CONFIG_NET=y\nCONFIG_INET=y\n# CONFIG_IPV6 is not set\nCONFIG_UNIX=y\n", "tinyconfig");
	assert_string_not_equal(h1, h2);
	/* The base ends where the options start. */
	hash_of(h1, "", "tinyconfig\nCONFIG_X=y");
	hash_of(h2, "CONFIG_X=y\n", "tinyconfig");
	assert_string_not_equal(h1, h2);
	hash_of(h1, "", "tinyconfig");
	hash_of(h2, "", "tinyconfig");
	assert_string_equal(h1, h2);

	/* Disjoint fragments merge to the same set in either order. */
	assert_int_equal(parse(&a, NULL, "CONFIG_NET=y\nCONFIG_DUMMY=y\n", "a"), 0);
	assert_int_equal(parse(&b, NULL, "CONFIG_VETH=y\nCONFIG_BPF_SYSCALL=y\n", "b"), 0);
	kconfig_merge(&m1, NULL, &a);
	kconfig_merge(&m1, NULL, &b);
	kconfig_merge(&m2, NULL, &b);
	kconfig_merge(&m2, NULL, &a);
	kconfig_hash(h1, &m1, "tinyconfig");
	kconfig_hash(h2, &m2, "tinyconfig");
	assert_string_equal(h1, h2);

	/* kconfig_format() reads back to the same set. */
	text = kconfig_format(&m1, "merged\n\nfrom a and b");
	assert_non_null(strstr(text, "# merged\n#\n# from a and b\nCONFIG_NET=y\n"));
	kconfig_release(&m2);
	assert_int_equal(parse(&m2, NULL, text, "fmt"), 0);
	kconfig_hash(h2, &m2, "tinyconfig");
	assert_string_equal(h1, h2);
	free(text);

	kconfig_release(&a);
	kconfig_release(&b);
	kconfig_release(&m1);
	kconfig_release(&m2);
}

/* --- a job's own options ------------------------------------------------- */

static void test_job_check(void **state)
{
	static const char *const ok[] = {
		"CONFIG_MITIGATION_RETPOLINE=n", "CONFIG_X=y", "CONFIG_X=m", "CONFIG_HZ=1000",
		"CONFIG_X=-3", "CONFIG_X=0x1F", "CONFIG_CMDLINE=\"quiet a=b\"", "CONFIG_S=\"a \\\"q\\\" b\"",
		"CONFIG_E=\"\"", "CONFIG_9=y",
	};
	static const char *const bad_name[] = {
		"", "=y", "CONFIG_=y", "CONFIG_x=y", "config_X=y", "X=y", "CONFIG_X", "CONFIG_X y",
		" CONFIG_X=y", "CONFIG_A-B=y", "# CONFIG_X is not set",
	};
	static const char *const bad_value[] = {
		"CONFIG_X=", "CONFIG_X=yes", "CONFIG_X=Y", "CONFIG_X=1 2", "CONFIG_X=y ", "CONFIG_X=\"open",
		"CONFIG_X=\"a\"b\"", "CONFIG_X=0x", "CONFIG_X=0xG", "CONFIG_X=\"a\nb\"", "CONFIG_X=\"a\tb\"",
		"CONFIG_X=12a", "CONFIG_X=--1",
	};
	char *longopt;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		err_clear();
		if (kconfig_job_check(ok[i]))
			fail_msg("'%s' refused: %s", ok[i], err_msg());
	}
	for (size_t i = 0; i < sizeof(bad_name) / sizeof(bad_name[0]); i++) {
		if (kconfig_job_check(bad_name[i]) != ERR_INVALID)
			fail_msg("'%s' accepted", bad_name[i]);
		assert_non_null(strstr(err_msg(), "must be CONFIG_NAME=value"));
	}
	for (size_t i = 0; i < sizeof(bad_value) / sizeof(bad_value[0]); i++) {
		if (kconfig_job_check(bad_value[i]) != ERR_INVALID)
			fail_msg("'%s' accepted", bad_value[i]);
		assert_non_null(strstr(err_msg(), "the value must be y, m, n"));
	}
	longopt = xasprintf("CONFIG_X=\"%0300d\"", 0);
	assert_int_equal(kconfig_job_check(longopt), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "longer than"));
	free(longopt);
}

static void test_job_parse_and_hash(void **state)
{
	const char *a[] = { "CONFIG_MITIGATION_RETPOLINE=n", "CONFIG_HZ=250" };
	const char *b[] = { "CONFIG_HZ=250", "CONFIG_MITIGATION_RETPOLINE=n" };
	const char *c[] = { "CONFIG_MITIGATION_RETPOLINE=y" };
	const char *twice[] = { "CONFIG_HZ=250", "CONFIG_HZ=1000" };
	const char *many[KCONFIG_JOB_MAX + 1];
	struct kconfig ja = KCONFIG_INIT, jb = KCONFIG_INIT, jc = KCONFIG_INIT, none = KCONFIG_INIT;
	struct kconfig frag = KCONFIG_INIT;
	char *na, *nb, *nc, *n0;
	char h0[KCONFIG_HASH_HEX + 1], h1[KCONFIG_HASH_HEX + 1];

	(void)state;
	assert_int_equal(kconfig_job_parse(&ja, a, 2), 0);
	assert_int_equal(ja.nr, 2);
	assert_string_equal(val(&ja, "CONFIG_MITIGATION_RETPOLINE"), "n");
	assert_string_equal(kconfig_get(&ja, "CONFIG_HZ")->where, KCONFIG_JOB_WHERE);
	assert_int_equal(kconfig_job_parse(&jb, b, 2), 0);
	assert_int_equal(kconfig_job_parse(&jc, c, 1), 0);
	assert_int_equal(kconfig_job_parse(&none, twice, 2), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "CONFIG_HZ is given twice"));
	kconfig_release(&none);
	assert_int_equal(kconfig_job_parse(&none, (const char *[]){ "CONFIG_X=maybe" }, 1), ERR_INVALID);
	kconfig_release(&none);
	for (size_t i = 0; i <= KCONFIG_JOB_MAX; i++)
		many[i] = "CONFIG_X=y";
	assert_int_equal(kconfig_job_parse(&none, many, KCONFIG_JOB_MAX + 1), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "at most"));
	kconfig_release(&none);

	/* No options: the base's name as it was, so old cache entries still match. */
	n0 = kconfig_job_base_name("tinyconfig", &none);
	assert_string_equal(n0, "tinyconfig");
	free(n0);
	n0 = kconfig_job_base_name("tinyconfig", NULL);
	assert_string_equal(n0, "tinyconfig");
	/* The same options in any order: one name; others: another. */
	na = kconfig_job_base_name("tinyconfig", &ja);
	nb = kconfig_job_base_name("tinyconfig", &jb);
	nc = kconfig_job_base_name("tinyconfig", &jc);
	assert_string_equal(na, nb);
	assert_string_not_equal(na, nc);
	assert_string_not_equal(na, n0);
	assert_memory_equal(na, "tinyconfig+job:", strlen("tinyconfig+job:"));

	/*
	 * Options the fragments already hold as the job asks still make
	 * another name: a job's build is its own.
	 */
	assert_int_equal(parse(&frag, NULL, "CONFIG_MITIGATION_RETPOLINE=y\n", "f"), 0);
	kconfig_hash(h0, &frag, n0);
	kconfig_merge(&frag, NULL, &jc);
	kconfig_hash(h1, &frag, nc);
	assert_string_not_equal(h0, h1);

	free(na);
	free(nb);
	free(nc);
	free(n0);
	kconfig_release(&frag);
	kconfig_release(&ja);
	kconfig_release(&jb);
	kconfig_release(&jc);
}

/* --- kconfig_apply() against a stand-in tree ----------------------------- */

struct fx {
	char *dir;
	char *src, *out, *make, *frag1, *frag2, *log;
};

static void write_file(const char *path, const char *text, int exec)
{
	assert_int_equal(file_write_atomic(path, text, strlen(text)), 0);
	if (exec)
		assert_int_equal(chmod(path, 0755), 0);
}

static int apply_setup(void **state)
{
	struct fx *fx = xcalloc(1, sizeof(*fx));
	char tmpl[] = "/tmp/test_kconfig.XXXXXX";
	char *p;

	if (!mkdtemp(tmpl))
		return -1;
	fx->dir = xstrdup(tmpl);
	fx->src = xasprintf("%s/linux", fx->dir);
	fx->out = xasprintf("%s/out/x86", fx->dir);
	fx->make = xasprintf("%s/make", fx->dir);
	fx->frag1 = xasprintf("%s/net.config", fx->dir);
	fx->frag2 = xasprintf("%s/xdp.config", fx->dir);
	fx->log = xasprintf("%s/log", fx->dir);
	p = xasprintf("%s/scripts/kconfig", fx->src);
	assert_int_equal(mkdir_p(p, 0755), 0);
	free(p);
	p = xasprintf("%s/scripts/kconfig/merge_config.sh", fx->src);
	write_file(p, fake_merge, 1);
	free(p);
	write_file(fx->make, fake_make, 1);
	*state = fx;
	return 0;
}

static int apply_teardown(void **state)
{
	struct fx *fx = *state;

	remove_tree(fx->dir);
	free(fx->dir);
	free(fx->src);
	free(fx->out);
	free(fx->make);
	free(fx->frag1);
	free(fx->frag2);
	free(fx->log);
	free(fx);
	return 0;
}

static void apply_opts(struct fx *fx, struct kconfig_apply_opts *o, const char **frags,
		       const char **env, char *logenv)
{
	struct kconfig_apply_opts init = KCONFIG_APPLY_OPTS_INIT;

	*o = init;
	o->srcdir = fx->src;
	o->outdir = fx->out;
	o->make = fx->make;
	o->fragments = frags;
	env[0] = logenv;
	env[1] = NULL;
	o->env = env;
	o->timeout_ms = 20000;
}

static void test_apply_ok(void **state)
{
	struct fx *fx = *state;
	struct kconfig_apply_opts o;
	struct kconfig_overrides ov = KCONFIG_OVERRIDES_INIT;
	const char *frags[3] = { fx->frag1, fx->frag2, NULL };
	const char *env[2];
	const char *margs[] = { "ARCH=x86_64", NULL };
	char *logenv = xasprintf("KC_LOG=%s", fx->log);
	char hash[KCONFIG_HASH_HEX + 1], hash2[KCONFIG_HASH_HEX + 1];
	char *text = NULL, *want_log;
	struct kconfig frag = KCONFIG_INIT, want = KCONFIG_INIT;

	write_file(fx->frag1, "CONFIG_NET=y\nCONFIG_INET=y\nCONFIG_BPF_JIT=n\n", 0);
	write_file(fx->frag2, "# xdp\nCONFIG_NET=y\nCONFIG_BPF_JIT=y\n", 0);
	apply_opts(fx, &o, frags, env, logenv);
	o.make_args = margs;
	err_clear();
	if (kconfig_apply(hash, &ov, &o))
		fail_msg("kconfig_apply: %s", err_msg());
	assert_int_equal(ov.nr, 1);
	assert_string_equal(ov.v[0].name, "CONFIG_BPF_JIT");

	/* The steps, in order, from the tree (make) and the output directory (merge). */
	assert_int_equal(file_read(&text, NULL, fx->log, 1 << 20), 0);
	want_log = xasprintf("%s ARCH=x86_64 O=%s tinyconfig\n"
			     "%s merge -m -O %s %s/.config %s/bisectd-fragment.config\n"
			     "%s ARCH=x86_64 O=%s olddefconfig\n",
			     fx->src, fx->out, fx->out, fx->out, fx->out, fx->out, fx->src, fx->out);
	assert_string_equal(text, want_log);
	free(text);
	free(want_log);

	/* The fragment written is the merge, and its hash is what came back. */
	text = xasprintf("%s/bisectd-fragment.config", fx->out);
	assert_int_equal(kconfig_load(&frag, NULL, text), 0);
	free(text);
	assert_int_equal(frag.nr, 3);
	assert_string_equal(val(&frag, "CONFIG_BPF_JIT"), "y");
	kconfig_hash(hash2, &frag, "tinyconfig");
	assert_string_equal(hash, hash2);
	assert_int_equal(parse(&want, NULL, "CONFIG_INET=y\nCONFIG_BPF_JIT=y\nCONFIG_NET=y\n", "w"), 0);
	kconfig_hash(hash2, &want, "tinyconfig");
	assert_string_equal(hash, hash2);

	kconfig_release(&frag);
	kconfig_release(&want);
	kconfig_overrides_release(&ov);
	free(logenv);
}

static void test_apply_dropped(void **state)
{
	struct fx *fx = *state;
	struct kconfig_apply_opts o;
	const char *frags[2] = { fx->frag1, NULL };
	const char *env[2];
	char *logenv = xasprintf("KC_LOG=%s", fx->log);

	write_file(fx->frag1, "CONFIG_NET=y\nCONFIG_NEEDS_MISSING_DEP=y\nCONFIG_ONLY_M=y\n", 0);
	apply_opts(fx, &o, frags, env, logenv);
	err_clear();
	assert_int_equal(kconfig_apply(NULL, NULL, &o), ERR_UNPROCESSABLE);
	assert_non_null(strstr(err_msg(), "(CONFIG_NEEDS_MISSING_DEP, CONFIG_ONLY_M)"));
	assert_non_null(strstr(err_msg(), "CONFIG_NEEDS_MISSING_DEP=y requested"));
	assert_non_null(strstr(err_msg(), "net.config:2) but the kernel's olddefconfig dropped it"));
	free(logenv);
}

/* The job's options after the fragments: they win, are hashed, and verified on their own. */
static void test_apply_job(void **state)
{
	struct fx *fx = *state;
	struct kconfig_apply_opts o;
	struct kconfig_overrides ov = KCONFIG_OVERRIDES_INIT;
	struct kconfig job = KCONFIG_INIT, frag = KCONFIG_INIT, got = KCONFIG_INIT;
	const char *frags[2] = { fx->frag1, NULL };
	const char *opts[] = { "CONFIG_BPF_JIT=n", "CONFIG_HZ=250" };
	const char *env[2];
	char *logenv = xasprintf("KC_LOG=%s", fx->log), *path;
	char hash[KCONFIG_HASH_HEX + 1], hash0[KCONFIG_HASH_HEX + 1], hash2[KCONFIG_HASH_HEX + 1];

	write_file(fx->frag1, "CONFIG_NET=y\nCONFIG_BPF_JIT=y\n", 0);
	apply_opts(fx, &o, frags, env, logenv);
	assert_int_equal(kconfig_apply(hash0, NULL, &o), 0);
	assert_int_equal(kconfig_job_parse(&job, opts, 2), 0);
	o.job = &job;
	err_clear();
	if (kconfig_apply(hash, &ov, &o))
		fail_msg("kconfig_apply: %s", err_msg());
	assert_string_not_equal(hash, hash0);
	assert_int_equal(kconfig_config_hash_job(hash2, "tinyconfig", frags, &job), 0);
	assert_string_equal(hash, hash2);
	/* The job's =n overrode the fragment's =y, and says where from. */
	assert_int_equal(ov.nr, 1);
	assert_string_equal(ov.v[0].name, "CONFIG_BPF_JIT");
	assert_string_equal(ov.v[0].new_where, KCONFIG_JOB_WHERE);
	/* Merged after the fragments: "# CONFIG_BPF_JIT is not set" in the fragment and the .config. */
	path = xasprintf("%s/bisectd-fragment.config", fx->out);
	assert_int_equal(kconfig_load(&frag, NULL, path), 0);
	free(path);
	assert_string_equal(val(&frag, "CONFIG_BPF_JIT"), "n");
	assert_string_equal(val(&frag, "CONFIG_HZ"), "250");
	path = xasprintf("%s/.config", fx->out);
	assert_int_equal(kconfig_load(&got, NULL, path), 0);
	free(path);
	assert_string_equal(val(&got, "CONFIG_BPF_JIT"), "n");
	assert_string_equal(val(&got, "CONFIG_HZ"), "250");
	kconfig_release(&got);
	kconfig_release(&frag);
	kconfig_release(&job);
	kconfig_overrides_release(&ov);

	/* An option the kernel's Kconfig refuses: ERR_CONFLICT naming it and what became of it. */
	{
		const char *refused[] = { "CONFIG_NEEDS_MISSING_DEP=y", "CONFIG_ONLY_M=y", "CONFIG_HZ=250" };

		assert_int_equal(kconfig_job_parse(&job, refused, 3), 0);
		o.job = &job;
		err_clear();
		assert_int_equal(kconfig_apply(NULL, NULL, &o), ERR_CONFLICT);
		assert_non_null(strstr(err_msg(), KCONFIG_JOB_WHERE));
		assert_non_null(strstr(err_msg(), "(CONFIG_NEEDS_MISSING_DEP, CONFIG_ONLY_M)"));
		assert_non_null(strstr(err_msg(), "CONFIG_NEEDS_MISSING_DEP=y requested (the job's --config) "
				       "but the kernel's olddefconfig dropped it"));
		assert_non_null(strstr(err_msg(), "made it CONFIG_ONLY_M=m"));
		assert_null(strstr(err_msg(), "CONFIG_HZ"));
		kconfig_release(&job);
	}
	/* A fragment's dropped option stays the fragment's (ERR_UNPROCESSABLE) beside a job's option. */
	write_file(fx->frag1, "CONFIG_NET=y\nCONFIG_NEEDS_MISSING_DEP=y\n", 0);
	assert_int_equal(kconfig_job_parse(&job, opts, 2), 0);
	o.job = &job;
	err_clear();
	assert_int_equal(kconfig_apply(NULL, NULL, &o), ERR_UNPROCESSABLE);
	assert_non_null(strstr(err_msg(), "net.config:2"));
	kconfig_release(&job);
	/* The job asks =n of a fragment's option that Kconfig then drops: the job's =n is met. */
	{
		const char *off[] = { "CONFIG_NEEDS_MISSING_DEP=n" };

		assert_int_equal(kconfig_job_parse(&job, off, 1), 0);
		err_clear();
		if (kconfig_apply(NULL, NULL, &o))
			fail_msg("kconfig_apply: %s", err_msg());
		kconfig_release(&job);
	}
	free(logenv);
}

/* A base file is copied, not made, and named by its content in the hash. */
static void test_apply_base_file(void **state)
{
	struct fx *fx = *state;
	struct kconfig_apply_opts o;
	const char *frags[2] = { fx->frag1, NULL };
	const char *env[2];
	char *logenv = xasprintf("KC_LOG=%s", fx->log);
	char *base = xasprintf("%s/base.config", fx->dir);
	char *cfg = xasprintf("%s/.config", fx->out);
	char h1[KCONFIG_HASH_HEX + 1], h2[KCONFIG_HASH_HEX + 1], h3[KCONFIG_HASH_HEX + 1];
	struct kconfig got = KCONFIG_INIT;
	char *text = NULL;

	write_file(fx->frag1, "CONFIG_NET=y\n", 0);
	write_file(base, "CONFIG_FROM_BASE=y\nCONFIG_NET=m\n", 0);
	apply_opts(fx, &o, frags, env, logenv);
	o.base = base;
	if (kconfig_apply(h1, NULL, &o))
		fail_msg("kconfig_apply: %s", err_msg());
	assert_int_equal(kconfig_load(&got, NULL, cfg), 0);
	assert_string_equal(val(&got, "CONFIG_FROM_BASE"), "y");
	assert_string_equal(val(&got, "CONFIG_NET"), "y");
	assert_null(kconfig_get(&got, "CONFIG_BASE_TINY"));
	assert_int_equal(file_read(&text, NULL, fx->log, 1 << 20), 0);
	assert_null(strstr(text, "tinyconfig"));
	free(text);

	/* Same content: same hash; other content: another. */
	assert_int_equal(kconfig_apply(h2, NULL, &o), 0);
	assert_string_equal(h1, h2);
	write_file(base, "CONFIG_FROM_BASE=y\nCONFIG_NET=m\nCONFIG_MORE=y\n", 0);
	assert_int_equal(kconfig_apply(h3, NULL, &o), 0);
	assert_string_not_equal(h1, h3);

	kconfig_release(&got);
	free(base);
	free(cfg);
	free(logenv);
}

static void test_apply_failures(void **state)
{
	struct fx *fx = *state;
	struct kconfig_apply_opts o;
	const char *frags[2] = { fx->frag1, NULL };
	const char *env[2];
	char *logenv = xasprintf("KC_LOG=%s", fx->log);
	char *missing = xasprintf("%s/nope.config", fx->dir);

	apply_opts(fx, &o, frags, env, logenv);

	/* make fails: its status and the tail of its output. */
	write_file(fx->frag1, "CONFIG_NET=y\n", 0);
	o.base = "defconfig";
	assert_int_equal(kconfig_apply(NULL, NULL, &o), ERR_FAIL);
	assert_non_null(strstr(err_msg(), "make defconfig: exit 2"));
	assert_non_null(strstr(err_msg(), "no rule to make defconfig"));

	/* A bad fragment stops before any command. */
	o.base = "tinyconfig";
	write_file(fx->frag1, "CONFIG_NET=y\nCONFIG_NET_SCHED=yes\n", 0);
	assert_int_equal(kconfig_apply(NULL, NULL, &o), ERR_INVALID);
	assert_non_null(strstr(err_msg(), "net.config:2: bad value for CONFIG_NET_SCHED"));

	frags[0] = missing;
	assert_int_equal(kconfig_apply(NULL, NULL, &o), ERR_NOTFOUND);
	frags[0] = fx->frag1;

	o.base = missing;
	write_file(fx->frag1, "CONFIG_NET=y\n", 0);
	assert_int_equal(kconfig_apply(NULL, NULL, &o), ERR_NOTFOUND);

	o.base = "tinyconfig";
	o.srcdir = missing;
	assert_int_equal(kconfig_apply(NULL, NULL, &o), ERR_NOTFOUND);
	o.srcdir = NULL;
	assert_int_equal(kconfig_apply(NULL, NULL, &o), ERR_INVALID);

	free(missing);
	free(logenv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_values),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_binary_and_long),
		cmocka_unit_test(test_merge_overrides),
		cmocka_unit_test(test_many_options),
		cmocka_unit_test(test_verify_ok),
		cmocka_unit_test(test_verify_catches),
		cmocka_unit_test(test_verify_many_failures),
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_job_check),
		cmocka_unit_test(test_job_parse_and_hash),
		cmocka_unit_test_setup_teardown(test_apply_ok, apply_setup, apply_teardown),
		cmocka_unit_test_setup_teardown(test_apply_dropped, apply_setup, apply_teardown),
		cmocka_unit_test_setup_teardown(test_apply_job, apply_setup, apply_teardown),
		cmocka_unit_test_setup_teardown(test_apply_base_file, apply_setup, apply_teardown),
		cmocka_unit_test_setup_teardown(test_apply_failures, apply_setup, apply_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
