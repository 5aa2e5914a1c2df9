/*
 * policy: which commits of a job to measure next, over the job's DAG.
 * Pure logic, no I/O.
 *
 * Commits are 0..n-1 in topological order (parents first); 0 is the good
 * end, n-1 the bad end. Each classified commit m says where the culprit
 * is: m bad-like means the culprit is an ancestor-or-self of m, good-like
 * means it is not. This holds on any DAG, merges included.
 *
 * This is the walking skeleton's policy: deterministic k-way splitting of
 * the remaining candidates by ancestor count. The probabilistic engine
 * replaces it.
 */
#ifndef BISECT_POLICY_H
#define BISECT_POLICY_H

#include <stdint.h>

enum commit_class { CLASS_UNKNOWN = 0, CLASS_GOOD, CLASS_BAD, CLASS_SKIPPED };

struct policy;

/*
 * parents[i][0..nr_parents[i]) are the parents of i inside the set
 * (each < i). A candidate with no parent inside has the good end (0) as
 * its parent implicitly.
 */
int policy_new(struct policy **out, int n, int *const *parents, const int *nr_parents);
void policy_free(struct policy *p);

/*
 * Marks in in_c (n bytes) the commits that can still be the culprit given
 * the classes; returns how many. Commit 0 is never a candidate.
 */
int policy_candidates(unsigned char *in_c, const struct policy *p, const enum commit_class *cls);

/*
 * Chooses up to k commits to measure: unclassified, not busy (busy may be
 * NULL), each splitting the candidates, closest to the quantiles
 * 1/(k+1) .. k/(k+1) of the candidates by ancestor count. Returns how many
 * it wrote to out; 0 when nothing left splits the candidates.
 */
int policy_next(int *out, const struct policy *p, const enum commit_class *cls,
		const unsigned char *busy, int k);

/* 1 when a is an ancestor-or-self of b. */
int policy_is_ancestor(const struct policy *p, int a, int b);

#endif
