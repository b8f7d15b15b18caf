/* Helpers for the unit tests: temp directories and files, the runner. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

char *
tu_tmpdir(void)
{
	char	*dir = strdup("/tmp/lbagent-unit-XXXXXX");

	ck_assert_ptr_nonnull(dir);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	return dir;
}

/*
 * A mount namespace of this process's own, private from the mount holding
 * /tmp (where tu_tmpdir makes directories) down, so that what a test
 * mounts there never reaches the namespace it was started in. In a chroot
 * whose root is no mount point (the fresh-machine check's), "/" cannot be
 * made private (EINVAL): such a chroot is in a private namespace already.
 * 0, or -1 with errno.
 */
int
tu_private_mounts(void)
{
	char		 top[PATH_MAX] = "/tmp", up[PATH_MAX];
	struct stat	 st, pst;
	char		*slash;

	if (unshare(CLONE_NEWNS) == -1)
		return -1;
	/* Up from /tmp to the first directory on another device than its
	 * parent, or "/". */
	while (strcmp(top, "/") != 0) {
		snprintf(up, sizeof(up), "%s", top);
		if ((slash = strrchr(up, '/')) == up)
			up[1] = '\0';
		else
			*slash = '\0';
		if (stat(top, &st) == -1 || stat(up, &pst) == -1)
			return -1;
		if (st.st_dev != pst.st_dev)
			break;
		memcpy(top, up, sizeof(top));
	}
	if (mount(NULL, top, NULL, MS_REC | MS_PRIVATE, NULL) == -1 &&
	    !(errno == EINVAL && strcmp(top, "/") == 0))
		return -1;
	return 0;
}

void
tu_rmtree(const char *dir)
{
	char	cmd[4096];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

char *
tu_write(const char *dir, const char *name, const char *data, long len)
{
	char	*path;
	FILE	*fp;
	size_t	 n = len < 0 ? strlen(data) : (size_t)len;

	ck_assert_int_ne(asprintf(&path, "%s/%s", dir, name), -1);
	ck_assert_ptr_nonnull(fp = fopen(path, "w"));
	ck_assert_uint_eq(fwrite(data, 1, n, fp), n);
	ck_assert_int_eq(fclose(fp), 0);
	return path;
}

void
tu_fds_exhaust(struct tu_fds *f, int nfree)
{
	struct rlimit	rl;
	int		fd;

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &f->saved), 0);
	rl = f->saved;
	rl.rlim_cur = TU_FD_LIMIT;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	f->n = 0;
	while ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) != -1)
		f->fds[f->n++] = fd;
	ck_assert_int_eq(errno, EMFILE);
	ck_assert_int_ge(f->n, nfree);
	while (nfree-- > 0)
		close(f->fds[--f->n]);
}

void
tu_fds_release(struct tu_fds *f)
{
	while (f->n > 0)
		close(f->fds[--f->n]);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &f->saved), 0);
}

int
tu_run(Suite *s)
{
	SRunner	*sr = srunner_create(s);
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
