/* disk and inodes: configuration, real statvfs, and a really hung mount. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "lbagent/probes/kinds.h"
#include "hungfs.h"
#include "probeutil.h"

START_TEST(disk_config_errors)
{
	const struct probe_ops	*d = &probe_disk_ops, *i = &probe_inodes_ops;

	pu_conf_set_fails(d, "path", "var/lib", "expected an absolute path");
	pu_conf_set_fails(d, "path", "", "expected an absolute path");
	pu_conf_set_fails(d, "warn", "lots", "expected a used percentage "
	    "such as 85% or a minimum free size such as 5G");
	pu_conf_set_fails(d, "warn", "5X", "expected a used percentage "
	    "such as 85% or a minimum free size such as 5G");
	pu_conf_set_fails(d, "crit", "-5G", "expected a used percentage "
	    "such as 85% or a minimum free size such as 5G");
	pu_conf_set_fails(d, "crit", "101%",
	    "expected a percentage from 0% to 100%");
	pu_conf_set_fails(d, "crit", "%", "expected a percentage such as 85%");
	/* Bytes free, as written, but surely meant as a percentage. */
	pu_conf_set_fails(d, "warn", "85", "85 is read as 85 bytes free; did "
	    "you mean 85%?");
	pu_conf_set_fails(d, "crit", "0", "0 is read as 0 bytes free; did "
	    "you mean 0%?");
	pu_conf_set_fails(d, "crit", "100", "100 is read as 100 bytes free; "
	    "did you mean 100%?");
	pu_conf_set_fails(i, "warn", "5G", "expected a percentage such as 85%");
	pu_conf_set_fails(i, "crit", "90", "expected a percentage such as 85%");
	pu_conf_set_fails(i, "path", "tmp", "expected an absolute path");

	pu_conf_check_fails(d, "path is required", "warn", "80%", NULL);
	pu_conf_check_fails(i, "path is required", NULL);
	pu_conf_check_fails(d, "crit must be above warn (a higher value is "
	    "worse)", "path", "/", "warn", "90%", "crit", "80%", NULL);
	pu_conf_check_fails(d, "crit must be above warn (a higher value is "
	    "worse)", "path", "/", "warn", "90%", "crit", "90%", NULL);
	pu_conf_check_fails(d, "crit must be below warn (less free space is "
	    "worse)", "path", "/", "warn", "1G", "crit", "5G", NULL);
	pu_conf_check_fails(i, "crit must be above warn (a higher value is "
	    "worse)", "path", "/", "warn", "95%", "crit", "50%", NULL);
}
END_TEST

START_TEST(disk_config_accepted)
{
	struct pu	sr;

	/* A percentage and a size do not compare: both are kept. */
	pu_init(&sr, &probe_disk_ops, NULL);
	pu_set(&sr, "path", "/");
	pu_set(&sr, "warn", "85%");
	pu_set(&sr, "crit", "1G");
	pu_check(&sr);
	pu_done(&sr);

	pu_init(&sr, &probe_disk_ops, NULL);
	pu_set(&sr, "path", "/");
	pu_set(&sr, "warn", "10G");
	pu_set(&sr, "crit", "5G");
	pu_check(&sr);
	pu_done(&sr);

	ck_assert_str_eq(probe_disk_ops.name, "disk");
	ck_assert_str_eq(probe_inodes_ops.name, "inodes");
	ck_assert_str_eq(probe_disk_ops.unit, "%");
	ck_assert(probe_disk_ops.cancel != NULL);
}
END_TEST

/* df's used share of the filesystem at path, as the probe must see it. */
static double
df_pct(const char *path)
{
	struct statvfs	st;
	double		used;

	ck_assert_int_eq(statvfs(path, &st), 0);
	used = (double)(st.f_blocks - st.f_bfree);
	return 100 * used / (used + (double)st.f_bavail);
}

/* lbagent without a descriptor for its worker: unknown, not a full disk. */
START_TEST(disk_out_of_descriptors)
{
	struct pu	sr;
	struct tu_fds	fds;

	pu_init(&sr, &probe_disk_ops, NULL);
	pu_set(&sr, "path", "/");
	pu_check(&sr);
	tu_fds_exhaust(&fds, 0);
	pu_expect(&sr, PROBE_UNKNOWN, "cannot start a thread: Too many "
	    "open files (lbagent out of descriptors)");
	tu_fds_release(&fds);
	ck_assert(pu_once(&sr, 10000));
	ck_assert_int_eq(sr.out.result, PROBE_OK);
	pu_done(&sr);
}
END_TEST

