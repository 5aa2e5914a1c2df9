# tap.sh: a few TAP helpers for the integration scripts (sourced).
# Each script runs in a scratch directory of its own: $TEST_DIR.

tap_n=0
tap_failed=0

tap_plan() { echo "1..$1"; }

ok() {	# ok COND_EXIT_STATUS DESCRIPTION
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $tap_n - $2"
	else
		echo "not ok $tap_n - $2"
		tap_failed=$((tap_failed + 1))
	fi
}

is() {	# is GOT EXPECTED DESCRIPTION
	if [ "$1" = "$2" ]; then
		ok 0 "$3"
	else
		ok 1 "$3"
		echo "#   got:      '$1'"
		echo "#   expected: '$2'"
	fi
}

like() {	# like TEXT EXTENDED-REGEX DESCRIPTION
	if printf '%s' "$1" | grep -Eq -- "$2"; then
		ok 0 "$3"
	else
		ok 1 "$3"
		printf '%s\n' "$1" | head -20 | sed 's/^/#   /'
		echo "#   does not match: $2"
	fi
}

skip_all() { echo "1..0 # SKIP $1"; exit 0; }
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP $1"; }	# skip REASON: one check not made

tap_done() {
	[ "$tap_failed" -eq 0 ]
}

TEST_DIR=${TEST_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/bisectd-test.XXXXXX")}
export TEST_DIR
