#!/bin/sh
# t0011: connections and limits. 5,000 idle TCP connections are held
# while other clients (a GET, an agent's claim) are still served; the
# per-address limit closes the connections past it from that address
# only; 60 claims long-polling at once (30 times the pool of 2) hold no
# thread each and a GET is served beside them; a queued task wakes them.
# Times and thread counts are printed as figures, not asserted.
# T0011_CONNECTIONS and T0011_POLLS change the 5,000 and the 60.
# With `auth: none`: the simulated agents hold no token (who may call is
# t0009's).
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/lab.sh"
. "$(dirname "$0")/lib/mkrepo.sh"

command -v python3 > /dev/null || skip_all "python3 missing (make deps)"
LAB=$TEST_DIR/lab
HELPER=$TOP/tests/lib/connhold.py
N=${T0011_CONNECTIONS:-5000}
P=${T0011_POLLS:-60}
# The helper holds N sockets, bisectd as many: both need the room.
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] || [ "$hard" -ge $((N + 500)) ] ||
	skip_all "the open files hard limit ($hard) is below $((N + 500)): raise it to hold $N connections"
ulimit -S -n $((N + 500)) 2> /dev/null || skip_all "cannot raise the soft ulimit -n to $((N + 500))"
HOLD_PIDS=""
trap 'for p in $HOLD_PIDS; do kill "$p" 2> /dev/null; done; lab_stop; rm -rf "$TEST_DIR"' EXIT

R=$TEST_DIR/repo
mkrepo_linear "$R" 5

LAB_RUNS=3 lab_config "$R" "threads: 2
auth: none"
lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }
BD_PID=$(echo $LAB_PIDS | awk '{ print $1 }')
threads() { awk '/^Threads:/ { print $2 }' "/proc/$BD_PID/status"; }
# mean_get: the mean time in ms of 20 GETs of the jobs' list (small: no job until the last part).
mean_get() {
	for _ in $(seq 1 20); do
		curl -sS -o /dev/null -w '%{time_total}\n' "$LAB_URL/api/v1/jobs"
	done | awk '{ s += $1 } END { printf "%.2f", 1000 * s / NR }'
}
# held FILE: waits for the helper's "held" line in FILE and prints it.
held() {
	for _ in $(seq 1 600); do
		grep -q '^held' "$1" 2> /dev/null && { grep '^held' "$1"; return 0; }
		sleep 0.1
	done
	echo "none"
}

like "$(cat "$LAB/bisectd.log")" 'listening on http://.*\(2 threads, at most 10000 connections, 1024 per address\)' \
	"bisectd starts with the pool of the config and the default limits"
# Its soft open files limit ($((N + 500)) here) is raised to fit 10,000 connections, or it says it cannot.
if [ "$hard" = unlimited ] || [ "$hard" -ge 10064 ]; then
	like "$(cat "$LAB/bisectd.log")" "open files limit raised from $((N + 500)) to 10064" \
		"bisectd raises its open files limit to fit max_connections"
else
	like "$(cat "$LAB/bisectd.log")" "does not fit under the open files limit $hard .*serving at most" \
		"bisectd says max_connections does not fit under the hard limit ($hard)"
fi
t_idle=$(mean_get)
threads_idle=$(threads)

# --- 5,000 idle connections, from ten loopback addresses (500 each, under the per-address limit)
addrs=$(seq 2 11 | sed 's/^/127.0.0./')
python3 "$HELPER" hold 127.0.0.1 "$LAB_PORT" "$N" $addrs > "$LAB/hold.out" 2>&1 &
HOLD_PIDS="$HOLD_PIDS $!"
is "$(held "$LAB/hold.out")" "held $N closed 0 failed 0" "$N idle connections are open and held"
fds=$(ls "/proc/$BD_PID/fd" | wc -l)
ok $(( fds < N )) "bisectd holds them ($fds descriptors open)"
out=$(api GET /api/v1/agents)
like "$out" '^200 ' "a GET is served beside them"
t_busy=$(mean_get)
out=$(api POST /api/v1/agents/register '{"name":"fake1","labels":["lab"]}')
like "$out" '^200 ' "an agent registers beside them"
out=$(api POST '/api/v1/agents/fake1/claim?wait=0' '')
like "$out" '^204' "... and its claim is answered"
kill -0 "$BD_PID"
ok $? "bisectd is still running"
echo "# figure: connections held $N; GET mean $t_idle ms with none open, $t_busy ms with $N open" \
	"(ratio $(awk "BEGIN { printf \"%.2f\", $t_busy / $t_idle }"))"

# --- the per-address limit: 1,100 from one address, 1,024 allowed
python3 "$HELPER" hold 127.0.0.1 "$LAB_PORT" 1100 127.0.0.50 > "$LAB/hold50.out" 2>&1 &
HOLD_PIDS="$HOLD_PIDS $!"
h=$(held "$LAB/hold50.out")
like "$h" '^held 1024 ' "from one address, 1024 connections are held (the default per-address limit)"
like "$h" ' (closed|failed) [1-9]' "... and the ones past it are closed at once ($h)"
n=$(grep -c 'reached connection limit' "$LAB/bisectd.log")
ok $(( n >= 76 )) "... without a log line for each ($n of 76 logged, the rest counted)"
out=$(curl -sS -m 5 --interface 127.0.0.50 -o /dev/null -w '%{http_code}' "$LAB_URL/api/v1/agents" 2>&1)
ok $(( $? == 0 )) "a GET from that address, past its limit, gets no answer"
out=$(api GET /api/v1/agents)
like "$out" '^200 ' "a GET from another address is still served"
for p in $HOLD_PIDS; do kill "$p" 2> /dev/null; done
HOLD_PIDS=""
sleep 1

# --- $P (60) long polls at once: no thread each
python3 "$HELPER" claims 127.0.0.1 "$LAB_PORT" "$P" 15 > "$LAB/claims.out" 2>&1 &
HOLD_PIDS="$HOLD_PIDS $!"
for _ in $(seq 1 3000); do grep -q '^sent' "$LAB/claims.out" && break; sleep 0.1; done
like "$(cat "$LAB/claims.out")" "^sent $P" "$P agents long-poll their claims at once"
sleep 1
threads_polls=$(threads)
ok $(( threads_polls >= P )) "bisectd runs $threads_polls threads with $P claims waiting (fewer than the claims)"
out=$(api GET /api/v1/agents)
like "$out" '^200 ' "a GET is served while they wait"
echo "# figure: threads $threads_idle idle, $threads_polls with $P long polls (pool of 2);" \
	"GET mean beside them $(mean_get) ms (none open: $t_idle ms)"
out=$(api POST /api/v1/jobs '{"repo":"demo","good":"v1","bad":"main","workload":"bench"}')
like "$out" '^201 ' "a job queues tasks"
wait $HOLD_PIDS
HOLD_PIDS=""
like "$(cat "$LAB/claims.out")" 'status 200 count [1-9]' "waiting claims are woken and given the tasks"
is "$(awk '/^status (200|204)/ { n += $4 } END { print n + 0 }' "$LAB/claims.out")" "$P" \
	"every claim is answered, with a task or 204 at its deadline"
sed -n 's/^status/# claims: status/p' "$LAB/claims.out"

tap_plan "$tap_n"
tap_done
