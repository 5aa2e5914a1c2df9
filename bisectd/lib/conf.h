/*
 * conf: the YAML configuration of bisectd (etc/bisectd.yaml) and of an
 * agent (etc/agent.yaml), parsed into structs that start from defaults.
 *
 * Unknown keys, wrong types and missing required values are errors whose
 * message starts with "FILE:LINE:COLUMN: " (1-based) and names the key.
 */
#ifndef BISECT_CONF_H
#define BISECT_CONF_H

#include <stddef.h>

#include <jansson.h>

struct conf_repo {
	char *name;
	char *url;        /* a URL or a local path libgit2 can clone from */
};

enum workload_direction { DIR_HIGHER = 0, DIR_LOWER = 1 }; /* which is better */

/*
 * A workload's kernel build: base config plus named fragments, which the
 * coordinator reads from its kconfig_dir when it loads the config and
 * sends to the agents with each task, so that every agent builds the
 * same configuration and names it with the same hash.
 */
struct conf_kernel {
	char *base;          /* "tinyconfig" (default), "defconfig", "allnoconfig", or a .config file */
	char *base_text;     /* that file's content; NULL when base is a make target */
	char **fragments;    /* names ("udp" is kconfig_dir/udp.config), NULL-terminated, may be empty */
	char **fragment_text; /* their content, in the same order */
	char *target;        /* what make builds, "bzImage" */
	char **make_args;    /* extra make arguments ("LLVM=1"), NULL-terminated, may be empty */
};

/*
 * A workload: how an agent builds a commit and measures it. Commands are
 * argv arrays from the coordinator's config, never shell strings from a
 * submitter. What a kind of workload (its "type") measures, and its own
 * keys, belong to its file in agents/workloads/ (workload.h), which checks
 * them here at load time through the same table the agents use.
 */
struct conf_workload {
	char *name;
	char *type;          /* a kind of workload_find(): "command" (default), "iperf3", "pktgen" */
	char *boot;          /* a boot method of conf_boot_places(): "none" (default), "qemu", "ssh" */
	char **build;        /* argv, NULL-terminated; NULL: nothing to build */
	struct conf_kernel *kernel; /* a kernel build in place of build; NULL: none (a guest boot only) */
	char *unit;          /* the metric's unit: "ops/s" by default, or the kind's own (its metric) */
	enum workload_direction direction; /* "higher" (default) or "lower" is better */
	int build_timeout;   /* seconds, default 1800 */
	int run_timeout;     /* seconds per run, default 300 */
	int profile;         /* `profile: true`: perf profiles of the culprit and its parent (default 0) */

	/* A boot into the built kernel (qemu): flat keys or the same keys in a 'qemu' mapping. */
	char *kernel_image;  /* the built image, relative to the work tree (build) or to the build
			      * output (kernel): "arch/x86/boot/bzImage" */
	int memory_mb;       /* guest memory, default 512 */
	int cpus;            /* guest CPUs, default 2 */
	char *append;        /* extra kernel command line ("mitigations=off"); NULL: none */
	int boot_timeout;    /* seconds from QEMU's start to the guest's READY, default 120 */
	/* Boot kexec's 'kexec' mapping as the agent reads it (agents/boot/kexec.c); NULL for other boots. */
	json_t *kexec;

	/* The kind's own keys (its ops->keys), checked, defaults filled in; owned. */
	json_t *params;
	/* boot ssh: the 'ssh' mapping as the definition's "ssh" object (docs/LAB.md); NULL otherwise. */
	json_t *ssh;
};

/*
 * The workloads the boot method of that name runs, WORKLOAD_HOST or
 * WORKLOAD_GUEST (workload.h), from the one table of boot methods
 * (agents/boot/methods.c); 0 for a name that is none.
 */
int conf_boot_places(const char *name);

/*
 * The definition an agent runs for w (the "workload" of a claim reply,
 * taskwire.h): the common keys, the boot's settings and the kind's own.
 * append (may be NULL) is the job's variant, after the workload's own
 * append. A new object, the caller's.
 */
json_t *conf_workload_def(const struct conf_workload *w, const char *append);

/*
 * conf_workload_def() with the job's kernel config variant too: config
 * (a JSON array of "CONFIG_X=value" strings; NULL or empty: none) goes
 * into the definition's "kernel" object as its "config", which the agent
 * merges after the fragments (kbuild.h). Only for a w with a kernel build.
 */
json_t *conf_workload_def_job(const struct conf_workload *w, const char *append, json_t *config);

struct conf_pool {
	char *name;
	char **labels;       /* NULL-terminated; an agent is in the pool when it has them all */
};

/*
 * Who may call the API (docs/API.md, "Authentication"). In the YAML:
 * "auth: none" (no checks), "auth: token" (the default), or a mapping of
 * the keys below (mode, read, admin_token_file, secret_file,
 * max_failures, failure_window).
 */
