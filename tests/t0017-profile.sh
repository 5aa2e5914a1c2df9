#!/bin/sh
# t0017: perf profiles at the culprit (a workload's `profile: true`). On the
# local lab (boot none), a job on a four-commit C repository whose culprit
# moves the benchmark's work from fast_mix() to a slower slow_mix(): it ends
# done with that culprit, after one profile task on its parent and one on
# it, recorded with the real /usr/bin/perf (perf record -g -e cpu-clock, a
# software event), whose samples never reach the engine; the report and
# the mail end with the profile diff (slow_mix "- -> NN%"). Then the same
# job on an agent whose `perf` is a stand-in that fails as perf does
# where perf_event_paranoid forbids recording: the job still ends done with
# the same culprit, and the report says why the profiles failed. Last, an
# agent whose perf stand-in hangs: the job holds its verdict, and once the
# hold is past its limit (aged in the store rather than waited for) the
# sweep ends it done with both profiles failed as not recorded in time.
# Needs perf that can record here (else a TAP skip with the reason), cc,
# sqlite3. About 60-90 s on the 2-core VM (the hanging stand-in's sleep
# may outlive the test by up to 40 s).
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/lab.sh"
. "$(dirname "$0")/lib/profrepo.sh"

command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
command -v cc > /dev/null || skip_all "no C compiler for the test's project"
profrepo_need_perf

tap_plan 30
LAB=$TEST_DIR/lab
trap 'lab_stop; rm -rf "$TEST_DIR"' EXIT
mkdir -p "$LAB"
ctl() { "$BUILD/bisectctl" "$@"; }
. "$TOP/tests/lib/mkrepo.sh"

# --- the repository: good, harmless, culprit, harmless ------------------------

R=$LAB/prof.git
culprit=$(profrepo_make "$R")

LAB_RUNS=3
lab_config "$R" "  noperf:
    labels: [noperf]
  hang:
    labels: [hang]"
# The workload of the lab's config, with profile: true.
sed -i 's/^    run_timeout: 30$/    run_timeout: 30\n    profile: true/' "$LAB/bisectd.yaml"
grep -q 'profile: true' "$LAB/bisectd.yaml"
ok $? "the workload asks for profiles"
lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }
lab_start_agent lab1 0

# --- a job with a culprit: profiled, then done --------------------------------

timeout 240 "$BUILD/bisectctl" submit --repo demo --good v1.0 --bad main --workload bench --pool local \
	--budget-seconds 200 --watch > "$LAB/watch1.out" 2>&1
is "$(q "SELECT state FROM jobs WHERE id = 1")" done "the job ends done"
is "$(q "SELECT c.sha FROM jobs j JOIN job_commits c ON c.job_id = j.id AND c.idx = j.culprit WHERE j.id = 1")" \
	"$culprit" "... with the culprit"
st=$(q "SELECT group_concat(role || ':' || state, ' ') FROM (SELECT * FROM profiles WHERE job_id = 1 ORDER BY id)")
is "$st" "parent:ok culprit:ok" "both profiles are in"
[ "$st" = "parent:ok culprit:ok" ] ||
	q "SELECT '#   ' || role || ': ' || state || ' ' || coalesce(error, '-') FROM profiles WHERE job_id = 1"
is "$(q "SELECT count(*) FROM profiles p JOIN tasks t ON t.id = p.task_id WHERE p.job_id = 1 AND t.state = 'done'
	AND t.idx = p.idx AND (p.role = 'culprit') = (p.idx = (SELECT culprit FROM jobs WHERE id = 1))")" 2 \
	"... each recorded by a done task on its own commit"
is "$(q "SELECT count(*) FROM samples s JOIN profiles p ON p.task_id = s.task_id")" 0 \
	"the runs under perf are not samples of the bisection"
is "$(q "SELECT count(DISTINCT t.agent_id) FROM profiles p JOIN tasks t ON t.id = p.task_id WHERE p.job_id = 1")" 1 \
	"both on one agent"
like "$(q "SELECT report FROM profiles WHERE job_id = 1 AND role = 'culprit'")" "# Samples: .* of event 'cpu-clock'" \
	"the stored profile is perf report's own text"
# The verdict waited for the profiles: held, then the end.
is "$(q "SELECT (SELECT min(id) FROM events WHERE job_id = 1 AND kind = 'profile') <
	(SELECT id FROM events WHERE job_id = 1 AND kind = 'end')")" 1 "the profiles came before the job's end"
ls "$LAB"/agents/lab1/logs/task-*-culprit.perf.data > /dev/null 2>&1
ok $? "the agent keeps perf.data beside its logs"

report=$(ctl report 1)
echo "$report" > "$LAB/report1.txt"
like "$report" "perf profiles, the culprit against its parent \(perf record -g -e cpu-clock" \
	"the report has the profile section"
like "$report" "parent +[0-9a-f]{12}: [0-9]+ samples, [0-9]+ symbols, on lab1" "... the parent's profile"
like "$report" "\[\.\] slow_mix +- -> +[0-9]+\.[0-9]+%" "... slow_mix appears in the culprit's"
like "$report" "\[\.\] fast_mix +[0-9]+\.[0-9]+% ->  +-" "... and fast_mix is gone from it"
first=$(echo "$report" | sed -n '/the symbols whose share changed most:/{n;p;}')
like "$first" "(slow|fast)_mix" "the symbol that moved most comes first"
mail=$(ctl report 1 --mail)
like "$mail" "	perf profiles, the culprit against its parent" "the mail has it too"
like "$mail" "	    \[\.\] slow_mix" "... with the diff"
job=$(api GET /api/v1/jobs/1)
like "$job" '"profiles": *\{' "the job's report in the API has its profiles"
like "$job" '"diff": *\[\{' "... and their diff"

