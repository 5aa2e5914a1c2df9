/*
 * bisectctl_jobs: the commands on jobs: submit, jobs, show, watch, report,
 * export, cancel and plot.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "bisectctl_internal.h"
#include "client.h"
#include "err.h"
#include "kconfig.h"
#include "util.h"

/* Follows a job until it ends; returns the exit status of its end. */
static int watch_job(long id, double interval)
{
	int tty = !ctl_json && isatty(STDOUT_FILENO);
	char path[64], *last = NULL;
	int64_t failing_since = 0;
	json_t *job = NULL;
	int rc, first = 1;

	snprintf(path, sizeof(path), "/api/v1/jobs/%ld", id);
	for (;;) {
		struct sbuf key = SBUF_INIT, line = SBUF_INIT;
		long status;

		json_decref(job);
		job = NULL;
		rc = client_request(&job, &status, ctl_get_client(), "GET", path, NULL, REQ_TIMEOUT_S);
		if (rc < 0 || status >= 500) {
			/* A coordinator restart should not end a watch of a day-long job. */
			if (first || (failing_since && now_ms() - failing_since > WATCH_RETRY_S * 1000)) {
				if (rc < 0)
					fprintf(stderr, "bisectctl: %s\n", err_msg());
				else
					ctl_status_error(job, status);
				rc = RC_SERVER;
				goto out;
			}
			if (!failing_since) {
				failing_since = now_ms();
				fprintf(stderr, "bisectctl: lost bisectd (%s); retrying for %ds\n",
					rc < 0 ? err_msg() : client_error_text(job, status), WATCH_RETRY_S);
			}
			ctl_sleep_s(interval);
			continue;
		}
		if (status < 200 || status >= 300) {
			rc = ctl_status_error(job, status);
			goto out;
		}
		if (failing_since && !tty)
			fprintf(stderr, "bisectctl: bisectd is back\n");
		failing_since = 0;
		first = 0;

		sbuf_addf(&key, "%s ", ctl_jstr_or(job, "state", "?"));
		ctl_progress_text(&key, job);
		if (tty) {
			sbuf_adds(&line, "\033[H\033[2J");
			/* The report printed after the last redraw says the result. */
			ctl_format_job(&line, job, SHOW_EVENTS, !ctl_job_ended(job));
			if (!ctl_job_ended(job))
				sbuf_addf(&line, "\nevery %gs; Ctrl-C stops watching, the job goes on\n",
					  interval);
			fputs(line.buf, stdout);
			fflush(stdout);
		} else if (!last || strcmp(last, key.buf)) {
			if (ctl_json) {
				ctl_print_json(job, JSON_COMPACT);
			} else {
				char tbuf[32];

				ctl_local_time(tbuf, sizeof(tbuf), now_unix(), "%H:%M:%S");
				printf("%s job %ld %s: ", tbuf, id, ctl_jstr_or(job, "state", "?"));
				sbuf_release(&line);
				ctl_progress_text(&line, job);
				printf("%s\n", line.buf);
				fflush(stdout);
			}
		}
		free(last);
		last = sbuf_detach(&key);
		sbuf_release(&line);
		if (ctl_job_ended(job))
			break;
		ctl_sleep_s(interval);
	}
	if (ctl_json) {
		rc = ctl_job_rc(job);
	} else {
		putchar('\n');
		rc = ctl_finish_job(id, job, 0, "");
	}
out:
	free(last);
	json_decref(job);
	return rc;
}

