/*
 * boot: how an agent gets a built commit running before the workload.
 * "none" runs the build output on the agent itself; "qemu", "kexec" and
 * "ssh" come later. Chosen by name from the task's workload definition.
 */
#ifndef AGENT_BOOT_H
#define AGENT_BOOT_H

#include <jansson.h>

struct boot_ops {
	const char *name;
	/* Gets the built tree at srcdir ready to run; 0 or a code with a message. */
	int (*boot)(json_t *def, const char *srcdir);
	/* Undoes boot(); may be NULL. */
	void (*shutdown)(json_t *def, const char *srcdir);
};

const struct boot_ops *boot_find(const char *name);

#endif