# --- the same range where perf cannot record: the culprit stands -------------

mkdir -p "$LAB/fakebin"
# A stand-in for perf where perf_event_paranoid forbids it: perf's message, perf's exit status.
cat > "$LAB/fakebin/perf" <<'EOF'
#!/bin/sh
echo "Error: Access to performance monitoring and observability operations is limited." >&2
echo "Consider adjusting /proc/sys/kernel/perf_event_paranoid setting" >&2
exit 255
EOF
chmod +x "$LAB/fakebin/perf"
cat > "$LAB/lab2.yaml" <<EOC
coordinator: $LAB_URL
name: lab2
labels: [noperf]
workdir: $LAB/agents/lab2
heartbeat: 2
poll_wait: 5
cpu: 0
measure_lock: $LAB/measure.lock
enrol_token_file: $LAB/enrol.token
EOC
PATH="$LAB/fakebin:$PATH" "$BUILD/bisect-agent" -f "$LAB/lab2.yaml" > "$LAB/lab2.log" 2>&1 &
LAB_PIDS="$LAB_PIDS $!"
timeout 240 "$BUILD/bisectctl" submit --repo demo --good v1.0 --bad main --workload bench --pool noperf \
	--budget-seconds 200 --watch > "$LAB/watch2.out" 2>&1
is "$(q "SELECT state FROM jobs WHERE id = 2")" done "without perf, the job still ends done"
is "$(q "SELECT c.sha FROM jobs j JOIN job_commits c ON c.job_id = j.id AND c.idx = j.culprit WHERE j.id = 2")" \
	"$culprit" "... with the same culprit"
is "$(q "SELECT group_concat(role || ':' || state, ' ') FROM (SELECT * FROM profiles WHERE job_id = 2 ORDER BY id)")" \
	"parent:failed culprit:failed" "both profiles failed"
is "$(q "SELECT state FROM job_commits WHERE job_id = 2 AND idx = (SELECT culprit FROM jobs WHERE id = 2)")" bad \
	"the culprit is not skipped for it"
report=$(ctl report 2)
echo "$report" > "$LAB/report2.txt"
# The profile section only, so that a failure shows it (like prints 20 lines), and the rows.
sect=$(echo "$report" | sed -n '/^perf profiles/,$p')
re="the parent's profile \([0-9a-f]{12}\) failed: perf report of the runs failed \(exit 255\): .*perf_event_paranoid"
like "$sect" "$re" "the report says why, in perf's words"
printf '%s' "$sect" | grep -Eq -- "$re" ||
	q "SELECT role, state, task_id, error FROM profiles WHERE job_id = 2" | sed 's/^/#   profile: /'
like "$report" "no diff: it needs both profiles; the culprit stands" "... and that the culprit stands"

# --- a profile that never comes: the verdict is not held hostage ------------

mkdir -p "$LAB/hangbin"
# A stand-in for a perf that hangs (bounded, so that it does not outlive the test for long).
printf '#!/bin/sh\nexec sleep 40\n' > "$LAB/hangbin/perf"
chmod +x "$LAB/hangbin/perf"
sed -e 's/^name: lab2$/name: lab3/' -e 's/^labels: \[noperf\]$/labels: [hang]/' -e 's|agents/lab2$|agents/lab3|' \
	-e 's/^cpu: 0$/cpu: '$(( $(nproc) > 1 ? 1 : 0 ))'/' "$LAB/lab2.yaml" > "$LAB/lab3.yaml"
PATH="$LAB/hangbin:$PATH" "$BUILD/bisect-agent" -f "$LAB/lab3.yaml" > "$LAB/lab3.log" 2>&1 &
LAB_PIDS="$LAB_PIDS $!"
ctl submit --repo demo --good v1.0 --bad main --workload bench --pool hang --budget-seconds 200 > /dev/null
held=0
for _ in $(seq 1 240); do
	[ "$(q "SELECT count(*) FROM profile_holds WHERE job_id = 3")" = 1 ] && held=1 && break
	sleep 0.5
done
is "$held" 1 "the third job names its culprit and holds its verdict"
sleep 2
is "$(q "SELECT state FROM jobs WHERE id = 3")" running "... while its profiles do not come"
sqlite3 "$LAB/bisectd.db" ".timeout 5000" "UPDATE profile_holds SET created = created - 100000 WHERE job_id = 3"
for _ in $(seq 1 60); do
	[ "$(q "SELECT state FROM jobs WHERE id = 3")" = done ] && break
	sleep 0.5
done
is "$(q "SELECT state FROM jobs WHERE id = 3")" done "past the hold's limit the sweep ends it done"
is "$(q "SELECT group_concat(role || ':' || state, ' ') FROM (SELECT * FROM profiles WHERE job_id = 3 ORDER BY id)")" \
	"parent:failed culprit:failed" "... its profiles failed"
like "$(ctl report 3)" "the culprit's profile \([0-9a-f]{12}\) failed: not recorded within 3600 s of the culprit being named" \
	"... as not recorded in time"

tap_done
