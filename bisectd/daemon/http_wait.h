/*
 * http_wait: the parking lot behind http.h's wait queues, without
 * libmicrohttpd: a waiter is parked on a queue and a deadline, and fired
 * (once) by a wake of the queue, by the deadline (a timer thread), or
 * when the lot stops. http.c's fire resumes a suspended connection.
 */
#ifndef BISECT_HTTP_WAIT_H
#define BISECT_HTTP_WAIT_H

#include <stddef.h>
#include <stdint.h>

#include "http.h"

struct http_waiter {
	/* Called once per parking, on the waking thread, outside every lock of the lot. */
	void (*fire)(struct http_waiter *w);
	/* The lot's: */
	struct http_waitq *q;
	struct http_waiter *prev, *next;
	int64_t until;
	void *tag;                   /* http_wait.tag */
	size_t slot;                 /* in the deadline heap */
	int parked;
};

/*
 * Parks w until a wake of wait->queue or wait->until; fires it at once
 * when the queue was woken since wait->seen, the deadline is past, or
 * the lot is stopping. w must not be parked already.
 */
void http_park(struct http_waiter *w, const struct http_wait *wait);

/* Starts the deadline thread (counted: one per server). ERR_FAIL when it cannot. */
int http_park_start(void);
/*
 * Fires every parked waiter and makes http_park fire at once, until the
 * last http_park_end(). The lot is the process's: this stops parking for
 * every server (bisectd runs one).
 */
void http_park_stop(void);
/* After http_park_stop(): ends the deadline thread when the last server is gone. */
void http_park_end(void);
/* 1 between http_park_stop() and the last http_park_end(). */
int http_park_stopping(void);
/* How many waiters are parked now (for the log and the tests). */
size_t http_park_count(void);

#endif
