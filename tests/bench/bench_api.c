/*
 * bench-api: N simulated agents against one bisectd on loopback, for
 * `make bench-api` (tests/bench/bench-api.sh starts bisectd and reads
 * what this prints). One thread, epoll, raw HTTP/1.1 with keep-alive:
 * each agent holds two connections as bisect-agent does, one for its
 * claims and uploads, one for its heartbeats. An agent registers, then
 * long-polls for a task, heartbeats it once, uploads its samples, and
 * claims again; every few seconds it heartbeats whatever it does.
 *
 * The samples: a commit named in --bad measures 15% lower than one not
 * named, with 3% noise; --flaky makes every commit but the ends measure
 * like either, task by task, so that a job searches for a long time.
 * --samples K uploads K samples a task whatever it asked (the API's
 * limit is 1000), but at the ends when --good and --bad-end name them. With --submit the bench keeps a job running: it submits
 * one (the body given) at the start and again whenever it ended.
 *
 * It prints "key value" lines: counts, requests/s, p50/p99 of each kind
 * of request's service time (claims only when they handed out a task,
 * less the time bisectd says the claim waited parked for work: its
 * Server-Timing "wait"; an empty long poll waits by design; and the same
 * claims with their wait, claim_with_wait), samples/s, and with --bucket B the
 * rate of every B samples from the first, with its uploads' service
 * time, so that a slowing job shows. With --until it stops asking at
 * that many samples and waits for the uploads in flight, so that the
 * count it prints is what the store should hold.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rng.h"
#include "util.h"

enum kind { K_REGISTER, K_CLAIM, K_HEARTBEAT, K_UPLOAD, K_SUBMIT, K_POLL, NR_KINDS };
static const char *const kind_names[NR_KINDS] = { "register", "claim", "heartbeat", "upload", "submit",
						  "poll" };

enum cstate { C_CLOSED, C_CONNECTING, C_IDLE, C_SENDING, C_READING };

struct conn {
	int fd;
	enum cstate st;
	int agent;                /* -1: the submitter's */
	int role;                 /* 0 claims and uploads, 1 heartbeats */
	enum kind kind;
	char *out;
	size_t out_len, out_off;
	char *in;
	size_t in_len, in_cap;
	double sent;              /* when the request went out */
	double wake;              /* the next request, when idle */
};

struct agent {
	char name[32];
	int registered;
	long long task, attempt;
	int runs, bad;
	int at_end;               /* the task is at one of the ends (--good, --bad-end) */
	int heartbeat_due;        /* a heartbeat of the task before its upload */
};

struct lat {
	double *v;
	size_t n, cap;
};

static struct opts {
	const char *host;
	int port;
	int agents;
	double seconds;
	int wait;
	double heartbeat;
	int samples;
	long long until;
	long long bucket;
	int flaky;
	const char *bad_file;
	const char *submit;
	uint64_t seed;
	const char *good, *bad_end;  /* the ends' ids, for --flaky */
	int once;                    /* submit one job, not another when it ended */
} o = { "127.0.0.1", 0, 50, 20, 5, 5, 0, 0, 0, 0, NULL, NULL, 1, NULL, NULL, 0 };

