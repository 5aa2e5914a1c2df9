#!/bin/sh
# t0002: every bad input is refused with a message that says what was
# wrong, and leaves the store exactly as it was.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/lab.sh"
. "$(dirname "$0")/lib/mkrepo.sh"

command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
LAB=$TEST_DIR/lab
trap 'lab_stop; rm -rf "$TEST_DIR"' EXIT

R=$TEST_DIR/repo
mkrepo_init "$R" > /dev/null
mkrepo_commit "$R" a.txt one "first" > /dev/null
mkrepo_tag "$R" v1
mkrepo_commit "$R" a.txt two "second" > /dev/null
mkrepo_commit "$R" a.txt three "third" > /dev/null
mkrepo_branch "$R" side v1
mkrepo_commit "$R" b.txt side "on a side branch" > /dev/null
mkrepo_switch "$R" main

LAB_MAX_BODY=4096 lab_config "$R"
lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }
CTL=$BUILD/bisectctl

snapshot() { sqlite3 "$LAB/bisectd.db" .dump | md5sum; }

# One good job first, so that the store is not empty.
out=$(api POST /api/v1/jobs '{"repo":"demo","good":"v1","bad":"main","workload":"bench"}')
like "$out" '^201 .*"state": *"queued"' "a valid job is created (201)"
GHOST=$(lab_agent_token ghost)
before=$(snapshot)

# check STATUS REGEX DESCRIPTION BODY
check() {
	out=$(api POST /api/v1/jobs "$4")
	like "$out" "^$1 .*\"error\": *\".*$2" "$3: $1 with a message"
	is "$(snapshot)" "$before" "$3: store unchanged"
}

check 404 "unknown repo 'nope'.*demo" "unknown repo" \
	'{"repo":"nope","good":"v1","bad":"main","workload":"bench"}'
check 404 "unknown workload 'nope'.*bench" "unknown workload" \
	'{"repo":"demo","good":"v1","bad":"main","workload":"nope"}'
check 404 "unknown pool 'nope'.*local" "unknown pool" \
	'{"repo":"demo","good":"v1","bad":"main","workload":"bench","pool":"nope"}'
check 422 "v9.9" "a ref that does not resolve" \
	'{"repo":"demo","good":"v9.9","bad":"main","workload":"bench"}'
check 422 "not an ancestor" "good not an ancestor of bad" \
	'{"repo":"demo","good":"main","bad":"v1","workload":"bench"}'
check 422 "not an ancestor" "good on another branch" \
	'{"repo":"demo","good":"side","bad":"main","workload":"bench"}'
check 422 "same commit|empty" "an empty range" \
	'{"repo":"demo","good":"main","bad":"main","workload":"bench"}'
check 400 "not valid JSON" "malformed JSON" '{"repo":"demo",'
check 400 "JSON object" "a JSON array" '["demo"]'
check 400 "runs" "runs out of range" \
	'{"repo":"demo","good":"v1","bad":"main","workload":"bench","runs":0}'
check 400 "end_runs" "end_runs out of range" \
	'{"repo":"demo","good":"v1","bad":"main","workload":"bench","end_runs":201}'
check 400 "unknown field 'rnus'" "a misspelt field" \
	'{"repo":"demo","good":"v1","bad":"main","workload":"bench","rnus":3}'
check 400 "'append' must be kernel parameters" "a kernel command line with a shell character" \
	'{"repo":"demo","good":"v1","bad":"main","workload":"bench","append":"quiet; reboot"}'
check 400 "'append' is a kernel command line for boot qemu" "a kernel command line for a workload that boots none" \
	'{"repo":"demo","good":"v1","bad":"main","workload":"bench","append":"mitigations=off"}'
check 400 "'good'" "a missing field" '{"repo":"demo","bad":"main","workload":"bench"}'
check 400 "'bad'" "a wrong type" '{"repo":"demo","good":"v1","bad":7,"workload":"bench"}'

big=$(head -c 6000 /dev/zero | tr '\0' 'x')
check 413 "too large" "a body over the bound" "{\"repo\":\"$big\"}"

out=$(API_TOKEN=$GHOST api POST /api/v1/tasks/999/result '{"agent":"ghost","attempt":1,"status":"ok","samples":[{"value":1}]}')
like "$out" '^404 .*not registered' "a result from an unknown agent: 404"
out=$(API_TOKEN=$GHOST api POST /api/v1/agents/ghost/claim '')
like "$out" '^404 .*not registered' "a claim from an unknown agent: 404"
out=$(api GET /api/v1/jobs/12345)
like "$out" '^404 .*does not exist' "an unknown job: 404"
out=$(api GET /api/v1/nothing)
like "$out" '^404 .*"error"' "an unknown endpoint: 404 with a JSON error"
is "$(snapshot)" "$before" "store unchanged after the API checks"

# The CLI: a line on stderr and exit 2.
"$CTL" submit --repo nope --good v1 --bad main --workload bench > "$TEST_DIR/out" 2> "$TEST_DIR/err"
is "$?" 2 "bisectctl submit with an unknown repo exits 2"
like "$(cat "$TEST_DIR/err")" "unknown repo 'nope'" "... and says which repo"
"$CTL" submit --repo demo --good v1 --workload bench > "$TEST_DIR/out" 2> "$TEST_DIR/err"
is "$?" 2 "bisectctl submit without --bad exits 2"
like "$(cat "$TEST_DIR/err")" "bad" "... and names the missing option"
"$CTL" submit --repo demo --good v1 --bad main --workload bench --end-runs 500 > "$TEST_DIR/out" 2> "$TEST_DIR/err"
is "$?" 2 "bisectctl submit --end-runs 500 exits 2"
like "$(cat "$TEST_DIR/err")" "bad --end-runs '500' \(0 to 200\)" "... and gives the range"
"$CTL" frobnicate > "$TEST_DIR/out" 2> "$TEST_DIR/err"
is "$?" 2 "an unknown command exits 2"
is "$(snapshot)" "$before" "store unchanged after the CLI checks"

# A config with a typo: file:line:column and exit 2.
sed 's/^    command:/    comand:/' "$LAB/bisectd.yaml" > "$TEST_DIR/typo.yaml"
"$BUILD/bisectd" -n -f "$TEST_DIR/typo.yaml" > "$TEST_DIR/out" 2> "$TEST_DIR/err"
is "$?" 2 "bisectd -n on a config with a typo exits 2"
line=$(grep -n 'comand:' "$TEST_DIR/typo.yaml" | cut -d: -f1)
like "$(cat "$TEST_DIR/err")" "typo.yaml:$line:5: .*comand" "... naming file:line:column and the key"
"$BUILD/bisectd" -n -f "$LAB/bisectd.yaml" > "$TEST_DIR/out" 2>&1
is "$?" 0 "bisectd -n on the good config exits 0"

tap_plan "$tap_n"
tap_done
