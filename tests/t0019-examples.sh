#!/bin/sh
# t0019: every example config in etc/examples/ loads as bisectd loads its
# config (bisectd -n -f FILE: the workloads checked by their kinds, the
# fragments read from kconfig beside the file), from the top of the tree
# and from elsewhere; the README lists each. Whatever *.yaml files the
# branch has: an example for a workload kind this build lacks is absent.
# Well under a second.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/lab.sh"

trap 'rm -rf "$TEST_DIR"' EXIT
EX=$TOP/etc/examples
set -- "$EX"/*.yaml
[ -e "$1" ] || skip_all "no etc/examples/*.yaml"
ok "$([ -r "$EX/README.md" ]; echo $?)" "etc/examples/README.md is there"
for f; do
	name=$(basename "$f")
	out=$("$BUILD/bisectd" -n -f "$f" 2>&1)
	rc=$?
	ok $rc "$name loads (bisectd -n -f)"
	[ $rc = 0 ] || printf '#   %s\n' "$out"
	like "$out" "configuration OK \\([0-9]+ repos, [1-9][0-9]* workloads, [1-9][0-9]* pools\\)" \
		"$name: has workloads and a pool"
	out=$(cd "$TEST_DIR" && "$BUILD/bisectd" -n -f "$f" 2>&1)
	rc=$?
	ok $rc "$name loads from another directory"
	[ $rc = 0 ] || printf '#   %s\n' "$out"
	ok "$(grep -q "$name" "$EX/README.md"; echo $?)" "$name: listed in the README"
	ok "$(grep -q '^# .*bisectctl submit' "$f"; echo $?)" "$name: says how to submit"
done
# The test can fail: a definition bisectd refuses is refused here too.
sed 's/^\(    type: \).*/\1no-such-kind/' "$1" > "$TEST_DIR/bad.yaml"
ln -s "$EX/kconfig" "$TEST_DIR/kconfig"
"$BUILD/bisectd" -n -f "$TEST_DIR/bad.yaml" > "$TEST_DIR/bad.out" 2>&1
ok "$([ $? -ne 0 ]; echo $?)" "an example with an unknown workload kind is refused"
like "$(cat "$TEST_DIR/bad.out")" "no-such-kind" "... naming it"

tap_plan "$tap_n"
tap_done
