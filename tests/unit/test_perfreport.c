/*
 * test_perfreport: `perf report --stdio` read into symbols and shares,
 * on real reports recorded here (tests/fixtures/perf/, iperf3 over TCP
 * and over UDP on loopback under `perf record -g -e cpu-clock`), the
 * pedit seed's quoted --children lines, and cut or garbage text; the
 * diff's order. Fixtures through $FIXTURES_DIR, default "tests/fixtures".
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "perfreport.h"
#include "util.h"

#ifndef FIXTURES_DIR_DEFAULT
#define FIXTURES_DIR_DEFAULT "tests/fixtures"
#endif

#define TCP "perf/iperf3-tcp.txt"                 /* --no-children --sort symbol -g none */
#define UDP "perf/iperf3-udp.txt"                 /* the same, of the UDP run */
#define TCP_CHAINS "perf/iperf3-tcp-callchains.txt" /* the TCP run with its call graphs, >= 2% */
#define UDP_CHILDREN "perf/iperf3-udp-children.txt" /* --children --sort comm,dso,symbol, >= 0.5% */
#define GUEST "perf/guest-iperf3-udp.txt"         /* in the QEMU guest (tests/guest/perf.sh): coloured */

static char *fixture(size_t *len, const char *name)
{
	const char *dir = getenv("FIXTURES_DIR");
	char *path = xasprintf("%s/%s", dir && *dir ? dir : FIXTURES_DIR_DEFAULT, name);
	char *buf = NULL;

	if (file_read(&buf, len, path, 1 << 20) < 0)
		fail_msg("cannot read fixture %s: %s (run from the top of the tree or set FIXTURES_DIR)", path,
			 err_msg());
	free(path);
	return buf;
}

static void parse_fixture(struct perf_profile *p, const char *name)
{
	size_t len;
	char *text = fixture(&len, name);

	if (perfreport_parse(p, text, len))
		fail_msg("%s: %s", name, err_msg());
	free(text);
}

static void share_is(const struct perf_profile *p, const char *name, char level, double share, double self)
{
	const struct perf_sym *s = perfreport_find(p, name);

	if (!s)
		fail_msg("%s: not in the profile", name);
	if (s->level != level || fabs(s->share - share) > 1e-9 || fabs(s->self - self) > 1e-9)
		fail_msg("%s: [%c] %.4f%% self %.4f%%, want [%c] %.4f%% self %.4f%%", name, s->level, s->share,
			 s->self, level, share, self);
}

static void test_no_children(void **state)
{
	struct perf_profile p;

	(void)state;
	parse_fixture(&p, TCP);
	assert_int_equal(p.n, 245);
	assert_int_equal(p.children, 0);
	assert_int_equal(p.samples, 4000);
	assert_string_equal(p.event, "cpu-clock");
	assert_int_equal(p.truncated, 0);
	assert_int_equal(p.skipped, 0);
	/* In the report's order, the largest first. */
	assert_string_equal(p.syms[0].name, "_raw_spin_unlock_irqrestore");
	assert_string_equal(p.syms[1].name, "_copy_from_iter");
	share_is(&p, "_raw_spin_unlock_irqrestore", 'k', 24.61, 24.61);
	share_is(&p, "tcp_sendmsg_locked", 'k', 2.33, 2.33);
	share_is(&p, "__GI___libc_write", '.', 0.70, 0.70);
	/* "[.] 0x000000000023fe9c": an address, not a name. */
	share_is(&p, "[unknown]", '.', 0.02, 0.02);
	assert_null(perfreport_find(&p, "IPC"));
	assert_null(perfreport_find(&p, "-"));
	perfreport_release(&p);
}

static void test_children(void **state)
{
	struct perf_profile p;

	(void)state;
	parse_fixture(&p, UDP_CHILDREN);
	assert_int_equal(p.children, 1);
	assert_int_equal(p.n, 91);
	/* Children, then Self; "[kernel.kallsyms]" is the object, "[k]" the mark. */
	share_is(&p, "do_syscall_64", 'k', 94.87, 1.74);
	share_is(&p, "udp_sendmsg", 'k', 69.36, 1.89);
	share_is(&p, "__GI___libc_write", '.', 92.88, 1.59);
	assert_null(perfreport_find(&p, "[kernel.kallsyms]"));
	perfreport_release(&p);
}

/*
 * Recorded in the QEMU guest under TCG (Debian's 6.1 kernel): perf wrote
 * to the serial console, a terminal, so its shares are coloured.
 */
