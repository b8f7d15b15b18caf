/* memory and swap: configuration, fixed meminfo files, the real /proc. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/probes/kinds.h"
#include "probeutil.h"

/* A meminfo as Linux 6 writes it, with the given values (kB). */
static char *
meminfo_tree(const char *total, const char *avail, const char *swap_total,
    const char *swap_free)
{
	char	*root = tu_tmpdir(), *text, *p;

	ck_assert_ptr_nonnull(text = p = malloc(4096));
	p += sprintf(p, "MemTotal:       %s kB\nMemFree:          100 kB\n",
	    total);
	if (avail != NULL)
		p += sprintf(p, "MemAvailable:   %s kB\n", avail);
	p += sprintf(p, "Buffers:           10 kB\nCached:           200 kB\n"
	    "SwapCached:          0 kB\nActive:           300 kB\n");
	if (swap_total != NULL)
		p += sprintf(p, "SwapTotal:      %s kB\n", swap_total);
	if (swap_free != NULL)
		p += sprintf(p, "SwapFree:       %s kB\n", swap_free);
	sprintf(p, "Dirty:              12 kB\nHugePages_Total:       0\n"
	    "Hugepagesize:       2048 kB\n");
	free(tu_write(root, "meminfo", text, -1));
	free(text);
	return root;
}

static void
rm_tree(char *root)
{
	tu_rmtree(root);
	free(root);
}

/* One run of ops on root with warn and crit; asserts result and reason. */
static void
mem_case(const struct probe_ops *ops, const char *root, const char *warn,
    const char *crit, enum probe_result r, const char *reason)
{
	struct pu	sr;

	pu_init(&sr, ops, root);
	if (warn != NULL)
		pu_set(&sr, "warn", warn);
	if (crit != NULL)
		pu_set(&sr, "crit", crit);
	pu_check(&sr);
	pu_expect(&sr, r, reason);
	pu_done(&sr);
}

START_TEST(memory_config_errors)
{
	const struct probe_ops	*ops[] = { &probe_memory_ops, &probe_swap_ops };
	int			 i;

	for (i = 0; i < 2; i++) {
		pu_conf_set_fails(ops[i], "warn", "85",
		    "expected a percentage such as 85%");
		pu_conf_set_fails(ops[i], "warn", "5G",
		    "expected a percentage such as 85%");
		pu_conf_set_fails(ops[i], "crit", "-1%",
		    "expected a percentage from 0% to 100%");
		pu_conf_check_fails(ops[i], "crit must be above warn (a higher "
		    "value is worse)", "warn", "90%", "crit", "85%", NULL);
	}
	ck_assert_str_eq(probe_memory_ops.unit, "%");
	ck_assert_str_eq(probe_swap_ops.unit, "%");
}
END_TEST

START_TEST(memory_used)
{
	char		*root = meminfo_tree("1000", "250", "2000", "1500");
	struct pu	 sr;

	pu_init(&sr, &probe_memory_ops, root);
	pu_expect(&sr, PROBE_OK, "75% used");
	ck_assert_double_eq(sr.out.value, 75);
	pu_done(&sr);

	mem_case(&probe_memory_ops, root, "70%", NULL, PROBE_WARN,
	    "75% used (warn 70%)");
	mem_case(&probe_memory_ops, root, "70%", "74.5%", PROBE_CRIT,
	    "75% used (crit 74.5%)");
	mem_case(&probe_memory_ops, root, "75%", "90%", PROBE_OK, "75% used");
	rm_tree(root);

	root = meminfo_tree("16318664", "4079666", "0", "0");
	mem_case(&probe_memory_ops, root, "70%", "90%", PROBE_WARN,
	    "75% used (warn 70%)");
	rm_tree(root);

	root = meminfo_tree("3000", "2000", "0", "0");
	mem_case(&probe_memory_ops, root, NULL, NULL, PROBE_OK, "33.3% used");
	rm_tree(root);

	/* More available than total (never seen; still no nonsense). */
	root = meminfo_tree("1000", "1200", "0", "0");
	mem_case(&probe_memory_ops, root, "0%", NULL, PROBE_OK, "0% used");
	rm_tree(root);
}
END_TEST

START_TEST(swap_used)
{
	char		*root = meminfo_tree("1000", "250", "2000", "1500");
	struct pu	 sr;

	pu_init(&sr, &probe_swap_ops, root);
	pu_expect(&sr, PROBE_OK, "25% used");
	ck_assert_double_eq(sr.out.value, 25);
	pu_done(&sr);
	mem_case(&probe_swap_ops, root, "20%", "50%", PROBE_WARN,
	    "25% used (warn 20%)");
	mem_case(&probe_swap_ops, root, "10%", "20%", PROBE_CRIT,
	    "25% used (crit 20%)");
	rm_tree(root);

	/* No swap at all is fine whatever the limits. */
	root = meminfo_tree("1000", "250", "0", "0");
	pu_init(&sr, &probe_swap_ops, root);
	pu_set(&sr, "warn", "0%");
	pu_set(&sr, "crit", "1%");
	pu_expect(&sr, PROBE_OK, "no swap");
	ck_assert(isnan(sr.out.value));
	pu_done(&sr);
	rm_tree(root);

	/* Swap present, all of it used. */
	root = meminfo_tree("1000", "250", "2000", "0");
	mem_case(&probe_swap_ops, root, "50%", "99%", PROBE_CRIT,
	    "100% used (crit 99%)");
	rm_tree(root);
}
END_TEST

