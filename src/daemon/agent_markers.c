/*
 * The markers as the agent takes them in: a new read against the last,
 * the markers past their end expired and renamed, every change logged,
 * and whether the documents show a difference.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "lbagent/core/marker.h"
#include "lbagent/sys/clock.h"
#include "lbagent/sys/log.h"

#include "agent_impl.h"

/* Whether a marker changed in what the documents show of it. */
static bool
markers_differ(const struct markers *old, const struct markers *new)
{
	int	i;

	for (i = 0; i < MARKER_COUNT; i++) {
		const struct marker *o = &old->m[i], *n = &new->m[i];

		if (o->present != n->present || o->expired != n->expired ||
		    o->unreadable != n->unreadable ||
		    o->has_until != n->has_until ||
		    (n->has_until && o->until_wall_ms != n->until_wall_ms))
			return true;
	}
	return false;
}

/* " (set by alice@web1 at ..., until ...)", or "" for a plain marker. */
static void
marker_trail(const struct marker *m, char *buf, size_t size)
{
	char	since[MARKER_TIME_LEN + 1], until[MARKER_TIME_LEN + 1];

	buf[0] = '\0';
	if (m->owner[0] == '\0' && m->host[0] == '\0' && !m->has_since &&
	    !m->has_until)
		return;
	marker_time_format(m->since_wall_ms, since);
	marker_time_format(m->until_wall_ms, until);
	snprintf(buf, size, " (set by %s%s%s%s%s, %s%s)",
	    m->owner[0] ? m->owner : "?", m->host[0] ? "@" : "", m->host,
	    m->has_since ? " at " : "", m->has_since ? since : "",
	    m->has_until ? "until " : "no end", m->has_until ? until : "");
}

/* Logs a marker that appeared, went, ended, or became unreadable. */
static void
log_marker_changes(const char *where, const struct markers *old,
    const struct markers *new)
{
	char	trail[MARKER_OWNER_MAX + MARKER_HOST_MAX + 96];
	int	i;

	for (i = 0; i < MARKER_COUNT; i++) {
		const struct marker *o = &old->m[i], *n = &new->m[i];
		const char *name = marker_name((enum marker_kind)i);

		marker_trail(n, trail, sizeof(trail));
		if (n->unreadable && (!o->unreadable ||
		    strcmp(o->error, n->error) != 0))
			log_warnx("marker %s%s exists but cannot be read (%s): "
			    "counting it as present", where, name, n->error);
		if ((n->present || n->expired) && n->note[0] != '\0' &&
		    strcmp(n->note, o->note) != 0)
			log_warnx("marker %s%s: %s", where, name, n->note);
		if (n->expired && !o->expired)
			log_warnx("marker %s%s ended: %s%s; counting it as "
			    "absent", where, name, n->reason, trail);
		else if (n->present && !o->present && !o->expired)
			log_notice("marker %s%s appeared: %s%s", where, name,
			    n->reason, trail);
		else if (n->present && !o->present)
			log_notice("marker %s%s set again: %s%s", where, name,
			    n->reason, trail);
		else if (!n->present && o->present && !n->expired)
			log_notice("marker %s%s removed", where, name);
	}
}

/*
 * Ends the markers of dir past their end (old: the previous read) and
 * renames each to NAME.expired; one that cannot be renamed still counts
 * as absent, and the rename is tried again at the next read.
 */
static void
expire_markers(const char *dir, const char *where, const struct markers *old,
    struct markers *ms)
{
	char	err[PATH_MAX + 128];
	int64_t	now = clock_now_ms(), wall = clock_wall_ms();
	int	i;

	for (i = 0; i < MARKER_COUNT; i++) {
		struct marker *m = &ms->m[i];
		bool ended = marker_track(&old->m[i], m, now, wall);

		if (!m->expired)
			continue;
		if (markers_retire(dir, (enum marker_kind)i, m, err,
		    sizeof(err)) == 0) {
			if (ended)
				log_notice("marker %s%s renamed to %s.expired",
				    where, marker_name((enum marker_kind)i),
				    marker_name((enum marker_kind)i));
		} else if (ended)
			log_warnx("marker %s%s: %s", where,
			    marker_name((enum marker_kind)i), err);
	}
}

bool
agent_markers_take(const char *dir, const char *where, struct markers *cur,
    struct markers *ms)
{
	bool	changed;

	expire_markers(dir, where, cur, ms);
	log_marker_changes(where, cur, ms);
	changed = markers_differ(cur, ms);
	*cur = *ms;
	return changed;
}
