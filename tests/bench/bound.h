/*
 * bound: the information-theoretic floor on the runs any bisection needs,
 * the yardstick the simulation benchmark measures policies against (see
 * "The limit to compare against" in STATISTICS.md).
 */
#ifndef BENCH_BOUND_H
#define BENCH_BOUND_H

/*
 * Capacity in bits per use of the binary-input Gaussian channel: inputs
 * +-a with equal probability, noise of sigma 1. Numerical integration,
 * good to about 1e-9. 0 for a <= 0.
 */
double bound_capacity(double a);

/*
 * Runs needed to name the culprit among n_cand candidates with error at
 * most delta, for a relative change d at coefficient of variation c:
 * log2(n_cand) / C + log2(1 / delta) / C1, with C the capacity at amplitude
 * d / (2 c) and C1 = (d / c)^2 / (2 ln 2) (Burnashev's confidence term).
 */
double bound_runs(int n_cand, double d, double c, double delta);

#endif
