/* rng: xoshiro256** by Blackman and Vigna, public domain algorithm. */
#include <math.h>

#include "rng.h"

uint64_t rng_mix64(uint64_t x)
{
	uint64_t z = x + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++, seed += 0x9e3779b97f4a7c15ULL)
		r->s[i] = rng_mix64(seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double rng_uniform(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t rng_below(struct rng *r, uint64_t n)
{
	/* Lemire's multiply-shift with rejection: no modulo bias. */
	__uint128_t m = (__uint128_t)rng_next(r) * n;
	uint64_t l = (uint64_t)m;

	if (l < n) {
		uint64_t t = -n % n;

		while (l < t) {
			m = (__uint128_t)rng_next(r) * n;
			l = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

double rng_normal(struct rng *r)
{
	double u1, u2;

	do
		u1 = rng_uniform(r);
	while (u1 <= 0);
	u2 = rng_uniform(r);
	return sqrt(-2.0 * log(u1)) * cos(2 * M_PI * u2);
}
