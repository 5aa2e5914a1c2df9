#!/bin/sh
# demo.sh: `make demo`. Generates the demo repository, starts bisectd and
# two agents (lab1, lab2) on loopback, bisects the range v1.0..main,
# prints the culprit report, and stops what it started.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
LAB=${DEMO_DIR:-${TMPDIR:-/tmp}/bisectd-demo}
. "$TOP/tests/lib/lab.sh"

rm -rf "$LAB"
mkdir -p "$LAB"
trap lab_stop EXIT INT TERM

echo "==> generating the demo repository in $LAB/demo.git"
sh "$TOP/tests/lib/mkdemo.sh" "$LAB/demo.git" > "$LAB/mkdemo.out" || {
	cat "$LAB/mkdemo.out"; exit 1; }
lab_config "$LAB/demo.git"
echo "==> starting bisectd on $LAB_URL and agents lab1, lab2"
lab_start_bisectd || exit 1
cpus=$(nproc)
lab_start_agent lab1 0
lab_start_agent lab2 $((cpus > 1 ? 1 : 0))

echo "==> bisectctl submit --repo demo --good v1.0 --bad main --workload bench --watch"
"$BUILD/bisectctl" submit --repo demo --good v1.0 --bad main --workload bench --watch
rc=$?
echo
echo "The demo repository's injected regression is:"
sed -n 's/^culprit /  /p' "$LAB/mkdemo.out"
echo
echo "database: $LAB/bisectd.db   logs: $LAB/bisectd.log $LAB/lab1.log $LAB/lab2.log"
echo "the lab is stopped; its store keeps every sample: sqlite3 $LAB/bisectd.db 'SELECT * FROM summaries'"
exit $rc
