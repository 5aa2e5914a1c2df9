/*
 * bisectctl: the command line for bisectd's HTTP API. Submits jobs, lists
 * and follows them, lists agents, prints reports; --json prints what the
 * API sent instead of text. The exit status tells a script how a job ended.
 *
 * This room holds the command table, help and main(); the commands are in
 * bisectctl_jobs.c and bisectctl_admin.c, on bisectctl_report.c,
 * bisectctl_api.c and bisectctl_out.c (bisectctl_internal.h).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisectctl_internal.h"
#include "client.h"

static void print_main_usage(FILE *f);
static const struct cmd *find_cmd(const char *name);

static int cmd_help(const struct cmd *self, int argc, char **argv)
{
	const struct cmd *c;

	(void)self;
	if (argc < 2) {
		print_main_usage(stdout);
		return RC_OK;
	}
	c = find_cmd(argv[1]);
	if (!c) {
		fprintf(stderr, "bisectctl: unknown command '%s' (see 'bisectctl help')\n", argv[1]);
		return RC_USAGE;
	}
	ctl_print_usage(stdout, c);
	return RC_OK;
}

static const struct cmd commands[] = {
	{ "submit", cmd_submit,
	  "--repo R --good G --bad B --workload W [--pool P] [--runs N] [options] [--watch [--interval S]]\n"
	  "       bisectctl submit --like ID [options] [--watch [--interval S]]",
	  "submit a bisection job",
	  "Asks bisectd to find the commit in G..B (refs of repository R) that changed\n"
	  "workload W in the direction the workload calls worse.\n\n"
	  "  --repo R        repository name from bisectd's config\n"
	  "  --good G        a ref or commit that performs well\n"
	  "  --bad B         a ref or commit that performs badly\n"
	  "  --workload W    workload name from bisectd's config\n"
	  "  --pool P        agent pool (default: bisectd's first pool)\n"
	  "  --runs N        runs at each end first, and the largest batch per commit,\n"
	  "                  1 to 100 (default: bisectd's); the engine picks each batch\n"
	  "  --confidence P  stop when one commit holds P of the posterior (0.99)\n"
	  "  --alpha A       the ends must differ at this level (0.01)\n"
	  "  --min-effect X  ... and by at least X percent (1)\n"
	  "  --budget-runs N\n"
	  "                  end undecided after N runs if nothing is decided (0: the\n"
	  "                  engine derives one from the range and the ends' noise)\n"
	  "  --budget-builds N\n"
	  "                  ... or after N distinct commits measured (0: no limit)\n"
	  "  --budget-seconds S\n"
	  "                  ... or S seconds after the submit (0: derived from the run\n"
	  "                  budget and the job's measured costs, at least an hour)\n"
	  "  --end-runs N    end not-reproduced only on N runs of each end or more, 0 to\n"
	  "                  200 (0: the engine's 8 at 0.99): a change that shows in\n"
	  "                  some runs only is ruled out down to 1-(0.005)^(1/N) of them\n"
	  "                  (48% on 8, 16% on 30, 7% on 70)\n"
	  "  --direction D   higher or lower is better (default: the workload's)\n"
	  "  --append P      kernel parameters for this job's boots, after the workload's\n"
	  "                  (\"mitigations=off\"; boot qemu workloads)\n"
	  "  --config OPT    a kernel config option for this job's builds, after the\n"
	  "                  workload's fragments, verified like them (repeatable:\n"
	  "                  CONFIG_X=y|m|n|123|0x1f|'\"str\"'; n or '# CONFIG_X is not\n"
	  "                  set' unsets it); workloads with a kernel build\n"
	  "  --policy P      bisectd (default) or split (the simple k-way split)\n"
	  "  --like ID       job ID's settings where no option gives them: its range by\n"
	  "                  its commits, workload, pool, runs, policy, confidence,\n"
	  "                  alpha, min effect, end runs, direction, append, config and\n"
	  "                  its own budgets (a failed job run again once the lab is\n"
	  "                  mended; the same range on another pool: --like 5 --pool P)\n"
	  "  --watch         follow the job as 'watch' does; the exit status is its end's\n"
	  "                  (0 done, 1 failed/cancelled/not-reproduced, 4 undecided)\n"
	  "  --interval S    with --watch: seconds between refreshes (default 1)\n" },
	{ "jobs", cmd_jobs, "", "list jobs, newest first", NULL },
	{ "show", cmd_show, "ID", "show a job: progress, tested commits, events, culprit",
	  "Tested commits print as: short sha, state, hmean (CV) over n runs, subject.\n" },
	{ "watch", cmd_watch, "ID [--interval S]", "follow a job until it ends, then print its report",
	  "On a terminal, redraws the job every S seconds (default 1); otherwise prints\n"
	  "a line when its progress changes (with --json: the job, one object a line).\n"
	  "Exits 0 when the job ends done, 1 when it failed, was cancelled or did not\n"
	  "reproduce, 4 when it ended undecided.\n" },
	{ "agents", cmd_agents, "", "list agents: state, labels, last seen, task", NULL },
	{ "cancel", cmd_cancel, "ID", "cancel a job (its tasks stop, running ones too; its runs are kept)", NULL },
	{ "resume", cmd_resume, "ID [--more-runs N] [--more-seconds S] [--watch [--interval S]]",
	  "run an undecided or cancelled job on, keeping its runs",
	  "An undecided job runs on from every run it has, with its budgets raised:\n"
	  "the runs it used and N more, the wall time it took and S seconds more.\n"
	  "A job undecided at its ends (neither shown apart nor equal in the runs\n"
	  "they may take) measures each end on by half the N runs. A job whose\n"
	  "runs already decide it (kept undecided by an older bisectd) ends so.\n"
	  "A cancelled job runs on from every run it has with the budgets it had\n"
	  "(with --more-runs, the runs it has and N more) and S seconds from now.\n\n"
	  "  --more-runs N     runs more (default: twice what its report said would\n"
	  "                    decide it, else as many as its run budget was)\n"
	  "  --more-seconds S  seconds of wall time more (default: as many as its\n"
	  "                    budget had)\n"
	  "  --watch           follow it as 'watch' does; the exit status is its end's\n\n"
	  "Exits 2 when the job is neither undecided nor cancelled, or when bisectd\n"
	  "finds that its first step would end it undecided again at once (a\n"
	  "verdict more runs do not change: the reason is printed; submit the\n"
	  "range again for a job measured afresh).\n" },
	{ "report", cmd_report, "ID [--cv amean|hmean] [--mail]",
	  "print a job's report (with --json: the report object)",
	  "The table gives each kernel's HARMEAN (CV) over its runs and its change\n"
	  "against the good end, then the change against the parent, its p-value and\n"
	  "the confidence, as the netdev threads print them.\n\n"
	  "  --cv amean   CV is stddev / arithmetic mean (the default)\n"
	  "  --cv hmean   CV is mmtests' harmonic CoV (compare-kernels' HCoeffVar)\n"
	  "  --mail       the culprit as a plain-text mail in the manner of the kernel\n"
	  "               test robot: author, machines, command line, kernel config,\n"
	  "               a %stddev %change %stddev table and how to reproduce it\n\n"
	  "Exits 0 for a job done, 1 for one that failed, was cancelled or did not\n"
	  "reproduce, 4 for one that ended undecided (the most probable commits, the\n"
	  "effect with its 95% interval, the noise and how many more runs would decide\n"
	  "it are printed), 2 when it has no report yet (a running job: what is known so\n"
	  "far is printed) or, with --mail, when it named no culprit.\n" },
	{ "export", cmd_export, "ID [--csv] [-o FILE]", "write every sample of a job as CSV",
	  "One line per run: commit, idx, subject, task, agent, attempt, run, value,\n"
	  "unit, error (a failed run: value <= 0), time (unix seconds); RFC 4180 quoting.\n"
	  "  -o, --output FILE   write FILE (whole, or not at all) instead of stdout\n" },
	{ "plot", cmd_plot, "ID --chart NAME -o FILE", "draw a job's chart into FILE (.svg, .png or .pdf)",
	  "Charts, drawn by bisectd with gnuplot (docs/CHARTS.md):\n"
	  "  timeline      every measured commit in range order: its runs, hmean (CV),\n"
	  "                the ends and the culprit marked\n"
	  "  distribution  the culprit against its parent and the ends: a box per\n"
	  "                commit (and agent, when several measured it), runs over it\n"
	  "  compare       hmean (CV) of the ends, parent and culprit in each job of\n"
	  "                the same range: one bar per kernel command line variant\n"
	  "  posterior     the five most probable commits, and each one's probability\n"
	  "                over the engine's decisions\n\n"
	  "The file's extension says the format. FILE is written only whole (a\n"
	  "temporary beside it, renamed), never when bisectd refused or failed.\n"
	  "Exits 2 when bisectd refused (an unknown job or chart, a job with nothing\n"
	  "to draw yet: 409), 3 when it failed (gnuplot missing or past its deadline).\n" },
	{ "token", cmd_token, "create --role R [--agent NAME] [--note TEXT] | list | revoke ID",
	  "make, list and revoke API tokens (an admin's)",
	  "Tokens (docs/API.md, Authentication) have a role: admin (everything, and\n"
	  "tokens), submit (submit and cancel jobs) or agent. An agent token with\n"
	  "--agent NAME acts as that agent only; one without is an enrolment token,\n"
	  "which an agent uses once to get its own (enrol_token_file, docs/LAB.md).\n\n"
	  "  create   prints the new token on stdout, once: bisectd keeps its hash only\n"
	  "  list     id, prefix (the token's public part), role, agent, when made and\n"
	  "           last used, live or revoked, note\n"
	  "  revoke   the token stops working at once\n" },
	{ "help", cmd_help, "[COMMAND]", "show this help, or a command's", NULL },
};

static const struct cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void print_main_usage(FILE *f)
{
	fputs("usage: bisectctl [--server URL] [--ca-file PEM] [--token-file F] [--json] COMMAND [ARGS]\n\ncommands:\n", f);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-7s %s\n", commands[i].name, commands[i].summary);
	fputs("\noptions:\n"
	      "  --server URL  bisectd's address (default: $BISECTD_URL, else " DEFAULT_SERVER ")\n"
	      "  --ca-file PEM https: trust this CA for bisectd's certificate (default: $BISECTD_CA,\n"
	      "                else the system's store); the server is always verified\n"
	      "  --token-file F  the API token to send, from file F (default: $BISECTD_TOKEN);\n"
	      "                writes need one (docs/API.md, Authentication)\n"
	      "  --json        print the API's JSON instead of text\n"
	      "  -h, --help    show this help; 'bisectctl COMMAND --help' shows a command's\n"
	      "\nexit status: 0 success (a job that ended done), 1 the job failed, was\n"
	      "cancelled or did not reproduce, 2 usage or input error, 3 bisectd could\n"
	      "not be reached or failed, 4 the job ended undecided (no commit holds the\n"
	      "confidence within the budget: more runs or a quieter lab would decide it).\n", f);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "server", required_argument, NULL, 'S' },
		{ "ca-file", required_argument, NULL, OPT_CA_FILE },
		{ "token-file", required_argument, NULL, 'K' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const struct cmd *c;
	int opt, rc;

	ctl_server = getenv("BISECTD_URL");
	if (!ctl_server || !*ctl_server)
		ctl_server = DEFAULT_SERVER;
	ctl_ca_file = getenv("BISECTD_CA");
	if (ctl_ca_file && !*ctl_ca_file)
		ctl_ca_file = NULL;
	opterr = 0;
	/* '+': stop at the command; its options are its own. */
	while ((opt = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'S': ctl_server = optarg; break;
		case OPT_CA_FILE: ctl_ca_file = optarg; break;
		case 'K': ctl_token_file = optarg; break;
		case 'J': ctl_json = 1; break;
		case 'h':
			print_main_usage(stdout);
			return RC_OK;
		case ':':
			fprintf(stderr, "bisectctl: option '%s' needs a value\n", argv[optind - 1]);
			return RC_USAGE;
		default:
			if (optopt)
				fprintf(stderr, "bisectctl: unknown option '-%c'\n", optopt);
			else
				fprintf(stderr, "bisectctl: unknown option '%s'\n", argv[optind - 1]);
			fprintf(stderr, "see 'bisectctl help'\n");
			return RC_USAGE;
		}
	}
	if (optind >= argc) {
		print_main_usage(stderr);
		return RC_USAGE;
	}
	c = find_cmd(argv[optind]);
	if (!c) {
		fprintf(stderr, "bisectctl: unknown command '%s' (see 'bisectctl help')\n",
			argv[optind]);
		return RC_USAGE;
	}
	if (c->fn != cmd_help && ctl_check_server(ctl_server) != RC_OK)
		return RC_USAGE;
	argc -= optind;
	argv += optind;
	optind = 0; /* glibc: start over, permuting again, for the command's options */

	rc = c->fn(c, argc, argv);
	client_free(ctl_client);
	return rc;
}
