# ssh-device.sh: the device under test of the ssh boot method's tests
# (sourced by tests/t0103-ssh.sh and tests/guest/ssh-bisect.sh): a QEMU
# guest of Debian's kernel with busybox and dropbear (a real sshd), reached
# on a loopback port forwarded to its port 22 (user-mode network). Its
# power switch is tests/lib/ssh-power.sh. Needs $BUILD (mkinitramfs) and
# $TOP.

# sshdev_need: prints why this machine cannot run the device, or nothing.
sshdev_need() {
	[ -x "$BUILD/tests/mkinitramfs" ] || { echo "helper $BUILD/tests/mkinitramfs not built"; return; }
	for p in qemu-system-x86_64 busybox ssh dropbear dropbearkey ldd tar; do
		command -v $p > /dev/null || [ -x /usr/sbin/$p ] ||
			{ echo "$p missing (apt-get install qemu-system-x86 busybox-static openssh-client dropbear-bin)"; return; }
	done
	SSHDEV_KERNEL=${SSHDEV_KERNEL:-$(ls /boot/vmlinuz-* 2> /dev/null | sort -V | tail -n 1)}
	[ -r "$SSHDEV_KERNEL" ] || { echo "no readable kernel in /boot (apt-get install linux-image-amd64)"; return; }
	SSHDEV_RELEASE=${SSHDEV_KERNEL##*/vmlinuz-}
	[ -f "/lib/modules/$SSHDEV_RELEASE/modules.dep" ] ||
		{ echo "no /lib/modules/$SSHDEV_RELEASE/modules.dep for virtio_net"; return; }
}

# sshdev_setup DIR: the device's files in DIR (keys, rootfs, disk with
# the good kernel, known_hosts, port); SSHDEV_* describe it.
sshdev_setup() {
	SSHDEV=$1
	SSHDEV_KERNEL=${SSHDEV_KERNEL:-$(ls /boot/vmlinuz-* 2> /dev/null | sort -V | tail -n 1)}
	SSHDEV_RELEASE=${SSHDEV_KERNEL##*/vmlinuz-}
	mkdir -p "$SSHDEV/good" "$SSHDEV/etc"
	ssh-keygen -q -t ed25519 -N '' -f "$SSHDEV/id_agent" || return 1
	dropbearkey -t ed25519 -f "$SSHDEV/etc/host_key" > "$SSHDEV/etc/host_key.txt" 2>&1 || return 1
	printf 'root:x:0:0:root:/root:/bin/sh\n' > "$SSHDEV/etc/passwd"
	printf 'root:x:0:\n' > "$SSHDEV/etc/group"
	printf '/bin/sh\n' > "$SSHDEV/etc/shells"
	cp "$SSHDEV/id_agent.pub" "$SSHDEV/etc/authorized_keys"
	# iperf3 too, where the agent has it: a guest workload run on the device
	# (guest/ssh-workloads.sh); and perf with SSHDEV_PERF=1, for its profile.
	"$BUILD/tests/mkinitramfs" "$SSHDEV/rootfs.cpio" --init "$TOP/tests/lib/ssh-device-init.sh" \
		--program dropbear $(command -v iperf3 > /dev/null && echo --program iperf3) \
		$([ "${SSHDEV_PERF:-0}" = 1 ] && echo --program perf) \
		--file /etc/passwd="$SSHDEV/etc/passwd" --file /etc/group="$SSHDEV/etc/group" \
		--file /etc/shells="$SSHDEV/etc/shells" \
		--file /etc/dropbear/dropbear_ed25519_host_key="$SSHDEV/etc/host_key" \
		--file /root/.ssh/authorized_keys="$SSHDEV/etc/authorized_keys" \
		--file /sbin/bisect-install="$TOP/tests/lib/ssh-device-install.sh" \
		--modules-dir "/lib/modules/$SSHDEV_RELEASE" --module virtio_pci --module virtio_net --module virtio_blk || return 1
	SSHDEV_PORT=$(lab_free_port)
	echo "$SSHDEV_PORT" > "$SSHDEV/port"
	printf '[127.0.0.1]:%s %s\n' "$SSHDEV_PORT" "$(grep '^ssh-ed25519 ' "$SSHDEV/etc/host_key.txt")" \
		> "$SSHDEV/known_hosts"
	cp "$SSHDEV_KERNEL" "$SSHDEV/good/kernel"
	echo "bisect_test_good" > "$SSHDEV/good/cmdline"
	tar -cf "$SSHDEV/disk.img" -C "$SSHDEV/good" kernel cmdline && truncate -s 64M "$SSHDEV/disk.img"
	: > "$SSHDEV/console.log"
}

# sshdev_workload NAME KEY=VALUE...: bisectd.yaml text (under workloads:)
# of a command workload of boot ssh on the device that reads a payload the
# task copies there; KEY=VALUE (host port identity kh dir power restore
# tries bto) replace the defaults. SSHDEV_WRAP, when set, is a script the
# power commands run through (sh WRAP ssh-power.sh ...), to count them.
sshdev_workload() {
	name=$1
	shift
	host=127.0.0.1 port=$SSHDEV_PORT identity=$SSHDEV/id_agent kh=$SSHDEV/known_hosts dir=/tmp/bisect
	power="[sh, ${SSHDEV_WRAP:+$SSHDEV_WRAP, }$TOP/tests/lib/ssh-power.sh, $SSHDEV, cycle]"
	restore="[sh, ${SSHDEV_WRAP:+$SSHDEV_WRAP, }$TOP/tests/lib/ssh-power.sh, $SSHDEV, restore]"
	tries=1 bto=150
	for kv in "$@"; do eval "$kv"; done
	cat <<EOW
  $name:
    type: command
    boot: ssh
    build: [true]
    kernel_image: bzImage
    command: [sh, -c, 'echo "payload: \$(cat /lib/modules/bisect-work)"']
    pattern: 'payload: ([0-9]+)'
    run_timeout: 60
    ssh:
      host: $host
      port: $port
      identity: $identity
      known_hosts: $kh
      dir: $dir
      copy: [modules.tar]
      install: [/sbin/bisect-install, '{kernel}', '{cmdline}']
      power_cycle: $power
      restore: $restore
      console: [tail, -n, '0', -F, $SSHDEV/console.log]
      boot_timeout: $bto
      power_tries: $tries
      good_kernel: $SSHDEV_RELEASE
EOW
}

# sshdev_ssh ARGS...: runs ARGS on the device as the agent would.
sshdev_ssh() {
	ssh -o BatchMode=yes -o ConnectTimeout=5 -o StrictHostKeyChecking=yes \
		-o UserKnownHostsFile="$SSHDEV/known_hosts" -i "$SSHDEV/id_agent" -p "$SSHDEV_PORT" \
		root@127.0.0.1 "$@"
}

# sshdev_wait SECONDS: until the device answers over ssh (1) or not.
sshdev_wait() {
	end=$(($(date +%s) + $1))
	while [ "$(date +%s)" -lt $end ]; do
		sshdev_ssh true 2> /dev/null < /dev/null && return 0
		sleep 1
	done
	return 1
}

sshdev_stop() {
	[ -n "${SSHDEV:-}" ] && sh "$TOP/tests/lib/ssh-power.sh" "$SSHDEV" off
}
