/*
 * test_plot: the charts' files from a job built by code: gnuplot strings
 * (quotes, newlines, long UTF-8), the variables each template reads, the
 * data files, the refusals; and, where gnuplot is installed, that every
 * template draws its files in every format (PLOT_KEEP=DIR keeps them).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "plot.h"
#include "run.h"
#include "util.h"

#define NC 20
#define CULPRIT 8

static struct plot_commit commits[NC];
static char shas[NC][41];
static struct plot_run runs[200];
static struct plot_decision decisions[6];
static const char *const agents[] = { "lab1", "lab2" };

/* A job of 20 commits, 7 measured 5 times by two agents, culprit 8 (parent 7), 6 decisions. */
static struct plot_job fixture(void)
{
	static const int measured[] = { 0, 19, 10, 5, 7, 8, 9 };
	struct plot_job j;
	size_t nr = 0;

	memset(&j, 0, sizeof(j));
	for (int i = 0; i < NC; i++) {
		snprintf(shas[i], sizeof(shas[i]), "%02xabc%035x", i, 0);
		commits[i] = (struct plot_commit){ i, shas[i], "a plain subject", 0, 0, 0 };
	}
	commits[CULPRIT].subject = "net: don't 'GRO' \"twice\"\nSigned-off-by: x";
	for (size_t m = 0; m < sizeof(measured) / sizeof(measured[0]); m++) {
		int idx = measured[m];
		double level = idx >= CULPRIT ? 800 : 1000;

		for (int r = 0; r < 5; r++)
			runs[nr++] = (struct plot_run){ idx, level + 10 * r, r % 2 };
		commits[idx].n = 5;
		commits[idx].hmean = level + 19.6;
		commits[idx].cv = 0.016;
	}
	runs[nr++] = (struct plot_run){ 10, 0, 0 };  /* a failed run: never drawn */
	for (int d = 0; d < 6; d++) {
		decisions[d] = (struct plot_decision){ 1000 + 10 * d, d < 2 ? "ends" : d < 5 ? "search" : "confirm",
						       3, { CULPRIT, 7, 9 }, { 0.2 + 0.15 * d, 0.3, 0.1 } };
	}
	decisions[0].nr_top = 0;
	j.id = 3;
	j.title = "demo bench v1.0..main";
	j.unit = "ops/s";
	j.higher = 1;
	j.created = 990;
	j.commits = commits;
	j.nr_commits = NC;
	j.runs = runs;
	j.nr_runs = nr;
	j.agents = agents;
	j.nr_agents = 2;
	j.decisions = decisions;
	j.nr_decisions = 6;
	j.culprit = CULPRIT;
	j.likely = CULPRIT;
	j.parent = 7;
	return j;
}

static char *quote(const char *s, size_t max)
{
	struct sbuf sb = SBUF_INIT;

	plot_gp_quote(&sb, s, max);
	return sbuf_detach(&sb);
}

static void test_quote(void **state)
{
	char *q;

	(void)state;
	q = quote("it's \"GRO\"\nnext\tline\r", 200);
	assert_string_equal(q, "'it''s \"GRO\" next line '");
	free(q);
	q = quote(NULL, 200);
	assert_string_equal(q, "''");
	free(q);
	q = quote("back\\slash $(rm) `x` @m", 200);
	assert_string_equal(q, "'back\\slash $(rm) `x` @m'");  /* single quotes: nothing is expanded */
	free(q);
	/* Cut at the bound, never inside a UTF-8 character: "é" is 2 bytes. */
	q = quote("ab\xc3\xa9", 3);
	assert_string_equal(q, "'ab'");
	free(q);
	q = quote("ab\xc3\xa9", 4);
	assert_string_equal(q, "'ab\xc3\xa9'");
	free(q);
}

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(plot_chart_find("timeline"), PLOT_TIMELINE);
	assert_int_equal(plot_chart_find("posterior"), PLOT_POSTERIOR);
	assert_int_equal(plot_chart_find("pie"), -1);
	assert_int_equal(plot_format_find("out/x.png"), PLOT_PNG);
	assert_int_equal(plot_format_find("X.SVG"), PLOT_SVG);
	assert_int_equal(plot_format_find("pdf"), PLOT_PDF);
	assert_int_equal(plot_format_find("a.pdf/x"), -1);
	assert_int_equal(plot_format_find("chart.jpg"), -1);
	assert_string_equal(plot_format_mime(PLOT_SVG), "image/svg+xml");
	/* Every chart has its template compiled in. */
	for (int c = 0; c < PLOT_NR_CHARTS; c++) {
		char name[32];
		int found = 0;

		snprintf(name, sizeof(name), "%s.gp", plot_chart_name(c));
		for (int i = 0; i < plot_nr_templates; i++)
			found |= !strcmp(plot_templates[i].name, name);
		assert_true(found);
	}
}

