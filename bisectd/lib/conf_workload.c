/*
 * conf_workload: a workload's definition: its common keys, its kind's
 * own (workload.h), its boot's, and the JSON a task carries of it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "conf_internal.h"
#include "err.h"
#include "methods.h"
#include "workload.h"

/* A workload's common keys; each kind's own (workload.h) follow them. */
static const char *const workload_keys[] = {
	"type", "boot", "build", "direction", "build_timeout", "run_timeout", "kernel_image", "qemu",
	"memory_mb", "cpus", "append", "boot_timeout", "kernel", "profile", "kexec", "ssh", NULL
};

/* Every key a workload may hold: the common ones, then each kind's. */
static char **all_workload_keys(void)
{
	const struct workload_ops *const *all;
	size_t nr, n = 0, cap = 64;
	char **keys = xcalloc(cap, sizeof(*keys));

	for (const char *const *k = workload_keys; *k; k++)
		keys[n++] = xstrdup(*k);
	all = workload_all(&nr);
	for (size_t i = 0; i < nr; i++) {
		for (const struct workload_key *k = all[i]->keys; k->name; k++) {
			int dup = 0;

			for (size_t j = 0; j < n; j++)
				dup |= !strcmp(keys[j], k->name);
			if (dup)
				continue;
			if (n + 2 > cap)
				keys = xrealloc(keys, (cap *= 2) * sizeof(*keys));
			keys[n++] = xstrdup(k->name);
			keys[n] = NULL;
		}
	}
	keys[n] = NULL;
	return keys;
}

static const struct workload_key *own_key(const struct workload_ops *ops, const char *name)
{
	for (const struct workload_key *k = ops->keys; k->name; k++)
		if (!strcmp(k->name, name))
			return k;
	return NULL;
}

/* A key the workload's kind does not own, but another kind does: for that kind. */
static int foreign_keys(const struct workload_ops *ops, const struct ctx *x, const struct ynode *def,
			const char *where)
{
	const struct workload_ops *const *all;
	size_t nr;

	all = workload_all(&nr);
	for (size_t i = 0; i < nr; i++) {
		if (all[i] == ops)
			continue;
		for (const struct workload_key *k = all[i]->keys; k->name; k++)
			if (ynode_get(def, k->name) && !own_key(ops, k->name))
				return conf_at(x, ynode_get(def, k->name), "'%s'%s is for type %s, not %s", k->name,
					       where, all[i]->name, ops->name);
	}
	return 0;
}

/* The kind's own keys from YAML into w->params, typed as the kind says. */
static int own_params(struct conf_workload *w, const struct workload_ops *ops, const struct ctx *x,
		      const struct ynode *def, const char *where)
{
	w->params = json_object();
	for (const struct workload_key *k = ops->keys; k->name; k++) {
		char *str = NULL, **argv = NULL;
		long long ll = 0;
		int b = 0, rc = 0;
		json_t *v = NULL;

		if (!ynode_get(def, k->name))
			continue;
		switch (k->kind) {
		case WKEY_STR:
			if ((rc = conf_get_str(&str, x, def, k->name, where, 0)) == 0 && str)
				v = json_string(str);
			break;
		case WKEY_INT:
			if ((rc = conf_get_ll(&ll, x, def, k->name, where, k->min, k->max)) == 0)
				v = json_integer(ll);
			break;
		case WKEY_BOOL:
			if ((rc = conf_get_bool(&b, x, def, k->name, where)) == 0)
				v = json_boolean(b);
			break;
		case WKEY_ARGV:
			if ((rc = conf_get_strv(&argv, x, def, k->name, where, 0)) == 0 && argv) {
				v = json_array();
				for (char **p = argv; *p; p++)
					json_array_append_new(v, json_string(*p));
			}
			break;
		case WKEY_LIST:
			/* One scalar ("0,1") or a sequence ([0, 1]): the kind's check reads either. */
			if (ynode_get(def, k->name)->kind == YNODE_SEQ)
				rc = conf_get_strv(&argv, x, def, k->name, where, 0);
			else
				rc = conf_get_str(&str, x, def, k->name, where, 0);
			if (rc == 0 && argv) {
				v = json_array();
				for (char **p = argv; *p; p++)
					json_array_append_new(v, json_string(*p));
			} else if (rc == 0 && str) {
				v = json_string(str);
			}
			break;
		}
		free(str);
		strv_free(argv);
		if (rc < 0)
			return rc;
		if (!v)
			return conf_at(x, ynode_get(def, k->name), "'%s'%s is not UTF-8 text", k->name, where);
		json_object_set_new(w->params, k->name, v);
	}
	return 0;
}

