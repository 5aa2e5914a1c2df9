/*
 * http_wait: wait queues and the parking lot (http_wait.h). One mutex
 * guards every queue, the deadline heap and the waiters' links, so that
 * a wake and a deadline cannot both fire one parking; fire() runs after
 * the mutex is let go (it takes libmicrohttpd's locks).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "http_wait.h"
#include "util.h"

struct http_waitq {
	unsigned long gen;
	struct http_waiter *head, *tail;   /* newest first: the tail has waited longest */
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cond;         /* the deadline thread: a new earliest deadline, or quit */
	struct http_waiter **heap;   /* by until, earliest first */
	size_t nr, alloc;
	int users;                   /* servers started */
	int stopping;
	int quit;
	pthread_t timer;
	int cond_ready;
} lot = { .mu = PTHREAD_MUTEX_INITIALIZER };

struct http_waitq *http_waitq_new(void)
{
	return xcalloc(1, sizeof(struct http_waitq));
}

void http_waitq_free(struct http_waitq *q)
{
	free(q);
}

unsigned long http_waitq_gen(struct http_waitq *q)
{
	unsigned long g;

	pthread_mutex_lock(&lot.mu);
	g = q->gen;
	pthread_mutex_unlock(&lot.mu);
	return g;
}

/* --- the deadline heap (lot.mu held) --- */

static void heap_set(size_t i, struct http_waiter *w)
{
	lot.heap[i] = w;
	w->slot = i;
}

static void heap_up(size_t i)
{
	struct http_waiter *w = lot.heap[i];

	while (i > 0 && lot.heap[(i - 1) / 2]->until > w->until) {
		heap_set(i, lot.heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_set(i, w);
}

static void heap_down(size_t i)
{
	struct http_waiter *w = lot.heap[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= lot.nr)
			break;
		if (c + 1 < lot.nr && lot.heap[c + 1]->until < lot.heap[c]->until)
			c++;
		if (lot.heap[c]->until >= w->until)
			break;
		heap_set(i, lot.heap[c]);
		i = c;
	}
	heap_set(i, w);
}

static void heap_del(struct http_waiter *w)
{
	size_t i = w->slot;
	struct http_waiter *last = lot.heap[--lot.nr];

	if (last == w)
		return;
	heap_set(i, last);
	if (i > 0 && lot.heap[(i - 1) / 2]->until > last->until)
		heap_up(i);
	else
		heap_down(i);
}

/* Takes w out of its queue and the heap; it is fired by the caller (lot.mu held). */
static void unpark(struct http_waiter *w)
{
	if (w->q) {
		if (w->prev)
			w->prev->next = w->next;
		else
			w->q->head = w->next;
		if (w->next)
			w->next->prev = w->prev;
		else
			w->q->tail = w->prev;
	}
	heap_del(w);
	w->q = NULL;
	w->prev = w->next = NULL;
	w->parked = 0;
}

/* Fires a list linked through next (taken out of the lot). */
static void fire_list(struct http_waiter *list)
{
	while (list) {
		struct http_waiter *w = list;

		list = w->next;
		w->next = NULL;
		w->fire(w);
	}
}

void http_wake(struct http_waitq *q)
{
	struct http_waiter *list = NULL;

	pthread_mutex_lock(&lot.mu);
	q->gen++;
	while (q->head) {
		struct http_waiter *w = q->head;

		unpark(w);
		w->next = list;
		list = w;
	}
	pthread_mutex_unlock(&lot.mu);
	fire_list(list);
}

/* Takes out at most n of q's waiters want() takes, the longest parked first, as a list in that order. */
static struct http_waiter *take_some(struct http_waitq *q, size_t n, int (*want)(const void *tag, const void *arg),
				     const void *arg)
{
	struct http_waiter *list = NULL, **end = &list, *w, *prev;

	pthread_mutex_lock(&lot.mu);
	q->gen++;
	for (w = q->tail; w && n > 0; w = prev) {
		prev = w->prev;
		if (want && !want(w->tag, arg))
			continue;
		unpark(w);
		*end = w;
		end = &w->next;
		n--;
	}
	pthread_mutex_unlock(&lot.mu);
	return list;
}

void http_wake_some(struct http_waitq *q, size_t n, int (*want)(const void *tag, const void *arg),
		    const void *arg)
{
	fire_list(take_some(q, n, want, arg));  /* fired in the order they parked */
}

size_t http_take_some(struct http_waiter **out, struct http_waitq *q, size_t n,
		      int (*want)(const void *tag, const void *arg), const void *arg)
{
	struct http_waiter *w = take_some(q, n, want, arg);
	size_t k = 0;

	while (w) {
		out[k++] = w;
		w = w->next;
		out[k - 1]->next = NULL;
	}
	return k;
}

void *http_waiter_tag(struct http_waiter *w)
{
	return w->tag;
}

void http_fire(struct http_waiter *w)
{
	w->fire(w);
}

void http_park(struct http_waiter *w, const struct http_wait *wait)
{
	int now;

	pthread_mutex_lock(&lot.mu);
	now = lot.stopping || (wait->queue && wait->queue->gen != wait->seen) || wait->until <= now_ms();
	if (!now) {
		w->until = wait->until;
		w->tag = wait->tag;
		w->q = wait->queue;
		w->prev = NULL;
		w->next = NULL;
		if (w->q) {
			w->next = w->q->head;
			if (w->next)
				w->next->prev = w;
			else
				w->q->tail = w;
			w->q->head = w;
		}
		lot.heap = xgrow(lot.heap, lot.nr, &lot.alloc, sizeof(*lot.heap));
		heap_set(lot.nr++, w);
		heap_up(lot.nr - 1);
		w->parked = 1;
		if (lot.heap[0] == w && lot.cond_ready)
			pthread_cond_signal(&lot.cond);
	}
	pthread_mutex_unlock(&lot.mu);
	if (now)
		w->fire(w);
}

static void *timer_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lot.mu);
	while (!lot.quit) {
		struct http_waiter *list = NULL;
		int64_t now = now_ms();

		while (lot.nr > 0 && lot.heap[0]->until <= now) {
			struct http_waiter *w = lot.heap[0];

			unpark(w);
			w->next = list;
			list = w;
		}
		if (list) {
			pthread_mutex_unlock(&lot.mu);
			fire_list(list);
			pthread_mutex_lock(&lot.mu);
			continue;
		}
		if (lot.nr == 0) {
			pthread_cond_wait(&lot.cond, &lot.mu);
		} else {
			int64_t until = lot.heap[0]->until;
			struct timespec ts = { (time_t)(until / 1000), (long)(until % 1000) * 1000000L };

			pthread_cond_timedwait(&lot.cond, &lot.mu, &ts);
		}
	}
	pthread_mutex_unlock(&lot.mu);
	return NULL;
}

