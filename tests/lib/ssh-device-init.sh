#!/bin/sh
# /init of the device under test of tests/t0103-ssh.sh and
# tests/guest/ssh-bisect.sh: a QEMU guest that plays a lab machine reached
# over ssh. It loads its modules (virtio_net, virtio_blk), brings up the
# user-mode network (10.0.2.15), unpacks the modules tarball the install
# command left on its "boot disk" (/dev/vda, a tar archive: the power
# script, tests/lib/ssh-power.sh, boots the kernel and command line found
# there), and runs dropbear, a real sshd, on port 22.
# bisect_test_hang on the command line plays a kernel that never comes back.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2> /dev/null
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
echo "device: $(uname -r) up: $(cat /proc/cmdline)"
while read -r m; do
	insmod "$m" || echo "device: insmod $m failed"
done < /etc/bisect-modules
case " $(cat /proc/cmdline) " in
*" bisect_test_hang "*)
	echo "device: hanging before sshd, as asked"
	while :; do sleep 60; done ;;
esac
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
# The installed kernel's extras: what the install command wrote to the disk.
mkdir -p /lib/modules /boot
if [ -b /dev/vda ] && tar -xf /dev/vda -C /boot 2> /dev/null; then
	[ -f /boot/modules.tar ] && tar -xf /boot/modules.tar -C /lib/modules
fi
echo "device: boot disk: $(ls /boot | tr '\n' ' ')"
dropbear -R -E -p 22 -r /etc/dropbear/dropbear_ed25519_host_key
echo "device: sshd up"
while :; do sleep 60; done