struct conf_auth {
	int none;              /* 1: no token checks at all */
	int read_open;         /* 1 (default): GETs need no token; 0: any valid token */
	char *admin_token_file; /* where the first admin token is written; NULL: DATABASE.admin-token */
	char *secret_file;     /* the key tokens are hashed with; NULL: DATABASE.key */
	int max_failures;      /* failed authentications per address in a window before 429; 10 */
	int failure_window;    /* seconds, 60 */
};

struct conf_bisectd {
	char *listen;        /* "127.0.0.1:7878" by default */
	char *database;      /* "bisectd.db" by default */
	char *mirrors;       /* directory of the repo mirrors, "mirrors" by default */
	char *kconfig_dir;   /* the kernel config fragments; "kconfig" beside the config file by default */
	char *log_level;     /* "info" */
	int lease_seconds;   /* 60: a claimed task goes back to the queue this long after the last heartbeat */
	int lease_grace_seconds; /* the lease: no lease expires this long after start-up, so agents can re-announce */
	int agent_retire_seconds; /* 86400: an agent not seen this long is retired; at least 3 leases */
	size_t max_body;     /* 1 MiB: bound on a request body */
	int default_runs;    /* 5: runs per commit when a job does not say */
	char *charts;        /* directory of the rendered charts' cache; default: charts/ beside the database */
	char *gnuplot;       /* the program that draws them, "gnuplot" (looked up in PATH) by default */
	int chart_timeout;   /* seconds one drawing may take, 30 by default */
	/* The HTTP server (http.h): */
	int threads;         /* its pool, CONF_THREADS_DEFAULT */
	int max_connections; /* CONF_MAX_CONNECTIONS_DEFAULT open at once, parked long polls included */
	int max_per_address; /* CONF_MAX_PER_ADDRESS_DEFAULT from one client address */
	int idle_timeout;    /* seconds an idle connection stays open, 120; longer than the longest claim wait */
	char *tls_cert;      /* PEM certificate (chain) file; NULL (default): plain HTTP */
	char *tls_key;       /* its PEM private key; set with tls_cert or not at all */
	struct conf_auth auth;
	struct conf_repo *repos;
	size_t nr_repos;
	struct conf_workload *workloads;
	size_t nr_workloads;
	struct conf_pool *pools;
	size_t nr_pools;
};

struct conf_agent {
	char *coordinator;   /* base URL, "http://127.0.0.1:7878" by default */
	char *name;          /* required */
	char **labels;       /* NULL-terminated, may be empty */
	char *workdir;       /* required */
	char *log_level;     /* "info" */
	int heartbeat;       /* seconds between heartbeats, default 5 */
	int poll_wait;       /* seconds a claim long-polls, default 20 */
	int cpu;             /* CPU to pin workload runs to; -1 (default): none */
	char *measure_lock;  /* a file locked around measuring, shared by the agents of one host; NULL: none */
	char *build_lock;    /* a file locked around building, so the agents of one host build in turn
			      * (a second build then finds the first's objects in ccache); NULL: none */
	int build_jobs;      /* make -j of kernel builds; 0 (default): the CPUs online */
	char *ca_file;       /* PEM CA certificates an https coordinator's certificate must chain to;
			      * NULL (default): the system's store */
	long long kcache_max; /* bytes of built kernels kept (workdir/kcache), least recently used go
			       * first; 0: no limit. Default KCACHE_MAX_DEFAULT */
	char *enrol_token_file; /* an enrolment token, used once when workdir has no agent.token; NULL: none */
	char *token_file;    /* this agent's own token, instead of enrolling; NULL: workdir/agent.token */
};

#define KCACHE_MAX_DEFAULT (20LL << 30)
#define CONF_THREADS_DEFAULT 4
#define CONF_MAX_CONNECTIONS_DEFAULT 10000
#define CONF_MAX_PER_ADDRESS_DEFAULT 1024
/* api.c's longest claim wait: an idle connection must outlive it. */
#define CONF_MAX_CLAIM_WAIT 60

/* Parse path into c (which it initialises). On error c holds nothing to free. */
int conf_bisectd_load(struct conf_bisectd *c, const char *path);
/* Same from a string; name is used in messages in place of the file name. */
int conf_bisectd_parse(struct conf_bisectd *c, const char *name, const char *text, size_t len);
void conf_bisectd_release(struct conf_bisectd *c);

int conf_agent_load(struct conf_agent *c, const char *path);
int conf_agent_parse(struct conf_agent *c, const char *name, const char *text, size_t len);
void conf_agent_release(struct conf_agent *c);

/* Look-ups by name; NULL when absent. Borrowed. */
const struct conf_repo *conf_repo_find(const struct conf_bisectd *c, const char *name);
const struct conf_workload *conf_workload_find(const struct conf_bisectd *c, const char *name);
const struct conf_pool *conf_pool_find(const struct conf_bisectd *c, const char *name);

/* 1 when every label of the pool is among labels (NULL-terminated). */
int conf_pool_matches(const struct conf_pool *p, char *const *labels);

void strv_free(char **v);
size_t strv_len(char *const *v);

#endif
