/*
 * perfreport: `perf report --stdio` text as a table of symbols with their
 * share of the samples, and the difference of two such tables: the
 * symbols whose share changed most between a culprit's profile and its
 * parent's ("tcf_pedit_act 11.59% -> 1.46%"). Pure: no perf is run here
 * (the agent's agents/perfrec.c runs it); the coordinator parses what an
 * agent uploads, so the parser takes any bytes.
 */
#ifndef BISECT_PERFREPORT_H
#define BISECT_PERFREPORT_H

#include <stddef.h>

#define PERFREPORT_MAX_NAME 256      /* longer symbol names are cut */
#define PERFREPORT_MAX_SYMS 20000    /* rows past it are dropped (perf sorts them by share) */
#define PERFREPORT_MAX_TEXT (512 << 10) /* the report an agent uploads: cut to it at a line's end */

struct perf_sym {
	char *name;             /* "tcf_pedit_act"; unresolved addresses fold into "[unknown]" */
	char level;             /* perf's: 'k' kernel, '.' user, 'g' guest kernel, 'u' guest user, 'H' */
	double share;           /* percent of the samples: Overhead, or Children with --children */
	double self;            /* percent in the symbol itself (= share with --no-children) */
};

struct perf_profile {
	struct perf_sym *syms;  /* in the report's order, one per name: rows of a name are added */
	size_t n;
	int children;           /* the report had Children and Self columns */
	long long samples;      /* "# Samples: 4K of event ...": 4000; 0 when not said */
	char event[64];         /* "cpu-clock"; "" when not said */
	int truncated;          /* the text ended inside a line (that line was dropped) */
	size_t skipped;         /* lines that looked like rows but did not parse */
};

#define PERF_PROFILE_INIT { NULL, 0, 0, 0, "", 0, 0 }

/*
 * Parses the first event's table of a `perf report --stdio` text of len
 * bytes (NUL not needed) into p (released first by the caller, or zeroed).
 * Rows are the lines that start with their percentages and name a symbol
 * with perf's "[k] " / "[.] " mark: any --sort that includes symbol,
 * --children or not, with or without call chains (their lines are
 * skipped). ERR_INVALID with a message when no row was found (p empty).
 */
int perfreport_parse(struct perf_profile *p, const char *text, size_t len);
void perfreport_release(struct perf_profile *p);

/* The row of that name; NULL when the profile has none. Borrowed. */
const struct perf_sym *perfreport_find(const struct perf_profile *p, const char *name);

struct perf_delta {
	const char *name;       /* borrowed from the profiles */
	char level;
	double before, after;   /* share in a and in b; 0 when the symbol is not in that profile */
};

/*
 * The symbols of a and b (by name) whose share changed by at least
 * min_change points, the largest change first (ties: the larger share,
 * then the name), at most max of them, into *out (the caller's: free();
 * names borrowed from a and b). *n may be 0.
 */
int perfreport_diff(struct perf_delta **out, size_t *n, const struct perf_profile *a, const struct perf_profile *b,
		    size_t max, double min_change);

/*
 * The commands, in one place with the parser that reads their output:
 * perf's record of one run, a software clock event (it works without a
 * PMU: in a VM, under QEMU's TCG), call graphs; and its report, one row
 * per symbol, no call graphs (what perfreport_parse() reads, and what the
 * agent uploads).
 */
#define PERFREPORT_EVENT "cpu-clock"

/*
 * "perf record -q -g -e cpu-clock -o DATA -- ARGV...": a new
 * NULL-terminated array (the caller's: free()) of strings borrowed from
 * argv and data.
 */
const char **perfreport_record_argv(const char *const *argv, const char *data);
/* "perf report -i DATA --stdio --no-children --sort symbol -g none": as above. */
const char **perfreport_report_argv(const char *data);

#endif
