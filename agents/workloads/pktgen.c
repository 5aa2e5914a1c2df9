/*
 * pktgen: packets per second of the kernel's transmit path, the seed's
 * queue_xmit on a dummy device with a clsact qdisc and a bpf filter. The
 * definition's keys: "metric" (pps, Mb/s, ...), "count", "pkt_size",
 * "clsact_bpf".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "netparse.h"
#include "pktgen.h"
#include "util.h"
#include "workload.h"

#define DIGITS "0123456789"
#define DEV "bisect0"
#define DEFAULT_COUNT 200000
#define DEFAULT_PKT_SIZE 60

static const char *const metrics[] = { "pps", "Mb/s", "Kpps", "Mpps", "bps", NULL };

static const struct workload_key keys[] = {
	{ "metric", WKEY_STR, 0, 0 },
	{ "count", WKEY_INT, 1, 1000000000 },
	{ "pkt_size", WKEY_INT, 60, 9000 },
	{ "clsact_bpf", WKEY_BOOL, 0, 0 },
	{ NULL, 0, 0, 0 },
};

static int one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

static int check(json_t *def, struct workload_bad *bad)
{
	const char *metric = workload_def_str(def, "metric", NULL);

	if (!metric)
		json_object_set_new(def, "metric", json_string(metric = metrics[0]));
	if (!one_of(metric, metrics)) {
		struct sbuf list = SBUF_INIT;

		for (const char *const *m = metrics; *m; m++)
			sbuf_addf(&list, "%s%s", m == metrics ? "" : ", ", *m);
		bad->key = "metric";
		err_set(ERR_INVALID, " must be one of %s, not '%s'", list.buf, metric);
		sbuf_release(&list);
		return ERR_INVALID;
	}
	if (!json_object_get(def, "count"))
		json_object_set_new(def, "count", json_integer(DEFAULT_COUNT));
	if (!json_object_get(def, "pkt_size"))
		json_object_set_new(def, "pkt_size", json_integer(DEFAULT_PKT_SIZE));
	if (!json_object_get(def, "clsact_bpf"))
		json_object_set_new(def, "clsact_bpf", json_false());
	json_object_set_new(def, "unit", json_string(metric));
	return 0;
}

static int tools(const char **names, size_t n, json_t *def)
{
	if (!json_is_true(json_object_get(def, "clsact_bpf")))
		return 0;
	if (n < 1)
		return err_set(ERR_INVALID, "pktgen: no room for its tool");
	/* By full path: busybox's own tc applet knows no clsact. */
	names[0] = "tc";
	return 1;
}

/*
 * For a distribution kernel, where they are modules: pktgen and the dummy
 * device, and with clsact_bpf the clsact qdisc (sch_ingress) and cls_bpf.
 * A kernel built with the egress fragment has them built in.
 */
static int modules(const char **names, size_t n, json_t *def)
{
	size_t k = 0;

	if (n < 4)
		return err_set(ERR_INVALID, "pktgen: no room for its modules");
	names[k++] = "pktgen";
	names[k++] = "dummy";
	if (json_is_true(json_object_get(def, "clsact_bpf"))) {
		names[k++] = "sch_ingress";
		names[k++] = "cls_bpf";
	}
	return (int)k;
}