int cmd_submit(const struct cmd *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "repo", required_argument, NULL, 'r' },
		{ "good", required_argument, NULL, 'g' },
		{ "bad", required_argument, NULL, 'b' },
		{ "workload", required_argument, NULL, 'w' },
		{ "pool", required_argument, NULL, 'p' },
		{ "runs", required_argument, NULL, 'n' },
		{ "policy", required_argument, NULL, 'P' },
		{ "confidence", required_argument, NULL, 'C' },
		{ "alpha", required_argument, NULL, 'A' },
		{ "min-effect", required_argument, NULL, 'E' },
		{ "budget-runs", required_argument, NULL, 'R' },
		{ "budget-builds", required_argument, NULL, 'B' },
		{ "budget-seconds", required_argument, NULL, 'T' },
		{ "end-runs", required_argument, NULL, OPT_END_RUNS },
		{ "direction", required_argument, NULL, 'D' },
		{ "append", required_argument, NULL, 'a' },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "like", required_argument, NULL, OPT_LIKE },
		{ "watch", no_argument, NULL, 'W' },
		{ "interval", required_argument, NULL, 'i' },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const char *repo = NULL, *good = NULL, *bad = NULL, *workload = NULL, *pool = NULL;
	const char *policy = NULL, *direction = NULL, *append = NULL;
	double confidence = 0, alpha = 0, min_effect = -1;
	long runs = 0, id, budget_runs = -1, budget_builds = -1, budget_seconds = -1, end_runs = -1, like = 0;
	double interval = 1;
	int opt, watch = 0, rc;
	json_t *body = NULL, *reply = NULL, *model = NULL;
	static char config[KCONFIG_JOB_MAX][KCONFIG_JOB_OPT_MAX + 1];
	size_t nr_config = 0;

	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r': repo = optarg; break;
		case 'g': good = optarg; break;
		case 'b': bad = optarg; break;
		case 'w': workload = optarg; break;
		case 'p': pool = optarg; break;
		case 'W': watch = 1; break;
		case 'P': policy = optarg; break;
		case 'D': direction = optarg; break;
		case 'a': append = optarg; break;
		case OPT_CONFIG: {
			/* "# CONFIG_X is not set", as a .config says it, is CONFIG_X=n. */
			char name[201];
			int n = 0;

			if (nr_config == KCONFIG_JOB_MAX)
				return ctl_usage_error(c, "at most %d --config options", KCONFIG_JOB_MAX);
			if (sscanf(optarg, "# %200[A-Z0-9_] is not set%n", name, &n) == 1 && !optarg[n])
				snprintf(config[nr_config], sizeof(config[0]), "%s=n", name);
			else if (strlen(optarg) <= KCONFIG_JOB_OPT_MAX)
				snprintf(config[nr_config], sizeof(config[0]), "%s", optarg);
			if (kconfig_job_check(strlen(optarg) <= KCONFIG_JOB_OPT_MAX ? config[nr_config] : optarg))
				return ctl_usage_error(c, "bad --config: %s", err_msg());
			nr_config++;
			break;
		}
		case 'C':
			if (ctl_parse_fraction(&confidence, optarg, 0.5, 0.999999) < 0)
				return ctl_usage_error(c, "bad --confidence '%s' (0.5 to 0.999999)", optarg);
			break;
		case 'A':
			if (ctl_parse_fraction(&alpha, optarg, 1e-6, 0.5) < 0)
				return ctl_usage_error(c, "bad --alpha '%s' (0.000001 to 0.5)", optarg);
			break;
		case 'E':
			if (ctl_parse_fraction(&min_effect, optarg, 0, 90) < 0)
				return ctl_usage_error(c, "bad --min-effect '%s' (percent, 0 to 90)", optarg);
			min_effect /= 100;
			break;
		case 'R':
			if (ctl_parse_long(&budget_runs, optarg, 0, 1000000) < 0)
				return ctl_usage_error(c, "bad --budget-runs '%s' (0 to 1000000)", optarg);
			break;
		case 'B':
			if (ctl_parse_long(&budget_builds, optarg, 0, 1000000) < 0)
				return ctl_usage_error(c, "bad --budget-builds '%s' (0 to 1000000)", optarg);
			break;
		case 'T':
			if (ctl_parse_long(&budget_seconds, optarg, 0, 31536000) < 0)
				return ctl_usage_error(c, "bad --budget-seconds '%s' (0 to 31536000)", optarg);
			break;
		case OPT_END_RUNS:
			if (ctl_parse_long(&end_runs, optarg, 0, 200) < 0)
				return ctl_usage_error(c, "bad --end-runs '%s' (0 to 200)", optarg);
			break;
		case OPT_LIKE:
			if (ctl_parse_long(&like, optarg, 1, LONG_MAX) < 0)
				return ctl_usage_error(c, "bad --like '%s' (a job id)", optarg);
			break;
		case 'n':
			if (ctl_parse_long(&runs, optarg, 1, 100) < 0)
				return ctl_usage_error(c, "bad --runs '%s' (1 to 100)", optarg);
			break;
		case 'i':
			if ((rc = ctl_parse_interval(&interval, c, optarg)) != RC_OK)
				return rc;
			break;
		default:
			if (ctl_common_opt(&rc, c, opt, argv))
				return rc;
		}
	}
	if (optind < argc)
		return ctl_usage_error(c, "unexpected argument '%s'", argv[optind]);
	if (like > 0) {
		/* Job like's settings where no option gives them: its range by its commits, its own budgets. */
		char path[64];
		json_t *cf;
		size_t i;

		snprintf(path, sizeof(path), "/api/v1/jobs/%ld", like);
		if ((rc = ctl_api(&model, "GET", path, NULL)) != RC_OK)
			return rc;
		repo = repo ? repo : ctl_jstr(model, "repo");
		good = good ? good : ctl_jstr(model, "good");
		bad = bad ? bad : ctl_jstr(model, "bad");
		workload = workload ? workload : ctl_jstr(model, "workload");
		pool = pool ? pool : ctl_jstr(model, "pool");
		policy = policy ? policy : ctl_jstr(model, "policy");
		direction = direction ? direction : ctl_jstr(model, "direction");
		append = append ? append : ctl_jstr(model, "append");
		runs = runs ? runs : (long)ctl_jint(model, "runs", 0);
		if (confidence <= 0)
			ctl_jnum(&confidence, model, "confidence");
		if (alpha <= 0)
			ctl_jnum(&alpha, model, "alpha");
		if (min_effect < 0)
			ctl_jnum(&min_effect, model, "min_effect");
		if (budget_runs < 0 && ctl_jint(model, "budget_runs", 0) > 0)
			budget_runs = (long)ctl_jint(model, "budget_runs", 0);
		if (budget_builds < 0 && ctl_jint(model, "budget_builds", 0) > 0)
			budget_builds = (long)ctl_jint(model, "budget_builds", 0);
		if (budget_seconds < 0 && ctl_jint(model, "budget_seconds", 0) > 0)
			budget_seconds = (long)ctl_jint(model, "budget_seconds", 0);
		if (end_runs < 0 && ctl_jint(model, "end_runs", 0) > 0)
			end_runs = (long)ctl_jint(model, "end_runs", 0);
		json_array_foreach(nr_config ? NULL : json_object_get(model, "config"), i, cf) {
			if (json_is_string(cf) && nr_config < KCONFIG_JOB_MAX)
				snprintf(config[nr_config++], sizeof(config[0]), "%s", json_string_value(cf));
		}
	}
	if (!repo || !good || !bad || !workload) {
		rc = ctl_usage_error(c, "--%s is required",
				     !repo ? "repo" : !good ? "good" : !bad ? "bad" : "workload");
		goto out;
	}

	body = json_pack("{s:s, s:s, s:s, s:s}", "repo", repo, "good", good, "bad", bad,
			 "workload", workload);
	if (!body) {
		rc = ctl_usage_error(c, "arguments must be UTF-8");
		goto out;
	}
	if (pool)
		json_object_set_new(body, "pool", json_string(pool));
	if (runs)
		json_object_set_new(body, "runs", json_integer(runs));
	if (policy)
		json_object_set_new(body, "policy", json_string(policy));
	if (direction)
		json_object_set_new(body, "direction", json_string(direction));
	if (append)
		json_object_set_new(body, "append", json_string(append));
	if (nr_config) {
		json_t *a = json_array();

		for (size_t i = 0; i < nr_config; i++)
			json_array_append_new(a, json_string(config[i]));
		json_object_set_new(body, "config", a);
	}
	if (confidence > 0)
		json_object_set_new(body, "confidence", json_real(confidence));
	if (alpha > 0)
		json_object_set_new(body, "alpha", json_real(alpha));
	if (min_effect >= 0)
		json_object_set_new(body, "min_effect", json_real(min_effect));
	if (budget_runs >= 0)
		json_object_set_new(body, "budget_runs", json_integer(budget_runs));
	if (budget_builds >= 0)
		json_object_set_new(body, "budget_builds", json_integer(budget_builds));
	if (budget_seconds >= 0)
		json_object_set_new(body, "budget_seconds", json_integer(budget_seconds));
	if (end_runs >= 0)
		json_object_set_new(body, "end_runs", json_integer(end_runs));
	rc = ctl_api(&reply, "POST", "/api/v1/jobs", body);
	if (rc != RC_OK)
		goto out;
	id = (long)ctl_jint(reply, "id", 0);
	if (ctl_json) {
		ctl_print_json(reply, JSON_INDENT(2));
	} else {
		printf("job %ld submitted: %s %s..%s (%lld commits), workload %s on pool %s\n", id,
		       ctl_jstr_or(reply, "repo", repo), ctl_jstr_or(reply, "good_ref", good),
		       ctl_jstr_or(reply, "bad_ref", bad), ctl_jint(reply, "nr_commits", 0),
		       ctl_jstr_or(reply, "workload", workload), ctl_jstr_or(reply, "pool", pool ? pool : "?"));
		fflush(stdout);
	}
	if (watch) {
		if (id <= 0) {
			fprintf(stderr, "bisectctl: bisectd's reply has no job id to watch\n");
			rc = RC_SERVER;
			goto out;
		}
		rc = watch_job(id, interval);
	}
