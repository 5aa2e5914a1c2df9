/*
 * perfreport: the rows of `perf report --stdio` read by their shape, not
 * by column positions (a quoted or re-indented report still parses):
 * leading percentages, then perf's privilege mark "[k] " before the
 * symbol, which ends at two spaces (the next column) or the line's end.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "perfreport.h"
#include "util.h"

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* "11.59%" at *s: its value, *s past it; 0 when it is not one. */
static int parse_pct(double *v, const char **s, const char *end)
{
	const char *p = *s;
	char num[16];
	size_t n = 0;
	int dot = 0;

	while (p < end && n + 1 < sizeof(num) && (is_digit(*p) || (*p == '.' && !dot))) {
		dot |= *p == '.';
		num[n++] = *p++;
	}
	if (!n || !is_digit(num[0]) || p >= end || *p != '%')
		return 0;
	num[n] = '\0';
	/* strtod: the same double as the text's, so that 19.86 read is 19.86. */
	*v = strtod(num, NULL);
	*s = p + 1;
	return 1;
}

static const char *skip_blank(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static int is_level(char c)
{
	return c == 'k' || c == '.' || c == 'g' || c == 'u' || c == 'H';
}

/* "0x000000000023fe9c": an address perf could not name. */
static int is_address(const char *s, size_t n)
{
	if (n < 3 || s[0] != '0' || s[1] != 'x')
		return 0;
	for (size_t i = 2; i < n; i++)
		if (!strchr("0123456789abcdefABCDEF", s[i]))
			return 0;
	return 1;
}

struct rows {
	struct perf_sym *v;
	size_t n, cap;
};

static void add_row(struct rows *r, const char *name, size_t len, char level, double share, double self)
{
	struct perf_sym *x;
	char *c;

	if (is_address(name, len)) {
		name = "[unknown]";
		len = strlen(name);
	}
	if (len >= PERFREPORT_MAX_NAME)
		len = PERFREPORT_MAX_NAME - 1;
	c = xmalloc(len + 1);
	memcpy(c, name, len);
	c[len] = '\0';
	/* Names go into JSON and reports: only printable ASCII. */
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)c[i] < 0x20 || (unsigned char)c[i] >= 0x7f)
			c[i] = '?';
	r->v = xgrow(r->v, r->n, &r->cap, sizeof(*r->v));
	x = &r->v[r->n++];
	x->name = c;
	x->level = level;
	x->share = share;
	x->self = self;
}

/*
 * One line that is not a comment. 1: a row was added; 0: not a row (a
 * call chain's line, a blank one); -1: it started as a row and broke.
 */
static int parse_row(struct rows *r, int *children, const char *p, const char *end)
{
	double pct[2];
	int npct = 0;
	const char *mark, *name, *q;

	p = skip_blank(p, end);
	if (p >= end || !is_digit(*p))
		return 0;
	while (npct < 2) {
		const char *s = p;

		if (!parse_pct(&pct[npct], &s, end))
			break;
		npct++;
		p = skip_blank(s, end);
	}
	if (!npct) {
		const char *t = p;

		/* "12.5x%" is a broken share; "0xa43b7dca91a0db7", a call chain's bare frame, is none. */
		while (t < end && *t != ' ' && *t != '\t' && *t != '%')
			t++;
		return t < end && *t == '%' ? -1 : 0;
	}
	/* The mark: "[k] " after a blank (a shared object "[kernel.kallsyms]" is not one). */
	for (mark = p; mark + 3 < end; mark++)
		if (mark[0] == '[' && is_level(mark[1]) && mark[2] == ']' && mark[3] == ' ' &&
		    (mark == p || mark[-1] == ' ' || mark[-1] == '\t'))
			break;
	/* "2.55% tcf_pedit_act" under a --children row: a call chain, not a row. */
	if (mark + 3 >= end)
		return 0;
	name = skip_blank(mark + 4, end);
	for (q = name; q < end && *q != '\t' && !(q[0] == ' ' && q + 1 < end && q[1] == ' '); q++)
		;
	while (q > name && q[-1] == ' ')
		q--;
	if (q == name)
		return -1;
	for (int i = 0; i < npct; i++)
		if (!(pct[i] >= 0 && pct[i] <= 100))
			return -1;
	if (npct == 2)
		*children = 1;
	add_row(r, name, (size_t)(q - name), mark[1], pct[0], npct == 2 ? pct[1] : pct[0]);
	return 1;
}

