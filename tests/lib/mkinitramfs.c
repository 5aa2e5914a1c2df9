/*
 * mkinitramfs: an initramfs from the shell through agents/initramfs.c, for
 * the tests that need a guest of their own (tests/t0103-ssh.sh: a device
 * under test with busybox, dropbear and the virtio_net module):
 *
 *   mkinitramfs OUT --init FILE [--program P]... [--file GUEST=HOST]...
 *               [--modules-dir DIR --module NAME...] [--gzip]
 *
 * --program adds P with the libraries ldd lists; --file a host file at a
 * guest path (its mode kept); --module a kernel module with what it needs,
 * listed in load order in /etc/bisect-modules. Exit 0, or 1 with the
 * message on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "initramfs.h"
#include "util.h"

#define MAX_ITEMS 64

static int usage(void)
{
	fprintf(stderr, "usage: mkinitramfs OUT --init FILE [--program P]... [--file GUEST=HOST]...\n"
			"                   [--modules-dir DIR --module NAME...] [--gzip]\n");
	return 1;
}

int main(int argc, char **argv)
{
	static const char *const dirs[] = {
		"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/proc", "/sys", "/dev",
		"/run", "/root", "/etc", "/lib", "/var",
	};
	const char *programs[MAX_ITEMS], *files[MAX_ITEMS], *modules[MAX_ITEMS + 1];
	const char *init = NULL, *moddir = NULL, *out;
	size_t np = 0, nf = 0, nm = 0, len;
	struct initramfs *fs;
	struct sbuf load = SBUF_INIT;
	char *text = NULL;
	int gz = 0, rc = 0;

	if (argc < 2 || argv[1][0] == '-')
		return usage();
	out = argv[1];
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i];

		if (!strcmp(o, "--gzip")) {
			gz = 1;
			continue;
		}
		if (i + 1 >= argc)
			return usage();
		if (!strcmp(o, "--init"))
			init = argv[++i];
		else if (!strcmp(o, "--modules-dir"))
			moddir = argv[++i];
		else if (!strcmp(o, "--program") && np < MAX_ITEMS)
			programs[np++] = argv[++i];
		else if (!strcmp(o, "--file") && nf < MAX_ITEMS)
			files[nf++] = argv[++i];
		else if (!strcmp(o, "--module") && nm < MAX_ITEMS)
			modules[nm++] = argv[++i];
		else
			return usage();
	}
	modules[nm] = NULL;
	if (!init || (nm && !moddir))
		return usage();
	if (file_read(&text, &len, init, 1 << 20) < 0) {
		fprintf(stderr, "mkinitramfs: %s\n", err_msg());
		return 1;
	}
	fs = initramfs_new();
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !rc; i++)
		rc = initramfs_add_dir(fs, dirs[i], 0755);
	if (!rc)
		rc = initramfs_add_dir(fs, "/tmp", 01777);
	if (!rc)
		rc = initramfs_add_chardev(fs, "/dev/console", 0600, 5, 1);
	if (!rc)
		rc = initramfs_add_chardev(fs, "/dev/null", 0666, 1, 3);
	if (!rc)
		rc = initramfs_add_data(fs, "/init", 0755, text, len);
	for (size_t i = 0; i < np && !rc; i++)
		rc = initramfs_add_program(NULL, fs, programs[i]);
	for (size_t i = 0; i < nf && !rc; i++) {
		char *guest = xstrdup(files[i]), *eq = strchr(guest, '=');

		if (!eq) {
			free(guest);
			rc = err_set(ERR_INVALID, "--file %s: not GUEST=HOST", files[i]);
			break;
		}
		*eq = '\0';
		rc = initramfs_add_host_file(fs, guest, 0, eq + 1);
		free(guest);
	}
	if (!rc)
		rc = initramfs_add_busybox(fs, NULL);
	if (!rc && nm) {
		rc = initramfs_add_modules(fs, &load, moddir, modules);
		if (!rc && load.len)
			rc = initramfs_add_data(fs, INITRAMFS_MODULES_LIST, 0644, load.buf, load.len);
	}
	if (!rc)
		rc = initramfs_write_file(out, fs, gz);
	if (rc)
		fprintf(stderr, "mkinitramfs: %s\n", err_msg());
	sbuf_release(&load);
	initramfs_free(fs);
	free(text);
	return rc ? 1 : 0;
}
