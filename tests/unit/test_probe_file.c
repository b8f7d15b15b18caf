/* file: configuration, real files with set mtimes, and a hung mount. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "lbagent/probes/kinds.h"
#include "hungfs.h"
#include "probeutil.h"

/* Sets path's mtime to now + delta seconds. */
static void
set_mtime(const char *path, long delta)
{
	struct timespec	ts[2];

	clock_gettime(CLOCK_REALTIME, &ts[1]);
	ts[1].tv_sec += delta;
	ts[0] = ts[1];
	ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

START_TEST(file_config_errors)
{
	const struct probe_ops	*f = &probe_file_ops;

	pu_conf_set_fails(f, "path", "heartbeat", "expected an absolute path");
	pu_conf_set_fails(f, "max_age", "5", "duration needs a unit: ms, s, m "
	    "or h");
	pu_conf_set_fails(f, "max_age", "0s", "must be above 0");
	pu_conf_set_fails(f, "warn_age", "soon",
	    "expected a duration such as 500ms, 1.5s, 2s, 1m or 1h");
	pu_conf_set_fails(f, "warn_age", "0ms", "must be above 0");
	pu_conf_check_fails(f, "path is required", "max_age", "5m", NULL);
	pu_conf_check_fails(f, "warn_age must be below max_age (older is "
	    "worse)", "path", "/x", "warn_age", "5m", "max_age", "1m", NULL);
	pu_conf_check_fails(f, "warn_age must be below max_age (older is "
	    "worse)", "path", "/x", "warn_age", "60s", "max_age", "1m", NULL);
	ck_assert_str_eq(f->unit, "s");
}
END_TEST

/* Runs file on path with the given ages; asserts result and reason. */
static struct pu *
file_case(struct pu *sr, const char *path, const char *warn_age,
    const char *max_age, enum probe_result r, const char *reason)
{
	pu_init(sr, &probe_file_ops, NULL);
	pu_set(sr, "path", path);
	if (warn_age != NULL)
		pu_set(sr, "warn_age", warn_age);
	if (max_age != NULL)
		pu_set(sr, "max_age", max_age);
	pu_check(sr);
	pu_expect(sr, r, reason);
	return sr;
}

START_TEST(file_ages)
{
	char		*dir = tu_tmpdir(), *f = tu_write(dir, "hb", "1\n", -1);
	struct pu	 sr;

	set_mtime(f, -12 * 60);
	file_case(&sr, f, NULL, "5m", PROBE_CRIT, "modified 12m ago (max 5m)");
	/* Seconds, measured: at least the 12 minutes, not much more. */
	ck_assert(sr.out.value >= 720 && sr.out.value < 780);
	pu_done(&sr);

	file_case(&sr, f, "1m", "5m", PROBE_CRIT, "modified 12m ago (max 5m)");
	pu_done(&sr);
	file_case(&sr, f, "10m", "1h", PROBE_WARN,
	    "modified 12m ago (warn 10m)");
	pu_done(&sr);
	file_case(&sr, f, "10m", NULL, PROBE_WARN,
	    "modified 12m ago (warn 10m)");
	pu_done(&sr);
	file_case(&sr, f, NULL, "13m", PROBE_OK, "modified 12m ago");
	pu_done(&sr);
	/* No age limit: it only has to exist. */
	file_case(&sr, f, NULL, NULL, PROBE_OK, "modified 12m ago");
	pu_done(&sr);

	set_mtime(f, -(2 * 3600 + 5 * 60 + 7));
	file_case(&sr, f, NULL, "90m", PROBE_CRIT, "modified 2h05m ago "
	    "(max 90m)");
	pu_done(&sr);
	set_mtime(f, -(5 * 60 + 30));
	file_case(&sr, f, NULL, "5m", PROBE_CRIT, "modified 5m30s ago "
	    "(max 5m)");
	pu_done(&sr);
	set_mtime(f, -(3 * 86400 + 4 * 3600));
	file_case(&sr, f, NULL, "168h", PROBE_OK, "modified 3d04h ago");
	pu_done(&sr);

	/* Written by a host whose clock is ahead: fresh, age 0. */
	set_mtime(f, 3600);
	file_case(&sr, f, "1s", "2s", PROBE_OK, "modified 0s ago");
	ck_assert_double_eq(sr.out.value, 0);
	pu_done(&sr);

	/* Just written. */
	set_mtime(f, 0);
	pu_init(&sr, &probe_file_ops, NULL);
	pu_set(&sr, "path", f);
	pu_set(&sr, "max_age", "1h");
	ck_assert(pu_once(&sr, 10000));
	ck_assert_int_eq(sr.out.result, PROBE_OK);
	ck_assert(sr.out.value >= 0 && sr.out.value < 60);
	ck_assert_msg(strncmp(sr.out.reason, "modified ", 9) == 0,
	    "%s", sr.out.reason);
	pu_done(&sr);

	/* A directory is a path too. */
	set_mtime(dir, -60);
	file_case(&sr, dir, NULL, "2m", PROBE_OK, "modified 1m ago");
	pu_done(&sr);
	tu_rmtree(dir);
	free(dir);
	free(f);
}
END_TEST

START_TEST(file_missing)
{
	char		*dir = tu_tmpdir(), *f = tu_write(dir, "f", "", -1);
	char		*paths[3];
	struct pu	 sr;
	int		 i;

	ck_assert_int_ne(asprintf(&paths[0], "%s/nope", dir), -1);
	ck_assert_int_ne(asprintf(&paths[1], "%s/f/under", dir), -1);
	ck_assert_int_ne(asprintf(&paths[2], "%s/dangling", dir), -1);
	ck_assert_int_eq(symlink("/nonexistent/x", paths[2]), 0);
	for (i = 0; i < 3; i++) {
		file_case(&sr, paths[i], NULL, "5m", PROBE_CRIT,
		    "does not exist");
		ck_assert(isnan(sr.out.value));
		pu_done(&sr);
		free(paths[i]);
	}
	/* A path made too long for the kernel. */
	{
		char	long_path[5000];

		memset(long_path, 'a', sizeof(long_path) - 1);
		long_path[0] = '/';
		long_path[4000] = '\0';
		file_case(&sr, long_path, NULL, NULL, PROBE_CRIT,
		    "stat: File name too long");
		pu_done(&sr);
	}
	tu_rmtree(dir);
	free(dir);
	free(f);
}
END_TEST

/* lbagent out of descriptors for its worker: unknown, not missing. */
START_TEST(file_out_of_descriptors)
{
	char		*dir = tu_tmpdir(), *f = tu_write(dir, "hb", "1\n", -1);
	struct pu	 sr;
	struct tu_fds	 fds;

	pu_init(&sr, &probe_file_ops, NULL);
	pu_set(&sr, "path", f);
	pu_check(&sr);
	tu_fds_exhaust(&fds, 0);
	pu_expect(&sr, PROBE_UNKNOWN, "cannot start a thread: Too many "
	    "open files (lbagent out of descriptors)");
	tu_fds_release(&fds);
	ck_assert(pu_once(&sr, 10000));
	ck_assert_int_eq(sr.out.result, PROBE_OK);
	pu_done(&sr);
	tu_rmtree(dir);
	free(dir);
	free(f);
}
END_TEST

/* A heartbeat file on a dead network mount: the loop never waits on it. */
START_TEST(file_hung_mount)
{
	char		*dir = tu_tmpdir(), *mnt = pu_mkdirs(dir, "mnt"), *f;
	struct pu	 sr;
	int		 fd, i;

	if ((fd = hungfs_mount(mnt)) == -1)
		goto out;
	ck_assert_int_ne(asprintf(&f, "%s/heartbeat", mnt), -1);
	pu_init(&sr, &probe_file_ops, NULL);
	pu_set(&sr, "path", f);
	pu_set(&sr, "max_age", "1m");
	ck_assert(!pu_once(&sr, 300));
	for (i = 0; i < 3; i++) {
		ck_assert(pu_once(&sr, 10000));
		ck_assert_int_eq(sr.out.result, PROBE_CRIT);
		ck_assert_msg(strncmp(sr.out.reason,
		    "stat still blocked since ", 25) == 0, "%s", sr.out.reason);
	}
	hungfs_abort(fd);
	for (i = 0; i < 1000; i++) {
		ck_assert(pu_once(&sr, 10000));
		if (strncmp(sr.out.reason, "stat still blocked", 18) != 0)
			break;
		usleep(10000);
	}
	ck_assert_str_eq(sr.out.reason,
	    "stat: Transport endpoint is not connected");
	hungfs_umount(mnt);
	pu_expect(&sr, PROBE_CRIT, "does not exist");
	pu_done(&sr);
	free(f);
out:
	tu_rmtree(dir);
	free(mnt);
	free(dir);
}
END_TEST

static Suite *
file_suite(void)
{
	Suite	*s = suite_create("probe_file");
	TCase	*tc = tcase_create("file");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, file_config_errors);
	tcase_add_test(tc, file_ages);
	tcase_add_test(tc, file_missing);
	tcase_add_test(tc, file_out_of_descriptors);
	tcase_add_test(tc, file_hung_mount);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(file_suite());
}