START_TEST(disk_real_statvfs)
{
	const char	*paths[] = { "/", NULL };
	char		*dir = tu_tmpdir(), pct[32], *p;
	struct pu	 sr;
	int		 i;

	paths[1] = dir;
	for (i = 0; i < 2; i++) {
		pu_init(&sr, &probe_disk_ops, NULL);
		pu_set(&sr, "path", paths[i]);
		pu_check(&sr);
		ck_assert(pu_once(&sr, 10000));
		ck_assert_int_eq(sr.out.result, PROBE_OK);
		ck_assert(sr.out.value >= 0 && sr.out.value <= 100);
		/* Others write meanwhile: a loose match to df. */
		ck_assert(fabs(sr.out.value - df_pct(paths[i])) < 1);
		/* "42.5% used, 3.1G free" */
		snprintf(pct, sizeof(pct), "%.1f", sr.out.value);
		if ((p = strstr(pct, ".0")) != NULL && p[2] == '\0')
			*p = '\0';
		ck_assert_msg(strncmp(sr.out.reason, pct, strlen(pct)) == 0 &&
		    strstr(sr.out.reason, "% used, ") != NULL &&
		    strstr(sr.out.reason, " free") != NULL, "%s", sr.out.reason);
		pu_done(&sr);
	}
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* Runs disk on / with warn and crit; asserts the result and reason's end. */
static void
disk_on_root(const char *warn, const char *crit, enum probe_result r,
    const char *tail)
{
	struct pu	sr;
	size_t		len;

	pu_init(&sr, &probe_disk_ops, NULL);
	pu_set(&sr, "path", "/");
	if (warn != NULL)
		pu_set(&sr, "warn", warn);
	if (crit != NULL)
		pu_set(&sr, "crit", crit);
	pu_check(&sr);
	ck_assert(pu_once(&sr, 10000));
	ck_assert_msg(sr.out.result == r, "%s", sr.out.reason);
	len = strlen(sr.out.reason);
	ck_assert_msg(len > strlen(tail) &&
	    strcmp(sr.out.reason + len - strlen(tail), tail) == 0,
	    "\"%s\" does not end in \"%s\"", sr.out.reason, tail);
	ck_assert(!isnan(sr.out.value));
	pu_done(&sr);
}

START_TEST(disk_thresholds)
{
	/* / always has something on it, and less than an exbibyte free. */
	disk_on_root("0%", NULL, PROBE_WARN, "% used (warn 0%)");
	disk_on_root(NULL, "0%", PROBE_CRIT, "% used (crit 0%)");
	disk_on_root("0%", "0.001%", PROBE_CRIT, "% used (crit 0.001%)");
	disk_on_root("100%", NULL, PROBE_OK, " free");
	disk_on_root("1048576T", NULL, PROBE_WARN, " free (warn below 1048576T)");
	disk_on_root("1048577T", "1048576T", PROBE_CRIT,
	    " free (crit below 1048576T)");
	/* Tiny sizes (a bare number up to 100 is refused as a mistyped %). */
	disk_on_root("101", "0K", PROBE_OK, " free");
	/* Both crossed, of two sorts: crit wins. */
	disk_on_root("0%", "1048576T", PROBE_CRIT,
	    " free (crit below 1048576T)");
}
END_TEST

START_TEST(disk_missing_path)
{
	char		*dir = tu_tmpdir(), *file, *p;
	struct pu	 sr;
	int		 i;

	file = tu_write(dir, "f", "x", -1);
	for (i = 0; i < 2; i++) {
		if (i == 0)
			ck_assert_int_ne(asprintf(&p, "%s/nope", dir), -1);
		else
			ck_assert_int_ne(asprintf(&p, "%s/sub", file), -1);
		pu_init(&sr, i == 0 ? &probe_disk_ops : &probe_inodes_ops,
		    NULL);
		pu_set(&sr, "path", p);
		pu_expect(&sr, PROBE_CRIT, "path does not exist");
		ck_assert(isnan(sr.out.value));
		/* The probe keeps working run after run. */
		pu_expect(&sr, PROBE_CRIT, "path does not exist");
		pu_done(&sr);
		free(p);
	}
	tu_rmtree(dir);
	free(dir);
	free(file);
}
END_TEST

START_TEST(inodes_real_statvfs)
{
	const char	*paths[] = { "/", "/proc", NULL };
	char		*dir = tu_tmpdir();
	struct statvfs	 st;
	struct pu	 sr;
	int		 i;

	paths[2] = dir;
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(statvfs(paths[i], &st), 0);
		pu_init(&sr, &probe_inodes_ops, NULL);
		pu_set(&sr, "path", paths[i]);
		pu_set(&sr, "warn", "0%");
		pu_set(&sr, "crit", "100%");
		pu_check(&sr);
		ck_assert(pu_once(&sr, 10000));
		if (st.f_files == 0) {
			ck_assert_int_eq(sr.out.result, PROBE_OK);
			ck_assert_str_eq(sr.out.reason, "no inode limit");
			ck_assert(isnan(sr.out.value));
		} else {
			ck_assert(sr.out.value >= 0 && sr.out.value <= 100);
			if (st.f_files > st.f_ffree) {
				ck_assert_int_eq(sr.out.result, PROBE_WARN);
				ck_assert_msg(strstr(sr.out.reason,
				    "% inodes used (warn 0%)") != NULL, "%s",
				    sr.out.reason);
			}
		}
		pu_done(&sr);
	}
	tu_rmtree(dir);
	free(dir);
}
END_TEST

