/*
 * bisectctl_internal: what bisectctl's rooms share (bisectctl.c and
 * bisectctl_*.c): the exit codes, the command table's entry, the client
 * and options every command uses, and the calls one room makes into
 * another. The rooms stand in layers, each calling only those below it:
 * bisectctl_out.c, bisectctl_api.c, bisectctl_report.c, then the commands
 * (bisectctl_jobs.c, bisectctl_admin.c) and bisectctl.c, the table,
 * which hands each command its own entry (for its usage text).
 */
#ifndef BISECT_BISECTCTL_INTERNAL_H
#define BISECT_BISECTCTL_INTERNAL_H

#include <stdio.h>
#include <time.h>

#include <jansson.h>

#include "client.h"
#include "util.h"

/* Exit status: what a script needs to tell apart. */
enum {
	RC_OK = 0,      /* the command worked; a followed job ended done */
	RC_JOB = 1,     /* the job failed, was cancelled or did not reproduce */
	RC_USAGE = 2,   /* bad command line, or the API refused the input (4xx) */
	RC_SERVER = 3,  /* bisectd unreachable, timed out, or failing (5xx) */
	RC_UNDECIDED = 4, /* the job ended undecided: the data could not decide within its budget */
};

#define DEFAULT_SERVER "http://127.0.0.1:7878"
#define REQ_TIMEOUT_S 30L
/* A submit waits for bisectd to fetch the repo; a kernel's first mirror takes minutes. */
#define SUBMIT_TIMEOUT_S 1800L
#define SHOW_EVENTS 10
/* How long watch keeps retrying a coordinator that went away (a restart). */
#define WATCH_RETRY_S 60

struct cmd {
	const char *name;
	int (*fn)(const struct cmd *c, int argc, char **argv);  /* c: its own entry, for its usage */
	const char *args;
	const char *summary;
	const char *help;
};

extern const char *ctl_server;
extern const char *ctl_ca_file;
extern const char *ctl_token_file;
extern int ctl_json;
extern struct client *ctl_client;

/* A table of strings printed with columns as wide as their widest cell. */
struct table {
	size_t ncols, nrows, cap;
	char **cells;
};

/* Options every command also takes after its name. */
#define OPT_CA_FILE 1001
#define OPT_CONFIG 1002
#define OPT_END_RUNS 1003
#define OPT_MORE_RUNS 1004
#define OPT_MORE_SECONDS 1005
#define OPT_LIKE 1006
#define COMMON_LONGOPTS \
	{ "help", no_argument, NULL, 'h' }, \
	{ "json", no_argument, NULL, 'J' }, \
	{ "server", required_argument, NULL, 'S' }, \
	{ "ca-file", required_argument, NULL, OPT_CA_FILE }, \
	{ "token-file", required_argument, NULL, 'K' }

/* bisectctl_out.c: printing */
void ctl_print_usage(FILE *f, const struct cmd *c);
int ctl_usage_error(const struct cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ctl_print_json(const json_t *j, size_t flags);
const char *ctl_jstr(const json_t *o, const char *key);
const char *ctl_jstr_or(const json_t *o, const char *key, const char *def);
long long ctl_jint(const json_t *o, const char *key, long long def);
int ctl_jnum(double *out, const json_t *o, const char *key);
void ctl_short_sha(char out[13], const char *sha);
void ctl_culprit_sha(char out[13], const json_t *job);
void ctl_local_time(char *buf, size_t n, long long t, const char *fmt);
void ctl_fmt_duration(char *buf, size_t n, long long s);
void ctl_fmt_p(char *buf, size_t n, double p);
void ctl_table_row(struct table *t, const char *const *cells);
void ctl_table_print(const struct table *t);
void ctl_table_release(struct table *t);
void ctl_time_cell(char *buf, size_t n, long long t);

/* bisectctl_api.c: bisectd's API */
int ctl_check_server(const char *s);
struct client *ctl_get_client(void);
int ctl_status_error(json_t *reply, long status);
int ctl_api(json_t **reply, const char *method, const char *path, json_t *body);
int ctl_text_status_error(const char *body, long status);
int ctl_job_ended(const json_t *job);
int ctl_job_rc(const json_t *job);
int ctl_parse_long(long *out, const char *s, long min, long max);
int ctl_parse_id(long *id, const struct cmd *c, int argc, char **argv);
int ctl_get_job(json_t **job, long id);
int ctl_cmp_idx(const void *a, const void *b);
int ctl_cmp_time(const void *a, const void *b);
void ctl_sleep_s(double s);
int ctl_parse_interval(double *out, const struct cmd *c, const char *s);
int ctl_common_opt(int *status, const struct cmd *c, int opt, char **argv);
int ctl_parse_fraction(double *out, const char *s, double lo, double hi);
int ctl_id_command(long *id, double *interval, const struct cmd *c, int argc, char **argv);
int ctl_get_text_out(const char *path, const char *file);

/* bisectctl_report.c: a job as text */
void ctl_progress_text(struct sbuf *out, const json_t *job);
void ctl_format_job(struct sbuf *out, const json_t *job, size_t max_events, int with_result);
int ctl_finish_job(long id, const json_t *job, int strict, const char *query);

/* bisectctl_jobs.c: the commands on jobs */
int cmd_submit(const struct cmd *c, int argc, char **argv);
int ctl_fetch_list(json_t **reply, json_t **items, const struct cmd *c, int argc, char **argv,
		   const char *path, const char *key);
int cmd_jobs(const struct cmd *c, int argc, char **argv);
int cmd_show(const struct cmd *c, int argc, char **argv);
int cmd_watch(const struct cmd *c, int argc, char **argv);
int cmd_report(const struct cmd *c, int argc, char **argv);
int cmd_export(const struct cmd *c, int argc, char **argv);
int cmd_cancel(const struct cmd *c, int argc, char **argv);
int cmd_resume(const struct cmd *c, int argc, char **argv);
int cmd_plot(const struct cmd *c, int argc, char **argv);

/* bisectctl_admin.c: the commands on the lab */
int cmd_agents(const struct cmd *c, int argc, char **argv);
int cmd_token(const struct cmd *c, int argc, char **argv);

#endif
