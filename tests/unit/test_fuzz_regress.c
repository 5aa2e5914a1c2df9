/*
 * The fuzz targets (tests/fuzz/fuzz_*.c) as a regression test: every
 * input kept in tests/fuzz/regress/TARGET/ (what `make fuzz` once found
 * wrong, since fixed) and every seed in tests/fuzz/corpus/TARGET/ is
 * replayed through the target's entry point, compiled here with cc, in
 * make check's plain and ASan/UBSan builds. A target checks its own
 * promises and aborts on a broken one; ASan stops on a bad access or a
 * leak. Each input's name is printed (a TAP comment) before it runs, so a
 * failure names it. The folder is $FUZZ_DIR, default "tests/fuzz".
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "util.h"

int fuzz_api_one(const uint8_t *data, size_t size);
int fuzz_conf_one(const uint8_t *data, size_t size);
int fuzz_console_one(const uint8_t *data, size_t size);
int fuzz_csv_one(const uint8_t *data, size_t size);
int fuzz_iperf3_one(const uint8_t *data, size_t size);
int fuzz_kconfig_one(const uint8_t *data, size_t size);
int fuzz_pktgen_one(const uint8_t *data, size_t size);
int fuzz_taskwire_one(const uint8_t *data, size_t size);
int fuzz_workload_one(const uint8_t *data, size_t size);
int fuzz_trex_one(const uint8_t *data, size_t size);
int fuzz_perfreport_one(const uint8_t *data, size_t size);
int fuzz_journal_one(const uint8_t *data, size_t size);
int fuzz_xdp_one(const uint8_t *data, size_t size);

struct target {
	const char *name;
	int (*one)(const uint8_t *data, size_t size);
	int min_seeds;          /* a target without seeds would test nothing */
};

static struct target targets[] = {
	{ "fuzz_api", fuzz_api_one, 5 },
	{ "fuzz_conf", fuzz_conf_one, 5 },
	{ "fuzz_console", fuzz_console_one, 3 },
	{ "fuzz_csv", fuzz_csv_one, 3 },
	{ "fuzz_iperf3", fuzz_iperf3_one, 4 },
	{ "fuzz_kconfig", fuzz_kconfig_one, 3 },
	{ "fuzz_pktgen", fuzz_pktgen_one, 1 },
	{ "fuzz_taskwire", fuzz_taskwire_one, 2 },
	{ "fuzz_workload", fuzz_workload_one, 3 },
	{ "fuzz_trex", fuzz_trex_one, 4 },
	{ "fuzz_perfreport", fuzz_perfreport_one, 3 },
	{ "fuzz_journal", fuzz_journal_one, 4 },
	{ "fuzz_xdp", fuzz_xdp_one, 5 },
};

/* Replays every file of DIR/KIND/NAME; returns how many. A missing folder holds none. */
static int replay_dir(const struct target *t, const char *kind)
{
	const char *top = getenv("FUZZ_DIR") ? getenv("FUZZ_DIR") : "tests/fuzz";
	char *dir = xasprintf("%s/%s/%s", top, kind, t->name);
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort), done = 0;

	for (int i = 0; i < n; i++) {
		char *path = xasprintf("%s/%s", dir, names[i]->d_name), *data = NULL;
		size_t len = 0;

		if (names[i]->d_name[0] != '.') {
			if (file_read(&data, &len, path, 1 << 20) < 0)
				fail_msg("%s", err_msg());
			printf("# %s\n", path);
			fflush(stdout);
			t->one((const uint8_t *)data, len);
			done++;
		}
		free(data);
		free(path);
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	free(dir);
	return done;
}

static void test_target(void **state)
{
	const struct target *t = *state;
	int seeds = replay_dir(t, "corpus");

	replay_dir(t, "regress");
	if (seeds < t->min_seeds)
		fail_msg("%s: %d seeds in corpus/, expected at least %d", t->name, seeds, t->min_seeds);
}

int main(void)
{
	struct CMUnitTest tests[sizeof(targets) / sizeof(targets[0])];

	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		struct CMUnitTest u = { targets[i].name, test_target, NULL, NULL, (void *)&targets[i] };

		tests[i] = u;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
