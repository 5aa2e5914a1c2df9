/*
 * boot-task: one task's boot through a boot method, as the agent runs it
 * (agents/agent_run.c's run_task() without the coordinator, the checkout and
 * the build), for tests/t0103-ssh.sh:
 *
 *   boot-task BISECTD.yaml WORKLOAD SRCDIR WORKDIR RUNS [APPEND]
 *
 * The workload's definition is the one bisectd sends (conf_workload_def()
 * of the loaded config, APPEND as the job's variant), checked again as the
 * agent does; SRCDIR is the build output. Prints key=value lines: status,
 * error, then "run I value=V unit=U error=E" per run, then the console's
 * tail as "# " lines. Exit 0 when the task would be uploaded as ok, 2 for
 * skipped or failed, 1 for a usage or config error.
 *
 * BOOT_TASK_PROFILE=FILE makes it a profile task (boot_task.perf_data
 * FILE): after the runs, the method's report (its report op, or what
 * start() brought) parsed by bisectd's parser, as "profile=ok symbols=N
 * samples=S event=E" and its first rows as "# profile: " lines, or
 * "profile=failed error=..." (exit 2).
 *
 * BOOT_TASK_CANCEL_AFTER=MS sets the task's cancel (boot_task.cancel)
 * MS milliseconds after the start, from another thread, as the agent's
 * heartbeat does when the coordinator cancels the task.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot.h"
#include "conf.h"
#include "err.h"
#include "methods.h"
#include "perfreport.h"
#include "util.h"
#include "workload.h"

static int cancel;

static void *cancel_later(void *arg)
{
	usleep((useconds_t)(long)arg * 1000);
	__atomic_store_n(&cancel, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void print_lines(const char *prefix, const char *s)
{
	char *copy = xstrdup(s ? s : ""), *save = NULL;

	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		printf("%s%s\n", prefix, l);
	free(copy);
}

/* A profile task's report, as the agent takes it (agents/agent_run.c's run_task()): 0 when parsed, 2 when not. */
static int profile(const struct boot_ops *boot, void *session, const struct boot_task *bt, const struct boot_result *br)
{
	struct perf_profile p = PERF_PROFILE_INIT;
	char *text = NULL;
	int rc = boot_profile_text(&text, boot, session, bt, br);

	if (rc == 1) {
		printf("profile=failed\nerror=boot %s has no report of its own (the agent reports %s here)\n",
		       boot->name, bt->perf_data);
		return 2;
	}
	if (rc < 0) {
		printf("profile=failed\nerror=%s\n", err_msg());
		return 2;
	}
	rc = 2;
	if (perfreport_parse(&p, text, strlen(text)) < 0) {
		printf("profile=failed\nerror=%s\n", err_msg());
	} else {
		printf("profile=ok symbols=%zu samples=%lld event=%s\n", p.n, p.samples, p.event);
		for (size_t i = 0; i < p.n && i < 15; i++)
			printf("# profile: %6.2f%% [%c] %s\n", p.syms[i].share, p.syms[i].level, p.syms[i].name);
		rc = 0;
	}
	perfreport_release(&p);
	free(text);
	return rc;
}

int main(int argc, char **argv)
{
	struct conf_bisectd c;
	const struct conf_workload *w;
	const struct workload_ops *wl;
	const struct boot_ops *boot;
	struct boot_result br = { 0 };
	struct boot_task bt;
	void *session = NULL;
	json_t *def;
	int rc = 2, runs;

	if (argc < 6) {
		fprintf(stderr, "usage: boot-task BISECTD.yaml WORKLOAD SRCDIR WORKDIR RUNS [APPEND]\n");
		return 1;
	}
	if (conf_bisectd_load(&c, argv[1]) < 0) {
		fprintf(stderr, "boot-task: %s\n", err_msg());
		return 1;
	}
	if (!(w = conf_workload_find(&c, argv[2]))) {
		fprintf(stderr, "boot-task: no workload '%s'\n", argv[2]);
		conf_bisectd_release(&c);
		return 1;
	}
	def = conf_workload_def(w, argc > 6 ? argv[6] : NULL);
	wl = workload_find(w->type);
	boot = boot_find(w->boot);
	runs = atoi(argv[5]);
	bt = (struct boot_task){ def, wl, argv[3], argv[4], runs, -1, getenv("BOOT_TASK_PROFILE"), NULL, &cancel };
	if (getenv("BOOT_TASK_CANCEL_AFTER")) {
		pthread_t th;

		if (pthread_create(&th, NULL, cancel_later, (void *)atol(getenv("BOOT_TASK_CANCEL_AFTER"))) == 0)
			pthread_detach(th);
	}
	if (!wl || !boot || !(wl->places & boot_method_find(w->boot)->places)) {
		printf("status=failed\nerror=boot %s does not run type %s\n", w->boot, w->type);
		goto out;
	}
	if (workload_check_msg(wl, def) < 0 || (boot->prepare && boot->prepare(&bt) < 0)) {
		printf("status=failed\nerror=%s\n", err_msg());
		goto out;
	}
	if (boot->start(&session, &br, &bt) < 0) {
		printf("status=%s\n", br.status ? br.status : "failed");
		print_lines("error=", br.error);
		print_lines("# ", br.log_tail);
		goto out;
	}
	printf("status=ok\n");
	for (int i = 1; i <= runs; i++) {
		struct run_sample s;

		if (boot->run(&s, session, &bt, i) < 0) {
			memset(&s, 0, sizeof(s));
			snprintf(s.error, sizeof(s.error), "%s", err_msg());
		}
		printf("run %d value=%g unit=%s error=%s\n", i, s.value, s.unit, s.error);
		json_decref(s.extra);
	}
	rc = 0;
	if (bt.perf_data)
		rc = profile(boot, session, &bt, &br);
	boot->stop(session, &bt);
out:
	boot_result_release(&br);
	json_decref(def);
	conf_bisectd_release(&c);
	fflush(stdout);
	return rc;
}
