/* load and cpu: configuration, fixed proc trees, and the real /proc. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/probes/kinds.h"
#include "probeutil.h"

/* A proc tree with loadavg and a stat of ncpu CPUs whose aggregate is cpu. */
static char *
proc_tree(const char *loadavg, int ncpu, const char *cpu)
{
	char	*root = tu_tmpdir(), *stat, *p;
	size_t	 size = 4096 + (size_t)ncpu * 64;
	int	 i;

	if (loadavg != NULL)
		free(tu_write(root, "loadavg", loadavg, -1));
	ck_assert_ptr_nonnull(stat = p = malloc(size));
	p += sprintf(p, "cpu  %s\n", cpu);
	for (i = 0; i < ncpu; i++)
		p += sprintf(p, "cpu%d 10 0 10 70 10 0 0 0 0 0\n", i);
	sprintf(p, "intr 12345 1 2 3\nctxt 999\nbtime 1700000000\n"
	    "processes 42\nprocs_running 1\nprocs_blocked 0\n");
	free(tu_write(root, "stat", stat, -1));
	free(stat);
	return root;
}

static void
rm_tree(char *root)
{
	tu_rmtree(root);
	free(root);
}

START_TEST(load_config_errors)
{
	const struct probe_ops	*l = &probe_load_ops, *c = &probe_cpu_ops;

	pu_conf_set_fails(l, "window", "2", "expected 1, 5 or 15 (minutes)");
	pu_conf_set_fails(l, "window", "5m", "expected 1, 5 or 15 (minutes)");
	pu_conf_set_fails(l, "window", "", "expected 1, 5 or 15 (minutes)");
	pu_conf_set_fails(l, "warn", "high",
	    "expected a number of 0 or more, such as 1.5");
	pu_conf_set_fails(l, "warn", "-1",
	    "expected a number of 0 or more, such as 1.5");
	pu_conf_set_fails(l, "crit", "150%",
	    "expected a number of 0 or more, such as 1.5");
	pu_conf_check_fails(l, "crit must be above warn (a higher value is "
	    "worse)", "warn", "2", "crit", "1.5", NULL);
	pu_conf_check_fails(l, "crit must be above warn (a higher value is "
	    "worse)", "warn", "2", "crit", "2.0", NULL);

	pu_conf_set_fails(c, "warn", "90", "expected a percentage such as 85%");
	pu_conf_set_fails(c, "crit", "190%",
	    "expected a percentage from 0% to 100%");
	pu_conf_check_fails(c, "crit must be above warn (a higher value is "
	    "worse)", "warn", "90%", "crit", "80%", NULL);
}
END_TEST

START_TEST(load_windows)
{
	char		*root = proc_tree("2.00 4.00 8.00 3/412 12345\n", 4,
			    "40 0 40 280 40 0 0 0 0 0");
	struct pu	 sr;

	/* No thresholds: the value, ok. */
	pu_init(&sr, &probe_load_ops, root);
	pu_check(&sr);
	pu_expect(&sr, PROBE_OK, "load 0.50 per CPU");
	ck_assert_double_eq(sr.out.value, 0.5);
	pu_done(&sr);

	pu_init(&sr, &probe_load_ops, root);
	pu_set(&sr, "window", "5");
	pu_expect(&sr, PROBE_OK, "load5 1.00 per CPU");
	ck_assert_double_eq(sr.out.value, 1);
	pu_done(&sr);

	pu_init(&sr, &probe_load_ops, root);
	pu_set(&sr, "window", "15");
	pu_set(&sr, "warn", "1.5");
	pu_set(&sr, "crit", "3");
	pu_check(&sr);
	pu_expect(&sr, PROBE_WARN, "load15 2.00 per CPU (warn 1.5)");
	ck_assert_double_eq(sr.out.value, 2);
	pu_done(&sr);
	rm_tree(root);
}
END_TEST

/* The per-CPU load of "9.20 ..." on n CPUs against warn and crit. */
static void
load_case(int ncpu, const char *warn, const char *crit, enum probe_result r,
    const char *reason)
{
	char		*root = proc_tree("9.20 0.00 0.00 1/1 1\n", ncpu,
			    "1 0 1 7 1 0 0 0 0 0");
	struct pu	 sr;

	pu_init(&sr, &probe_load_ops, root);
	if (warn != NULL)
		pu_set(&sr, "warn", warn);
	if (crit != NULL)
		pu_set(&sr, "crit", crit);
	pu_check(&sr);
	pu_expect(&sr, r, reason);
	ck_assert_double_eq_tol(sr.out.value, 9.2 / ncpu, 1e-9);
	pu_done(&sr);
	rm_tree(root);
}

