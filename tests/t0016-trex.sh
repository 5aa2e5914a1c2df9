#!/bin/sh
# t0016: the trex workload against a stand-in TRex server
# (tests/lib/trex-standin.c: TRex's sync protocol, JSON-RPC 2.0 over
# ZeroMQ, with replies of TRex's shapes; it sends no packets). The
# stand-in's ports receive what a "device under test" forwards, a pps
# number each commit of a test repository sets (its build copies the
# commit's dut-pps to a file the stand-in reads), so a bisection through
# bisectd, one agent (boot none) and bisect-trex finds the commit that
# lowered it. The client alone first: a run's rates, then each fault of
# the server (acquire and start_traffic refused, a stall, a dropped
# connection, no server, a port left acquired) as a failed run with the
# server's words or the client's reason; then a refused acquire through
# the agent fails the job with the server's message, never a verdict.
# Needs libzmq (make deps); about 50 s here (60 s under ASan), 30 of them
# the bisection.
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/lab.sh"

[ -x "$BUILD/bisect-trex" ] || skip_all "no $BUILD/bisect-trex (make)"
[ -x "$BUILD/tests/trex-standin" ] || skip_all "no $BUILD/tests/trex-standin (make integration)"
command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
LAB=$TEST_DIR/lab
mkdir -p "$LAB"
SPID=""
trap 'lab_stop; [ -n "$SPID" ] && kill "$SPID" 2>/dev/null; rm -rf "$TEST_DIR"' EXIT
PROFILE=$TOP/etc/examples/trex-udp64.json
SYNC=$(lab_free_port)
DUT=$LAB/dut-pps
FAULT=$LAB/fault
RLOG=$LAB/requests.log
: > "$FAULT"
echo 2000000 > "$DUT"
"$BUILD/tests/trex-standin" --port "$SYNC" --ports 2 --dut-file "$DUT" --fault-file "$FAULT" \
	--log "$RLOG" 2> "$LAB/standin.log" &
SPID=$!
trex() {
	"$BUILD/bisect-trex" --sync-port "$SYNC" --profile "$PROFILE" --duration 1 "$@" 2> "$LAB/client.err"
}
# field NAME JSON: a number of the client's output
field() { printf '%s' "$2" | sed -n "s/.*\"$1\":\([0-9.e+]*\).*/\1/p"; }
# within GOT WANT: GOT is WANT +- 1% (the stand-in's jitter is 0.5%)
within() { awk -v g="$1" -v w="$2" 'BEGIN { exit !(g >= w * 0.99 && g <= w * 1.01) }'; }

# --- the client alone ----------------------------------------------------

out=$(trex --ports 0,1 --rate 3mpps)
is "$?" 0 "bisect-trex measures through the stand-in"
like "$out" '^\{"ok":true,' "... and prints its JSON result"
within "$(field tx_pps "$out")" 6000000; ok $? "tx_pps is the rate asked on both ports ($(field tx_pps "$out"))"
within "$(field rx_pps "$out")" 4000000; ok $? "rx_pps is what the device forwards ($(field rx_pps "$out"))"
is "$(tr '\n' ' ' < "$RLOG")" "api_sync_v2 acquire acquire remove_all_streams add_stream remove_all_streams add_stream \
get_port_stats get_port_stats start_traffic start_traffic get_global_stats get_port_stats get_port_stats \
stop_traffic stop_traffic release release " "the client's requests, in TRex's order"

out=$(trex --ports 0 --rate 50%)
within "$(field tx_pps "$out")" 5000000; ok $? "a percentage is of the port's line rate"

echo "acquire refuse" > "$FAULT"
out=$(trex --ports 0,1 --rate 1mpps)
is "$?" 1 "a refused acquire fails the run"
like "$out" "\"step\":\"acquire\",\"error\":\"port 0: port is already taken by 'alice' \(code -32000\)\"" \
	"... with the server's message"
like "$(cat "$LAB/client.err")" "port is already taken by 'alice'" "... on stderr too"

echo "start_traffic refuse port is active - please stop the port before starting it" > "$FAULT"
: > "$RLOG"
out=$(trex --ports 0 --rate 1mpps)
like "$out" '"step":"start_traffic","error":"port 0: port is active - please stop the port' \
	"a refused start_traffic fails the run with the server's message"
