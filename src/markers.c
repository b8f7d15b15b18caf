/*
 * Marker files. `touch /var/lib/lbagent/drain` is an operator's intent, so
 * anything that exists under a marker's name counts as present, readable
 * or not; only its first line (the reason) is optional.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lbagent/markers.h"

static const char *const marker_names[MARKER_COUNT] = {
	[MARKER_MAINT] = "maint",
	[MARKER_DRAIN] = "drain",
	[MARKER_OFF] = "off",
};

const char *
marker_name(enum marker_kind kind)
{
	return marker_names[kind];
}

static void
unreadable(struct marker *m, const char *name, const char *what)
{
	m->present = true;
	m->unreadable = true;
	snprintf(m->reason, sizeof(m->reason), "%s marker", name);
	snprintf(m->error, sizeof(m->error), "%s", what);
}

/*
 * Reads one marker into *m. Returns false when this read cannot tell
 * whether the marker exists (out of descriptors or memory): the caller
 * then keeps what it knew, since guessing either way could take the node
 * out or put it back by mistake.
 */
static bool
marker_read(const char *dir, enum marker_kind kind, struct marker *m)
{
	const char	*name = marker_names[kind];
	char		 path[PATH_MAX], buf[512];
	struct stat	 st;
	ssize_t		 n;
	int		 fd;

	memset(m, 0, sizeof(*m));
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return true;
	/* O_NONBLOCK: a FIFO put there by mistake must not hang the loop. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd == -1) {
		if (errno == ENOENT || errno == ENOTDIR)
			return true;
		if (errno == EMFILE || errno == ENFILE || errno == ENOMEM ||
		    errno == EINTR)
			return false;
		/* It exists but cannot be opened (permissions, a loop...). */
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
	if (text_reason(m->reason, buf, (size_t)n) == 0)
		snprintf(m->reason, sizeof(m->reason), "%s marker", name);
	return true;
}

void
markers_read(const char *dir, struct markers *ms)
{
	struct marker	m;
	int		i;

	for (i = 0; i < MARKER_COUNT; i++)
		if (marker_read(dir, (enum marker_kind)i, &m))
			ms->m[i] = m;
}
