/*
 * boot: a boot method's ops by name (the table is methods.c's).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot.h"
#include "err.h"
#include "methods.h"

const struct boot_ops *boot_find(const char *name)
{
	const struct boot_method *m = boot_method_find(name);

	return m ? m->ops : NULL;
}

void boot_result_release(struct boot_result *r)
{
	free(r->log_tail);
	free(r->console);
	free(r->profile);
	memset(r, 0, sizeof(*r));
}

int boot_fail(struct boot_result *r, const char *status, const char *fmt, ...)
{
	va_list ap;

	r->status = status;
	va_start(ap, fmt);
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	return ERR_FAIL;
}