START_TEST(load_thresholds)
{
	load_case(4, "1.5", "3", PROBE_WARN, "load 2.30 per CPU (warn 1.5)");
	load_case(4, "1.5", "2", PROBE_CRIT, "load 2.30 per CPU (crit 2)");
	load_case(4, NULL, "2.25", PROBE_CRIT, "load 2.30 per CPU (crit 2.25)");
	load_case(4, "2.3", NULL, PROBE_OK, "load 2.30 per CPU");
	load_case(8, "1.5", "3", PROBE_OK, "load 1.15 per CPU");
	load_case(1, "1.5", "3", PROBE_CRIT, "load 9.20 per CPU (crit 3)");
	load_case(2, "0", NULL, PROBE_WARN, "load 4.60 per CPU (warn 0)");
}
END_TEST

START_TEST(load_bad_files)
{
	const char	*bad[] = { "", "\n", "abc", "1.0 2.0", "1.0 2.0 x 1/1 1",
			    "-1.0 2.0 3.0 1/1 1", "1.0, 2.0, 3.0", "nan 1 1 1/1 1" };
	struct pu	 sr;
	char		*root, *why;
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		root = proc_tree(bad[i], 2, "1 0 1 7 1 0 0 0 0 0");
		ck_assert_int_ne(asprintf(&why, "%s/loadavg: malformed", root),
		    -1);
		pu_init(&sr, &probe_load_ops, root);
		pu_expect(&sr, PROBE_CRIT, why);
		ck_assert(isnan(sr.out.value));
		pu_done(&sr);
		free(why);
		rm_tree(root);
	}

	/* No loadavg at all. */
	root = proc_tree(NULL, 2, "1 0 1 7 1 0 0 0 0 0");
	ck_assert_int_ne(asprintf(&why, "%s/loadavg: No such file or "
	    "directory", root), -1);
	pu_init(&sr, &probe_load_ops, root);
	pu_expect(&sr, PROBE_CRIT, why);
	pu_done(&sr);
	free(why);

	/* A stat without cpuN lines: no CPU count. */
	free(tu_write(root, "loadavg", "1 1 1 1/1 1\n", -1));
	free(tu_write(root, "stat", "cpu  1 2 3 4\nintr 1\n", -1));
	ck_assert_int_ne(asprintf(&why, "%s/stat: no cpuN lines", root), -1);
	pu_init(&sr, &probe_load_ops, root);
	pu_expect(&sr, PROBE_CRIT, why);
	pu_done(&sr);
	free(why);
	rm_tree(root);
}
END_TEST

START_TEST(load_too_many_cpus)
{
	/* More cpu lines than the bounded read holds: said, not miscounted. */
	char		*root = proc_tree("1 1 1 1/1 1\n", 9000,
			    "1 0 1 7 1 0 0 0 0 0"), *why;
	struct pu	 sr;

	ck_assert_int_ne(asprintf(&why, "%s/stat: too many cpu lines", root),
	    -1);
	pu_init(&sr, &probe_load_ops, root);
	pu_expect(&sr, PROBE_CRIT, why);
	pu_done(&sr);
	free(why);
	rm_tree(root);

	/* Many, but within the bound. */
	root = proc_tree("1024 1 1 1/1 1\n", 2048, "1 0 1 7 1 0 0 0 0 0");
	pu_init(&sr, &probe_load_ops, root);
	pu_expect(&sr, PROBE_OK, "load 0.50 per CPU");
	pu_done(&sr);
	rm_tree(root);
}
END_TEST

START_TEST(load_real_proc)
{
	struct pu	sr;

	pu_init(&sr, &probe_load_ops, NULL);
	ck_assert(pu_once(&sr, 10000));
	ck_assert_int_eq(sr.out.result, PROBE_OK);
	ck_assert(sr.out.value >= 0 && isfinite(sr.out.value));
	ck_assert_msg(strncmp(sr.out.reason, "load ", 5) == 0 &&
	    strstr(sr.out.reason, " per CPU") != NULL, "%s", sr.out.reason);
	pu_done(&sr);
}
END_TEST

