/*
 * trace: recorded lab noise for the simulator to replay. A trace is what
 * one real lab measured for one binary, run after run, on each of its
 * agents: its bursts, its autocorrelation and its agents' offsets are kept
 * by replaying it in time order (sim.c's `trace:NAME` noise).
 *
 * The file (tests/bench/traces/NAME.trace, written by record-noise.sh) is
 * text: '#' comment lines (`# condition: bursts`, `# workload: ...`,
 * `# host: ...`), blank lines, and one line per run:
 *
 *   t_ms agent task run value
 *
 * t_ms: milliseconds since the start at the run's end (float, >= 0);
 * agent: 0-based; task: an id unique in the trace, numbered in the order
 * tasks started (so two agents' lines interleave, but an agent's tasks
 * come back to back, each larger than the one before; the runs of one
 * task share its level); run: the index within its task, from 0,
 * increasing (a failed run is left out); value: the metric, higher is
 * better, > 0.
 */
#ifndef BENCH_TRACE_H
#define BENCH_TRACE_H

#include <stdio.h>

struct trace {
	char *name;          /* the file's name without directory and .trace */
	char *condition;     /* "# condition:" line's value, NULL when none */
	int nr_agents;       /* 1 + the largest agent id */
	int *n;              /* n[a]: runs of agent a (0 for an id never used) */
	double **t;          /* t[a][0..n[a]): agent a's run times in ms, ascending */
	double **v;          /* v[a][0..n[a]): its values over the trace's median, in time order */
	long nr_runs, nr_tasks;
	double median;       /* of all values */
	double duration;     /* largest t_ms */
	/*
	 * The noise one task shows: the sd of ln(value) of a run taken at a
	 * random time in a random task, every level (lab, agent, task) in
	 * it; the between-task part from the task means (their variance less
	 * what their own runs' noise explains), the within-task part pooled
	 * from the tasks of two runs or more. The benchmark judges a trace's
	 * cases by change / task_noise.
	 */
	double task_noise;
	double run_noise;    /* the pooled within-task sd of ln(value); 0 without a task of 2 runs */
};

/*
 * Reads a trace from f; `name` is the file's path, for messages and for
 * the trace's name. ERR_INVALID with "path:line: what" for a malformed
 * line or a trace without runs. Caller frees with trace_free().
 */
int trace_read(struct trace **out, FILE *f, const char *name);
/* The same from a file; ERR_NOTFOUND when it cannot be opened. */
int trace_load(struct trace **out, const char *path);
void trace_free(struct trace *tr);

/*
 * The paths of every *.trace file in dir, sorted by name, into *out
 * (NULL-terminated, caller frees each and the array); returns how many,
 * 0 when the directory does not exist, < 0 when it cannot be read.
 */
int trace_list(char ***out, const char *dir);

#endif
