/*
 * agent_run: one task in hand. Its claim parsed, the commit checked out and
 * built, booted and measured (perf profiles for a profile task), and its
 * result made and handed to the spool.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "agent_internal.h"
#include "boot.h"
#include "err.h"
#include "gitx.h"
#include "jsonx.h"
#include "log.h"
#include "methods.h"
#include "perfreport.h"
#include "run.h"
#include "taskwire.h"
#include "util.h"
#include "workload.h"
#include "worktree.h"

static json_t *sample_json(struct run_sample *s)
{
	json_t *j = json_pack("{s:f, s:o}", "value", s->value > 0 ? s->value : 0.0,
			      "unit", agent_text_json(s->unit, 0));

	if (s->value <= 0)
		json_object_set_new(j, "error", agent_text_json(s->error[0] ? s->error : "run failed", 0));
	if (json_is_object(s->extra))
		json_object_update_missing(j, s->extra);
	json_decref(s->extra);
	s->extra = NULL;
	return j;
}

/* Keeps what a boot method's console showed beside the build log. */
static void keep_console(struct agent *a, const struct task *t, const char *console)
{
	char *path;

	if (!console)
		return;
	path = xasprintf("%s/task-%lld-console.log", a->logs, t->id);
	if (file_write_atomic(path, console, strlen(console)) < 0)
		log_warn("task %lld: cannot keep the console log: %s", t->id, err_msg());
	free(path);
}

/*
 * A profile task (docs/REPORTS.md, "Profiles"): the boot method must record
 * its runs under perf, and perf must be here. *data: where the runs are
 * recorded, beside the build log (kept, for perf report by hand). -1 with
 * r failed when it cannot be done.
 */
static int profile_prepare(struct agent *a, const struct task *t, struct result *r, char **data)
{
	int perf = boot_method_profiles(t->boot);

	if (!perf) {
		agent_result_set(r, "failed", "boot %s cannot record perf profiles (boot %s can)", t->boot,
				 boot_profile_methods);
		return -1;
	}
	/* boot ssh: the device's perf records and reports (and says so when it is not there). */
	if (perf == BOOT_PROFILE_AGENT && !in_path("perf")) {
		agent_result_set(r, "failed", "perf not found in PATH on this agent: a profile task needs it "
				 "(Debian: linux-perf)");
		return -1;
	}
	*data = xasprintf("%s/task-%lld-%s.perf.data", a->logs, t->id, t->profile);
	/* Carried on after a kexec, the runs the journal holds were recorded in this boot before a restart. */
	if (!t->resumed)
		unlink(*data);
	return 0;
}

/* A perf report (len bytes) into r->profile, its head cut to what the coordinator takes; or r failed. */
static void profile_take(const struct task *t, struct result *r, const char *text, size_t len, const char *said)
{
	struct perf_profile p = PERF_PROFILE_INIT;

	/* The head: perf sorts the rows by share. */
	if (len > PERFREPORT_MAX_TEXT)
		len = PERFREPORT_MAX_TEXT;
	while (len > 0 && text[len - 1] != '\n')
		len--;
	if (perfreport_parse(&p, text, len) < 0) {
		agent_result_set(r, "failed", "perf recorded nothing to profile: %s%s%s", err_msg(),
				 said && *said ? "; perf said: " : "", said ? said : "");
		return;
	}
	log_info("task %lld: %s's profile, %zu symbols, %lld samples of %s", t->id, t->profile, p.n, p.samples,
		 p.event);
	r->profile = xstrndup(text, len);
	perfreport_release(&p);
}