static struct conn *conns;
static int nconns;
static struct agent *agents;
static struct lat lat[NR_KINDS];
/* Claims that handed out a task, waiting included: the long poll's wait, then the service. */
static struct lat claim_total, claim_server;  /* with the wait; the server's own "svc" */
static long long counts[NR_KINDS], errors[NR_KINDS], status_409, claims_empty, connect_errors;
static long long samples_sent, samples_dup, uploads_ok;
static double *bucket_t;
static long long nr_buckets;
static size_t *bucket_lat;
static double *upload_order;    /* the uploads' service times in the order they came */      /* uploads in lat[K_UPLOAD] when each bucket closed */
static char **bad;
static size_t nr_bad;
static int epfd;
static struct rng rng;
static long long job_id;
static int job_running;
static double t0;
static volatile sig_atomic_t stopped;
static int draining;           /* the end came: no new requests, the uploads in flight answered */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void lat_add(struct lat *l, double v)
{
	l->v = xgrow(l->v, l->n, &l->cap, sizeof(*l->v));
	l->v[l->n++] = v;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(struct lat *l, double p)
{
	size_t i;

	if (l->n == 0)
		return NAN;
	qsort(l->v, l->n, sizeof(*l->v), cmp_dbl);
	i = (size_t)(p * (double)(l->n - 1) + 0.5);
	return l->v[i];
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void load_bad(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[128];
	size_t cap = 0;

	if (!f) {
		fprintf(stderr, "bench-api: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = 0;
		if (!line[0])
			continue;
		bad = xgrow(bad, nr_bad, &cap, sizeof(*bad));
		bad[nr_bad++] = xstrdup(line);
	}
	fclose(f);
	qsort(bad, nr_bad, sizeof(*bad), cmp_str);
}

static int is_bad(const char *sha)
{
	return sha && bsearch(&sha, bad, nr_bad, sizeof(*bad), cmp_str) != NULL;
}

static void ep_set(struct conn *c, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.u32 = (uint32_t)(c - conns) };

	if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &e) < 0)
		epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &e);
}

static void conn_close(struct conn *c, double retry)
{
	if (c->fd >= 0) {
		epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
	}
	c->fd = -1;
	c->st = C_CLOSED;
	free(c->out);
	c->out = NULL;
	c->in_len = 0;
	c->wake = now_s() + retry;
}

static int conn_open(struct conn *c)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)o.port) };
	int one = 1;

	inet_pton(AF_INET, o.host, &sa.sin_addr);
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		connect_errors++;
		conn_close(c, 1);
		return -1;
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
		connect_errors++;
		conn_close(c, 1);
		return -1;
	}
	c->st = C_CONNECTING;
	ep_set(c, EPOLLOUT);
	return 0;
}

/* Queues a request on c; sent once connected. */
static void request(struct conn *c, enum kind k, const char *method, const char *path, const char *body)
{
	size_t blen = body ? strlen(body) : 0;

	free(c->out);
	c->out = xasprintf("%s %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
			   "Content-Length: %zu\r\n\r\n%s", method, path, o.host, o.port, blen, body ? body : "");
	c->out_len = strlen(c->out);
	c->out_off = 0;
	c->kind = k;
	c->in_len = 0;
	c->sent = now_s();
	c->wake = 0;
	if (c->st == C_CLOSED) {
		if (conn_open(c))
			return;
	} else {
		c->st = C_SENDING;
		ep_set(c, EPOLLOUT);
	}
}

/* --samples at a commit between the ends (all of them when the ends are not given); the task's runs at an end. */
static int samples_of(const struct agent *a)
{
	return o.samples > 0 && !a->at_end ? o.samples : a->runs;
}

static char *upload_body(struct agent *a)
{
	struct sbuf b = SBUF_INIT;
	int n = samples_of(a);

	sbuf_addf(&b, "{\"agent\": \"%s\", \"attempt\": %lld, \"status\": \"ok\", \"samples\": [", a->name,
		  a->attempt);
	for (int i = 0; i < n; i++) {
		double mu = a->bad ? 850 : 1000;

		sbuf_addf(&b, "%s{\"value\": %.3f}", i ? ", " : "", mu * (1 + 0.03 * rng_normal(&rng)));
	}
	sbuf_addf(&b, "], \"build_seconds\": 1.0, \"run_seconds\": %d.0}", n);
	return sbuf_detach(&b);
}

/* What agent a does next on its connection role 0: register, claim or upload. */
static void agent_next(int ai)
{
	struct agent *a = &agents[ai];
	struct conn *c = &conns[2 * ai];
	char path[160], *body;

	if (stopped || draining)
		return;
	if (!a->registered) {
		body = xasprintf("{\"name\": \"%s\", \"labels\": [\"lab\"]}", a->name);
		request(c, K_REGISTER, "POST", "/api/v1/agents/register", body);
		free(body);
	} else if (a->task && a->heartbeat_due) {
		a->heartbeat_due = 0;
		body = xasprintf("{\"task\": %lld, \"attempt\": %lld, \"progress\": \"running\"}", a->task, a->attempt);
		snprintf(path, sizeof(path), "/api/v1/agents/%s/heartbeat", a->name);
		request(c, K_HEARTBEAT, "POST", path, body);
		free(body);
	} else if (a->task) {
		body = upload_body(a);
		snprintf(path, sizeof(path), "/api/v1/tasks/%lld/result", a->task);
		request(c, K_UPLOAD, "POST", path, body);
		free(body);
	} else {
		snprintf(path, sizeof(path), "/api/v1/agents/%s/claim?wait=%d", a->name, o.wait);
		request(c, K_CLAIM, "POST", path, "{}");
	}
}

