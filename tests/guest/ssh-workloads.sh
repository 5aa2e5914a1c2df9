#!/bin/sh
# guest/ssh-workloads.sh: a guest workload (iperf3) on a device under test
# over ssh. The device is t0103's (tests/lib/ssh-device.sh: a QEMU guest
# of Debian's kernel with busybox, dropbear and iperf3); one task boots
# the installed kernel there, runs iperf3's run_once() script on the
# device over its loopback (the same script the QEMU guest runs, its
# tools in tools_dir), parses iperf3's JSON on the agent, and restores
# the good kernel. Then a profile task of it: the device's own perf
# (tools_dir/perf, put in the device when the agent has the real binary)
# records the run and reports it over ssh, and bisectd's parser reads that
# report. Three boots under TCG: about 60-120 s here.
. "$(dirname "$0")/../lib/tap.sh"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
. "$TOP/tests/lib/lab.sh"
. "$TOP/tests/lib/ssh-device.sh"
trap 'sshdev_stop; rm -rf "$TEST_DIR"' EXIT

[ -x "$BUILD/tests/boot-task" ] || skip_all "helper $BUILD/tests/boot-task not built"
why=$(sshdev_need)
[ -z "$why" ] || skip_all "$why"
command -v iperf3 > /dev/null || skip_all "iperf3 missing (make deps)"

# The profile needs perf on the device: the agent's, where it is the real binary (not Debian's wrapper script).
PERF=$(command -v perf)
if [ -n "$PERF" ] && ! head -c 2 "$PERF" | grep -q '#!'; then
	SSHDEV_PERF=1
	tap_plan 9
else
	tap_plan 6
fi
D=$TEST_DIR/dev
sshdev_setup "$D" > "$TEST_DIR/setup.log" 2>&1
ok $? "the device's initramfs (busybox, dropbear, iperf3${SSHDEV_PERF:+, perf}) and keys are made"
B=$TEST_DIR/build
mkdir -p "$B/mods"
cp "$SSHDEV_KERNEL" "$B/bzImage"
echo 1 > "$B/mods/bisect-work"
tar -cf "$B/modules.tar" -C "$B/mods" bisect-work

# The command workload of the device, made an iperf3 one: UDP, one second.
{
	printf 'listen: 127.0.0.1:1\ndatabase: %s/db\nrepos:\n  r:\n    url: /nonexistent\nworkloads:\n' "$TEST_DIR"
	sshdev_workload udp | sed -e 's/^    type: command$/    type: iperf3/' -e '/^    command: /d' \
		-e '/^    pattern: /d' -e 's/^    run_timeout: 60$/    run_timeout: 60\n    iperf3: [--udp, "-4", -b, "0", -l, "1400", -t, "1"]\n    metric: KBytes\/s/' \
		-e 's|^      good_kernel: \(.*\)$|      good_kernel: \1\n      tools_dir: /usr/bin|'
	printf 'pools:\n  p:\n    labels: []\n'
} > "$TEST_DIR/bisectd.yaml"
"$BUILD/bisectd" -n -f "$TEST_DIR/bisectd.yaml" > "$TEST_DIR/check.log" 2>&1
ok $? "bisectd accepts an iperf3 workload of boot ssh" || sed 's/^/# /' "$TEST_DIR/check.log"

sh "$TOP/tests/lib/ssh-power.sh" "$D" cycle
sshdev_wait 180
ok $? "the device boots its good kernel and answers over ssh"

out=$("$BUILD/tests/boot-task" "$TEST_DIR/bisectd.yaml" udp "$B" "$TEST_DIR/work" 1 2>&1)
printf '%s\n' "$out" | grep -v '^# ' | sed 's/^/# udp: /'
like "$out" '^status=ok$' "the iperf3 task boots the installed kernel on the device"
like "$out" '^run 1 value=[1-9][0-9.]* unit=KBytes/s error=$' "iperf3 ran there: its received rate, above zero"
like "$(sshdev_ssh cat /proc/cmdline < /dev/null 2>&1)" 'bisect_test_good' "afterwards the device runs its good kernel"

if [ "${SSHDEV_PERF:-0}" = 1 ]; then
	# A profile task (as the coordinator queues at a culprit): the run under the device's perf, reported there.
	out=$(BOOT_TASK_PROFILE="$TEST_DIR/work/profile.perf.data" "$BUILD/tests/boot-task" "$TEST_DIR/bisectd.yaml" \
		udp "$B" "$TEST_DIR/work" 1 2>&1)
	printf '%s\n' "$out" | sed 's/^\([^#]\)/# \1/'
	like "$out" '^run 1 value=[1-9][0-9.]* unit=KBytes/s error=$' "the profile task's run is measured under perf on the device"
	like "$out" '^profile=ok symbols=[1-9][0-9]* samples=[0-9]* event=cpu-clock$' \
		"the device's perf report of it parses: symbols, of cpu-clock"
	like "$out" '^# profile: .*\[k\] ' "the report has the device kernel's symbols"
fi
tap_done