/* perf report of the recorded runs, here, into r->profile; or r failed. */
static void profile_report(const struct task *t, struct result *r, const char *data)
{
	struct run_opts o = RUN_OPTS_INIT;
	struct run_result res;
	const char **argv = perfreport_report_argv(data);
	char how[64];

	o.argv = argv;
	o.timeout_ms = 300 * 1000;
	o.max_output = 4 * PERFREPORT_MAX_TEXT;
	if (run_cmd(&res, &o) < 0) {
		agent_result_set(r, "failed", "cannot run perf report: %s", err_msg());
		free(argv);
		return;
	}
	free(argv);
	if (!run_ok(&res)) {
		agent_result_set(r, "failed", "perf report of the runs failed (%s): %s",
				 run_describe(&res, how, sizeof(how)), res.err ? run_tail(res.err, 300) : "");
		goto out;
	}
	profile_take(t, r, res.out, res.out_len, res.err ? run_tail(res.err, 300) : NULL);
out:
	run_result_release(&res);
}

/*
 * Runs the task into r. 0 when r is to be uploaded; ERR_CONFLICT when the
 * task was abandoned (cancelled, or the agent is stopping).
 */
static int run_task(struct result *r, struct agent *a, const struct task *t)
{
	const struct workload_ops *wl = workload_find(t->type);
	const struct boot_ops *boot = boot_find(t->boot);
	char *dir = xasprintf("%s/%s", a->repos, t->repo_name), *image_dir = NULL;
	char *scratch = xasprintf("%s/%s", a->conf.workdir, t->boot), *perf_data = NULL;
	struct boot_task bt = { t->def, wl, dir, scratch, (int)t->runs, a->conf.cpu, NULL, t->claim, &a->cancel };
	struct boot_result br = { 0 };
	void *session = NULL;
	int started = 0, rc = 0;
	int kernel = json_object_get(t->def, "kernel") != NULL;
	int64_t t0;

	r->samples = json_array();
	/* Checked before the long steps, reported as those steps would. */
	if (!wl) {
		agent_result_set(r, "failed", "unknown workload type '%s' on this agent", t->type);
		goto out;
	}
	if (!boot) {
		agent_result_set(r, "skipped", "unknown boot method '%s'", t->boot);
		goto out;
	}
	if (!(wl->places & boot_method_find(t->boot)->places)) {
		agent_result_set(r, "failed", "boot %s does not run workloads of type %s", boot->name, wl->name);
		goto out;
	}
	if (workload_check_msg(wl, t->def) < 0 || (boot->prepare && boot->prepare(&bt) < 0)) {
		agent_result_set(r, "failed", "%s", err_msg());
		goto out;
	}
	if (t->profile && profile_prepare(a, t, r, &perf_data) < 0)
		goto out;
	bt.perf_data = perf_data;
	/* Built and booted before the kexec: its start() finds the journal. */
	if (t->resumed)
		goto boot;

	/* Checkout and build hold the lock shared: no neighbour measures meanwhile. */
	if (agent_abandoned(a, t)) {
		rc = ERR_CONFLICT;
		goto out;
	}
	agent_measure_lock(a, LOCK_SH, t);
	agent_set_phase(a, "checking out");
	log_info("task %lld: checking out %.12s of %s", t->id, t->commit, t->repo_name);
	gitx_set_progress(agent_git_progress, a);
	rc = worktree_checkout(dir, t->repo_url, t->commit);
	gitx_set_progress(NULL, NULL);
	if (rc < 0) {
		agent_result_set(r, "failed", "checkout of %.12s failed: %s", t->commit, err_msg());
		agent_measure_lock(a, LOCK_UN, t);
		rc = 0;
		goto out;
	}
	if (agent_abandoned(a, t)) {
		agent_measure_lock(a, LOCK_UN, t);
		rc = ERR_CONFLICT;
		goto out;
	}
	if (kernel ? agent_kernel_build(&image_dir, r, a, t, dir) < 0 : agent_build(r, a, t, dir) < 0) {
		agent_measure_lock(a, LOCK_UN, t);
		goto out;
	}
	agent_measure_lock(a, LOCK_UN, t);
	if (image_dir)
		bt.srcdir = image_dir;

	/* Boot once, run N times, stop. */
boot:
	if (agent_abandoned(a, t)) {
		rc = ERR_CONFLICT;
		goto out;
	}
	if (boot->what) {
		agent_set_phase(a, boot->what);
		log_info("task %lld: boot %s of %s for %lld run%s", t->id, boot->name,
			 json_string_value(json_object_get(t->def, "kernel_image")) ?: "the build",
			 t->runs, t->runs == 1 ? "" : "s");
	}
	agent_measure_lock(a, LOCK_EX, t);
	t0 = now_ms();
	rc = boot->start(&session, &br, &bt);
	agent_measure_lock(a, LOCK_UN, t);
	/* A method that measured in start() says how long; else the wall time counts. */
	r->run_s += br.run_s > 0 ? br.run_s : (double)(now_ms() - t0) / 1000;
	keep_console(a, t, br.console);
	if (rc < 0) {
		agent_result_set(r, br.status ? br.status : "failed", "%s", br.error);
		if (br.log_tail)
			r->log_tail = xstrdup(br.log_tail);
		rc = 0;
		goto out;
	}
	started = 1;
	if (br.accel)
		log_info("task %lld: guest ran under %s in %.1f s", t->id, br.accel, br.run_s);

	agent_set_phase(a, "running the workload");
	for (long long i = 1; i <= t->runs; i++) {
		struct run_sample s;

		pthread_mutex_lock(&a->mu);
		snprintf(a->detail, sizeof(a->detail), "run %lld of %lld", i, t->runs);
		pthread_mutex_unlock(&a->mu);
		if (agent_abandoned(a, t)) {
			rc = ERR_CONFLICT;
			goto out;
		}
		agent_measure_lock(a, LOCK_EX, t);
		t0 = now_ms();
		if (boot->run(&s, session, &bt, (int)i) < 0) {
			memset(&s, 0, sizeof(s));
			snprintf(s.unit, sizeof(s.unit), "%s",
				 json_string_value(json_object_get(t->def, "unit")) ?: "ops/s");
			snprintf(s.error, sizeof(s.error), "%s", err_msg());
		}
		if (br.run_s <= 0)
			r->run_s += (double)(now_ms() - t0) / 1000;
		agent_measure_lock(a, LOCK_UN, t);
		if (s.value > 0)
			log_info("task %lld: run %lld/%lld: %g %s", t->id, i, t->runs, s.value, s.unit);
		else
			log_warn("task %lld: run %lld/%lld failed: %s", t->id, i, t->runs, s.error);
		json_array_append_new(r->samples, sample_json(&s));
	}
	r->status = "ok";
	/*
	 * A guest's report came with its console, a device's from its own
	 * perf (boot_profile_text()); on the agent's own machine perf reports
	 * here.
	 */
	if (perf_data) {
		char *text = NULL;
		int prc = boot_profile_text(&text, boot, session, &bt, &br);

		if (prc == 1)
			profile_report(t, r, perf_data);
		else if (prc < 0)
			agent_result_set(r, "failed", "%s", err_msg());
		else
			profile_take(t, r, text, strlen(text), NULL);
		free(text);
	}
out:
	if (started)
		boot->stop(session, &bt);
	boot_result_release(&br);
	free(perf_data);
	free(image_dir);
	free(scratch);
	free(dir);
	return rc;
}