static const char *file_text(const struct plot_files *fs, const char *name)
{
	const struct plot_file *f = plot_files_get(fs, name);

	if (!f)
		fail_msg("no file %s", name);
	return f->text;
}

static void test_timeline(void **state)
{
	struct plot_job j = fixture();
	struct plot_files fs;
	const char *v, *r, *c;

	(void)state;
	assert_int_equal(plot_files_make(&fs, PLOT_TIMELINE, PLOT_SVG, &j, 1), 0);
	v = file_text(&fs, "vars.gp");
	assert_non_null(strstr(v, "set terminal svg size 1000,560"));
	assert_non_null(strstr(v, "set output 'chart.svg'"));
	assert_non_null(strstr(v, "TITLE = 'job 3: demo bench v1.0..main, timeline'\n"));
	/* The subject's quotes doubled, its newline a space: one line of gnuplot. */
	assert_non_null(strstr(v, "SUBTITLE = 'culprit 08abc0000000 net: don''t ''GRO'' \"twice\" Signed-off-by: x'\n"));
	assert_non_null(strstr(v, "N = 7\n"));
	assert_non_null(strstr(v, "FOCUS_X = 4\n"));   /* 0 5 7 8: the fourth measured */
	assert_non_null(strstr(v, "NAGENTS = 2\n"));
	assert_non_null(strstr(v, "array AGENT[2] = ['lab1', 'lab2']\n"));
	assert_non_null(strstr(v, "set xtics ('good 00abc0000000' 1, '05abc0000000' 2, 'parent 07abc0000000' 3, "
			       "'culprit 08abc0000000' 4, '09abc0000000' 5"));
	c = file_text(&fs, "commits.dat");
	assert_non_null(strstr(c, "\n1 1019.6 1003.2864 1035.9136 5 1 0\n"));  /* x hmean lo hi n kind idx */
	assert_non_null(strstr(c, "\n4 819.6 806.4864 832.7136 5 3 8\n"));
	assert_non_null(strstr(c, "\n7 819.6 806.4864 832.7136 5 2 19\n"));
	r = file_text(&fs, "runs.dat");
	assert_non_null(strstr(r, "\n0.850 1000 0\n"));  /* the first run of commit 0, jittered left */
	assert_null(strstr(r, " 0 0\n"));                 /* the failed run is left out */
	assert_non_null(strstr(file_text(&fs, "chart.gp"), "hmean (CV)"));
	plot_files_release(&fs);
}

/* The y axis' unit and divisor: at most four digits before the point, the prefix on units that take one. */
static void test_axis_scale(void **state)
{
	static const struct {
		const char *unit;
		double max, div;
		const char *want;
	} cases[] = {
		{ "Mb/s", 1877.4, 1, "Mb/s" },           /* pktgen's seed, as measured */
		{ "ops/s", 9999, 1, "ops/s" },
		{ "ops/s", 10000, 1e3, "Kops/s" },
		{ "ops/s", 172480905, 1e6, "Mops/s" },
		{ "bits/s", 9.41e9, 1e6, "Mbits/s" },     /* 9410 Mbits/s: four digits */
		{ "Kbits/s", 9.41e6, 1e3, "Mbits/s" },    /* a prefix raised */
		{ "kpps", 2e7, 1e6, "Gpps" },             /* 20000 Mpps: five digits */
		{ "Mpps", 14.88, 1, "Mpps" },
		{ "Gbps", 4e6, 1e3, "Tbps" },
		{ "Gbps", 4e7, 1e6, "Gbps (millions)" },  /* no prefix beyond T */
		{ "ns", 125000, 1e3, "ns (thousands)" },  /* not a unit of ours: in words */
		{ "", 5e9, 1e6, "(millions)" },
		{ "%", 99.5, 1, "%" },
		{ "ops/s", 1e30, 1e12, "Tops/s" },        /* at most trillions */
	};
	char out[96];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double div = plot_axis_scale(out, sizeof(out), cases[i].unit, cases[i].max);

		if (div != cases[i].div || strcmp(out, cases[i].want))
			fail_msg("%s at %g: %g '%s', want %g '%s'", cases[i].unit, cases[i].max, div, out,
				 cases[i].div, cases[i].want);
	}
	assert_true(plot_axis_scale(out, sizeof(out), NULL, NAN) == 1);
	assert_string_equal(out, "");
}

