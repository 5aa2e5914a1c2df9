/* util: allocation, strings, clocks, files. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "util.h"

static void oom(void)
{
	fputs("out of memory\n", stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xgrow(void *arr, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return arr;
	*cap = *cap ? 2 * *cap : 16;
	return xrealloc(arr, *cap * size);
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		oom();
	va_end(ap);
	return s;
}

static void sbuf_grow(struct sbuf *sb, size_t extra)
{
	if (sb->len + extra + 1 <= sb->cap)
		return;
	sb->cap = (sb->len + extra + 1) * 2;
	sb->buf = xrealloc(sb->buf, sb->cap);
}

void sbuf_add(struct sbuf *sb, const void *data, size_t n)
{
	sbuf_grow(sb, n);
	memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sbuf_adds(struct sbuf *sb, const char *s)
{
	sbuf_add(sb, s, strlen(s));
}

void sbuf_addf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	char probe[1];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(probe, sizeof(probe), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	sbuf_grow(sb, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

char *sbuf_detach(struct sbuf *sb)
{
	char *p = sb->buf ? sb->buf : xstrdup("");

	sb->buf = NULL;
	sb->len = sb->cap = 0;
	return p;
}

void sbuf_release(struct sbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t now_unix(void)
{
	return (int64_t)time(NULL);
}

void fmt_time(char *buf, size_t n, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int file_read(char **out, size_t *len, const char *path, size_t max)
{
	struct sbuf sb = SBUF_INIT;
	char chunk[8192];
	ssize_t n;
	int fd;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(errno == ENOENT ? ERR_NOTFOUND : ERR_FAIL,
			       "%s: %s", path, strerror(errno));
	while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
		if (sb.len + (size_t)n > max) {
			close(fd);
			sbuf_release(&sb);
			return err_set(ERR_INVALID, "%s: larger than %zu bytes", path, max);
		}
		sbuf_add(&sb, chunk, (size_t)n);
	}
	close(fd);
	if (n < 0) {
		sbuf_release(&sb);
		return err_set(ERR_FAIL, "%s: %s", path, strerror(errno));
	}
	if (len)
		*len = sb.len;
	*out = sbuf_detach(&sb);
	return 0;
}

static int write_atomic(const char *path, const void *data, size_t len, unsigned mode, int exact)
{
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	const char *p = data;
	int fd, rc = 0;

	/* O_EXCL: a stale temporary of this pid (a crash) may have another mode or owner. */
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)mode);
	if (fd < 0) {
		rc = err_set(ERR_FAIL, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = err_set(ERR_FAIL, "%s: %s", tmp, strerror(errno));
			close(fd);
			unlink(tmp);
			goto out;
		}
		p += n;
		len -= (size_t)n;
	}
	if ((exact && fchmod(fd, (mode_t)mode) < 0) || fsync(fd) < 0 || close(fd) < 0 || rename(tmp, path) < 0) {
		rc = err_set(ERR_FAIL, "%s: %s", path, strerror(errno));
		unlink(tmp);
	}
out:
	free(tmp);
	return rc;
}

int file_write_atomic(const char *path, const void *data, size_t len)
{
	return write_atomic(path, data, len, 0644, 0);
}

int file_write_atomic_mode(const char *path, const void *data, size_t len, unsigned mode)
{
	return write_atomic(path, data, len, mode, 1);
}

int mkdir_p(const char *path, unsigned mode)
{
	char *p = xstrdup(path);
	int rc = 0;

	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;

			*s = '\0';
			if (mkdir(p, mode) < 0 && errno != EEXIST) {
				rc = err_set(ERR_FAIL, "mkdir %s: %s", p, strerror(errno));
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	return rc;
}

int remove_tree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : err_set(ERR_FAIL, "%s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return unlink(path) < 0 ? err_set(ERR_FAIL, "%s: %s", path, strerror(errno)) : 0;
	d = opendir(path);
	if (!d)
		return err_set(ERR_FAIL, "%s: %s", path, strerror(errno));
	while (rc == 0 && (e = readdir(d))) {
		char *sub;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		sub = xasprintf("%s/%s", path, e->d_name);
		rc = remove_tree(sub);
		free(sub);
	}
	closedir(d);
	if (rc == 0 && rmdir(path) < 0)
		rc = err_set(ERR_FAIL, "%s: %s", path, strerror(errno));
	return rc;
}

int is_sha1_hex(const char *s)
{
	int i;

	for (i = 0; i < 40; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[40] == '\0';
}

int in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char *copy, *save = NULL;
	int found = 0;

	if (strchr(prog, '/'))
		return 1;
	copy = xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (char *dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/%s", *dir ? dir : ".", prog);

		found = access(p, X_OK) == 0;
		free(p);
	}
	free(copy);
	return found;
}

int path_inside(const char *p)
{
	if (!*p || p[0] == '/')
		return 0;
	for (const char *s = p; s; s = strchr(s, '/')) {
		if (*s == '/')
			s++;
		if (!strncmp(s, "..", 2) && (s[2] == '/' || s[2] == '\0'))
			return 0;
	}
	return 1;
}

const char *str_last_line_span(size_t *n, const char *s, size_t len)
{
	const char *end = s + len, *start;

	while (end > s && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	start = end;
	while (start > s && start[-1] != '\n')
		start--;
	*n = (size_t)(end - start);
	return start;
}

void str_last_line(char *buf, size_t n, const char *s, size_t len)
{
	size_t k;
	const char *start = str_last_line_span(&k, s, len);

	snprintf(buf, n, "%.*s", (int)k, start);
}

int is_valid_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 64)
		return 0;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-'))
			return 0;
	return 1;
}
