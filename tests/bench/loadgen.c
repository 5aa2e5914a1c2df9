/*
 * loadgen: a seeded load injector for the real-lab benchmark and the
 * noise recorder. It switches CPU hogs (forked busy loops, each pinned to
 * one core) on and off at random intervals, or keeps them on (--steady),
 * for a bounded time, and leaves no child behind: the hogs live in
 * loadgen's process group, die with it (PR_SET_PDEATHSIG), and are killed
 * and reaped on every way out.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rng.h"
#include "util.h"

#define MAX_CORES 256
#define MAX_HOGS 64

struct range {
	double lo, hi;              /* seconds */
};

struct hog {
	pid_t pid;                  /* 0 while off */
	int core;
	int64_t next_ms;            /* when it switches, since start */
};

struct loadgen_opts {
	uint64_t seed;
	double duration;
	int cores[MAX_CORES];
	int nr_cores;
	struct range on, off;
	int nr_hogs;
	int steady;
	int nice;
	const char *log;
};

static volatile sig_atomic_t stop_sig;
static volatile uint64_t hog_sink;       /* keeps the busy loop from being optimised out */

static void on_signal(int sig)
{
	stop_sig = sig;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: loadgen --seed S --duration SEC [--cores LIST] [--on MIN-MAX] [--off MIN-MAX]\n"
		"               [--hogs N] [--steady] [--nice N] [--log FILE]\n"
		"\n"
		"Switches CPU hogs (busy loops pinned to one core each) on and off at random\n"
		"intervals for SEC seconds, then stops them all and exits 0; SIGTERM or SIGINT\n"
		"stops them at once.\n"
		"\n"
		"  --seed S        the schedule's seed (the same seed, the same schedule)\n"
		"  --duration SEC  hard bound on the whole run (seconds, > 0)\n"
		"  --cores LIST    cores a hog may be pinned to: 0,1 or 0-3 (default: every\n"
		"                  core loadgen may run on)\n"
		"  --on MIN-MAX    seconds a hog stays on, uniform (default 1-8)\n"
		"  --off MIN-MAX   seconds a hog stays off, uniform (default 1-8)\n"
		"  --hogs N        hogs switching independently, each on a random core of\n"
		"                  LIST whenever it comes on (default 1; --steady: one per\n"
		"                  core of LIST)\n"
		"  --steady        hogs always on, hog i on core i of LIST\n"
		"  --nice N        the hogs' nice value (default 0)\n"
		"  --log FILE      one line per switch: \"t_ms core on|off\"\n");
}

/* "0,1,4-6" into cores[]; -1 on a malformed list. */
static int parse_cores(struct loadgen_opts *o, const char *s)
{
	const char *p = s;

	o->nr_cores = 0;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p || a < 0 || a >= CPU_SETSIZE)
			return -1;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a || b >= CPU_SETSIZE)
				return -1;
			p = end;
		}
		for (long c = a; c <= b; c++) {
			if (o->nr_cores == MAX_CORES)
				return -1;
			o->cores[o->nr_cores++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	return o->nr_cores > 0 ? 0 : -1;
}

/* "MIN-MAX" or "SEC" in seconds. */
static int parse_range(struct range *r, const char *s)
{
	char *end;

	r->lo = strtod(s, &end);
	if (end == s || r->lo < 0)
		return -1;
	if (*end == '-') {
		const char *q = end + 1;

		r->hi = strtod(q, &end);
		if (end == q)
			return -1;
	} else {
		r->hi = r->lo;
	}
	return *end || r->hi < r->lo || r->hi > 86400 ? -1 : 0;
}

static int default_cores(struct loadgen_opts *o)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -1;
	o->nr_cores = 0;
	for (int c = 0; c < CPU_SETSIZE && o->nr_cores < MAX_CORES; c++)
		if (CPU_ISSET(c, &set))
			o->cores[o->nr_cores++] = c;
	return o->nr_cores > 0 ? 0 : -1;
}

static int64_t interval_ms(struct rng *r, const struct range *x)
{
	double s = x->lo + (x->hi - x->lo) * rng_uniform(r);

	return (int64_t)(s * 1000 + 0.5);
}

static void log_switch(FILE *log, int64_t t, int core, const char *what)
{
	if (!log)
		return;
	fprintf(log, "%lld %d %s\n", (long long)t, core, what);
	fflush(log);
}

/* The child: pinned to its core, dead with its parent, busy until killed. */
static void __attribute__((noreturn)) hog_loop(pid_t parent, int core, int nice_val)
{
	struct sigaction sa;
	sigset_t none;
	cpu_set_t set;
	uint64_t z = (uint64_t)core + 1;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(1);
	CPU_ZERO(&set);
	CPU_SET(core, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		_exit(1);
	if (nice_val)
		setpriority(PRIO_PROCESS, 0, nice_val);
	for (;;) {
		z = (z ^ (z >> 31)) * 0x9e3779b97f4a7c15ULL;
		hog_sink = z;
	}
}

static int hog_on(struct hog *h, int core, int nice_val)
{
	pid_t parent = getpid(), pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0)
		hog_loop(parent, core, nice_val);
	h->pid = pid;
	h->core = core;
	return 0;
}

static void hog_off(struct hog *h)
{
	if (!h->pid)
		return;
	kill(h->pid, SIGKILL);
	while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
		;
	h->pid = 0;
}

