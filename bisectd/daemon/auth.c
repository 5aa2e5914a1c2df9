/* auth: bearer tokens and roles per route, agents bound to their names, write hygiene, failure limits. */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth.h"
#include "err.h"
#include "jsonx.h"
#include "log.h"
#include "token.h"
#include "util.h"

/* Addresses whose failures are remembered at once; the oldest is forgotten first. */
#define AUTH_MAX_ADDRS 512
#define NOTE_MAX 200
/* last_used is written at most this often per token. */
#define TOUCH_EVERY_S 60

struct failures {
	char addr[48];
	long long since;     /* start of the window */
	int n;
};

struct auth {
	const struct conf_bisectd *conf;
	struct store *st;
	pthread_mutex_t lock;  /* st and fails */
	unsigned char key[TOKEN_KEY_LEN];
	struct failures fails[AUTH_MAX_ADDRS];
};

static char *default_path(const char *given, const char *database, const char *suffix)
{
	return given ? xstrdup(given) : xasprintf("%s%s", database, suffix);
}

static int unhex(unsigned char *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned v = 0;

		for (int k = 0; k < 2; k++) {
			char c = s[2 * i + (size_t)k];

			if (!isxdigit((unsigned char)c))
				return -1;
			v = v * 16 + (unsigned)(isdigit((unsigned char)c) ? c - '0' : tolower((unsigned char)c) - 'a' + 10);
		}
		out[i] = (unsigned char)v;
	}
	return s[2 * n] ? -1 : 0;
}

/* The server's key: read from the secret file, or made and written there (0600) the first time. */
static int load_key(struct auth *a, const char *path)
{
	char *text = NULL, buf[2 * TOKEN_KEY_LEN + 2];
	long long n = 0;
	int rc = token_read_file(&text, path);

	if (rc == 0) {
		if (unhex(a->key, text, TOKEN_KEY_LEN) < 0)
			rc = err_set(ERR_INVALID, "secret file %s must hold %d hex digits (delete it to make a new "
				     "key; every token must then be made again)", path, 2 * TOKEN_KEY_LEN);
		free(text);
		return rc;
	}
	if (rc != ERR_NOTFOUND)
		return rc;
	if ((rc = token_random(a->key, sizeof(a->key))))
		return rc;
	for (size_t i = 0; i < TOKEN_KEY_LEN; i++)
		snprintf(buf + 2 * i, 3, "%02x", a->key[i]);
	buf[2 * TOKEN_KEY_LEN] = '\n';
	if ((rc = token_write_file(path, buf, 2 * TOKEN_KEY_LEN + 1)))
		return rc;
	if (store_tokens_live(&n, a->st, NULL, NULL) == 0 && n > 0)
		log_warn("auth: made a new key in %s, but the store has %lld live tokens hashed with another: "
			 "they will not verify (make them again)", path, n);
	else
		log_info("auth: made the key tokens are hashed with: %s (mode 0600)", path);
	return 0;
}

/* Makes a token of role (bound to agent, may be NULL) and stores its hash; the token into tok. */
static int make_token(struct token *t, char *tok, struct auth *a, const char *role, const char *agent,
		      const char *note)
{
	int rc = ERR_EXISTS;

	memset(t, 0, sizeof(*t));
	/* A prefix is 32 random bits: a collision is rare, and then a retry. */
	for (int i = 0; i < 4 && rc == ERR_EXISTS; i++) {
		if ((rc = token_generate(tok)) || (rc = token_parse(t->prefix, tok)) ||
		    (rc = token_hash(t->hash, a->key, sizeof(a->key), tok)))
			return rc;
		snprintf(t->role, sizeof(t->role), "%s", role);
		t->agent = (char *)(uintptr_t)agent;
		t->note = (char *)(uintptr_t)note;
		t->created = (long long)now_unix();
		rc = store_token_insert(&t->id, a->st, t);
		t->agent = NULL;
		t->note = NULL;
	}
	return rc;
}

