/*
 * test_auth: tokens (token.c: their form, keyed hash, constant-time
 * compare, files), their rows (store_tokens.c) and who may do what
 * (auth.c: roles, agents bound to their names and leases, revocation,
 * enrolment, the bootstrap admin token, the failure limit), against a
 * real store in a temporary directory and requests with stubbed headers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "auth.h"
#include "err.h"
#include "http.h"
#include "log.h"
#include "store.h"
#include "storefix.h"
#include "token.h"
#include "util.h"

/* --- requests, stubbed: conn points at one of these ---------------------- */

struct fake {
	const char *authz, *ctype, *origin, *peer;
};

const char *http_header(const struct http_request *req, const char *name)
{
	const struct fake *f = req->conn;

	if (!strcasecmp(name, "Authorization"))
		return f->authz;
	if (!strcasecmp(name, "Content-Type"))
		return f->ctype;
	if (!strcasecmp(name, "Origin"))
		return f->origin;
	if (!strcasecmp(name, "Host"))
		return "127.0.0.1:7878";
	return NULL;
}

void http_peer(const struct http_request *req, char *buf, size_t len)
{
	const struct fake *f = req->conn;

	snprintf(buf, len, "%s", f->peer ? f->peer : "127.0.0.1");
}

/* Checks a request with token tok (NULL: none) from peer against need; the status, 0 when passed. */
static int check_as(struct auth_who *who, struct auth *a, const char *method, const char *tok, const char *peer,
		    enum auth_need need)
{
	char hdr[128];
	struct fake f = { NULL, "application/json", NULL, peer };
	struct http_request r = { .method = method, .path = "/api/v1/x", .body = "", .conn = &f };
	int retry;

	if (tok) {
		snprintf(hdr, sizeof(hdr), "Bearer %s", tok);
		f.authz = hdr;
	}
	return auth_check(who, &retry, a, &r, need);
}

static int check(struct auth *a, const char *tok, enum auth_need need)
{
	struct auth_who who;

	return check_as(&who, a, "POST", tok, NULL, need);
}

/* A fresh store and a config whose database is in it. */
struct fix {
	struct storefix sf;
	struct conf_bisectd conf;
	struct auth *a;
};

static void fix_open(struct fix *x, int max_failures)
{
	storefix_open(&x->sf);
	memset(&x->conf, 0, sizeof(x->conf));
	x->conf.database = xasprintf("%s/db", x->sf.dir);
	x->conf.auth.read_open = 1;
	x->conf.auth.max_failures = max_failures;
	x->conf.auth.failure_window = 60;
	assert_int_equal(auth_new(&x->a, &x->conf), 0);
}

static void fix_close(struct fix *x)
{
	auth_free(x->a);
	free(x->conf.database);
	storefix_close(&x->sf);
}

/* A new token of role (bound to agent), as the API makes it; the caller frees it. */
static char *make(struct auth *a, const char *role, const char *agent, long long *id)
{
	json_t *body = json_pack("{s:s}", "role", role), *reply = NULL;
	char *tok;

	if (agent)
		json_object_set_new(body, "agent", json_string(agent));
	assert_int_equal(auth_token_create(&reply, a, body), 0);
	tok = xstrdup(json_string_value(json_object_get(reply, "token")));
	if (id)
		*id = json_integer_value(json_object_get(reply, "id"));
	json_decref(body);
	json_decref(reply);
	return tok;
}

/* --- token.c --------------------------------------------------------------- */