static void heartbeat_next(int ai)
{
	struct agent *a = &agents[ai];
	struct conn *c = &conns[2 * ai + 1];
	char path[160], *body;

	if (stopped || draining || !a->registered)
		return;
	if (a->task)
		body = xasprintf("{\"task\": %lld, \"attempt\": %lld}", a->task, a->attempt);
	else
		body = xstrdup("{}");
	snprintf(path, sizeof(path), "/api/v1/agents/%s/heartbeat", a->name);
	request(c, K_HEARTBEAT, "POST", path, body);
	free(body);
}

static void submitter_next(void)
{
	struct conn *c = &conns[nconns - 1];
	char path[64];

	if (stopped || draining || !o.submit)
		return;
	if (!job_running && job_id && o.once)
		return;
	if (!job_running) {
		request(c, K_SUBMIT, "POST", "/api/v1/jobs", o.submit);
	} else {
		snprintf(path, sizeof(path), "/api/v1/jobs/%lld", job_id);
		request(c, K_POLL, "GET", path, NULL);
	}
}

static void bucket_mark(void)
{
	if (o.bucket <= 0)
		return;
	while ((nr_buckets + 1) * o.bucket <= samples_sent && nr_buckets < 1000) {
		bucket_lat[nr_buckets] = lat[K_UPLOAD].n;
		bucket_t[nr_buckets++] = now_s();
	}
}

/*
 * A whole response on c: status, body, the seconds the server says it
 * kept the request parked (Server-Timing "wait"), which a claim's service
 * time leaves out, and the seconds it says it served it in ("svc"; < 0:
 * not said).
 */
static void on_response(struct conn *c, int status, const char *body, double waited, double served)
{
	double t = now_s(), dt = t - c->sent;
	enum kind k = c->kind;
	json_t *j = body && *body ? json_loads(body, 0, NULL) : NULL;

	counts[k]++;
	c->st = C_IDLE;
	ep_set(c, EPOLLIN);
	if (c->agent < 0) {
		if (k == K_SUBMIT && status == 201) {
			job_id = json_integer_value(json_object_get(j, "id"));
			job_running = 1;
		} else if (k == K_POLL && status == 200) {
			const char *st = json_string_value(json_object_get(j, "state"));

			job_running = st && (!strcmp(st, "queued") || !strcmp(st, "running"));
		} else {
			errors[k]++;
		}
		c->wake = t + (job_running ? 1.0 : 0.2);
		json_decref(j);
		return;
	}
	if (c->role == 1) {
		if (status == 200)
			lat_add(&lat[K_HEARTBEAT], dt);
		else
			errors[K_HEARTBEAT]++;
		c->wake = t + o.heartbeat * (0.8 + 0.4 * rng_uniform(&rng));
		json_decref(j);
		return;
	}
	{
		struct agent *a = &agents[c->agent];

		c->wake = t;
		if (k == K_REGISTER) {
			if (status == 200)
				a->registered = 1;
			else
				errors[k]++, c->wake = t + 1;
			if (status == 200 && conns[2 * c->agent + 1].st == C_CLOSED)
				conns[2 * c->agent + 1].wake = t + o.heartbeat * rng_uniform(&rng);
		} else if (k == K_CLAIM) {
			if (status == 200) {
				const char *sha = json_string_value(json_object_get(j, "commit"));

				lat_add(&claim_total, dt);
				if (served >= 0)
					lat_add(&claim_server, served);
				lat_add(&lat[K_CLAIM], dt - waited > 0 ? dt - waited : 0);
				a->task = json_integer_value(json_object_get(j, "task"));
				a->attempt = json_integer_value(json_object_get(j, "attempt"));
				a->runs = (int)json_integer_value(json_object_get(j, "runs"));
				a->bad = is_bad(sha);
				a->at_end = sha && ((o.good && !strcmp(sha, o.good)) || (o.bad_end && !strcmp(sha, o.bad_end)));
				/* Flaky: a commit between the ends measures like either, task by task. */
				if (o.flaky && sha && o.good && o.bad_end && strcmp(sha, o.good) && strcmp(sha, o.bad_end))
					a->bad = rng_below(&rng, 2) == 0;
				a->heartbeat_due = 1;
			} else if (status == 204) {
				claims_empty++;
			} else {
				errors[k]++;
				c->wake = t + 1;
			}
		} else if (k == K_HEARTBEAT) {
			if (status == 200)
				lat_add(&lat[K_HEARTBEAT], dt);
			else
				errors[k]++;
		} else if (k == K_UPLOAD) {
			int n = samples_of(a);

			if (status == 200) {
				lat_add(&lat[K_UPLOAD], dt);
				if (json_is_true(json_object_get(j, "duplicate"))) {
					samples_dup += n;
				} else {
					uploads_ok++;
					samples_sent += n;
					bucket_mark();
				}
			} else if (status == 409) {
				status_409++;
			} else {
				errors[k]++;
			}
			a->task = 0;
		}
	}
	json_decref(j);
}

