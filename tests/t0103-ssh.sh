#!/bin/sh
# t0103: boot ssh against a real sshd on a device under test that is a
# QEMU guest (tests/lib/ssh-device.sh: Debian's kernel, busybox, dropbear,
# user-mode network on a loopback port; tests/lib/ssh-power.sh plays its
# IPMI). One real boot of an installed kernel, then the faults that need
# no boot of their own: a host key that does not match, a missing
# identity, a copy that fails, the wrong kernel running (the power command
# did nothing), a device that never comes back (the power command turns it
# off). Each task goes through tests/lib/boot-task.c: the definition
# bisectd sends for the workload, the agent's boot ssh. Needs qemu, busybox,
# dropbear and openssh-client; three boots under TCG: 75 s to 2.5 min here,
# with the machine's load. The full bisection through a
# device is tests/guest/ssh-bisect.sh; a guest workload on the device,
# tests/guest/ssh-workloads.sh.
. "$(dirname "$0")/lib/tap.sh"
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
. "$TOP/tests/lib/lab.sh"
. "$TOP/tests/lib/ssh-device.sh"
trap 'sshdev_stop; rm -rf "$TEST_DIR"' EXIT

[ -x "$BUILD/tests/boot-task" ] || skip_all "helper $BUILD/tests/boot-task not built"
why=$(sshdev_need)
[ -z "$why" ] || skip_all "$why"

tap_plan 27
D=$TEST_DIR/dev
sshdev_setup "$D" > "$TEST_DIR/setup.log" 2>&1
ok $? "the device's initramfs (busybox, dropbear, virtio modules) and keys are made"

# The build output: the kernel (Debian's again) and a modules tarball
# whose payload the workload reads on the device after the boot.
B=$TEST_DIR/build
mkdir -p "$B/mods"
cp "$SSHDEV_KERNEL" "$B/bzImage"
echo 4242 > "$B/mods/bisect-work"
tar -cf "$B/modules.tar" -C "$B/mods" bisect-work
ssh-keygen -q -t ed25519 -N '' -f "$TEST_DIR/other_host"
printf '[127.0.0.1]:%s %s\n' "$SSHDEV_PORT" "$(cat "$TEST_DIR/other_host.pub")" > "$TEST_DIR/wrong_known_hosts"
POWER="sh, $TOP/tests/lib/ssh-power.sh, $D"
printf '#!/bin/sh\necho "power: cycle $*" >> "%s/cycles"\n%s\n' "$TEST_DIR" 'exec sh "$@"' > "$TEST_DIR/count"

# workload NAME KEY=VALUE...: tests/lib/ssh-device.sh's, its power cycles counted.
SSHDEV_WRAP=$TEST_DIR/count
workload() { sshdev_workload "$@"; }

{
	printf 'listen: 127.0.0.1:1\ndatabase: %s/db\nrepos:\n  r:\n    url: /nonexistent\nworkloads:\n' "$TEST_DIR"
	workload good
	workload badkey kh="$TEST_DIR/wrong_known_hosts"
	workload nokey identity=/nonexistent/id
	workload badcopy dir=/proc/bisect
	workload wrongk 'power="[true]"' 'restore="[true]"'
	workload gone "power=\"[sh, $TEST_DIR/count, $TOP/tests/lib/ssh-power.sh, $D, off]\"" \
		"restore=\"[sh, $TOP/tests/lib/ssh-power.sh, $D, off]\"" tries=2 bto=4

	printf 'pools:\n  p:\n    labels: []\n'
} > "$TEST_DIR/bisectd.yaml"
"$BUILD/bisectd" -n -f "$TEST_DIR/bisectd.yaml" > "$TEST_DIR/check.log" 2>&1
ok $? "bisectd accepts the ssh settings" || sed 's/^/# /' "$TEST_DIR/check.log"

task() {	# task WORKLOAD [RUNS]: one task's boot; output in $out, exit in $rc
	out=$("$BUILD/tests/boot-task" "$TEST_DIR/bisectd.yaml" "$1" "$B" "$TEST_DIR/work-$1" "${2:-1}" \
		"${3:-}" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -v '^# ' | sed "s/^/# $1: /"
}

sh "$TOP/tests/lib/ssh-power.sh" "$D" cycle
sshdev_wait 180
ok $? "the device boots its good kernel and answers over ssh"

# 1. A good task: copied, installed, booted into, measured, restored.
: > "$TEST_DIR/cycles"
task good 2 "bisect_test_variant=1"
is "$rc" 0 "the task boots the installed kernel"
like "$out" '^status=ok$' "it is ok"
like "$out" '^run 1 value=4242 unit=ops/s' "run 1 read the modules tarball's payload on the device"
like "$out" '^run 2 value=4242 ' "run 2 too"
like "$(grep 'booting boot kernel' "$D/console.log" | tail -n 2 | head -n 1)" \
	'bisect_test_variant=1 bisect\.build=[0-9a-f]{16}' \
	"the device booted the installed kernel with the job's variant and the build's id"
is "$(grep -c 'power: cycle' "$TEST_DIR/cycles")" 2 "one power cycle into the kernel, one restore"
cmdline=$(sshdev_ssh cat /proc/cmdline < /dev/null 2>&1)
like "$cmdline" 'bisect_test_good' "afterwards the device runs its good kernel again"
case "$cmdline" in *bisect.build=*) r=1 ;; *) r=0 ;; esac
ok $r "... without the built kernel's marker"
[ -s "$TEST_DIR/work-good/console.log" ]
ok $? "the console log is kept in the method's work directory"

# 2. The device's host key is not the one known: failed with ssh's words, nothing installed.
task badkey
is "$rc" 2 "a host key mismatch ends the task"
like "$out" '^status=failed$' "as failed (the agent's set-up, not the commit)"
like "$out" '^error=.*Host key verification failed' "with ssh's message"

# 3. No identity file: refused before anything runs.
task nokey
like "$out" '^status=failed$' "a missing identity file fails the task"
like "$out" "^error=.*identity file '/nonexistent/id' is not readable" "and says which file"

# 4. The copy fails on the device.
task badcopy
like "$out" '^status=failed$' "a failed copy fails the task"
like "$out" '^error=ssh: copy of kernel to root@127\.0\.0\.1:[0-9]+:/proc/bisect/kernel failed: exit 1: .*mkdir' \
	"with the device's message"

# 5. The power command did nothing: the good kernel still runs, not the built one.
task wrongk
like "$out" '^status=skipped$' "the wrong kernel running skips the commit"
like "$out" "^error=the wrong kernel runs on .*: expected $SSHDEV_RELEASE with bisect\\.build=[0-9a-f]{16}, running $SSHDEV_RELEASE with command line '.*bisect_test_good" \
	"saying which kernel was expected and which runs"
sshdev_ssh true < /dev/null 2> /dev/null
ok $? "the device still answers afterwards"

# 6. The device never comes back: power-cycled power_tries times, then skipped with the console's tail.
: > "$TEST_DIR/cycles"
task gone
like "$out" '^status=skipped$' "a kernel that never answers is skipped, not bad"
like "$out" "^error=the kernel did not come back: no ssh on root@127\\.0\\.0\\.1:$SSHDEV_PORT within 4 s, 2 power cycles" \
	"after two power cycles, with the deadline"
is "$(grep -c 'power: cycle' "$TEST_DIR/cycles")" 2 "the power command ran twice"
like "$out" '^# power: off' "the console's tail comes with it"
like "$out" "and then the device did not come back on its good kernel" \
	"the failed restore is said too"

tap_done