like "$(tr '\n' ' ' < "$RLOG")" "start_traffic stop_traffic release $" "... and the ports are stopped and released"

echo "start_traffic stall" > "$FAULT"
out=$(trex --ports 0 --rate 1mpps --timeout 2)
is "$?" 1 "a server that stalls fails the run"
like "$out" "no reply to 'start_traffic' from tcp://127.0.0.1:$SYNC within 2.0 s \(the server accepted" \
	"... after the client's timeout, saying so"

echo "get_port_stats drop" > "$FAULT"
out=$(trex --ports 0 --rate 1mpps --timeout 5)
is "$?" 1 "a server that drops the connection fails the run"
like "$out" "closed the connection without answering 'get_port_stats'" "... naming the request it dropped"
: > "$FAULT"

# A run whose release is refused leaves its ports acquired: another user
# finds them taken (the stand-in's ownership, as TrexPort::acquire), the
# same user's next run takes its stale session over.
echo "release refuse" > "$FAULT"
out=$(trex --ports 0 --rate 1mpps)
like "$out" '"step":"release","error":"port 0: refused by the stand-in' "a refused release fails the run"
: > "$FAULT"
out=$(trex --ports 0 --rate 1mpps --user alice)
like "$out" "\"step\":\"acquire\",\"error\":\"port 0: port is already taken by 'bisectd'" \
	"... the port stays taken: another user is refused with TRex's message"
out=$(trex --ports 0 --rate 1mpps)
like "$out" '^\{"ok":true,.*"took_over":true' "... and the same user's next run takes its stale session over"
out=$(trex --ports 0 --rate 1mpps --user alice)
like "$out" '^\{"ok":true,' "... and releases it, so another user may acquire it"

NOSERVER=$(lab_free_port)
out=$("$BUILD/bisect-trex" --sync-port "$NOSERVER" --profile "$PROFILE" --ports 0 --duration 1 --timeout 1 2>/dev/null)
like "$out" "nothing accepted a connection there: is TRex running" "no server at all is named as such"
out=$(trex --ports 0 --rate fast)
like "$out" "\"step\":\"options\",\"error\":\"--rate: 'fast' is not a rate" "a bad rate is refused before connecting"

# --- through bisectd and an agent ------------------------------------------

REPO=$LAB/dut.git
. "$TOP/tests/lib/mkrepo.sh"
mkrepo_init "$REPO"
mkrepo_commit "$REPO" dut-pps 3000000 "dut: forwards 3 Mpps" > /dev/null
mkrepo_tag "$REPO" good
for i in 1 2 3 4; do mkrepo_commit "$REPO" notes "note $i" "docs: note $i" > /dev/null; done
culprit=$(mkrepo_commit "$REPO" dut-pps 2000000 "act_pedit: take the spinlock on every packet")
for i in 5 6; do mkrepo_commit "$REPO" notes "note $i" "docs: note $i" > /dev/null; done

LAB_RUNS=3
lab_config "$REPO"
cat > "$LAB/trex.yaml" <<EOC
  dut:
    type: trex
    boot: none
    build: [sh, -c, 'cp dut-pps $DUT']
    sync_port: $SYNC
    traffic_profile: $PROFILE
    ports: [0, 1]
    rate: 5mpps
    duration: 1
    metric: rx_mpps
    direction: higher
    run_timeout: 30
EOC
# The pedit seed's workload from etc/examples/trex-pedit.yaml as written, but for
# where its server is (the stand-in on loopback), its profile and a 1 s duration.
sed -n '/^  pedit-mirred:$/,/^$/p' "$TOP/etc/examples/trex-pedit.yaml" | sed -e "s|^    server: .*|    server: 127.0.0.1|" \
	-e "s|^    sync_port: .*|    sync_port: $SYNC|" -e "s|^    traffic_profile: .*|    traffic_profile: $PROFILE|" \
	-e "s|^    duration: .*|    duration: 1|" >> "$LAB/trex.yaml"
sed "/^workloads:\$/r $LAB/trex.yaml" "$LAB/bisectd.yaml" > "$LAB/b.yaml" && mv "$LAB/b.yaml" "$LAB/bisectd.yaml"