static int bootstrap(struct auth *a, const char *path)
{
	char tok[TOKEN_LEN + 2];
	struct token t;
	long long n;
	int rc;

	if ((rc = store_tokens_live(&n, a->st, "admin", NULL)))
		return rc;
	if (n > 0)
		return 0;
	if ((rc = make_token(&t, tok, a, "admin", NULL, "bootstrap: made at first start")))
		return rc;
	strcat(tok, "\n");
	if ((rc = token_write_file(path, tok, strlen(tok)))) {
		store_token_revoke(a->st, t.id, (long long)now_unix());
		return rc;
	}
	log_info("auth: no admin token yet: wrote one to %s (mode 0600); bisectctl --token-file %s "
		 "token create ... makes the others", path, path);
	return 0;
}

int auth_new(struct auth **out, const struct conf_bisectd *conf)
{
	struct auth *a = xcalloc(1, sizeof(*a));
	char *secret = NULL, *admin = NULL;
	int rc = 0;

	*out = NULL;
	a->conf = conf;
	pthread_mutex_init(&a->lock, NULL);
	if (conf->auth.none) {
		*out = a;
		return 0;
	}
	secret = default_path(conf->auth.secret_file, conf->database, ".key");
	admin = default_path(conf->auth.admin_token_file, conf->database, ".admin-token");
	if ((rc = store_open(&a->st, conf->database)) || (rc = load_key(a, secret)) || (rc = bootstrap(a, admin)))
		goto out;
	*out = a;
out:
	free(secret);
	free(admin);
	if (rc)
		auth_free(a);
	return rc;
}

void auth_free(struct auth *a)
{
	if (!a)
		return;
	store_close(a->st);
	pthread_mutex_destroy(&a->lock);
	memset(a->key, 0, sizeof(a->key));
	free(a);
}

/* --- failures per address ---------------------------------------------- */

/* The address's entry (NULL when none and !make); a new one takes the oldest slot. Under a->lock. */
static struct failures *failures_of(struct auth *a, const char *addr, int make)
{
	struct failures *oldest = &a->fails[0];

	for (size_t i = 0; i < AUTH_MAX_ADDRS; i++) {
		struct failures *f = &a->fails[i];

		if (f->addr[0] && !strcmp(f->addr, addr))
			return f;
		if (!f->addr[0] || (oldest->addr[0] && f->since < oldest->since))
			oldest = f;
	}
	if (!make)
		return NULL;
	memset(oldest, 0, sizeof(*oldest));
	snprintf(oldest->addr, sizeof(oldest->addr), "%s", addr);
	return oldest;
}

/* Seconds until the address may try again; 0 when it may now. Under a->lock. */
static int blocked_for(struct auth *a, const char *addr, long long now)
{
	struct failures *f = failures_of(a, addr, 0);
	long long until;

	if (!f)
		return 0;
	until = f->since + a->conf->auth.failure_window;
	if (now >= until) {
		memset(f, 0, sizeof(*f));
		return 0;
	}
	return f->n >= a->conf->auth.max_failures ? (int)(until - now) : 0;
}

static void count_failure(struct auth *a, const char *addr, long long now)
{
	struct failures *f = failures_of(a, addr, 1);

	if (!f->since || now >= f->since + a->conf->auth.failure_window) {
		f->since = now;
		f->n = 0;
	}
	f->n++;
	if (f->n == a->conf->auth.max_failures)
		log_warn("auth: %d failed authentications from %s: refused for %d s", f->n, addr,
			 a->conf->auth.failure_window);
}

/* --- checks -------------------------------------------------------------- */

/* "application/json", then the end or parameters ("; charset=utf-8"). */
static int is_json_type(const char *ct)
{
	size_t n = strlen("application/json");

	if (!ct || strncasecmp(ct, "application/json", n))
		return 0;
	return ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ' || ct[n] == '\t';
}

/* An Origin header is this server's when it is http(s):// + the Host the request was sent to. */
static int is_own_origin(const char *origin, const char *host)
{
	const char *rest;

	if (!host || !*host)
		return 0;
	if (!strncasecmp(origin, "http://", 7))
		rest = origin + 7;
	else if (!strncasecmp(origin, "https://", 8))
		rest = origin + 8;
	else
		return 0;
	return !strcasecmp(rest, host);
}

