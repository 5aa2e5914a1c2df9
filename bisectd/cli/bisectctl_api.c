/*
 * bisectctl_api: talking to bisectd. The client (server, CA, token), a
 * request and its errors as the exit status a script reads, a job fetched,
 * and the options every command takes.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "bisectctl_internal.h"
#include "client.h"
#include "err.h"
#include "token.h"
#include "util.h"

const char *ctl_server;
const char *ctl_ca_file;     /* --ca-file, else $BISECTD_CA; NULL: the system's CA store */
const char *ctl_token_file;  /* --token-file; else $BISECTD_TOKEN */
int ctl_json;                /* --json */
struct client *ctl_client;

/* Refuses what libcurl would take but is not an address of bisectd. */
int ctl_check_server(const char *s)
{
	if (strncmp(s, "http://", 7) && strncmp(s, "https://", 8)) {
		fprintf(stderr, "bisectctl: bad server URL '%s' (expected http://HOST:PORT or https://HOST:PORT)\n", s);
		return RC_USAGE;
	}
	return RC_OK;
}

struct client *ctl_get_client(void)
{
	const char *env = getenv("BISECTD_TOKEN");
	char *tok = NULL;
	int rc;

	if (ctl_client)
		return ctl_client;
	ctl_client = client_new(ctl_server);
	client_set_ca_file(ctl_client, ctl_ca_file);
	if (ctl_token_file) {
		if ((rc = token_read_file(&tok, ctl_token_file)) < 0) {
			fprintf(stderr, "bisectctl: --token-file: %s\n", err_msg());
			exit(RC_USAGE);
		}
		client_set_token(ctl_client, tok);
		free(tok);
	} else if (env && *env) {
		client_set_token(ctl_client, env);
	}
	return ctl_client;
}

static int has_error_text(const json_t *reply)
{
	const char *e = ctl_jstr(reply, "error");

	return e && *e;
}

/* Says what an HTTP error status means for the user; returns the exit status. */
int ctl_status_error(json_t *reply, long status)
{
	const char *text = client_error_text(reply, status);

	if (status >= 400 && status < 500) {
		fprintf(stderr, "bisectctl: %s\n", text);
		return RC_USAGE;
	}
	if (has_error_text(reply))
		fprintf(stderr, "bisectctl: bisectd at %s failed (HTTP %ld): %s\n", ctl_server, status, text);
	else
		fprintf(stderr, "bisectctl: bisectd at %s failed: %s\n", ctl_server, text);
	return RC_SERVER;
}

/* A request whose reply must be 2xx; otherwise says why and returns the exit status. */
int ctl_api(json_t **reply, const char *method, const char *path, json_t *body)
{
	long status;
	int rc;

	rc = client_request(reply, &status, ctl_get_client(), method, path, body,
			    !strcmp(method, "POST") && !strcmp(path, "/api/v1/jobs") ? SUBMIT_TIMEOUT_S :
			    REQ_TIMEOUT_S);
	if (rc < 0) {
		fprintf(stderr, "bisectctl: %s\n", err_msg());
		return RC_SERVER;
	}
	if (status >= 200 && status < 300)
		return RC_OK;
	rc = ctl_status_error(*reply, status);
	json_decref(*reply);
	*reply = NULL;
	return rc;
}

/* An error body of a text endpoint is the API's JSON. */
int ctl_text_status_error(const char *body, long status)
{
	json_t *j = json_loads(body, 0, NULL);
	int rc = ctl_status_error(j, status);

	json_decref(j);
	return rc;
}

int ctl_job_ended(const json_t *job)
{
	const char *s = ctl_jstr_or(job, "state", "");

	return !strcmp(s, "done") || !strcmp(s, "failed") || !strcmp(s, "not-reproduced") ||
	       !strcmp(s, "undecided") || !strcmp(s, "cancelled") ||
	       json_is_number(json_object_get(job, "finished"));
}

/*
 * The exit status a job's end stands for. Undecided is neither an answer
 * nor a failure: a script may give it more runs or a quieter lab.
 */
int ctl_job_rc(const json_t *job)
{
	const char *s = ctl_jstr_or(job, "state", "");

	return !strcmp(s, "done") ? RC_OK : !strcmp(s, "undecided") ? RC_UNDECIDED : RC_JOB;
}

