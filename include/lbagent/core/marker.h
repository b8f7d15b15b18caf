/*
 * The markers an operator sets (maint, drain, off, shadow) as the decision
 * reads them, and the marker file's format: the first line is the reason, then
 * optional `key: value` lines (owner, host, since, until), so that a
 * plain `touch` or `echo reason > drain` is a marker without an end.
 */
#ifndef LBAGENT_MARKER_H
#define LBAGENT_MARKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lbagent/core/text.h"

enum marker_kind {
	MARKER_MAINT,
	MARKER_DRAIN,
	MARKER_OFF,		/* automation off (the kill switch) */
	MARKER_SHADOW,		/* shadow mode: automation runs, tells nothing */
	MARKER_COUNT
};

#define MARKER_FILE_MAX		1024	/* bytes of a marker file read */
#define MARKER_OWNER_MAX	64
#define MARKER_HOST_MAX		128
#define MARKER_NOTE_MAX		127
#define MARKER_TIME_LEN		20	/* "2026-12-02T03:00:00Z" */

struct marker {
	bool	present;
	bool	unreadable;		/* present, but its reason could not be read */
	char	reason[REASON_MAX + 1];	/* first line, or "<name> marker" */
	char	error[128];		/* why it was unreadable */

	/* From the file's `key: value` lines; empty or false when absent. */
	char	owner[MARKER_OWNER_MAX + 1];
	char	host[MARKER_HOST_MAX + 1];
	bool	has_since, has_until;
	int64_t	since_wall_ms;
	int64_t	until_wall_ms;		/* its end, wall clock */
	char	note[MARKER_NOTE_MAX + 1]; /* what was not understood; "" */

	/*
	 * Kept across reads by marker_track(): when this end was first seen,
	 * on both clocks, and whether the marker has ended (then present is
	 * false: an ended marker counts as absent).
	 */
	int64_t	seen_now_ms, seen_wall_ms;
	bool	expired;
};

struct markers {
	struct marker	m[MARKER_COUNT];
};

const char	*marker_name(enum marker_kind);

/*
 * Reads a marker file's content (len bytes; truncated: the file went on
 * beyond them) into m's reason, owner, host, since and until; what is not
 * understood goes to m->note and is otherwise ignored. A bad or missing
 * `until` means no end: the operator's state is kept. The default reason
 * is "<name> marker". Never fails: any content is a marker.
 */
void		 marker_parse(struct marker *m, enum marker_kind,
		    const char *buf, size_t len, bool truncated);
/*
 * Writes a marker file's content: the reason line (may be empty), then
 * owner, host, since and, with has_until, until. Returns its length, or -1
 * when it does not fit in size.
 */
int		 marker_format(char *buf, size_t size, const char *reason,
		    const char *owner, const char *host, int64_t since_wall_ms,
		    bool has_until, int64_t until_wall_ms);

/*
 * An ISO 8601 time, "2026-12-02T03:00[:00[.000]]" then "Z", "+01:00",
 * "+0100" or "+01", into milliseconds since the epoch (1970 to 9999).
 * Returns 0, or -1 with *why set.
 */
int		 marker_time_parse(const char *s, size_t len, int64_t *wall_ms,
		    const char **why);
/* The same time back in UTC, to the second: "2026-12-02T03:00:00Z". */
void		 marker_time_format(int64_t wall_ms,
		    char buf[MARKER_TIME_LEN + 1]);

/*
 * Carries what old knew about m's end across a read of the file (old: the
 * previous read, m: this one), or notes now that this end was first seen;
 * then ends m (present false, expired true) when marker_ended() says so.
 * Returns true when m ended at this read (it had not before).
 */
bool		 marker_track(const struct marker *old, struct marker *m,
		    int64_t now_ms, int64_t wall_ms);
/*
 * Whether a marker with an end has reached it: the wall clock says so,
 * and at least (until - the wall time when it was first seen) has elapsed
 * on the monotonic clock since then. A wall clock set forward, or a
 * restart, never ends it early by more than the jump; one set back ends
 * it later, by the jump (the operator's state is kept).
 */
bool		 marker_ended(const struct marker *m, int64_t now_ms,
		    int64_t wall_ms);

/*
 * What a drain or maint marker's reason gets in the reply when the peer
 * guard sees no other node serving: "REASON (no other node serving)", or
 * these words alone for a marker without one.
 */
#define MARKER_ALONE_WORDS	"no other node serving"

#endif