int http_park_start(void)
{
	int rc = 0;

	pthread_mutex_lock(&lot.mu);
	if (!lot.cond_ready) {
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);  /* now_ms()'s clock */
		pthread_cond_init(&lot.cond, &ca);
		pthread_condattr_destroy(&ca);
		lot.cond_ready = 1;
	}
	if (lot.users == 0) {
		lot.quit = 0;
		lot.stopping = 0;
		if ((errno = pthread_create(&lot.timer, NULL, timer_main, NULL)))
			rc = err_set(ERR_FAIL, "cannot start the long polls' timer thread: %s", strerror(errno));
	}
	if (rc == 0)
		lot.users++;
	pthread_mutex_unlock(&lot.mu);
	return rc;
}

void http_park_stop(void)
{
	struct http_waiter *list = NULL;

	pthread_mutex_lock(&lot.mu);
	lot.stopping = 1;
	while (lot.nr > 0) {
		struct http_waiter *w = lot.heap[0];

		unpark(w);
		w->next = list;
		list = w;
	}
	pthread_mutex_unlock(&lot.mu);
	fire_list(list);
}

void http_park_end(void)
{
	int join = 0;

	pthread_mutex_lock(&lot.mu);
	if (lot.users > 0 && --lot.users == 0) {
		lot.quit = 1;
		pthread_cond_signal(&lot.cond);
		join = 1;
	}
	pthread_mutex_unlock(&lot.mu);
	if (join) {
		pthread_join(lot.timer, NULL);
		pthread_mutex_lock(&lot.mu);
		lot.stopping = 0;
		pthread_mutex_unlock(&lot.mu);
	}
}

int http_park_stopping(void)
{
	int s;

	pthread_mutex_lock(&lot.mu);
	s = lot.stopping;
	pthread_mutex_unlock(&lot.mu);
	return s;
}

size_t http_park_count(void)
{
	size_t n;

	pthread_mutex_lock(&lot.mu);
	n = lot.nr;
	pthread_mutex_unlock(&lot.mu);
	return n;
}
