/* process: configuration, a fixed proc tree with a zombie, the real /proc. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lbagent/probes/kinds.h"
#include "hungfs.h"
#include "probeutil.h"

/* Adds <root>/<pid> with comm and stat (either may be NULL: absent). */
static void
add_pid(const char *root, const char *pid, const char *comm,
    const char *stat)
{
	char	*dir = pu_mkdirs(root, pid);

	if (comm != NULL)
		free(tu_write(dir, "comm", comm, -1));
	if (stat != NULL)
		free(tu_write(dir, "stat", stat, -1));
	free(dir);
}

static char *
proc_tree(void)
{
	char	*root = tu_tmpdir(), *d;

	add_pid(root, "1", "systemd\n", "1 (systemd) S 0 1 1 0 -1 4194560\n");
	add_pid(root, "100", "nginx\n", "100 (nginx) S 1 100 100 0 -1 0\n");
	add_pid(root, "101", "nginx\n", "101 (nginx) Z 100 100 100 0 -1 0\n");
	add_pid(root, "102", "nginx\n", "102 (nginx) R 100 100 100 0 -1 0\n");
	add_pid(root, "103", "sshd\n", "103 (sshd) S 1 103 103 0 -1 0\n");
	/* The kernel keeps 15 bytes of "averyveryverylongname". */
	add_pid(root, "104", "averyveryverylo\n",
	    "104 (averyveryverylo) S 1 1 1 0 -1 0\n");
	/* A comm with spaces and parentheses. */
	add_pid(root, "105", "a) (b\n", "105 (a) (b) D 1 1 1 0 -1 0\n");
	add_pid(root, "106", "nginx\n", "garbage\n");	/* not counted */
	add_pid(root, "107", "odd\n", NULL);		/* no stat */
	add_pid(root, "108", NULL, NULL);		/* vanished */
	add_pid(root, "109", "nginx", "109 (nginx) X 1 1 1\n");	/* dead */
	/* Not processes. */
	add_pid(root, "sys", "nginx\n", "1 (nginx) S\n");
	add_pid(root, "12ab", "nginx\n", "1 (nginx) S\n");
	d = tu_write(root, "200", "not a dir", -1);
	free(d);
	return root;
}

static void
rm_tree(char *root)
{
	tu_rmtree(root);
	free(root);
}

START_TEST(process_config_errors)
{
	const struct probe_ops	*p = &probe_process_ops;
	char			 name[300];

	pu_conf_set_fails(p, "pidfile", "run/nginx.pid",
	    "expected an absolute path");
	pu_conf_set_fails(p, "name", "", "expected a command name");
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	pu_conf_set_fails(p, "name", name, "name too long");
	pu_conf_check_fails(p, "pidfile or name is required", NULL);
	pu_conf_check_fails(p, "give pidfile or name, not both",
	    "pidfile", "/run/x.pid", "name", "x", NULL);
	ck_assert_str_eq(p->unit, "");
}
END_TEST

/* name on root: result, reason and the number found. */
static void
by_name(const char *root, const char *name, enum probe_result r,
    const char *reason, double count)
{
	struct pu	sr;

	pu_init(&sr, &probe_process_ops, root);
	pu_set(&sr, "name", name);
	pu_check(&sr);
	pu_expect(&sr, r, reason);
	ck_assert_double_eq(sr.out.value, count);
	pu_done(&sr);
}

START_TEST(process_by_name)
{
	char	*root = proc_tree();

	/* 100 and 102; not the zombie, the dead one or the broken stat. */
	by_name(root, "nginx", PROBE_OK, "2 processes named nginx", 2);
	by_name(root, "sshd", PROBE_OK, "1 process named sshd", 1);
	by_name(root, "averyveryverylongname", PROBE_OK,
	    "1 process named averyveryverylongname", 1);
	by_name(root, "averyveryverylo", PROBE_OK,
	    "1 process named averyveryverylo", 1);
	by_name(root, "a) (b", PROBE_OK, "1 process named a) (b", 1);
	/* Exact, not a prefix or a substring. */
	by_name(root, "ngin", PROBE_CRIT, "no process named ngin", 0);
	by_name(root, "nginx2", PROBE_CRIT, "no process named nginx2", 0);
	by_name(root, "averyveryverylx", PROBE_CRIT,
	    "no process named averyveryverylx", 0);
	by_name(root, "averyveryveryl", PROBE_CRIT,
	    "no process named averyveryveryl", 0);
	by_name(root, "odd", PROBE_CRIT, "no process named odd", 0);
	rm_tree(root);
}
END_TEST

