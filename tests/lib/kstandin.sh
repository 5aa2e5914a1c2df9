# kstandin.sh: a stand-in kernel tree, for sh with tests/lib/mkrepo.sh
# sourced. Its Makefile answers "make O=DIR tinyconfig | olddefconfig |
# bzImage" as Kbuild does (files written, "  CC" lines, exit status) and
# its scripts/kconfig/merge_config.sh merges as the real one: the
# fragment's lines win. olddefconfig drops CONFIG_NO_SUCH_OPTION, as
# Kconfig drops a symbol it does not know, and keeps every other line, so
# that a fragment's options are all there when the agent verifies them.
#
#   kstandin_tree DIR [KERNEL]   a repository at DIR (mkrepo_init) with the
#                                two files, not committed. bzImage installs
#                                KERNEL (a distribution kernel) as
#                                O/arch/x86/boot/bzImage; without KERNEL it
#                                fails, "the stand-in builds no kernel".
#                                KSTANDIN_BZIMAGE: recipe lines (each a tab
#                                first) run before the image is installed.

kstandin_tree() {
	mkrepo_init "$1" > /dev/null || return
	mkdir -p "$1/scripts/kconfig" || return
	cat > "$1/scripts/kconfig/merge_config.sh" <<'EOS'
#!/bin/sh
# merge_config.sh -m -O OUT BASE FRAGMENT: the fragment's lines win.
set -e
[ "$1" = -m ] && [ "$2" = -O ] || exit 9
base=$4 frag=$5
for n in $(sed -n -e 's/^\(CONFIG_[A-Za-z0-9_]*\)=.*/\1/p' -e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1/p' "$frag"); do
	sed -e "/^$n=/d" -e "/^# $n is not set/d" "$base" > "$base.tmp"; mv "$base.tmp" "$base"
done
cat "$frag" >> "$base"
EOS
	{
		printf '# A stand-in kernel tree: answers as Kbuild does when called with O=.\n'
		printf 'tinyconfig:\n\tprintf '\''CONFIG_64BIT=y\\n# CONFIG_NET is not set\\n'\'' > $(O)/.config\n'
		printf 'olddefconfig:\n\tsed -i '\''/^CONFIG_NO_SUCH_OPTION=/d'\'' $(O)/.config\n'
		printf 'bzImage:\n'
		[ -n "${KSTANDIN_BZIMAGE:-}" ] && printf '%s\n' "$KSTANDIN_BZIMAGE"
		if [ -n "${2:-}" ]; then
			printf '\t@echo "  CC      net/ipv4/udp.o"\n'
			printf '\tmkdir -p $(O)/arch/x86/boot\n\tcp %s $(O)/arch/x86/boot/bzImage\n' "$2"
		else
			printf '\t@echo '\''the stand-in builds no kernel'\'' >&2; exit 1\n'
		fi
	} > "$1/Makefile"
}
