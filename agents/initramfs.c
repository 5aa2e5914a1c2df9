/*
 * initramfs: a newc cpio writer and the guest root the qemu boot method
 * boots: busybox, the workload's programs with their libraries, /init.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "initramfs.h"
#include "run.h"
#include "util.h"

#define LDD_TIMEOUT_MS 30000
#define GZIP_TIMEOUT_MS 120000
#define BUSYBOX_GUEST "/bin/busybox"

enum entry_kind { E_DIR = 1, E_FILE, E_HOST, E_LINK, E_CHR };

struct entry {
	char *path;             /* without the leading '/' */
	int kind;
	int weak;               /* an applet link: anything else replaces it */
	unsigned mode;          /* permission bits */
	char *data;             /* E_FILE contents, E_LINK target, E_HOST host path */
	size_t len;             /* E_FILE, E_LINK */
	unsigned major, minor;  /* E_CHR */
};

struct initramfs {
	struct entry *e;
	size_t n, cap;
};

/* Debian packages to name when a program is missing. */
static const struct {
	const char *prog, *pkg;
} packages[] = {
	{ "busybox", "busybox-static" },
	{ "iperf3", "iperf3" },
	{ "tc", "iproute2" },
	{ "ip", "iproute2" },
	{ "xdp-bench", "xdp-tools" },
	{ "perf", "linux-perf" },
	{ "gzip", "gzip" },
	{ "ldd", "libc-bin" },
};

static const char *package_of(const char *prog)
{
	const char *base = strrchr(prog, '/');

	base = base ? base + 1 : prog;
	for (size_t i = 0; i < sizeof(packages) / sizeof(packages[0]); i++)
		if (!strcmp(packages[i].prog, base))
			return packages[i].pkg;
	return base;
}

static int not_found(const char *prog)
{
	const char *base = strrchr(prog, '/');

	base = base && base[1] ? base + 1 : prog;
	return err_set(ERR_NOTFOUND, "%s not found on the agent: install %s", base,
		       package_of(prog));
}

struct initramfs *initramfs_new(void)
{
	return xcalloc(1, sizeof(struct initramfs));
}

static void entry_release(struct entry *e)
{
	free(e->path);
	free(e->data);
}

void initramfs_free(struct initramfs *fs)
{
	if (!fs)
		return;
	for (size_t i = 0; i < fs->n; i++)
		entry_release(&fs->e[i]);
	free(fs->e);
	free(fs);
}

void initramfs_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

/* An absolute path without empty, "." or ".." parts. */
static int check_path(const char *path)
{
	const char *p;

	if (!path || path[0] != '/' || !path[1] || strlen(path) > INITRAMFS_MAX_PATH)
		return err_set(ERR_INVALID, "initramfs: '%s' is not an absolute path",
			       path ? path : "(null)");
	for (p = path + 1; *p;) {
		size_t l = strcspn(p, "/");

		if (l == 0 || (l == 1 && p[0] == '.') || (l == 2 && p[0] == '.' && p[1] == '.'))
			return err_set(ERR_INVALID, "initramfs: bad path '%s'", path);
		p += l;
		if (*p == '/' && !p[1])
			return err_set(ERR_INVALID, "initramfs: bad path '%s'", path);
		if (*p)
			p++;
	}
	return 0;
}

static struct entry *lookup(const struct initramfs *fs, const char *rel)
{
	for (size_t i = 0; i < fs->n; i++)
		if (!strcmp(fs->e[i].path, rel))
			return &fs->e[i];
	return NULL;
}

static int same_entry(const struct entry *a, const struct entry *b)
{
	if (a->kind != b->kind || a->mode != b->mode)
		return 0;
	switch (a->kind) {
	case E_DIR:
		return 1;
	case E_HOST:
		return !strcmp(a->data, b->data);
	case E_CHR:
		return a->major == b->major && a->minor == b->minor;
	default:
		return a->len == b->len && !memcmp(a->data, b->data, a->len);
	}
}

static int add_dir_rel(struct initramfs *fs, const char *rel, unsigned mode);