out:
	json_decref(body);
	json_decref(reply);
	json_decref(model);
	return rc;
}

/*
 * The front the listing commands share: their options, the GET, and the
 * answers that need no table (--json, or an empty list). *items is the
 * non-empty array to print as a table, with *reply the caller's to free;
 * otherwise *items is NULL, nothing is left to free, and the return is
 * the command's exit status.
 */
int ctl_fetch_list(json_t **reply, json_t **items, const struct cmd *c, int argc, char **argv,
		   const char *path, const char *key)
{
	static const struct option longopts[] = { COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	int opt, rc;

	*reply = *items = NULL;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (ctl_common_opt(&rc, c, opt, argv))
			return rc;
	}
	if (optind < argc)
		return ctl_usage_error(c, "unexpected argument '%s'", argv[optind]);
	rc = ctl_api(reply, "GET", path, NULL);
	if (rc != RC_OK)
		return rc;
	if (ctl_json)
		ctl_print_json(*reply, JSON_INDENT(2));
	else if (json_is_array(json_object_get(*reply, key)) && json_array_size(json_object_get(*reply, key)) > 0)
		*items = json_object_get(*reply, key);
	else
		printf("no %s\n", key);
	if (!*items) {
		json_decref(*reply);
		*reply = NULL;
	}
	return RC_OK;
}