/* A pidfile holding text, on root: result and reason. */
static void
by_pidfile(const char *root, const char *text, long len, enum probe_result r,
    const char *reason)
{
	char		*dir = tu_tmpdir(), *pidfile;
	struct pu	 sr;

	pidfile = tu_write(dir, "x.pid", text, len);
	pu_init(&sr, &probe_process_ops, root);
	pu_set(&sr, "pidfile", pidfile);
	pu_check(&sr);
	pu_expect(&sr, r, reason);
	if (r == PROBE_OK)
		ck_assert_double_eq(sr.out.value, 1);
	pu_done(&sr);
	tu_rmtree(dir);
	free(dir);
	free(pidfile);
}

START_TEST(process_by_pidfile)
{
	char		*root = proc_tree(), *why, junk[200];
	struct pu	 sr;

	by_pidfile(root, "100\n", -1, PROBE_OK, "pid 100 running");
	by_pidfile(root, "100", -1, PROBE_OK, "pid 100 running");
	by_pidfile(root, "102\r\n", -1, PROBE_OK, "pid 102 running");
	by_pidfile(root, "105\n", -1, PROBE_OK, "pid 105 running");
	by_pidfile(root, "101\n", -1, PROBE_CRIT, "pid 101 is a zombie");
	by_pidfile(root, "109\n", -1, PROBE_CRIT, "pid 109 not running");
	by_pidfile(root, "999\n", -1, PROBE_CRIT, "pid 999 not running");
	by_pidfile(root, "", -1, PROBE_CRIT, "pidfile: empty");
	by_pidfile(root, "\n", -1, PROBE_CRIT, "pidfile: empty");
	by_pidfile(root, "nginx\n", -1, PROBE_CRIT, "pidfile: not a pid");
	by_pidfile(root, "0\n", -1, PROBE_CRIT, "pidfile: not a pid");
	by_pidfile(root, "-100\n", -1, PROBE_CRIT, "pidfile: not a pid");
	by_pidfile(root, "+100\n", -1, PROBE_CRIT, "pidfile: not a pid");
	by_pidfile(root, " 100\n", -1, PROBE_CRIT, "pidfile: not a pid");
	by_pidfile(root, "100 102\n", -1, PROBE_CRIT, "pidfile: not a pid");
	by_pidfile(root, "100\n102\n", -1, PROBE_CRIT, "pidfile: not a pid");
	by_pidfile(root, "2147483648\n", -1, PROBE_CRIT, "pidfile: not a pid");
	by_pidfile(root, "99999999999999999999999\n", -1, PROBE_CRIT,
	    "pidfile: not a pid");
	by_pidfile(root, "1\0" "00", 4, PROBE_CRIT, "pidfile: not a pid");
	memset(junk, '1', sizeof(junk));
	by_pidfile(root, junk, sizeof(junk), PROBE_CRIT, "pidfile: not a pid");
	memset(junk, '\n', sizeof(junk));
	by_pidfile(root, junk, sizeof(junk), PROBE_CRIT, "pidfile: not a pid");

	/* Files under the pid that cannot be read name themselves. */
	ck_assert_int_ne(asprintf(&why, "%s/106/stat: malformed", root), -1);
	by_pidfile(root, "106\n", -1, PROBE_CRIT, why);
	free(why);
	ck_assert_int_ne(asprintf(&why, "%s/107/stat: No such file or "
	    "directory", root), -1);
	by_pidfile(root, "107\n", -1, PROBE_CRIT, why);
	free(why);
	/* Something else in place of the directory: it is no process. */
	ck_assert_int_ne(asprintf(&why, "%s/200/stat: Not a directory", root),
	    -1);
	by_pidfile(root, "200\n", -1, PROBE_CRIT, why);
	free(why);

	/* No pidfile (the daemon is not started, or removed it). */
	pu_init(&sr, &probe_process_ops, root);
	pu_set(&sr, "pidfile", "/nonexistent/x.pid");
	pu_expect(&sr, PROBE_CRIT, "pidfile does not exist");
	ck_assert(isnan(sr.out.value));
	pu_done(&sr);
	/* A pidfile that is a directory. */
	pu_init(&sr, &probe_process_ops, root);
	pu_set(&sr, "pidfile", root);
	pu_once(&sr, 10000);
	ck_assert_int_eq(sr.out.result, PROBE_CRIT);
	ck_assert_msg(strstr(sr.out.reason, "Is a directory") != NULL, "%s",
	    sr.out.reason);
	pu_done(&sr);
	rm_tree(root);
}
END_TEST

