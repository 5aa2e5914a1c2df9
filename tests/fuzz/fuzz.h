/*
 * fuzz: what the fuzz targets share. Each target file defines one entry
 * point, FUZZ_ENTRY(data, size): libFuzzer's LLVMFuzzerTestOneInput in
 * `make fuzz` (clang -fsanitize=fuzzer), renamed to <file>_one when the
 * same file is compiled into the regression test (tests/unit/
 * test_fuzz_regress.c) that replays tests/fuzz/regress/ and the seeds
 * under gcc in make check.
 *
 * A target returns 0. What it finds wrong beyond a crash (a broken
 * promise of the header it tests) is FUZZ_CHECK: a message and abort(),
 * which libFuzzer reports as a crash with the input saved.
 */
#ifndef BISECT_FUZZ_H
#define BISECT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef FUZZ_ENTRY
#define FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

int FUZZ_ENTRY(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...) do {						\
		if (!(cond)) {							\
			fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond);	\
			fprintf(stderr, __VA_ARGS__);				\
			fputc('\n', stderr);					\
			abort();						\
		}								\
	} while (0)

#endif