int cmd_jobs(const struct cmd *c, int argc, char **argv)
{
	struct table t = { 7, 0, 0, NULL };
	json_t *reply = NULL, *jobs;
	size_t i;
	int rc = ctl_fetch_list(&reply, &jobs, c, argc, argv, "/api/v1/jobs", "jobs");

	if (!jobs)
		return rc;
	ctl_table_row(&t, (const char *const[]){ "ID", "STATE", "REPO", "RANGE", "WORKLOAD",
					      "CULPRIT", "CREATED" });
	for (i = 0; i < json_array_size(jobs); i++) {
		json_t *j = json_array_get(jobs, i);
		char id[32], range[256], culprit[13], created[32];

		snprintf(id, sizeof(id), "%lld", ctl_jint(j, "id", 0));
		snprintf(range, sizeof(range), "%s..%s", ctl_jstr_or(j, "good_ref", "?"),
			 ctl_jstr_or(j, "bad_ref", "?"));
		ctl_culprit_sha(culprit, j);
		ctl_local_time(created, sizeof(created), ctl_jint(j, "created", 0), "%Y-%m-%d %H:%M");
		ctl_table_row(&t, (const char *const[]){ id, ctl_jstr(j, "state"), ctl_jstr(j, "repo"), range,
						      ctl_jstr(j, "workload"), culprit, created });
	}
	ctl_table_print(&t);
	ctl_table_release(&t);
	json_decref(reply);
	return RC_OK;
}

int cmd_show(const struct cmd *c, int argc, char **argv)
{
	struct sbuf out = SBUF_INIT;
	json_t *job = NULL;
	long id;
	int rc;

	rc = ctl_id_command(&id, NULL, c, argc, argv);
	if (rc != RC_OK)
		return rc < 0 ? RC_OK : rc;
	rc = ctl_get_job(&job, id);
	if (rc != RC_OK)
		return rc;
	if (ctl_json) {
		ctl_print_json(job, JSON_INDENT(2));
	} else {
		ctl_format_job(&out, job, SHOW_EVENTS, 1);
		fputs(out.buf, stdout);
		sbuf_release(&out);
	}
	json_decref(job);
	return RC_OK;
}