static int role_check(const struct auth_who *who, enum auth_need need)
{
	const char *r = who->role;

	switch (need) {
	case AUTH_READ:
	case AUTH_ANY:
		return 0;
	case AUTH_SUBMIT:
		if (!strcmp(r, "admin") || !strcmp(r, "submit"))
			return 0;
		err_set(ERR_INVALID, "submitting and cancelling jobs needs a token of role admin or submit; "
			"this one is role %s", r);
		return 403;
	case AUTH_ADMIN:
		if (!strcmp(r, "admin"))
			return 0;
		err_set(ERR_INVALID, "managing tokens needs a token of role admin; this one is role %s", r);
		return 403;
	case AUTH_AGENT:
		if (!strcmp(r, "agent") && who->agent[0])
			return 0;
		if (!strcmp(r, "agent"))
			err_set(ERR_INVALID, "this is an enrolment token (role agent, bound to no agent): it can only "
				"enrol an agent (POST /api/v1/agents/enrol), whose own token then does the rest");
		else
			err_set(ERR_INVALID, "agents' calls need the agent's own token (role agent, from "
				"enrolment); this one is role %s", r);
		return 403;
	case AUTH_ENROL:
		if (!strcmp(r, "admin") || (!strcmp(r, "agent") && !who->agent[0]))
			return 0;
		err_set(ERR_INVALID, "enrolling an agent needs an enrolment token (bisectctl token create --role "
			"agent) or an admin token; this one is %s%s%s", r, who->agent[0] ? " bound to " : "",
			who->agent);
		return 403;
	}
	return 403;
}

/* Looks the token up and checks its hash; 0 with *who filled, or 401 with the message set. Under a->lock. */
static int verify(struct auth_who *who, struct auth *a, const char *tok)
{
	char prefix[TOKEN_PREFIX_LEN + 1], hash[TOKEN_HASH_LEN + 1];
	struct token t;
	int found, rc;

	if (token_parse(prefix, tok)) {
		err_set(ERR_INVALID, "the bearer token is malformed: %s", err_msg());
		return 401;
	}
	rc = store_token_by_prefix(&t, a->st, prefix);
	if (rc && rc != ERR_NOTFOUND)
		return 500;
	found = rc == 0;
	/* Hash and compare either way, so an unknown prefix takes the time a wrong secret does. */
	if (token_hash(hash, a->key, sizeof(a->key), tok)) {
		store_token_release(&t);
		return 500;
	}
	if (!token_equal(hash, found ? t.hash : "0000000000000000000000000000000000000000000000000000000000000000",
			 TOKEN_HASH_LEN) || !found) {
		store_token_release(&t);
		err_set(ERR_INVALID, "unknown token (bd_%s_...): ask an admin for one (bisectctl token create)",
			prefix);
		return 401;
	}
	if (t.revoked) {
		store_token_release(&t);
		err_set(ERR_INVALID, "token bd_%s_... was revoked: ask an admin for a new one", prefix);
		return 401;
	}
	who->id = t.id;
	snprintf(who->role, sizeof(who->role), "%s", t.role);
	snprintf(who->agent, sizeof(who->agent), "%s", t.agent ? t.agent : "");
	who->last_used = t.last_used;
	store_token_release(&t);
	return 0;
}

int auth_check(struct auth_who *who, int *retry_after, struct auth *a, const struct http_request *r,
	       enum auth_need need)
{
	int write = strcmp(r->method, "GET") && strcmp(r->method, "HEAD");
	const char *origin, *hdr;
	char addr[64];
	long long now = (long long)now_unix();
	int status, wait;

