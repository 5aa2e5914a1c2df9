/*
 * rng: a small seeded generator (xoshiro256**, seeded by splitmix64) for
 * reproducible bootstraps, run orders and simulations. Not for secrets.
 */
#ifndef BISECT_RNG_H
#define BISECT_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

void rng_seed(struct rng *r, uint64_t seed);
/*
 * splitmix64's step and finaliser: a well-mixed 64-bit value of x, the
 * same for the same x (hashes, and a coin drawn from a job's state).
 */
uint64_t rng_mix64(uint64_t x);
uint64_t rng_next(struct rng *r);
/* Uniform in [0, 1). */
double rng_uniform(struct rng *r);
/* Uniform integer in [0, n), n > 0. */
uint64_t rng_below(struct rng *r, uint64_t n);
/* Standard normal (Box-Muller, one value per call). */
double rng_normal(struct rng *r);

#endif
