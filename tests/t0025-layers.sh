#!/bin/sh
# t0025: the rooms of a split module stand in layers. The engine
# (bisect*.c), the config reader (conf*.c), the agent (agent*.c), the
# command line (bisectctl*.c), the daemon (its coordinator, coord*.c,
# with the HTTP server, the API and the dashboard's streams) and the
# workload kinds (agents/workloads) are each several files; each file may
# call only the files below it in its list here (read off the objects
# with nm: a symbol one object leaves undefined and another of the module
# defines). A new room has to be placed in its list. First the check
# itself is shown to catch a call up, on two objects made for it. About
# ten seconds (nm twice on each of some 70 objects).
. "$(dirname "$0")/lib/tap.sh"
. "$(dirname "$0")/lib/lab.sh"

trap 'rm -rf "$TEST_DIR"' EXIT
command -v nm > /dev/null || skip_all "no nm (binutils)"
OBJ=$BUILD/obj

# calls_up DIR ROOM...: prints "lower -> upper: symbol" for every call
# from a room to one listed after it, and "unplaced: FILE" for an object
# of DIR matching the rooms' stem (STEM, else the first room's) that no
# list names.
calls_up() {
	dir=$1
	shift
	i=0
	for r; do
		i=$((i + 1))
		[ -f "$dir/$r.o" ] || { echo "missing: $dir/$r.o"; continue; }
		nm --defined-only "$dir/$r.o" | awk -v r="$r" -v i="$i" '$2 ~ /^[TDBR]$/ { print $3, r, i }'
	done > "$TEST_DIR/defs"
	i=0
	for r; do
		i=$((i + 1))
		[ -f "$dir/$r.o" ] || continue
		nm -u "$dir/$r.o" | awk '{ print $NF }' |
			awk -v r="$r" -v i="$i" 'NR == FNR { room[$1] = $2; at[$1] = $3; next }
				($1 in at) && at[$1] > i { print r " -> " room[$1] ": " $1 }' "$TEST_DIR/defs" -
	done
	stem=${STEM:-${1%%_*}}
	for o in "$dir/$stem".o "$dir/$stem"_*.o; do
		[ -f "$o" ] || continue
		b=$(basename "$o" .o)
		case " $* " in *" $b "*) ;; *) echo "unplaced: $b" ;; esac
	done
}

# The check catches a call up: low.o calls high.o's function.
mkdir -p "$TEST_DIR/demo"
printf 'int demo_high(void);\nint demo_low(void) { return demo_high(); }\n' > "$TEST_DIR/demo/demo_low.c"
printf 'int demo_high(void);\nint demo_high(void) { return 1; }\n' > "$TEST_DIR/demo/demo_high.c"
if cc -c -o "$TEST_DIR/demo/demo_low.o" "$TEST_DIR/demo/demo_low.c" &&
   cc -c -o "$TEST_DIR/demo/demo_high.o" "$TEST_DIR/demo/demo_high.c"; then
	out=$(calls_up "$TEST_DIR/demo" demo_high demo_low)
	is "$out" "" "a room calling one below it passes (the check's own control)"
	out=$(calls_up "$TEST_DIR/demo" demo_low demo_high)
	is "$out" "demo_low -> demo_high: demo_high" "the check catches a room calling one above it"
else
	skip "no C compiler for the check's own demo"
	skip "no C compiler for the check's own demo"
fi

check() {	# check NAME DIR ROOM... (bottom first)
	name=$1
	shift
	out=$(calls_up "$@")
	is "$out" "" "$name: each room calls only the rooms below it"
}

check "the engine" "$OBJ/bisectd/lib" \
	bisect_model bisect_slow bisect_search bisect_confirm bisect_budget bisect_ends bisect
check "the config reader" "$OBJ/bisectd/lib" \
	conf_read conf_boot conf_workload conf
check "the agent" "$OBJ/agents" \
	agent_wait agent_coord agent_build agent_run agent
# The coordinator's rooms as coord_internal.h lists them, the daemon's
# other files around them: the HTTP server below, the API and the
# dashboard's streams above. Every coord*.o has to be placed.
STEM=coord
check "the daemon" "$OBJ/bisectd/daemon" \
	http_wait http auth \
	coord_event coord_ecache coord_mirror coord_claims coord_job coord_levels coord_dash coord_profiles \
	coord_split coord_engine coord_steps coord_live coord_agents coord_intake coord_jobs coord_tasks \
	coord_charts coord_export coord_report coord_mail coord \
	web_assets events web api_req api bisectd
STEM=
check "the command line" "$OBJ/bisectd/cli" \
	bisectctl_out bisectctl_api bisectctl_report bisectctl_jobs bisectctl_admin bisectctl
# The workload kinds: what they share below them, the table above. Every
# object of the folder has to be placed.
STEM='*'
check "the workload kinds" "$OBJ/agents/workloads" \
	workload netparse command iperf3 pktgen trex xdp workload_table
STEM=

tap_plan "$tap_n"
tap_done
