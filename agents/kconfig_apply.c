/*
 * kconfig_apply: configures a kernel tree with the job's fragments and
 * checks the result (kconfig.h has the parsing, merging and naming). It
 * runs make and merge_config.sh, so it is the agent's, not the library's.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kconfig.h"
#include "kconfig_apply.h"
#include "run.h"
#include "util.h"

/* Runs argv in cwd; a failure's message carries what and the output's tail. */
static int step(const struct kconfig_apply_opts *opts, const char *what,
		const char *cwd, const char *const *argv)
{
	struct run_opts ro = RUN_OPTS_INIT;
	struct run_result res;
	char how[64];
	int rc;

	ro.argv = argv;
	ro.cwd = cwd;
	ro.env = opts->env;
	ro.timeout_ms = opts->timeout_ms;
	ro.max_output = 64 << 10;
	rc = run_cmd(&res, &ro);
	if (rc)
		return err_set(rc, "kconfig: %s: %s", what, err_msg());
	if (!run_ok(&res)) {
		const char *tail = run_tail(res.err_len ? res.err : res.out, 600);

		rc = err_set(res.timed_out ? ERR_TIMEOUT : ERR_FAIL, "kconfig: %s: %s: %s",
			     what, run_describe(&res, how, sizeof(how)), tail);
	}
	run_result_release(&res);
	return rc;
}

/* argv = make [make_args...] O=outdir target */
static int run_make(const struct kconfig_apply_opts *opts, const char *out, const char *target)
{
	const char **argv;
	size_t n = 0, i = 0;
	char *o = xasprintf("O=%s", out), *what = xasprintf("make %s", target);
	int rc;

	while (opts->make_args && opts->make_args[n])
		n++;
	argv = xcalloc(n + 4, sizeof(*argv));
	argv[i++] = opts->make ? opts->make : "make";
	for (n = 0; opts->make_args && opts->make_args[n]; n++)
		argv[i++] = opts->make_args[n];
	argv[i++] = o;
	argv[i++] = target;
	rc = step(opts, what, opts->srcdir, argv);
	free(argv);
	free(o);
	free(what);
	return rc;
}

int kconfig_apply(char hash[KCONFIG_HASH_HEX + 1], struct kconfig_overrides *ov,
		  const struct kconfig_apply_opts *opts)
{
	struct kconfig want = KCONFIG_INIT, got = KCONFIG_INIT, rest = KCONFIG_INIT;
	char out[PATH_MAX], src[PATH_MAX];
	char *frag_path = NULL, *cfg_path = NULL, *merge_sh = NULL, *text = NULL;
	char *base_name = NULL, *header = NULL, *report = NULL, *name = NULL;
	char h[KCONFIG_HASH_HEX + 1];
	size_t len = 0;
	int rc;

	if (!opts->srcdir || !opts->outdir || !opts->base || !*opts->base)
		return err_set(ERR_INVALID, "kconfig: srcdir, outdir and base are required");
	if (!realpath(opts->srcdir, src))
		return err_set(errno == ENOENT ? ERR_NOTFOUND : ERR_FAIL, "kconfig: %s: %s",
			       opts->srcdir, strerror(errno));
	if ((rc = mkdir_p(opts->outdir, 0755)))
		return rc;
	if (!realpath(opts->outdir, out))
		return err_set(ERR_FAIL, "kconfig: %s: %s", opts->outdir, strerror(errno));

	if ((rc = kconfig_merged(&want, ov, &text, &len, &base_name, opts->base, opts->fragments)))
		goto out;
	if (opts->job)
		kconfig_merge(&want, ov, opts->job);
	name = kconfig_job_base_name(base_name, opts->job);
	kconfig_hash(h, &want, name);
	if (hash)
		memcpy(hash, h, sizeof(h));

	frag_path = xasprintf("%s/bisectd-fragment.config", out);
	cfg_path = xasprintf("%s/.config", out);
	header = xasprintf("bisectd: merged fragment, base %s, config hash %s", name, h);
	{
		char *frag = kconfig_format(&want, header);

		rc = file_write_atomic(frag_path, frag, strlen(frag));
		free(frag);
		if (rc)
			goto out;
	}

	if (text) {
		if ((rc = file_write_atomic(cfg_path, text, len)))
			goto out;
	} else if ((rc = run_make(opts, out, opts->base))) {
		goto out;
	}
	merge_sh = xasprintf("%s/scripts/kconfig/merge_config.sh", src);
	{
		/* merge_config.sh makes its temporary files in the current directory. */
		const char *argv[] = { "sh", merge_sh, "-m", "-O", out, cfg_path, frag_path, NULL };

		if ((rc = step(opts, "merge_config.sh", out, argv)))
			goto out;
	}
	if ((rc = run_make(opts, out, "olddefconfig")))
		goto out;
	if ((rc = kconfig_load(&got, NULL, cfg_path)))
		goto out;
	/* The job's options first: refused, they are the job's doing, not the commit's. */
	if (opts->job && opts->job->nr && kconfig_verify(&report, opts->job, &got)) {
		const char *why = err_msg();

		if (!strncmp(why, "kconfig: ", 9))
			why += 9;
		rc = err_set(ERR_CONFLICT, "kconfig: this kernel's Kconfig refuses %s: %s", KCONFIG_JOB_WHERE, why);
		goto out;
	}
	for (size_t i = 0; i < want.nr; i++)
		if (!opts->job || !kconfig_get(opts->job, want.opt[i].name))
			kconfig_set(&rest, want.opt[i].name, want.opt[i].value, want.opt[i].where);
	rc = kconfig_verify(&report, &rest, &got);
out:
	free(report);
	free(header);
	free(name);
	free(base_name);
	free(text);
	free(merge_sh);
	free(cfg_path);
	free(frag_path);
	kconfig_release(&want);
	kconfig_release(&got);
	kconfig_release(&rest);
	return rc;
}
