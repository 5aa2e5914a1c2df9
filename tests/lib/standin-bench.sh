#!/bin/sh
# standin-bench.sh [SECONDS [SLOWFILE]]: a stand-in for the ./bench of the
# demo repository (tests/lib/mkdemo.sh) or of the lab's
# (tests/bench/mklabrepo.sh), run as a workload's command in a checkout of
# either. It prints the bench's one line, "throughput: N ops/s", from
# numbers it draws rather than from a timed loop, at a CV of 2%:
#   demo  1000 ops/s, 28% fewer where the tree has the culprit's line in
#         hash.c (every commit from the culprit on has it, none before);
#   lab   1000 ops/s at mix.h's 17 ROUNDS, in inverse proportion to them
#         (20 ROUNDS: 15% fewer).
# A run lasts SECONDS (0.05 by default), two seconds more while SLOWFILE
# exists. STANDIN_LEVEL in the agent's environment scales every number it
# prints (0.85: an agent whose machine reads 15% lower on every commit).
#
# For the tests whose subject is not how fast a machine is (reports,
# charts, budgets, TLS, outages, a merge's confirmation): with the bench timed, a job ran as long
# as the load beside it made its runs noisy, and its runs, a CPU loop,
# made the tests beside it noisy too. make demo, t0001 and bench-lab time
# the real bench.
[ -n "${2:-}" ] && [ -e "$2" ] && sleep 2
sleep "${1:-0.05}"
v=1000
grep -qsF 'fold(t->seed ^ key)' hash.c && v=720
r=$(sed -n 's/^#define ROUNDS \([0-9][0-9]*\)$/\1/p' mix.h 2>/dev/null)
[ -n "$r" ] && v=$((17000 / r))
# The sum of twelve uniforms less six: a normal draw (Irwin-Hall).
od -An -N24 -tu2 /dev/urandom | awk -v v="$v" -v l="${STANDIN_LEVEL:-1}" '{ for (i = 1; i <= NF; i++) z += $i / 65536 }
END { printf "throughput: %.2f ops/s\n", v * l * (1 + 0.02 * (z - 6)) }'
