#!/bin/sh
# t0008: the faces of a job's end. On the demo job, with lab2 reading 15%
# lower than lab1 on every commit: the agents' levels the report gives,
# and its HARMEAN (CV) and change columns, with either CV, recomputed from
# the stored samples at the reference agent's level; no change between
# the good end and the culprit's parent, though their runs mix the agents
# in other shares; the job's commits (its page, bisectctl show) and the
# timeline chart at the same levels, which the engine's last decision
# keeps; a running job's report and show at its last step's levels, its
# agents stopped once a step knew both (its most probable commits named,
# measured or not); the CSV export line for line against the store; the mail's
# culprit, author, command line and table, and its reproduce commands
# run (the submit against this bisectd, the checkout, build and run by
# hand). Bad input: a job that does not exist, one without samples, one
# still running. The bench is the stand-in that draws its numbers
# (tests/lib/standin-bench.sh).
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/lab.sh"

command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
command -v python3 > /dev/null || skip_all "python3 missing (make deps)"
LAB=$TEST_DIR/lab
trap 'lab_stop; rm -rf "$TEST_DIR"' EXIT
mkdir -p "$LAB"
ctl() { "$BUILD/bisectctl" "$@"; }

sh "$TOP/tests/lib/mkdemo.sh" "$LAB/demo.git" > "$LAB/mkdemo.out"
ok $? "the demo repository is generated"
culprit=$(sed -n 's/^culprit \([0-9a-f]*\) .*/\1/p' "$LAB/mkdemo.out")
# A pool no agent belongs to: a job there stays queued without samples.
LAB_STANDIN=1 lab_config "$LAB/demo.git" "  empty:
    labels: [nobody]"
lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }

# --- bad input ---------------------------------------------------------------

out=$(ctl report 99 2>&1)
is "$?" 2 "report of a job that does not exist exits 2"
like "$out" "job 99 does not exist" "... and says so"
out=$(ctl report 99 --mail 2>&1)
is "$?" 2 "report --mail of a job that does not exist exits 2"
out=$(ctl export 99 --csv 2>&1)
is "$?" 2 "export of a job that does not exist exits 2"
like "$out" "job 99 does not exist" "... and says so"
is "$(api GET /api/v1/jobs/99/samples.csv | cut -d' ' -f1)" 404 "the API answers 404 for its samples"
like "$(api GET '/api/v1/jobs/99/report?cv=geo')" '^400 .*cv must be amean' "an unknown cv is a 400"
like "$(ctl report 1 --cv geo 2>&1)" "bad --cv 'geo'" "... and a usage error of bisectctl"

ctl submit --repo demo --good v1.0 --bad main --workload bench --pool empty > /dev/null
ok $? "a job is submitted to a pool without agents"
is "$(ctl export 1 --csv | tr -d '\r')" "commit,idx,subject,task,agent,attempt,run,value,unit,error,time" \
	"the export of a job without samples is the header alone"
out=$(ctl report 1)
is "$?" 2 "the report of a job not finished exits 2"
like "$out" "not finished: job 1 is (queued|running), no verdict yet" "... and says it is not finished"
like "$out" "good +[0-9a-f]{12} +- +n=0" "... with what is known: the good end not measured yet"
like "$(ctl report 1 --mail 2>&1)" "job 1 names no culprit to mail about: it is queued" \
	"the mail of a job not finished says there is no culprit yet"
