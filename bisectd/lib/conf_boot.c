/*
 * conf_boot: a workload's kernel build (base, fragments, target) and the
 * settings of its boot: qemu, or a machine over ssh, or kexec.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "conf_internal.h"
#include "err.h"
#include "kconfig.h"
#include "methods.h"
#include "workload.h"

static const char *const kernel_keys[] = { "base", "fragments", "target", "make_args", NULL };
static const char *const kernel_bases[] = { "tinyconfig", "defconfig", "allnoconfig", NULL };
static const char *const qemu_keys[] = {
	"kernel_image", "memory_mb", "cpus", "append", "boot_timeout", NULL
};
static const char *const kexec_keys[] = {
	"append", "initrd", "return_timeout", "good_kernel", "good_initrd", "reboot", NULL
};
/* boot ssh's settings: an 'ssh' mapping (docs/LAB.md). */
static const char *const ssh_keys[] = {
	"host", "user", "port", "identity", "known_hosts", "connect_timeout", "dir", "copy", "install",
	"power_cycle", "restore", "console", "boot_timeout", "power_tries", "good_kernel", "tools_dir", NULL
};

static int qemu_settings(struct conf_workload *w, const struct ctx *x, const struct ynode *map,
			 const char *where)
{
	int rc;

	if ((rc = conf_get_str(&w->kernel_image, x, map, "kernel_image", where, 0)) < 0 ||
	    (rc = conf_get_int(&w->memory_mb, x, map, "memory_mb", where, 64, 65536)) < 0 ||
	    (rc = conf_get_int(&w->cpus, x, map, "cpus", where, 1, 64)) < 0 ||
	    (rc = conf_get_str(&w->append, x, map, "append", where, 1)) < 0 ||
	    (rc = conf_get_int(&w->boot_timeout, x, map, "boot_timeout", where, 1, 3600)) < 0)
		return rc;
	return 0;
}

void conf_kernel_free(struct conf_kernel *k)
{
	if (!k)
		return;
	free(k->base);
	free(k->base_text);
	strv_free(k->fragments);
	strv_free(k->fragment_text);
	free(k->target);
	strv_free(k->make_args);
	free(k);
}

/* Reads a config file of the kernel build and checks that it parses. */
static int kernel_file(char **text, const struct ctx *x, const struct ynode *n, const char *path,
		       const char *what, const char *where)
{
	struct kconfig kc = KCONFIG_INIT;
	size_t len;
	int rc;

	if ((rc = file_read(text, &len, path, KCONFIG_MAX_FILE)) < 0)
		return conf_at(x, n, "%s%s: %s", what, where, err_msg());
	/* It travels to the agents in JSON. */
	json_t *probe = json_stringn(*text, len);

	if (!probe)
		return conf_at(x, n, "%s%s: %s is not UTF-8 text", what, where, path);
	json_decref(probe);
	rc = kconfig_parse(&kc, NULL, *text, len, path);
	kconfig_release(&kc);
	if (rc < 0)
		return conf_at(x, n, "%s%s: %s", what, where, err_msg());
	return 0;
}

/* The names of the fragments in dir, for a message: "egress, pedit, udp". */
static void fragment_names(struct sbuf *out, const char *dir)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort), shown = 0;

	for (int i = 0; i < n; i++) {
		size_t len = strlen(names[i]->d_name);

		if (len > 7 && !strcmp(names[i]->d_name + len - 7, ".config"))
			sbuf_addf(out, "%s%.*s", shown++ ? ", " : "", (int)(len - 7), names[i]->d_name);
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	if (!shown)
		sbuf_adds(out, "none");
}

/*
 * The 'kernel' mapping: base, fragments (names of kconfig_dir/NAME.config),
 * target and make_args. Files are read and parsed here, so that a missing
 * fragment or a bad line stops bisectd, not every task on every agent.
 */