/*
 * A job at 172 Mops/s (the fixture's runs x 172480.905): every chart
 * draws its values in millions and says so in its unit, where gnuplot's
 * own tick labels would read 1.7e+08.
 */
static void test_big_values(void **state)
{
	const double k = 172480.905;
	struct plot_job j[2];
	struct plot_files fs;

	(void)state;
	j[0] = fixture();
	for (size_t i = 0; i < j[0].nr_runs; i++)
		runs[i].value *= k;
	for (int i = 0; i < NC; i++)
		commits[i].hmean *= k;
	j[1] = j[0];
	j[1].id = 4;
	for (int c = PLOT_TIMELINE; c <= PLOT_COMPARE; c++) {
		assert_int_equal(plot_files_make(&fs, c, PLOT_SVG, j, 2), 0);
		assert_non_null(strstr(file_text(&fs, "vars.gp"), "UNIT = 'Mops/s'\n"));
		plot_files_release(&fs);
	}
	assert_int_equal(plot_files_make(&fs, PLOT_TIMELINE, PLOT_SVG, j, 1), 0);
	assert_non_null(strstr(file_text(&fs, "runs.dat"), "\n0.850 172.480905 0\n"));
	assert_non_null(strstr(file_text(&fs, "commits.dat"), "\n1 175.861531 173.047746 178.675315 5 1 0\n"));
	plot_files_release(&fs);
	assert_int_equal(plot_files_make(&fs, PLOT_DISTRIBUTION, PLOT_SVG, j, 1), 0);
	assert_non_null(strstr(file_text(&fs, "box.dat"), "\n1 174.205714 172.480905 179.380141 177.655332 "
			       "175.930523 3\n"));
	plot_files_release(&fs);
	assert_int_equal(plot_files_make(&fs, PLOT_COMPARE, PLOT_SVG, j, 2), 0);
	assert_non_null(strstr(file_text(&fs, "compare.dat"), " 175.861531 2.81378449 175.861531 2.81378449\n"));
	plot_files_release(&fs);
	/* The posterior draws probabilities: its unit is the job's. */
	assert_int_equal(plot_files_make(&fs, PLOT_POSTERIOR, PLOT_SVG, j, 1), 0);
	assert_non_null(strstr(file_text(&fs, "vars.gp"), "UNIT = 'ops/s'\n"));
	plot_files_release(&fs);
}

/*
 * Agent lab2 reads 15% low: its runs divided by 0.85, every commit's
 * hmean and CV made again from them (1000 + 10 r at commit 0 whichever
 * agent ran it: the pooled hmean there was 937), the failed run left
 * failed; the chart says at whose level.
 */
static void test_timeline_at_levels(void **state)
{
	struct plot_job j = fixture();
	const double scale[2] = { 1, 0.85 };
	struct plot_files fs;
	double want;

	(void)state;
	for (size_t i = 0; i < j.nr_runs; i++)
		if (runs[i].agent == 1)
			runs[i].value *= 0.85;
	plot_at_levels(commits, NC, runs, j.nr_runs, scale, 2);
	want = 5 / (1 / 1000.0 + 1 / 1010.0 + 1 / 1020.0 + 1 / 1030.0 + 1 / 1040.0);
	assert_true(fabs(commits[0].hmean - want) < 1e-9 * want);
	assert_int_equal(commits[0].n, 5);
	assert_true(fabs(commits[0].cv - 15.811388300841896 / 1020) < 1e-9);
	want = 5 / (1 / 800.0 + 1 / 810.0 + 1 / 820.0 + 1 / 830.0 + 1 / 840.0);
	assert_true(fabs(commits[CULPRIT].hmean - want) < 1e-9 * want);
	assert_int_equal(commits[10].n, 5);  /* its failed run still not counted */
	assert_int_equal(commits[1].n, 0);   /* not measured: untouched */
	for (size_t i = 0; i < j.nr_runs; i++)
		if (runs[i].idx == 0)
			assert_true(fabs(runs[i].value - 1000 - 10 * (double)(i % 5)) < 1e-9);
	j.levels = "at lab1's level: lab2 -15.00%";
	assert_int_equal(plot_files_make(&fs, PLOT_TIMELINE, PLOT_SVG, &j, 1), 0);
	assert_non_null(strstr(file_text(&fs, "vars.gp"), "Signed-off-by: x; runs and hmeans at lab1''s level: "
			       "lab2 -15.00%'\n"));
	plot_files_release(&fs);
}