/* The kind's check over w->params, its complaint placed on the key it names. */
static int check_params(struct conf_workload *w, const struct workload_ops *ops, const struct ctx *x,
			const struct ynode *key, const struct ynode *def, const char *where)
{
	struct workload_bad bad;
	const struct ynode *n;
	char *msg;
	int rc;

	if (workload_check(&bad, ops, w->params) == 0) {
		free(w->unit);
		w->unit = xstrdup(json_string_value(json_object_get(w->params, "unit")) ?: "ops/s");
		return 0;
	}
	msg = xstrdup(err_msg());
	n = bad.key ? ynode_get(def, bad.key) : NULL;
	if (n && bad.item >= 0 && n->kind == YNODE_SEQ && (size_t)bad.item < n->nr)
		n = n->items[bad.item];
	if (bad.missing || !n)
		rc = conf_at(x, key, "workload '%s' has no '%s' (%s)", w->name, bad.key ? bad.key : "?", msg);
	else
		rc = conf_at(x, n, "'%s'%s%s", bad.key, where, msg);
	free(msg);
	return rc;
}

int conf_workload_entry(const struct ctx *x, void *elem, const struct ynode *key,
			const struct ynode *def)
{
	struct conf_workload *w = elem;
	const struct workload_ops *ops;
	const struct boot_settings *bs;
	struct sbuf list = SBUF_INIT, list2 = SBUF_INIT;
	char where[128], *direction = NULL, **keys = all_workload_keys();
	int rc, places;

	w->name = xstrdup(key->str);
	w->type = xstrdup("command");
	w->boot = xstrdup("none");
	w->unit = xstrdup("ops/s");
	w->direction = DIR_HIGHER;
	w->build_timeout = 1800;
	w->run_timeout = 300;
	w->kernel_image = xstrdup("arch/x86/boot/bzImage");
	w->memory_mb = 512;
	w->cpus = 2;
	w->boot_timeout = 120;
	snprintf(where, sizeof(where), " in workload '%s'", w->name);
	if ((rc = conf_check_keys(x, def, (const char *const *)keys, where)) < 0 ||
	    (rc = conf_get_str(&w->type, x, def, "type", where, 0)) < 0 ||
	    (rc = conf_get_str(&w->boot, x, def, "boot", where, 0)) < 0 ||
	    (rc = conf_get_strv(&w->build, x, def, "build", where, 0)) < 0 ||
	    (rc = conf_get_str(&direction, x, def, "direction", where, 0)) < 0 ||
	    (rc = conf_get_int(&w->build_timeout, x, def, "build_timeout", where, 1, 7 * 86400)) < 0 ||
	    (rc = conf_get_int(&w->run_timeout, x, def, "run_timeout", where, 1, 86400)) < 0 ||
	    (rc = conf_get_bool(&w->profile, x, def, "profile", where)) < 0)
		goto out;

	/* Only what the agents implement; a typo must not reach them. */
	if (!(ops = workload_find(w->type))) {
		conf_names_list(&list, 0, 0, 1);
		rc = conf_at(x, ynode_get(def, "type"), "'type'%s must be %s, not '%s'", where, list.buf, w->type);
		goto out;
	}
	if (!(places = conf_boot_places(w->boot))) {
		conf_names_list(&list, 1, 0, 1);
		rc = conf_at(x, ynode_get(def, "boot"), "'boot'%s must be %s, not '%s'", where, list.buf, w->boot);
		goto out;
	}
	/* perf profiles at the culprit: only where the boot method records them (methods.c). */
	if (w->profile && !boot_method_profiles(w->boot)) {
		rc = conf_at(x, ynode_get(def, "profile"),
			     "'profile'%s: boot %s cannot record perf profiles (boot %s can)", where, w->boot,
			     boot_profile_methods);
		goto out;
	}
	if (direction && !strcmp(direction, "lower")) {
		w->direction = DIR_LOWER;
	} else if (direction && strcmp(direction, "higher")) {
		rc = conf_at(x, ynode_get(def, "direction"), "'direction'%s must be 'higher' or 'lower', not '%s'",
			     where, direction);
		goto out;
	}
	/* An empty build list means the same as none: nothing to build. */
	if (w->build && !w->build[0]) {
		strv_free(w->build);
		w->build = NULL;
	}
	bs = conf_boot_settings_of(&rc, w, x, def, where);
	if (rc < 0)
		goto out;
	if (places & BOOT_KERNEL) {
		/* A boot of the built kernel on a machine (ssh: a device; kexec: this machine). */
		if ((rc = conf_kernel_boot_entry(w, x, def, where)) < 0)
			goto out;
	} else if (places & WORKLOAD_GUEST) {
		if ((rc = conf_guest_boot_entry(w, x, def, where)) < 0)
			goto out;
	} else if (ynode_get(def, "kernel")) {
		conf_names_list(&list, 0, WORKLOAD_GUEST, 0);
		conf_names_list(&list2, 1, WORKLOAD_GUEST, 0);
		rc = conf_at(x, ynode_get(def, "kernel"), "'kernel'%s builds a kernel to boot: it needs type "
			     "%s with boot %s", where, list.buf, list2.buf);
		goto out;
	}
	if (!(ops->places & places)) {
		if (ops->places & WORKLOAD_GUEST) {
			conf_names_list(&list, 1, ops->places, 0);
			rc = conf_at(x, ynode_get(def, "boot") ? ynode_get(def, "boot") : key,
				     "workload '%s' of type %s needs 'boot: %s' (it runs inside the built kernel)",
				     w->name, w->type, list.buf);
		} else {
			conf_names_list(&list, 0, places, 0);
			conf_names_list(&list2, 1, ops->places, 0);
			rc = conf_at(x, ynode_get(def, "boot"), "'boot: %s'%s needs type %s (type %s runs on "
				     "the agent: boot %s)", w->boot, where, list.buf, w->type, list2.buf);
		}
		goto out;
	}
	/* The boot's own mapping once the type is known to run on it. */
	if ((bs && (rc = bs->entry(w, x, def, key, where)) < 0) ||
	    (rc = foreign_keys(ops, x, def, where)) < 0 ||
	    (rc = own_params(w, ops, x, def, where)) < 0)
		goto out;
	rc = check_params(w, ops, x, key, def, where);
out:
	sbuf_release(&list);
	sbuf_release(&list2);
	strv_free(keys);
	free(direction);
	return rc;
}

