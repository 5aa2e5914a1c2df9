#!/bin/sh
# t0100: the qemu boot method on a real kernel, without building one.
# Boots Debian's distribution kernel (serial 8250 built in; loopback is all
# iperf3 -c 127.0.0.1 needs) under TCG with an initramfs of busybox and
# iperf3, runs iperf3 UDP twice and parses both runs; then the ways a boot
# fails: a kernel that panics, an init that never says READY, a guest
# without iperf3. Installs nothing: what is missing is a SKIP with the
# reason. QEMU_TEST_KERNEL picks another bzImage.
. "$(dirname "$0")/lib/tap.sh"

HELPER=${BUILD:-build}/tests/qemu-boot
trap 'rm -rf "$TEST_DIR"' EXIT

[ -x "$HELPER" ] || skip_all "helper $HELPER not built (make $HELPER)"
command -v qemu-system-x86_64 > /dev/null ||
	skip_all "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
command -v busybox > /dev/null || skip_all "busybox missing (apt-get install busybox-static)"
command -v iperf3 > /dev/null || skip_all "iperf3 missing (apt-get install iperf3)"
command -v ldd > /dev/null || skip_all "ldd missing (apt-get install libc-bin)"
if [ -z "$QEMU_TEST_KERNEL" ]; then
	QEMU_TEST_KERNEL=$(ls /boot/vmlinuz-* 2> /dev/null | sort -V | tail -n 1)
fi
[ -n "$QEMU_TEST_KERNEL" ] ||
	skip_all "no kernel in /boot (apt-get install linux-image-amd64, or set QEMU_TEST_KERNEL)"
[ -r "$QEMU_TEST_KERNEL" ] || skip_all "kernel $QEMU_TEST_KERNEL is not readable by $(id -un)"

tap_plan 15
echo "# kernel: $QEMU_TEST_KERNEL"

val() {	# val KEY OUTPUT: the value of a key=value line
	printf '%s\n' "$2" | sed -n "s/^$1=//p" | head -n 1
}

# grep -E tests each line: ^ is the start of any line of the output.
# The probe answers either way; which way is the host's business.
out=$("$HELPER" probe "$QEMU_TEST_KERNEL" 8000 2>&1)
ok $? "the KVM probe answers"
like "$out" '^kvm=[01]$' "the probe says yes or no"
printf '%s\n' "$out" | sed 's/^/# /'

# 1. A good boot: two iperf3 UDP runs of 2 s with 2 streams under TCG.
D=$TEST_DIR/good
out=$("$HELPER" run --kernel "$QEMU_TEST_KERNEL" --dir "$D" --accel tcg --runs 2 \
	--udp --streams 2 --time 2 --bitrate 0 --length 8920 \
	--boot-timeout 120 --run-timeout 120 2>&1)
rc=$?
printf '%s\n' "$out" | grep -E '^(initramfs_ms|accel|boot_ms|run_ms|wall_ms|why|run )' | sed 's/^/# /'
is "$rc" 0 "the guest boots and reaches READY"
good_boot_ms=$(val boot_ms "$out")
is "$(val complete "$out")" 1 "both runs are on the console between their markers"
like "$out" '^run 1 present=1 rc=0 bps=[1-9][0-9]*' "run 1 is iperf3 JSON with a positive received rate"
like "$out" '^run 2 present=1 rc=0 bps=[1-9][0-9]*' "run 2 is iperf3 JSON with a positive received rate"
like "$(cat "$D/run-1.txt" 2> /dev/null)" '"num_streams":[[:space:]]*2' "the run used 2 streams"

# 2. A kernel that panics (no /init to run, no root to mount) stops QEMU at once.
D=$TEST_DIR/panic
out=$("$HELPER" run --kernel "$QEMU_TEST_KERNEL" --dir "$D" --accel tcg --runs 1 \
	--append rdinit=/nonexistent --boot-timeout 60 2>&1)
rc=$?
is "$rc" 2 "a panicking kernel is reported as not booted"
like "$(val why "$out")" 'Kernel panic' "the reason quotes the panic"
like "$out" '^# .*Kernel panic' "the console tail comes with it"

# 3. An init that never prints READY: the boot deadline stops the guest.
# The deadline is three times what the good boot took to reach READY (at
# least 20 s): this kernel needs 6-10 s under TCG to reach init on an idle
# host, and more than 20 s with a CPU hog on each core.
D=$TEST_DIR/hang
hang_s=$(( ${good_boot_ms:-0} * 3 / 1000 + 5 ))
[ "$hang_s" -ge 20 ] || hang_s=20
[ "$hang_s" -le 120 ] || hang_s=120
printf '#!/bin/sh\necho stuck before READY\nwhile :; do sleep 1; done\n' > "$TEST_DIR/hang-init"
start=$(date +%s)
out=$("$HELPER" run --kernel "$QEMU_TEST_KERNEL" --dir "$D" --accel tcg --runs 1 \
	--no-iperf3 --init "$TEST_DIR/hang-init" --boot-timeout "$hang_s" 2>&1)
rc=$?
took=$(($(date +%s) - start))
is "$rc" 2 "a hung boot is reported as not booted"
like "$(val why "$out")" "^no BISECT-READY within $hang_s s .*stuck before READY" \
	"the reason names the deadline and the last console line"
[ "$took" -lt $((hang_s + 20)) ]
ok $? "the deadline held: stopped after ${took} s (deadline $hang_s s)"

# 4. A guest without iperf3: the run says so in its text, the boot is fine.
D=$TEST_DIR/noiperf
out=$("$HELPER" run --kernel "$QEMU_TEST_KERNEL" --dir "$D" --accel tcg --runs 1 \
	--no-iperf3 --boot-timeout 60 --run-timeout 30 2>&1)
rc=$?
is "$rc" 0 "a guest without iperf3 still boots"
like "$(cat "$D/run-1.txt" 2> /dev/null)" '/usr/bin/iperf3 not found in the guest' \
	"its run's text says iperf3 is missing (rc=127)"

tap_done
