#!/usr/bin/python3
"""Expected values for tests/unit/test_stats.c, computed by scipy.

Writes tests/unit/stats_fixtures.h, a C header with the data sets and what
scipy (Debian's python3-scipy) says about them: every summary, the
Mann-Whitney U, Kolmogorov-Smirnov and Welch tests, and the normal and
Student t CDFs. The header is checked in; it is the contract.

    /usr/bin/python3 tests/lib/stats-oracle.py > tests/unit/stats_fixtures.h
    /usr/bin/python3 tests/lib/stats-oracle.py --check tests/unit/stats_fixtures.h

--check regenerates and compares: exit 0 when equal, 1 when not, 77 when
this scipy is not the one the header was made with (not comparable).

Run it with /usr/bin/python3: a python3 earlier on PATH may lack scipy.
The p-value methods are chosen explicitly, by the rules stats.h documents,
and each is also checked here to be what scipy 1.10's method='auto' picks
(except where stats.h says it differs), so a change of scipy's defaults
cannot silently change the contract.
"""

import math
import platform
import sys

import numpy as np
import scipy
from scipy import stats

MW_EXACT_SMALL = 8        # stats.h STATS_MW_EXACT_SMALL
MW_EXACT_MAX = 100000     # stats.h STATS_MW_EXACT_MAX
KS_EXACT_MAX = 10000      # stats.h STATS_KS_EXACT_MAX
NAN = float("nan")
INF = float("inf")


def rounded(seed, n, centre, cv, step):
    """n throughput-like values, rounded to step (coarse steps make ties)."""
    rs = np.random.RandomState(seed)
    return [float(round(centre * (1 + cv * z) / step) * step) for z in rs.standard_normal(n)]


DATA = {
    # typical iperf-like throughputs, no ties
    "small_a": [1726716.59, 1698234.12, 1751002.87, 1710453.33, 1733890.05],
    "small_b": [1842337.77, 1801245.66, 1876003.12, 1822119.40, 1855678.91, 1790034.25],
    # interleaved, no ties, 7 and 8 values
    "mixed_a": [10.5, 12.1, 9.8, 11.3, 13.0, 10.9, 12.7],
    "mixed_b": [11.8, 13.4, 12.2, 14.1, 10.2, 13.9, 12.9, 14.6],
    # ties within and across samples
    "ties_a": [3.0, 5.0, 5.0, 7.0, 9.0, 9.0, 9.0, 11.0],
    "ties_b": [5.0, 6.0, 7.0, 7.0, 9.0, 10.0, 12.0],
    # one run each
    "one_a": [1726716.59],
    "one_b": [1842337.77],
    # failed runs mixed in: 0, negative, NaN, infinity are failures
    "failed_a": [1726716.59, 0.0, 1698234.12, -1.0, 1751002.87, NAN, 1710453.33, INF],
    "failed_b": [1842337.77, 1801245.66, 0.0, 1876003.12],
    "all_failed": [0.0, -3.0],
    # identical values
    "same_a": [1726716.59] * 4,
    "same_b": [1726716.59] * 3,
    "same_c": [1842337.77] * 5,
    # larger samples with ties (rounded to 1000)
    "large_a": rounded(1, 30, 1726716.59, 0.04, 1000),
    "large_b": rounded(2, 40, 1842337.77, 0.07, 1000),
    # larger samples without ties (rounded to 0.01)
    "big_a": rounded(3, 30, 1726716.59, 0.04, 0.01),
    "big_b": rounded(4, 40, 1760000.00, 0.05, 0.01),
    # 9 and 12 without ties: both above 8, so asymptotic
    "nine_a": rounded(5, 9, 100.0, 0.05, 0.001),
    "twelve_b": rounded(6, 12, 104.0, 0.05, 0.001),
    # 3 against 25 without ties: exact (the smaller is <= 8)
    "three_a": [98.71, 101.33, 97.02],
    "tf_b": rounded(7, 25, 103.0, 0.03, 0.001),
    # 8 against 200 without ties: exact with a long distribution
    "eight_a": rounded(8, 8, 100.0, 0.02, 0.0001),
    "twohundred_b": rounded(9, 200, 101.0, 0.02, 0.0001),
    # a latency-like sample with a slow outlier
    "lat_a": [12.4, 12.9, 13.1, 12.7, 48.0, 12.8, 13.0, 12.6, 12.5, 13.3],
    "lat_b": [13.9, 14.2, 13.6, 14.4, 14.1, 13.8, 14.0, 14.3, 13.7],
}

SUMMARIES = list(DATA)