/* Reads the claim reply (taskwire.h); the id and attempt first, so that the rest can be reported. */
static int task_parse(struct task *t, json_t *reply)
{
	struct task_wire w;
	int rc;

	memset(t, 0, sizeof(*t));
	rc = taskwire_decode(&w, reply);
	t->id = w.task;
	t->attempt = w.attempt;
	if (rc < 0)
		return rc;
	t->runs = w.runs;
	t->commit = w.commit;
	t->repo_name = w.repo_name;
	t->repo_url = w.repo_url;
	t->type = w.type;
	t->boot = w.boot;
	t->build_timeout = w.build_timeout;
	t->def = w.workload;
	t->profile = w.profile;
	t->claim = reply;
	return 0;
}

static json_t *result_json(struct agent *a, const struct task *t, struct result *r)
{
	json_t *j;

	if (!r->samples)
		r->samples = json_array();
	j = json_pack("{s:s, s:I, s:s, s:O, s:f, s:f}",
			      "agent", a->conf.name, "attempt", (json_int_t)t->attempt,
			      "status", r->status,
			      "samples", r->samples,
			      "build_seconds", (double)(long long)(r->build_s * 1000) / 1000,
			      "run_seconds", (double)(long long)(r->run_s * 1000) / 1000);

	json_object_set_new(j, "error", r->error ? agent_text_json(r->error, 0) : json_null());
	json_object_set_new(j, "log_tail", r->log_tail ? agent_text_json(r->log_tail, 1) : json_null());
	if (r->profile)
		json_object_set_new(j, "profile", json_pack("{s:o}", "report", agent_text_json(r->profile, 1)));
	return j;
}

