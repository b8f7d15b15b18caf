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

static void
marker_read(const char *dir, enum marker_kind kind, struct marker *m)
{
	const char	*name = marker_names[kind];
	char		 path[PATH_MAX], buf[512];
	struct stat	 st;
	ssize_t		 n;
	int		 fd;

	memset(m, 0, sizeof(*m));
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return;
	/* O_NONBLOCK: a FIFO put there by mistake must not hang the loop. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd == -1) {
		if (errno == ENOENT || errno == ENOTDIR)
			return;
		unreadable(m, name, strerror(errno));
		return;
	}
	if (fstat(fd, &st) == -1) {
		unreadable(m, name, strerror(errno));
		close(fd);
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		unreadable(m, name, "not a regular file");
		close(fd);
		return;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n == -1) {
		unreadable(m, name, strerror(errno));
		return;
	}
	m->present = true;
	if (text_reason(m->reason, buf, (size_t)n) == 0)
		snprintf(m->reason, sizeof(m->reason), "%s marker", name);
}

void
markers_read(const char *dir, struct markers *ms)
{
	int	i;

	for (i = 0; i < MARKER_COUNT; i++)
		marker_read(dir, (enum marker_kind)i, &ms->m[i]);
}