# A step whose most probable commits are five of thirteen no run tells
# apart (the engine's "alike"): the running report says the rows are some
# of those (a step as the engine records one, written into the store).
q "INSERT INTO decisions (job_id, time, state, queries, top, why) VALUES (1, strftime('%s'), 'search', '[]',
   '[{\"idx\":15,\"p\":0.037,\"alike\":13},{\"idx\":16,\"p\":0.037,\"alike\":13},{\"idx\":17,\"p\":0.037,\"alike\":13},
     {\"idx\":18,\"p\":0.037,\"alike\":13},{\"idx\":19,\"p\":0.037,\"alike\":13}]', 'a step written by the test')"
out=$(ctl report 1)
like "$out" "  p=0\.037 +[0-9a-f]{12} " "a running job's report lists the step's most probable commits"
like "$out" "13 commits hold p=0\.037 alike \(no run tells them apart yet\): 5 of them are shown" \
	"... and says that they are five of thirteen alike"
ctl cancel 1 > /dev/null

# --- the demo job --------------------------------------------------------------

lab_start_agent lab1 0
AGENT_PIDS=$!
export STANDIN_LEVEL=0.85
lab_start_agent lab2 $(( $(nproc) > 1 ? 1 : 0 ))
AGENT_PIDS="$AGENT_PIDS $!"
unset STANDIN_LEVEL
timeout 300 "$BUILD/bisectctl" submit --repo demo --good v1.0 --bad main --workload bench \
	--budget-seconds 200 --watch > "$LAB/watch.out" 2>&1
state=$(q "SELECT state FROM jobs WHERE id = 2")
like "$state" '^(done|undecided)$' "the demo job ends (done or undecided on a loaded machine)"
# The engine's steps say how many commits hold each listed p: at its
# first search step no candidate is measured yet and every one of the
# 41 holds 1/41; a p listed more often than its count says is wrong.
is "$(python3 - "$LAB/bisectd.db" <<'PY'
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
n, = c.execute("SELECT COUNT(*) - 1 FROM job_commits WHERE job_id = 2").fetchone()
bad = []
tops = [json.loads(t) for t, in c.execute("SELECT top FROM decisions WHERE job_id = 2 AND top != '[]' ORDER BY id")]
for top in tops:
    for t in top:
        listed = sum(abs(u['p'] - t['p']) <= 1e-9 * t['p'] for u in top)
        if t.get('alike', 1) < listed or t.get('alike', 1) > n:
            bad.append(t)
first = tops[0] if tops else []
if not first or any(abs(t['p'] - 1 / n) > 1e-9 or t.get('alike') != n for t in first):
    bad.append(('first', first))
print(bad or 'ok')
PY
)" ok "the demo job's steps: each listed p's count of alike commits, all of them at the first"

# check_report FILE CV JOB: every row of the table against the job's samples
# (CV amean or hmean), each run divided by its agent's level in the report.
check_report() {
	api GET "/api/v1/jobs/$3" | cut -d' ' -f2- > "$LAB/job-$3.json"
	python3 - "$LAB/bisectd.db" "$1" "$2" "$3" "$LAB/job-$3.json" <<'EOF'
import json, math, re, sqlite3, sys
db, path, cv, job, doc = sys.argv[1:]
c = sqlite3.connect(db)
d = json.load(open(doc))
# An ended job's levels are its report's; a running job's, the engine's last step's (the job's "agents").
# A level not known yet (null): that agent's runs as measured.
level = {a['id']: 1 + a['level_pct'] / 100 for a in (d.get('report') or {}).get('agents') or d.get('agents', [])
         if a['level_pct'] is not None}
rows = 0
base = None
for line in open(path):
    m = re.match(r'  (good|parent|culprit|bad|p=[0-9.]+|[0-9.]{6}) +([0-9a-f]{12}) +([0-9.]+) \(([0-9.]+)\) +([-+][0-9.]+%)? +n=([0-9]+)', line)
    if not m:
        continue
    label, sha, hm, cvs, change, n = m.groups()
    idx, = c.execute("SELECT idx FROM job_commits WHERE job_id = ? AND sha LIKE ?", (job, sha + '%')).fetchone()
    x = [v / level.get(a, 1) for v, a in c.execute("SELECT s.value, t.agent_id FROM samples s JOIN tasks t ON "
         "t.id = s.task_id WHERE s.job_id = ? AND s.idx = ? AND s.value > 0", (job, idx))]
    h = len(x) / sum(1 / v for v in x)
    a = sum(x) / len(x)
    if cv == 'amean':
        sd = math.sqrt(sum((v - a) ** 2 for v in x) / (len(x) - 1)) if len(x) > 1 and min(x) != max(x) else 0
        want_cv = sd / a
    else:
        sd = math.sqrt(sum((1 / v - 1 / h) ** 2 for v in x) * h ** 4 / len(x)) if len(x) > 1 and min(x) != max(x) else 0
        want_cv = sd / h
    if label == 'good':
        base = h
    # Printed to 2 and 4 decimals: equal up to the rounding of the last digit (the C code sums
    # in another order, so a value at a rounding boundary may print either way).
    close = lambda got, want, d: abs(float(got) - want) <= 0.5 * 10 ** -d * (1 + 1e-6) + 1e-12 * abs(want)
    ok = (close(hm, h, 2) and close(cvs, want_cv, 4) and int(n) == len(x) and
          (change is None or base is None or close(change.strip().rstrip('%'), (h - base) / base * 100, 2)))
    if not ok:
        print('# %s: got %s (%s) %s n=%s, the samples give %.2f (%.4f) n=%d' % (label, hm, cvs, change, n, h, want_cv, len(x)))
        sys.exit(1)
    rows += 1
print(rows)
EOF
}