/* "# Samples: 4K of event 'cpu-clock'" */
static void parse_samples(struct perf_profile *p, const char *s, const char *end)
{
	long long v = 0;
	const char *q;
	size_t n;

	s = skip_blank(s, end);
	while (s < end && is_digit(*s) && v < (1LL << 50))
		v = v * 10 + (*s++ - '0');
	if (s < end && (*s == 'K' || *s == 'M' || *s == 'G'))
		v *= *s == 'K' ? 1000 : *s == 'M' ? 1000000 : 1000000000;
	p->samples = v;
	for (; s < end && *s != '\''; s++)
		;
	if (s >= end)
		return;
	for (q = ++s; q < end && *q != '\''; q++)
		;
	n = (size_t)(q - s) < sizeof(p->event) ? (size_t)(q - s) : sizeof(p->event) - 1;
	memcpy(p->event, s, n);
	p->event[n] = '\0';
	for (char *c = p->event; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			*c = '?';
}

/*
 * The line without its terminal colours ("\033[31m  21.74%\033[m"): perf
 * colours the shares when its output is a terminal, as a guest's serial
 * console is. *buf holds the copy; NULL when there was nothing to strip.
 */
static const char *strip_colours(struct sbuf *buf, const char *s, const char **end)
{
	const char *p = s, *e = *end;

	if (!memchr(s, '\033', (size_t)(e - s)))
		return s;
	buf->len = 0;
	while (p < e) {
		const char *esc = memchr(p, '\033', (size_t)(e - p));

		if (!esc) {
			sbuf_add(buf, p, (size_t)(e - p));
			break;
		}
		sbuf_add(buf, p, (size_t)(esc - p));
		p = esc + 1;
		/* CSI: ESC [ parameters, then one final byte in 0x40..0x7e. */
		if (p < e && *p == '[') {
			for (p++; p < e && !(*p >= 0x40 && *p <= 0x7e); p++)
				;
			if (p < e)
				p++;
		}
	}
	if (!buf->buf) {
		/* Nothing but escapes. */
		*end = s;
		return s;
	}
	*end = buf->buf + buf->len;
	return buf->buf;
}

static int by_name_then_pos(const void *a, const void *b)
{
	const struct perf_sym *const *x = a, *const *y = b;
	int c = strcmp((*x)->name, (*y)->name);

	return c ? c : *x < *y ? -1 : *x > *y;
}

/* Rows of one name (a symbol in two commands or objects) become one, at the first's place. */
static void merge_names(struct rows *r)
{
	struct perf_sym **ix;
	size_t n = 0;

	if (r->n < 2)
		return;
	ix = xcalloc(r->n, sizeof(*ix));
	for (size_t i = 0; i < r->n; i++)
		ix[i] = &r->v[i];
	qsort(ix, r->n, sizeof(*ix), by_name_then_pos);
	/* Sorted by name, then place: the first of each name keeps it. */
	for (size_t i = 1, keep = 0; i < r->n; i++) {
		if (strcmp(ix[keep]->name, ix[i]->name)) {
			keep = i;
			continue;
		}
		ix[keep]->share += ix[i]->share;
		ix[keep]->self += ix[i]->self;
		free(ix[i]->name);
		ix[i]->name = NULL;
	}
	free(ix);
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].name)
			r->v[n++] = r->v[i];
	r->n = n;
}

int perfreport_parse(struct perf_profile *p, const char *text, size_t len)
{
	const char *s = text, *end = text + len;
	struct rows r = { NULL, 0, 0 };
	struct sbuf plain = SBUF_INIT;
	int sections = 0;

	memset(p, 0, sizeof(*p));
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s)), *eol = nl ? nl : end;

		if (!nl) {
			/* A line cut short may hold a cut name or share: not taken. */
			p->truncated = 1;
			break;
		}
		if (*s == '#') {
			static const char samples[] = "# Samples:";
			static const char header[] = "# Children";

			if ((size_t)(eol - s) > sizeof(samples) - 1 && !memcmp(s, samples, sizeof(samples) - 1)) {
				/* Another event's table: only the first is read. */
				if (++sections > 1)
					break;
				parse_samples(p, s + sizeof(samples) - 1, eol);
			} else if ((size_t)(eol - s) >= sizeof(header) - 1 && !memcmp(s, header, sizeof(header) - 1)) {
				p->children = 1;
			}
		} else if (r.n < PERFREPORT_MAX_SYMS) {
			const char *lend = eol, *line = strip_colours(&plain, s, &lend);
			int rc = parse_row(&r, &p->children, line, lend);

			if (rc < 0)
				p->skipped++;
		}
		s = eol + 1;
	}
	sbuf_release(&plain);
	merge_names(&r);
	p->syms = r.v;
	p->n = r.n;
	if (p->n == 0) {
		int truncated = p->truncated;
		size_t skipped = p->skipped;

		perfreport_release(p);
		p->truncated = truncated;
		p->skipped = skipped;
		return err_set(ERR_INVALID, "no symbol rows in the perf report (%zu bytes%s%s): it must be "
			       "`perf report --stdio` with a --sort that includes symbol",
			       len, skipped ? ", malformed rows" : "", truncated ? ", cut short" : "");
	}
	return 0;
}