START_TEST(process_no_proc)
{
	char		*root = tu_tmpdir(), *why;

	ck_assert_int_ne(asprintf(&why, "%s/nowhere: No such file or "
	    "directory", root), -1);
	{
		char		*nowhere;
		struct pu	 sr;

		ck_assert_int_ne(asprintf(&nowhere, "%s/nowhere", root), -1);
		pu_init(&sr, &probe_process_ops, nowhere);
		pu_set(&sr, "name", "x");
		pu_expect(&sr, PROBE_CRIT, why);
		pu_done(&sr);
		free(nowhere);
	}
	/* An empty proc: nothing runs. */
	by_name(root, "x", PROBE_CRIT, "no process named x", 0);
	free(why);
	rm_tree(root);
}
END_TEST

START_TEST(process_real_proc)
{
	char		 comm[64], *dir = tu_tmpdir(), *pidfile, pid[32];
	struct pu	 sr;
	FILE		*fp;
	size_t		 n;

	ck_assert_ptr_nonnull(fp = fopen("/proc/self/comm", "r"));
	n = fread(comm, 1, sizeof(comm) - 1, fp);
	fclose(fp);
	ck_assert_uint_gt(n, 1);
	comm[n - 1] = '\0';
	pu_init(&sr, &probe_process_ops, NULL);
	pu_set(&sr, "name", comm);
	ck_assert(pu_once(&sr, 10000));
	ck_assert_int_eq(sr.out.result, PROBE_OK);
	ck_assert(sr.out.value >= 1);
	pu_done(&sr);

	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	pidfile = tu_write(dir, "self.pid", pid, -1);
	pu_init(&sr, &probe_process_ops, NULL);
	pu_set(&sr, "pidfile", pidfile);
	pid[strlen(pid) - 1] = '\0';
	{
		char	*reason;

		ck_assert_int_ne(asprintf(&reason, "pid %s running", pid), -1);
		pu_expect(&sr, PROBE_OK, reason);
		free(reason);
	}
	pu_done(&sr);
	tu_rmtree(dir);
	free(dir);
	free(pidfile);
}
END_TEST

/*
 * lbagent out of descriptors: neither "no process named" nor "pidfile"
 * failures, but unknown; a process it could not look at may be the one.
 */
