#!/bin/sh
# t0007: a finished demo job's four charts in each format, through
# bisectctl plot and the API (the same bytes: one implementation, in
# bisectd), kept until the job changes; and every bad input refused with
# the API's JSON error and no file written: a job without samples, an
# unknown job, chart or format, gnuplot hanging and gnuplot missing.
# CHARTS_KEEP=DIR keeps the charts drawn. The bench is the stand-in that
# draws its numbers (tests/lib/standin-bench.sh).
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/lab.sh"

command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
command -v gnuplot > /dev/null || skip_all "gnuplot missing (make deps installs gnuplot-nox)"
command -v file > /dev/null || skip_all "file(1) missing"
LAB=$TEST_DIR/lab
OUT=$TEST_DIR/out
trap 'lab_stop; rm -rf "$TEST_DIR"' EXIT
mkdir -p "$LAB" "$OUT"
CTL=$BUILD/bisectctl
LAB_STANDIN=1
size() { wc -c < "$1" | tr -d ' '; }

sh "$TOP/tests/lib/mkdemo.sh" "$LAB/demo.git" > "$LAB/mkdemo.out"
# A pool no agent is in: a job there stays queued, without samples.
lab_config "$LAB/demo.git" "  idle:
    labels: [nobody]
charts: $LAB/charts"
lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }
lab_start_agent lab1 0
lab_start_agent lab2 $(( $(nproc) > 1 ? 1 : 0 ))

timeout 300 "$CTL" submit --repo demo --good v1.0 --bad main --workload bench --budget-seconds 200 \
	--watch > "$LAB/watch1.out" 2>&1
# A second job of the same range, for the compare chart: its ends are
# enough (the bars it has not measured are left out), so it is cancelled
# once it has them.
"$CTL" submit --repo demo --good v1.0 --bad main --workload bench > "$LAB/submit2.out" 2>&1
n=$(q "SELECT max(idx) FROM job_commits WHERE job_id = 2")
for _ in $(seq 1 300); do
	[ "$(q "SELECT count(DISTINCT idx) FROM samples WHERE job_id = 2 AND idx IN (0, $n)")" = 2 ] && break
	sleep 0.5
done
"$CTL" cancel 2 > /dev/null
state=$(q "SELECT state FROM jobs WHERE id = 1")
like "$state" '^(done|undecided)$' "job 1 ended done or undecided (it is $state)"
# The commit the charts mark: the culprit, or undecided the most probable one.
mark=$(q "SELECT coalesce((SELECT culprit FROM jobs WHERE id = 1), (SELECT json_extract(top, '\$[0].idx')
	FROM decisions WHERE job_id = 1 AND json_array_length(top) > 0 ORDER BY id DESC LIMIT 1))")
short=$(q "SELECT substr(sha, 1, 12) FROM job_commits WHERE job_id = 1 AND idx = $mark")
like "$short" '^[0-9a-f]{12}$' "the culprit (or most probable commit) is known: $short"

# check_file FILE FORMAT DESCRIPTION: its type by file(1) and its size.
check_file() {
	case $2 in
	svg) type='SVG Scalable Vector Graphics image' ;;
	png) type='PNG image data' ;;
	pdf) type='PDF document' ;;
	esac
	like "$(file -b "$1" 2>&1)" "^$type" "$3: a $2 file"
	n=$(size "$1")
	[ "$n" -gt 2000 ] && [ "$n" -lt 3000000 ]
	ok $? "$3: between 2 kB and 3 MB ($n bytes)"
}

for chart in timeline distribution compare posterior; do
	for fmt in svg png pdf; do
		f=$OUT/$chart.$fmt
		out=$("$CTL" plot 1 --chart $chart -o "$f" 2>&1)
		is "$?" 0 "bisectctl plot 1 --chart $chart -o $chart.$fmt exits 0"
		check_file "$f" $fmt "$chart.$fmt"
	done
	grep -q "$short" "$OUT/$chart.svg"
	ok $? "$chart.svg names the culprit $short"