static void test_timeline_undecided(void **state)
{
	struct plot_job j = fixture();
	struct plot_files fs;
	const char *v;

	(void)state;
	j.culprit = -1;  /* the most probable commit is marked, as such */
	assert_int_equal(plot_files_make(&fs, PLOT_TIMELINE, PLOT_PNG, &j, 1), 0);
	v = file_text(&fs, "vars.gp");
	assert_non_null(strstr(v, "set terminal pngcairo size 1000,560"));
	assert_non_null(strstr(v, "set output 'chart.png'"));
	assert_non_null(strstr(v, "FOCUS = 'likely'\n"));
	assert_non_null(strstr(v, "'likely 08abc0000000' 4"));
	assert_non_null(strstr(file_text(&fs, "commits.dat"), "\n4 819.6 806.4864 832.7136 5 4 8\n"));
	plot_files_release(&fs);
}

static void test_distribution(void **state)
{
	struct plot_job j = fixture();
	struct plot_files fs;
	const char *v, *d;

	(void)state;
	assert_int_equal(plot_files_make(&fs, PLOT_DISTRIBUTION, PLOT_PDF, &j, 1), 0);
	v = file_text(&fs, "vars.gp");
	assert_non_null(strstr(v, "set terminal pdfcairo"));
	/* 4 commits x 2 agents: 8 boxes, each group 3 wide. */
	assert_non_null(strstr(v, "NB = 8\nXMAX = 12\n"));
	assert_non_null(strstr(v, "'culprit 08abc0000000 @lab1' 7, 'culprit 08abc0000000 @lab2' 8"));
	d = file_text(&fs, "dist.dat");
	assert_non_null(strstr(d, "\n0.880 1000 0\n"));
	/* x q1 min max q3 median n: lab1 measured 1000 1020 1040 of the good end, lab2 1010 1030. */
	d = file_text(&fs, "box.dat");
	assert_non_null(strstr(d, "\n1 1010 1000 1040 1030 1020 3\n2 1015 1010 1030 1025 1020 2\n"));
	assert_non_null(strstr(d, "\n7 810 800 840 830 820 3\n"));
	plot_files_release(&fs);

	/* One agent: one box per commit. */
	for (size_t i = 0; i < j.nr_runs; i++)
		runs[i].agent = 0;
	assert_int_equal(plot_files_make(&fs, PLOT_DISTRIBUTION, PLOT_SVG, &j, 1), 0);
	assert_non_null(strstr(file_text(&fs, "box.dat"), "\n1 1010 1000 1040 1030 1020 5\n3 1010"));
	assert_non_null(strstr(file_text(&fs, "vars.gp"), "'culprit 08abc0000000' 5"));
	plot_files_release(&fs);
}

static void test_compare(void **state)
{
	struct plot_job j[2];
	struct plot_commit other[NC];
	struct plot_files fs;
	const char *v, *d;

	(void)state;
	j[0] = fixture();
	j[1] = j[0];
	j[1].id = 4;
	j[1].variant = "mitigations=off";
	memcpy(other, commits, sizeof(other));
	for (int i = 0; i < NC; i++)
		other[i].hmean *= 1.1;
	other[7].n = 0;   /* the parent not measured in that variant */
	j[1].commits = other;
	assert_int_equal(plot_files_make(&fs, PLOT_COMPARE, PLOT_SVG, j, 2), 0);
	v = file_text(&fs, "vars.gp");
	assert_non_null(strstr(v, "NV = 2\nNK = 4\n"));
	assert_non_null(strstr(v, "array VARIANT[2] = ['no variant (job 3)', 'mitigations=off (job 4)']\n"));
	d = file_text(&fs, "compare.dat");
	assert_non_null(strstr(d, "\n\"good 00abc0000000\" 1019.6 16.3136 1121.56 17.94496\n"));
	assert_non_null(strstr(d, "\n\"parent 07abc0000000\" 1019.6 16.3136 ? ?\n"));
	assert_non_null(strstr(d, "\n\"culprit 08abc0000000\" 819.6"));
	plot_files_release(&fs);
}