static int kernel_entry(struct conf_workload *w, const struct ctx *x, const struct ynode *def,
			const char *where)
{
	const struct ynode *kn = ynode_get(def, "kernel"), *fr;
	struct conf_kernel *k;
	char kwhere[160];
	size_t nr;
	int rc;

	if (!kn || ynode_is_null(kn))
		return 0;
	if (kn->kind != YNODE_MAP)
		return conf_at(x, kn, "'kernel'%s must be a mapping (base, fragments, target, make_args), not %s",
			       where, ynode_kind_name(kn->kind));
	snprintf(kwhere, sizeof(kwhere), " in the kernel build of workload '%s'", w->name);
	k = w->kernel = xcalloc(1, sizeof(*k));
	k->base = xstrdup("tinyconfig");
	k->target = xstrdup("bzImage");
	if ((rc = conf_check_keys(x, kn, kernel_keys, kwhere)) < 0 ||
	    (rc = conf_get_str(&k->base, x, kn, "base", kwhere, 0)) < 0 ||
	    (rc = conf_get_strv(&k->fragments, x, kn, "fragments", kwhere, 0)) < 0 ||
	    (rc = conf_get_str(&k->target, x, kn, "target", kwhere, 0)) < 0 ||
	    (rc = conf_get_strv(&k->make_args, x, kn, "make_args", kwhere, 0)) < 0)
		return rc;
	if (!k->fragments)
		k->fragments = xcalloc(1, sizeof(char *));
	if (!k->make_args)
		k->make_args = xcalloc(1, sizeof(char *));
	if (!conf_name_ok(k->target, strlen(k->target), "/"))
		return conf_at(x, ynode_get(kn, "target"), "'target'%s must be a make target such as bzImage, "
			       "not '%s'", kwhere, k->target);
	for (char **p = k->make_args; *p; p++)
		if (!strchr(*p, '=') || **p == '-' || !strncmp(*p, "O=", 2))
			return conf_at(x, ynode_get(kn, "make_args"), "'make_args'%s takes VAR=value arguments "
				       "(LLVM=1, KCFLAGS=...), not '%s' (the agent sets -j and O= itself)",
				       kwhere, *p);
	if (!conf_one_of(k->base, kernel_bases)) {
		char *path = k->base[0] == '/' ? xstrdup(k->base) : xasprintf("%s/%s", x->kconfig_dir, k->base);

		rc = kernel_file(&k->base_text, x, ynode_get(kn, "base"), path,
				 "'base' (tinyconfig, defconfig, allnoconfig or a .config file)", kwhere);
		free(path);
		if (rc < 0)
			return rc;
	}
	fr = ynode_get(kn, "fragments");
	nr = strv_len(k->fragments);
	k->fragment_text = xcalloc(nr + 1, sizeof(char *));
	for (size_t i = 0; i < nr; i++) {
		char *path = xasprintf("%s/%s.config", x->kconfig_dir, k->fragments[i]);

		if (!conf_name_ok(k->fragments[i], strlen(k->fragments[i]), "") || access(path, F_OK) < 0) {
			struct sbuf names = SBUF_INIT;

			fragment_names(&names, x->kconfig_dir);
			rc = conf_at(x, fr->items[i], "fragment '%s'%s is not in %s (there: %s)", k->fragments[i],
				     kwhere, x->kconfig_dir, names.buf);
			sbuf_release(&names);
		} else {
			rc = kernel_file(&k->fragment_text[i], x, fr->items[i], path, "fragment", kwhere);
		}
		free(path);
		if (rc < 0)
			return rc;
	}
	if (w->build)
		return conf_at(x, ynode_get(def, "build"), "workload '%s' has both 'build' and 'kernel': the "
			       "kernel mapping is the build", w->name);
	return 0;
}

int conf_boot_places(const char *name)
{
	const struct boot_method *m = boot_method_find(name);

	return m ? m->places : 0;
}

/* "'a', 'b' or 'c'" (quoted) or "a, b or c" of the names that match places (0: all). */
void conf_names_list(struct sbuf *sb, int boots, int places, int quote)
{
	const char *names[32];
	size_t n = 0, nr;

	if (boots) {
		size_t nm;
		const struct boot_method *m = boot_methods(&nm);

		for (size_t i = 0; i < nm && n < 32; i++)
			if (!places || (m[i].places & places))
				names[n++] = m[i].name;
	} else {
		const struct workload_ops *const *all = workload_all(&nr);

		for (size_t i = 0; i < nr && n < 32; i++)
			if (!places || (all[i]->places & places))
				names[n++] = all[i]->name;
	}
	for (size_t i = 0; i < n; i++)
		sbuf_addf(sb, "%s%s%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", quote ? "'" : "",
			  names[i], quote ? "'" : "");
}

/* A sequence of strings into obj[key] as a JSON array; absent: nothing. */
static int ssh_argv(json_t *obj, const struct ctx *x, const struct ynode *map, const char *key,
		    const char *where, int required, const struct ynode *at_node)
{
	char **v = NULL;
	json_t *a;
	int rc;

	if ((rc = conf_get_strv(&v, x, map, key, where, 0)) < 0)
		return rc;
	if (!v || !v[0]) {
		strv_free(v);
		if (required)
			return conf_at(x, ynode_get(map, key) ? ynode_get(map, key) : at_node,
				       "'%s'%s is required: %s", key, where,
				       !strcmp(key, "install") ? "the argv run on the device to install {kernel}"
				       : "the argv run on the agent to power-cycle the device");
		return 0;
	}
	a = json_array();
	for (char **p = v; *p; p++)
		json_array_append_new(a, json_string(*p));
	json_object_set_new(obj, key, a);
	strv_free(v);
	return 0;
}

