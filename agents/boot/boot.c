/*
 * boot: the table of boot methods.
 */
#include <stdlib.h>
#include <string.h>

#include "boot.h"

extern const struct boot_ops boot_none, boot_qemu;

/* One line per method: docs/EXTENDING.md. */
static const struct boot_ops *const boots[] = {
	&boot_none,
	&boot_qemu,
};

const struct boot_ops *boot_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(boots) / sizeof(boots[0]); i++)
		if (!strcmp(boots[i]->name, name))
			return boots[i];
	return NULL;
}

void boot_result_release(struct boot_result *r)
{
	free(r->log_tail);
	free(r->console);
	memset(r, 0, sizeof(*r));
}
