/*
 * boot: the methods that get a built commit running before its workload,
 * chosen by the "boot" of the task's workload definition. Only "none" so
 * far: the build output runs on the agent itself.
 */
#include <string.h>

#include "boot.h"

static int boot_none(json_t *def, const char *srcdir)
{
	(void)def;
	(void)srcdir;
	return 0;
}

static const struct boot_ops boots[] = {
	{ "none", boot_none, NULL },
};

const struct boot_ops *boot_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(boots) / sizeof(boots[0]); i++)
		if (!strcmp(boots[i].name, name))
			return &boots[i];
	return NULL;
}
