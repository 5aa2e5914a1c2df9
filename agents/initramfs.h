/*
 * initramfs: the guest's root file system for the qemu boot method. A newc
 * cpio archive (the format the kernel unpacks: see the kernel's
 * Documentation/driver-api/early-userspace/buffer-format.rst) holding
 * busybox with its applet links, the workload's programs with every shared
 * library ldd lists, and an /init script. Entries are written sorted by
 * path, with owner root, a fixed mtime and inode numbers given in that
 * order, so the same inputs give the same bytes (and gzip -n keeps that).
 */
#ifndef AGENT_INITRAMFS_H
#define AGENT_INITRAMFS_H

#include <stddef.h>

#include "util.h"

/* Every entry's mtime: fixed, so archives of the same inputs are equal. */
#define INITRAMFS_MTIME 0u
/* A host file larger than this is refused (ERR_INVALID). */
#define INITRAMFS_MAX_FILE (256u << 20)
/* Longest guest path accepted. */
#define INITRAMFS_MAX_PATH 1024

struct initramfs;

struct initramfs *initramfs_new(void);
void initramfs_free(struct initramfs *fs);

/*
 * Adding entries. Guest paths are absolute ("/usr/bin/iperf3"), without
 * "." or ".." parts or double slashes (ERR_INVALID otherwise); missing
 * parent directories are added with mode 0755. mode is the permission
 * bits (07777); the file type comes from the function.
 *
 * Adding a path twice: the same directory again, or the same host file at
 * the same path, is a no-op; an applet link (initramfs_add_busybox) gives
 * way to any other entry, whichever comes first; any other clash is
 * ERR_EXISTS naming the path.
 */
int initramfs_add_dir(struct initramfs *fs, const char *path, unsigned mode);
/* A regular file with the given contents (copied). */
int initramfs_add_data(struct initramfs *fs, const char *path, unsigned mode,
		       const void *data, size_t len);
/*
 * A regular file read from host_path when the archive is written (a
 * symlink on the host is followed). mode 0: the host file's permissions.
 * ERR_NOTFOUND when host_path is not a regular file now.
 */
int initramfs_add_host_file(struct initramfs *fs, const char *path, unsigned mode,
			    const char *host_path);
int initramfs_add_symlink(struct initramfs *fs, const char *path, const char *target);
/* A character device node, e.g. /dev/console (5, 1): no root needed, it is just bytes. */
int initramfs_add_chardev(struct initramfs *fs, const char *path, unsigned mode,
			  unsigned major, unsigned minor);

/*
 * busybox (best a static build: Debian's busybox-static; a dynamic one
 * comes with the libraries ldd lists) at /bin/busybox, and a
 * link to it for every applet `busybox --list-full` names, unless something
 * else takes that path. busybox NULL: "busybox" looked up in PATH.
 * ERR_NOTFOUND "busybox not found on the agent: install busybox-static".
 */
int initramfs_add_busybox(struct initramfs *fs, const char *busybox);

/*
 * A program at its host path, plus every shared library `ldd` lists for it
 * (the dynamic loader included), each at its host path. prog is a path or
 * a name looked up as initramfs_find_program() does. *guest_path (may be
 * NULL) gets the path it has in the guest, to call it by: the caller frees.
 * ERR_NOTFOUND "iperf3 not found on the agent: install iperf3" for a
 * missing program, ERR_NOTFOUND naming the library for one ldd cannot find.
 */
int initramfs_add_program(char **guest_path, struct initramfs *fs, const char *prog);

/*
 * Where prog is on the host: itself when it holds a '/', else the first
 * executable match in $PATH, then /usr/local/sbin, /usr/sbin and /sbin
 * (tools like tc live there and an agent's PATH may lack them). *path is
 * the caller's. ERR_NOTFOUND with the message above.
 */
int initramfs_find_program(char **path, const char *prog);

/*
 * The paths of the libraries in ldd's output text (ldd PROGRAM), in the
 * order listed, duplicates left out: "name => /path (0x...)" lines and the
 * loader's "/path (0x...)" line; the vDSO and "statically linked" / "not a
 * dynamic executable" give none. A "name => not found" line is
 * ERR_NOTFOUND naming the library. *paths is a NULL-terminated array the
 * caller frees with initramfs_strv_free(); *n (may be NULL) its length.
 */
int initramfs_parse_ldd(char ***paths, size_t *n, const char *text);
void initramfs_strv_free(char **v);

/*
 * The archive: a newc cpio (uncompressed) appended to out. Fails only when
 * a host file went missing or grew past INITRAMFS_MAX_FILE since it was
 * added.
 */
int initramfs_write(struct sbuf *out, const struct initramfs *fs);

/*
 * Writes the archive to path (atomically), gzip'd with `gzip -9n` when
 * compress is set. The kernel takes either; under TCG an uncompressed
 * archive unpacks faster than a gzip'd one inflates.
 */
int initramfs_write_file(const char *path, const struct initramfs *fs, int compress);

/*
 * Kernel modules by name ("virtio_net"; '-' and '_' alike), each with what
 * it needs, from moddir (a kernel's /lib/modules/RELEASE: its modules.dep
 * and modules.builtin), at their host paths. load gets one guest path a
 * line, in the order to insmod them (what a module needs first; each
 * once). A built-in module adds nothing. ERR_NOTFOUND for a module
 * neither listed nor built in, or moddir without modules.dep; ERR_INVALID
 * for a compressed one (busybox insmod loads plain .ko files).
 */
int initramfs_add_modules(struct initramfs *fs, struct sbuf *load, const char *moddir,
			  const char *const *names);

/*
 * The release a bzImage says it is ("6.1.0-57-amd64": the first word of
 * its setup header's kernel_version string, the kernel's
 * Documentation/arch/x86/boot.rst), as uname -r prints it once booted, into
 * out (len bytes). ERR_INVALID when image is not a bzImage.
 */
int initramfs_kernel_release(char *out, size_t len, const char *image);

/* Where initramfs_build() lists the modules to load, in order (qemu_init_script() loads them). */
#define INITRAMFS_MODULES_LIST "/etc/bisect-modules"

/* What initramfs_build() puts in the archive. */
struct initramfs_spec {
	const char *busybox;            /* NULL: "busybox" in PATH */
	const char *const *programs;    /* NULL-terminated names or paths; may be NULL */
	const char *init;               /* the /init script's text (mode 0755) */
	int compress;                   /* gzip -9n */
	const char *const *modules;     /* kernel modules to add and load (NULL-terminated); may be NULL */
	const char *modules_dir;        /* their /lib/modules/RELEASE, when modules are given */
	const char *const *files;       /* data files by absolute host path, each at the same guest path (NULL-terminated); may be NULL */
};
#define INITRAMFS_SPEC_INIT { NULL, NULL, NULL, 0, NULL, NULL, NULL }

/*
 * The whole guest root: /dev/console, /proc, /sys, /dev, /tmp, /run,
 * /root, /etc, busybox, the programs with their libraries, the data
 * files, the modules and /init, written to out_path as
 * initramfs_write_file() does. A data file missing on the host is
 * ERR_NOTFOUND naming it.
 */
int initramfs_build(const char *out_path, const struct initramfs_spec *spec);

#endif