# A bad definition is refused when bisectd loads its config.
sed 's/^    rate: 5mpps$/    rate: 5mbit/' "$LAB/bisectd.yaml" > "$LAB/bad.yaml"
"$BUILD/bisectd" -n -f "$LAB/bad.yaml" > "$LAB/bad.out" 2>&1
ok $(( $? == 0 )) "bisectd -n refuses a trex workload with a bad rate"
like "$(cat "$LAB/bad.out")" "bad.yaml:[0-9]+:[0-9]+: .*'5mbit' is not a rate" "... at its line and column"
"$BUILD/bisectd" -n -f "$LAB/bisectd.yaml" > "$LAB/good.out" 2>&1
is "$?" 0 "bisectd -n accepts the trex workload"
"$BUILD/bisectd" -n -f "$TOP/etc/examples/trex-pedit.yaml" > "$LAB/example.out" 2>&1
is "$?" 0 "the pedit seed's example config loads"

lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }
export PATH="$BUILD:$PATH"
lab_start_agent lab1 0

timeout 240 "$BUILD/bisectctl" submit --repo demo --good good --bad main --workload dut \
	--budget-seconds 200 --watch > "$LAB/watch.out" 2>&1
rc=$?
state=$(q "SELECT state FROM jobs WHERE id = 1")
if [ "$state" = done ]; then
	is "$rc" 0 "the bisection through TRex's protocol ends with a culprit"
	is "$(q "SELECT c.sha FROM jobs j JOIN job_commits c ON c.job_id = j.id AND c.idx = j.culprit WHERE j.id = 1")" \
		"$culprit" "... exactly the commit that lowered the forwarded rate"
else
	ok 1 "the bisection ends with a culprit (it is $state, bisectctl exited $rc)"
	sed 's/^/#   /' "$LAB/watch.out" | tail -20
	tail -20 "$LAB/lab1.log" | sed 's/^/#   /'
fi
is "$(q "SELECT DISTINCT unit FROM samples WHERE job_id = 1")" "Mpps" "the samples are in the metric's unit"
is "$(q "SELECT count(*) FROM samples WHERE job_id = 1 AND value <= 0")" 0 "no run failed"

# A refused acquire through the agent: failed runs with the server's words, no verdict.
echo "acquire refuse port is already taken by 'trex-console'" > "$FAULT"
timeout 120 "$BUILD/bisectctl" submit --repo demo --good good --bad main --workload dut --watch \
	> "$LAB/watch2.out" 2>&1
state=$(q "SELECT state FROM jobs WHERE id = 2")
is "$state" failed "a job whose runs the server refuses fails"
is "$(q "SELECT culprit IS NULL FROM jobs WHERE id = 2")" 1 "... naming no commit"
like "$(q "SELECT error FROM samples WHERE job_id = 2 ORDER BY id LIMIT 1")" \
	"^trex: acquire: port 0: port is already taken by 'trex-console' \(code -32000\)" \
	"... each run failed with the server's message"
like "$(cat "$LAB/watch2.out") $(q "SELECT coalesce(error, '') FROM jobs WHERE id = 2")" "taken by 'trex-console'" \
	"... which the job's failure repeats"
: > "$FAULT"

# The example's own workload (rate 100% of line rate, ports 0 and 1, rx_mpps): its first task measures.
like "$(grep -c '^  pedit-mirred:$' "$LAB/bisectd.yaml") $(grep -c '^    rate: 100%' "$LAB/bisectd.yaml")" '^1 1' \
	"the example's pedit-mirred workload is in the lab's config, at its rate"
"$BUILD/bisectctl" submit --repo demo --good good --bad main --workload pedit-mirred --runs 1 > "$LAB/submit3.out" 2>&1
st=$(lab_wait_task "job_id = 3" 30)
api POST /api/v1/jobs/3/cancel '' > /dev/null
is "$st" "done -" \
	"the example's workload measures through TRex's protocol"
like "$(q "SELECT unit || ' ' || value FROM samples WHERE job_id = 3 AND coalesce(error, '') = '' LIMIT 1")" \
	'^Mpps [0-9.]*[1-9]' "... a positive rx_mpps sample"

tap_plan "$tap_n"
tap_done