/*
 * boot ssh's 'ssh' mapping into w->ssh, the definition's "ssh" object:
 * the device, how to reach it, and the commands that install, power-cycle
 * and restore it (agents/boot/ssh.c runs them).
 */
static int ssh_entry(struct conf_workload *w, const struct ctx *x, const struct ynode *def,
		     const struct ynode *key, const char *where)
{
	const struct ynode *m = ynode_get(def, "ssh");
	char *host = NULL, *user = NULL, *identity = NULL, *kh = NULL, *dir = NULL, *good = NULL, **copy = NULL;
	char *tools = NULL;
	int port = 22, cto = 10, bto = 300, tries = 2, rc;
	char swhere[160];
	json_t *o;

	if (!m || ynode_is_null(m))
		return conf_at(x, key, "workload '%s' boots ssh but has no 'ssh' mapping (host, known_hosts, "
			       "install, power_cycle)", w->name);
	if (m->kind != YNODE_MAP)
		return conf_at(x, m, "'ssh'%s must be a mapping of keys, not %s", where, ynode_kind_name(m->kind));
	snprintf(swhere, sizeof(swhere), " in the ssh settings of workload '%s'", w->name);
	o = json_object();
	if ((rc = conf_check_keys(x, m, ssh_keys, swhere)) < 0 ||
	    (rc = conf_get_str(&host, x, m, "host", swhere, 0)) < 0 ||
	    (rc = conf_get_str(&user, x, m, "user", swhere, 0)) < 0 ||
	    (rc = conf_get_int(&port, x, m, "port", swhere, 1, 65535)) < 0 ||
	    (rc = conf_get_str(&identity, x, m, "identity", swhere, 0)) < 0 ||
	    (rc = conf_get_str(&kh, x, m, "known_hosts", swhere, 0)) < 0 ||
	    (rc = conf_get_int(&cto, x, m, "connect_timeout", swhere, 1, 300)) < 0 ||
	    (rc = conf_get_str(&dir, x, m, "dir", swhere, 0)) < 0 ||
	    (rc = conf_get_strv(&copy, x, m, "copy", swhere, 0)) < 0 ||
	    (rc = conf_get_int(&bto, x, m, "boot_timeout", swhere, 1, 7200)) < 0 ||
	    (rc = conf_get_int(&tries, x, m, "power_tries", swhere, 1, 10)) < 0 ||
	    (rc = conf_get_str(&good, x, m, "good_kernel", swhere, 0)) < 0 ||
	    (rc = conf_get_str(&tools, x, m, "tools_dir", swhere, 0)) < 0 ||
	    (rc = ssh_argv(o, x, m, "install", swhere, 1, m)) < 0 ||
	    (rc = ssh_argv(o, x, m, "power_cycle", swhere, 1, m)) < 0 ||
	    (rc = ssh_argv(o, x, m, "restore", swhere, 0, m)) < 0 ||
	    (rc = ssh_argv(o, x, m, "console", swhere, 0, m)) < 0)
		goto out;
	/* Words ssh would take for its own options, or a remote shell would split. */
	if (!host || host[0] == '-' || strpbrk(host, " \t\n@'\"\\;") || strlen(host) > 255) {
		rc = conf_at(x, host ? ynode_get(m, "host") : m, "'host'%s %s", swhere,
			     host ? "must be a host name or address (no spaces, quotes, '@' or leading '-')"
			     : "is required: the device's host name or address");
		goto out;
	}
	if (user && (!conf_name_ok(user, strlen(user), NULL) || user[0] == '-')) {
		rc = conf_at(x, ynode_get(m, "user"), "'user'%s must be a login name of A-Z a-z 0-9 . _ -", swhere);
		goto out;
	}
	/* ssh -o reads a value with spaces as a list of files. */
	if (!kh || kh[0] != '/' || strpbrk(kh, " \t\n")) {
		rc = conf_at(x, kh ? ynode_get(m, "known_hosts") : m, "'known_hosts'%s %s", swhere,
			     kh ? "must be an absolute path on the agent, without spaces"
			   : "is required: the agent's file of the device's host key (ssh checks it strictly)");
		goto out;
	}
	if (identity && identity[0] != '/') {
		rc = conf_at(x, ynode_get(m, "identity"), "'identity'%s must be an absolute path on the agent", swhere);
		goto out;
	}
	if (dir && (dir[0] != '/' || strchr(dir, '\n') || strlen(dir) > 256)) {
		rc = conf_at(x, ynode_get(m, "dir"), "'dir'%s must be an absolute path on the device", swhere);
		goto out;
	}
	/* The guest workloads' scripts name their tools by absolute path, quoted. */
	if (tools && (tools[0] != '/' || strpbrk(tools, " \t\n'\"\\$`") || strlen(tools) > 200)) {
		rc = conf_at(x, ynode_get(m, "tools_dir"), "'tools_dir'%s must be an absolute path on the device, "
			     "without spaces or quotes", swhere);
		goto out;
	}
	for (size_t i = 0; copy && copy[i]; i++) {
		const char *base = strrchr(copy[i], '/') ? strrchr(copy[i], '/') + 1 : copy[i];

		if (i >= 8 || !path_inside(copy[i]) || strlen(copy[i]) > 256 ||
		    !conf_name_ok(base, strlen(base), "+") || !strcmp(base, "kernel")) {
			rc = conf_at(x, ynode_get(m, "copy")->items[i],
				     "'copy'%s: '%s' must be a path inside the build output with a plain file name "
				     "other than 'kernel' (at most 8 of them)", swhere, copy[i]);
			goto out;
		}
	}
	json_object_set_new(o, "host", json_string(host));
	json_object_set_new(o, "user", json_string(user ? user : "root"));
	json_object_set_new(o, "port", json_integer(port));
	if (identity)
		json_object_set_new(o, "identity", json_string(identity));
	json_object_set_new(o, "known_hosts", json_string(kh));
	json_object_set_new(o, "connect_timeout", json_integer(cto));
	json_object_set_new(o, "dir", json_string(dir ? dir : "/tmp/bisect"));
	json_object_set_new(o, "tools_dir", json_string(tools ? tools : "/usr/bin"));
	if (copy) {
		json_t *a = json_array();

		for (char **p = copy; *p; p++)
			json_array_append_new(a, json_string(*p));
		json_object_set_new(o, "copy", a);
	}
	json_object_set_new(o, "boot_timeout", json_integer(bto));
	json_object_set_new(o, "power_tries", json_integer(tries));
	if (good)
		json_object_set_new(o, "good_kernel", json_string(good));
	json_decref(w->ssh);
	w->ssh = o;
	o = NULL;
	rc = 0;
out:
	json_decref(o);
	free(host);
	free(user);
	free(identity);
	free(kh);
	free(dir);
	free(good);
	free(tools);
	strv_free(copy);
	return rc;
}

