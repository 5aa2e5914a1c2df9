#!/bin/sh
# guest-run.sh: one run of the kernel lab's udp-rx for record-noise.sh
# --workload guest: GUEST_KERNEL booted under QEMU (TCG: no nested KVM
# here) by GUEST_QEMU_BOOT (build/tests/qemu-boot), one iperf3 --udp -4
# -b 0 -l 8920 -t 3 -P 4 in the guest, as a kernel lab task of one run
# (tests/kernel/klab.sh). Prints "throughput: N KBytes/s", nothing when
# the run failed. The initramfs goes in a directory under GUEST_TMP.
d=$(mktemp -d "${GUEST_TMP:-/tmp}/guest.XXXXXX") || exit 1
bps=$("$GUEST_QEMU_BOOT" run --kernel "$GUEST_KERNEL" --dir "$d" --accel tcg --runs 1 --udp \
	--streams 4 --time 3 --bitrate 0 --length 8920 2> /dev/null |
	sed -n 's/^run 1 present=1 rc=0 bps=\([0-9]*\).*/\1/p')
rm -rf "$d"
[ -n "$bps" ] && awk -v b="$bps" 'BEGIN { printf "throughput: %.1f KBytes/s\n", b / 8 / 1024 }'
