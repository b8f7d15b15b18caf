/*
 * A really hung filesystem for the tests of disk and file: a FUSE mount
 * whose server never answers, in a private mount namespace of the test's
 * (forked) process. Every call into it blocks in the kernel the way a
 * dead NFS server's would, until hungfs_release() aborts the connection.
 */
#ifndef LBAGENT_TEST_HUNGFS_H
#define LBAGENT_TEST_HUNGFS_H

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mount.h>
#include <unistd.h>

#include "testutil.h"

/*
 * Mounts it on dir (which must exist). Returns the /dev/fuse descriptor,
 * or -1 (with a note on stderr) where this process may not mount:
 * the caller then skips. Must be called before any thread exists.
 */
static inline int
hungfs_mount(const char *dir)
{
	char	opts[128];
	int	fd;

	if (tu_private_mounts() == -1) {
		perror("hungfs: skipped: private mount namespace");
		return -1;
	}
	if ((fd = open("/dev/fuse", O_RDWR | O_CLOEXEC)) == -1) {
		perror("hungfs: skipped: /dev/fuse");
		return -1;
	}
	snprintf(opts, sizeof(opts),
	    "fd=%d,rootmode=40000,user_id=0,group_id=0", fd);
	if (mount("lbagent-hungfs", dir, "fuse.lbagent-hungfs",
	    MS_NODEV | MS_NOSUID, opts) == -1) {
		perror("hungfs: skipped: mount");
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Aborts the connection, as if the server died for good: blocked calls
 * and later ones fail with ENOTCONN until the mount is gone.
 */
static inline void
hungfs_abort(int fd)
{
	close(fd);
}

static inline void
hungfs_umount(const char *dir)
{
	umount2(dir, MNT_DETACH);
}

#endif
