/*
 * bisectctl_admin: the commands on the lab: agents (what each does now)
 * and API tokens (create, list, revoke).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "bisectctl_internal.h"
#include "token.h"
#include "util.h"

static void task_text(char *buf, size_t n, const json_t *task)
{
	if (json_is_integer(task)) {
		snprintf(buf, n, "task %lld", (long long)json_integer_value(task));
	} else if (json_is_object(task)) {
		char sha[13];

		ctl_short_sha(sha, ctl_jstr(task, "commit") ? ctl_jstr(task, "commit") : ctl_jstr(task, "sha"));
		snprintf(buf, n, "job %lld task %lld %s", ctl_jint(task, "job", 0),
			 ctl_jint(task, "task", ctl_jint(task, "id", 0)), sha);
	} else {
		snprintf(buf, n, "-");
	}
}

int cmd_agents(const struct cmd *c, int argc, char **argv)
{
	struct table t = { 5, 0, 0, NULL };
	json_t *reply = NULL, *agents;
	size_t i;
	int rc = ctl_fetch_list(&reply, &agents, c, argc, argv, "/api/v1/agents", "agents");

	if (!agents)
		return rc;
	ctl_table_row(&t, (const char *const[]){ "NAME", "STATE", "LABELS", "LAST SEEN", "TASK" });
	for (i = 0; i < json_array_size(agents); i++) {
		json_t *a = json_array_get(agents, i), *labels = json_object_get(a, "labels");
		struct sbuf lb = SBUF_INIT;
		long long seen = ctl_jint(a, "last_seen", 0);
		char ago[48], task[128];
		size_t k;

		for (k = 0; k < json_array_size(labels); k++) {
			const char *l = json_string_value(json_array_get(labels, k));

			if (l)
				sbuf_addf(&lb, "%s%s", lb.len ? "," : "", l);
		}
		if (seen > 0) {
			ctl_fmt_duration(ago, sizeof(ago) - 4, now_unix() - seen);
			strcat(ago, " ago");
		} else {
			snprintf(ago, sizeof(ago), "never");
		}
		task_text(task, sizeof(task), json_object_get(a, "task"));
		ctl_table_row(&t, (const char *const[]){ ctl_jstr(a, "name"), ctl_jstr(a, "state"),
						      lb.len ? lb.buf : "-", ago, task });
		sbuf_release(&lb);
	}
	ctl_table_print(&t);
	ctl_table_release(&t);
	json_decref(reply);
	return RC_OK;
}

static int token_create(const struct cmd *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "role", required_argument, NULL, 'r' },
		{ "agent", required_argument, NULL, 'a' },
		{ "note", required_argument, NULL, 'n' },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	const char *role = NULL, *agent = NULL, *note = NULL;
	json_t *body, *reply = NULL;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r': role = optarg; break;
		case 'a': agent = optarg; break;
		case 'n': note = optarg; break;
		default:
			if (ctl_common_opt(&rc, c, opt, argv))
				return rc;
		}
	}
	if (optind < argc)
		return ctl_usage_error(c, "unexpected argument '%s'", argv[optind]);
	if (!role)
		return ctl_usage_error(c, "token create needs --role admin, submit or agent");
	body = json_pack("{s:s}", "role", role);
	if (agent)
		json_object_set_new(body, "agent", json_string(agent));
	if (note)
		json_object_set_new(body, "note", json_string(note));
	rc = ctl_api(&reply, "POST", "/api/v1/tokens", body);
	json_decref(body);
	if (rc != RC_OK)
		return rc;
	if (ctl_json) {
		ctl_print_json(reply, JSON_INDENT(2));
	} else {
		printf("%s\n", ctl_jstr_or(reply, "token", ""));
		fprintf(stderr, "token %lld (bd_%s_...), role %s%s%s: shown this once, keep it in a file of mode "
			"0600\n", ctl_jint(reply, "id", 0), ctl_jstr_or(reply, "prefix", "?"),
			ctl_jstr_or(reply, "role", "?"), agent ? ", agent " : !strcmp(role, "agent") ? ", an enrolment token" : "",
			agent ? agent : "");
	}
	json_decref(reply);
	return RC_OK;
}

static int token_list(const struct cmd *c, int argc, char **argv)
{
	struct table t = { 8, 0, 0, NULL };
	json_t *reply = NULL, *tokens;
	int rc = ctl_fetch_list(&reply, &tokens, c, argc, argv, "/api/v1/tokens", "tokens");

	if (!tokens)
		return rc;
	ctl_table_row(&t, (const char *const[]){ "ID", "PREFIX", "ROLE", "AGENT", "CREATED", "LAST USED", "STATE",
					      "NOTE" });
	for (size_t i = 0; i < json_array_size(tokens); i++) {
		json_t *k = json_array_get(tokens, i);
		char id[24], prefix[24], created[48], used[48];
		const char *role = ctl_jstr_or(k, "role", "?");

		snprintf(id, sizeof(id), "%lld", ctl_jint(k, "id", 0));
		snprintf(prefix, sizeof(prefix), "bd_%s", ctl_jstr_or(k, "prefix", "?"));
		ctl_time_cell(created, sizeof(created), ctl_jint(k, "created", 0));
		ctl_time_cell(used, sizeof(used), ctl_jint(k, "last_used", 0));
		ctl_table_row(&t, (const char *const[]){ id, prefix, role,
			ctl_jstr(k, "agent") ? ctl_jstr(k, "agent") : !strcmp(role, "agent") ? "(enrolment)" : "-",
			created, used, ctl_jint(k, "revoked", 0) ? "revoked" : "live", ctl_jstr(k, "note") });
	}
	ctl_table_print(&t);
	ctl_table_release(&t);
	json_decref(reply);
	return RC_OK;
}

static int token_revoke(const struct cmd *c, int argc, char **argv)
{
	json_t *reply = NULL;
	char path[64];
	static const struct option longopts[] = { COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	long id;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (ctl_common_opt(&rc, c, opt, argv))
			return rc;
	}
	if (optind + 1 != argc)
		return ctl_usage_error(c, optind >= argc ? "token revoke needs the token's ID (token list shows it)" :
				       "unexpected argument '%s'", argv[argc - 1]);
	if (ctl_parse_long(&id, argv[optind], 1, 0x7fffffffL) < 0)
		return ctl_usage_error(c, "bad token id '%s' (the number token list shows)", argv[optind]);
	snprintf(path, sizeof(path), "/api/v1/tokens/%ld/revoke", id);
	if ((rc = ctl_api(&reply, "POST", path, NULL)) != RC_OK)
		return rc;
	if (ctl_json)
		ctl_print_json(reply, JSON_INDENT(2));
	else
		printf("token %ld revoked\n", id);
	json_decref(reply);
	return RC_OK;
}

int cmd_token(const struct cmd *c, int argc, char **argv)
{

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		ctl_print_usage(argc < 2 ? stderr : stdout, c);
		return argc < 2 ? RC_USAGE : RC_OK;
	}
	if (!strcmp(argv[1], "create"))
		return token_create(c, argc - 1, argv + 1);
	if (!strcmp(argv[1], "list"))
		return token_list(c, argc - 1, argv + 1);
	if (!strcmp(argv[1], "revoke"))
		return token_revoke(c, argc - 1, argv + 1);
	return ctl_usage_error(c, "unknown token command '%s' (create, list or revoke)", argv[1]);
}
