/*
 * events: GET /api/v1/events, the dashboard's live feed as server-sent
 * events. Each stream first sends a snapshot of the agents and jobs (and
 * of one job when asked), then only what changed, woken by the
 * coordinator's changes and rechecked every few seconds. The number of
 * streams is bounded; past it the API answers 503 and the page polls.
 */
#ifndef BISECT_EVENTS_H
#define BISECT_EVENTS_H

#include "coord.h"
#include "http.h"

/* At most this many event streams at once. */
#define EVENTS_MAX_STREAMS 16

/*
 * Makes res a stream of events about the coordinator s (and job, when
 * > 0; its job page). ERR_BUSY when EVENTS_MAX_STREAMS are open, ERR_FAIL
 * once events_shutdown() was called.
 */
int events_open(struct http_response *res, struct coord *s, long long job);

/* Ends every stream of s (at shutdown, before http_stop()); new ones are refused. */
void events_shutdown(struct coord *s);

/* How many streams are open now. */
int events_nr_streams(void);

#endif
