#!/usr/bin/env python3
"""labjob.py: the real-lab benchmark's bookkeeping (tests/bench/bench-lab.sh).

  labjob.py classify JOB.json TRUTH [RC [TIMED_OUT]]
      prints "CLASS CONF DETAIL" for one bisectd job: CLASS is exact,
      range, wrong, undecided, not-reproduced or failed; CONF the claimed
      confidence ("-" when none); DETAIL a word or two (no tabs).
      TRUTH is the culprit's full id or "none".
  labjob.py table RESULTS.tsv
      prints a table per case from the result lines bench-lab.sh wrote:
      case rep method class conf runs tasks builds wall detail
"""
import json
import statistics
import sys

CLASSES = ["exact", "range", "wrong", "undecided", "not-reproduced", "failed"]


def classify(path, truth, rc, timed_out):
    try:
        with open(path) as f:
            job = json.load(f)
    except (OSError, ValueError) as e:
        return "failed", None, "no job: %s" % e
    state = job.get("state") or ""
    rep = job.get("report") or {}
    verdict = rep.get("verdict") or ""
    if timed_out:
        return "failed", None, "timeout in state %s" % state
    if state in ("failed", "cancelled", "queued", "running") and verdict == "":
        return "failed", None, (job.get("error") or state).replace("\t", " ")[:60]
    if state == "undecided" or verdict == "undecided" or rc == 4:
        # No answer; what the posterior held: its best commit, and the culprit's share.
        top = [x for x in rep.get("top") or [] if isinstance(x, dict)]
        conf, bits = None, []
        if top:
            conf = top[0].get("p")
            bits.append("top %s p %.4f" % ((top[0].get("sha") or "?")[:12], float(conf or 0)))
            held = [x for x in top if x.get("sha") == truth]
            if truth != "none":
                bits.append("culprit p %.4f" % float(held[0].get("p") or 0) if held else "culprit not in top")
        why = (rep.get("why") or "").replace("\t", " ").replace("\n", " ")
        if why:
            bits.append(why[:100])
        return "undecided", conf, "; ".join(bits) or "no numbers"
    if verdict == "not-reproduced" or state == "not-reproduced":
        return "not-reproduced", None, "ends %+.1f%%" % float(rep.get("ends_change_pct", rep.get("change_pct", 0)) or 0)
    if verdict == "culprit":
        c = rep.get("culprit") or {}
        conf = rep.get("confidence")
        sha = c.get("sha", "") if isinstance(c, dict) else str(c)
        if sha == truth:
            return "exact", conf, sha[:12]
        return "wrong", conf, "named %s" % sha[:12]
    if verdict == "range":
        shas = [x.get("sha", "") for x in rep.get("range") or []]
        conf = rep.get("set_mass")
        if truth in shas:
            return "range", conf, "set of %d" % len(shas)
        return "wrong", conf, "set of %d without it" % len(shas)
    return "failed", None, "state %s verdict %s" % (state, verdict or "-")


def fmt_conf(c):
    return "-" if c is None else "%.4f" % float(c)


def table(path):
    rows = []
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) < 9 or p[0].startswith("#"):
                continue
            rows.append(p)
    cases = []
    for r in rows:
        if r[0] not in cases:
            cases.append(r[0])
    methods = []
    for r in rows:
        if r[2] not in methods:
            methods.append(r[2])

    def med_max(xs):
        xs = [float(x) for x in xs if x not in ("", "-")]
        if not xs:
            return "-"
        m = statistics.median(xs)
        return "%g / %g" % (round(m, 1), round(max(xs), 1))

    for case in cases:
        print()
        print("case %s" % case)
        hdr = ("method", "jobs", "exact", "range", "wrong", "undec", "not-rep", "failed",
               "runs med/max", "tasks med/max", "builds med/max", "wall s med/max")
        fmt = "  %-16s %4s %5s %5s %5s %5s %7s %6s  %-13s %-13s %-14s %-14s"
        print(fmt % hdr)
        for m in methods:
            rs = [r for r in rows if r[0] == case and r[2] == m]
            if not rs:
                continue
            n = {c: sum(1 for r in rs if r[3] == c) for c in CLASSES}
            print(fmt % (m, len(rs), n["exact"], n["range"], n["wrong"], n["undecided"],
                         n["not-reproduced"], n["failed"], med_max(r[5] for r in rs),
                         med_max(r[6] for r in rs), med_max(r[7] for r in rs),
                         med_max(r[8] for r in rs)))
        for m in methods:
            wrong = [r for r in rows if r[0] == case and r[2] == m and r[3] == "wrong"]
            if wrong:
                print("  %s wrong answers, claimed confidence: %s" %
                      (m, ", ".join("%s (rep %s, %s)" % (r[4], r[1], r[9] if len(r) > 9 else "")
                                    for r in wrong)))


def main(argv):
    if len(argv) >= 4 and argv[1] == "classify":
        rc = int(argv[4]) if len(argv) > 4 else 0
        timed_out = len(argv) > 5 and argv[5] == "1"
        cls, conf, detail = classify(argv[2], argv[3], rc, timed_out)
        print("%s\t%s\t%s" % (cls, fmt_conf(conf), detail))
        return 0
    if len(argv) == 3 and argv[1] == "table":
        table(argv[2])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
