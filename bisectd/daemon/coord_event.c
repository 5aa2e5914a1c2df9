/*
 * coord_event: the coordinator's events: the log a job's page shows (job
 * 0: the coordinator's own), and the wake of the dashboard's streams when
 * anything they show changed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "coord_internal.h"
#include "err.h"
#include "http_wait.h"
#include "log.h"
#include "util.h"

int coord_event(struct coord *s, long long job, const char *kind, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int rc;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg)
		return err_set(ERR_FAIL, "out of memory");
	if (job > 0)
		log_info("job %lld: %s: %s", job, kind, msg);
	else
		log_info("%s: %s", kind, msg);
	rc = store_event_add(s->st, job, (long long)now_unix(), kind, msg);
	free(msg);
	coord_changed(s);  /* the dashboard's streams wake; they read after the lock is let go */
	return rc;
}

void coord_changed(struct coord *s)
{
	http_wake(s->changes);
}

struct http_waitq *coord_change_queue(struct coord *s)
{
	return s->changes;
}