PAIRS = [
    ("small_a", "small_b"), ("small_b", "small_a"), ("mixed_a", "mixed_b"),
    ("ties_a", "ties_b"), ("one_a", "one_b"), ("one_a", "same_b"),
    ("failed_a", "failed_b"), ("same_a", "same_b"), ("same_a", "same_c"),
    ("large_a", "large_b"), ("big_a", "big_b"), ("nine_a", "twelve_b"),
    ("three_a", "tf_b"), ("tf_b", "three_a"), ("eight_a", "twohundred_b"),
    ("lat_a", "lat_b"), ("small_a", "large_b"),
]

ALTS = [("two-sided", "ALT_TWO_SIDED"), ("less", "ALT_LESS"), ("greater", "ALT_GREATER")]

# Generated, not listed, so that the header stays small: the KS test above
# STATS_KS_EXACT_MAX, a[i] = 1000 + 3 i (i < 10001), b[j] = 1600 + 2.5 j (j < 12000).
KS_BIG_A = [1000.0 + 3 * i for i in range(10001)]
KS_BIG_B = [1600.0 + 2.5 * j for j in range(12000)]

TCDF_T = [-40.0, -8.0, -5.0, -2.0, -0.5, 0.0, 0.3, 1.7, 3.0, 8.0, 25.0]
TCDF_DF = [1.0, 2.5, 4.0, 10.0, 30.7, 1000.0, 1e6]
NCDF_Z = [-30.0, -8.0, -3.0, -1.5, 0.0, 0.7, 2.0, 5.0]


def valid(xs):
    return [x for x in xs if math.isfinite(x) and x > 0]


def c(x):
    """A C literal that reads back as exactly x."""
    if isinstance(x, (bool, np.bool_)):
        return "1" if x else "0"
    x = float(x)
    if math.isnan(x):
        return "NAN"
    if math.isinf(x):
        return "INFINITY" if x > 0 else "-INFINITY"
    return repr(x)


def summary(xs):
    v = np.array(valid(xs))
    n = len(v)
    if n == 0:
        return [0, len(xs)] + [0.0] * 7
    same = v.min() == v.max()
    # stats.h: stddev and cv are 0 for fewer than 2 runs (scipy: nan) and
    # for identical runs (scipy may give rounding noise)
    sd = 0.0 if n < 2 or same else float(np.std(v, ddof=1))
    cv = 0.0 if n < 2 or same else float(stats.variation(v, ddof=1))
    return [n, len(xs) - n, float(stats.hmean(v)), float(np.mean(v)), float(np.median(v)),
            float(v.min()), float(v.max()), sd, cv]


def has_ties(a, b):
    pooled = a + b
    return len(set(pooled)) != len(pooled)


def mw(a, b, alt):
    """stats.h's rule, checked against scipy's auto choice."""
    a, b = valid(a), valid(b)
    if not a or not b:
        return NAN, 0.0, 1.0, False
    exact = (not has_ties(a, b) and min(len(a), len(b)) <= MW_EXACT_SMALL
             and max(len(a), len(b)) <= MW_EXACT_MAX)
    method = "exact" if exact else "asymptotic"
    r = stats.mannwhitneyu(a, b, alternative=alt, method=method, use_continuity=True)
    auto = stats.mannwhitneyu(a, b, alternative=alt, method="auto")
    assert auto.pvalue == r.pvalue or (math.isnan(auto.pvalue) and math.isnan(r.pvalue)), \
        ("mannwhitneyu: auto differs from the stats.h rule", a, b, alt)
    p = r.pvalue
    if math.isnan(p):  # every value the same: s = 0; stats.h says 1
        p = 1.0
    return float(r.statistic), 0.0, float(p), exact


def ks(a, b):
    a, b = valid(a), valid(b)
    if not a or not b:
        return NAN, 0.0, 1.0, False
    exact = max(len(a), len(b)) <= KS_EXACT_MAX
    if exact:
        r = stats.ks_2samp(a, b, alternative="two-sided", method="exact")
        auto = stats.ks_2samp(a, b, alternative="two-sided", method="auto")
        assert auto.pvalue == r.pvalue, ("ks_2samp: auto is not exact", a, b)
        return float(r.statistic), 0.0, float(r.pvalue), True
    # stats.h: the limiting Kolmogorov distribution, not scipy's kstwo
    r = stats.ks_2samp(a, b, alternative="two-sided", method="asymp")
    en = len(a) * len(b) / (len(a) + len(b))
    return float(r.statistic), 0.0, float(stats.kstwobign.sf(math.sqrt(en) * r.statistic)), False


