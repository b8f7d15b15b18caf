/*
 * lbagentctl: the marker files it writes, and how it tells that the reply
 * carries them.
 */
#ifndef LBAGENT_CTL_MARKERS_H
#define LBAGENT_CTL_MARKERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "lbagent/core/marker.h"

/* A marker's path: state_dir/KIND or state_dir/SERVICE/KIND. */
int		 ctl_marker_path(char *buf, size_t size, const char *state_dir,
		    const char *service, enum marker_kind);

/*
 * Creates the marker atomically (a temporary file in the same directory,
 * fsync, rename, then the directory synced), holding reason and a newline,
 * or nothing when reason is NULL; mode 0666 less the umask, as touch
 * makes it. A service's directory is created when missing. Returns 0, or
 * -1 with a message in err.
 */
int		 ctl_marker_set(const char *state_dir, const char *service,
		    enum marker_kind, const char *reason, char *err,
		    size_t errsize);
/*
 * --until's TIME as a wall-clock end: an ISO 8601 time with its zone
 * (marker_time_parse()), or HH:MM in local time, today or, once past,
 * tomorrow. now: the wall clock in seconds. Returns 0, or -1 with *why.
 */
int		 ctl_until(const char *s, time_t now, int64_t *wall_ms,
		    const char **why);
/*
 * A marker file's content with an end (without its last newline, which
 * the writer adds): the reason, who set it (SUDO_USER, else the login
 * name), this host, now and until. Returns 0, or -1 when it does not fit.
 */
int		 ctl_marker_content(char *buf, size_t size, const char *reason,
		    int64_t now_wall_ms, int64_t until_wall_ms);
/* Removes the marker; one that is not there is fine. */
int		 ctl_marker_clear(const char *state_dir, const char *service,
		    enum marker_kind, char *err, size_t errsize);

/*
 * What the daemon should show for one service given the markers that
 * apply to it (the node's, and the service's own; NULL for the default
 * service), read from disk with markers_read() as the daemon reads them.
 */
struct ctl_expect {
	const char	*state;		/* "maint", "drain", or NULL: neither */
	const char	*reason;	/* the reason the reply carries with state
					   (the marker's that wins); NULL: none */
	bool		 off;		/* an off marker applies */
};

void		 ctl_expect_from(const struct markers *node,
		    const struct markers *own, struct ctl_expect *);

/*
 * Whether a service object of /status shows e: for the state, exactly that
 * word (and, with the detail, the decision's reason the marker's: a maint
 * on over a maint waits for the new reason), or (NULL) neither maint nor
 * drain; for automation, "off" when an
 * off marker applies, else "auto" or "shadow" (not off either way). With check_automation false only the state counts;
 * with check_state false only automation (and an off that is not by a
 * marker is then left to the caller: see ctl_off_not_by_marker).
 */
bool		 ctl_reflects(const json_t *svc, const struct ctl_expect *e,
		    bool check_state, bool check_automation);
/* What keeps svc in shadow mode, for a note; NULL when it is not. */
const char	*ctl_shadow_by(const json_t *svc);

/*
 * With detail: automation stays off though no off marker applies and the
 * daemon lists none (LBAGENT_MODE or the configuration). Returns the
 * daemon's words for it, or NULL.
 */
const char	*ctl_off_not_by_marker(const json_t *svc);

#endif
