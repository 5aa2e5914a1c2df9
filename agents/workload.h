/*
 * workload: how an agent measures one run of a built commit. Adapters are
 * chosen by name from the task's workload definition (iperf3's struct
 * protocol habit).
 */
#ifndef AGENT_WORKLOAD_H
#define AGENT_WORKLOAD_H

#include <jansson.h>

struct run_env {
	const char *srcdir;     /* the checked-out, built work tree */
	int cpu;                /* pin to this CPU, -1 none */
};

struct sample {
	double value;           /* <= 0: the run failed */
	char unit[32];
	char error[256];        /* why it failed, "" when it did not */
	json_t *extra;          /* adapter-specific fields, may be NULL; owned */
};

struct workload_ops {
	const char *name;
	/* Checks the workload definition (the task's "workload" object) once per task. */
	int (*prepare)(json_t *def);
	/* One run into s; returns 0 when a sample (possibly a failed one) was produced. */
	int (*run)(struct sample *s, json_t *def, const struct run_env *env);
};

const struct workload_ops *workload_find(const char *name);

/*
 * Parses the first match of the extended regex pattern's first group in
 * text as a number. ERR_NOTFOUND when it does not match, ERR_INVALID when
 * the group is not a number or the pattern does not compile.
 */
int workload_metric_from_text(double *out, const char *text, const char *pattern);

#endif
