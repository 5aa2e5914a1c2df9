# lab.sh: the local lab (bisectd and agents on loopback), for the demo and
# the integration tests (sourced). Needs $BUILD (the programs) and $LAB
# (a scratch directory); every process it starts is stopped by lab_stop,
# which the caller traps on EXIT.

TOP=${TOP:-$(cd "$(dirname "$0")/.." && pwd)}
[ -f "$TOP/Makefile" ] || TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
LAB_PIDS=""

# q SQL: a query of the lab's store ($LAB/bisectd.db), one row a line.
q() { sqlite3 "$LAB/bisectd.db" "$1"; }

# lab_wait_task WHERE [SECONDS]: waits (60 s by default) until the first
# task (lowest id) that WHERE selects is there and no longer queued or
# claimed; prints its "STATE ERROR", ERROR '-' when it has none (after the
# wait, whatever its state). lab_wait_task "id = $T"; lab_wait_task
# "job_id = 2" 600.
lab_wait_task() {
	_lw_n=$(( ${2:-60} * 5 ))
	while [ "$_lw_n" -gt 0 ]; do
		case $(q "SELECT state FROM tasks WHERE $1 ORDER BY id LIMIT 1") in
		queued|claimed|'') sleep 0.2 ;;
		*) break ;;
		esac
		_lw_n=$((_lw_n - 1))
	done
	q "SELECT state || ' ' || coalesce(error, '-') FROM tasks WHERE $1 ORDER BY id LIMIT 1"
}

lab_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# lab_config REPO_URL [EXTRA_YAML]: writes $LAB/bisectd.yaml with the demo
# workload (and LAB_WORKLOADS, more workloads' YAML lines indented as
# bench's) and a pool "local" of agents labelled "lab". TLS when
# LAB_TLS_CERT and LAB_TLS_KEY name PEM files (then LAB_CA is the CA that
# agents, bisectctl and lab_curl trust); LAB_HOST is the address to
# listen on and talk to (127.0.0.1; [::1] for IPv6). LAB_STANDIN=1 makes
# the bench workload tests/lib/standin-bench.sh, which builds nothing and
# draws its numbers (the culprit's change included) instead of timing the
# repository's loop: for a test whose subject is not the measurement.
lab_config() {
	mkdir -p "$LAB"
	if [ -n "${LAB_STANDIN:-}" ]; then
		_lc_build='[true]'
		_lc_command="[sh, $TOP/tests/lib/standin-bench.sh]"
	else
		_lc_build='[make, -s]'
		_lc_command='[./bench]'
	fi
	LAB_PORT=${LAB_PORT:-$(lab_free_port)}
	LAB_HOST=${LAB_HOST:-127.0.0.1}
	LAB_URL="http://$LAB_HOST:$LAB_PORT"
	[ -n "${LAB_TLS_CERT:-}" ] && LAB_URL="https://$LAB_HOST:$LAB_PORT"
	export BISECTD_URL="$LAB_URL"
	[ -n "${LAB_CA:-}" ] && export BISECTD_CA="$LAB_CA"
	cat > "$LAB/bisectd.yaml" <<EOC
listen: $LAB_HOST:$LAB_PORT
${LAB_TLS_CERT:+tls_cert: $LAB_TLS_CERT}
${LAB_TLS_KEY:+tls_key: $LAB_TLS_KEY}
database: $LAB/bisectd.db
mirrors: $LAB/mirrors
lease_seconds: ${LAB_LEASE:-30}
max_body: ${LAB_MAX_BODY:-1048576}
default_runs: ${LAB_RUNS:-5}
repos:
  demo:
    url: $1
workloads:
  bench:
    type: command
    boot: none
    build: $_lc_build
    command: $_lc_command
    pattern: 'throughput: ([0-9.]+)'
    unit: ops/s
    direction: higher
    build_timeout: 120
    run_timeout: 30
${LAB_WORKLOADS:-}
pools:
  local:
    labels: [lab]
${2:-}
EOC
}

# lab_start_bisectd: starts bisectd and waits for it. With auth on (the
# default), LAB_TOKEN (also exported as BISECTD_TOKEN, for bisectctl) is
# the admin token bisectd wrote at its first start, and $LAB/enrol.token an
# enrolment token the agents of lab_start_agent use.
#
# Up means this bisectd says in its log that it listens, and the URL
# answers: with tests two at a time (make check), a port lab_free_port
# found free can be taken by another test's bisectd before this one binds
# it, and then that one answers. At a first start such a port is given up
# for a new one (LAB_PORT, LAB_URL and the config's listen line follow); a
# restart keeps its port, which the agents know.
lab_start_bisectd() {
	_tries=${LAB_STARTED:+1}
	for _try in $(seq 1 "${_tries:-3}"); do
		"$BUILD/bisectd" -f "$LAB/bisectd.yaml" > "$LAB/bisectd.log" 2>&1 &
		_pid=$!
		LAB_PIDS="$LAB_PIDS $_pid"
		for _ in $(seq 1 100); do
			if grep -q "info: listening on" "$LAB/bisectd.log" &&
			   lab_curl -fsS "$LAB_URL/api/v1/agents" > /dev/null 2>&1; then
				LAB_STARTED=1
				lab_tokens
				return 0
			fi
			grep -q "^bisectd: cannot listen" "$LAB/bisectd.log" && break
			sleep 0.1
		done
		grep -q "^bisectd: cannot listen" "$LAB/bisectd.log" && [ -z "${LAB_STARTED:-}" ] || break
		_old=$LAB_PORT
		LAB_PORT=$(lab_free_port)
		echo "# bisectd: port $_old was taken before it could bind it (another test's?): port $LAB_PORT" >&2
		LAB_URL=$(printf '%s' "$LAB_URL" | sed "s/:$_old\$/:$LAB_PORT/")
		export BISECTD_URL="$LAB_URL"
		sed "s/^listen: \(.*\):$_old\$/listen: \1:$LAB_PORT/" "$LAB/bisectd.yaml" > "$LAB/bisectd.yaml.new" &&
			mv "$LAB/bisectd.yaml.new" "$LAB/bisectd.yaml"
	done
	echo "# bisectd did not come up; its log:" >&2
	sed 's/^/#   /' "$LAB/bisectd.log" >&2
	return 1
}

