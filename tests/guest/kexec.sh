#!/bin/sh
# guest/kexec: boot kexec for real, inside a QEMU guest that is the agent's
# machine. The guest boots Debian's kernel (/boot/vmlinuz-*, CONFIG_KEXEC)
# with an initramfs of busybox, kexec-tools, the agent and its libraries
# and virtio_net/virtio_blk/ext4 (qemu-boot initramfs, which is
# initramfs_build()); its /init plays the systemd unit's part: it mounts
# the guest's disk (the agent's work dir, the journal, a copy of the repo
# and of the kernel) and starts the agent, on every boot. The agent talks
# to a bisectd on the host's loopback through user-mode networking
# (10.0.2.2). Debian's kernel again, with the marker on its command line,
# stands in for a built one. It proves:
#   1. kexec into the built kernel, resume from the journal, both runs
#      measured in it (the workload counts bisect.build= in /proc/cmdline),
#      uploaded under the same lease, and kexec back into the good kernel;
#   2. a built kernel that never returns (the guest is killed once it has
#      started, and booted again as the firmware would: into the good
#      kernel) ends the task skipped with the reason;
#   3. a built image that is not a kernel: kexec -l refuses it, skipped.
#   4. perf profiles at the culprit through kexec: a job of one candidate
#      (policy split: its ends, then the culprit's and its parent's profile
#      tasks) whose profile tasks record their runs with the host's perf
#      (perf record -g -e cpu-clock: TCG has no PMU) in the kexec'd built
#      kernel, report there, and upload perf's text; the job ends done with
#      both profiles in. Skipped without perf.
# Needs qemu-system-x86_64, busybox, kexec-tools, mke2fs, sqlite3 and a
# readable /boot/vmlinuz with its /lib/modules. TCG only (nested KVM does
# not work here): 153 to 265 s on this loaded 2-core machine for the first
# three (five boots of Debian's kernel), and about as long again for the
# fourth (eight boots: 112-127 s here). make check-guest runs it.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/lab.sh"
. "$(dirname "$0")/../lib/mkrepo.sh"

