#!/bin/sh
# t0009: who may write. Every write endpoint refuses a request without a
# token (401), with a token of the wrong role or another agent's (403),
# with a foreign Origin (403) or without a JSON Content-Type (415), and
# leaves the store byte-identical; so does an upload for an expired
# lease (409). The forged-verdict attack of issue 12 (a stranger
# registers, claims and uploads in lab1's name) is replayed and refused.
# Then revocation, bisectctl token, and the failure limit (429).
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/lab.sh"
. "$(dirname "$0")/lib/mkrepo.sh"

command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
LAB=$TEST_DIR/lab
trap 'lab_stop; rm -rf "$TEST_DIR"' EXIT
CTL=$BUILD/bisectctl

R=$TEST_DIR/repo
mkrepo_linear "$R" 6

AUTH_YAML='auth:
  max_failures: 5
  failure_window: 3'
LAB_LEASE=2 LAB_RUNS=3 lab_config "$R" "$AUTH_YAML"
lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }
snapshot() { sqlite3 "$LAB/bisectd.db" .dump | md5sum; }

# post TOKEN CONTENT_TYPE ORIGIN PATH BODY: prints "STATUS BODY" ("" leaves a header out).
post() {
	curl -sS -X POST ${1:+-H "Authorization: Bearer $1"} ${2:+-H "Content-Type: $2"} ${3:+-H "Origin: $3"} \
		--data-binary "$5" -w '\n%{http_code}' "$LAB_URL$4" |
		awk '{ lines[NR] = $0 } END { printf "%s", lines[NR]; for (i = 1; i < NR; i++) printf " %s", lines[i]; print "" }'
}
J=application/json