# The admin token and an enrolment token, when bisectd checks tokens.
lab_tokens() {
	LAB_TOKEN=""
	[ -f "$LAB/bisectd.db.admin-token" ] || return 0
	LAB_TOKEN=$(cat "$LAB/bisectd.db.admin-token")
	export BISECTD_TOKEN="$LAB_TOKEN"
	lab_curl -sS -H 'Content-Type: application/json' --data '{"role":"agent","note":"the lab'"'"'s enrolment"}' \
		"$LAB_URL/api/v1/tokens" | sed -n 's/.*"token": *"\([^"]*\)".*/\1/p' > "$LAB/enrol.token"
	chmod 600 "$LAB/enrol.token"
}

# lab_curl ARGS...: curl with the lab's admin token (for raw writes in tests),
# trusting LAB_CA when set.
lab_curl() {
	if [ -n "${LAB_TOKEN:-}" ]; then
		curl ${LAB_CA:+--cacert "$LAB_CA"} -H "Authorization: Bearer $LAB_TOKEN" "$@"
	else
		curl ${LAB_CA:+--cacert "$LAB_CA"} "$@"
	fi
}

# lab_agent_token NAME: enrols agent NAME and prints its own token (for tests
# that play the agent with curl).
lab_agent_token() {
	curl -sS -H "Authorization: Bearer $(cat "$LAB/enrol.token")" -H 'Content-Type: application/json' \
		--data "{\"name\":\"$1\"}" "$LAB_URL/api/v1/agents/enrol" | sed -n 's/.*"token": *"\([^"]*\)".*/\1/p'
}

# lab_start_agent NAME CPU [EXTRA_YAML]: an agent with its own work dir,
# pinned to CPU, sharing the host's measurement lock with the other agents;
# EXTRA_YAML (lines) goes at the end of its config.
lab_start_agent() {
	cat > "$LAB/$1.yaml" <<EOC
coordinator: $LAB_URL
name: $1
labels: [lab]
workdir: $LAB/agents/$1
heartbeat: 2
poll_wait: 5
cpu: $2
measure_lock: $LAB/measure.lock
${LAB_CA:+ca_file: $LAB_CA}
$([ -s "$LAB/enrol.token" ] && echo "enrol_token_file: $LAB/enrol.token")
${3:-}
EOC
	"$BUILD/bisect-agent" -f "$LAB/$1.yaml" > "$LAB/$1.log" 2>&1 &
	LAB_PIDS="$LAB_PIDS $!"
}

lab_stop() {
	for p in $LAB_PIDS; do kill "$p" 2>/dev/null; done
	for p in $LAB_PIDS; do
		for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null
	done
	LAB_PIDS=""
}

# api METHOD PATH [BODY]: prints "STATUS BODY" of a request to bisectd, with
# the token API_TOKEN (default: the lab's admin token; "" for none).
api() {
	_tok=${API_TOKEN-${LAB_TOKEN:-}}
	if [ $# -ge 3 ]; then
		curl -sS ${LAB_CA:+--cacert "$LAB_CA"} -X "$1" ${_tok:+-H "Authorization: Bearer $_tok"} -H 'Content-Type: application/json' --data-binary "$3" \
			-w '\n%{http_code}' "$LAB_URL$2" | awk '{ lines[NR] = $0 } END { printf "%s", lines[NR]; for (i = 1; i < NR; i++) printf " %s", lines[i]; print "" }'
	else
		curl -sS ${LAB_CA:+--cacert "$LAB_CA"} -X "$1" ${_tok:+-H "Authorization: Bearer $_tok"} -w '\n%{http_code}' "$LAB_URL$2" | awk '{ lines[NR] = $0 } END { printf "%s", lines[NR]; for (i = 1; i < NR; i++) printf " %s", lines[i]; print "" }'
	fi
}

# lab_report JOB EXPR: a Python expression over job JOB's report r (and the
# job j, both as `bisectctl --json show` prints them), printed.
lab_report() {
	"$BUILD/bisectctl" --json show "$1" | python3 -c "import json, sys
j = json.load(sys.stdin); r = j.get('report') or {}
print($2)"
}