static void test_guest(void **state)
{
	struct perf_profile p;
	double sum = 0;

	(void)state;
	parse_fixture(&p, GUEST);
	/* 636 rows, 184 of them addresses perf could not name in the guest's libraries. */
	assert_int_equal(p.n, 453);
	assert_int_equal(p.skipped, 0);
	assert_int_equal(p.samples, 6000);
	assert_string_equal(p.event, "cpu-clock");
	assert_string_equal(p.syms[0].name, "finish_task_switch.isra.0");
	share_is(&p, "finish_task_switch.isra.0", 'k', 21.74, 21.74);
	share_is(&p, "udp_sendmsg", 'k', 0.82, 0.82);
	share_is(&p, "iperf_udp_send", '.', 0.60, 0.60);
	assert_true(fabs(perfreport_find(&p, "[unknown]")->share - 3.88) < 1e-9);
	for (size_t i = 0; i < p.n; i++)
		sum += p.syms[i].share;
	assert_true(sum > 99 && sum < 101);
	perfreport_release(&p);
}

/* Call graph lines ("|--17.68%--__tcp_push_pending_frames", bare frames) are not rows. */
static void test_callchains(void **state)
{
	struct perf_profile p, flat;

	(void)state;
	parse_fixture(&p, TCP_CHAINS);
	parse_fixture(&flat, TCP);
	assert_int_equal(p.n, 5);
	assert_int_equal(p.skipped, 0);
	for (size_t i = 0; i < p.n; i++) {
		assert_string_equal(p.syms[i].name, flat.syms[i].name);
		assert_true(p.syms[i].share == flat.syms[i].share);
	}
	assert_null(perfreport_find(&p, "tcp_write_xmit"));
	assert_null(perfreport_find(&p, "__tcp_push_pending_frames"));
	perfreport_release(&p);
	perfreport_release(&flat);
}

/* The two real profiles: the symbols whose share moved most, in order, as computed by hand from the files. */
static void test_diff_fixtures(void **state)
{
	struct perf_profile a, b;
	struct perf_delta *d;
	size_t n, all;

	(void)state;
	parse_fixture(&a, TCP);
	parse_fixture(&b, UDP);
	assert_int_equal(perfreport_diff(&d, &all, &a, &b, 1000, 0), 0);
	/* 245 and 204 symbols, 325 names; 6 of them kept their share to the hundredth. */
	assert_int_equal(all, 319);
	for (size_t i = 1; i < all; i++)
		assert_true(fabs(d[i - 1].after - d[i - 1].before) >= fabs(d[i].after - d[i].before));
	assert_string_equal(d[0].name, "_copy_from_iter");
	assert_true(d[0].before == 19.86 && d[0].after == 2.49);
	assert_string_equal(d[1].name, "_raw_spin_unlock_irqrestore");
	assert_string_equal(d[2].name, "handle_softirqs");
	assert_string_equal(d[3].name, "finish_task_switch.isra.0");
	assert_true(d[3].after > d[3].before);
	/* Only in one of them: 0 on the other side. */
	assert_string_equal(d[4].name, "tcp_sendmsg_locked");
	assert_true(d[4].before == 2.33 && d[4].after == 0);
	assert_string_equal(d[5].name, "__ip_append_data");
	assert_true(d[5].before == 0 && d[5].after == 1.99);
	free(d);

	assert_int_equal(perfreport_diff(&d, &n, &a, &b, 3, 0), 0);
	assert_int_equal(n, 3);
	assert_string_equal(d[2].name, "handle_softirqs");
	free(d);
	assert_int_equal(perfreport_diff(&d, &n, &a, &b, 100, 1.0), 0);
	assert_int_equal(n, 17);
	assert_true(fabs(d[n - 1].after - d[n - 1].before) >= 1.0);
	free(d);
	/* A profile against itself: nothing changed. */
	assert_int_equal(perfreport_diff(&d, &n, &a, &a, 100, 0), 0);
	assert_int_equal(n, 0);
	free(d);
	perfreport_release(&a);
	perfreport_release(&b);
}

/* The pedit seed's lines as the mail quoted them (indented, --children, a call chain under the row). */
static void test_pedit_seed(void **state)
{
	static const char before[] =
		"   before:\n"
		"    11.59%  2.30%  [kernel]  [k] tcf_pedit_act\n"
		"       2.55% tcf_pedit_act\n"
		"             8.38% _raw_spin_lock\n"
		"                       6.43% native_queued_spin_lock_slowpath\n";
	static const char after[] = "   after:\n    1.46%  1.46%  [kernel]  [k] tcf_pedit_act\n";
	struct perf_profile a, b;
	struct perf_delta *d;
	size_t n;

	(void)state;
	assert_int_equal(perfreport_parse(&a, before, strlen(before)), 0);
	assert_int_equal(perfreport_parse(&b, after, strlen(after)), 0);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.children, 1);
	share_is(&a, "tcf_pedit_act", 'k', 11.59, 2.30);
	assert_null(perfreport_find(&a, "_raw_spin_lock"));
	assert_int_equal(perfreport_diff(&d, &n, &a, &b, 10, 0.5), 0);
	assert_int_equal(n, 1);
	assert_string_equal(d[0].name, "tcf_pedit_act");
	assert_true(d[0].before == 11.59 && d[0].after == 1.46);
	free(d);
	perfreport_release(&a);
	perfreport_release(&b);
}

