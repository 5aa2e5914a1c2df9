/*
 * methods: the table of boot methods. It is in the library, so that the
 * coordinator knows each method's name and the workloads it runs without
 * linking the agent's code: each method's ops (boot_NAME in
 * agents/boot/NAME.c) are weak references here, NULL in bisectd and the
 * method's own in bisect-agent.
 */
#include <string.h>

#include "methods.h"
#include "workload.h"

/* One line per method: its name (its file, and boot_NAME in it) and the workloads it runs. */
#define BOOT_METHODS(X)                 \
	X(none, WORKLOAD_HOST)          \
	X(qemu, WORKLOAD_GUEST)         \
	X(kexec, WORKLOAD_HOST | BOOT_KERNEL) \
	X(ssh, WORKLOAD_HOST | WORKLOAD_GUEST | BOOT_KERNEL)

#define DECLARE(name, places) extern const struct boot_ops boot_##name __attribute__((weak));
BOOT_METHODS(DECLARE)

#define ENTRY(name, places) { #name, places, &boot_##name },
static const struct boot_method methods[] = { BOOT_METHODS(ENTRY) };

const struct boot_method *boot_method_find(const char *name)
{
	for (size_t i = 0; name && i < sizeof(methods) / sizeof(methods[0]); i++)
		if (!strcmp(methods[i].name, name))
			return &methods[i];
	return NULL;
}

/* The methods that record profiles, and whose perf records them: one a line. */
static const struct {
	const char *name;
	int perf;
} profiling[] = {
	{ "none", BOOT_PROFILE_AGENT },
	{ "qemu", BOOT_PROFILE_AGENT },   /* the agent's perf goes into the guest */
	{ "ssh", BOOT_PROFILE_DEVICE },   /* tools_dir/perf on the device */
	{ "kexec", BOOT_PROFILE_AGENT },  /* the agent's perf, in the built kernel it kexec'd into */
};

/* The table's names, for the messages that refuse a profile task. */
const char boot_profile_methods[] = "none, qemu, kexec and ssh";

int boot_method_profiles(const char *name)
{
	for (size_t i = 0; name && i < sizeof(profiling) / sizeof(profiling[0]); i++)
		if (!strcmp(profiling[i].name, name))
			return profiling[i].perf;
	return 0;
}

const struct boot_method *boot_methods(size_t *n)
{
	*n = sizeof(methods) / sizeof(methods[0]);
	return methods;
}