/* lbagent out of descriptors: unknown, for load and cpu alike. */
START_TEST(load_out_of_descriptors)
{
	struct pu	sr;
	struct tu_fds	fds;

	pu_init(&sr, &probe_load_ops, NULL);
	tu_fds_exhaust(&fds, 0);
	pu_expect(&sr, PROBE_UNKNOWN, "/proc/loadavg: Too many open "
	    "files (lbagent out of descriptors)");
	tu_fds_release(&fds);
	ck_assert(pu_once(&sr, 10000));
	ck_assert_int_ne(sr.out.result, PROBE_UNKNOWN);
	pu_done(&sr);
	pu_init(&sr, &probe_cpu_ops, NULL);
	tu_fds_exhaust(&fds, 0);
	pu_expect(&sr, PROBE_UNKNOWN, "/proc/stat: Too many open files "
	    "(lbagent out of descriptors)");
	tu_fds_release(&fds);
	pu_expect(&sr, PROBE_OK, "first sample");
	pu_done(&sr);
}
END_TEST

/* Rewrites root's stat with a new aggregate line. */
static void
cpu_sample(const char *root, const char *cpu)
{
	char	*stat;

	ck_assert_int_ne(asprintf(&stat, "cpu  %s\ncpu0 1 1 1 1\nintr 1\n",
	    cpu), -1);
	free(tu_write(root, "stat", stat, -1));
	free(stat);
}

START_TEST(cpu_samples)
{
	char		*root = proc_tree(NULL, 2, "100 0 100 700 100 0 0 0 0 0");
	struct pu	 sr;

	pu_init(&sr, &probe_cpu_ops, root);
	pu_set(&sr, "warn", "70%");
	pu_set(&sr, "crit", "90%");
	pu_check(&sr);
	/* One sample cannot tell busy time: ok, no value. */
	pu_expect(&sr, PROBE_OK, "first sample");
	ck_assert(isnan(sr.out.value));
	ck_assert_ptr_nonnull(sr.run.keep);

	/* +300 user, +100 idle: 75% busy. */
	cpu_sample(root, "400 0 100 800 100 0 0 0 0 0");
	pu_expect(&sr, PROBE_WARN, "cpu 75% busy (warn 70%)");
	ck_assert_double_eq(sr.out.value, 75);

	/* +95 system, +5 iowait (idle): 95% busy. */
	cpu_sample(root, "400 0 195 800 105 0 0 0 0 0");
	pu_expect(&sr, PROBE_CRIT, "cpu 95% busy (crit 90%)");

	/* Steal and irq are busy; guest is already inside user. */
	cpu_sample(root, "400 0 195 1100 105 50 0 50 999 999");
	pu_expect(&sr, PROBE_OK, "cpu 25% busy");
	ck_assert_double_eq(sr.out.value, 25);

	/* Nothing moved (a fixed tree, or two runs in one tick). */
	pu_expect(&sr, PROBE_OK, "no cpu time passed since the last sample");
	ck_assert(isnan(sr.out.value));

	/* One third busy: a decimal in the reason. */
	cpu_sample(root, "401 0 195 1102 105 50 0 50 999 999");
	pu_expect(&sr, PROBE_OK, "cpu 33.3% busy");

	/* Counters went back (another proc_root, a wrap): start over. */
	cpu_sample(root, "1 0 1 1 1 0 0 0 0 0");
	pu_expect(&sr, PROBE_OK, "cpu counters went back; first sample "
	    "again");
	cpu_sample(root, "1 0 1 11 1 0 0 0 0 0");
	pu_expect(&sr, PROBE_OK, "cpu 0% busy");

	/* Old kernels: only user nice system idle. */
	cpu_sample(root, "11 0 1 12");
	pu_expect(&sr, PROBE_CRIT, "cpu 100% busy (crit 90%)");
	pu_done(&sr);
	rm_tree(root);
}
END_TEST