def welch(a, b, alt):
    a, b = valid(a), valid(b)
    if len(a) < 2 or len(b) < 2 or (np.var(a) == 0 and np.var(b) == 0):
        return NAN, NAN, 1.0, False  # stats.h: undefined, p = 1
    r = stats.ttest_ind(a, b, equal_var=False, alternative=alt)
    va, vb = np.var(a, ddof=1) / len(a), np.var(b, ddof=1) / len(b)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return float(r.statistic), float(df), float(r.pvalue), False


def test_rows(fn, with_alt):
    rows = []
    for x, y in PAIRS:
        for alt, calt in (ALTS if with_alt else [("two-sided", "ALT_TWO_SIDED")]):
            stat, df, p, exact = fn(DATA[x], DATA[y], alt) if with_alt else fn(DATA[x], DATA[y])
            rows.append('\t{ "%s", FX_DATA(%s), "%s", FX_DATA(%s), %s, %s, %s, %s, %s },'
                        % (x, x, y, y, calt, c(stat), c(df), c(p), c(exact)))
    return rows


def generate():
    out = []
    w = out.append
    w("/*")
    w(" * Generated by tests/lib/stats-oracle.py: do not edit; regenerate with")
    w(" *   /usr/bin/python3 tests/lib/stats-oracle.py > tests/unit/stats_fixtures.h")
    w(" * scipy %s, numpy %s, Python %s" % (scipy.__version__, np.__version__,
                                               platform.python_version()))
    w(" * Included by tests/unit/test_stats.c, which defines the structs.")
    w(" */")
    w("")
    for name, xs in DATA.items():
        w("static const double fx_%s[] = { %s };" % (name, ", ".join(c(x) for x in xs)))
    w("")
    w("#define FX_DATA(x) fx_##x, sizeof(fx_##x) / sizeof(fx_##x[0])")
    w("")
    w("/* name, data, n, failures, hmean, amean, median, min, max, stddev, cv */")
    w("static const struct fx_summary fx_summaries[] = {")
    for name in SUMMARIES:
        s = summary(DATA[name])
        w('\t{ "%s", FX_DATA(%s), %d, %d, %s },' % (name, name, s[0], s[1],
                                                   ", ".join(c(x) for x in s[2:])))
    w("};")
    w("")
    w("/* a, b, alternative, statistic, df, p, exact */")
    w("static const struct fx_test fx_mw[] = {")
    out.extend(test_rows(mw, True))
    w("};")
    w("")
    w("static const struct fx_test fx_ks[] = {")
    out.extend(test_rows(ks, False))
    w("};")
    w("")
    w("static const struct fx_test fx_welch[] = {")
    out.extend(test_rows(welch, True))
    w("};")
    w("")
    d, _, p, _ = ks(KS_BIG_A, KS_BIG_B)
    w("/* a[i] = 1000 + 3 i (i < %d), b[j] = 1600 + 2.5 j (j < %d): asymptotic */"
      % (len(KS_BIG_A), len(KS_BIG_B)))
    w("#define FX_KS_BIG_NA %d" % len(KS_BIG_A))
    w("#define FX_KS_BIG_NB %d" % len(KS_BIG_B))
    w("static const double fx_ks_big_d = %s, fx_ks_big_p = %s;" % (c(d), c(p)))
    w("")
    w("/* t, df, scipy.stats.t.cdf(t, df) */")
    w("static const struct fx_cdf fx_tcdf[] = {")
    for df in TCDF_DF:
        for t in TCDF_T:
            w("\t{ %s, %s, %s }," % (c(t), c(df), c(stats.t.cdf(t, df))))
    w("};")
    w("")
    w("/* z, unused, scipy.stats.norm.cdf(z) */")
    w("static const struct fx_cdf fx_ncdf[] = {")
    for z in NCDF_Z:
        w("\t{ %s, 0, %s }," % (c(z), c(stats.norm.cdf(z))))
    w("};")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        with open(sys.argv[2]) as f:
            old = f.read()
        if (" * scipy %s, numpy %s," % (scipy.__version__, np.__version__)) not in old:
            print("stats-oracle: %s was made with another scipy/numpy" % sys.argv[2])
            return 77
        if generate() != old:
            print("stats-oracle: %s differs from what scipy %s gives now"
                  % (sys.argv[2], scipy.__version__))
            return 1
        return 0
    if len(sys.argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    sys.stdout.write(generate())
    return 0


if __name__ == "__main__":
    sys.exit(main())
