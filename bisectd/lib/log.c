/* log: leveled logging. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "log.h"

static const char *prog = "bisect";
static enum log_level min_level = LOG_INFO;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void log_init(const char *progname, enum log_level level)
{
	prog = progname;
	min_level = level;
}

int log_level_parse(const char *s)
{
	static const char *names[] = { "debug", "info", "warn", "error" };

	for (int i = 0; i < 4; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *tag[] = { "debug", "info", "warn", "error" };
	char ts[32];
	struct timeval tv;
	struct tm tm;
	va_list ap;

	if (level < min_level)
		return;
	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	pthread_mutex_lock(&log_lock);
	fprintf(stderr, "%s.%03dZ %s %s: ", ts, (int)(tv.tv_usec / 1000), prog, tag[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	pthread_mutex_unlock(&log_lock);
}

void fatal(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}