START_TEST(cpu_bad_files)
{
	const char	*bad[] = { "", "cpu0 1 2 3 4\n", "cpu  1 2 3\n",
			    "cpu  a b c d\n", "cpu  1 2 3 -4\n", "cpu  1 2 3 4x\n",
			    "intr 1\ncpu  1 2 3 4\n",
			    "cpu  99999999999999999999999 1 1 1\n",
			    "cpu  18446744073709551615 1 1 1\n" };
	char		*root = proc_tree(NULL, 1, "1 1 1 1"), *why;
	struct pu	 sr;
	size_t		 i;

	ck_assert_int_ne(asprintf(&why, "%s/stat: malformed cpu line", root),
	    -1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		free(tu_write(root, "stat", bad[i], -1));
		pu_init(&sr, &probe_cpu_ops, root);
		pu_expect(&sr, PROBE_CRIT, why);
		ck_assert(isnan(sr.out.value));
		ck_assert_ptr_null(sr.run.keep);
		pu_done(&sr);
	}
	free(why);
	ck_assert_int_ne(asprintf(&why, "%s/nowhere/stat: No such file or "
	    "directory", root), -1);
	{
		char	*nowhere;

		ck_assert_int_ne(asprintf(&nowhere, "%s/nowhere", root), -1);
		pu_init(&sr, &probe_cpu_ops, nowhere);
		pu_expect(&sr, PROBE_CRIT, why);
		pu_done(&sr);
		free(nowhere);
	}
	free(why);
	rm_tree(root);
}
END_TEST

static volatile unsigned long burn;

START_TEST(cpu_real_proc)
{
	struct pu	sr;
	int		i;

	pu_init(&sr, &probe_cpu_ops, NULL);
	pu_expect(&sr, PROBE_OK, "first sample");
	/* Burn a little CPU so some time passes. */
	for (i = 0; i < 20; i++) {
		unsigned long	n;

		for (n = 0; n < 5000000; n++)
			burn += n;
		ck_assert(pu_once(&sr, 10000));
		if (!isnan(sr.out.value))
			break;
	}
	ck_assert_int_eq(sr.out.result, PROBE_OK);
	ck_assert(sr.out.value >= 0 && sr.out.value <= 100);
	ck_assert_msg(strncmp(sr.out.reason, "cpu ", 4) == 0 &&
	    strstr(sr.out.reason, "% busy") != NULL, "%s", sr.out.reason);
	pu_done(&sr);
}
END_TEST

/* Junk in loadavg and stat: always exactly one report, never a crash. */
START_TEST(load_junk)
{
	char		*root = tu_tmpdir(), buf[700];
	unsigned	 seed = 7;
	struct pu	 sr;
	size_t		 n;
	int		 i;

	for (i = 0; i < 400; i++) {
		if (i % 2 == 0)
			free(tu_write(root, "loadavg", "1 1 1 1/1 1\n", -1));
		else {
			n = pu_junk(buf, sizeof(buf), &seed);
			free(tu_write(root, "loadavg", buf, (long)n));
		}
		n = pu_junk(buf, sizeof(buf), &seed);
		free(tu_write(root, "stat", buf, (long)n));
		pu_init(&sr, i % 3 == 0 ? &probe_cpu_ops : &probe_load_ops,
		    root);
		pu_set(&sr, "warn", i % 3 == 0 ? "50%" : "1");
		ck_assert(pu_once(&sr, 10000));
		/* cpu: a second sample, compared with the first. */
		n = pu_junk(buf, sizeof(buf), &seed);
		free(tu_write(root, "stat", buf, (long)n));
		ck_assert(pu_once(&sr, 10000));
		ck_assert_int_eq(sr.reports, 2);
		ck_assert(isnan(sr.out.value) || sr.out.value >= 0);
		pu_done(&sr);
	}
	tu_rmtree(root);
	free(root);
}
END_TEST

static Suite *
load_suite(void)
{
	Suite	*s = suite_create("probe_load");
	TCase	*tc = tcase_create("load");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, load_config_errors);
	tcase_add_test(tc, load_windows);
	tcase_add_test(tc, load_thresholds);
	tcase_add_test(tc, load_bad_files);
	tcase_add_test(tc, load_too_many_cpus);
	tcase_add_test(tc, load_real_proc);
	tcase_add_test(tc, load_out_of_descriptors);
	tcase_add_test(tc, cpu_samples);
	tcase_add_test(tc, cpu_bad_files);
	tcase_add_test(tc, cpu_real_proc);
	tcase_add_test(tc, load_junk);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(load_suite());
}
