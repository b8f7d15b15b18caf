/*
 * mountpoint: configuration, real mounts made by the test in a private
 * mount namespace of its own (forked) process, mountinfo's bounds over a
 * fixed proc_root, and a really hung mount.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lbagent/probes/kinds.h"
#include "hungfs.h"
#include "probeutil.h"

static const struct probe_ops	*mp = &probe_mountpoint_ops;

#define KNOWN_MOUNT	"/proc"
/*
 * A directory of the test's own under /tmp: "part of the TYPE mounted on
 * DIR", or, in a chroot whose root is no mount point, "part of a mount
 * outside lbagent's root".
 */
#define NOT_MOUNT	"not a mount point (part of "

/* A private mount namespace for this test's process; false: skip. */
static bool
private_mounts(void)
{
	if (tu_private_mounts() == -1) {
		perror("mountpoint: skipped: private mount namespace");
		return false;
	}
	return true;
}

static void
mount_fs(const char *type, const char *dir)
{
	ck_assert_msg(mount("lbagent-test", dir, type, MS_NODEV | MS_NOSUID,
	    NULL) == 0, "mount %s on %s: %s", type, dir, strerror(errno));
}

/* Every mount on dir gone, the top first. */
static void
unmount(const char *dir)
{
	while (umount2(dir, MNT_DETACH) == 0)
		;
}

/* One run of a mountpoint probe on path (fstype NULL: any). */
static void
expect(const char *proc_root, const char *path, const char *fstype,
    enum probe_result r, const char *reason)
{
	struct pu	sr;

	pu_init(&sr, mp, proc_root);
	pu_set(&sr, "path", path);
	if (fstype != NULL)
		pu_set(&sr, "fstype", fstype);
	pu_check(&sr);
	pu_expect(&sr, r, reason);
	ck_assert(isnan(sr.out.value));
	pu_done(&sr);
}

/* The same, asserting only the reason's start. */
static void
expect_prefix(const char *path, enum probe_result r, const char *start)
{
	struct pu	sr;

	pu_init(&sr, mp, NULL);
	pu_set(&sr, "path", path);
	pu_check(&sr);
	ck_assert(pu_once(&sr, 10000));
	ck_assert_msg(sr.out.result == r && strncmp(sr.out.reason, start,
	    strlen(start)) == 0, "%d %s", sr.out.result, sr.out.reason);
	pu_done(&sr);
}

START_TEST(mountpoint_config)
{
	char	long_type[80];

	pu_conf_set_fails(mp, "path", "srv/data", "expected an absolute path");
	pu_conf_set_fails(mp, "path", "", "expected an absolute path");
	pu_conf_set_fails(mp, "fstype", "", "expected a filesystem type such "
	    "as nfs4, ext4 or xfs");
	pu_conf_set_fails(mp, "fstype", "nfs 4", "expected a filesystem type "
	    "such as nfs4, ext4 or xfs");
	pu_conf_set_fails(mp, "fstype", "a/b", "expected a filesystem type "
	    "such as nfs4, ext4 or xfs");
	memset(long_type, 'x', 64);
	long_type[64] = '\0';
	pu_conf_set_fails(mp, "fstype", long_type, "expected a filesystem "
	    "type such as nfs4, ext4 or xfs");
	long_type[63] = '\0';
	mp->conf_free(pu_conf(mp, (const char *const[]){ "path", "/",
	    "fstype", long_type, NULL }));
	pu_conf_check_fails(mp, "path is required", "fstype", "nfs4", NULL);
	pu_conf_check_fails(mp, "path is required", NULL);
	mp->conf_free(pu_conf(mp, (const char *const[]){ "path",
	    "/srv/data", "fstype", "fuse.sshfs", NULL }));
	ck_assert(pu_documents(mp, "path"));
	ck_assert(pu_documents(mp, "fstype"));
	ck_assert_str_eq(mp->name, "mountpoint");
	ck_assert_str_eq(mp->unit, "");
	ck_assert_ptr_eq(probe_kind("mountpoint"), mp);
	ck_assert(mp->cancel != NULL);
}
END_TEST

/*
 * /proc is a mount point; a directory of a plain filesystem is not. (Not
 * "/": in a chroot whose root is no mount point, such as the fresh-machine
 * check's, it is not one; /proc is one wherever lbagent runs, its probes
 * read it.)
 */
