/*
 * conf_internal: what the config readers share (conf.c and conf_*.c): the
 * context of a file being read, the typed readers of a mapping's keys,
 * and the calls one room makes into another. The rooms stand in layers,
 * each calling only those below it: conf_read.c (a mapping's keys, typed
 * and placed), conf_boot.c (a workload's kernel build and boot),
 * conf_workload.c (a workload), conf.c (bisectd.yaml and agent.yaml).
 */
#ifndef BISECT_CONF_INTERNAL_H
#define BISECT_CONF_INTERNAL_H

#include "conf.h"
#include "util.h"
#include "yamltree.h"

#define CONF_MAX_BYTES (1 << 20)
#define NAME_MAX_LEN 64
/* glibc's cpu_set_t holds CPU_SETSIZE (1024) CPUs; run.c pins with one. */
#define MAX_CPU 1023

/* The file name for messages and the position of the mapping being read. */
struct ctx {
	const char *name;
	const struct ynode *root;
	const char *kconfig_dir; /* where kernel fragments are read from */
};

typedef int (*entry_fn)(const struct ctx *x, void *elem, const struct ynode *key,
			const struct ynode *def);

/* A boot method with settings of its own in a mapping named after it (conf_boot_settings_of()). */
struct boot_settings {
	const char *boot;
	int (*entry)(struct conf_workload *w, const struct ctx *x, const struct ynode *def, const struct ynode *key,
		     const char *where);
};

/* conf_read.c: a mapping's keys, typed and placed */
__attribute__((format(printf, 3, 4)))
int conf_at(const struct ctx *x, const struct ynode *n, const char *fmt, ...);
int conf_check_keys(const struct ctx *x, const struct ynode *map, const char *const *allowed,
		    const char *where);
int conf_name_ok(const char *s, size_t len, const char *extra);
int conf_get_str(char **dst, const struct ctx *x, const struct ynode *map, const char *key,
		 const char *where, int allow_null);
int conf_get_ll(long long *dst, const struct ctx *x, const struct ynode *map, const char *key,
		const char *where, long long min, long long max);
int conf_get_int(int *dst, const struct ctx *x, const struct ynode *map, const char *key,
		 const char *where, int min, int max);
int conf_get_size(long long *dst, const struct ctx *x, const struct ynode *map, const char *key,
		  const char *where);
int conf_get_bool(int *dst, const struct ctx *x, const struct ynode *map, const char *key,
		  const char *where);
int conf_get_strv(char ***dst, const struct ctx *x, const struct ynode *map, const char *key,
		  const char *where, int is_label);
const struct ynode *conf_root_map(const struct ctx *x, int *rc);
int conf_load_section(void **out, size_t *nr, const struct ctx *x, const struct ynode *root,
		      const char *section, const char *what, size_t elem_size, entry_fn fn);
int conf_one_of(const char *s, const char *const *list);

/* conf_boot.c: a workload's kernel build and its boot */
void conf_kernel_free(struct conf_kernel *k);
void conf_names_list(struct sbuf *sb, int boots, int places, int quote);
int conf_kernel_boot_entry(struct conf_workload *w, const struct ctx *x, const struct ynode *def,
			   const char *where);
const struct boot_settings *conf_boot_settings_of(int *rc, const struct conf_workload *w, const struct ctx *x,
						  const struct ynode *def, const char *where);
int conf_guest_boot_entry(struct conf_workload *w, const struct ctx *x, const struct ynode *def,
			  const char *where);

/* conf_workload.c: a workload */
int conf_workload_entry(const struct ctx *x, void *elem, const struct ynode *key,
			const struct ynode *def);

#endif