done
[ -n "${CHARTS_KEEP:-}" ] && mkdir -p "$CHARTS_KEEP" && cp "$OUT"/* "$CHARTS_KEEP"/
grep -q "culprit $short\|likely $short" "$OUT/timeline.svg"
ok $? "the timeline labels it as the culprit (or the likely one)"
grep -q "no variant (job 2)" "$OUT/compare.svg"
ok $? "the compare chart has job 2 of the same range beside job 1"
grep -q "over the [0-9]* decisions" "$OUT/posterior.svg"
ok $? "the posterior chart shows the decisions over time"

# The API serves the same bytes, with its type.
out=$(curl -sS -o "$OUT/api.svg" -w '%{http_code} %{content_type}' "$LAB_URL/api/v1/jobs/1/charts/timeline.svg")
is "$out" "200 image/svg+xml" "GET /api/v1/jobs/1/charts/timeline.svg: 200 image/svg+xml"
cmp -s "$OUT/api.svg" "$OUT/timeline.svg"
ok $? "... the same bytes as bisectctl plot wrote"
out=$(curl -sS -o "$OUT/api.png" -w '%{http_code} %{content_type}' "$LAB_URL/api/v1/jobs/1/charts/posterior.png")
is "$out" "200 image/png" "GET .../charts/posterior.png: 200 image/png"
cmp -s "$OUT/api.png" "$OUT/posterior.png"
ok $? "... the same bytes (a PNG, NUL bytes and all)"

# Cached until the job changes: one file per chart and format, kept as it is.
cached=$(ls "$LAB/charts/job-1" | grep -c '^timeline-[0-9a-f]*\.svg$')
is "$cached" 1 "the timeline's SVG is cached once under the charts folder"
before=$(ls -i "$LAB/charts/job-1"/timeline-*.svg)
curl -sS -o /dev/null "$LAB_URL/api/v1/jobs/1/charts/timeline.svg"
is "$(ls -i "$LAB/charts/job-1"/timeline-*.svg)" "$before" "... and served from the cache again"
ls -a "$LAB/charts" | grep -q '^\.draw-' && leftover=1 || leftover=0
is "$leftover" 0 "no scratch folder is left behind"
# A new sample changes the job: the chart is drawn again, the old one goes.
q "INSERT INTO samples (task_id, attempt, run, job_id, idx, value, unit, created)
	SELECT id, attempt, 999, job_id, idx, 1.0, 'ops/s', 0 FROM tasks WHERE job_id = 1 AND state = 'done' LIMIT 1"
curl -sS -o /dev/null "$LAB_URL/api/v1/jobs/1/charts/timeline.svg"
after=$(ls -i "$LAB/charts/job-1"/timeline-*.svg)
[ "$after" != "$before" ] && [ "$(ls "$LAB/charts/job-1" | grep -c '^timeline-.*\.svg$')" = 1 ]
ok $? "after a new sample the chart is drawn again, and the stale one removed"

# --- bad input ------------------------------------------------------------
"$CTL" submit --repo demo --good v1.0 --bad main --workload bench --pool idle > "$LAB/submit3.out" 2>&1
out=$(api GET /api/v1/jobs/3/charts/timeline.svg)
like "$out" '^409 .*"error": *"job 3 has no measured runs yet' "a job without samples: 409 with a message"
"$CTL" plot 3 --chart timeline -o "$OUT/none.svg" > "$LAB/plot3.out" 2>&1
is "$?" 2 "bisectctl plot of a job without samples exits 2"
like "$(cat "$LAB/plot3.out")" "no measured runs yet" "... saying why"
[ ! -e "$OUT/none.svg" ]
ok $? "... and writes no file"
out=$(api GET /api/v1/jobs/999/charts/timeline.svg)
like "$out" '^404 .*"error": *"job 999 does not exist' "an unknown job: 404"
out=$(api GET /api/v1/jobs/1/charts/pie.svg)
like "$out" "^404 .*\"error\": *\"no chart 'pie': the charts are timeline, distribution, compare, posterior" \
	"an unknown chart: 404 naming the charts"
out=$(api GET /api/v1/jobs/1/charts/timeline.jpg)
like "$out" "^404 .*\"error\": *\"no chart format 'jpg': svg, png or pdf" "an unknown format: 404"
out=$(api GET /api/v1/jobs/1/charts/timeline.svg/more)
like "$out" '^404 .*"error"' "a longer path: 404"
"$CTL" plot 1 --chart pie -o "$OUT/pie.svg" > "$LAB/plotpie.out" 2>&1
is "$?" 2 "bisectctl plot --chart pie exits 2"
[ ! -e "$OUT/pie.svg" ]
ok $? "... and writes no file"
"$CTL" plot 1 --chart timeline -o "$OUT/chart.jpg" > "$LAB/plotjpg.out" 2>&1
is "$?" 2 "bisectctl plot -o chart.jpg exits 2"
like "$(cat "$LAB/plotjpg.out")" "extension says the format" "... saying the extension names the format"
"$CTL" plot 1 -o "$OUT/x.svg" > /dev/null 2>&1
is "$?" 2 "bisectctl plot without --chart exits 2"

# gnuplot hanging: killed at chart_timeout, a 504, nothing written.
lab_stop
cat > "$LAB/hang-gnuplot" <<EOF
#!/bin/sh
echo \$\$ > "$LAB/hang.pid"
exec sleep 300
EOF
chmod +x "$LAB/hang-gnuplot"
lab_config "$LAB/demo.git" "charts: $LAB/charts2
gnuplot: $LAB/hang-gnuplot
chart_timeout: 2"
lab_start_bisectd || { echo "Bail out! bisectd did not restart"; exit 1; }
t0=$(date +%s)
out=$(api GET /api/v1/jobs/1/charts/timeline.svg)
t1=$(date +%s)
like "$out" '^504 .*"error": *"gnuplot did not draw the chart within 2 s' "gnuplot hanging: 504 with a message"
[ $((t1 - t0)) -lt 15 ]
ok $? "... after the deadline, not a hung request ($((t1 - t0)) s)"
pid=$(cat "$LAB/hang.pid" 2>/dev/null)
[ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null
ok $? "... and the hung gnuplot is gone"
echo old > "$OUT/keep.svg"
"$CTL" plot 1 --chart timeline -o "$OUT/keep.svg" > "$LAB/plothang.out" 2>&1
is "$?" 3 "bisectctl plot exits 3 when gnuplot hangs"
is "$(cat "$OUT/keep.svg")" old "... and leaves the file that was there as it was"
ls "$OUT" | grep -q 'keep.svg.tmp' && partial=1 || partial=0
is "$partial" 0 "... with no temporary beside it"
is "$(find "$LAB/charts2" -type f 2>/dev/null | wc -l | tr -d ' ')" 0 "no chart and no half-written file is kept"

# gnuplot missing: a 500 that says so.
lab_stop
lab_config "$LAB/demo.git" "charts: $LAB/charts2
gnuplot: $LAB/no-such-gnuplot"
lab_start_bisectd || { echo "Bail out! bisectd did not restart"; exit 1; }
out=$(api GET /api/v1/jobs/1/charts/posterior.png)
like "$out" "^500 .*\"error\": *\"cannot draw charts: '$LAB/no-such-gnuplot' is not installed" \
	"gnuplot missing: 500 saying it is not installed"
"$CTL" plot 1 --chart posterior -o "$OUT/missing.png" > "$LAB/plotmissing.out" 2>&1
is "$?" 3 "bisectctl plot exits 3 when gnuplot is missing"
[ ! -e "$OUT/missing.png" ]
ok $? "... and writes no file"

tap_plan "$tap_n"
tap_done