HELPER=$BUILD/tests/qemu-boot
command -v sqlite3 > /dev/null || skip_all "sqlite3 CLI missing (make deps)"
command -v qemu-system-x86_64 > /dev/null || skip_all "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
command -v busybox > /dev/null || skip_all "busybox missing (apt-get install busybox-static)"
KEXEC=$(command -v kexec || ls /usr/sbin/kexec /sbin/kexec 2> /dev/null | head -n 1)
[ -n "$KEXEC" ] || skip_all "kexec missing (apt-get install kexec-tools)"
MKE2FS=$(command -v mke2fs || ls /usr/sbin/mke2fs /sbin/mke2fs 2> /dev/null | head -n 1)
[ -n "$MKE2FS" ] || skip_all "mke2fs missing (apt-get install e2fsprogs)"
[ -x "$HELPER" ] || skip_all "$HELPER missing (make $HELPER)"
KERNEL=$(ls /boot/vmlinuz-* 2> /dev/null | sort -V | tail -n 1)
[ -n "$KERNEL" ] || skip_all "no kernel in /boot (apt-get install linux-image-amd64)"
[ -r "$KERNEL" ] || skip_all "kernel $KERNEL is not readable by $(id -un)"
RELEASE=${KERNEL#/boot/vmlinuz-}
[ -f "/lib/modules/$RELEASE/modules.dep" ] || skip_all "no /lib/modules/$RELEASE for $KERNEL's modules"

LAB=$TEST_DIR/lab
QEMU_PID=
trap '[ -n "$QEMU_PID" ] && kill -9 $QEMU_PID 2> /dev/null; lab_stop; rm -rf "$TEST_DIR"' EXIT
D=$TEST_DIR/disk                 # the guest's disk, mounted at the same path inside
mkdir -p "$LAB" "$D/agent"
CONSOLE=$TEST_DIR/console.log
GOOD_APPEND="console=ttyS0 panic=-1 quiet"

R=$D/repo
mkrepo_init "$R" > /dev/null
mkrepo_commit "$R" README "a kernel tree stand-in" "base" > /dev/null
mkrepo_tag "$R" v1
mkrepo_commit "$R" net/core/dev.c "/* a change */" "net: touch" > /dev/null
# For the profiles (4): a branch of two commits, the second halving the speed the workload reads.
mkrepo_branch "$R" prof > /dev/null
mkrepo_commit "$R" speed 100 "speed: as it was" > /dev/null
mkrepo_tag "$R" p1
CULPRIT=$(mkrepo_commit "$R" speed 50 "speed: halved")
mkrepo_switch "$R" main
cp "$KERNEL" "$D/vmlinuz"
# The host's perf for the guest (where /usr/bin/perf is Debian's wrapper, the perf_X.Y beside it).
PERF=$(command -v perf || true)
if [ -n "$PERF" ] && head -c 2 "$PERF" | grep -q '#!'; then
	PERF=$(ls "$(dirname "$PERF")"/perf_[0-9]* 2> /dev/null | sort -V | tail -n 1)
fi

# /init, on every boot: what the systemd unit does on a lab machine.
cat > "$TEST_DIR/init" <<EOI
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
while read -r m; do insmod "\$m"; done < /etc/bisect-modules
for _ in \$(seq 1 100); do [ -b /dev/vda ] && break; sleep 0.1; done
mkdir -p "$D"
mount -t ext4 /dev/vda "$D" || { echo "GUEST-NO-DISK"; poweroff -f; }
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
[ -x "$PERF" ] && [ ! -e /usr/bin/perf ] && ln -s "$PERF" /bin/perf
echo "GUEST-UP \$(uname -r) \$(cat /proc/cmdline)"
"$BUILD/bisect-agent" -f "$D/agent.yaml"
echo "GUEST-AGENT-EXIT \$?"
sync
poweroff -f
EOI
out=$("$HELPER" initramfs "$D/initrd.cpio" "$TEST_DIR/init" --program "$KEXEC" --program "$BUILD/bisect-agent" \
	${PERF:+--program "$PERF"} \
	--modules-dir "/lib/modules/$RELEASE" --module virtio_pci --module virtio_net --module virtio_blk \
	--module crc32c_generic --module ext4 2>&1)
ok $? "the guest's initramfs: busybox, kexec, the agent, ${PERF:+perf, }virtio and ext4 modules${out:+: $out}"

LAB_PORT=$(lab_free_port)
LAB_URL="http://127.0.0.1:$LAB_PORT"
cat > "$LAB/bisectd.yaml" <<EOC
listen: 127.0.0.1:$LAB_PORT
database: $LAB/bisectd.db
mirrors: $LAB/mirrors
# Longer than a kexec reboot takes under TCG, so the lease lives through it.
lease_seconds: 300
default_runs: 2
repos:
  linux:
    url: $R
workloads:
  kx:
    type: command
    boot: kexec
    build: [cp, "$D/vmlinuz", bzImage]
    kernel_image: bzImage
    # 1 in the built kernel (the marker is on its command line), 0 elsewhere.
    command: [sh, -c, "echo throughput: \$(grep -c bisect.build= /proc/cmdline)"]
    pattern: 'throughput: ([0-9.]+)'
    kexec:
      append: "console=ttyS0 panic=-1"
      initrd: $D/initrd.cpio
      return_timeout: 900
      good_kernel: $D/vmlinuz
      good_initrd: $D/initrd.cpio
    build_timeout: 120
    run_timeout: 60
  kxp:
    type: command
    boot: kexec
    # An image of its own per commit (the tree's speed appended, which kexec ignores): the
    # agent remembers the image of job 2 as one that never came back, and skips it.
    build: [sh, -c, "cp $D/vmlinuz bzImage && echo kxp-\$(cat speed) >> bzImage"]
    kernel_image: bzImage
    # The tree's speed in the built kernel (0 elsewhere), after a loop for perf to sample.
    command: [sh, -c, "i=0; while [ \$i -lt 20000 ]; do i=\$((i + 1)); done; echo throughput: \$((\$(cat speed) * \$(grep -c bisect.build= /proc/cmdline)))"]
    pattern: 'throughput: ([0-9.]+)'
    profile: true
    kexec:
      append: "console=ttyS0 panic=-1"
      initrd: $D/initrd.cpio
      return_timeout: 900
      good_kernel: $D/vmlinuz
      good_initrd: $D/initrd.cpio
    build_timeout: 120
    run_timeout: 120
  junk:
    type: command
    boot: kexec
    build: [sh, -c, "echo not a kernel > bzImage"]
    kernel_image: bzImage
    command: [sh, -c, "echo throughput: 1"]
    pattern: 'throughput: ([0-9.]+)'
    kexec:
      append: "console=ttyS0 panic=-1"
      reboot: [reboot, -f]
pools:
  local:
    labels: [lab]
EOC
"$BUILD/bisectd" -n -f "$LAB/bisectd.yaml" > /dev/null 2>&1
ok $? "the guest lab's config is valid"
lab_start_bisectd || { echo "Bail out! bisectd did not start"; exit 1; }

cp "$LAB/enrol.token" "$D/enrol.token" 2> /dev/null
cat > "$D/agent.yaml" <<EOC
coordinator: http://10.0.2.2:$LAB_PORT
name: guest
labels: [lab]
workdir: $D/agent
heartbeat: 2
poll_wait: 5
$([ -s "$D/enrol.token" ] && echo "enrol_token_file: $D/enrol.token")
EOC
"$MKE2FS" -q -F -t ext4 -d "$D" "$TEST_DIR/disk.img" 512M > "$TEST_DIR/mke2fs.log" 2>&1
ok $? "the guest's disk (ext4 with the repo, the kernel, the agent's work dir)"

# guest: boots the guest's good kernel, as the firmware would, in the background.
guest() {
	qemu-system-x86_64 -accel tcg -m 1024 -smp 1 -no-reboot -nographic -monitor none \
		-kernel "$KERNEL" -initrd "$D/initrd.cpio" -append "$GOOD_APPEND" \
		-drive file="$TEST_DIR/disk.img",format=raw,if=virtio \
		-netdev user,id=n0 -device virtio-net-pci,netdev=n0 \
		-serial "file:$1" > "$TEST_DIR/qemu.log" 2>&1 &
	QEMU_PID=$!
}
# count PATTERN FILE: lines of FILE matching PATTERN.
count() { grep -c -- "$1" "$2" 2> /dev/null || true; }
console_tail() { tr -d '\r' < "$1" | tail -n 25 | sed 's/^/#   console: /'; }

# --- 1. kexec, resume from the journal, kexec back ----------------------------
start=$(date +%s)
guest "$CONSOLE"
like "$(api POST /api/v1/jobs '{"repo":"linux","good":"v1","bad":"main","workload":"kx","runs":2}')" '^201 ' \
	"job 1 created"
for _ in $(seq 1 1200); do
	[ -n "$(q "SELECT id FROM tasks WHERE job_id = 1 AND state NOT IN ('queued', 'claimed') LIMIT 1")" ] && break
	kill -0 "$QEMU_PID" 2> /dev/null || break
	sleep 0.5
done
T=$(q "SELECT id FROM tasks WHERE job_id = 1 AND state NOT IN ('queued', 'claimed') ORDER BY id LIMIT 1")
api POST /api/v1/jobs/1/cancel '' > /dev/null
echo "# the first task ended after $(($(date +%s) - start)) s"
is "$(q "SELECT state || ' ' || coalesce(error, '-') FROM tasks WHERE id = ${T:-0}")" "done -" \
	"the task came back done from the built kernel"
is "$(q "SELECT count(*) || ' ' || min(value) || ' ' || max(value) FROM samples WHERE task_id = ${T:-0}")" "2 1.0 1.0" \
	"... both runs measured in the kernel with bisect.build= on its command line"
is "$(q "SELECT attempt FROM tasks WHERE id = ${T:-0}")" 1 "... under its first lease, through the reboot"
for _ in $(seq 1 600); do [ "$(count GUEST-UP "$CONSOLE")" -ge 3 ] && break; sleep 0.5; done
# Kernel messages may share a line with it: GUEST-UP is looked for anywhere.
UPS=$(tr -d '\r' < "$CONSOLE" | grep -o 'GUEST-UP .*')
like "$(echo "$UPS" | sed -n 2p)" "^GUEST-UP $RELEASE console=ttyS0 panic=-1 bisect.build=[0-9a-f]{16}\$" \
	"the second boot was the built kernel with the pool's line and the marker, through kexec"
like "$(echo "$UPS" | sed -n 3p)" "^GUEST-UP $RELEASE $GOOD_APPEND\$" \
	"the third boot is the good kernel again, kexec'd back with its own command line"
like "$(tr -d '\r' < "$CONSOLE")" "carrying it on" "the agent of the second boot took the task from the journal"
[ "$(count GUEST-UP "$CONSOLE")" -ge 3 ] || console_tail "$CONSOLE"

# --- 2. a built kernel that never returns --------------------------------------
like "$(api POST /api/v1/jobs '{"repo":"linux","good":"v1","bad":"main","workload":"kx","runs":1}')" '^201 ' \
	"job 2 created"
seen=$(count "Linux version" "$CONSOLE")
for _ in $(seq 1 1200); do
	[ "$(count "Linux version" "$CONSOLE")" -gt "$seen" ] && break
	kill -0 "$QEMU_PID" 2> /dev/null || break
	sleep 0.25
done
T=$(q "SELECT min(id) FROM tasks WHERE job_id = 2 AND state = 'claimed'")
kill -9 "$QEMU_PID" 2> /dev/null
wait "$QEMU_PID" 2> /dev/null
QEMU_PID=
ok $([ -n "$T" ] && [ "$(count "Linux version" "$CONSOLE")" -gt "$seen" ]; echo $?) \
	"the built kernel started after kexec -e, and the guest was killed then"
guest "$TEST_DIR/console2.log"
like "$(lab_wait_task "id = ${T:-0}" 600)" "^skipped the built kernel did not come back: the machine came back in $RELEASE without bisect.build=" \
	"the task of a kernel that never returned ends skipped, with the reason"

# --- 3. a built image that is not a kernel -------------------------------------
like "$(api POST /api/v1/jobs '{"repo":"linux","good":"v1","bad":"main","workload":"junk","runs":1}')" '^201 ' \
	"job 3 created"
for _ in $(seq 1 600); do
	T=$(q "SELECT id FROM tasks WHERE job_id = 3 AND state NOT IN ('queued', 'claimed') LIMIT 1")
	[ -n "$T" ] && break
	sleep 0.5
done
like "$(q "SELECT state || ' ' || coalesce(error, '-') FROM tasks WHERE id = ${T:-0}")" \
	"^skipped kexec -l refused the built kernel: kexec: exit [0-9]+: .*(Cannot determine the file type|Invalid)" \
	"an image the real kexec -l cannot load is skipped with its words"

# --- 4. perf profiles at the culprit, recorded in the kexec'd kernel -----------
if [ -z "$PERF" ]; then
	echo "ok $((tap_n + 1)) # SKIP the profiles through kexec: no perf here (apt-get install linux-perf)"
	tap_n=$((tap_n + 1))
else
	start4=$(date +%s)
	like "$(api POST /api/v1/jobs '{"repo":"linux","good":"p1","bad":"prof","workload":"kxp","runs":5,"policy":"split"}')" \
		'^201 ' "job 4 created (one candidate, policy split, profile: true)"
	for _ in $(seq 1 3000); do
		case $(q "SELECT state FROM jobs WHERE id = 4") in queued|running) sleep 0.5 ;; *) break ;; esac
		kill -0 "$QEMU_PID" 2> /dev/null || break
	done
	echo "# job 4 took $(($(date +%s) - start4)) s: $(q "SELECT count(*) FROM tasks WHERE job_id = 4") tasks"
	is "$(q "SELECT state FROM jobs WHERE id = 4")" done "the job ends done"
	is "$(q "SELECT c.sha FROM jobs j JOIN job_commits c ON c.job_id = j.id AND c.idx = j.culprit WHERE j.id = 4")" \
		"$CULPRIT" "... with the culprit"
	is "$(q "SELECT group_concat(role || ':' || state || ':' || coalesce(agent, '-'), ' ') FROM
		(SELECT * FROM profiles WHERE job_id = 4 ORDER BY id)")" "parent:ok:guest culprit:ok:guest" \
		"both profiles are in, from the guest"
	is "$(q "SELECT group_concat(t.state || ':' || t.attempt, ' ') FROM profiles p JOIN tasks t ON t.id = p.task_id
		WHERE p.job_id = 4")" "done:1 done:1" "... each recorded by a task done under its first lease, through the reboots"
	for role in parent culprit; do
		api GET "/api/v1/jobs/4/profiles/$role" > "$TEST_DIR/profile-$role.txt"
		like "$(cat "$TEST_DIR/profile-$role.txt")" "^200 " "the $role's profile is served"
		like "$(cat "$TEST_DIR/profile-$role.txt")" "# Samples: [0-9]+[0-9KM]* +of event '(cpu-clock|cpu-clock:[a-z]*)'" \
			"... perf report's own text, of the software clock"
	done
	REP=$(api GET /api/v1/jobs/4)
	like "$REP" '"profiles": *\{.*"parent": *\{[^}]*"samples": *[1-9]' "the job's report has the parent's samples"
	like "$REP" '"culprit": *\{[^}]*"samples": *[1-9]' "... and the culprit's"
	like "$REP" '"culprit": *\{[^}]*"symbols": *[1-9]' "... read into symbols by bisectd's parser"
	# Every boot of a task was the built kernel with the marker, and the good one after.
	UPS=$(tr -d '\r' < "$TEST_DIR/console2.log" | grep -o 'GUEST-UP .*' | grep -c 'bisect.build=')
	ok $([ "$UPS" -ge 4 ]; echo $?) "the job's tasks ran in kexec'd built kernels ($UPS boots with bisect.build=)"
fi

if [ "$tap_failed" -gt 0 ]; then
	console_tail "$CONSOLE"
	console_tail "$TEST_DIR/console2.log"
fi
echo "# the whole test took $(($(date +%s) - start)) s"

tap_plan "$tap_n"
tap_done
