#!/bin/sh
# guest/perf: perf in the QEMU guest, as a profile there would record it.
# Boots Debian's kernel from /boot under TCG with an initramfs of busybox,
# iperf3 and the host's perf (Debian's linux-perf; where /usr/bin/perf is
# Debian's wrapper script, the real perf_X.Y beside it) with every library
# ldd lists; the guest's /init records `perf record -g -e cpu-clock` (a
# software clock: TCG has no PMU) of an iperf3 UDP run over loopback, then
# prints `perf report --stdio --no-children --sort symbol -g none` between
# markers on the serial console. Checks the report is perf's, of cpu-clock,
# with the guest kernel's UDP send path among its symbols, and keeps it
# (GUEST_PERF_KEEP=FILE) for tests/fixtures/perf/. Then the agent's own
# guest path: the qemu boot method's /init for a profile task
# (qemu_init_script() with perf: the whole guest recorded around two iperf3
# runs, the report between markers), through build/tests/qemu-boot --perf:
# both runs measured, the report parsed by bisectd's parser. Needs
# qemu-system-x86_64, busybox (static), perf, iperf3, cpio, a kernel in
# /boot (QEMU_TEST_KERNEL picks another), the helper (make
# build/tests/qemu-boot). About 2-3 minutes here under TCG; installs nothing.
. "$(dirname "$0")/../lib/tap.sh"
trap 'kill "$qpid" 2> /dev/null; rm -rf "$TEST_DIR"' EXIT

command -v qemu-system-x86_64 > /dev/null || skip_all "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
command -v busybox > /dev/null || skip_all "busybox missing (apt-get install busybox-static)"
command -v iperf3 > /dev/null || skip_all "iperf3 missing (apt-get install iperf3)"
command -v perf > /dev/null || skip_all "perf missing (apt-get install linux-perf)"
command -v cpio > /dev/null || skip_all "cpio missing (apt-get install cpio)"
command -v ldd > /dev/null || skip_all "ldd missing (apt-get install libc-bin)"
file -L "$(command -v busybox)" | grep -q 'statically linked' || skip_all "busybox is not static (apt-get install busybox-static)"
if [ -z "$QEMU_TEST_KERNEL" ]; then
	QEMU_TEST_KERNEL=$(ls /boot/vmlinuz-* 2> /dev/null | sort -V | tail -n 1)
fi
[ -n "$QEMU_TEST_KERNEL" ] && [ -r "$QEMU_TEST_KERNEL" ] ||
	skip_all "no readable kernel in /boot (apt-get install linux-image-amd64, or set QEMU_TEST_KERNEL)"

# Debian's /usr/bin/perf may be a script choosing perf_X.Y for the running
# kernel, which the guest's may not be: take the real binary.
PERF=$(command -v perf)
if head -c 2 "$PERF" | grep -q '#!'; then
	PERF=$(ls "$(dirname "$PERF")"/perf_[0-9]* 2> /dev/null | sort -V | tail -n 1)
	[ -n "$PERF" ] || skip_all "$(command -v perf) is a wrapper and no perf_X.Y is beside it"
fi

tap_plan 11
echo "# kernel: $QEMU_TEST_KERNEL, perf: $PERF ($("$PERF" --version))"
R=$TEST_DIR/root
mkdir -p "$R/bin" "$R/proc" "$R/sys" "$R/tmp" "$R/dev"