int ctl_parse_long(long *out, const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int ctl_parse_id(long *id, const struct cmd *c, int argc, char **argv)
{
	if (optind >= argc)
		return ctl_usage_error(c, "missing job id");
	if (optind + 1 < argc)
		return ctl_usage_error(c, "unexpected argument '%s'", argv[optind + 1]);
	if (ctl_parse_long(id, argv[optind], 1, 0x7fffffffL) < 0)
		return ctl_usage_error(c, "bad job id '%s'", argv[optind]);
	return RC_OK;
}

int ctl_get_job(json_t **job, long id)
{
	char path[64];

	snprintf(path, sizeof(path), "/api/v1/jobs/%ld", id);
	return ctl_api(job, "GET", path, NULL);
}

int ctl_cmp_idx(const void *a, const void *b)
{
	long long x = ctl_jint(*(json_t *const *)a, "idx", 0), y = ctl_jint(*(json_t *const *)b, "idx", 0);

	return (x > y) - (x < y);
}

int ctl_cmp_time(const void *a, const void *b)
{
	long long x = ctl_jint(*(json_t *const *)a, "time", 0), y = ctl_jint(*(json_t *const *)b, "time", 0);

	return (x > y) - (x < y);
}

void ctl_sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int ctl_parse_interval(double *out, const struct cmd *c, const char *s)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end || !(*out >= 0.1 && *out <= 3600))
		return ctl_usage_error(c, "bad interval '%s' (seconds, 0.1 to 3600)", s);
	return RC_OK;
}

/*
 * What getopt_long returned, as one of the common options: 0 to go on
 * with the next option, 1 to return *status now (RC_OK after --help;
 * RC_USAGE, its message printed, after a bad or missing value or an
 * unknown option, and for an option the command does not handle).
 */
int ctl_common_opt(int *status, const struct cmd *c, int opt, char **argv)
{
	*status = RC_OK;
	switch (opt) {
	case 'h':
		ctl_print_usage(stdout, c);
		return 1;
	case 'J':
		ctl_json = 1;
		return 0;
	case 'S':
		ctl_server = optarg;
		if (ctl_check_server(ctl_server) == RC_OK)
			return 0;
		*status = RC_USAGE;
		return 1;
	case OPT_CA_FILE:
		ctl_ca_file = optarg;
		return 0;
	case 'K':
		ctl_token_file = optarg;
		return 0;
	case ':':
		*status = ctl_usage_error(c, "option '%s' needs a value", argv[optind - 1]);
		return 1;
	case '?':
		if (optopt)
			*status = ctl_usage_error(c, "unknown option '-%c'", optopt);
		else
			*status = ctl_usage_error(c, "unknown option '%s'", argv[optind - 1]);
		return 1;
	default:
		*status = RC_USAGE;
		return 1;
	}
}

/* A number within [lo, hi]; -1 when it is not one. */
int ctl_parse_fraction(double *out, const char *s, double lo, double hi)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end || !(*out >= lo && *out <= hi))
		return -1;
	return 0;
}

/* Parses the options of a command taking one job id (and maybe --interval). */
int ctl_id_command(long *id, double *interval, const struct cmd *c, int argc, char **argv)
{
	static const struct option with_interval[] = {
		{ "interval", required_argument, NULL, 'i' },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const struct option *longopts = interval ? with_interval : with_interval + 1;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (opt == 'i') {
			if ((rc = ctl_parse_interval(interval, c, optarg)) != RC_OK)
				return rc;
			continue;
		}
		if (ctl_common_opt(&rc, c, opt, argv))
			return rc == RC_OK ? -1 : rc;
	}
	return ctl_parse_id(id, c, argc, argv);
}

/* GET path as text into stdout, or into file (written whole or not at all); the exit status of the request. */
int ctl_get_text_out(const char *path, const char *file)
{
	char *text = NULL;
	long status;
	int rc = client_get_text(&text, &status, ctl_get_client(), path, REQ_TIMEOUT_S);

	if (rc < 0) {
		fprintf(stderr, "bisectctl: %s\n", err_msg());
		rc = RC_SERVER;
	} else if (status < 200 || status >= 300) {
		rc = ctl_text_status_error(text, status);
	} else if (file && strcmp(file, "-")) {
		rc = RC_OK;
		if (file_write_atomic(file, text, strlen(text)) < 0) {
			fprintf(stderr, "bisectctl: cannot write %s: %s\n", file, err_msg());
			rc = RC_USAGE;
		}
	} else {
		fputs(text, stdout);
		rc = RC_OK;
	}
	free(text);
	fflush(stdout);
	return rc;
}
