/*
 * auth: who may call the API. Bearer tokens with roles (admin, submit,
 * agent) checked per route, agents bound to their names, the write
 * hygiene every POST needs (Content-Type: application/json, no foreign
 * Origin), failed authentications rate limited per client address, and
 * the routes that manage tokens (docs/API.md, "Authentication").
 *
 * auth has its own connection to the store (the coordinator's is under
 * its lock) and its own lock: every function here may be called from any
 * handler thread. The store keeps tokens hashed with a key of the server
 * (the secret file); a token is shown once, when it is made.
 */
#ifndef BISECT_AUTH_H
#define BISECT_AUTH_H

#include <jansson.h>

#include "conf.h"
#include "http.h"
#include "store.h"

struct auth;

/*
 * Opens the store at conf->database for tokens, reads the server's key
 * from the secret file (making one, mode 0600, when there is none) and,
 * when no live admin token exists, makes one and writes it to the admin
 * token file (mode 0600). With conf->auth.none nothing is read or made.
 * conf is borrowed and must outlive the auth.
 */
int auth_new(struct auth **out, const struct conf_bisectd *conf);
void auth_free(struct auth *a);

/* What a route needs of its caller. */
enum auth_need {
	AUTH_READ,      /* a GET: nothing when reads are open, else any valid token */
	AUTH_ANY,       /* any valid token */
	AUTH_SUBMIT,    /* admin or submit: jobs */
	AUTH_ADMIN,     /* admin: tokens */
	AUTH_AGENT,     /* an agent token bound to a name: register, heartbeat, claim, result */
	AUTH_ENROL,     /* an agent token bound to no name (an enrolment token), or admin */
};

/* Who made the request, once auth_check() passed it. */
struct auth_who {
	long long id;          /* the token's id; 0: none (open read, auth none) */
	char role[8];          /* "" when no token */
	char agent[72];        /* the bound agent's name; "" when none */
	int open;              /* 1: no checks apply (auth: none) */
	long long last_used;
};

/*
 * Checks a request against what its route needs: for a POST first the
 * client's failure count (429, *retry_after set), then Origin (403 when
 * it is not this server's), Content-Type (415), then the bearer token
 * (401 missing, malformed, unknown or revoked) and its role (403).
 * Returns 0 with *who filled, or the HTTP status with err_msg() saying
 * why and what to do. A token that fails counts against the address.
 */
int auth_check(struct auth_who *who, int *retry_after, struct auth *a, const struct http_request *r,
	       enum auth_need need);
/* 0 when who may act as agent name (register, heartbeat, claim), else 403 with the message set. */
int auth_as_agent(const struct auth_who *who, const char *name);
/*
 * 0 when who may upload attempt of task as agent name: who is that agent,
 * and the attempt is not another agent's current lease. Else 403 with the
 * message set. A task that does not exist or a stale attempt passes: the
 * coordinator answers those (404, 409).
 */
int auth_for_task(struct auth *a, const struct auth_who *who, const char *name, long long task,
		  long long attempt);
/* Records that who's token was used (at most once a minute per token). */
void auth_touch(struct auth *a, const struct auth_who *who);

/*
 * The token routes; replies are the caller's, errors are ERR_* codes
 * with the message set, the store unchanged.
 * POST /tokens {role, agent?, note?}: a new token, shown in the reply only.
 * GET /tokens: every token without its secret. POST /tokens/ID/revoke.
 * POST /agents/enrol {name}: a token bound to the agent's name;
 * ERR_CONFLICT when that name has a live agent token already.
 */
int auth_token_create(json_t **reply, struct auth *a, json_t *body);
int auth_token_list(json_t **reply, struct auth *a);
int auth_token_revoke(json_t **reply, struct auth *a, long long id);
int auth_enrol(json_t **reply, struct auth *a, json_t *body);

#endif