int pktgen_script(struct sbuf *sb, const struct pktgen_script_opts *o)
{
	const char *dev = o->dev ? o->dev : DEV;
	const char *mode = o->xmit_mode ? o->xmit_mode : "queue_xmit";
	const char *dst = o->dst ? o->dst : "1.1.1.1";
	const char *mac = o->dst_mac ? o->dst_mac : "11:11:11:11:11:11";
	unsigned long count = o->count ? o->count : DEFAULT_COUNT;
	unsigned size = o->pkt_size ? o->pkt_size : DEFAULT_PKT_SIZE;
	char *pg = NULL;

	if (!workload_only(dev, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" DIGITS "_-", 15))
		return err_set(ERR_INVALID, "qemu: pktgen device '%s' is not a simple name", dev);
	if (strcmp(mode, "queue_xmit") && strcmp(mode, "start_xmit"))
		return err_set(ERR_INVALID, "qemu: pktgen xmit_mode must be queue_xmit or start_xmit");
	if (!workload_only(dst, DIGITS ".", 15) || !workload_only(mac, DIGITS "abcdefABCDEF:", 17))
		return err_set(ERR_INVALID, "qemu: pktgen dst or dst_mac malformed");
	if (count > 1000000000ul || size < 42 || size > 9000 || o->thread < 0 || o->thread > 255)
		return err_set(ERR_INVALID, "qemu: pktgen count, pkt_size or thread out of range");
	if ((o->tc && !workload_guest_path_ok(o->tc)) || (o->ip && !workload_guest_path_ok(o->ip)))
		return err_set(ERR_INVALID, "qemu: tc and ip must be full guest paths");
	if (o->clsact_bpf && !o->tc)
		return err_set(ERR_INVALID,
			       "qemu: the clsact qdisc needs iproute2's tc by full path (busybox's tc knows no clsact)");

	sbuf_adds(sb, "pg() {\n"
		      "\techo \"$2\" > \"$1\" || { echo \"pktgen: '$2' > $1 failed\" >&2; return 1; }\n"
		      "}\n"
		      "setup() {\n");
	if (o->ip)
		workload_sh_need_tool(sb, o->ip, "iproute2's ip");
	if (o->tc)
		workload_sh_need_tool(sb, o->tc, "iproute2's tc");
	sbuf_add(sb, "\t", 1);
	if (o->ip)
		workload_sh_quote(sb, o->ip);
	else
		sbuf_adds(sb, "ip");
	sbuf_addf(sb, " link add dev %s type dummy || return 1\n\t", dev);
	if (o->ip)
		workload_sh_quote(sb, o->ip);
	else
		sbuf_adds(sb, "ip");
	sbuf_addf(sb, " link set dev %s up || return 1\n", dev);
	if (o->clsact_bpf) {
		sbuf_add(sb, "\t", 1);
		workload_sh_quote(sb, o->tc);
		sbuf_addf(sb, " qdisc add dev %s clsact || return 1\n\t", dev);
		workload_sh_quote(sb, o->tc);
		sbuf_addf(sb, " filter add dev %s egress bpf da bytecode '1,6 0 0 0,' || return 1\n", dev);
	}
	sbuf_adds(sb, "\tif [ ! -e /proc/net/pktgen/pgctrl ]; then\n"
		      "\t\techo 'pktgen is not in this kernel: CONFIG_NET_PKTGEN=y is needed' >&2\n"
		      "\t\treturn 1\n"
		      "\tfi\n");
	pg = xasprintf("/proc/net/pktgen/kpktgend_%d", o->thread);
	sbuf_addf(sb, "\tpg %s rem_device_all || return 1\n", pg);
	sbuf_addf(sb, "\tpg %s 'add_device %s' || return 1\n", pg, dev);
	sbuf_addf(sb, "\tpg /proc/net/pktgen/%s 'count %lu' || return 1\n", dev, count);
	sbuf_addf(sb, "\tpg /proc/net/pktgen/%s 'pkt_size %u' || return 1\n", dev, size);
	sbuf_addf(sb, "\tpg /proc/net/pktgen/%s 'xmit_mode %s' || return 1\n", dev, mode);
	sbuf_addf(sb, "\tpg /proc/net/pktgen/%s 'dst %s' || return 1\n", dev, dst);
	sbuf_addf(sb, "\tpg /proc/net/pktgen/%s 'dst_mac %s' || return 1\n", dev, mac);
	sbuf_adds(sb, "}\n"
		      "setup >/tmp/setup.log 2>&1\n"
		      "setup_rc=$?\n"
		      "run_once() {\n"
		      "\tif [ $setup_rc -ne 0 ]; then\n"
		      "\t\techo \"pktgen setup failed (exit $setup_rc):\" >&2\n"
		      "\t\tcat /tmp/setup.log >&2\n"
		      "\t\treturn $setup_rc\n"
		      "\tfi\n"
		      "\tpg /proc/net/pktgen/pgctrl start || return 1\n");
	sbuf_addf(sb, "\tcat /proc/net/pktgen/%s\n}\n", dev);
	free(pg);
	return 0;
}

static int script(struct sbuf *sb, json_t *def, const char *const *paths)
{
	struct pktgen_script_opts so = PKTGEN_SCRIPT_OPTS_INIT;
	json_int_t count = json_integer_value(json_object_get(def, "count"));
	json_int_t size = json_integer_value(json_object_get(def, "pkt_size"));

	so.count = count > 0 ? (unsigned long)count : DEFAULT_COUNT;
	so.pkt_size = size > 0 ? (unsigned)size : DEFAULT_PKT_SIZE;
	so.dev = DEV;
	so.clsact_bpf = json_is_true(json_object_get(def, "clsact_bpf"));
	if (so.clsact_bpf)
		so.tc = paths[0];
	return pktgen_script(sb, &so);
}

static void parse(struct run_sample *s, json_t *def, const struct run_output *o)
{
	struct pktgen_result pr;

	netparse_pktgen(&pr, o->out, o->out ? o->out_len : 0);
	netparse_pktgen_sample(s, &pr, workload_def_str(def, "metric", metrics[0]));
	workload_note_exit(s, o);
}

const struct workload_ops workload_pktgen = {
	.name = "pktgen",
	.places = WORKLOAD_GUEST,
	.keys = keys,
	.about = "the kernel's pktgen on a dummy device; the metric is its rate",
	.check = check,
	.tools = tools,
	.modules = modules,
	.script = script,
	.parse = parse,
};
