#!/bin/sh
# t0006: the dashboard in a real browser. bisectd and two agents on
# loopback run a job whose build and runs are slowed down enough to be
# watched; Debian's chromium, driven by playwright-core
# (tests/browser/dashboard.mjs), loads the dashboard while it runs, sees
# an agent change phase and the job's runs move without a reload, is
# read-only until it is given a token (a wrong one refused), submits
# a job with a bad ref and sees the API's message, opens the job page and
# its chart, and cancels the job. The screenshots are kept (the path is
# printed). Skipped only where chromium cannot be had.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/lab.sh"

CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || skip_all "chromium is not installed (make deps installs Debian's)"
command -v node > /dev/null || skip_all "node is not installed (make deps installs nodejs)"
command -v cc > /dev/null || skip_all "no C compiler for the demo project"
LAB=$TEST_DIR/lab
SHOTS=$TEST_DIR/screenshots
# The lab goes at the end; the screenshots stay as the test's artifacts.
trap 'lab_stop; rm -rf "$LAB"' EXIT
mkdir -p "$LAB" "$SHOTS"

if [ ! -d "$TOP/tests/browser/node_modules/playwright-core" ]; then
	echo "Bail out! playwright-core is not installed: run make deps (npm ci in tests/browser)"
	exit 1
fi

sh "$TOP/tests/lib/mkdemo.sh" "$LAB/demo.git" > "$LAB/mkdemo.out"
ok $? "the demo repository is generated"

# A slow variant of the demo's workload: a build and runs that last long
# enough for a 1 s heartbeat to show each phase.
lab_config "$LAB/demo.git"
sed -e 's/^pools:$//' -e 's/^  local:$//' -e 's/^    labels: \[lab\]$//' "$LAB/bisectd.yaml" > "$LAB/b.yaml"
cat >> "$LAB/b.yaml" <<'EOC'
  slow:
    type: command
    boot: none
    build: [sh, -c, 'sleep 4 && make -s']
    command: [sh, -c, 'sleep 1.5 && ./bench']
    pattern: 'throughput: ([0-9.]+)'
    unit: ops/s
    direction: higher
    build_timeout: 120
    run_timeout: 30
pools:
  local:
    labels: [lab]
EOC
mv "$LAB/b.yaml" "$LAB/bisectd.yaml"
"$BUILD/bisectd" -n -f "$LAB/bisectd.yaml" > /dev/null
ok $? "the lab's config with the slow workload is valid"
lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }
for a in lab1 lab2; do
	cpu=0
	[ "$a" = lab2 ] && [ "$(nproc)" -gt 1 ] && cpu=1
	cat > "$LAB/$a.yaml" <<EOC
coordinator: $LAB_URL
name: $a
labels: [lab]
workdir: $LAB/agents/$a
heartbeat: 1
poll_wait: 2
cpu: $cpu
measure_lock: $LAB/measure.lock
enrol_token_file: $LAB/enrol.token
EOC
	"$BUILD/bisect-agent" -f "$LAB/$a.yaml" > "$LAB/$a.log" 2>&1 &
	LAB_PIDS="$LAB_PIDS $!"
done

out=$(api POST /api/v1/jobs '{"repo": "demo", "good": "v1.0", "bad": "main", "workload": "slow", "runs": 3, "end_runs": 12}')
like "$out" '^201 .*"id": *1' "a job with the slow workload is submitted"

# The page itself, without a browser: served from the binary, no outside reference.
html=$(curl -fsS "$LAB_URL/")
like "$html" '<script src="/web/app.js">' "GET / serves the dashboard's page"
if printf '%s' "$html$(curl -fsS "$LAB_URL/web/app.js")$(curl -fsS "$LAB_URL/web/app.css")" |
	grep -Eq '(src|href)="(https?:)?//|url\((https?:)?//|@import'; then
	ok 1 "the page references nothing outside bisectd"
else
	ok 0 "the page references nothing outside bisectd"
fi
like "$(curl -sS -m 3 -N "$LAB_URL/api/v1/events" 2>/dev/null | head -c 4000)" 'event: snapshot' \
	"GET /api/v1/events starts with a snapshot"

# The browser's checks (a file of its lines), turned into TAP here.
browser_tap() {
	while IFS= read -r line; do
		case "$line" in
		"ok "*) ok 0 "${line#ok }" ;;
		"not ok "*) ok 1 "${line#not ok }" ;;
		"# "*) echo "$line" ;;
		*) echo "#   $line" ;;
		esac
	done < "$1"
}

# BISECTD_TOKEN (lab.sh's admin token) is the one the browser types in.
CHROMIUM="$CHROMIUM" node "$TOP/tests/browser/dashboard.mjs" "$LAB_URL" 1 "$SHOTS" > "$LAB/browser.out" 2>&1
brc=$?
browser_tap "$LAB/browser.out"
is "$brc" 0 "the browser run exits 0"