/* Parses what c read so far; 1 when a whole response was taken. */
static int parse(struct conn *c)
{
	char *hdr_end, *p;
	long clen = 0;
	double waited = 0, served = -1;
	int status;

	if (c->in_len < 12)
		return 0;
	c->in[c->in_len] = 0;
	hdr_end = strstr(c->in, "\r\n\r\n");
	if (!hdr_end)
		return 0;
	if (sscanf(c->in, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	for (p = c->in; p < hdr_end; p = strstr(p, "\r\n") + 2)
		if (!strncasecmp(p, "Content-Length:", 15))
			clen = strtol(p + 15, NULL, 10);
		else if (!strncasecmp(p, "Server-Timing:", 14)) {
			const char *eol = strstr(p, "\r\n"), *w = strstr(p, "wait;dur="), *sv = strstr(p, "svc;dur=");

			if (w && w < eol)
				waited = strtod(w + 9, NULL) / 1e3;
			if (sv && sv < eol)
				served = strtod(sv + 8, NULL) / 1e3;
		}
	if ((size_t)(hdr_end + 4 - c->in) + (size_t)clen > c->in_len)
		return 0;
	{
		char *body = xstrndup(hdr_end + 4, (size_t)clen);
		size_t used = (size_t)(hdr_end + 4 - c->in) + (size_t)clen;

		memmove(c->in, c->in + used, c->in_len - used);
		c->in_len -= used;
		on_response(c, status, body, waited, served);
		free(body);
	}
	return 1;
}

static void on_event(struct conn *c, uint32_t ev)
{
	if (c->st == C_CONNECTING) {
		int err = 0;
		socklen_t len = sizeof(err);

		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err || (ev & (EPOLLERR | EPOLLHUP))) {
			connect_errors++;
			conn_close(c, 1);
			return;
		}
		c->st = C_SENDING;
	}
	if (c->st == C_SENDING && (ev & EPOLLOUT)) {
		ssize_t w = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);

		if (w < 0 && errno != EAGAIN) {
			errors[c->kind]++;
			conn_close(c, 0.5);
			return;
		}
		if (w > 0)
			c->out_off += (size_t)w;
		if (c->out_off == c->out_len) {
			c->st = C_READING;
			ep_set(c, EPOLLIN);
		}
		return;
	}
	if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
		for (;;) {
			ssize_t r;

			if (c->in_cap - c->in_len < 65536) {
				c->in_cap = c->in_cap ? 2 * c->in_cap : 131072;
				c->in = xrealloc(c->in, c->in_cap + 1);
			}
			r = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
			if (r > 0) {
				c->in_len += (size_t)r;
				continue;
			}
			if (r < 0 && errno == EAGAIN)
				break;
			/* Closed by the server: what was asked is lost, the agent asks again. */
			if (c->st == C_READING) {
				errors[c->kind]++;
				conn_close(c, 0.5);
			} else {
				double wake = c->wake;

				conn_close(c, 0);
				c->wake = wake;  /* an idle keep-alive closed: reconnect when next due */
			}
			return;
		}
		while (c->st == C_READING && parse(c) == 1)
			;
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bench-api --port P [--host H] [--agents N] [--seconds S] [--wait W]\n"
		"                 [--heartbeat S] [--samples K] [--until SAMPLES] [--bucket B]\n"
		"                 [--bad FILE] [--flaky --good SHA --bad-end SHA] [--submit JSON [--once]] [--seed S]\n"
		"N simulated agents (2 connections each) against bisectd at H:P for S seconds\n"
		"(or until SAMPLES samples were taken); prints key value lines.\n"
		"  --wait W        claim long poll, seconds (5)    --heartbeat S  every S s (5)\n"
		"  --samples K     samples an upload (default: the task's runs; the ends keep\n"
		"                  their runs when --good and --bad-end name them)\n"
		"  --bad FILE      commit ids that measure 15%% lower, one a line\n"
		"  --flaky         commits between the ends measure like either, task by task\n"
		"  --submit JSON   keep a job of this body running (--once: one job only)\n"
		"  --bucket B      print the rate of every B samples\n");
}

