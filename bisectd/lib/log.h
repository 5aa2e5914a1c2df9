/*
 * log: leveled logging to stderr (or a file), one line per message with a
 * UTC timestamp and the program's name. Safe to call from any thread.
 */
#ifndef BISECT_LOG_H
#define BISECT_LOG_H

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

void log_init(const char *progname, enum log_level level);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parses "debug", "info", "warn", "error"; -1 when unknown. */
int log_level_parse(const char *s);

#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)

/* Prints "prog: message" to stderr and exits 2; start-up paths in main() only. */
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