/* Takes ownership of e's strings whatever happens. */
static int add_entry(struct initramfs *fs, struct entry *e)
{
	struct entry *old;
	char *slash;
	int rc;

	/* Parents first. */
	slash = strrchr(e->path, '/');
	if (slash) {
		char *parent = xstrndup(e->path, (size_t)(slash - e->path));

		rc = add_dir_rel(fs, parent, 0755);
		free(parent);
		if (rc) {
			entry_release(e);
			return rc;
		}
	}
	old = lookup(fs, e->path);
	if (old) {
		if (e->weak || same_entry(old, e)) {
			entry_release(e);
			return 0;
		}
		if (old->weak) {
			entry_release(old);
			*old = *e;
			return 0;
		}
		rc = err_set(ERR_EXISTS, "initramfs: /%s is in the archive already", e->path);
		entry_release(e);
		return rc;
	}
	if (fs->n == fs->cap) {
		fs->cap = fs->cap ? 2 * fs->cap : 64;
		fs->e = xrealloc(fs->e, fs->cap * sizeof(*fs->e));
	}
	fs->e[fs->n++] = *e;
	return 0;
}

static int add_dir_rel(struct initramfs *fs, const char *rel, unsigned mode)
{
	struct entry e = { 0 };
	struct entry *old = lookup(fs, rel);

	if (old && old->kind == E_DIR)
		return 0;
	e.path = xstrdup(rel);
	e.kind = E_DIR;
	e.mode = mode & 07777;
	return add_entry(fs, &e);
}

int initramfs_add_dir(struct initramfs *fs, const char *path, unsigned mode)
{
	int rc = check_path(path);

	return rc ? rc : add_dir_rel(fs, path + 1, mode);
}

int initramfs_add_data(struct initramfs *fs, const char *path, unsigned mode,
		       const void *data, size_t len)
{
	struct entry e = { 0 };
	int rc = check_path(path);

	if (rc)
		return rc;
	if (len > INITRAMFS_MAX_FILE)
		return err_set(ERR_INVALID, "initramfs: %s is too large", path);
	e.path = xstrdup(path + 1);
	e.kind = E_FILE;
	e.mode = mode & 07777;
	e.data = xmalloc(len + 1);
	if (len)
		memcpy(e.data, data, len);
	e.len = len;
	return add_entry(fs, &e);
}

int initramfs_add_host_file(struct initramfs *fs, const char *path, unsigned mode,
			    const char *host_path)
{
	struct entry e = { 0 };
	struct stat st;
	int rc = check_path(path);

	if (rc)
		return rc;
	if (stat(host_path, &st) < 0 || !S_ISREG(st.st_mode))
		return err_set(ERR_NOTFOUND, "initramfs: %s is not a file on the agent", host_path);
	if ((unsigned long long)st.st_size > INITRAMFS_MAX_FILE)
		return err_set(ERR_INVALID, "initramfs: %s is too large", host_path);
	e.path = xstrdup(path + 1);
	e.kind = E_HOST;
	e.mode = (mode ? mode : (unsigned)st.st_mode) & 07777;
	e.data = xstrdup(host_path);
	return add_entry(fs, &e);
}

static int add_link(struct initramfs *fs, const char *path, const char *target, int weak)
{
	struct entry e = { 0 };
	int rc = check_path(path);

	if (rc)
		return rc;
	if (!target || !*target || strlen(target) > INITRAMFS_MAX_PATH)
		return err_set(ERR_INVALID, "initramfs: bad link target for %s", path);
	e.path = xstrdup(path + 1);
	e.kind = E_LINK;
	e.weak = weak;
	e.mode = 0777;
	e.data = xstrdup(target);
	e.len = strlen(target);
	return add_entry(fs, &e);
}

int initramfs_add_symlink(struct initramfs *fs, const char *path, const char *target)
{
	return add_link(fs, path, target, 0);
}

