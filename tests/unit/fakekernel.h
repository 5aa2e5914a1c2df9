/*
 * fakekernel.h: a stand-in kernel tree's make and merge_config.sh, small
 * shell scripts that behave as Kbuild's do at the points kconfig.c and
 * kbuild.c rely on (arguments, files written, output, exit status), so
 * that their tests need no kernel.
 */
#ifndef TEST_FAKEKERNEL_H
#define TEST_FAKEKERNEL_H

/*
 * The stand-in make: "tinyconfig" writes a small .config; "olddefconfig"
 * drops CONFIG_NEEDS_MISSING_DEP and demotes CONFIG_ONLY_M to m, as Kconfig
 * does when dependencies are not met; "bzImage" prints $KB_FILES (3)
 * compile lines as Kbuild does and copies the tree's VERSION file to the
 * image, or fails as a compiler would when the tree has a file BROKEN.
 * Each call is logged to $KC_LOG.
 */
static const char fake_make[] =
	"#!/bin/sh\n"
	"set -e\n"
	"echo \"$(pwd) $*\" >> \"$KC_LOG\"\n"
	"for a; do case $a in O=*) out=${a#O=};; esac; done\n"
	"for t; do :; done\n"
	"case $t in\n"
	"tinyconfig) printf 'CONFIG_BASE_TINY=y\\n# CONFIG_NET is not set\\n' > \"$out/.config\";;\n"
	"olddefconfig)\n"
	"  sed -e '/^CONFIG_NEEDS_MISSING_DEP=/d' -e 's/^CONFIG_ONLY_M=y/CONFIG_ONLY_M=m/' \\\n"
	"    \"$out/.config\" > \"$out/.config.new\"\n"
	"  mv \"$out/.config.new\" \"$out/.config\";;\n"
	"defconfig) echo 'no rule to make defconfig' >&2; exit 2;;\n"
	"bzImage)\n"
	"  if [ -e BROKEN ]; then echo 'net/ipv4/udp.c:9:1: error: expected ;' >&2; exit 2; fi\n"
	"  i=0; while [ $i -lt ${KB_FILES:-3} ]; do echo \"  CC      net/f$i.o\"; i=$((i + 1)); done\n"
	"  [ -z \"$KB_SLOW\" ] || sleep \"$KB_SLOW\"\n"
	"  mkdir -p \"$out/arch/x86/boot\"\n"
	"  cat VERSION > \"$out/arch/x86/boot/bzImage\";;\n"
	"esac\n";

/* The stand-in merge_config.sh -m -O OUT BASE FRAGMENT: later lines win. */
static const char fake_merge[] =
	"#!/bin/sh\n"
	"set -e\n"
	"echo \"$(pwd) merge $*\" >> \"$KC_LOG\"\n"
	"[ \"$1\" = -m ] && [ \"$2\" = -O ] || exit 9\n"
	"base=$4 frag=$5\n"
	"for n in $(sed -n -e 's/^\\(CONFIG_[A-Za-z0-9_]*\\)=.*/\\1/p' "
	"-e 's/^# \\(CONFIG_[A-Za-z0-9_]*\\) is not set$/\\1/p' \"$frag\"); do\n"
	"  sed -e \"/^$n=/d\" -e \"/^# $n is not set/d\" \"$base\" > \"$base.tmp\"; mv \"$base.tmp\" \"$base\"\n"
	"done\n"
	"cat \"$frag\" >> \"$base\"\n";

#endif
