/* bound: capacity of the binary-input Gaussian channel and the run bound. */
#include <math.h>

#include "bound.h"

/* log2(1 + e^x) without overflow. */
static double log2_1p_exp(double x)
{
	if (x > 30)
		return (x + log1p(exp(-x))) / M_LN2;
	return log1p(exp(x)) / M_LN2;
}

double bound_capacity(double a)
{
	/*
	 * I(X;Y) = 1 - E[log2(1 + exp(-2 a Y))] with Y ~ N(a, 1): the
	 * log-likelihood ratio of one output is 2 a y. Simpson's rule over
	 * a +- 12 sigma; the integrand is smooth.
	 */
	const int steps = 4800;
	const double lo = a - 12, hi = a + 12, h = (hi - lo) / steps;
	double sum = 0;

	if (a <= 0)
		return 0;
	for (int i = 0; i <= steps; i++) {
		double y = lo + i * h, z = y - a;
		double f = exp(-0.5 * z * z) / sqrt(2 * M_PI) * log2_1p_exp(-2 * a * y);
		int w = (i == 0 || i == steps) ? 1 : (i % 2 ? 4 : 2);

		sum += w * f;
	}
	return 1 - sum * h / 3;
}

double bound_runs(int n_cand, double d, double c, double delta)
{
	double cap = bound_capacity(d / (2 * c));
	double c1 = (d / c) * (d / c) / (2 * M_LN2);

	return log2((double)n_cand) / cap + log2(1 / delta) / c1;
}