/* A boot into the built kernel on a machine (ssh, kexec): its image, command line and build. */
int conf_kernel_boot_entry(struct conf_workload *w, const struct ctx *x, const struct ynode *def,
			   const char *where)
{
	static const char *const guest_only[] = { "qemu", "memory_mb", "cpus", "boot_timeout", NULL };
	int rc;

	for (const char *const *k = guest_only; *k; k++)
		if (ynode_get(def, *k))
			return conf_at(x, ynode_get(def, *k), "'%s'%s is a setting of boot qemu, not of boot %s", *k,
				       where, w->boot);
	if ((rc = conf_get_str(&w->kernel_image, x, def, "kernel_image", where, 0)) < 0 ||
	    (rc = conf_get_str(&w->append, x, def, "append", where, 1)) < 0 ||
	    (rc = kernel_entry(w, x, def, where)) < 0)
		return rc;
	return 0;
}

/*
 * Boot kexec's settings, in a 'kexec' mapping, into w->kexec as the agent
 * reads them (agents/boot/kexec.c): its append (the pool's whole command
 * line; none: the running kernel's is reused) goes where qemu's does, so
 * that the job's variant follows it.
 */
static int kexec_entry(struct conf_workload *w, const struct ctx *x, const struct ynode *def,
		       const struct ynode *key, const char *where)
{
	const struct ynode *m = ynode_get(def, "kexec");
	char kwhere[160], *initrd = NULL, *good = NULL, *good_initrd = NULL, **reboot = NULL;
	int rc, ret = 300;

	(void)key;
	w->kexec = json_object();
	if (!m || ynode_is_null(m))
		goto done;
	if (m->kind != YNODE_MAP)
		return conf_at(x, m, "'kexec'%s must be a mapping of keys, not %s", where, ynode_kind_name(m->kind));
	snprintf(kwhere, sizeof(kwhere), " in the kexec settings of workload '%s'", w->name);
	if ((rc = conf_check_keys(x, m, kexec_keys, kwhere)) < 0 ||
	    (rc = conf_get_str(&w->append, x, m, "append", kwhere, 1)) < 0 ||
	    (rc = conf_get_str(&initrd, x, m, "initrd", kwhere, 1)) < 0 ||
	    (rc = conf_get_int(&ret, x, m, "return_timeout", kwhere, 10, 86400)) < 0 ||
	    (rc = conf_get_str(&good, x, m, "good_kernel", kwhere, 1)) < 0 ||
	    (rc = conf_get_str(&good_initrd, x, m, "good_initrd", kwhere, 1)) < 0 ||
	    (rc = conf_get_strv(&reboot, x, m, "reboot", kwhere, 0)) < 0)
		goto out;
	if ((good && good[0] != '/') || (good_initrd && good_initrd[0] != '/')) {
		rc = conf_at(x, ynode_get(m, good && good[0] != '/' ? "good_kernel" : "good_initrd"),
			     "'%s'%s must be an absolute path on the agent",
			     good && good[0] != '/' ? "good_kernel" : "good_initrd", kwhere);
		goto out;
	}
	if (good_initrd && !good) {
		rc = conf_at(x, ynode_get(m, "good_initrd"), "'good_initrd'%s goes with a good_kernel", kwhere);
		goto out;
	}
	if (reboot && (!reboot[0] || !reboot[0][0])) {
		rc = conf_at(x, ynode_get(m, "reboot"), "'reboot'%s must be a command (an argv), not empty", kwhere);
		goto out;
	}
	if (ynode_get(m, "append"))
		json_object_set_new(w->kexec, "append", json_string(w->append ? w->append : ""));
	if (initrd)
		json_object_set_new(w->kexec, "initrd", json_string(initrd));
	if (good)
		json_object_set_new(w->kexec, "good_kernel", json_string(good));
	if (good_initrd)
		json_object_set_new(w->kexec, "good_initrd", json_string(good_initrd));
	if (reboot) {
		json_t *a = json_array();

		for (char **p = reboot; *p; p++)
			json_array_append_new(a, json_string(*p));
		json_object_set_new(w->kexec, "reboot", a);
	}
done:
	json_object_set_new(w->kexec, "return_timeout", json_integer(ret));
	rc = 0;
out:
	free(initrd);
	free(good);
	free(good_initrd);
	strv_free(reboot);
	return rc;
}