/* Cut inside a row: the rows before it, never a cut name or share. */
static void test_truncated(void **state)
{
	struct perf_profile p;
	size_t len;
	char *text = fixture(&len, TCP);
	const char *at = strstr(text, "tcp_sendmsg_locked");

	(void)state;
	assert_non_null(at);
	assert_int_equal(perfreport_parse(&p, text, (size_t)(at - text) + 7), 0);
	assert_int_equal(p.truncated, 1);
	assert_int_equal(p.n, 4);
	assert_null(perfreport_find(&p, "tcp_se"));
	assert_null(perfreport_find(&p, "tcp_sendmsg_locked"));
	perfreport_release(&p);
	/* Cut inside the header: no rows, and the message says so. */
	assert_int_equal(perfreport_parse(&p, text, 200), ERR_INVALID);
	assert_int_equal(p.n, 0);
	assert_non_null(strstr(err_msg(), "no symbol rows"));
	assert_non_null(strstr(err_msg(), "cut short"));
	free(text);
}

static void refused(const char *text, size_t len, size_t skipped)
{
	struct perf_profile p;

	if (perfreport_parse(&p, text, len) != ERR_INVALID)
		fail_msg("[%.*s] parsed into %zu rows", (int)len, text, p.n);
	assert_int_equal(p.n, 0);
	assert_null(p.syms);
	assert_int_equal(p.skipped, skipped);
}

static void test_garbage(void **state)
{
	static const char nul[] = "  5.00%  [k] a\0b\n";
	struct perf_profile p;
	char big[600];

	(void)state;
	refused("", 0, 0);
	refused("hello\nworld\n", 12, 0);
	refused("# Overhead  Symbol\n#\n", 21, 0);
	/* A share without perf's mark: --sort dso, or a call chain. */
	refused("    50.00%  [kernel.kallsyms]\n", 30, 0);
	refused("    50.00%  libc.so.6  [k]\n", 27, 0);
	/* Out of range or malformed shares, an empty name. */
	refused("  150.00%  [k] x\n", 17, 1);
	refused("  12.5x%  [k] x\n", 16, 1);
	refused("  1.00%  [k]   \n", 16, 1);
	refused("  1.00%", 7, 0);
	refused("\033[31m\033[m\n", 9, 0);
	refused("\033[\n", 4, 0);
	/* Bytes a JSON string cannot hold become '?'; a NUL ends nothing. */
	assert_int_equal(perfreport_parse(&p, nul, sizeof(nul) - 1), 0);
	assert_int_equal(p.n, 1);
	assert_string_equal(p.syms[0].name, "a?b");
	perfreport_release(&p);
	/* A name past PERFREPORT_MAX_NAME is cut to it. */
	memset(big, 'x', sizeof(big));
	memcpy(big, "  1.00%  [k] ", 13);
	big[sizeof(big) - 1] = '\n';
	assert_int_equal(perfreport_parse(&p, big, sizeof(big)), 0);
	assert_int_equal(strlen(p.syms[0].name), PERFREPORT_MAX_NAME - 1);
	perfreport_release(&p);
}

/* One name in two rows (two commands, two objects) is one symbol; only the first event's table counts. */
static void test_merge_and_events(void **state)
{
	static const char text[] =
		"# Samples: 12M of event 'cycles:P'\n"
		"    3.00%  3.00%  iperf3  [kernel.kallsyms]  [k] udp_sendmsg\n"
		"    2.00%  1.00%  netperf [kernel.kallsyms]  [k] ip_output\n"
		"    1.50%  0.50%  netperf [kernel.kallsyms]  [k] udp_sendmsg\n"
		"# Samples: 1K of event 'cpu-clock'\n"
		"    90.00%  90.00%  x  y  [k] other\n";
	struct perf_profile p;

	(void)state;
	assert_int_equal(perfreport_parse(&p, text, strlen(text)), 0);
	assert_int_equal(p.n, 2);
	assert_string_equal(p.syms[0].name, "udp_sendmsg");
	assert_string_equal(p.syms[1].name, "ip_output");
	share_is(&p, "udp_sendmsg", 'k', 4.5, 3.5);
	assert_null(perfreport_find(&p, "other"));
	assert_int_equal(p.samples, 12000000);
	assert_string_equal(p.event, "cycles:P");
	perfreport_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_children),
		cmocka_unit_test(test_children),
		cmocka_unit_test(test_callchains),
		cmocka_unit_test(test_guest),
		cmocka_unit_test(test_diff_fixtures),
		cmocka_unit_test(test_pedit_seed),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_merge_and_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