START_TEST(disk_no_blocks)
{
	struct statvfs	st;
	struct pu	sr;

	/* /proc reports no blocks at all: nothing to measure, nothing wrong. */
	ck_assert_int_eq(statvfs("/proc", &st), 0);
	if (st.f_blocks != 0)
		return;
	pu_init(&sr, &probe_disk_ops, NULL);
	pu_set(&sr, "path", "/proc");
	pu_set(&sr, "crit", "1G");
	pu_expect(&sr, PROBE_OK, "filesystem reports no blocks");
	ck_assert(isnan(sr.out.value));
	pu_done(&sr);
}
END_TEST

/* The threads of this process. */
static int
thread_count(void)
{
	struct dirent	*de;
	DIR		*d;
	int		 n = 0;

	ck_assert_ptr_nonnull(d = opendir("/proc/self/task"));
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * statvfs on a hung mount: the run times out and is cancelled; the next
 * runs report at once, without a new thread; once the mount is aborted the
 * blocked call returns, and the probe measures again.
 */
static void
hung(const struct probe_ops *ops)
{
	char		*dir = tu_tmpdir(), *mnt = pu_mkdirs(dir, "mnt");
	struct pu	 sr;
	int		 fd, i, threads;

	if ((fd = hungfs_mount(mnt)) == -1)
		goto out;
	pu_init(&sr, ops, NULL);
	pu_set(&sr, "path", mnt);
	pu_set(&sr, "crit", "90%");
	ck_assert_msg(!pu_once(&sr, 300), "reported: %s", sr.out.reason);
	ck_assert_int_eq(sr.reports, 0);
	threads = thread_count();
	for (i = 0; i < 5; i++) {
		ck_assert(pu_once(&sr, 10000));
		ck_assert_int_eq(sr.out.result, PROBE_CRIT);
		ck_assert_msg(strncmp(sr.out.reason,
		    "statfs still blocked since ", 27) == 0, "%s",
		    sr.out.reason);
		ck_assert(isnan(sr.out.value));
	}
	/* One thread per probe: the blocked one, no more. */
	ck_assert_int_eq(thread_count(), threads);

	hungfs_abort(fd);
	/* The blocked statvfs now fails; it never reports (it was cancelled). */
	for (i = 0; i < 1000; i++) {
		ck_assert(pu_once(&sr, 10000));
		if (strncmp(sr.out.reason, "statfs still blocked", 20) != 0)
			break;
		usleep(10000);
	}
	/* A fresh statvfs, on the aborted mount. */
	ck_assert_int_eq(sr.out.result, PROBE_CRIT);
	ck_assert_str_eq(sr.out.reason,
	    "statfs: Transport endpoint is not connected");
	hungfs_umount(mnt);
	ck_assert(pu_once(&sr, 10000));
	ck_assert_msg(strstr(sr.out.reason, "used") != NULL ||
	    strcmp(sr.out.reason, "no inode limit") == 0, "%s", sr.out.reason);
	ck_assert_int_eq(sr.reports, 7 + i);
	pu_done(&sr);
out:
	tu_rmtree(dir);
	free(mnt);
	free(dir);
}

START_TEST(disk_hung_mount)
{
	hung(&probe_disk_ops);
}
END_TEST

START_TEST(inodes_hung_mount)
{
	hung(&probe_inodes_ops);
}
END_TEST

/* Stopping lbagent while statvfs hangs: keep_free lets the thread go. */
START_TEST(disk_hung_then_freed)
{
	char		*dir = tu_tmpdir(), *mnt = pu_mkdirs(dir, "mnt");
	struct pu	 sr;
	int		 fd, i, threads;

	if ((fd = hungfs_mount(mnt)) == -1)
		goto out;
	pu_init(&sr, &probe_disk_ops, NULL);
	pu_set(&sr, "path", mnt);
	ck_assert(!pu_once(&sr, 200));
	threads = thread_count();	/* with the blocked one */
	pu_done(&sr);
	hungfs_abort(fd);
	hungfs_umount(mnt);
	/* The thread returns, frees its job and exits, calling nothing. */
	for (i = 0; i < 1000 && thread_count() >= threads; i++)
		usleep(10000);
	ck_assert_int_eq(thread_count(), threads - 1);
out:
	tu_rmtree(dir);
	free(mnt);
	free(dir);
}
END_TEST

static Suite *
disk_suite(void)
{
	Suite	*s = suite_create("probe_disk");
	TCase	*tc = tcase_create("disk");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, disk_config_errors);
	tcase_add_test(tc, disk_config_accepted);
	tcase_add_test(tc, disk_real_statvfs);
	tcase_add_test(tc, disk_thresholds);
	tcase_add_test(tc, disk_missing_path);
	tcase_add_test(tc, disk_out_of_descriptors);
	tcase_add_test(tc, inodes_real_statvfs);
	tcase_add_test(tc, disk_no_blocks);
	tcase_add_test(tc, disk_hung_mount);
	tcase_add_test(tc, inodes_hung_mount);
	tcase_add_test(tc, disk_hung_then_freed);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(disk_suite());
}