	memset(who, 0, sizeof(*who));
	*retry_after = 0;
	if (write) {
		origin = http_header(r, "Origin");
		if (origin && !is_own_origin(origin, http_header(r, "Host"))) {
			err_set(ERR_INVALID, "a write from another site (Origin %.100s) is refused", origin);
			return 403;
		}
		if (!is_json_type(http_header(r, "Content-Type"))) {
			err_set(ERR_INVALID, "a POST needs Content-Type: application/json");
			return 415;
		}
	}
	if (!a || a->conf->auth.none) {
		who->open = 1;
		return 0;
	}
	if (need == AUTH_READ && a->conf->auth.read_open)
		return 0;
	http_peer(r, addr, sizeof(addr));
	pthread_mutex_lock(&a->lock);
	if ((wait = blocked_for(a, addr, now)) > 0) {
		pthread_mutex_unlock(&a->lock);
		*retry_after = wait;
		err_set(ERR_BUSY, "too many failed authentications from %s: try again in %d s", addr, wait);
		return 429;
	}
	hdr = http_header(r, "Authorization");
	if (!hdr) {
		pthread_mutex_unlock(&a->lock);
		err_set(ERR_INVALID, "this needs a token: send Authorization: Bearer TOKEN (bisectctl: "
			"BISECTD_TOKEN or --token-file; see docs/API.md, Authentication)");
		return 401;
	}
	if (strncasecmp(hdr, "Bearer ", 7)) {
		status = 401;
		err_set(ERR_INVALID, "Authorization must be Bearer TOKEN");
	} else {
		for (hdr += 7; *hdr == ' '; hdr++)
			;
		status = verify(who, a, hdr);
	}
	if (status == 401)
		count_failure(a, addr, now);
	pthread_mutex_unlock(&a->lock);
	if (status)
		return status;
	return role_check(who, need);
}

int auth_as_agent(const struct auth_who *who, const char *name)
{
	if (who->open || !strcmp(who->agent, name))
		return 0;
	err_set(ERR_INVALID, "this token is agent %s's: it cannot act as agent %.64s", who->agent, name);
	return 403;
}

int auth_for_task(struct auth *a, const struct auth_who *who, const char *name, long long task,
		  long long attempt)
{
	char *holder = NULL;
	long long current;
	int rc, status = 0;

	if (who->open)
		return 0;
	if ((rc = auth_as_agent(who, name)))
		return rc;
	pthread_mutex_lock(&a->lock);
	rc = store_task_holder(&holder, &current, a->st, task);
	pthread_mutex_unlock(&a->lock);
	if (rc == 0 && holder && current == attempt && strcmp(holder, who->agent)) {
		err_set(ERR_INVALID, "task %lld attempt %lld is agent %s's lease, not %s's", task, attempt, holder,
			who->agent);
		status = 403;
	}
	free(holder);
	return status;
}

void auth_touch(struct auth *a, const struct auth_who *who)
{
	long long now = (long long)now_unix();

	if (!a || !who->id || now - who->last_used < TOUCH_EVERY_S)
		return;
	pthread_mutex_lock(&a->lock);
	if (store_token_used(a->st, who->id, now))
		log_warn("auth: recording the use of token %lld: %s", who->id, err_msg());
	pthread_mutex_unlock(&a->lock);
}

/* --- the token routes ------------------------------------------------------ */

static int need_store(struct auth *a)
{
	if (!a || !a->st)
		return err_set(ERR_CONFLICT, "the config says auth: none: tokens are not used");
	return 0;
}

static json_t *token_doc(const struct token *t)
{
	json_t *j = json_pack("{s:I, s:s, s:s, s:I}", "id", (json_int_t)t->id, "prefix", t->prefix, "role", t->role,
			      "created", (json_int_t)t->created);

	json_object_set_new(j, "agent", t->agent ? json_string(t->agent) : json_null());
	json_object_set_new(j, "note", t->note ? json_string(t->note) : json_null());
	json_object_set_new(j, "last_used", t->last_used ? json_integer(t->last_used) : json_null());
	json_object_set_new(j, "revoked", t->revoked ? json_integer(t->revoked) : json_null());
	return j;
}

static int only_keys(json_t *body, const char *const *allowed, const char *expected)
{
	const char *key;
	json_t *v;

	json_object_foreach(body, key, v) {
		const char *const *k;

		for (k = allowed; *k && strcmp(*k, key); k++)
			;
		if (!*k)
			return err_set(ERR_INVALID, "unknown field '%.64s' (expected: %s)", key, expected);
	}
	return 0;
}

