/*
 * util: small helpers every module uses: allocation that aborts on
 * exhaustion, a growable string buffer, clocks, files.
 */
#ifndef BISECT_UTIL_H
#define BISECT_UTIL_H

#include <stddef.h>
#include <stdint.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/*
 * Room for element n of an array of elements of size bytes, whose
 * capacity *cap is doubled (from 16) when it is full: returns the array,
 * perhaps moved. Dies on exhaustion, as xrealloc().
 */
void *xgrow(void *arr, size_t n, size_t *cap, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* printf into a new heap string the caller frees. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growable, always NUL-terminated buffer (git's strbuf, smaller). */
struct sbuf {
	char *buf;
	size_t len, cap;
};
#define SBUF_INIT { NULL, 0, 0 }
void sbuf_add(struct sbuf *sb, const void *data, size_t n);
void sbuf_adds(struct sbuf *sb, const char *s);
void sbuf_addf(struct sbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the buffer ("" when empty) and leaves sb empty; caller frees. */
char *sbuf_detach(struct sbuf *sb);
void sbuf_release(struct sbuf *sb);

/* Milliseconds on a monotonic clock. */
int64_t now_ms(void);
/* Seconds since the epoch, wall clock. */
int64_t now_unix(void);
/* "2026-11-30T14:02:33Z" for t into buf (at least 21 bytes). */
void fmt_time(char *buf, size_t n, int64_t t);

/* Reads a whole file into *out (NUL-terminated, caller frees); at most max bytes. */
int file_read(char **out, size_t *len, const char *path, size_t max);
/* Writes data to path atomically (temp file, fsync, rename), mode 0644 less the umask. */
int file_write_atomic(const char *path, const void *data, size_t len);
/* The same with exactly this mode, whatever the umask (0600 for a secret). */
int file_write_atomic_mode(const char *path, const void *data, size_t len, unsigned mode);
/* mkdir -p; 0 when it exists already. */
int mkdir_p(const char *path, unsigned mode);
/* rm -rf without a shell; 0 when it did not exist. */
int remove_tree(const char *path);

/*
 * The last non-empty line of s (len bytes; the newlines, returns, spaces
 * and tabs at its end dropped): where it starts, and its length in *n.
 */
const char *str_last_line_span(size_t *n, const char *s, size_t len);

/* The same line into buf, cut to fit its n bytes: a one-line reason from a program's output. */
void str_last_line(char *buf, size_t n, const char *s, size_t len);

/* Is prog an executable in PATH? One with a '/' is taken as given (it may be built yet). */
int in_path(const char *prog);

/* Is p a path that stays inside the directory it is relative to: not empty, not absolute, no ".." part? */
int path_inside(const char *p);

/* Is s a string of 40 lowercase hex digits? */
int is_sha1_hex(const char *s);

/* Is name 1..64 of [A-Za-z0-9._-] (an agent's name, a label)? */
int is_valid_name(const char *name);

#endif