int cmd_watch(const struct cmd *c, int argc, char **argv)
{
	double interval = 1;
	long id;
	int rc;

	rc = ctl_id_command(&id, &interval, c, argc, argv);
	if (rc != RC_OK)
		return rc < 0 ? RC_OK : rc;
	return watch_job(id, interval);
}

int cmd_report(const struct cmd *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cv", required_argument, NULL, 'c' },
		{ "mail", no_argument, NULL, 'm' },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const char *query = "";
	json_t *job = NULL;
	char path[96];
	int opt, rc, mail = 0;
	long id;

	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (opt == 'c') {
			if (strcmp(optarg, "amean") && strcmp(optarg, "hmean"))
				return ctl_usage_error(c, "bad --cv '%s' (amean: stddev / arithmetic mean, hmean: "
						       "mmtests' harmonic CoV)", optarg);
			query = !strcmp(optarg, "hmean") ? "?cv=hmean" : "";
			continue;
		}
		if (opt == 'm') {
			mail = 1;
			continue;
		}
		if (ctl_common_opt(&rc, c, opt, argv))
			return rc;
	}
	if ((rc = ctl_parse_id(&id, c, argc, argv)) != RC_OK)
		return rc;
	if (mail) {
		snprintf(path, sizeof(path), "/api/v1/jobs/%ld/report?format=mail", id);
		return ctl_get_text_out(path, NULL);
	}
	rc = ctl_get_job(&job, id);
	if (rc != RC_OK)
		return rc;
	rc = ctl_finish_job(id, job, 1, query);
	json_decref(job);
	return rc;
}

int cmd_export(const struct cmd *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "csv", no_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const char *file = NULL;
	char path[96];
	int opt, rc;
	long id;

	while ((opt = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
		if (opt == 'c')
			continue;   /* the one format there is */
		if (opt == 'o') {
			file = optarg;
			continue;
		}
		if (ctl_common_opt(&rc, c, opt, argv))
			return rc;
	}
	if ((rc = ctl_parse_id(&id, c, argc, argv)) != RC_OK)
		return rc;
	snprintf(path, sizeof(path), "/api/v1/jobs/%ld/samples.csv", id);
	return ctl_get_text_out(path, file);
}

int cmd_cancel(const struct cmd *c, int argc, char **argv)
{
	json_t *reply = NULL;
	char path[64];
	long id;
	int rc;

	rc = ctl_id_command(&id, NULL, c, argc, argv);
	if (rc != RC_OK)
		return rc < 0 ? RC_OK : rc;
	snprintf(path, sizeof(path), "/api/v1/jobs/%ld/cancel", id);
	rc = ctl_api(&reply, "POST", path, NULL);
	if (rc != RC_OK)
		return rc;
	if (ctl_json)
		ctl_print_json(reply, JSON_INDENT(2));
	else
		printf("job %ld cancelled (its runs are kept: bisectctl resume %ld runs it on)\n", id, id);
	json_decref(reply);
	return RC_OK;
}

int cmd_resume(const struct cmd *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "more-runs", required_argument, NULL, OPT_MORE_RUNS },
		{ "more-seconds", required_argument, NULL, OPT_MORE_SECONDS },
		{ "watch", no_argument, NULL, 'W' },
		{ "interval", required_argument, NULL, 'i' },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	long id, more_runs = 0, more_seconds = 0;
	double interval = 1;
	int opt, rc, watch = 0;
	json_t *body = json_object(), *reply = NULL, *prog;
	char path[64];

	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_MORE_RUNS:
			if (ctl_parse_long(&more_runs, optarg, 1, 1000000) < 0) {
				rc = ctl_usage_error(c, "bad --more-runs '%s' (1 to 1000000)", optarg);
				goto out;
			}
			json_object_set_new(body, "more_runs", json_integer(more_runs));
			break;
		case OPT_MORE_SECONDS:
			if (ctl_parse_long(&more_seconds, optarg, 1, 31536000) < 0) {
				rc = ctl_usage_error(c, "bad --more-seconds '%s' (1 to 31536000)", optarg);
				goto out;
			}
			json_object_set_new(body, "more_seconds", json_integer(more_seconds));
			break;
		case 'W': watch = 1; break;
		case 'i':
			if ((rc = ctl_parse_interval(&interval, c, optarg)) != RC_OK)
				goto out;
			break;
		default:
			if (ctl_common_opt(&rc, c, opt, argv))
				goto out;
		}
	}
	if ((rc = ctl_parse_id(&id, c, argc, argv)) != RC_OK)
		goto out;
	snprintf(path, sizeof(path), "/api/v1/jobs/%ld/resume", id);
	if ((rc = ctl_api(&reply, "POST", path, body)) != RC_OK)
		goto out;
	prog = json_object_get(reply, "progress");
	if (ctl_json) {
		ctl_print_json(reply, JSON_INDENT(2));
	} else {
		const char *state = json_string_value(json_object_get(reply, "state"));
		long long budget = ctl_jint(prog, "budget_runs", 0);

		/* 0: a derived budget the engine has not made yet (a cancelled job's, before its ends differ). */
		if (budget > 0)
			printf("job %ld resumed: budget %lld runs (%lld so far)", id, budget, ctl_jint(prog, "samples", 0));
		else
			printf("job %ld resumed: budget of runs derived (%lld so far)", id, ctl_jint(prog, "samples", 0));
		printf(", %lld s of wall time from its creation", ctl_jint(prog, "budget_seconds", 0));
		if (ctl_jint(reply, "ends_max", 0) > 0)
			printf("; each end measured to %lld runs at most", ctl_jint(reply, "ends_max", 0));
		/* The runs it had decide it (kept undecided by an older bisectd): it ended so at its first step. */
		if (state && strcmp(state, "running") && strcmp(state, "queued"))
			printf("\njob %ld is %s at once, on the runs it had", id, state);
		printf("\n");
		fflush(stdout);
	}
	if (watch)
		rc = watch_job(id, interval);
