# lab.sh: the local lab (bisectd and agents on loopback), for the demo and
# the integration tests (sourced). Needs $BUILD (the programs) and $LAB
# (a scratch directory); every process it starts is stopped by lab_stop,
# which the caller traps on EXIT.

TOP=${TOP:-$(cd "$(dirname "$0")/.." && pwd)}
[ -f "$TOP/Makefile" ] || TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
LAB_PIDS=""

lab_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# lab_config REPO_URL [EXTRA_YAML]: writes $LAB/bisectd.yaml with the demo
# workload and a pool "local" of agents labelled "lab".
lab_config() {
	mkdir -p "$LAB"
	LAB_PORT=${LAB_PORT:-$(lab_free_port)}
	LAB_URL="http://127.0.0.1:$LAB_PORT"
	export BISECTD_URL="$LAB_URL"
	cat > "$LAB/bisectd.yaml" <<EOC
listen: 127.0.0.1:$LAB_PORT
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
    build: [make, -s]
    command: [./bench]
    pattern: 'throughput: ([0-9.]+)'
    unit: ops/s
    direction: higher
    build_timeout: 120
    run_timeout: 30
pools:
  local:
    labels: [lab]
${2:-}
EOC
}

lab_start_bisectd() {
	"$BUILD/bisectd" -f "$LAB/bisectd.yaml" > "$LAB/bisectd.log" 2>&1 &
	LAB_PIDS="$LAB_PIDS $!"
	for _ in $(seq 1 100); do
		curl -fsS "$LAB_URL/api/v1/agents" > /dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "# bisectd did not come up; its log:" >&2
	sed 's/^/#   /' "$LAB/bisectd.log" >&2
	return 1
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

# lab_curl ARGS...: curl with the lab's credentials (none yet), for writes.
lab_curl() { curl "$@"; }

# api METHOD PATH [BODY]: prints "STATUS BODY" of a request to bisectd.
api() {
	if [ $# -ge 3 ]; then
		curl -sS -X "$1" -H 'Content-Type: application/json' --data-binary "$3" \
			-w '\n%{http_code}' "$LAB_URL$2" | awk '{ lines[NR] = $0 } END { printf "%s", lines[NR]; for (i = 1; i < NR; i++) printf " %s", lines[i]; print "" }'
	else
		curl -sS -X "$1" -w '\n%{http_code}' "$LAB_URL$2" | awk '{ lines[NR] = $0 } END { printf "%s", lines[NR]; for (i = 1; i < NR; i++) printf " %s", lines[i]; print "" }'
	fi
}