static void test_token_form_and_hash(void **state)
{
	static const unsigned char k1[TOKEN_KEY_LEN] = { 1 }, k2[TOKEN_KEY_LEN] = { 2 };
	char t1[TOKEN_LEN + 1], t2[TOKEN_LEN + 1], p[TOKEN_PREFIX_LEN + 1];
	char h1[TOKEN_HASH_LEN + 1], h1b[TOKEN_HASH_LEN + 1], h2[TOKEN_HASH_LEN + 1], hk[TOKEN_HASH_LEN + 1];

	(void)state;
	assert_int_equal(token_generate(t1), 0);
	assert_int_equal(token_generate(t2), 0);
	assert_int_equal(strlen(t1), TOKEN_LEN);
	assert_string_not_equal(t1, t2);
	assert_int_equal(token_parse(p, t1), 0);
	assert_memory_equal(p, t1 + 3, TOKEN_PREFIX_LEN);
	/* The hash is keyed: the same token and key hash alike, another key or token not. */
	assert_int_equal(token_hash(h1, k1, sizeof(k1), t1), 0);
	assert_int_equal(token_hash(h1b, k1, sizeof(k1), t1), 0);
	assert_int_equal(token_hash(hk, k2, sizeof(k2), t1), 0);
	assert_int_equal(token_hash(h2, k1, sizeof(k1), t2), 0);
	assert_int_equal(strlen(h1), TOKEN_HASH_LEN);
	assert_string_equal(h1, h1b);
	assert_string_not_equal(h1, hk);
	assert_string_not_equal(h1, h2);
	assert_null(strstr(h1, t1 + 4 + TOKEN_PREFIX_LEN));
	/* A known HMAC-SHA256 (RFC 4231 test case 2: key "Jefe"). */
	assert_int_equal(token_hash(hk, (const unsigned char *)"Jefe", 4, "what do ya want for nothing?"), 0);
	assert_string_equal(hk, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	/* Malformed tokens. */
	assert_int_equal(token_parse(p, ""), ERR_INVALID);
	assert_int_equal(token_parse(p, "bd_0123456_0123456789abcdef0123456789abcdef"), ERR_INVALID);
	assert_int_equal(token_parse(p, "bd_01234567_0123456789abcdef0123456789abcdeF"), ERR_INVALID);
	assert_int_equal(token_parse(p, "xx_01234567_0123456789abcdef0123456789abcdef"), ERR_INVALID);
	assert_int_equal(token_parse(p, "bd_01234567-0123456789abcdef0123456789abcdef"), ERR_INVALID);
	assert_int_equal(token_parse(p, "bd_01234567_0123456789abcdef0123456789abcdef0"), ERR_INVALID);
	assert_int_equal(token_parse(p, "bd_01234567_0123456789abcdef0123456789abcdef"), 0);
	assert_string_equal(p, "01234567");
}

static void test_token_equal(void **state)
{
	char a[TOKEN_HASH_LEN + 1], b[TOKEN_HASH_LEN + 1];

	(void)state;
	memset(a, 'a', TOKEN_HASH_LEN);
	memcpy(b, a, sizeof(a));
	assert_true(token_equal(a, b, TOKEN_HASH_LEN));
	for (size_t i = 0; i < TOKEN_HASH_LEN; i += 21) {
		b[i] = 'b';
		assert_false(token_equal(a, b, TOKEN_HASH_LEN));
		b[i] = 'a';
	}
	b[TOKEN_HASH_LEN - 1] ^= 1;
	assert_false(token_equal(a, b, TOKEN_HASH_LEN));
	assert_true(token_equal(a, b, 0));
}

static void test_token_files(void **state)
{
	char dir[] = "/tmp/test_auth.XXXXXX";
	char *path, *tok = NULL;
	struct stat sb;

	(void)state;
	assert_non_null(mkdtemp(dir));
	path = xasprintf("%s/t", dir);
	assert_int_equal(token_read_file(&tok, path), ERR_NOTFOUND);
	assert_int_equal(token_write_file(path, "  bd_x\n\n", 8), 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(token_read_file(&tok, path), 0);
	assert_string_equal(tok, "bd_x");
	free(tok);
	assert_int_equal(token_write_file(path, " \n", 2), 0);
	assert_int_equal(token_read_file(&tok, path), ERR_INVALID);
	assert_null(tok);
	free(path);
	remove_tree(dir);
}

/* --- store_tokens.c ---------------------------------------------------------- */

static void test_store_rows(void **state)
{
	struct storefix f;
	struct token t = { 0 }, got, *all;
	long long id, id2, n;
	size_t nr;

	(void)state;
	storefix_open(&f);
	strcpy(t.prefix, "0000aaaa");
	strcpy(t.hash, "ab");
	strcpy(t.role, "agent");
	t.agent = (char *)(uintptr_t)"lab1";
	t.created = 100;
	assert_int_equal(store_token_insert(&id, f.s, &t), 0);
	assert_int_equal(store_token_insert(&id2, f.s, &t), ERR_EXISTS);   /* the prefix is unique */
	strcpy(t.prefix, "0000bbbb");
	strcpy(t.role, "root");
	assert_int_equal(store_token_insert(&id2, f.s, &t), ERR_EXISTS);   /* CHECK (role IN ...) */
	strcpy(t.role, "submit");
	t.agent = NULL;
	t.note = (char *)(uintptr_t)"ci";
	assert_int_equal(store_token_insert(&id2, f.s, &t), 0);
	assert_int_equal(store_token_by_prefix(&got, f.s, "0000aaaa"), 0);
	assert_int_equal(got.id, id);
	assert_string_equal(got.role, "agent");
	assert_string_equal(got.agent, "lab1");
	assert_null(got.note);
	assert_int_equal(got.revoked, 0);
	store_token_release(&got);
	assert_int_equal(store_token_by_prefix(&got, f.s, "ffffffff"), ERR_NOTFOUND);
	assert_int_equal(store_tokens_live(&n, f.s, "agent", "lab1"), 0);
	assert_int_equal(n, 1);
	assert_int_equal(store_tokens_live(&n, f.s, NULL, NULL), 0);
	assert_int_equal(n, 2);
	assert_int_equal(store_token_revoke(f.s, id, 200), 0);
	assert_int_equal(store_token_revoke(f.s, id, 201), ERR_CONFLICT);
	assert_int_equal(store_token_revoke(f.s, 999, 201), ERR_NOTFOUND);
	assert_int_equal(store_tokens_live(&n, f.s, "agent", "lab1"), 0);
	assert_int_equal(n, 0);
	assert_int_equal(store_token_used(f.s, id2, 300), 0);
	assert_int_equal(store_tokens_list(&all, &nr, f.s), 0);
	assert_int_equal(nr, 2);
	assert_int_equal(all[0].revoked, 200);
	assert_int_equal(all[1].last_used, 300);
	assert_string_equal(all[1].note, "ci");
	store_tokens_free(all, nr);
	storefix_close(&f);
}

/* --- auth.c ---------------------------------------------------------------- */

static void test_bootstrap(void **state)
{
	struct fix x;
	struct auth *again;
	char *path, *tok = NULL, *tok2 = NULL;
	struct stat sb;

	(void)state;
	fix_open(&x, 10);
	path = xasprintf("%s.admin-token", x.conf.database);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	assert_int_equal(token_read_file(&tok, path), 0);
	assert_int_equal(check(x.a, tok, AUTH_ADMIN), 0);
	/* A second start with an admin token in the store leaves the file as it is. */
	assert_int_equal(auth_new(&again, &x.conf), 0);
	assert_int_equal(token_read_file(&tok2, path), 0);
	assert_string_equal(tok, tok2);
	/* Both read the same key: a token made by one verifies with the other. */
	assert_int_equal(check(again, tok, AUTH_ADMIN), 0);
	auth_free(again);
	free(tok);
	free(tok2);
	free(path);
	fix_close(&x);
}

static void test_roles(void **state)
{
	struct fix x;
	char *admin, *submit, *agent, *enrol;

	(void)state;
	fix_open(&x, 100);
	admin = make(x.a, "admin", NULL, NULL);
	submit = make(x.a, "submit", NULL, NULL);
	agent = make(x.a, "agent", "lab1", NULL);
	enrol = make(x.a, "agent", NULL, NULL);

	assert_int_equal(check(x.a, admin, AUTH_ADMIN), 0);
	assert_int_equal(check(x.a, admin, AUTH_SUBMIT), 0);
	assert_int_equal(check(x.a, admin, AUTH_ENROL), 0);
	assert_int_equal(check(x.a, admin, AUTH_AGENT), 403);
	assert_int_equal(check(x.a, submit, AUTH_SUBMIT), 0);
	assert_int_equal(check(x.a, submit, AUTH_ADMIN), 403);
	assert_int_equal(check(x.a, submit, AUTH_AGENT), 403);
	assert_int_equal(check(x.a, submit, AUTH_ENROL), 403);
	assert_int_equal(check(x.a, agent, AUTH_AGENT), 0);
	assert_int_equal(check(x.a, agent, AUTH_SUBMIT), 403);
	assert_int_equal(check(x.a, agent, AUTH_ADMIN), 403);
	assert_int_equal(check(x.a, agent, AUTH_ENROL), 403);
	assert_int_equal(check(x.a, enrol, AUTH_ENROL), 0);
	assert_int_equal(check(x.a, enrol, AUTH_AGENT), 403);
	assert_non_null(strstr(err_msg(), "enrolment token"));
	assert_int_equal(check(x.a, enrol, AUTH_SUBMIT), 403);
	assert_int_equal(check(x.a, enrol, AUTH_ANY), 0);

	/* No token, a malformed one, an unknown one, a known prefix with the wrong secret. */
	assert_int_equal(check(x.a, NULL, AUTH_SUBMIT), 401);
	assert_int_equal(check(x.a, "nonsense", AUTH_SUBMIT), 401);
	assert_int_equal(check(x.a, "bd_01234567_0123456789abcdef0123456789abcdef", AUTH_ANY), 401);
	admin[TOKEN_LEN - 1] = admin[TOKEN_LEN - 1] == '0' ? '1' : '0';
	assert_int_equal(check(x.a, admin, AUTH_ANY), 401);
	assert_non_null(strstr(err_msg(), "unknown token"));

	/* Reads: open unless the config says token. */
	assert_int_equal(check(x.a, NULL, AUTH_READ), 0);
	x.conf.auth.read_open = 0;
	assert_int_equal(check(x.a, NULL, AUTH_READ), 401);
	assert_int_equal(check(x.a, submit, AUTH_READ), 0);
	free(admin);
	free(submit);
	free(agent);
	free(enrol);
	fix_close(&x);
}

static void test_revoke(void **state)
{
	struct fix x;
	json_t *reply = NULL;
	long long id;
	char *tok;

	(void)state;
	fix_open(&x, 100);
	tok = make(x.a, "submit", NULL, &id);
	assert_int_equal(check(x.a, tok, AUTH_SUBMIT), 0);
	assert_int_equal(auth_token_revoke(&reply, x.a, id), 0);
	json_decref(reply);
	assert_int_equal(check(x.a, tok, AUTH_SUBMIT), 401);
	assert_non_null(strstr(err_msg(), "revoked"));
	assert_int_equal(auth_token_revoke(&reply, x.a, id), ERR_CONFLICT);
	assert_int_equal(auth_token_revoke(&reply, x.a, 12345), ERR_NOTFOUND);
	/* The list shows it revoked, and never a token's secret. */
	assert_int_equal(auth_token_list(&reply, x.a), 0);
	{
		char *dump = json_dumps(reply, 0);

		assert_non_null(strstr(dump, "\"revoked\""));
		assert_null(strstr(dump, tok + 4 + TOKEN_PREFIX_LEN));
		assert_null(strstr(dump, "\"token\""));
		free(dump);
	}
	json_decref(reply);
	free(tok);
	fix_close(&x);
}

static void test_binding(void **state)
{
	struct fix x;
	struct auth_who who;
	long long job, task;
	struct agent a1, a2;
	char *t1, *t2;

	(void)state;
	fix_open(&x, 100);
	t1 = make(x.a, "agent", "lab1", NULL);
	t2 = make(x.a, "agent", "lab2", NULL);
	assert_int_equal(check_as(&who, x.a, "POST", t1, NULL, AUTH_AGENT), 0);
	assert_string_equal(who.agent, "lab1");
	assert_int_equal(auth_as_agent(&who, "lab1"), 0);
	assert_int_equal(auth_as_agent(&who, "lab2"), 403);
	assert_non_null(strstr(err_msg(), "cannot act as agent lab2"));

	/* Task 1 attempt 1 is lab2's lease: lab1 uploads neither in its own name nor in lab2's. */
	job = storefix_job(&x.sf, 5, "local");
	assert_int_equal(store_agent_put(x.sf.s, "lab1", "[]", 1), 0);
	assert_int_equal(store_agent_put(x.sf.s, "lab2", "[]", 1), 0);
	assert_int_equal(store_agent_get(&a1, x.sf.s, "lab1"), 0);
	assert_int_equal(store_agent_get(&a2, x.sf.s, "lab2"), 0);
	assert_int_equal(store_task_add(&task, x.sf.s, job, 0, 5, 10, 0, 0), 0);
	assert_int_equal(store_task_claim(x.sf.s, task, 1, a2.id, 1000, 10), 0);
	assert_int_equal(auth_for_task(x.a, &who, "lab1", task, 1), 403);
	assert_non_null(strstr(err_msg(), "lab2's lease"));
	assert_int_equal(auth_for_task(x.a, &who, "lab2", task, 1), 403);
	/* A stale attempt, or a task that does not exist, is the coordinator's to answer (409, 404). */
	assert_int_equal(auth_for_task(x.a, &who, "lab1", task, 0), 0);
	assert_int_equal(auth_for_task(x.a, &who, "lab1", 999, 1), 0);
	/* lab2 for its own lease. */
	assert_int_equal(check_as(&who, x.a, "POST", t2, NULL, AUTH_AGENT), 0);
	assert_int_equal(auth_for_task(x.a, &who, "lab2", task, 1), 0);
	store_agent_release(&a1);
	store_agent_release(&a2);
	free(t1);
	free(t2);
	fix_close(&x);
}

static void test_enrol(void **state)
{
	struct fix x;
	json_t *body = json_pack("{s:s}", "name", "lab1"), *reply = NULL, *list = NULL;
	struct auth_who who;
	const char *tok;

	(void)state;
	fix_open(&x, 100);
	assert_int_equal(auth_enrol(&reply, x.a, body), 0);
	tok = json_string_value(json_object_get(reply, "token"));
	assert_non_null(tok);
	assert_int_equal(check_as(&who, x.a, "POST", tok, NULL, AUTH_AGENT), 0);
	assert_string_equal(who.agent, "lab1");
	assert_string_equal(who.role, "agent");
	/* Once: a second enrolment of lab1 would be a second key to its name. */
	assert_int_equal(auth_enrol(&list, x.a, body), ERR_CONFLICT);
	assert_int_equal(auth_token_revoke(&list, x.a, who.id), 0);
	json_decref(list);
	json_decref(reply);
	assert_int_equal(auth_enrol(&reply, x.a, body), 0);
	json_decref(reply);
	json_decref(body);
	body = json_pack("{s:s}", "name", "lab 1");
	assert_int_equal(auth_enrol(&reply, x.a, body), ERR_INVALID);
	json_decref(body);
	body = json_pack("{s:s, s:s}", "role", "submit", "agent", "lab1");
	assert_int_equal(auth_token_create(&reply, x.a, body), ERR_INVALID);
	json_decref(body);
	body = json_pack("{s:s}", "role", "root");
	assert_int_equal(auth_token_create(&reply, x.a, body), ERR_INVALID);
	json_decref(body);
	fix_close(&x);
}

static void test_failure_limit(void **state)
{
	struct fix x;
	struct auth_who who;
	char *good;
	const char *bad = "bd_01234567_0123456789abcdef0123456789abcdef";
	int retry;

	(void)state;
	fix_open(&x, 3);
	good = make(x.a, "submit", NULL, NULL);
	for (int i = 0; i < 3; i++)
		assert_int_equal(check_as(&who, x.a, "POST", bad, "192.0.2.7", AUTH_SUBMIT), 401);
	/* Now even the right token waits, from that address only. */
	assert_int_equal(check_as(&who, x.a, "POST", good, "192.0.2.7", AUTH_SUBMIT), 429);
	assert_non_null(strstr(err_msg(), "too many failed"));
	assert_int_equal(check_as(&who, x.a, "POST", good, "192.0.2.8", AUTH_SUBMIT), 0);
	{
		struct fake f = { NULL, "application/json", NULL, "192.0.2.7" };
		struct http_request r = { .method = "POST", .path = "/", .body = "", .conn = &f };

		assert_int_equal(auth_check(&who, &retry, x.a, &r, AUTH_SUBMIT), 429);
		assert_true(retry >= 1 && retry <= 60);
	}
	/* Missing tokens are not guesses: they do not count. */
	for (int i = 0; i < 5; i++)
		assert_int_equal(check_as(&who, x.a, "POST", NULL, "192.0.2.9", AUTH_SUBMIT), 401);
	assert_int_equal(check_as(&who, x.a, "POST", good, "192.0.2.9", AUTH_SUBMIT), 0);
	free(good);
	fix_close(&x);
}

static void test_auth_none(void **state)
{
	struct conf_bisectd conf;
	struct auth *a;
	struct auth_who who;

	(void)state;
	memset(&conf, 0, sizeof(conf));
	conf.database = (char *)(uintptr_t)"/nonexistent/db";   /* with none nothing is opened */
	conf.auth.none = 1;
	assert_int_equal(auth_new(&a, &conf), 0);
	assert_int_equal(check_as(&who, a, "POST", NULL, NULL, AUTH_ADMIN), 0);
	assert_true(who.open);
	assert_int_equal(auth_as_agent(&who, "anyone"), 0);
	assert_int_equal(auth_for_task(a, &who, "anyone", 1, 1), 0);
	auth_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token_form_and_hash),
		cmocka_unit_test(test_token_equal),
		cmocka_unit_test(test_token_files),
		cmocka_unit_test(test_store_rows),
		cmocka_unit_test(test_bootstrap),
		cmocka_unit_test(test_roles),
		cmocka_unit_test(test_revoke),
		cmocka_unit_test(test_binding),
		cmocka_unit_test(test_enrol),
		cmocka_unit_test(test_failure_limit),
		cmocka_unit_test(test_auth_none),
	};

	log_init("test_auth", LOG_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
