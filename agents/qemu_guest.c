/*
 * qemu_guest: what happens inside a qemu boot's guest, as text: the /init
 * script that runs the workload and prints the markers, and the parse of
 * the serial console those markers come back on (qemu.c boots the guest
 * and watches its console; the fuzz target reads only this).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "initramfs.h"
#include "perfreport.h"
#include "qemu.h"
#include "util.h"
#include "workload.h"

/* --- console parsing ------------------------------------------------------ */

void qemu_console_release(struct qemu_console *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->nruns && c->runs; i++)
		free(c->runs[i].text);
	free(c->runs);
	memset(c, 0, sizeof(*c));
}

/* Does the line (len bytes) start with mark followed by its end or a space? */
const char *qemu_marker(const char *line, size_t len, const char *mark)
{
	size_t ml = strlen(mark);

	if (len < ml || memcmp(line, mark, ml) != 0)
		return NULL;
	if (len > ml && line[ml] != ' ')
		return NULL;
	return line + ml;
}

/*
 * The run number after a marker: a decimal of 1..9 digits followed by the
 * line's end or a space. -1 when it is not one (the line is then no
 * marker); 0 or past max are numbers, just no run's.
 */
static long marker_num(const char *p, const char *end, const char **after)
{
	long v = 0;
	const char *q;

	while (p < end && *p == ' ')
		p++;
	for (q = p; q < end && *q >= '0' && *q <= '9'; q++) {
		if (q - p >= 9)
			return -1;
		v = v * 10 + (*q - '0');
	}
	if (q == p || (q < end && *q != ' '))
		return -1;
	if (after)
		*after = q;
	return v;
}

int qemu_parse_console(struct qemu_console *out, const char *log, size_t len, int nruns)
{
	struct sbuf cur = SBUF_INIT;
	const char *p = log, *end = log + len;
	int open_run = 0; /* the run whose text is being collected, 0 none */

	memset(out, 0, sizeof(*out));
	if (nruns < 1 || nruns > QEMU_MAX_RUNS)
		return err_set(ERR_INVALID, "qemu: runs must be 1..%d, not %d", QEMU_MAX_RUNS, nruns);
	out->nruns = nruns;
	out->runs = xcalloc((size_t)nruns, sizeof(*out->runs));
	for (int i = 0; i < nruns; i++)
		out->runs[i].rc = -1;
	if (!log)
		end = p = "";
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *rest, *after = NULL;
		size_t ll;
		long num;

		/* A line cut by the log's end is no marker (it may be "BISECT-END 1" cut from "... 12"). */
		if (!nl) {
			if (open_run)
				sbuf_add(&cur, p, (size_t)(le - p));
			break;
		}
		while (le > p && le[-1] == '\r')
			le--;
		ll = (size_t)(le - p);
		if (qemu_marker(p, ll, QEMU_MARK_READY)) {
			out->ready = 1;
		} else if (!out->ready) {
			/* Boot chatter: nothing counts before READY. */
		} else if ((rest = qemu_marker(p, ll, QEMU_MARK_BEGIN)) && (num = marker_num(rest, le, NULL)) >= 0) {
			/* A BEGIN inside an open run: that run lost its END. */
			sbuf_release(&cur);
			open_run = num >= 1 && num <= nruns && !out->runs[num - 1].present ? (int)num : 0;
		} else if ((rest = qemu_marker(p, ll, QEMU_MARK_END)) && (num = marker_num(rest, le, &after)) >= 0) {
			if (open_run && num == open_run) {
				struct qemu_run *r = &out->runs[open_run - 1];
				const char *rcs = after;

				r->present = 1;
				r->text = sbuf_detach(&cur);
				while (rcs < le && *rcs == ' ')
					rcs++;
				if (le - rcs >= 4 && !memcmp(rcs, "rc=", 3)) {
					char *e;
					char numbuf[16];
					size_t nl2 = (size_t)(le - rcs - 3);
					long v;

					if (nl2 < sizeof(numbuf)) {
						memcpy(numbuf, rcs + 3, nl2);
						numbuf[nl2] = '\0';
						v = strtol(numbuf, &e, 10);
						if (*e == '\0' && e != numbuf && v >= 0 && v <= 255)
							r->rc = (int)v;
					}
				}
			}
			/* Another run's END: the open one lost its own. */
			sbuf_release(&cur);
			open_run = 0;
		} else if (qemu_marker(p, ll, QEMU_MARK_DONE)) {
			out->done = 1;
			sbuf_release(&cur);
			open_run = 0;
		} else if (open_run) {
			sbuf_add(&cur, p, ll);
			sbuf_add(&cur, "\n", 1);
			/* A run printing more than a console may hold is not a run. */
			if (cur.len > QEMU_MAX_CONSOLE) {
				sbuf_release(&cur);
				open_run = 0;
			}
		}
		p = nl + 1;
	}
	sbuf_release(&cur);
	out->complete = 1;
	for (int i = 0; i < nruns; i++)
		if (!out->runs[i].present)
			out->complete = 0;
	return 0;
}

/* --- the /init script ----------------------------------------------------- */

