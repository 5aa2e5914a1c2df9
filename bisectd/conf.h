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
 * submitter.
 */
struct conf_workload {
	char *name;
	char *type;          /* "command" (default), "iperf3" or "pktgen" (these two need boot qemu) */
	char *boot;          /* boot method: "none" (default) or "qemu" (type iperf3 or pktgen) */
	char **build;        /* argv, NULL-terminated; NULL: nothing to build */
	struct conf_kernel *kernel; /* a kernel build in place of build; NULL: none */
	char **command;      /* argv run once per run; required for type command */
	char *pattern;       /* POSIX extended regex, first group is the metric; required for command */
	char *unit;          /* "ops/s" by default */
	enum workload_direction direction; /* "higher" (default) or "lower" is better */
	int build_timeout;   /* seconds, default 1800 */
	int run_timeout;     /* seconds per run, default 300 */

	/* boot qemu: flat keys or the same keys in a 'qemu' mapping. */
	char *kernel_image;  /* the built image, relative to the work tree (build) or to the build
			      * output (kernel): "arch/x86/boot/bzImage" */
	int memory_mb;       /* guest memory, default 512 */
	int cpus;            /* guest CPUs, default 2 */
	char *append;        /* extra kernel command line ("mitigations=off"); NULL: none */
	int boot_timeout;    /* seconds from QEMU's start to the guest's READY, default 120 */

	/* type iperf3 (client over the guest's loopback) and pktgen. */
	char **iperf3;       /* client options (conf_iperf3_parse()); NULL: TCP, 10 s, 1 stream */
	char *metric;        /* iperf3: "KBytes/s" (default), "bits/s", ...; pktgen: "pps" (default) or "Mb/s" */
	long count;          /* pktgen: packets per run, default 200000 */
	int pkt_size;        /* pktgen: bytes, default 60 */
	int clsact_bpf;      /* pktgen: clsact qdisc + egress bpf filter first (needs tc), default false */
};

/*
 * The iperf3 client options a workload may give, parsed from an argv:
 * -u/--udp, -4, -6, -R/--reverse, -t/--time S, -P/--parallel N,
 * -l/--length BYTES, -b/--bitrate RATE (digits with K/M/G), -O/--omit S,
 * -p/--port N. Anything else is ERR_INVALID naming the option; *bad
 * (may be NULL) gets the index of the offending element.
 */
struct conf_iperf3 {
	int udp, ipv6, reverse;
	int time_s, streams, length, omit_s, port; /* 0: iperf3's default */
	char bitrate[24];    /* "" when not given */
};
int conf_iperf3_parse(struct conf_iperf3 *o, size_t *bad, char *const *argv);

struct conf_pool {
	char *name;
	char **labels;       /* NULL-terminated; an agent is in the pool when it has them all */
};

struct conf_bisectd {
	char *listen;        /* "127.0.0.1:7878" by default */
	char *database;      /* "bisectd.db" by default */
	char *mirrors;       /* directory of the repo mirrors, "mirrors" by default */
	char *kconfig_dir;   /* the kernel config fragments; "kconfig" beside the config file by default */
	char *log_level;     /* "info" */
	int lease_seconds;   /* 60: a claimed task goes back to the queue this long after the last heartbeat */
	size_t max_body;     /* 1 MiB: bound on a request body */
	int default_runs;    /* 5: runs per commit when a job does not say */
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
	long long kcache_max; /* bytes of built kernels kept (workdir/kcache), least recently used go
			       * first; 0: no limit. Default KCACHE_MAX_DEFAULT */
};

#define KCACHE_MAX_DEFAULT (20LL << 30)

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