/*
 * The boot methods with settings of their own in a mapping named after
 * them ("ssh:", "kexec:"), one line each: the mapping's reader, called
 * for a workload of that boot only (key: the workload's, for errors).
 */
static const struct boot_settings boot_settings[] = {
	{ "ssh", ssh_entry },
	{ "kexec", kexec_entry },
};

/* The settings of w's boot; refuses another method's mapping in w. NULL with *rc 0: none. */
const struct boot_settings *conf_boot_settings_of(int *rc, const struct conf_workload *w, const struct ctx *x,
						  const struct ynode *def, const char *where)
{
	const struct boot_settings *mine = NULL;

	*rc = 0;
	for (size_t i = 0; i < sizeof(boot_settings) / sizeof(boot_settings[0]); i++) {
		const struct ynode *m = ynode_get(def, boot_settings[i].boot);

		if (!strcmp(boot_settings[i].boot, w->boot))
			mine = &boot_settings[i];
		else if (m && !*rc)
			*rc = conf_at(x, m, "'%s'%s holds the settings of boot %s, not of boot %s",
				      boot_settings[i].boot, where, boot_settings[i].boot, w->boot);
	}
	return *rc ? NULL : mine;
}

/* The settings of a boot into the built kernel, flat or in a 'qemu' mapping. */
int conf_guest_boot_entry(struct conf_workload *w, const struct ctx *x, const struct ynode *def,
			  const char *where)
{
	const struct ynode *q = ynode_get(def, "qemu");
	char qwhere[160];
	int rc;

	if ((rc = qemu_settings(w, x, def, where)) < 0 || (rc = kernel_entry(w, x, def, where)) < 0)
		return rc;
	if (q && !ynode_is_null(q)) {
		if (q->kind != YNODE_MAP)
			return conf_at(x, q, "'qemu'%s must be a mapping of keys, not %s", where,
				       ynode_kind_name(q->kind));
		snprintf(qwhere, sizeof(qwhere), " in the qemu settings of workload '%s'", w->name);
		if ((rc = conf_check_keys(x, q, qemu_keys, qwhere)) < 0 ||
		    (rc = qemu_settings(w, x, q, qwhere)) < 0)
			return rc;
	}
	return 0;
}