ctl report 2 > "$LAB/report.txt"
like "$(cat "$LAB/report.txt")" "CV: stddev / arithmetic mean of the runs" "the report says which CV it prints"
like "$(cat "$LAB/report.txt")" "agents: lab1 \\([0-9]+ runs, [^)]*\\), lab2 \\([0-9]+ runs, [^)]*\\)" \
	"... and the two agents' levels"
api GET /api/v1/jobs/2 | cut -d' ' -f2- > "$LAB/job-2.json"
out=$(python3 - "$LAB/job-2.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))['report']
lv = {a['name']: 1 + a['level_pct'] / 100 for a in r['agents']}
ratio = lv['lab2'] / lv['lab1']
rows = {k: r[k] for k in ('good', 'parent', 'culprit', 'bad') if r.get(k)}
g = rows['good']['hmean_ref']
far = [k for k, x in rows.items() if abs(x['hmean_ref'] / g - (1 if k in ('good', 'parent') else 0.72)) > 0.05]
print('lab2/lab1 %.3f' % ratio if abs(ratio - 0.85) <= 0.04 else 'lab2/lab1 %.3f, not 0.85' % ratio,
      'rows far from the code\'s level: %s' % (' '.join(far) or 'none'))
EOF
)
# The stand-in's runs have a CV of 2%: a row's hmean on 5-11 runs is good to
# about 1%, the level (from the commits both agents ran) to about 1%, so
# 5% is some four sd; pooled, a row was off by up to 15% times the
# difference of two commits' shares of lab2's runs.
like "$out" "^lab2/lab1 0\\.[0-9]+ rows far from the code's level: none$" \
	"lab2 reads 0.85 of lab1 in the report (within 0.04), and every row its code's level within 5% (1, or 0.72 from the culprit on)"
like "$(check_report "$LAB/report.txt" amean 2)" '^[2-9]$' "its HARMEAN (CV), change and n are the samples'"
ctl report 2 --cv hmean > "$LAB/report-h.txt"
like "$(cat "$LAB/report-h.txt")" "CV: mmtests' harmonic CoV" "--cv hmean says it prints the harmonic CoV"
like "$(check_report "$LAB/report-h.txt" hmean 2)" '^[2-9]$' "... and its numbers are mmtests' formula over the samples"