void perfreport_release(struct perf_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->syms[i].name);
	free(p->syms);
	memset(p, 0, sizeof(*p));
}

const struct perf_sym *perfreport_find(const struct perf_profile *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->syms[i].name, name))
			return &p->syms[i];
	return NULL;
}

static int by_name(const void *a, const void *b)
{
	const struct perf_sym *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

static double change_of(const struct perf_delta *d)
{
	double c = d->after - d->before;

	return c < 0 ? -c : c;
}

static int by_change(const void *a, const void *b)
{
	const struct perf_delta *x = a, *y = b;
	double cx = change_of(x), cy = change_of(y);
	double mx = x->before > x->after ? x->before : x->after, my = y->before > y->after ? y->before : y->after;

	if (cx != cy)
		return cx > cy ? -1 : 1;
	if (mx != my)
		return mx > my ? -1 : 1;
	return strcmp(x->name, y->name);
}

static const struct perf_sym **sorted(const struct perf_profile *p)
{
	const struct perf_sym **ix = xcalloc(p->n + 1, sizeof(*ix));

	for (size_t i = 0; i < p->n; i++)
		ix[i] = &p->syms[i];
	qsort(ix, p->n, sizeof(*ix), by_name);
	return ix;
}

int perfreport_diff(struct perf_delta **out, size_t *n, const struct perf_profile *a, const struct perf_profile *b,
		    size_t max, double min_change)
{
	const struct perf_sym **ia = sorted(a), **ib = sorted(b);
	struct perf_delta *d = xcalloc(a->n + b->n + 1, sizeof(*d));
	size_t i = 0, j = 0, k = 0;

	while (i < a->n || j < b->n) {
		int c = i >= a->n ? 1 : j >= b->n ? -1 : strcmp(ia[i]->name, ib[j]->name);
		struct perf_delta x;

		if (c < 0) {
			x = (struct perf_delta){ ia[i]->name, ia[i]->level, ia[i]->share, 0 };
			i++;
		} else if (c > 0) {
			x = (struct perf_delta){ ib[j]->name, ib[j]->level, 0, ib[j]->share };
			j++;
		} else {
			x = (struct perf_delta){ ia[i]->name, ia[i]->level, ia[i]->share, ib[j]->share };
			i++;
			j++;
		}
		if (change_of(&x) >= min_change && change_of(&x) > 0)
			d[k++] = x;
	}
	qsort(d, k, sizeof(*d), by_change);
	free(ia);
	free(ib);
	*out = d;
	*n = k < max ? k : max;
	return 0;
}

const char **perfreport_record_argv(const char *const *argv, const char *data)
{
	static const char *const head[] = { "perf", "record", "-q", "-g", "-e", PERFREPORT_EVENT, "-o" };
	size_t n = 0, k = 0;
	const char **out;

	while (argv[n])
		n++;
	out = xcalloc(sizeof(head) / sizeof(head[0]) + n + 3, sizeof(*out));
	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		out[k++] = head[i];
	out[k++] = data;
	out[k++] = "--";
	for (size_t i = 0; i < n; i++)
		out[k++] = argv[i];
	return out;
}

const char **perfreport_report_argv(const char *data)
{
	static const char *const argv[] = { "perf", "report", "-i", NULL, "--stdio", "--no-children", "--sort",
					    "symbol", "-g", "none", NULL };
	const char **out = xcalloc(sizeof(argv) / sizeof(argv[0]), sizeof(*out));

	memcpy(out, argv, sizeof(argv));
	out[3] = data;
	return out;
}
