/* One way to replace a file whole: temporary file, fsync, rename, fsync. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lbagent/sys/atomic_file.h"

static int
fail(struct atomic_file_error *e, enum atomic_file_step step, int error)
{
	e->step = step;
	e->error = error;
	errno = error;
	return -1;
}

static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t	w;

	while (n > 0) {
		if ((w = write(fd, p, n)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * A file of our own, made here (O_EXCL: never one that stands there, nor
 * through a link). A fixed name is cleared first; a unique one gets the
 * next number when a leftover of a dead process holds it.
 */
static int
create_tmp(const char *tmp, int flags, mode_t mode,
    struct atomic_file_error *e)
{
	static unsigned	 seq;
	const int	 oflags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
			    O_NOFOLLOW;
	unsigned	 tries;
	int		 fd, n;

	if (!(flags & ATOMIC_FILE_UNIQUE)) {
		if ((n = snprintf(e->tmp, sizeof(e->tmp), "%s", tmp)) < 0 ||
		    (size_t)n >= sizeof(e->tmp))
			return fail(e, ATOMIC_FILE_TMP_NAME, ENAMETOOLONG);
		if (unlink(e->tmp) == -1 && errno != ENOENT)
			return fail(e, ATOMIC_FILE_CREATE, errno);
		if ((fd = open(e->tmp, oflags, mode)) == -1)
			return fail(e, ATOMIC_FILE_CREATE, errno);
		return fd;
	}
	for (tries = 0; tries < 100; tries++) {
		if ((n = snprintf(e->tmp, sizeof(e->tmp), "%s.%ld.%u", tmp,
		    (long)getpid(), seq++)) < 0 || (size_t)n >= sizeof(e->tmp))
			return fail(e, ATOMIC_FILE_TMP_NAME, ENAMETOOLONG);
		if ((fd = open(e->tmp, oflags, mode)) != -1)
			return fd;
		if (errno != EEXIST)
			return fail(e, ATOMIC_FILE_CREATE, errno);
	}
	return fail(e, ATOMIC_FILE_CREATE, EEXIST);
}

int
atomic_file_write(const char *dir, const char *path, const char *tmp,
    int flags, const char *text, mode_t mode, struct atomic_file_error *e)
{
	int	fd, error;

	e->tmp[0] = '\0';
	if ((fd = create_tmp(tmp, flags, mode, e)) == -1)
		return -1;
	if ((text != NULL && (write_all(fd, text, strlen(text)) == -1 ||
	    write_all(fd, "\n", 1) == -1)) || fsync(fd) == -1) {
		error = errno;
		close(fd);
		unlink(e->tmp);
		return fail(e, ATOMIC_FILE_WRITE, error);
	}
	if (close(fd) == -1) {
		error = errno;
		unlink(e->tmp);
		return fail(e, ATOMIC_FILE_WRITE, error);
	}
	if (rename(e->tmp, path) == -1) {
		error = errno;
		unlink(e->tmp);
		return fail(e, ATOMIC_FILE_RENAME, error);
	}
	return atomic_file_sync_dir(dir, e);
}

int
atomic_file_sync_dir(const char *dir, struct atomic_file_error *e)
{
	int	fd, error;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return fail(e, ATOMIC_FILE_DIR_OPEN, errno);
	/* Some file systems cannot sync a directory: nothing to wait for. */
	if (fsync(fd) == -1 && errno != EINVAL) {
		error = errno;
		close(fd);
		return fail(e, ATOMIC_FILE_DIR_SYNC, error);
	}
	close(fd);
	return 0;
}