static void test_posterior(void **state)
{
	struct plot_job j = fixture();
	struct plot_files fs;
	const char *v, *o;

	(void)state;
	assert_int_equal(plot_files_make(&fs, PLOT_POSTERIOR, PLOT_SVG, &j, 1), 0);
	v = file_text(&fs, "vars.gp");
	assert_non_null(strstr(v, "NTOP = 3\nNC = 3\nNDEC = 6\n"));
	assert_non_null(strstr(v, "array CAND[3] = ['parent 07abc0000000', 'culprit 08abc0000000', '09abc0000000']\n"));
	assert_non_null(strstr(file_text(&fs, "top.dat"), "\n1 0.95 1\n2 0.3 0\n3 0.1 0\n"));
	assert_non_null(strstr(file_text(&fs, "top_tics.gp"), "'culprit 08abc0000000' 1"));
	o = file_text(&fs, "over.dat");
	/* The culprit over time (the first decision had no top: left out). */
	assert_non_null(strstr(o, "\n20 0.35\n30 0.5\n"));
	assert_non_null(strstr(file_text(&fs, "phases.gp"), "set label 102 'search' at 30,"));
	plot_files_release(&fs);
}

static void test_refusals(void **state)
{
	struct plot_job j = fixture();
	struct plot_files fs;

	(void)state;
	j.nr_decisions = 1;  /* only the one without a top */
	assert_int_equal(plot_files_make(&fs, PLOT_POSTERIOR, PLOT_SVG, &j, 1), ERR_CONFLICT);
	assert_non_null(strstr(err_msg(), "job 3 has no posterior yet"));
	plot_files_release(&fs);
	j.nr_runs = 0;
	for (int c = 0; c < PLOT_NR_CHARTS; c++) {
		assert_int_equal(plot_files_make(&fs, c, PLOT_PNG, &j, 1), ERR_CONFLICT);
		assert_int_equal(fs.n, 0);
		plot_files_release(&fs);
	}
	assert_non_null(strstr(err_msg(), "no measured runs yet"));
	j = fixture();
	j.nr_runs = 1;
	runs[0].value = -1;  /* only failed runs: nothing to draw either */
	assert_int_equal(plot_files_make(&fs, PLOT_TIMELINE, PLOT_PNG, &j, 1), ERR_CONFLICT);
	plot_files_release(&fs);
}

/* Each template draws its files: gnuplot exits 0 and the output names the culprit. */
static void test_templates_draw(void **state)
{
	const char *keep = getenv("PLOT_KEEP");
	char tmp[] = "/tmp/test_plot.XXXXXX";
	struct plot_job j[2];

	(void)state;
	if (!in_path("gnuplot")) {
		print_message("# gnuplot is not installed (make deps): templates not drawn\n");
		skip();
	}
	assert_non_null(mkdtemp(tmp));
	j[0] = fixture();
	j[1] = j[0];
	j[1].id = 4;
	j[1].variant = "mitigations=off";
	for (int c = 0; c < PLOT_NR_CHARTS; c++) {
		for (int f = PLOT_SVG; f <= PLOT_PDF; f++) {
			const char *argv[] = { "gnuplot", "vars.gp", "chart.gp", NULL };
			struct run_opts o = RUN_OPTS_INIT;
			struct run_result res;
			struct plot_files fs;
			char *out, *path, *text = NULL;
			size_t len = 0;

			assert_int_equal(plot_files_make(&fs, c, f, j, 2), 0);
			assert_int_equal(plot_files_write(&fs, tmp), 0);
			o.argv = argv;
			o.cwd = tmp;
			o.timeout_ms = 20000;
			assert_int_equal(run_cmd(&res, &o), 0);
			if (!run_ok(&res) || *res.err)
				fail_msg("%s.%s: gnuplot: %s", plot_chart_name(c), plot_format_ext(f), res.err);
			path = xasprintf("%s/chart.%s", tmp, plot_format_ext(f));
			assert_int_equal(file_read(&text, &len, path, 16 << 20), 0);
			assert_true(len > 1000);
			if (f == PLOT_SVG)
				assert_non_null(strstr(text, "08abc0000000"));
			if (keep) {
				out = xasprintf("%s/%s.%s", keep, plot_chart_name(c), plot_format_ext(f));
				assert_int_equal(file_write_atomic(out, text, len), 0);
				free(out);
			}
			free(text);
			free(path);
			run_result_release(&res);
			plot_files_release(&fs);
		}
	}
	if (keep)
		print_message("# the last chart's files are in %s\n", tmp);
	else
		remove_tree(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_timeline),
		cmocka_unit_test(test_axis_scale),
		cmocka_unit_test(test_big_values),
		cmocka_unit_test(test_timeline_at_levels),
		cmocka_unit_test(test_timeline_undecided),
		cmocka_unit_test(test_distribution),
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_posterior),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_templates_draw),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
