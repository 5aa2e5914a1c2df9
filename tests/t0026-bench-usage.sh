#!/bin/sh
# t0026: bench-bisect refuses what would run no case, or not the case
# asked for, with exit 2 and a message naming the option; --help is
# status 0; and a one-case run prints its row.
. "$(dirname "$0")/lib/tap.sh"
trap 'rm -rf "$TEST_DIR"' EXIT

B=$BUILD/bench-bisect
[ -x "$B" ] || skip_all "$B not built (make test-bins)"
cd "$(dirname "$0")/.." || exit 1

# refused EXPECTED-STDERR-REGEX DESCRIPTION ARGS...
refused() {
	want=$1 what=$2
	shift 2
	"$B" "$@" > "$TEST_DIR/out" 2> "$TEST_DIR/err"
	is "$?" 2 "$what: exit 2"
	like "$(head -1 "$TEST_DIR/err")" "$want" "$what: says so"
	is "$(wc -c < "$TEST_DIR/out")" 0 "$what: no table on stdout"
}

tap_plan 46
"$B" --help > "$TEST_DIR/out" 2> "$TEST_DIR/err"
is "$?" 0 "--help: exit 0"
like "$(head -1 "$TEST_DIR/out")" '^usage: bench-bisect' "--help: the usage on stdout"
refused '--change 41 is not on the grid' "a change not on the grid" --change 41
refused '--n 100 is not on the grid' "an N not on the grid" --n 64,100
refused '--cv 5 is not on the grid' "a cv not on the grid" --cv 5
refused "unknown --shape 'spiral'" "an unknown shape" --shape linear,spiral
refused "unknown --policy 'nope'" "an unknown policy" --policy bisectd,nope
refused "unknown noise 'nope'" "an unknown noise" --noise normal,nope
refused "no trace for 'trace:nope'" "a trace that is not there" --noise trace:nope
refused "bad number '0'" "zero trials" --trials 0
refused "bad seed 'abc'" "a seed that is not a number" --seed abc
refused "bad seed 'x'" "a coin seed that is not a number" --coin-seed x
refused "--trials needs a value" "an option without its value" --trials
refused "unknown option '--bogus'" "an unknown option" --bogus 1
refused "unexpected argument 'stray'" "a stray argument" stray

"$B" --noise normal --n 64 --shape linear --change 30 --cv 4 --trials 3 --policy bisectd \
	--threads 1 > "$TEST_DIR/out" 2> "$TEST_DIR/err"
is "$?" 0 "one case: exit 0"
row=$(grep -E '^normal +64 linear ' "$TEST_DIR/out")
like "$row" '^normal +64 linear +30 +4 .* bisectd +[01]\.[0-9]{3} +[01]\.[0-9]{3} ' \
	"one case: its row, accuracy with 1 and 4 agents"
is "$(printf '%s\n' "$row" | grep -c .)" 1 "one case: one row"
like "$(cat "$TEST_DIR/out")" 'of 6 trials in 1 cases' "one case: its 3 trials with 1 and with 4 agents in the calibration"
"$B" --noise normal --n 64 --shape linear --change 30 --cv 4 --trials 3 --policy bisectd \
	--threads 1 --coin-seed 3 > "$TEST_DIR/out" 2> "$TEST_DIR/err"
like "$(head -1 "$TEST_DIR/out")" 'seed [0-9]+, 3 trials .*coin seed 3' "--coin-seed: named in the header"
tap_done