/* ops on root must report crit with "<root>/meminfo: <tail>". */
static void
mem_bad(const struct probe_ops *ops, const char *root, const char *tail)
{
	struct pu	sr;
	char		*why;

	ck_assert_int_ne(asprintf(&why, "%s/meminfo: %s", root, tail), -1);
	pu_init(&sr, ops, root);
	pu_set(&sr, "warn", "50%");
	pu_expect(&sr, PROBE_CRIT, why);
	ck_assert(isnan(sr.out.value));
	pu_done(&sr);
	free(why);
}

START_TEST(memory_bad_files)
{
	char	*root;

	/* Linux before 3.14: no MemAvailable, and no guessing. */
	root = meminfo_tree("1000", NULL, "2000", "1000");
	mem_bad(&probe_memory_ops, root,
	    "no MemAvailable (kernel before 3.14?)");
	mem_case(&probe_swap_ops, root, NULL, NULL, PROBE_OK, "50% used");
	rm_tree(root);

	root = meminfo_tree("0", "0", "0", "0");
	mem_bad(&probe_memory_ops, root, "MemTotal is 0");
	rm_tree(root);

	root = meminfo_tree("lots", "0", "0", "0");
	mem_bad(&probe_memory_ops, root, "malformed MemTotal");
	rm_tree(root);

	root = meminfo_tree("1000", "-5", "0", "0");
	mem_bad(&probe_memory_ops, root, "malformed MemAvailable");
	rm_tree(root);

	root = meminfo_tree("1000", "99999999999999999999999", "0", "0");
	mem_bad(&probe_memory_ops, root, "malformed MemAvailable");
	rm_tree(root);

	root = meminfo_tree("1000", "100", NULL, NULL);
	mem_bad(&probe_swap_ops, root, "no SwapTotal");
	rm_tree(root);

	root = meminfo_tree("1000", "100", "100", NULL);
	mem_bad(&probe_swap_ops, root, "no SwapFree");
	rm_tree(root);

	root = meminfo_tree("1000", "100", "100x", "1");
	mem_bad(&probe_swap_ops, root, "malformed SwapTotal");
	rm_tree(root);

	/* A key only as a prefix of another does not count. */
	root = tu_tmpdir();
	free(tu_write(root, "meminfo", "MemTotalX: 5 kB\nMemTotal 5 kB\n", -1));
	mem_bad(&probe_memory_ops, root, "no MemTotal");
	/* Empty, binary, or missing. */
	free(tu_write(root, "meminfo", "", -1));
	mem_bad(&probe_memory_ops, root, "no MemTotal");
	free(tu_write(root, "meminfo", "\0\0\0\xff", 4));
	mem_bad(&probe_swap_ops, root, "no SwapTotal");
	tu_rmtree(root);
	mem_bad(&probe_memory_ops, root, "No such file or directory");
	free(root);
}
END_TEST

START_TEST(memory_real_proc)
{
	const struct probe_ops	*ops[] = { &probe_memory_ops, &probe_swap_ops };
	struct pu		 sr;
	int			 i;

	for (i = 0; i < 2; i++) {
		pu_init(&sr, ops[i], NULL);
		pu_set(&sr, "crit", "100%");
		ck_assert(pu_once(&sr, 10000));
		ck_assert_int_eq(sr.out.result, PROBE_OK);
		if (strcmp(sr.out.reason, "no swap") != 0) {
			ck_assert(sr.out.value >= 0 && sr.out.value <= 100);
			ck_assert_msg(strstr(sr.out.reason, "% used") != NULL,
			    "%s", sr.out.reason);
		}
		pu_done(&sr);
	}
}
END_TEST

/* lbagent out of descriptors: unknown, not a failing memory probe. */
START_TEST(memory_out_of_descriptors)
{
	const struct probe_ops	*ops[] = { &probe_memory_ops, &probe_swap_ops };
	struct pu		 sr;
	struct tu_fds		 fds;
	int			 i;

	for (i = 0; i < 2; i++) {
		pu_init(&sr, ops[i], NULL);
		tu_fds_exhaust(&fds, 0);
		pu_expect(&sr, PROBE_UNKNOWN, "/proc/meminfo: Too many "
		    "open files (lbagent out of descriptors)");
		tu_fds_release(&fds);
		ck_assert(pu_once(&sr, 10000));
		ck_assert_int_ne(sr.out.result, PROBE_UNKNOWN);
		pu_done(&sr);
	}
}
END_TEST

/* Junk in meminfo: always exactly one report, never a crash. */
START_TEST(memory_junk)
{
	char		*root = tu_tmpdir(), buf[2000];
	unsigned	 seed = 11;
	struct pu	 sr;
	size_t		 n;
	int		 i;

	for (i = 0; i < 400; i++) {
		n = pu_junk(buf, sizeof(buf), &seed);
		free(tu_write(root, "meminfo", buf, (long)n));
		pu_init(&sr, i % 2 ? &probe_swap_ops : &probe_memory_ops,
		    root);
		ck_assert(pu_once(&sr, 10000));
		ck_assert_int_eq(sr.reports, 1);
		ck_assert(isnan(sr.out.value) ||
		    (sr.out.value >= 0 && sr.out.value <= 100));
		pu_done(&sr);
	}
	tu_rmtree(root);
	free(root);
}
END_TEST

static Suite *
memory_suite(void)
{
	Suite	*s = suite_create("probe_memory");
	TCase	*tc = tcase_create("memory");

	tcase_add_test(tc, memory_config_errors);
	tcase_add_test(tc, memory_used);
	tcase_add_test(tc, swap_used);
	tcase_add_test(tc, memory_bad_files);
	tcase_add_test(tc, memory_real_proc);
	tcase_add_test(tc, memory_out_of_descriptors);
	tcase_add_test(tc, memory_junk);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(memory_suite());
}
