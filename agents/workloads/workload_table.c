/*
 * workload_table: the table of workload kinds, chosen by name. Each kind
 * is a file of its own (command.c, iperf3.c, ...) and one line here.
 */
#include <string.h>

#include "workload.h"

extern const struct workload_ops workload_command, workload_iperf3, workload_pktgen;
extern const struct workload_ops workload_trex, workload_xdp;

/* One line per kind: docs/EXTENDING.md. */
static const struct workload_ops *const workloads[] = {
	&workload_command,
	&workload_iperf3,
	&workload_pktgen,
	&workload_trex,
	&workload_xdp,
};

#define NR_WORKLOADS (sizeof(workloads) / sizeof(workloads[0]))

const struct workload_ops *workload_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < NR_WORKLOADS; i++)
		if (!strcmp(workloads[i]->name, name))
			return workloads[i];
	return NULL;
}

const struct workload_ops *const *workload_all(size_t *n)
{
	*n = NR_WORKLOADS;
	return workloads;
}