# The job's commits (its page, bisectctl show) at the same levels as the report.
out=$(python3 - "$LAB/bisectd.db" "$LAB/job-2.json" <<'EOF'
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
j = json.load(open(sys.argv[2]))
lv = {a['id']: 1 + a['level_pct'] / 100 for a in j['agents']}
bad = [] if j['agents'] == j['report']['agents'] else ['the job\'s agents are not the report\'s']
rows = 0
for r in j['commits']:
    x = [v / lv[a] for v, a in c.execute("SELECT s.value, t.agent_id FROM samples s JOIN tasks t ON t.id = s.task_id "
                                         "WHERE s.job_id = 2 AND s.idx = ? AND s.value > 0", (r['idx'],))]
    if not x:
        continue
    h = len(x) / sum(1 / v for v in x)
    rows += 1
    if abs(r.get('hmean_ref', 0) - h) > 1e-9 * h:
        bad.append('%d: %s, the samples give %.4f' % (r['idx'], r.get('hmean_ref'), h))
print('%d rows' % rows, '; '.join(bad) or 'all at the levels')
EOF
)
like "$out" "^([2-9]|[1-9][0-9]+) rows all at the levels$" "the job's commits have their hmean at the report's levels (hmean_ref)"
last=$(q "SELECT agents FROM decisions WHERE job_id = 2 ORDER BY id DESC LIMIT 1")
out=$(python3 -c "
import json, sys
r = json.load(open('$LAB/job-2.json'))['report']['agents']
d = {a['id']: a for a in json.loads(sys.argv[1])}
print(all(abs(d[a['id']]['level_pct'] - a['level_pct']) < 1e-9 and d[a['id']]['reference'] == a['reference'] for a in r))" "$last")
is "$out" True "the engine's last decision keeps the agents' levels the report gives"
like "$(ctl show 2 | sed -n "/^commits (at the agents' levels of its report):\$/{n;p;}")" "^  agents lab[12] " \
	"bisectctl show's commits say they are at those levels, and which"
# A commit of one run has no spread: its CV cell is "(-)", not a CV of 0
# (a perfectly quiet commit). Every other row has its CV.
out=$(ctl show 2 | sed -n '/^commits (/,/^$/p' | awk '/^  [0-9a-f]+ (good|bad|skipped|untested) / {
	for (i = 1; i <= NF; i++) if ($i ~ /^n=/) n = substr($i, 3)
	cv = ($0 ~ / \(-\) /) ? "-" : ($0 ~ / \([0-9]+\.[0-9][0-9][0-9][0-9]\) /) ? "cv" : "none"
	rows++; if (n == 1) ones++
	if ((n == 1 && cv != "-") || (n > 1 && cv != "cv")) bad = bad " " $1 "(n=" n "," cv ")"
} END { print rows + 0, ones + 0, (bad == "" ? "ok" : "bad:" bad) }')
like "$out" "^[0-9]+ [0-9]+ ok$" "bisectctl show: each commit of one run has '(-)' for its CV, the others a CV (rows, of one run, verdict: $out)"

# The charts at the same levels: the timeline says at whose (gnuplot's SVG keeps the title's text).
if command -v gnuplot > /dev/null; then
	ctl plot 2 --chart timeline -o "$LAB/timeline.svg" > /dev/null 2>&1
	like "$(tr -d '\n' < "$LAB/timeline.svg")" "runs and hmeans at lab[12]&#39;s level: lab[12] [-+][0-9.]+%|runs and hmeans at lab[12]'s level: lab[12] [-+][0-9.]+%" \
		"the timeline chart has its runs and hmeans at the reference's level, and says so"
else
	tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP the timeline chart: gnuplot missing (make deps installs gnuplot-nox)"
fi

ctl export 2 --csv -o "$LAB/samples.csv"
ok $? "export -o writes the CSV"
out=$(python3 - "$LAB/bisectd.db" "$LAB/samples.csv" <<'EOF'
import csv, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
want = c.execute("""SELECT c.sha, s.idx, c.subject, s.task_id, coalesce(a.name, ''), s.attempt, s.run, s.value,
    s.unit, coalesce(s.error, ''), s.created FROM samples s JOIN job_commits c ON c.job_id = s.job_id AND c.idx = s.idx
    JOIN tasks t ON t.id = s.task_id LEFT JOIN agents a ON a.id = t.agent_id WHERE s.job_id = 2 ORDER BY s.id""").fetchall()
with open(sys.argv[2], newline='') as f:
    got = list(csv.reader(f))
assert got[0] == 'commit,idx,subject,task,agent,attempt,run,value,unit,error,time'.split(','), got[0]
got = got[1:]
assert len(got) == len(want), (len(got), len(want))
for g, w in zip(got, want):
    g = [g[0], int(g[1]), g[2], int(g[3]), g[4], int(g[5]), int(g[6]), float(g[7]), g[8], g[9], int(g[10])]
    assert g == list(w), (g, w)
print(len(got))
EOF
)
is "$out" "$(q "SELECT count(*) FROM samples WHERE job_id = 2")" "every sample is in the CSV, each field the store's"

# running_view: a job still running, its agents stopped once the engine
# has kept both agents' levels with a step (the first steps may not know
# lab2's: each agent ran one end): its report and bisectctl show give the
# commits at those levels, the report's rows recomputed from the samples
# and the levels of the job's last step.
running_view() {
	R=$(ctl submit --repo demo --good v1.0 --bad main --workload bench --budget-seconds 600 | sed -n 's/^job \([0-9]*\).*/\1/p')
	# Until a step kept both levels, or the job ended without one (then the checks below are skipped).
	for _ in $(seq 1 600); do
		[ "$(q "SELECT count(*) FROM decisions WHERE job_id = $R AND agents IS NOT NULL AND agents NOT LIKE '%null%'")" -gt 0 ] && break
		[ "$(q "SELECT state IN ('queued', 'running') FROM jobs WHERE id = $R")" = 1 ] || break
		sleep 0.2
	done
	for p in $AGENT_PIDS; do kill "$p" 2> /dev/null; done
	for p in $AGENT_PIDS; do while kill -0 "$p" 2> /dev/null; do sleep 0.1; done; done
	st=$(q "SELECT state FROM jobs WHERE id = $R")
	if [ "$st" != running ]; then
		for d in "a running job's report" "... its agents' levels" "... its rows" "bisectctl show of a running job"; do
			tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP $d: job $R ended ($st) before its agents were stopped"
		done
		return
	fi
	ctl report "$R" > "$LAB/report-running.txt"
	is "$?" 2 "a running job's report exits 2 (job $R, its agents stopped after a step with both)"
	like "$(cat "$LAB/report-running.txt")" "agents: lab1 \\([0-9]+ runs, [^)]*\\), lab2 \\([0-9]+ runs, [^)]*\\)" \
		"... and gives the two agents' levels at the engine's last step"
	like "$(grep '^agents:' "$LAB/report-running.txt")" "lab2 \\([0-9]+ runs, [-+][0-9.]+%\\)|lab1 \\([0-9]+ runs, [-+][0-9.]+%\\)" \
		"... the other agent's level known"
	like "$(check_report "$LAB/report-running.txt" amean "$R")" '^[2-9]$' \
		"... its rows the samples at those levels"
	like "$(cat "$LAB/report-running.txt")" "^  p=0\\.[0-9]{3} +[0-9a-f]{12} " \
		"... and the engine's most probable commits, measured or not yet"
	like "$(ctl show "$R")" "commits \\(at the agents' levels of the engine's last step\\):" \
		"bisectctl show of a running job says its commits are at the last step's levels"
	ctl cancel "$R" > /dev/null
}

# The mail needs a culprit. A loaded machine may leave the demo job
# undecided within its budget; the culprit against its parent alone (the
# ends and the confirmation) decides sooner.
MJ=2
if [ "$state" != done ]; then
	timeout 400 "$BUILD/bisectctl" submit --repo demo --good "$(git -C "$LAB/demo.git" rev-parse "$culprit~1")" --bad "$culprit" --workload bench \
		--budget-seconds 300 --watch > "$LAB/watch-pair.out" 2>&1
	MJ=$(q "SELECT max(id) FROM jobs")
	state=$(q "SELECT state FROM jobs WHERE id = $MJ")
	echo "# the demo job ended undecided: the mail is of job $MJ, the pair, which ended $state"
fi
if [ "$state" != done ]; then
	for d in "the mail names the culprit" "the reproduce submit runs" "the by-hand commands run"; do
		tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP $d: the jobs ended $state on this machine's noise"
	done
	running_view
	tap_plan "$tap_n"
	tap_done
	exit
fi

# --- the mail -----------------------------------------------------------------

if [ "$MJ" != 2 ]; then
	ctl report "$MJ" > "$LAB/report-pair.txt"
	like "$(check_report "$LAB/report-pair.txt" amean "$MJ")" '^[4-9]$' \
		"the pair's report, parent and culprit rows included, is the samples'"
fi

ctl report $MJ --mail > "$LAB/mail.txt"
ok $? "report --mail exits 0 for a job with a culprit"
mail=$(cat "$LAB/mail.txt")
subject=$(git -C "$LAB/demo.git" log -1 --format=%s "$culprit")
author=$(git -C "$LAB/demo.git" log -1 --format='%an <%ae>' "$culprit")
api GET "/api/v1/jobs/$MJ" | cut -d' ' -f2- > "$LAB/job-$MJ.json"
change=$(python3 -c "
import json, sqlite3, sys
c = sqlite3.connect('$LAB/bisectd.db')
cul, = c.execute('SELECT culprit FROM jobs WHERE id = $MJ').fetchone()
par, = c.execute('SELECT parents FROM job_commits WHERE job_id = $MJ AND idx = ?', (cul,)).fetchone()
par = par.strip('[]')
par = int(par.split(',')[0]) if par else 0  # the good end when no parent is inside the range, as the engine has it
lv = {a['id']: 1 + a['level_pct'] / 100 for a in json.load(open('$LAB/job-$MJ.json'))['report'].get('agents', [])}
h = lambda i: (lambda x: len(x) / sum(1 / v for v in x))([v / lv.get(a, 1) for v, a in c.execute('SELECT s.value, t.agent_id FROM samples s JOIN tasks t ON t.id = s.task_id WHERE s.job_id = $MJ AND s.idx = ? AND s.value > 0', (i,))])
print('%+.1f' % ((h(cul) - h(par)) / h(par) * 100))")
like "$mail" "bisectd noticed a \\$change% regression of bench.ops/s on:" "the mail names the regression, its change the samples'"
like "$mail" "commit: $culprit \\(\"$subject\"\\)" "... the culprit's id and subject"
like "$mail" "author: $author" "... its author"
like "$mail" "95% interval [-+][0-9.]+% to [-+][0-9.]+%" "... the change's interval"
like "$mail" "lab1 \\(labels: lab\\): [0-9]+ tasks" "... the machines"
like "$mail" "lab[12] \\(labels: lab\\): [0-9]+ tasks, [0-9]+ runs of this job, the reference: the numbers below are at its level" \
	"... one the reference, whose level the numbers are at"
like "$mail" "lab[12] \\(labels: lab\\): [0-9]+ tasks, [0-9]+ runs of this job, reading [-+][0-9.]+% against lab[12]" \
	"... the other with its level against it"
like "$mail" "^		sh $TOP/tests/lib/standin-bench\.sh\$" "... the workload's command line"
like "$mail" "variant: none" "... the variant"
like "$mail" "%stddev     %change         %stddev" "... an LKP table"
like "$mail" "\\$change%.*bench.ops/s \\(hmean\\)" "... whose first row is the change"

# The reproduce commands, run: the submit against this bisectd, then by hand.
parent=$(q "SELECT c.sha FROM job_commits c JOIN job_commits u ON u.job_id = c.job_id
	WHERE c.job_id = $MJ AND u.idx = (SELECT culprit FROM jobs WHERE id = $MJ)
	AND c.idx = CASE WHEN u.parents = '[]' THEN 0 ELSE CAST(trim(u.parents, '[]') AS INTEGER) END")
submit=$(sed -n 's/^\tbisectctl submit /submit /p' "$LAB/mail.txt")
like "$submit" "--good $parent --bad $culprit --workload bench" "the mail's submit line is the culprit against its parent"
eval "ctl $submit" > "$LAB/resubmit.out" 2>&1
ok $? "the reproduce submit runs against this bisectd"
RJ=$(q "SELECT max(id) FROM jobs")
is "$(q "SELECT bad FROM jobs WHERE id = $RJ")" "$culprit" "... and makes a job of the pair"
ctl cancel "$RJ" > /dev/null 2>&1
sed -n '/^\t# by hand/,/^$/s/^\t//p' "$LAB/mail.txt" | grep -v '^#' > "$LAB/by-hand.sh"
(mkdir -p "$LAB/hand" && cd "$LAB/hand" && sh -e "$LAB/by-hand.sh") > "$LAB/by-hand.out" 2>&1
ok $? "the by-hand commands run (clone, checkout, build, run)"
is "$(grep -c '^throughput: [0-9]' "$LAB/by-hand.out")" 2 "... and measure the culprit and its parent"
is "$(git -C "$LAB/hand/bisectd-repro" rev-parse HEAD)" "$parent" "... the checkout ending at the parent"

running_view

tap_plan "$tap_n"
tap_done
