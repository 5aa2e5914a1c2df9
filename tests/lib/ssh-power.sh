#!/bin/sh
# ssh-power.sh DIR cycle|restore|off: the power switch (an IPMI or PDU
# stand-in) of the QEMU guest that plays the device under test in
# tests/t0103-ssh.sh and tests/guest/ssh-bisect.sh. The agent runs it as
# its ssh settings' power_cycle and restore commands.
#
# DIR holds the device: rootfs.cpio (its initramfs: busybox, dropbear),
# disk.img (its boot disk, /dev/vda in the guest, a tar archive with
# "kernel" and "cmdline" that the install command writes), good/ (the
# known-good kernel and cmdline), port (the loopback port forwarded to
# its port 22), console.log (the serial console, appended boot after
# boot). cycle kills the running guest and boots what the disk holds
# (the good kernel when it holds none); restore writes the good kernel to
# the disk first; off stops it. With DIR/ignore-install present, cycle
# boots the good kernel whatever the disk says (the wrong kernel boots).
set -u
D=$1
what=$2

off() {
	if [ -f "$D/qemu.pid" ]; then
		pid=$(cat "$D/qemu.pid")
		kill "$pid" 2> /dev/null
		i=0
		while kill -0 "$pid" 2> /dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		kill -9 "$pid" 2> /dev/null
		rm -f "$D/qemu.pid"
	fi
}

case "$what" in
off) off; echo "power: off" >> "$D/console.log"; exit 0 ;;
restore)
	tar -cf "$D/disk.img.new" -C "$D/good" kernel cmdline &&
	truncate -s 64M "$D/disk.img.new" && mv "$D/disk.img.new" "$D/disk.img" || exit 1 ;;
cycle) ;;
*) echo "usage: ssh-power.sh DIR cycle|restore|off" >&2; exit 2 ;;
esac
off
rm -rf "$D/boot" && mkdir -p "$D/boot"
if [ ! -f "$D/ignore-install" ] && tar -xf "$D/disk.img" -C "$D/boot" kernel cmdline 2> /dev/null; then
	kernel=$D/boot/kernel
	cmdline=$(cat "$D/boot/cmdline")
else
	kernel=$D/good/kernel
	cmdline=$(cat "$D/good/cmdline")
fi
echo "power: booting $(basename "$(dirname "$kernel")") kernel with: $cmdline" >> "$D/console.log"
qemu-system-x86_64 -accel tcg -m 512 -smp 1 -display none -no-reboot \
	-kernel "$kernel" -initrd "$D/rootfs.cpio" \
	-append "console=ttyS0 panic=-1 quiet $cmdline" \
	-chardev "file,id=con,path=$D/console.log,append=on" -serial chardev:con \
	-drive "file=$D/disk.img,format=raw,if=virtio" \
	-nic "user,model=virtio-net-pci,hostfwd=tcp:127.0.0.1:$(cat "$D/port")-:22" \
	-daemonize -pidfile "$D/qemu.pid" || exit 1