START_TEST(process_out_of_descriptors)
{
	char		 comm[64], *dir = tu_tmpdir(), *pidfile, *want;
	struct pu	 sr;
	struct tu_fds	 fds;
	FILE		*fp;
	size_t		 n;
	const char	*tail = "/comm: Too many open files (lbagent out of "
			    "descriptors)";

	ck_assert_ptr_nonnull(fp = fopen("/proc/self/comm", "r"));
	n = fread(comm, 1, sizeof(comm) - 1, fp);
	fclose(fp);
	ck_assert_uint_gt(n, 1);
	comm[n - 1] = '\0';
	pu_init(&sr, &probe_process_ops, NULL);
	pu_set(&sr, "name", comm);
	/* The lookup runs on a thread, whose wake-up needs a descriptor. */
	tu_fds_exhaust(&fds, 0);
	pu_expect(&sr, PROBE_UNKNOWN, "cannot start a thread: Too many open "
	    "files (lbagent out of descriptors)");
	tu_fds_release(&fds);
	tu_fds_exhaust(&fds, 1);
	pu_expect(&sr, PROBE_UNKNOWN, "/proc: Too many open files "
	    "(lbagent out of descriptors)");
	tu_fds_release(&fds);
	/* /proc opens; the processes' comm files do not. */
	tu_fds_exhaust(&fds, 2);
	ck_assert(pu_once(&sr, 10000));
	tu_fds_release(&fds);
	ck_assert_msg(sr.out.result == PROBE_UNKNOWN, "%s: %s",
	    probe_result_name(sr.out.result), sr.out.reason);
	ck_assert_msg(strncmp(sr.out.reason, "/proc/", 6) == 0 &&
	    strlen(sr.out.reason) > strlen(tail) && strcmp(sr.out.reason +
	    strlen(sr.out.reason) - strlen(tail), tail) == 0, "%s",
	    sr.out.reason);
	ck_assert(pu_once(&sr, 10000));
	ck_assert_int_eq(sr.out.result, PROBE_OK);
	pu_done(&sr);

	pidfile = tu_write(dir, "self.pid", "1\n", -1);
	pu_init(&sr, &probe_process_ops, NULL);
	pu_set(&sr, "pidfile", pidfile);
	ck_assert_int_ne(asprintf(&want, "%s: Too many open files (lbagent "
	    "out of descriptors)", pidfile), -1);
	tu_fds_exhaust(&fds, 1);
	pu_expect(&sr, PROBE_UNKNOWN, want);
	tu_fds_release(&fds);
	pu_expect(&sr, PROBE_OK, "pid 1 running");
	pu_done(&sr);
	free(want);
	free(pidfile);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/*
 * proc_root and a pidfile on a hung mount: the lookup runs on a thread,
 * so the run times out and is cancelled instead of stalling the loop; the
 * next runs say it is still blocked, at once.
 */
static void
hung(const char *key)
{
	char		*dir = tu_tmpdir(), *mnt = pu_mkdirs(dir, "mnt");
	char		 pidfile[PATH_MAX];
	struct pu	 sr;
	int		 fd, i;

	if ((fd = hungfs_mount(mnt)) == -1)
		goto out;
	snprintf(pidfile, sizeof(pidfile), "%s/x.pid", mnt);
	pu_init(&sr, &probe_process_ops, strcmp(key, "name") == 0 ? mnt :
	    NULL);
	pu_set(&sr, key, strcmp(key, "name") == 0 ? "sshd" : pidfile);
	ck_assert_msg(!pu_once(&sr, 300), "reported: %s", sr.out.reason);
	ck_assert_int_eq(sr.reports, 0);
	for (i = 0; i < 3; i++) {
		ck_assert(pu_once(&sr, 10000));
		ck_assert_int_eq(sr.out.result, PROBE_CRIT);
		ck_assert_msg(strncmp(sr.out.reason, "process lookup still "
		    "blocked since ", 35) == 0, "%s", sr.out.reason);
	}
	hungfs_abort(fd);
	for (i = 0; i < 1000; i++) {
		ck_assert(pu_once(&sr, 10000));
		if (strncmp(sr.out.reason, "process lookup still", 20) != 0)
			break;
		usleep(10000);
	}
	ck_assert_int_eq(sr.out.result, PROBE_CRIT);
	hungfs_umount(mnt);
	pu_done(&sr);
out:
	tu_rmtree(dir);
	free(mnt);
	free(dir);
}

START_TEST(process_hung_proc_root)
{
	hung("name");
}
END_TEST

START_TEST(process_hung_pidfile)
{
	hung("pidfile");
}
END_TEST

/* Junk in pidfiles, comm and stat: one report each, never a crash. */
START_TEST(process_junk)
{
	char		*root = tu_tmpdir(), *dir = tu_tmpdir(), *pidfile;
	char		 buf[300];
	unsigned	 seed = 5;
	struct pu	 sr;
	size_t		 n;
	int		 i;

	add_pid(root, "42", "x\n", "42 (x) S 1\n");
	for (i = 0; i < 400; i++) {
		n = pu_junk(buf, sizeof(buf), &seed);
		free(tu_write(root, "42/stat", buf, (long)n));
		n = pu_junk(buf, 20, &seed);
		free(tu_write(root, "42/comm", buf, (long)n));
		if (i % 2 == 0)
			pidfile = tu_write(dir, "p", "42\n", -1);
		else {
			n = pu_junk(buf, 40, &seed);
			pidfile = tu_write(dir, "p", buf, (long)n);
		}
		pu_init(&sr, &probe_process_ops, root);
		if (i % 4 == 3)
			pu_set(&sr, "name", "x");
		else
			pu_set(&sr, "pidfile", pidfile);
		ck_assert(pu_once(&sr, 10000));
		ck_assert_int_eq(sr.reports, 1);
		pu_done(&sr);
		free(pidfile);
	}
	tu_rmtree(root);
	tu_rmtree(dir);
	free(root);
	free(dir);
}
END_TEST

static Suite *
process_suite(void)
{
	Suite	*s = suite_create("probe_process");
	TCase	*tc = tcase_create("process");

	/* Each run starts a thread: 400 junk runs on a loaded machine. */
	tcase_set_timeout(tc, 60);

	tcase_add_test(tc, process_config_errors);
	tcase_add_test(tc, process_by_name);
	tcase_add_test(tc, process_by_pidfile);
	tcase_add_test(tc, process_no_proc);
	tcase_add_test(tc, process_real_proc);
	tcase_add_test(tc, process_out_of_descriptors);
	tcase_add_test(tc, process_junk);
	tcase_add_test(tc, process_hung_proc_root);
	tcase_add_test(tc, process_hung_pidfile);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(process_suite());
}
