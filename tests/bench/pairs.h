/* pairs: the confirmation's paired test against two sequential tests (bench-bisect --pairs). */
#ifndef BENCH_PAIRS_H
#define BENCH_PAIRS_H

#include <stdint.h>

/* Prints the table (pairs.c); trials sequences a row, then the windows of the traces in dir. Returns 0. */
int bench_pairs(int trials, uint64_t seed, const char *traces);

#endif
