/*
 * api_req: request bodies validated into the coordinator's structs
 * (coord.h) at the API's edge: unknown fields, types, bounds and syntax,
 * with the messages docs/API.md promises. What needs the configuration or the
 * store is the coordinator's to check.
 *
 * Each returns 0, or ERR_INVALID with the message set. The structs'
 * strings are borrowed from body, which must outlive them.
 */
#ifndef BISECT_API_REQ_H
#define BISECT_API_REQ_H

#include <jansson.h>

#include "coord.h"

int api_req_job(struct job_request *out, json_t *body);
/* POST /jobs/{id}/resume: more_runs and more_seconds, 0 where not given. */
int api_req_resume(long long *more_runs, long long *more_seconds, json_t *body);
int api_req_register(struct register_request *out, json_t *body);
int api_req_heartbeat(struct heartbeat_request *out, json_t *body);
/* out->samples is owned: result_request_release(), also after a failure. */
int api_req_result(struct result_request *out, json_t *body);

#endif