int initramfs_add_chardev(struct initramfs *fs, const char *path, unsigned mode,
			  unsigned major, unsigned minor)
{
	struct entry e = { 0 };
	int rc = check_path(path);

	if (rc)
		return rc;
	e.path = xstrdup(path + 1);
	e.kind = E_CHR;
	e.mode = mode & 07777;
	e.major = major;
	e.minor = minor;
	return add_entry(fs, &e);
}

static int is_exec_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int initramfs_find_program(char **out, const char *prog)
{
	const char *path = getenv("PATH");
	struct sbuf dirs = SBUF_INIT;
	char *save = NULL;
	int rc = ERR_NOTFOUND;

	*out = NULL;
	if (!prog || !*prog)
		return err_set(ERR_INVALID, "initramfs: empty program name");
	if (strchr(prog, '/')) {
		if (!is_exec_file(prog))
			return not_found(prog);
		*out = xstrdup(prog);
		return 0;
	}
	sbuf_adds(&dirs, path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	sbuf_adds(&dirs, ":/usr/local/sbin:/usr/sbin:/sbin");
	for (char *d = strtok_r(dirs.buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char *p;

		if (*d != '/')
			continue; /* a relative PATH entry would name a file by cwd */
		p = xasprintf("%s/%s", d, prog);
		if (is_exec_file(p)) {
			*out = p;
			rc = 0;
			break;
		}
		free(p);
	}
	sbuf_release(&dirs);
	return rc ? not_found(prog) : 0;
}

static void strv_push(char ***v, size_t *n, char *s)
{
	*v = xrealloc(*v, (*n + 2) * sizeof(**v));
	(*v)[(*n)++] = s;
	(*v)[*n] = NULL;
}

int initramfs_parse_ldd(char ***paths, size_t *n, const char *text)
{
	char **v = xcalloc(1, sizeof(*v));
	size_t cnt = 0;
	const char *line = text ? text : "";

	*paths = NULL;
	if (n)
		*n = 0;
	while (*line) {
		const char *eol = strchr(line, '\n'), *p, *arrow, *start, *end;
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		char *lib;
		int dup = 0;

		p = line;
		while (p < line + len && (*p == ' ' || *p == '\t'))
			p++;
		arrow = memmem(p, (size_t)(line + len - p), " => ", 4);
		if (arrow) {
			start = arrow + 4;
			while (start < line + len && *start == ' ')
				start++;
			if ((size_t)(line + len - start) >= 9 && !strncmp(start, "not found", 9)) {
				int rc = err_set(ERR_NOTFOUND, "ldd: library %.*s not found on the agent",
						 (int)(arrow - p), p);

				initramfs_strv_free(v);
				return rc;
			}
		} else {
			start = p;
		}
		/* Only absolute paths: the vDSO and ldd's remarks have none. */
		if (start < line + len && *start == '/') {
			end = start;
			while (end < line + len && *end != ' ' && *end != '\t' && *end != '\r')
				end++;
			lib = xstrndup(start, (size_t)(end - start));
			for (size_t i = 0; i < cnt && !dup; i++)
				dup = !strcmp(v[i], lib);
			if (dup)
				free(lib);
			else
				strv_push(&v, &cnt, lib);
		}
		line += len;
		if (*line == '\n')
			line++;
	}
	*paths = v;
	if (n)
		*n = cnt;
	return 0;
}

/* Every shared library `ldd path` lists, each at its host path. */
static int add_libs(struct initramfs *fs, const char *path)
{
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	const char *argv[] = { "ldd", path, NULL };
	char **libs = NULL, how[64];
	int rc;

	o.argv = argv;
	o.timeout_ms = LDD_TIMEOUT_MS;
	if (run_cmd(&res, &o) < 0)
		return err_set(ERR_FAIL, "ldd %s: %s", path, err_msg());
	if (res.exited && res.status == 127) {
		rc = not_found("ldd");
	} else if (!run_ok(&res) && !strstr(res.out, "not a dynamic executable") &&
		   !strstr(res.err, "not a dynamic executable")) {
		const char *tail = run_tail(res.err_len ? res.err : res.out, 160);

		rc = err_set(ERR_FAIL, "ldd %s: %s: %s", path, run_describe(&res, how, sizeof(how)),
			     tail);
	} else {
		rc = initramfs_parse_ldd(&libs, NULL, res.out);
		if (rc)
			err_set(rc, "%s needs a library the agent lacks: %s", path, err_msg());
	}
	run_result_release(&res);
	for (char **l = libs; !rc && l && *l; l++)
		rc = initramfs_add_host_file(fs, *l, 0, *l);
	initramfs_strv_free(libs);
	return rc;
}

int initramfs_add_program(char **guest_path, struct initramfs *fs, const char *prog)
{
	char *path = NULL;
	int rc;

	if (guest_path)
		*guest_path = NULL;
	rc = initramfs_find_program(&path, prog);
	if (rc)
		return rc;
	rc = initramfs_add_host_file(fs, path, 0, path);
	if (!rc)
		rc = add_libs(fs, path);
	if (!rc && guest_path) {
		*guest_path = path;
		path = NULL;
	}
	free(path);
	return rc;
}

int initramfs_add_busybox(struct initramfs *fs, const char *busybox)
{
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	const char *argv[3];
	char *path = NULL, how[64];
	int rc;

	rc = initramfs_find_program(&path, busybox ? busybox : "busybox");
	if (rc)
		return rc;
	rc = initramfs_add_host_file(fs, BUSYBOX_GUEST, 0755, path);
	/* Debian's busybox-static needs nothing; a dynamic busybox gets its libraries. */
	if (!rc)
		rc = add_libs(fs, path);
	if (rc)
		goto out;
	argv[0] = path;
	argv[1] = "--list-full";
	argv[2] = NULL;
	o.argv = argv;
	o.timeout_ms = LDD_TIMEOUT_MS;
	if (run_cmd(&res, &o) < 0) {
		rc = err_set(ERR_FAIL, "%s --list-full: %s", path, err_msg());
		goto out;
	}
	if (!run_ok(&res)) {
		rc = err_set(ERR_FAIL, "%s --list-full: %s", path,
			     run_describe(&res, how, sizeof(how)));
	} else {
		for (char *line = res.out, *next; !rc && line && *line; line = next) {
			next = strchr(line, '\n');
			if (next)
				*next++ = '\0';
			if (!*line || !strcmp(line, "bin/busybox"))
				continue;
			{
				char *guest = xasprintf("/%s", line);

				/* An applet that cannot be a clean path is not worth failing over. */
				if (check_path(guest) == 0)
					rc = add_link(fs, guest, BUSYBOX_GUEST, 1);
				else
					err_clear();
				free(guest);
			}
		}
	}
	run_result_release(&res);
out:
	free(path);
	return rc;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *const *x = a, *const *y = b;

	return strcmp((*x)->path, (*y)->path);
}

static void pad4(struct sbuf *out)
{
	static const char zero[4];

	if (out->len % 4)
		sbuf_add(out, zero, 4 - out->len % 4);
}

/* One newc header and name; the caller appends the data and pads. */
static void cpio_header(struct sbuf *out, unsigned ino, unsigned mode, unsigned nlink,
			size_t filesize, unsigned rmaj, unsigned rmin, const char *name)
{
	sbuf_addf(out, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		  ino, mode, 0u, 0u, nlink, INITRAMFS_MTIME, (unsigned)filesize,
		  0u, 0u, rmaj, rmin, (unsigned)strlen(name) + 1, 0u);
	sbuf_add(out, name, strlen(name) + 1);
	pad4(out);
}

int initramfs_write(struct sbuf *out, const struct initramfs *fs)
{
	const struct entry **sorted = xcalloc(fs->n + 1, sizeof(*sorted));
	size_t base = out->len;
	unsigned ino = 1;
	int rc = 0;

	/* The archive's offsets are relative to its start: pad from there. */
	if (base % 4) {
		free(sorted);
		return err_set(ERR_INVALID, "initramfs: output buffer not 4-byte aligned");
	}
	for (size_t i = 0; i < fs->n; i++)
		sorted[i] = &fs->e[i];
	qsort(sorted, fs->n, sizeof(*sorted), cmp_entry);
	for (size_t i = 0; i < fs->n && !rc; i++, ino++) {
		const struct entry *e = sorted[i];
		char *data = NULL;
		size_t len = 0;

		switch (e->kind) {
		case E_DIR:
			cpio_header(out, ino, S_IFDIR | e->mode, 2, 0, 0, 0, e->path);
			break;
		case E_CHR:
			cpio_header(out, ino, S_IFCHR | e->mode, 1, 0, e->major, e->minor, e->path);
			break;
		case E_LINK:
			cpio_header(out, ino, S_IFLNK | 0777, 1, e->len, 0, 0, e->path);
			sbuf_add(out, e->data, e->len);
			pad4(out);
			break;
		case E_FILE:
			cpio_header(out, ino, S_IFREG | e->mode, 1, e->len, 0, 0, e->path);
			sbuf_add(out, e->data, e->len);
			pad4(out);
			break;
		case E_HOST:
			rc = file_read(&data, &len, e->data, INITRAMFS_MAX_FILE);
			if (rc) {
				rc = err_set(rc == ERR_NOTFOUND ? ERR_NOTFOUND : ERR_FAIL,
					     "initramfs: cannot read %s: %s", e->data, err_msg());
				break;
			}
			cpio_header(out, ino, S_IFREG | e->mode, 1, len, 0, 0, e->path);
			sbuf_add(out, data, len);
			pad4(out);
			free(data);
			break;
		}
	}
	if (!rc) {
		cpio_header(out, 0, 0, 1, 0, 0, 0, "TRAILER!!!");
		/* Some loaders read in 512-byte blocks, as cpio(1) writes. */
		while ((out->len - base) % 512)
			sbuf_add(out, "", 1);
	}
	free(sorted);
	return rc;
}

int initramfs_write_file(const char *path, const struct initramfs *fs, int compress)
{
	struct sbuf cpio = SBUF_INIT;
	char *tmp = NULL, *gz = NULL, how[64];
	int rc;

	rc = initramfs_write(&cpio, fs);
	if (rc)
		goto out;
	if (!compress) {
		rc = file_write_atomic(path, cpio.buf, cpio.len);
		goto out;
	}
	tmp = xasprintf("%s.cpio.tmp", path);
	gz = xasprintf("%s.gz", tmp);
	unlink(gz);
	rc = file_write_atomic(tmp, cpio.buf, cpio.len);
	if (!rc) {
		struct run_opts o = RUN_OPTS_INIT;
		struct run_result res;
		const char *argv[] = { "gzip", "-9n", "-f", "--", tmp, NULL };

		o.argv = argv;
		o.timeout_ms = GZIP_TIMEOUT_MS;
		if (run_cmd(&res, &o) < 0) {
			rc = err_set(ERR_FAIL, "gzip: %s", err_msg());
		} else if (res.exited && res.status == 127) {
			rc = not_found("gzip");
			run_result_release(&res);
		} else {
			if (!run_ok(&res))
				rc = err_set(ERR_FAIL, "gzip %s: %s: %s", tmp,
					     run_describe(&res, how, sizeof(how)), run_tail(res.err, 160));
			else if (rename(gz, path) < 0)
				rc = err_set(ERR_FAIL, "rename %s: %s", gz, strerror(errno));
			run_result_release(&res);
		}
	}
	unlink(tmp);
	unlink(gz);
out:
	sbuf_release(&cpio);
	free(tmp);
	free(gz);
	return rc;
}

/* --- kernel modules -------------------------------------------------------- */

/* The first nlen bytes of name (up to a NUL) with '-' read as '_', as modprobe does. */
static void mod_norm(char *out, size_t len, const char *name, size_t nlen)
{
	size_t i;

	for (i = 0; i < nlen && name[i] && i + 1 < len; i++)
		out[i] = name[i] == '-' ? '_' : name[i];
	out[i] = '\0';
}

/* The module name of a modules.dep path: "kernel/net/core/failover.ko" -> "failover". */
static void mod_name_of(char *out, size_t len, const char *path, size_t plen)
{
	const char *base = path, *dot;

	for (size_t i = 0; i < plen; i++)
		if (path[i] == '/')
			base = path + i + 1;
	dot = base;
	while (dot < path + plen && *dot != '.')
		dot++;
	mod_norm(out, len, base, (size_t)(dot - base));
}

/* The modules.dep line of module name (normalized), as [line, line + *len); NULL when absent. */
static const char *mod_dep_line(size_t *len, const char *dep, const char *name)
{
	char got[256];

	for (const char *l = dep; *l;) {
		const char *nl = strchr(l, '\n'), *colon;
		size_t ll = nl ? (size_t)(nl - l) : strlen(l);

		/* modules.dep's "path: deps", modules.builtin's "path" */
		colon = memchr(l, ':', ll);
		mod_name_of(got, sizeof(got), l, colon ? (size_t)(colon - l) : ll);
		if (ll && !strcmp(got, name)) {
			*len = ll;
			return l;
		}
		l += ll + (nl != NULL);
	}
	return NULL;
}

/* Adds the module at rel (a modules.dep path) once, its line to load. */
static int mod_add_file(struct initramfs *fs, struct sbuf *load, const char *moddir, const char *rel,
			size_t rlen)
{
	char host[PATH_MAX], line[PATH_MAX + 2];
	int rc;

	if ((size_t)snprintf(host, sizeof(host), "%s/%.*s", moddir, (int)rlen, rel) >= sizeof(host))
		return err_set(ERR_INVALID, "module path too long: %s/%.*s", moddir, (int)rlen, rel);
	if (rlen < 3 || memcmp(rel + rlen - 3, ".ko", 3))
		return err_set(ERR_INVALID, "module %s is compressed: busybox insmod loads plain .ko "
			       "files only (unpack it, or build it in)", host);
	snprintf(line, sizeof(line), "%s\n", host);
	if (strstr(load->buf ? load->buf : "", line))
		return 0;
	if ((rc = initramfs_add_host_file(fs, host, 0644, host)))
		return rc == ERR_NOTFOUND ?
		       err_set(rc, "module %s is listed in %s/modules.dep but missing", host, moddir) : rc;
	sbuf_adds(load, line);
	return 0;
}

int initramfs_add_modules(struct initramfs *fs, struct sbuf *load, const char *moddir,
			  const char *const *names)
{
	char path[PATH_MAX], want[256];
	char *dep = NULL, *builtin = NULL;
	size_t dep_len, b_len;
	int rc = 0;

	if (!names || !*names)
		return 0;
	snprintf(path, sizeof(path), "%s/modules.dep", moddir);
	if ((rc = file_read(&dep, &dep_len, path, 64u << 20)) < 0) {
		rc = err_set(ERR_NOTFOUND, "no %s: is the kernel's modules directory right? (%s)", path,
			     err_msg());
		goto out;
	}
	snprintf(path, sizeof(path), "%s/modules.builtin", moddir);
	if (file_read(&builtin, &b_len, path, 16u << 20) < 0)
		builtin = NULL;
	for (const char *const *n = names; !rc && *n; n++) {
		const char *l;
		size_t ll;
		char deps[4096];
		const char *colon, *d;

		mod_norm(want, sizeof(want), *n, strlen(*n));
		l = mod_dep_line(&ll, dep, want);
		if (!l) {
			if (builtin && mod_dep_line(&ll, builtin, want))
				continue;       /* built in: nothing to load */
			rc = err_set(ERR_NOTFOUND, "kernel module %s is neither in %s/modules.dep nor "
				     "built in", *n, moddir);
			break;
		}
		if (!(colon = memchr(l, ':', ll))) {
			rc = err_set(ERR_INVALID, "%s/modules.dep: no ':' in the line of %s", moddir, *n);
			break;
		}
		/* modules.dep lists what a module needs with the last needed first: load backwards. */
		snprintf(deps, sizeof(deps), "%.*s", (int)(ll - (size_t)(colon + 1 - l)), colon + 1);
		for (size_t end = strlen(deps); !rc && end > 0;) {
			size_t start;

			while (end > 0 && deps[end - 1] == ' ')
				end--;
			start = end;
			while (start > 0 && deps[start - 1] != ' ')
				start--;
			if (end > start)
				rc = mod_add_file(fs, load, moddir, deps + start, end - start);
			end = start;
		}
		d = l;
		if (!rc)
			rc = mod_add_file(fs, load, moddir, d, (size_t)(colon - l));
	}
out:
	free(dep);
	free(builtin);
	return rc;
}

int initramfs_kernel_release(char *out, size_t len, const char *image)
{
	unsigned char hdr[0x210];
	char ver[256];
	unsigned off;
	FILE *f = fopen(image, "rb");
	size_t i;

	if (!f)
		return err_set(ERR_NOTFOUND, "cannot open kernel image %s: %s", image, strerror(errno));
	if (fread(hdr, 1, sizeof(hdr), f) != sizeof(hdr) || memcmp(hdr + 0x202, "HdrS", 4)) {
		fclose(f);
		return err_set(ERR_INVALID, "%s is not a bzImage (no HdrS setup header)", image);
	}
	/* boot.rst: kernel_version at 0x20e, the string at that offset + 0x200. */
	off = (unsigned)(hdr[0x20e] | hdr[0x20f] << 8);
	if (!off || fseek(f, (long)off + 0x200, SEEK_SET) ||
	    fread(ver, 1, sizeof(ver) - 1, f) == 0) {
		fclose(f);
		return err_set(ERR_INVALID, "%s has no kernel version string", image);
	}
	fclose(f);
	ver[sizeof(ver) - 1] = '\0';
	for (i = 0; ver[i] && ver[i] != ' ' && i + 1 < len; i++)
		out[i] = ver[i];
	out[i] = '\0';
	return i ? 0 : err_set(ERR_INVALID, "%s has an empty kernel version string", image);
}

int initramfs_build(const char *out_path, const struct initramfs_spec *spec)
{
	static const char *const dirs[] = {
		"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/proc", "/sys", "/dev",
		"/run", "/root", "/etc", "/lib", "/var",
	};
	struct initramfs *fs = initramfs_new();
	struct sbuf load = SBUF_INIT;
	int rc = 0;

	if (!spec->init || !*spec->init) {
		rc = err_set(ERR_INVALID, "initramfs: no /init script");
		goto out;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !rc; i++)
		rc = initramfs_add_dir(fs, dirs[i], 0755);
	/* iperf3 keeps its stream buffers in files under /tmp. */
	if (!rc)
		rc = initramfs_add_dir(fs, "/tmp", 01777);
	/* The kernel opens it for init's stdio before anything mounts /dev. */
	if (!rc)
		rc = initramfs_add_chardev(fs, "/dev/console", 0600, 5, 1);
	if (!rc)
		rc = initramfs_add_chardev(fs, "/dev/null", 0666, 1, 3);
	if (!rc)
		rc = initramfs_add_data(fs, "/init", 0755, spec->init, strlen(spec->init));
	for (const char *const *p = spec->programs; !rc && p && *p; p++)
		rc = initramfs_add_program(NULL, fs, *p);
	for (const char *const *p = spec->files; !rc && p && *p; p++)
		rc = initramfs_add_host_file(fs, *p, 0, *p);
	if (!rc)
		rc = initramfs_add_busybox(fs, spec->busybox);
	if (!rc && spec->modules && *spec->modules) {
		rc = initramfs_add_modules(fs, &load, spec->modules_dir, spec->modules);
		if (!rc && load.len)
			rc = initramfs_add_data(fs, INITRAMFS_MODULES_LIST, 0644, load.buf, load.len);
	}
	if (!rc)
		rc = initramfs_write_file(out_path, fs, spec->compress);
out:
	sbuf_release(&load);
	initramfs_free(fs);
	return rc;
}