/* Runs a claimed task (resumed: one the kexec journal carried over) and delivers its result through the spool. */
void agent_handle_task(struct agent *a, json_t *reply, int resumed)
{
	struct task t;
	struct result r = { 0 };
	json_t *body = NULL;
	char *path = NULL, *text = NULL;
	int64_t t0 = now_ms();

	if (task_parse(&t, reply) < 0) {
		if (!t.id || !t.attempt) {
			log_error("claim: unusable task: %s", err_msg());
			return;
		}
		agent_result_set(&r, "failed", "agent cannot use the task: %s", err_msg());
		log_error("task %lld: %s", t.id, r.error);
	}
	t.resumed = resumed;
	agent_set_current(a, t.id, t.attempt);
	if (resumed) {
		/* Its lease ran down while the machine rebooted: say at once that it is still ours. */
		pthread_mutex_lock(&a->mu);
		a->beat_now = 1;
		pthread_cond_broadcast(&a->wake);
		pthread_mutex_unlock(&a->mu);
	}
	if (!r.status) {
		log_info("task %lld attempt %lld: job %lld, commit %.12s, %lld run%s of '%s'",
			 t.id, t.attempt, (long long)json_integer_value(json_object_get(reply, "job")),
			 t.commit, t.runs, t.runs == 1 ? "" : "s",
			 json_string_value(json_object_get(t.def, "name")) ?: "?");
		if (run_task(&r, a, &t) < 0)
			goto out;
	}
	/* The work is done: a stop request no longer throws it away, a cancel does. */
	pthread_mutex_lock(&a->mu);
	if (a->cancel) {
		pthread_mutex_unlock(&a->mu);
		log_warn("task %lld: cancelled, not uploaded", t.id);
		goto out;
	}
	pthread_mutex_unlock(&a->mu);
	if (strcmp(r.status, "ok"))
		log_warn("task %lld: %s: %s", t.id, r.status, r.error ? r.error : "");
	else
		log_info("task %lld: %lld run%s in %.1f s", t.id, t.runs, t.runs == 1 ? "" : "s",
			 (double)(now_ms() - t0) / 1000);

	body = result_json(a, &t, &r);
	path = xasprintf("%s/task-%lld-%lld.json", a->spool, t.id, t.attempt);
	text = json_dumps(body, JSON_COMPACT);
	if (!text || file_write_atomic(path, text, strlen(text)) < 0) {
		log_error("task %lld: cannot spool the result: %s", t.id, text ? err_msg() : "encoding");
		free(path);
		path = NULL;
	}
	switch (agent_upload(a, t.id, body, UPLOAD_TRIES)) {
	case UP_DONE:
		if (path)
			unlink(path);
		break;
	case UP_REJECTED:
		if (path)
			agent_spool_reject(path);
		break;
	default:
		break; /* stays in the spool for the next flush */
	}
out:
	agent_set_current(a, 0, 0);
	json_decref(body);
	free(text);
	free(path);
	agent_result_release(&r);
}