# add PROGRAM GUEST_PATH: the program and the libraries ldd lists, at their host paths.
add() {
	cp -L "$1" "$R$2" || return 1
	for lib in $(ldd "$1" | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (0x.*/\1/p'); do
		mkdir -p "$R$(dirname "$lib")" && cp -L "$lib" "$R$lib" || return 1
	done
}
cp "$(command -v busybox)" "$R/bin/busybox" && add "$PERF" /bin/perf && add "$(command -v iperf3)" /bin/iperf3
ok $? "the guest's root holds busybox, perf and iperf3 with their libraries"

cat > "$R/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tmpfs tmp /tmp
mount -t devtmpfs dev /dev 2> /dev/null
ip link set lo up
echo -1 > /proc/sys/kernel/perf_event_paranoid
echo 0 > /proc/sys/kernel/kptr_restrict
export HOME=/tmp
iperf3 -s -D -p 5201
sleep 1
perf record -q -g -e cpu-clock -o /tmp/perf.data -- iperf3 -c 127.0.0.1 -p 5201 -u -b 0 -l 1400 -t 3 > /tmp/iperf3.out 2>&1
echo "GUEST-PERF-RECORD rc=$?"
echo GUEST-PERF-BEGIN
perf report -i /tmp/perf.data --stdio --no-children --sort symbol -g none 2> /tmp/report.err
echo "GUEST-PERF-END rc=$?"
cat /tmp/report.err /tmp/iperf3.out
reboot -f
EOF
chmod +x "$R/init"
(cd "$R" && find . | cpio -o -H newc --quiet) > "$TEST_DIR/initrd.cpio"
ok $? "the initramfs is written ($(du -h "$TEST_DIR/initrd.cpio" | cut -f1))"

t0=$(date +%s)
qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot -accel tcg -m 768 -smp 1 \
	-kernel "$QEMU_TEST_KERNEL" -initrd "$TEST_DIR/initrd.cpio" \
	-append "console=ttyS0 panic=-1 quiet loglevel=1" -serial "file:$TEST_DIR/console.log" \
	> "$TEST_DIR/qemu.out" 2>&1 &
qpid=$!
# A deadline with room: TCG on a loaded 2-core machine is slow.
for _ in $(seq 1 600); do
	kill -0 "$qpid" 2> /dev/null || break
	grep -q 'GUEST-PERF-END' "$TEST_DIR/console.log" 2> /dev/null && sleep 2 && break
	sleep 1
done
kill "$qpid" 2> /dev/null
echo "# the guest ran $(( $(date +%s) - t0 )) s under TCG"
tr -d '\r' < "$TEST_DIR/console.log" > "$TEST_DIR/console.txt"
sed -n '/^GUEST-PERF-BEGIN$/,/^GUEST-PERF-END/p' "$TEST_DIR/console.txt" | sed '1d;$d' > "$TEST_DIR/report.txt"
like "$(cat "$TEST_DIR/console.txt")" "GUEST-PERF-RECORD rc=0" "perf record of iperf3 runs in the guest" ||
	tail -n 30 "$TEST_DIR/console.txt" | sed 's/^/# /'
like "$(cat "$TEST_DIR/console.txt")" "GUEST-PERF-END rc=0" "perf report runs in the guest"
like "$(head -n 12 "$TEST_DIR/report.txt")" "# Samples: .* of event 'cpu-clock'" "the report is perf's, of the software clock"
like "$(cat "$TEST_DIR/report.txt")" "\[k\] (udp_sendmsg|ip_finish_output2|__ip_append_data|udp_send_skb|_copy_from_iter)" \
	"the guest kernel's UDP send path is among its symbols"
[ -n "$GUEST_PERF_KEEP" ] && cp "$TEST_DIR/report.txt" "$GUEST_PERF_KEEP"

# --- the qemu boot method's profile task, as the agent runs it --------------

HELPER=${BUILD:-build}/tests/qemu-boot
if [ ! -x "$HELPER" ]; then
	for i in 7 8 9 10 11; do echo "ok $i # SKIP helper $HELPER not built (make $HELPER)"; done
	exit 0
fi
D=$TEST_DIR/agent
out=$("$HELPER" run --kernel "$QEMU_TEST_KERNEL" --dir "$D" --accel tcg --runs 2 --udp --time 2 --bitrate 0 \
	--length 1400 --boot-timeout 300 --run-timeout 300 --perf "$PERF" 2>&1)
is "$?" 0 "the profile task's guest boots and reaches READY"
printf '%s\n' "$out" | grep -E '^(accel|boot_ms|run_ms|run |profile_)' | sed 's/^/# /'
like "$out" "run 2 present=1 rc=0 bps=[1-9]" "both runs are measured while perf records the guest"
like "$out" "profile_rc=0" "perf report ran after the runs"
like "$out" "profile_rows=[1-9][0-9]*" "bisectd's parser reads symbols from it"
like "$(cat "$D/profile.txt" 2> /dev/null)" "\[k\] (udp_sendmsg|ip_finish_output2|__ip_append_data|udp_send_skb|__dev_queue_xmit)" \
	"the guest kernel's UDP send path is in the profile"
tap_done
