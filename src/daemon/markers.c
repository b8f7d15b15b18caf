/*
 * Marker files. `touch /var/lib/lbagent/drain` is an operator's intent, so
 * anything that exists under a marker's name counts as present, readable
 * or not; only its first line (the reason) is optional. Only a regular
 * file is read: a symbolic link counts as present, its target unread.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lbagent/sys/atomic_file.h"
#include "lbagent/daemon/markers.h"

static void
unreadable(struct marker *m, const char *name, const char *what)
{
	m->present = true;
	m->unreadable = true;
	snprintf(m->reason, sizeof(m->reason), "%s marker", name);
	snprintf(m->error, sizeof(m->error), "%s", what);
}

#define LINK_WHY	"a symbolic link: lbagent does not follow it, its " \
			"content is not read"
#define LINKED_DIR_WHY	"in a directory that is a symbolic link: lbagent " \
			"does not read through it"

/* Out of descriptors or memory: this read proves nothing. */
static bool
no_resources(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOMEM || err == EINTR;
}

/*
 * Reads one marker of the directory dfd into *m. Returns false when this
 * read cannot tell whether the marker exists (out of descriptors or
 * memory): the caller then keeps what it knew, since guessing either way
 * could take the node out or put it back by mistake.
 */
static bool
marker_read(int dfd, enum marker_kind kind, struct marker *m)
{
	const char	*name = marker_name(kind);
	char		 buf[MARKER_FILE_MAX + 1];
	struct stat	 st;
	ssize_t		 n;
	int		 fd;

	memset(m, 0, sizeof(*m));
	/*
	 * O_NONBLOCK: a FIFO put there by mistake must not hang the loop.
	 * O_NOFOLLOW: a link's target (a secret, /proc/self/environ) must
	 * never become a public reason.
	 */
	fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
	    O_NOFOLLOW);
	if (fd == -1) {
		if (errno == ENOENT || errno == ENOTDIR)
			return true;
		if (no_resources(errno))
			return false;
		/* A link, dangling or not, is there: an operator's intent. */
		if (errno == ELOOP && fstatat(dfd, name, &st,
		    AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
			unreadable(m, name, LINK_WHY);
			return true;
		}
		/* It exists but cannot be opened (permissions...). */
		unreadable(m, name, strerror(errno));
		return true;
	}
	if (fstat(fd, &st) == -1) {
		unreadable(m, name, strerror(errno));
		close(fd);
		return true;
	}
	if (!S_ISREG(st.st_mode)) {
		unreadable(m, name, "not a regular file");
		close(fd);
		return true;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n == -1) {
		unreadable(m, name, strerror(errno));
		return true;
	}
	m->present = true;
	marker_parse(m, kind, buf, n > MARKER_FILE_MAX ? MARKER_FILE_MAX :
	    (size_t)n, n > MARKER_FILE_MAX);
	return true;
}

/* Markers that are there, in a directory not read through: none read. */
static bool
marker_seen(const char *dir, enum marker_kind kind, struct marker *m)
{
	const char	*name = marker_name(kind);
	char		 path[PATH_MAX];
	struct stat	 st;

	memset(m, 0, sizeof(*m));
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return true;
	if (lstat(path, &st) == -1) {
		if (errno == ENOENT || errno == ENOTDIR)
			return true;
		if (no_resources(errno))
			return false;
		unreadable(m, name, strerror(errno));
		return true;
	}
	unreadable(m, name, LINKED_DIR_WHY);
	return true;
}

/* Every marker of dir; own_dir: dir itself must not be a link. */
static void
read_dir(const char *dir, bool own_dir, struct markers *ms)
{
	struct marker	m;
	struct stat	st;
	int		i, dfd, err;
	bool		ok;

	/* O_PATH: searching the directory needs no right to list it. */
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC |
	    (own_dir ? O_NOFOLLOW : 0));
	err = errno;
	if (dfd == -1 && no_resources(err))
		return;		/* every marker as it was */
	if (dfd == -1 && own_dir && (err == ELOOP || err == ENOTDIR) &&
	    lstat(dir, &st) == 0 && S_ISLNK(st.st_mode)) {
		for (i = 0; i < MARKER_COUNT; i++)
			if (marker_seen(dir, (enum marker_kind)i, &m))
				ms->m[i] = m;
		return;
	}
	for (i = 0; i < MARKER_COUNT; i++) {
		if (dfd != -1)
			ok = marker_read(dfd, (enum marker_kind)i, &m);
		else {
			/* No directory there, or none we may search. */
			memset(&m, 0, sizeof(m));
			ok = true;
			if (err != ENOENT && err != ENOTDIR)
				unreadable(&m, marker_name(i), strerror(err));
		}
		if (ok)
			ms->m[i] = m;
	}
	if (dfd != -1)
		close(dfd);
}

void
markers_read(const char *dir, struct markers *ms)
{
	read_dir(dir, false, ms);
}

void
markers_read_service(const char *dir, struct markers *ms)
{
	read_dir(dir, true, ms);
}

int
markers_retire(const char *dir, enum marker_kind kind, const struct marker *m,
    char *err, size_t errsize)
{
	const char	*name = marker_name(kind);
	char		 buf[MARKER_FILE_MAX + 1], to[32];
	struct atomic_file_error e;
	struct marker	 again;
	ssize_t		 n;
	int		 dfd, fd, rc = -1;

	snprintf(to, sizeof(to), "%s.expired", name);
	if ((dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(err, errsize, "%s: %s", dir, strerror(errno));
		return -1;
	}
	/*
	 * Read again just before: a marker set anew in the meantime (another
	 * end, or none) is the operator's, and stays.
	 */
	fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
	    O_NOFOLLOW);
	if (fd == -1) {
		rc = errno == ENOENT ? 0 : -1;
		if (rc == -1)
			snprintf(err, errsize, "%s/%s: %s", dir, name,
			    strerror(errno));
		goto out;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	memset(&again, 0, sizeof(again));
	if (n >= 0)
		marker_parse(&again, kind, buf, n > MARKER_FILE_MAX ?
		    MARKER_FILE_MAX : (size_t)n, n > MARKER_FILE_MAX);
	if (n < 0 || !again.has_until ||
	    again.until_wall_ms != m->until_wall_ms) {
		snprintf(err, errsize, "%s/%s changed: left as it is", dir,
		    name);
		goto out;
	}
	/* A previous NAME.expired is replaced: the log keeps the trail. */
	if (renameat(dfd, name, dfd, to) == -1) {
		snprintf(err, errsize, "cannot rename %s/%s to %s: %s", dir,
		    name, to, strerror(errno));
		goto out;
	}
	/* The rename is done; that it lasts a crash is best effort. */
	(void)atomic_file_sync_dir(dir, &e);
	rc = 0;
out:
	close(dfd);
	return rc;
}