static int parse_args(struct loadgen_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ "cores", required_argument, NULL, 'c' },
		{ "on", required_argument, NULL, 'o' },
		{ "off", required_argument, NULL, 'f' },
		{ "hogs", required_argument, NULL, 'n' },
		{ "steady", no_argument, NULL, 'S' },
		{ "nice", required_argument, NULL, 'N' },
		{ "log", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, have_seed = 0, have_cores = 0;
	char *end;

	o->on = (struct range){ 1, 8 };
	o->off = (struct range){ 1, 8 };
	o->nr_hogs = -1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			o->seed = strtoull(optarg, &end, 0);
			if (end == optarg || *end)
				goto bad;
			have_seed = 1;
			break;
		case 'd':
			o->duration = strtod(optarg, &end);
			if (end == optarg || *end || !(o->duration > 0) || o->duration > 7 * 86400)
				goto bad;
			break;
		case 'c':
			if (parse_cores(o, optarg) < 0)
				goto bad;
			have_cores = 1;
			break;
		case 'o':
			if (parse_range(&o->on, optarg) < 0 || o->on.hi <= 0)
				goto bad;
			break;
		case 'f':
			if (parse_range(&o->off, optarg) < 0)
				goto bad;
			break;
		case 'n':
			o->nr_hogs = (int)strtol(optarg, &end, 10);
			if (end == optarg || *end || o->nr_hogs < 1 || o->nr_hogs > MAX_HOGS)
				goto bad;
			break;
		case 'S':
			o->steady = 1;
			break;
		case 'N':
			o->nice = (int)strtol(optarg, &end, 10);
			if (end == optarg || *end || o->nice < -20 || o->nice > 19)
				goto bad;
			break;
		case 'l':
			o->log = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "loadgen: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (!(o->duration > 0) || (!have_seed && !o->steady)) {
		fprintf(stderr, "loadgen: --duration and --seed are required (--seed may be left out with --steady)\n");
		return -1;
	}
	if (!have_cores && default_cores(o) < 0) {
		fprintf(stderr, "loadgen: cannot read the CPUs this process may use\n");
		return -1;
	}
	if (o->nr_hogs < 0)
		o->nr_hogs = o->steady ? (o->nr_cores < MAX_HOGS ? o->nr_cores : MAX_HOGS) : 1;
	return 0;
bad:
	fprintf(stderr, "loadgen: bad value '%s'\n", optarg);
	usage(stderr);
	return -1;
}

/*
 * Sleeps until t_ms (since start) or a signal, whichever comes first:
 * SIGTERM and SIGINT are blocked outside ppoll, so none is lost between
 * the check of stop_sig and the sleep.
 */
static void sleep_until(int64_t start, int64_t t_ms, const sigset_t *waitmask)
{
	int64_t d = t_ms - (now_ms() - start);
	struct timespec ts;

	if (d <= 0 || stop_sig)
		return;
	ts.tv_sec = d / 1000;
	ts.tv_nsec = (d % 1000) * 1000000;
	ppoll(NULL, 0, &ts, waitmask);
}

int main(int argc, char **argv)
{
	struct loadgen_opts o;
	struct hog hogs[MAX_HOGS];
	struct sigaction sa;
	sigset_t block, waitmask;
	struct rng r;
	FILE *log = NULL;
	int64_t start, end_ms;
	int rc = 0;

	memset(&o, 0, sizeof(o));
	memset(hogs, 0, sizeof(hogs));
	if (parse_args(&o, argc, argv) < 0)
		return 2;
	if (o.log && !(log = fopen(o.log, "w"))) {
		fprintf(stderr, "loadgen: %s: %s\n", o.log, strerror(errno));
		return 1;
	}

	/* A group of its own, so that a caller can kill loadgen and its hogs at once. */
	if (getpgrp() != getpid())
		setpgid(0, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGHUP);

	rng_seed(&r, o.seed);
	start = now_ms();
	end_ms = (int64_t)(o.duration * 1000);
	for (int i = 0; i < o.nr_hogs; i++) {
		if (o.steady) {
			hogs[i].core = o.cores[i % o.nr_cores];
			if (hog_on(&hogs[i], hogs[i].core, o.nice) < 0) {
				rc = 1;
				goto out;
			}
			log_switch(log, 0, hogs[i].core, "on");
			hogs[i].next_ms = end_ms;
		} else {
			/* Each hog starts somewhere in its first off interval. */
			hogs[i].next_ms = (int64_t)(rng_uniform(&r) * (double)interval_ms(&r, &o.off));
		}
	}

	while (!stop_sig) {
		int64_t t = now_ms() - start, next = end_ms;

		if (t >= end_ms)
			break;
		for (int i = 0; i < o.nr_hogs && !o.steady; i++) {
			struct hog *h = &hogs[i];

			if (h->next_ms > t)
				continue;
			if (h->pid) {
				log_switch(log, t, h->core, "off");
				hog_off(h);
				h->next_ms = t + interval_ms(&r, &o.off);
			} else {
				int core = o.cores[rng_below(&r, (uint64_t)o.nr_cores)];

				if (hog_on(h, core, o.nice) < 0) {
					fprintf(stderr, "loadgen: fork: %s\n", strerror(errno));
					rc = 1;
					goto out;
				}
				log_switch(log, t, core, "on");
				h->next_ms = t + interval_ms(&r, &o.on);
			}
		}
		for (int i = 0; i < o.nr_hogs; i++)
			if (hogs[i].next_ms < next)
				next = hogs[i].next_ms;
		sleep_until(start, next, &waitmask);
	}

out:
	for (int i = 0; i < o.nr_hogs; i++) {
		if (hogs[i].pid)
			log_switch(log, now_ms() - start, hogs[i].core, "off");
		hog_off(&hogs[i]);
	}
	/*
	 * Every hog is killed and reaped above; the group gets a SIGTERM too,
	 * in case a caller put other processes of its own in it.
	 */
	if (getpgrp() == getpid()) {
		signal(SIGTERM, SIG_IGN);
		kill(0, SIGTERM);
	}
	if (log)
		fclose(log);
	return rc;
}
