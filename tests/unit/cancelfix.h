/* cancelfix.h: a task's cancel set from another thread, as the agent's heartbeat sets it (header only). */
#ifndef BISECT_TEST_CANCELFIX_H
#define BISECT_TEST_CANCELFIX_H

#include <unistd.h>

/* A thread's body: sets the int at arg (atomically) 0.3 s after it starts. */
static inline void *cancel_later(void *arg)
{
	usleep(300 * 1000);
	__atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);
	return NULL;
}

#endif