out:
	json_decref(body);
	json_decref(reply);
	return rc;
}

/* bisectd draws a chart within its chart_timeout (30 s by default); this is the wait past it. */
#define PLOT_TIMEOUT_S 120L

int cmd_plot(const struct cmd *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "chart", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	static const char *const exts[] = { "svg", "png", "pdf" };
	const char *chart = NULL, *output = NULL, *dot, *ext = NULL;
	char *body = NULL, *path = NULL;
	size_t len = 0;
	long id, status;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, ":hc:o:", longopts, NULL)) != -1) {
		if (opt == 'c' || opt == 'o') {
			*(opt == 'c' ? &chart : &output) = optarg;
			continue;
		}
		if (ctl_common_opt(&rc, c, opt, argv))
			return rc;
	}
	if ((rc = ctl_parse_id(&id, c, argc, argv)) != RC_OK)
		return rc;
	if (!chart || !*chart || strspn(chart, "abcdefghijklmnopqrstuvwxyz") != strlen(chart))
		return ctl_usage_error(c, chart ? "bad chart name '%s'" : "missing --chart%s",
				       chart ? chart : " (timeline, distribution, compare or posterior)");
	if (!output || !*output)
		return ctl_usage_error(c, "missing -o FILE");
	dot = strrchr(output, '.');
	for (size_t i = 0; dot && !strchr(dot, '/') && i < sizeof(exts) / sizeof(exts[0]); i++)
		if (!strcasecmp(dot + 1, exts[i]))
			ext = exts[i];
	if (!ext)
		return ctl_usage_error(c, "'%s': the file's extension says the format: .svg, .png or .pdf", output);

	/* One implementation of the charts, bisectd's: the file is what the API serves. */
	path = xasprintf("/api/v1/jobs/%ld/charts/%s.%s", id, chart, ext);
	if (client_get_bytes(&body, &len, &status, ctl_get_client(), path, PLOT_TIMEOUT_S) < 0) {
		fprintf(stderr, "bisectctl: %s\n", err_msg());
		rc = RC_SERVER;
	} else if (status != 200) {
		rc = ctl_text_status_error(body, status);
	} else if (file_write_atomic(output, body, len) < 0) {
		/* Written to a temporary beside it and renamed: never a half-written FILE. */
		fprintf(stderr, "bisectctl: cannot write the chart: %s\n", err_msg());
		rc = RC_USAGE;
	} else {
		printf("%s: %s chart of job %ld (%zu bytes)\n", output, chart, id, len);
		rc = RC_OK;
	}
	free(body);
	free(path);
	return rc;
}