json_t *conf_workload_def(const struct conf_workload *w, const char *append)
{
	return conf_workload_def_job(w, append, NULL);
}

json_t *conf_workload_def_job(const struct conf_workload *w, const char *append, json_t *config)
{
	json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:i}", "name", w->name, "type", w->type,
			      "boot", w->boot, "unit", w->unit,
			      "direction", w->direction == DIR_LOWER ? "lower" : "higher",
			      "build_timeout", w->build_timeout, "run_timeout", w->run_timeout);
	json_t *b = json_array();
	const char *own = w->append;
	char *line = NULL;

	for (char **p = w->build; p && *p; p++)
		json_array_append_new(b, json_string(*p));
	json_object_set_new(j, "build", b);
	if (w->profile)
		json_object_set_new(j, "profile", json_true());
	if (conf_boot_places(w->boot) & BOOT_KERNEL) {
		json_object_set_new(j, "kernel_image", json_string(w->kernel_image));
	} else if (conf_boot_places(w->boot) & WORKLOAD_GUEST) {
		json_object_set_new(j, "kernel_image", json_string(w->kernel_image));
		json_object_set_new(j, "memory_mb", json_integer(w->memory_mb));
		json_object_set_new(j, "cpus", json_integer(w->cpus));
		json_object_set_new(j, "boot_timeout", json_integer(w->boot_timeout));
	}
	if (w->kexec)
		json_object_set_new(j, "kexec", json_deep_copy(w->kexec));
	if (w->ssh)
		json_object_set_new(j, "ssh", json_deep_copy(w->ssh));
	/* The job's variant after the workload's own parameters: the later one wins. */
	if (own && append)
		line = xasprintf("%s %s", own, append);
	if (own || append)
		json_object_set_new(j, "append", json_string(line ? line : own ? own : append));
	free(line);
	if (w->kernel) {
		const struct conf_kernel *k = w->kernel;
		json_t *kj = json_pack("{s:s, s:s}", "base", k->base, "target", k->target);
		json_t *fr = json_array(), *ma = json_array();

		if (k->base_text)
			json_object_set_new(kj, "base_config", json_string(k->base_text));
		for (size_t i = 0; k->fragments[i]; i++)
			json_array_append_new(fr, json_pack("{s:s, s:s}", "name", k->fragments[i],
							    "text", k->fragment_text[i]));
		for (char **p = k->make_args; *p; p++)
			json_array_append_new(ma, json_string(*p));
		json_object_set_new(kj, "fragments", fr);
		json_object_set_new(kj, "make_args", ma);
		if (json_array_size(config))
			json_object_set_new(kj, "config", json_deep_copy(config));
		json_object_set_new(j, "kernel", kj);
	}
	/* The kind's own keys last: they are its whole knowledge. */
	if (w->params)
		json_object_update_missing(j, w->params);
	return j;
}