int qemu_init_script(char **out, const struct qemu_script_opts *o)
{
	struct sbuf sb = SBUF_INIT;

	*out = NULL;
	if (o->runs < 1 || o->runs > QEMU_MAX_RUNS)
		return err_set(ERR_INVALID, "qemu: runs must be 1..%d, not %d", QEMU_MAX_RUNS, o->runs);
	if (o->dmesg_level < 0 || o->dmesg_level > 8)
		return err_set(ERR_INVALID, "qemu: dmesg level must be 1..8");
	sbuf_adds(&sb,
		  "#!/bin/sh\n"
		  "# /init of a bisect-agent qemu boot (generated). busybox sh runs its own\n"
		  "# applets before $PATH: real tools are called by their full paths.\n"
		  "export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TMPDIR=/tmp\n"
		  "mount -t proc proc /proc\n"
		  "mount -t sysfs sysfs /sys\n"
		  "mount -t devtmpfs devtmpfs /dev 2>/dev/null\n"
		  "ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up\n"
		  "# The modules initramfs_build() added, in their order.\n"
		  "if [ -f " INITRAMFS_MODULES_LIST " ]; then\n"
		  "\twhile read -r m; do insmod \"$m\" || echo \"insmod $m failed\"; done < "
		  INITRAMFS_MODULES_LIST "\n"
		  "fi\n");
	if (o->dmesg_level > 0)
		sbuf_addf(&sb, "dmesg -n %d\n", o->dmesg_level);
	if (!o->run_once || !strstr(o->run_once, "run_once()")) {
		sbuf_release(&sb);
		return err_set(ERR_INVALID, "qemu: the script needs the workload's run_once()");
	}
	sbuf_adds(&sb, o->run_once);
	/* For the console log: which kernel booted, with which command line (the job's --append among it). */
	sbuf_adds(&sb, "echo \"booted: $(uname -r) $(cat /proc/cmdline)\"\n");
	sbuf_adds(&sb, "echo " QEMU_MARK_READY "\n");
	if (o->perf) {
		sbuf_adds(&sb, "# A profile task: the whole guest under perf while the runs run.\n"
			  "echo -1 > /proc/sys/kernel/perf_event_paranoid\n"
			  "echo 0 > /proc/sys/kernel/kptr_restrict\n");
		workload_sh_quote(&sb, o->perf);
		sbuf_adds(&sb, " record -q -a -g -e " PERFREPORT_EVENT " -o /tmp/perf.data >/tmp/perf.rec 2>&1 &\n"
			  "perfpid=$!\n"
			  "sleep 1\n");
	}
	sbuf_addf(&sb,
		  "i=1\n"
		  "while [ $i -le %d ]; do\n"
		  "\techo \"" QEMU_MARK_BEGIN " $i\"\n"
		  "\trun_once >/tmp/run.out 2>/tmp/run.err\n"
		  "\trc=$?\n"
		  "\tcat /tmp/run.out\n"
		  "\t[ -n \"$(tail -c 1 /tmp/run.out)\" ] && echo\n"
		  "\tif [ $rc -ne 0 ]; then\n"
		  "\t\tcat /tmp/run.err\n"
		  "\t\t[ -n \"$(tail -c 1 /tmp/run.err)\" ] && echo\n"
		  "\tfi\n"
		  "\techo \"" QEMU_MARK_END " $i rc=$rc\"\n"
		  "\ti=$((i + 1))\n"
		  "done\n", o->runs);
	if (o->perf) {
		sbuf_adds(&sb, "kill -TERM $perfpid\n"
			  "wait $perfpid\n");
		workload_sh_quote(&sb, o->perf);
		sbuf_adds(&sb, " report -i /tmp/perf.data --stdio --no-children --sort symbol -g none "
			  ">/tmp/perf.txt 2>/tmp/perf.err\n"
			  "rc=$?\n"
			  "echo " QEMU_MARK_PROFILE "\n"
			  "cat /tmp/perf.txt\n"
			  "[ -n \"$(tail -c 1 /tmp/perf.txt)\" ] && echo\n"
			  "echo \"" QEMU_MARK_PROFILE_END " rc=$rc\"\n"
			  "[ $rc -ne 0 ] && cat /tmp/perf.rec /tmp/perf.err\n");
	}
	sbuf_adds(&sb,
		  "echo " QEMU_MARK_DONE "\n"
		  "sync\n"
		  "# With -no-reboot QEMU exits; poweroff -f would not without ACPI.\n"
		  "reboot -f\n"
		  "sleep 5\n");
	*out = sbuf_detach(&sb);
	return 0;
}

int qemu_console_profile(char **out, int *rc, const char *log)
{
	static const char begin[] = "\n" QEMU_MARK_PROFILE "\n", end[] = "\n" QEMU_MARK_PROFILE_END " rc=";
	struct sbuf sb = SBUF_INIT;
	char *clean = xstrdup(log), *w = clean, *b, *e;

	*out = NULL;
	*rc = -1;
	for (const char *r = log; *r; r++)
		if (*r != '\r')
			*w++ = *r;
	*w = '\0';
	b = strstr(clean, begin);
	e = b ? strstr(b + sizeof(begin) - 2, end) : NULL;
	if (!b || !e) {
		free(clean);
		return err_set(ERR_NOTFOUND, "the guest printed no perf report (no %s ... %s on its console)",
			       QEMU_MARK_PROFILE, QEMU_MARK_PROFILE_END);
	}
	*rc = atoi(e + sizeof(end) - 1);
	b += sizeof(begin) - 1;
	sbuf_add(&sb, b, (size_t)(e + 1 - b));
	sbuf_add(&sb, "", 0);
	*out = sb.buf ? sbuf_detach(&sb) : xstrdup("");
	free(clean);
	return 0;
}
