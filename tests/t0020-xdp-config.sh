#!/bin/sh
# t0020: xdp workload definitions at config load. The example config
# (etc/examples/xdp-redirect.yaml) is valid; each bad definition stops
# `bisectd -n` with FILE:LINE:COLUMN and a sentence naming the key and
# what it must be. No guest, no network: about a second.
. "$(dirname "$0")/lib/tap.sh"

trap 'rm -rf "$TEST_DIR"' EXIT
mkdir -p "$TEST_DIR/kconfig"
cp etc/kconfig/qemu-guest.config etc/kconfig/xdp.config "$TEST_DIR/kconfig/"

out=$("$BUILD/bisectd" -n -f etc/examples/xdp-redirect.yaml 2>&1)
rc=$?
is "$rc" 0 "the XDP seed's example config is valid"
like "$out" 'configuration OK' "... bisectd says so"

# bad DESCRIPTION REGEX YAML-LINES...: a workload with these keys is refused with REGEX.
bad() {
	_desc=$1 _re=$2
	shift 2
	{
		echo "database: $TEST_DIR/db"
		echo "kconfig_dir: $TEST_DIR/kconfig"
		echo "repos:"
		echo "  linux:"
		echo "    url: /nonexistent"
		echo "workloads:"
		echo "  x:"
		echo "    type: xdp"
		echo "    boot: qemu"
		echo "    kernel:"
		echo "      fragments: [qemu-guest, xdp]"
		for l in "$@"; do echo "    $l"; done
		echo "pools:"
		echo "  p: {}"
	} > "$TEST_DIR/bad.yaml"
	out=$("$BUILD/bisectd" -n -f "$TEST_DIR/bad.yaml" 2>&1)
	rc=$?
	[ "$rc" -ne 0 ]
	ok $? "$_desc: refused"
	like "$out" "bad.yaml:[0-9]+:[0-9]+: .*$_re" "$_desc: at its line, saying why"
}

bad "no mode" "workload 'x' has no 'mode' \(the xdp-bench command: drop, pass, tx, redirect or redirect-map\)"
bad "an unknown mode" "'mode' in workload 'x' must be one of drop, pass, tx, redirect, redirect-map, not 'redirect-cpu'" \
	"mode: redirect-cpu"
bad "interface_out without a redirect" "'interface_out' in workload 'x' is for the redirect modes only" \
	"mode: drop" "interface_out: xdp1"
bad "a shell word as interface" "'interface' in workload 'x' must be a device name" \
	"mode: drop" "interface: 'x;reboot'"
bad "interval longer than duration" "'interval' in workload 'x' .*must not be longer than duration" \
	"mode: drop" "duration: 2" "interval: 5"
bad "duration 0" "'duration' in workload 'x' must be an integer from 1 to 3600" "mode: drop" "duration: 0"
bad "an unknown metric" "'metric' in workload 'x' must be one of pps, redir_pps, xmit_pps" "mode: drop" "metric: Mb/s"
bad "redir_pps without stats" "'stats' in workload 'x' must be true for metric redir_pps" \
	"mode: redirect" "metric: redir_pps" "stats: false"
bad "boot none" "boot" "mode: drop" "boot: none"

tap_plan "$tap_n"
tap_done
