/*
 * stats: summaries of a commit's runs and comparisons between two commits.
 * Pure functions, no I/O. A value <= 0 (or not finite) is a failed run:
 * counted in `failures`, never averaged in.
 */
#ifndef BISECT_STATS_H
#define BISECT_STATS_H

#include <stddef.h>

struct summary {
	size_t n;          /* successful runs */
	size_t failures;   /* runs with value <= 0 */
	double hmean;      /* n / sum(1/x): for rates */
	double amean;
	double median, min, max;
	double stddev;     /* sample (n - 1); 0 when n < 2 */
	double cv;         /* stddev / amean */
};

/* Summarises x[0..n); the fields of s are 0 when no run succeeded. */
void stats_summary(struct summary *s, const double *x, size_t n);

/* Copies the successful values of x into out (room for n); returns how many. */
size_t stats_valid(double *out, const double *x, size_t n);

enum stats_alt { ALT_TWO_SIDED, ALT_LESS, ALT_GREATER };

/*
 * Mann-Whitney U test of a against b over their successful values: the
 * p-value for the alternative that a is stochastically less (ALT_LESS),
 * greater, or different. Exact distribution when both have at most 20
 * values and there are no ties; otherwise the normal approximation with tie
 * correction and continuity correction. 1.0 when either side is empty.
 */
double stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb,
			  enum stats_alt alt);

/* (b - a) / a in percent; 0 when a is 0. */
double stats_change_pct(double a, double b);

#endif