# A culprit whose claim the engine capped (its runs in two modes), as the
# store keeps such a job: its page prints the claim and the posterior.
q "UPDATE jobs SET state = 'done', culprit = 20, report = json_object('verdict', 'culprit',
	'culprit', json_object('idx', 20, 'sha', (SELECT sha FROM job_commits WHERE job_id = 1 AND idx = 20),
		'subject', 'the culprit', 'n', 5, 'hmean', 1.0, 'cv', 0.01),
	'parent', json_object('idx', 19, 'sha', (SELECT sha FROM job_commits WHERE job_id = 1 AND idx = 19),
		'subject', 'its parent', 'n', 5, 'hmean', 1.3, 'cv', 0.01),
	'change_pct', -23.1, 'p_value', 0.004, 'confidence', 0.99, 'posterior', 0.9999) WHERE id = 1"
CHROMIUM="$CHROMIUM" node "$TOP/tests/browser/dashboard.mjs" "$LAB_URL" 1 "$SHOTS" outcome > "$LAB/outcome.out" 2>&1
brc=$?
browser_tap "$LAB/outcome.out"
is "$brc" 0 "... and that browser run exits 0"

# A culprit found on the share of slow runs (a change in some runs only):
# its page prints both groups' shares.
q "UPDATE jobs SET report = json_remove(json_set(report, '$.confidence', 0.9999, '$.slow_bad_pct', 52.0,
	'$.slow_good_pct', 1.0), '$.posterior') WHERE id = 1"
CHROMIUM="$CHROMIUM" node "$TOP/tests/browser/dashboard.mjs" "$LAB_URL" 1 "$SHOTS" slow > "$LAB/slow.out" 2>&1
brc=$?
browser_tap "$LAB/slow.out"
is "$brc" 0 "... and that browser run exits 0"

# Two agents at levels 15% apart: the hmeans at the reference's level
# (hmean_ref, not the pooled hmean), and the other agent's level; in the
# outcome, and in the measured commits, where lab2 took the runs of the
# first commit measured (whichever agent took them in the run above): the
# good end, or on a loaded machine the one commit with runs by the cancel
# (with idx 0 fixed, such a run found no row off the pooled hmean).
q "UPDATE tasks SET agent_id = (SELECT id FROM agents WHERE name = 'lab2')
	WHERE job_id = 1 AND idx = (SELECT MIN(idx) FROM samples WHERE job_id = 1)"
# ... and each agent's sums made again from the samples, as schema 13's migration makes them.
q "DELETE FROM agent_sums; $(sed -n '/^INSERT INTO agent_sums/,/;$/p' "$TOP/schema/0013-agent-sums.sql")"
q "UPDATE jobs SET report = json_set(report, '$.parent.hmean_ref', 1.25, '$.culprit.hmean_ref', 0.96,
	'$.agents', json_array(
		json_object('id', (SELECT id FROM agents WHERE name = 'lab1'), 'name', 'lab1', 'runs', 20,
			'level_pct', 0.0, 'reference', json('true')),
		json_object('id', (SELECT id FROM agents WHERE name = 'lab2'), 'name', 'lab2', 'runs', 12,
			'level_pct', -15.0, 'reference', json('false')))) WHERE id = 1"
CHROMIUM="$CHROMIUM" node "$TOP/tests/browser/dashboard.mjs" "$LAB_URL" 1 "$SHOTS" agents > "$LAB/agents.out" 2>&1
brc=$?
browser_tap "$LAB/agents.out"
is "$brc" 0 "... and that browser run exits 0"
# An undecided job, as the store keeps one: its page resumes it.
q "UPDATE jobs SET state = 'undecided', culprit = NULL, report = json_object('verdict', 'undecided',
	'why', 'the budget is spent (stored by the test)', 'more_runs', 6,
	'runs', (SELECT count(*) FROM samples WHERE job_id = 1)) WHERE id = 1"
CHROMIUM="$CHROMIUM" node "$TOP/tests/browser/dashboard.mjs" "$LAB_URL" 1 "$SHOTS" resume > "$LAB/resume.out" 2>&1
brc=$?
browser_tap "$LAB/resume.out"
is "$brc" 0 "... and that browser run exits 0"
# Cancelled, the same job's page resumes it too.
like "$(api POST /api/v1/jobs/1/cancel '{}')" '^200 .*"state": *"cancelled"' "the resumed job is cancelled"
CHROMIUM="$CHROMIUM" node "$TOP/tests/browser/dashboard.mjs" "$LAB_URL" 1 "$SHOTS" resume-cancelled \
	> "$LAB/resume-cancelled.out" 2>&1
brc=$?
browser_tap "$LAB/resume-cancelled.out"
is "$brc" 0 "... and that browser run exits 0"
# Ended, its page submits its range and settings again as a new job.
like "$(api POST /api/v1/jobs/1/cancel '{}')" '^200 .*"state": *"cancelled"' "the job is cancelled again"
CHROMIUM="$CHROMIUM" node "$TOP/tests/browser/dashboard.mjs" "$LAB_URL" 1 "$SHOTS" again > "$LAB/again.out" 2>&1
brc=$?
browser_tap "$LAB/again.out"
is "$brc" 0 "... and that browser run exits 0"
new=$(sed -n 's/^# again: job \([0-9]*\)$/\1/p' "$LAB/again.out")
[ -n "$new" ] && api POST "/api/v1/jobs/$new/cancel" '{}' > /dev/null
n=$(ls "$SHOTS"/*.png 2>/dev/null | wc -l)
like "$n" '^([6-9]|1[0-9])$' "its screenshots are kept"
echo "# screenshots: $SHOTS"

tap_plan "$tap_n"
tap_done