START_TEST(mountpoint_root_and_plain_dir)
{
	char	*dir = tu_tmpdir(), *file, *p;

	expect(NULL, KNOWN_MOUNT, NULL, PROBE_OK, "proc mounted");
	expect_prefix(dir, PROBE_CRIT, NOT_MOUNT);
	file = tu_write(dir, "f", "x", -1);
	expect_prefix(file, PROBE_CRIT, NOT_MOUNT);
	ck_assert_int_ne(asprintf(&p, "%s/nope", dir), -1);
	expect(NULL, p, NULL, PROBE_CRIT, "path does not exist");
	free(p);
	ck_assert_int_ne(asprintf(&p, "%s/sub", file), -1);
	expect(NULL, p, "ext4", PROBE_CRIT, "path does not exist");
	free(p);
	free(file);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/*
 * The classic: the volume's directory before and after the mount, its
 * type right and wrong, a directory inside it, a symlink to it, and the
 * directory again once unmounted.
 */
START_TEST(mountpoint_tmpfs)
{
	char	*dir = tu_tmpdir(), *mnt = pu_mkdirs(dir, "data"), *sub, *link,
		*want;

	if (!private_mounts())
		goto out;
	expect_prefix(mnt, PROBE_CRIT, NOT_MOUNT);
	mount_fs("tmpfs", mnt);
	expect(NULL, mnt, NULL, PROBE_OK, "tmpfs mounted");
	expect(NULL, mnt, "tmpfs", PROBE_OK, "tmpfs mounted");
	expect(NULL, mnt, "nfs4", PROBE_CRIT, "tmpfs mounted, expected nfs4");
	sub = pu_mkdirs(mnt, "sub");
	ck_assert_int_ne(asprintf(&want, "not a mount point (part of the "
	    "tmpfs mounted on %s)", mnt), -1);
	expect(NULL, sub, NULL, PROBE_CRIT, want);
	expect(NULL, sub, "tmpfs", PROBE_CRIT, want);
	ck_assert_int_ne(asprintf(&link, "%s/link", dir), -1);
	ck_assert_int_eq(symlink(mnt, link), 0);
	expect(NULL, link, "tmpfs", PROBE_OK, "tmpfs mounted");
	ck_assert_int_eq(umount(mnt), 0);
	expect_prefix(mnt, PROBE_CRIT, NOT_MOUNT);
	unlink(link);
	free(want);
	free(link);
	free(sub);
out:
	tu_rmtree(dir);
	free(mnt);
	free(dir);
}
END_TEST

/*
 * A bind mount of a directory of the same filesystem: the same st_dev as
 * its parent's, still a mount point. Its source is not one.
 */
START_TEST(mountpoint_bind_same_device)
{
	char		*dir = tu_tmpdir(), *mnt = pu_mkdirs(dir, "m"), *a, *b,
			*want;
	struct stat	 sa, sm;

	if (!private_mounts())
		goto out;
	mount_fs("tmpfs", mnt);
	a = pu_mkdirs(mnt, "a");
	b = pu_mkdirs(mnt, "b");
	ck_assert_int_eq(mount(a, b, NULL, MS_BIND, NULL), 0);
	ck_assert_int_eq(stat(b, &sa), 0);
	ck_assert_int_eq(stat(mnt, &sm), 0);
	ck_assert(sa.st_dev == sm.st_dev);
	expect(NULL, b, "tmpfs", PROBE_OK, "tmpfs mounted");
	ck_assert_int_ne(asprintf(&want, "not a mount point (part of the "
	    "tmpfs mounted on %s)", mnt), -1);
	expect(NULL, a, NULL, PROBE_CRIT, want);
	unmount(b);
	unmount(mnt);
	free(want);
	free(a);
	free(b);
out:
	tu_rmtree(dir);
	free(mnt);
	free(dir);
}
END_TEST

/*
 * Stacked: the top mount's type counts. Hidden: a mount under one made
 * later on a parent directory is still in mountinfo, yet the path is a
 * directory of the later one.
 */
START_TEST(mountpoint_stacked_and_hidden)
{
	char	*dir = tu_tmpdir(), *top = pu_mkdirs(dir, "top"),
		*sub = pu_mkdirs(dir, "sub"), *deep = pu_mkdirs(sub, "data"),
		*want;

	if (!private_mounts())
		goto out;
	mount_fs("tmpfs", top);
	mount_fs("ramfs", top);
	expect(NULL, top, "tmpfs", PROBE_CRIT, "ramfs mounted, expected tmpfs");
	expect(NULL, top, "ramfs", PROBE_OK, "ramfs mounted");

	mount_fs("tmpfs", deep);
	expect(NULL, deep, "tmpfs", PROBE_OK, "tmpfs mounted");
	mount_fs("ramfs", sub);
	free(pu_mkdirs(sub, "data"));
	ck_assert_int_ne(asprintf(&want, "not a mount point (part of the "
	    "ramfs mounted on %s)", sub), -1);
	expect(NULL, deep, "tmpfs", PROBE_CRIT, want);
	unmount(sub);
	unmount(deep);
	unmount(top);
	free(want);
out:
	tu_rmtree(dir);
	free(deep);
	free(sub);
	free(top);
	free(dir);
}
END_TEST

/* mountinfo's escapes (\040 for a blank) undone in the reason. */
START_TEST(mountpoint_escaped_name)
{
	char	*dir = tu_tmpdir(), *mnt = pu_mkdirs(dir, "a b\\c"), *sub,
		*want;

	if (!private_mounts())
		goto out;
	mount_fs("tmpfs", mnt);
	expect(NULL, mnt, NULL, PROBE_OK, "tmpfs mounted");
	sub = pu_mkdirs(mnt, "x");
	ck_assert_int_ne(asprintf(&want, "not a mount point (part of the "
	    "tmpfs mounted on %s)", mnt), -1);
	expect(NULL, sub, NULL, PROBE_CRIT, want);
	unmount(mnt);
	free(want);
	free(sub);
out:
	tu_rmtree(dir);
	free(mnt);
	free(dir);
}
END_TEST

/* The mount id statx gives for path. */
static unsigned long long
mount_id(const char *path)
{
	struct statx	stx;

	ck_assert_int_eq(statx(AT_FDCWD, path, 0, STATX_MNT_ID, &stx), 0);
	ck_assert(stx.stx_mask & STATX_MNT_ID);
	return (unsigned long long)stx.stx_mnt_id;
}

/* A fixed proc_root whose self/mountinfo is filler bytes of other mounts,
 * then line (if not NULL); returns the root. */
static char *
fake_proc(const char *dir, size_t filler, const char *line)
{
	char	*self = pu_mkdirs(dir, "proc/self"), *root, *path;
	FILE	*fp;
	size_t	 n = 0;

	ck_assert_int_ne(asprintf(&path, "%s/mountinfo", self), -1);
	ck_assert_ptr_nonnull(fp = fopen(path, "w"));
	while (n < filler)	/* ids no real mount has */
		n += (size_t)fprintf(fp, "%zu 1 0:99 / /other/%zu rw - xfs "
		    "/dev/sdz rw\n", 4000000000 + n, n);
	if (line != NULL)
		fputs(line, fp);
	ck_assert_int_eq(fclose(fp), 0);
	ck_assert_int_ne(asprintf(&root, "%s/proc", dir), -1);
	free(path);
	free(self);
	return root;
}

START_TEST(mountpoint_mountinfo_bounds)
{
	char			*dir = tu_tmpdir(), *root, *line, *want, *big;
	unsigned long long	 id = mount_id(KNOWN_MOUNT);

	/* Optional fields, escapes: the type after the lone "-". */
	ck_assert_int_ne(asprintf(&line, "%llu 1 8:1 / /some\\040where rw "
	    "shared:5 master:3 - nfs4 srv:/x rw\n", id), -1);
	root = fake_proc(dir, 0, line);
	expect(root, KNOWN_MOUNT, NULL, PROBE_OK, "nfs4 mounted");
	expect(root, KNOWN_MOUNT, "nfs", PROBE_CRIT, "nfs4 mounted, expected nfs");
	free(root);
	/* Found past many 64 KiB pieces, the line across their bounds. */
	root = fake_proc(dir, 3 << 20, line);
	expect(root, KNOWN_MOUNT, "nfs4", PROBE_OK, "nfs4 mounted");
	free(root);
	/* Not there, or past the bound. */
	root = fake_proc(dir, 1000, NULL);
	ck_assert_int_ne(asprintf(&want, "mount %llu not in %s/self/mountinfo",
	    id, root), -1);
	expect(root, KNOWN_MOUNT, NULL, PROBE_CRIT, want);
	free(want);
	/* No mount point and its mount not listed: above lbagent's root. */
	expect(root, dir, NULL, PROBE_CRIT, "not a mount point (part of a "
	    "mount outside lbagent's root)");
	free(root);
	root = fake_proc(dir, (4 << 20) + 1000, line);
	ck_assert_int_ne(asprintf(&want, "%s/self/mountinfo larger than "
	    "4 MiB, read stopped", root), -1);
	expect(root, KNOWN_MOUNT, NULL, PROBE_CRIT, want);
	free(want);
	free(root);
	/* A line longer than a piece. */
	ck_assert_ptr_nonnull(big = malloc(70 << 10));
	memset(big, 'x', (70 << 10) - 2);
	big[(70 << 10) - 2] = '\n';
	big[(70 << 10) - 1] = '\0';
	root = fake_proc(dir, 100, big);
	ck_assert_int_ne(asprintf(&want, "%s/self/mountinfo: a line longer "
	    "than 64 KiB", root), -1);
	expect(root, KNOWN_MOUNT, NULL, PROBE_CRIT, want);
	free(want);
	free(root);
	free(big);
	/* No mountinfo. */
	ck_assert_int_ne(asprintf(&root, "%s/nowhere", dir), -1);
	ck_assert_int_ne(asprintf(&want, "%s/self/mountinfo: No such file or "
	    "directory", root), -1);
	expect(root, KNOWN_MOUNT, NULL, PROBE_CRIT, want);
	free(want);
	free(root);
	free(line);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* lbagent out of descriptors: unknown, not an unmounted volume. */
START_TEST(mountpoint_out_of_descriptors)
{
	struct pu	sr;
	struct tu_fds	fds;

	pu_init(&sr, mp, NULL);
	pu_set(&sr, "path", KNOWN_MOUNT);
	pu_check(&sr);
	tu_fds_exhaust(&fds, 0);
	pu_expect(&sr, PROBE_UNKNOWN, "cannot start a thread: Too many "
	    "open files (lbagent out of descriptors)");
	/* One left: the worker's, none for mountinfo. */
	tu_fds_release(&fds);
	tu_fds_exhaust(&fds, 1);
	pu_expect(&sr, PROBE_UNKNOWN, "/proc/self/mountinfo: Too many open "
	    "files (lbagent out of descriptors)");
	tu_fds_release(&fds);
	ck_assert(pu_once(&sr, 10000));
	ck_assert_int_eq(sr.out.result, PROBE_OK);
	pu_done(&sr);
}
END_TEST

static void
tick(evutil_socket_t fd, short what, void *arg)
{
	(*(int *)arg)++;
}

/*
 * A hung mount: the run does not report, the loop keeps running (a timer
 * fires meanwhile) and the run is cancelled at its bound; the next runs
 * report at once that it is still blocked; an aborted connection is crit,
 * and the directory once unmounted is not a mount point.
 */
START_TEST(mountpoint_hung)
{
	char			*dir = tu_tmpdir(), *mnt = pu_mkdirs(dir, "nfs");
	struct timeval		 ms20 = { 0, 20000 };
	struct event		*ev;
	struct pu		 sr;
	int			 fd, i, ticks = 0;

	if ((fd = hungfs_mount(mnt)) == -1)
		goto out;
	pu_init(&sr, mp, NULL);
	pu_set(&sr, "path", mnt);
	pu_set(&sr, "fstype", "nfs4");
	ev = event_new(sr.base, -1, EV_PERSIST, tick, &ticks);
	ck_assert_int_eq(event_add(ev, &ms20), 0);
	ck_assert_msg(!pu_once(&sr, 300), "reported: %s", sr.out.reason);
	ck_assert_int_eq(sr.reports, 0);
	ck_assert_int_gt(ticks, 0);
	event_free(ev);
	for (i = 0; i < 3; i++) {
		ck_assert(pu_once(&sr, 10000));
		ck_assert_int_eq(sr.out.result, PROBE_CRIT);
		ck_assert_msg(strncmp(sr.out.reason,
		    "stat still blocked since ", 25) == 0, "%s",
		    sr.out.reason);
	}
	hungfs_abort(fd);
	for (i = 0; i < 1000; i++) {
		ck_assert(pu_once(&sr, 10000));
		if (strncmp(sr.out.reason, "stat still blocked", 18) != 0)
			break;
		usleep(10000);
	}
	ck_assert_int_eq(sr.out.result, PROBE_CRIT);
	ck_assert_str_eq(sr.out.reason,
	    "statx: Transport endpoint is not connected");
	hungfs_umount(mnt);
	ck_assert(pu_once(&sr, 10000));
	ck_assert_msg(strncmp(sr.out.reason, NOT_MOUNT, strlen(NOT_MOUNT)) ==
	    0, "%s", sr.out.reason);
	pu_done(&sr);
out:
	tu_rmtree(dir);
	free(mnt);
	free(dir);
}
END_TEST

static Suite *
mountpoint_suite(void)
{
	Suite	*s = suite_create("probe_mountpoint");
	TCase	*tc = tcase_create("mountpoint");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, mountpoint_config);
	tcase_add_test(tc, mountpoint_root_and_plain_dir);
	tcase_add_test(tc, mountpoint_tmpfs);
	tcase_add_test(tc, mountpoint_bind_same_device);
	tcase_add_test(tc, mountpoint_stacked_and_hidden);
	tcase_add_test(tc, mountpoint_escaped_name);
	tcase_add_test(tc, mountpoint_mountinfo_bounds);
	tcase_add_test(tc, mountpoint_out_of_descriptors);
	tcase_add_test(tc, mountpoint_hung);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(mountpoint_suite());
}