# --- the tokens ---
ok "$([ -n "$LAB_TOKEN" ]; echo $?)" "bisectd wrote an admin token at first start"
mode=$(stat -c %a "$LAB/bisectd.db.admin-token")
is "$mode" 600 "... in a file only its owner reads"
SUBMIT=$("$CTL" token create --role submit --note "ci" 2> "$TEST_DIR/err")
is "$?" 0 "bisectctl token create --role submit exits 0"
like "$SUBMIT" '^bd_[0-9a-f]{8}_[0-9a-f]{32}$' "... and prints the token alone on stdout"
like "$(cat "$TEST_DIR/err")" "shown this once" "... saying it is shown once"
ENROL=$(cat "$LAB/enrol.token")
T1=$(lab_agent_token lab1)
like "$T1" '^bd_' "lab1 enrols with the enrolment token"
TE=$(lab_agent_token evil)
like "$TE" '^bd_' "so does evil, who found the enrolment token"
out=$(post "$ENROL" $J "" /api/v1/agents/enrol '{"name":"lab1"}')
like "$out" '^409 .*has a token already' "enrolling as lab1 again: 409 (an agent enrols once)"
secret=${SUBMIT#bd_????????_}
is "$(sqlite3 "$LAB/bisectd.db" .dump | grep -c "$secret")" 0 "the store holds no token's secret"

# --- a job, and an expired lease ---
out=$(api POST /api/v1/jobs '{"repo":"demo","good":"v1","bad":"main","workload":"bench"}')
like "$out" '^201 ' "an admin submits a job"
out=$(API_TOKEN=$T1 api POST /api/v1/agents/register '{"name":"lab1","labels":["lab"]}')
like "$out" '^200 ' "lab1 registers with its own token"
out=$(API_TOKEN=$T1 api POST '/api/v1/agents/lab1/claim?wait=5' '')
like "$out" '^200 .*"task": *1.*"attempt": *1' "lab1 claims task 1, attempt 1"
for _ in $(seq 1 50); do
	[ "$(q "SELECT state FROM tasks WHERE id = 1")" = queued ] && break
	sleep 0.2
done
is "$(q "SELECT state || ' ' || attempt FROM tasks WHERE id = 1")" "queued 1" "without heartbeats the lease expires"
before=$(snapshot)
out=$(post "$T1" $J "" /api/v1/tasks/1/result '{"agent":"lab1","attempt":1,"status":"ok","samples":[{"value":1}]}')
like "$out" '^409 .*not yours' "an upload for the expired lease: 409"
is "$(snapshot)" "$before" "... store unchanged"
out=$(post "$T1" $J "" /api/v1/agents/lab1/heartbeat '{"task":1,"attempt":1}')
like "$out" '^200 .*"cancel": *true' "a heartbeat for it says cancel"

# --- a long lease from here on: restart with it ---
lab_stop
LAB_LEASE=600 LAB_RUNS=3 LAB_PORT=$LAB_PORT lab_config "$R" "$AUTH_YAML"
lab_start_bisectd || { echo "Bail out! bisectd did not restart"; exit 1; }
ENROL=$(cat "$LAB/enrol.token")
out=$(API_TOKEN=$T1 api POST '/api/v1/agents/lab1/claim?wait=5' '')
like "$out" '^200 .*"task": *1.*"attempt": *2' "after a restart lab1 claims task 1 again, attempt 2"
out=$(API_TOKEN=$TE api POST /api/v1/agents/register '{"name":"evil","labels":["lab"]}')
like "$out" '^200 ' "evil registers as itself"
before=$(snapshot)

# refuse STATUS REGEX WHAT TOKEN CTYPE ORIGIN PATH BODY
refuse() {
	out=$(post "$4" "$5" "$6" "$7" "$8")
	like "$out" "^$1 .*\"error\": *\".*$2" "$3: $1"
	is "$(snapshot)" "$before" "$3: store unchanged"
}

# every write endpoint: PATH, BODY, its right token, a wrong role, another agent's ("" none)
while IFS='|' read -r path body right wrong other; do
	eval "right=\$$right wrong=\$$wrong"
	[ -n "$other" ] && eval "other=\$$other"
	refuse 401 "needs a token" "POST $path without a token" "" $J "" "$path" "$body"
	refuse 403 "role|enrolment" "POST $path with a wrong role" "$wrong" $J "" "$path" "$body"
	[ -n "$other" ] && refuse 403 "cannot act as agent lab1|lab1's lease|not evil's" \
		"POST $path with another agent's token" "$other" $J "" "$path" "$body"
	refuse 403 "another site" "POST $path from a foreign Origin" "$right" $J "http://evil.example" "$path" "$body"
	refuse 415 "Content-Type: application/json" "POST $path as text/plain" "$right" text/plain "" "$path" "$body"
	refuse 415 "Content-Type: application/json" "POST $path as a form" "$right" "" "" "$path" "$body"
done <<'EOF_ROUTES'
/api/v1/jobs|{"repo":"demo","good":"v1","bad":"main","workload":"bench"}|SUBMIT|T1|
/api/v1/jobs/1/cancel||SUBMIT|T1|
/api/v1/agents/register|{"name":"lab1","labels":["lab","x"]}|T1|SUBMIT|TE
/api/v1/agents/lab1/heartbeat|{"task":1,"attempt":2,"progress":"forged"}|T1|SUBMIT|TE
/api/v1/agents/lab1/claim?wait=0||T1|SUBMIT|TE
/api/v1/tasks/1/result|{"agent":"lab1","attempt":2,"status":"ok","samples":[{"value":1}]}|T1|SUBMIT|TE
/api/v1/tokens|{"role":"admin"}|LAB_TOKEN|SUBMIT|
/api/v1/tokens/1/revoke||LAB_TOKEN|SUBMIT|
/api/v1/agents/enrol|{"name":"newbie"}|ENROL|SUBMIT|
EOF_ROUTES

# --- the forged verdict of issue 12, replayed ---
forged='{"agent":"lab1","attempt":2,"status":"ok","samples":[{"value":1},{"value":1},{"value":1}]}'
refuse 401 "needs a token" "a stranger registers an agent" "" $J "" /api/v1/agents/register '{"name":"x","labels":["lab"]}'
refuse 401 "needs a token" "a stranger claims" "" $J "" '/api/v1/agents/x/claim?wait=0' ''
refuse 401 "needs a token" "a stranger uploads in lab1's name" "" $J "" /api/v1/tasks/1/result "$forged"
refuse 401 "unknown token" "... with a made-up token" "bd_00000000_00000000000000000000000000000000" $J "" \
	/api/v1/tasks/1/result "$forged"
refuse 403 "cannot act as agent lab1" "evil uploads lab1's lease in lab1's name" "$TE" $J "" /api/v1/tasks/1/result "$forged"
refuse 403 "lab1's lease" "evil uploads lab1's lease in its own name" "$TE" $J "" /api/v1/tasks/1/result \
	'{"agent":"evil","attempt":2,"status":"ok","samples":[{"value":1}]}'
refuse 403 "cannot act as agent lab1" "evil claims as lab1" "$TE" $J "" '/api/v1/agents/lab1/claim?wait=0' ''
refuse 409 "has a token already" "the enrolment token enrols lab1 again" "$ENROL" $J "" /api/v1/agents/enrol '{"name":"lab1"}'
is "$(q "SELECT count(*) FROM samples")" 0 "no sample was taken from the forgers"
is "$(q "SELECT state FROM jobs WHERE id = 1")" running "the job is still running, with no culprit"
is "$(q "SELECT count(*) FROM events WHERE kind = 'result'")" 0 "the event log credits nobody with a result"

# The real lab1 still can: its own upload for its own lease.
out=$(API_TOKEN=$T1 api POST /api/v1/tasks/1/result '{"agent":"lab1","attempt":2,"status":"ok","samples":[{"value":5},{"value":5},{"value":5}]}')
like "$out" '^200 .*"duplicate": *false' "lab1's own upload for its own lease is taken"

# --- revocation and bisectctl token ---
out=$("$CTL" token list)
is "$?" 0 "bisectctl token list exits 0"
prefix=$(printf '%s' "$SUBMIT" | cut -c1-11)
like "$out" "$prefix +submit .* live +ci" "... and shows the submit token: prefix, role, live, note"
like "$out" "bd_[0-9a-f]{8} +agent +lab1 " "... and lab1's, bound to its name"
id=$(printf '%s\n' "$out" | awk -v p="$prefix" '$2 == p { print $1 }')
out=$(post "$SUBMIT" $J "" /api/v1/jobs/99/cancel '')
like "$out" '^404 ' "the submit token works (a job 99 to cancel does not exist)"
"$CTL" token revoke "$id" > "$TEST_DIR/out" 2>&1
is "$?" 0 "bisectctl token revoke $id exits 0"
out=$(post "$SUBMIT" $J "" /api/v1/jobs/99/cancel '')
like "$out" '^401 .*revoked' "the revoked token is refused at once (401)"
like "$("$CTL" token list)" "$prefix +submit .* revoked" "bisectctl token list shows it revoked"
BISECTD_TOKEN= "$CTL" token list > "$TEST_DIR/out" 2> "$TEST_DIR/err"
is "$?" 2 "bisectctl without a token: exit 2"
like "$(cat "$TEST_DIR/err")" "needs a token" "... saying a token is needed"
BISECTD_TOKEN= "$CTL" --token-file "$LAB/bisectd.db.admin-token" token list > /dev/null 2>&1
is "$?" 0 "bisectctl --token-file FILE reads the token from FILE"
BISECTD_TOKEN=$T1 "$CTL" token create --role admin > "$TEST_DIR/out" 2> "$TEST_DIR/err"
is "$?" 2 "an agent's token cannot make tokens: exit 2"
like "$(cat "$TEST_DIR/err")" "role admin" "... saying an admin's is needed"

# --- the failure limit: 5 failures from one address, then 429 for 3 s ---
sleep 3.2   # the failures above (a made-up token, a revoked one) are out of the window
for i in 1 2 3 4; do post "bd_0000000${i}_00000000000000000000000000000000" $J "" /api/v1/jobs/99/cancel '' > /dev/null; done
out=$(post "bd_00000005_00000000000000000000000000000000" $J "" /api/v1/jobs/99/cancel '')
like "$out" '^401 ' "the 5th wrong token: still 401"
hdrs=$(curl -sS -D - -o "$TEST_DIR/body" -X POST -H "Authorization: Bearer $LAB_TOKEN" -H "Content-Type: $J" \
	--data-binary '' "$LAB_URL/api/v1/jobs/99/cancel")
like "$hdrs" '^HTTP/1.1 429' "then even the right token waits: 429"
like "$hdrs" 'Retry-After: [1-3]' "... with Retry-After"
like "$(cat "$TEST_DIR/body")" '"error": *"too many failed authentications' "... and a JSON error"
like "$(curl -sS -w ' %{http_code}' "$LAB_URL/api/v1/jobs")" ' 200$' "reads stay open meanwhile"
sleep 3.2
out=$(post "$LAB_TOKEN" $J "" /api/v1/jobs/99/cancel '')
like "$out" '^404 ' "after the window the right token works again"
like "$(cat "$LAB/bisectd.log")" "5 failed authentications from 127.0.0.1" "bisectd logs the address it limits"

# --- auth: none: no token checks, the write hygiene stays ---
lab_stop
LAB_LEASE=600 LAB_PORT=$LAB_PORT lab_config "$R" "auth: none"
lab_start_bisectd || { echo "Bail out! bisectd did not start with auth: none"; exit 1; }
out=$(post "" $J "" /api/v1/jobs/1/cancel '')
like "$out" '^200 .*"state": *"cancelled"' "auth: none: a write without a token is served"
out=$(post "" text/plain "" /api/v1/jobs/1/cancel '')
like "$out" '^415 ' "... but still needs the JSON Content-Type"
out=$(post "" $J "http://evil.example" /api/v1/jobs/1/cancel '')
like "$out" '^403 .*another site' "... and refuses a foreign Origin"
like "$(curl -sS "$LAB_URL/api/v1/whoami")" '"role": *null' "whoami says there is no role"
if grep -q "auth: none, listening" "$LAB/bisectd.log"; then
	ok 1 "no warning about auth: none on loopback"
else
	ok 0 "no warning about auth: none on loopback"
fi

# --- read: token: reads need a token too, the dashboard's page stays open ---
lab_stop
LAB_LEASE=600 LAB_PORT=$LAB_PORT lab_config "$R" "auth:
  read: token"
lab_start_bisectd || { echo "Bail out! bisectd did not start with read: token"; exit 1; }
like "$(curl -sS -w ' %{http_code}' "$LAB_URL/api/v1/jobs")" '"error".* 401$' "read: token: a read without a token is refused (401, JSON)"
like "$(curl -sS -w ' %{http_code}' "$LAB_URL/api/v1/events")" '"error".* 401$' \
	"... the dashboard's event stream too (the page then polls with its token)"
out=$(curl -sS -N -m 3 -H "Authorization: Bearer $LAB_TOKEN" "$LAB_URL/api/v1/events" 2> /dev/null)
like "$out" 'event: snapshot' "with a token the event stream sends its snapshot"
like "$(curl -sS -w ' %{http_code}' -H "Authorization: Bearer $LAB_TOKEN" "$LAB_URL/api/v1/jobs")" ' 200$' \
	"... and reads are served"
like "$(curl -sS -o /dev/null -w '%{http_code}' "$LAB_URL/")" '^200$' "the dashboard's page needs no token"

tap_plan "$tap_n"
tap_done