/* Makes the token and its reply (the token itself in "token", shown this once). Under a->lock. */
static int create(struct auth *a, json_t **reply, const char *role, const char *agent, const char *note)
{
	char tok[TOKEN_LEN + 1], prefix[sizeof(((struct token *)0)->prefix)];
	struct token t;
	int rc = make_token(&t, tok, a, role, agent, note);

	if (rc)
		return rc;
	memcpy(prefix, t.prefix, sizeof(prefix));
	if ((rc = store_token_by_prefix(&t, a->st, prefix)))
		return rc;
	*reply = token_doc(&t);
	json_object_set_new(*reply, "token", json_string(tok));
	store_token_release(&t);
	return 0;
}

int auth_token_create(json_t **reply, struct auth *a, json_t *body)
{
	static const char *const keys[] = { "role", "agent", "note", NULL };
	const char *role, *agent, *note;
	int rc;

	*reply = NULL;
	if ((rc = need_store(a)) || (rc = only_keys(body, keys, "role, agent, note")) ||
	    (rc = jsonx_str(&role, body, "role", 8, 1, NULL)) ||
	    (rc = jsonx_str(&agent, body, "agent", 64, 0, NULL)) ||
	    (rc = jsonx_str(&note, body, "note", NOTE_MAX, 0, NULL)))
		return rc;
	if (strcmp(role, "admin") && strcmp(role, "submit") && strcmp(role, "agent"))
		return err_set(ERR_INVALID, "'role' must be admin, submit or agent, not '%s'", role);
	if (agent && strcmp(role, "agent"))
		return err_set(ERR_INVALID, "'agent' binds an agent token to a name: only with role agent");
	if (agent && !is_valid_name(agent))
		return err_set(ERR_INVALID, "'agent' must be 1-64 of [A-Za-z0-9._-]");
	pthread_mutex_lock(&a->lock);
	rc = create(a, reply, role, agent, note);
	pthread_mutex_unlock(&a->lock);
	if (rc == 0)
		log_info("auth: made token %s (role %s%s%s)", json_string_value(json_object_get(*reply, "prefix")), role,
			 agent ? ", agent " : "", agent ? agent : "");
	return rc;
}

int auth_enrol(json_t **reply, struct auth *a, json_t *body)
{
	static const char *const keys[] = { "name", NULL };
	const char *name;
	long long n;
	int rc;

	*reply = NULL;
	if ((rc = need_store(a)) || (rc = only_keys(body, keys, "name")) || (rc = jsonx_str(&name, body, "name", 64, 1, NULL)))
		return rc;
	if (!is_valid_name(name))
		return err_set(ERR_INVALID, "'name' must be 1-64 of [A-Za-z0-9._-]");
	pthread_mutex_lock(&a->lock);
	rc = store_tokens_live(&n, a->st, "agent", name);
	if (rc == 0 && n > 0)
		rc = err_set(ERR_CONFLICT, "agent %s has a token already: an agent enrols once (an admin revokes "
			     "its token first to enrol it again: bisectctl token list, token revoke ID)", name);
	if (rc == 0)
		rc = create(a, reply, "agent", name, "enrolled");
	pthread_mutex_unlock(&a->lock);
	if (rc == 0)
		log_info("auth: agent %s enrolled (token %s)", name,
			 json_string_value(json_object_get(*reply, "prefix")));
	return rc;
}

int auth_token_list(json_t **reply, struct auth *a)
{
	struct token *t = NULL;
	json_t *arr;
	size_t n = 0;
	int rc;

	*reply = NULL;
	if ((rc = need_store(a)))
		return rc;
	pthread_mutex_lock(&a->lock);
	rc = store_tokens_list(&t, &n, a->st);
	pthread_mutex_unlock(&a->lock);
	if (rc)
		return rc;
	arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, token_doc(&t[i]));
	store_tokens_free(t, n);
	*reply = json_pack("{s:o}", "tokens", arr);
	return 0;
}

int auth_token_revoke(json_t **reply, struct auth *a, long long id)
{
	long long now = (long long)now_unix();
	int rc;

	*reply = NULL;
	if ((rc = need_store(a)))
		return rc;
	pthread_mutex_lock(&a->lock);
	rc = store_token_revoke(a->st, id, now);
	pthread_mutex_unlock(&a->lock);
	if (rc)
		return rc;
	log_info("auth: token %lld revoked", id);
	*reply = json_pack("{s:I, s:I}", "id", (json_int_t)id, "revoked", (json_int_t)now);
	return 0;
}
