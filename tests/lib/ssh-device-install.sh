#!/bin/sh
# bisect-install KERNEL CMDLINE: the install command of the device in
# tests/lib/ssh-device.sh (it runs ON the device, over ssh): the copied
# kernel, its command line and the modules tarball beside it (when there
# is one) go to the boot disk, /dev/vda, as a tar archive that the power
# script boots from and the device's /init unpacks.
set -e
dir=$(dirname "$1")
[ "$(basename "$1")" = kernel ] || { echo "bisect-install: $1 is not DIR/kernel" >&2; exit 2; }
printf '%s\n' "$2" > "$dir/cmdline"
set -- kernel cmdline
[ -f "$dir/modules.tar" ] && set -- "$@" modules.tar
tar -cf /dev/vda -C "$dir" "$@"
sync
echo "bisect-install: $* on /dev/vda"