static void on_signal(int sig)
{
	(void)sig;
	stopped = 1;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "host", 1, 0, 'H' }, { "port", 1, 0, 'p' }, { "agents", 1, 0, 'n' }, { "seconds", 1, 0, 's' },
		{ "wait", 1, 0, 'w' }, { "heartbeat", 1, 0, 'b' }, { "samples", 1, 0, 'k' }, { "until", 1, 0, 'u' },
		{ "bucket", 1, 0, 'B' }, { "bad", 1, 0, 'x' }, { "flaky", 0, 0, 'f' }, { "submit", 1, 0, 'j' },
		{ "seed", 1, 0, 'S' }, { "good", 1, 0, 'g' }, { "bad-end", 1, 0, 'e' }, { "once", 0, 0, 'o' },
		{ "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 } };
	struct epoll_event evs[256];
	double end, t1, last_scan = 0, draining_started = 0;
	int ch;

	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'H': o.host = optarg; break;
		case 'p': o.port = atoi(optarg); break;
		case 'n': o.agents = atoi(optarg); break;
		case 's': o.seconds = atof(optarg); break;
		case 'w': o.wait = atoi(optarg); break;
		case 'b': o.heartbeat = atof(optarg); break;
		case 'k': o.samples = atoi(optarg); break;
		case 'u': o.until = atoll(optarg); break;
		case 'B': o.bucket = atoll(optarg); break;
		case 'x': o.bad_file = optarg; break;
		case 'f': o.flaky = 1; break;
		case 'j': o.submit = optarg; break;
		case 'S': o.seed = strtoull(optarg, NULL, 10); break;
		case 'g': o.good = optarg; break;
		case 'e': o.bad_end = optarg; break;
		case 'o': o.once = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (o.port <= 0 || o.agents < 1 || o.agents > 100000 || o.seconds <= 0 || o.samples > 1000) {
		usage(stderr);
		return 2;
	}
	if (o.bad_file)
		load_bad(o.bad_file);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	rng_seed(&rng, o.seed);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	nconns = 2 * o.agents + 1;
	conns = xcalloc((size_t)nconns, sizeof(*conns));
	agents = xcalloc((size_t)o.agents, sizeof(*agents));
	bucket_t = xcalloc(1001, sizeof(double));
	bucket_lat = xcalloc(1001, sizeof(size_t));
	t0 = now_s();
	for (int i = 0; i < nconns; i++) {
		conns[i].fd = -1;
		conns[i].agent = i == nconns - 1 ? -1 : i / 2;
		conns[i].role = i % 2;
		conns[i].wake = i % 2 ? 1e300 : t0 + 0.5 * rng_uniform(&rng);  /* heartbeats once registered */
	}
	conns[nconns - 1].wake = t0;
	for (int i = 0; i < o.agents; i++)
		snprintf(agents[i].name, sizeof(agents[i].name), "sim%05d", i);
	end = t0 + o.seconds;
	while (!stopped) {
		int n = epoll_wait(epfd, evs, 256, 10);
		double t = now_s();

		for (int i = 0; i < n; i++)
			on_event(&conns[evs[i].data.u32], evs[i].events);
		if (!draining && (t >= end || (o.until > 0 && samples_sent >= o.until))) {
			draining = 1;
			draining_started = t;
			end = t + 60;
		}
		if (draining) {
			int uploading = 0;

			for (int i = 0; i < nconns && !uploading; i++)
				uploading = conns[i].kind == K_UPLOAD &&
					    (conns[i].st == C_SENDING || conns[i].st == C_READING);
			if (!uploading || t >= end)
				break;
			continue;
		}
		/* Idle connections whose time came (a scan every 10 ms: cheap next to the requests). */
		if (t - last_scan < 0.01)
			continue;
		last_scan = t;
		for (int i = 0; i < nconns; i++) {
			struct conn *c = &conns[i];

			if ((c->st != C_IDLE && c->st != C_CLOSED) || c->wake > t || c->wake == 0)
				continue;
			c->wake = 0;
			if (c->agent < 0)
				submitter_next();
			else if (c->role == 0)
				agent_next(c->agent);
			else
				heartbeat_next(c->agent);
		}
	}
	t1 = draining_started ? draining_started : now_s();
	{
		long long req = 0;

		for (int k = 0; k < NR_KINDS; k++)
			req += counts[k];
		printf("agents %d\nseconds %.2f\nrequests %lld\nrequests_per_s %.1f\n", o.agents, t1 - t0, req,
		       (double)req / (t1 - t0));
	}
	upload_order = xmalloc((lat[K_UPLOAD].n + 1) * sizeof(double));
	memcpy(upload_order, lat[K_UPLOAD].v, lat[K_UPLOAD].n * sizeof(double));
	for (int k = 0; k < NR_KINDS; k++)
		if (k == K_CLAIM || k == K_HEARTBEAT || k == K_UPLOAD)
			printf("%s_n %zu\n%s_p50_ms %.2f\n%s_p99_ms %.2f\n", kind_names[k], lat[k].n, kind_names[k],
			       1e3 * pct(&lat[k], 0.5), kind_names[k], 1e3 * pct(&lat[k], 0.99));
	printf("claim_with_wait_p50_ms %.2f\nclaim_with_wait_p99_ms %.2f\n", 1e3 * pct(&claim_total, 0.5),
	       1e3 * pct(&claim_total, 0.99));
	printf("claim_server_p50_ms %.2f\nclaim_server_p99_ms %.2f\n", 1e3 * pct(&claim_server, 0.5),
	       1e3 * pct(&claim_server, 0.99));
	for (int k = 0; k < NR_KINDS; k++)
		printf("%s_errors %lld\n", kind_names[k], errors[k]);
	printf("claims_empty %lld\nuploads_409 %lld\nconnect_errors %lld\n", claims_empty, status_409,
	       connect_errors);
	printf("uploads_ok %lld\nsamples %lld\nsamples_duplicate %lld\nsamples_per_s %.1f\n", uploads_ok,
	       samples_sent, samples_dup, (double)samples_sent / (t1 - t0));
	printf("job %lld\njob_running %d\n", job_id, job_running);
	/* Each bucket: samples so far, its size, its rate, and its uploads' service time p50 and p99 (ms). */
	for (long long b = 0; b < nr_buckets; b++) {
		size_t from = b ? bucket_lat[b - 1] : 0;
		struct lat l = { upload_order + from, bucket_lat[b] - from, 0 };

		printf("bucket %lld %lld %.1f %.2f %.2f\n", (b + 1) * o.bucket, (long long)o.bucket,
		       (double)o.bucket / (bucket_t[b] - (b ? bucket_t[b - 1] : t0)), 1e3 * pct(&l, 0.5),
		       1e3 * pct(&l, 0.99));
	}
	for (int i = 0; i < nconns; i++)
		if (conns[i].fd >= 0)
			close(conns[i].fd);
	return 0;
}
