/*
 * lbagentctl's markers: the same files an operator's touch or rm makes,
 * written so that lbagent never reads half of one, and what the daemon
 * should show once it has read them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lbagent/core/marker.h"
#include "lbagent/core/text.h"
#include "lbagent/ctl/format.h"
#include "lbagent/ctl/markers.h"
#include "lbagent/sys/atomic_file.h"

int
ctl_marker_path(char *buf, size_t size, const char *state_dir,
    const char *service, enum marker_kind kind)
{
	int	n;

	if (service != NULL)
		n = snprintf(buf, size, "%s/%s/%s", state_dir, service,
		    marker_name(kind));
	else
		n = snprintf(buf, size, "%s/%s", state_dir, marker_name(kind));
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

static int
marker_dir(char *buf, size_t size, const char *state_dir, const char *service)
{
	int	n;

	n = service != NULL ? snprintf(buf, size, "%s/%s", state_dir, service) :
	    snprintf(buf, size, "%s", state_dir);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/*
 * A service's directory must be one, not a symbolic link: lbagent does not
 * read markers through a link, and lbagentctl writes none through it.
 */
static int
own_dir(const char *dir, const char *service, char *err, size_t errsize)
{
	struct stat	st;

	if (service == NULL || lstat(dir, &st) == -1 || !S_ISLNK(st.st_mode))
		return 0;
	snprintf(err, errsize, "%s is a symbolic link: lbagent does not read "
	    "markers through it, lbagentctl writes none there", dir);
	return -1;
}

/* What went wrong in an atomic write, in lbagentctl's words. */
static void
say(const struct atomic_file_error *e, const char *state_dir,
    const char *dir, const char *path, char *err, size_t errsize)
{
	const char	*why = strerror(e->error);

	switch (e->step) {
	case ATOMIC_FILE_TMP_NAME:
		snprintf(err, errsize, "%s: path too long", state_dir);
		break;
	case ATOMIC_FILE_CREATE:
		snprintf(err, errsize, "cannot write in %s: %s", dir, why);
		break;
	case ATOMIC_FILE_WRITE:
		snprintf(err, errsize, "cannot write %s: %s", e->tmp, why);
		break;
	case ATOMIC_FILE_RENAME:
		snprintf(err, errsize, "cannot create %s: %s", path, why);
		break;
	case ATOMIC_FILE_DIR_OPEN:
		snprintf(err, errsize, "%s: %s", dir, why);
		break;
	case ATOMIC_FILE_DIR_SYNC:
		snprintf(err, errsize, "fsync %s: %s", dir, why);
		break;
	}
}

int
ctl_marker_set(const char *state_dir, const char *service,
    enum marker_kind kind, const char *reason, char *err, size_t errsize)
{
	struct atomic_file_error	e;
	char				dir[PATH_MAX], path[PATH_MAX];
	char				tmp[PATH_MAX];
	int				n;

	if (marker_dir(dir, sizeof(dir), state_dir, service) == -1 ||
	    ctl_marker_path(path, sizeof(path), state_dir, service, kind) == -1 ||
	    (n = snprintf(tmp, sizeof(tmp), "%s/.%s", dir,
	    marker_name(kind))) < 0 || (size_t)n >= sizeof(tmp)) {
		snprintf(err, errsize, "%s: path too long", state_dir);
		return -1;
	}
	/* lbagent makes both at start-up, with these permissions. */
	if (mkdir(state_dir, 0755) == -1 && errno != EEXIST) {
		snprintf(err, errsize, "cannot create %s: %s", state_dir,
		    strerror(errno));
		return -1;
	}
	if (service != NULL && mkdir(dir, 0755) == -1 && errno != EEXIST) {
		snprintf(err, errsize, "cannot create %s: %s", dir,
		    strerror(errno));
		return -1;
	}
	if (own_dir(dir, service, err, errsize) == -1)
		return -1;
	/* What touch would make: 0666 less the umask. */
	if (atomic_file_write(dir, path, tmp, ATOMIC_FILE_UNIQUE, reason, 0666,
	    &e) == -1) {
		say(&e, state_dir, dir, path, err, errsize);
		return -1;
	}
	return 0;
}

int
ctl_until(const char *s, time_t now, int64_t *wall_ms, const char **why)
{
	struct tm	tm;
	time_t		t;
	int		h, m;

	if (strlen(s) == 5 && s[2] == ':' && s[0] >= '0' && s[0] <= '2' &&
	    s[1] >= '0' && s[1] <= '9' && s[3] >= '0' && s[3] <= '5' &&
	    s[4] >= '0' && s[4] <= '9') {
		h = (s[0] - '0') * 10 + (s[1] - '0');
		m = (s[3] - '0') * 10 + (s[4] - '0');
		if (h > 23) {
			*why = "HH:MM: the hour is 00 to 23";
			return -1;
		}
		if (localtime_r(&now, &tm) == NULL) {
			*why = "the local time is unknown";
			return -1;
		}
		tm.tm_hour = h;
		tm.tm_min = m;
		tm.tm_sec = 0;
		tm.tm_isdst = -1;
		if ((t = mktime(&tm)) != (time_t)-1 && t <= now) {
			/* Past today: tomorrow, at the same local time. */
			tm.tm_mday++;
			tm.tm_hour = h;
			tm.tm_min = m;
			tm.tm_isdst = -1;
			t = mktime(&tm);
		}
		if (t == (time_t)-1) {
			*why = "not a local time that exists";
			return -1;
		}
		*wall_ms = (int64_t)t * 1000;
		return 0;
	}
	if (marker_time_parse(s, strlen(s), wall_ms, why) == -1)
		return -1;
	if (*wall_ms <= (int64_t)now * 1000) {
		*why = "that time is already past";
		return -1;
	}
	return 0;
}

/* Who sets the marker: the one behind sudo, else the login name. */
static void
owner_name(char *buf, size_t size)
{
	const char	*s = getenv("SUDO_USER");
	struct passwd	*pw;

	if (s == NULL || s[0] == '\0')
		s = getlogin();
	if ((s == NULL || s[0] == '\0') && (pw = getpwuid(getuid())) != NULL)
		s = pw->pw_name;
	if (s != NULL && s[0] != '\0')
		snprintf(buf, size, "%s", s);
	else
		snprintf(buf, size, "uid %lu", (unsigned long)getuid());
}

int
ctl_marker_content(char *buf, size_t size, const char *reason,
    int64_t now_wall_ms, int64_t until_wall_ms)
{
	char	owner[MARKER_OWNER_MAX + 1], host[MARKER_HOST_MAX + 1];
	int	n;

	owner_name(owner, sizeof(owner));
	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	n = marker_format(buf, size, reason, owner, host, now_wall_ms, true,
	    until_wall_ms);
	if (n <= 0)
		return -1;
	if (buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

int
ctl_marker_clear(const char *state_dir, const char *service,
    enum marker_kind kind, char *err, size_t errsize)
{
	struct atomic_file_error	e;
	char				dir[PATH_MAX], path[PATH_MAX];

	if (marker_dir(dir, sizeof(dir), state_dir, service) == -1 ||
	    ctl_marker_path(path, sizeof(path), state_dir, service, kind) == -1) {
		snprintf(err, errsize, "%s: path too long", state_dir);
		return -1;
	}
	if (own_dir(dir, service, err, errsize) == -1)
		return -1;
	if (unlink(path) == -1) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		snprintf(err, errsize, "cannot remove %s: %s", path,
		    strerror(errno));
		return -1;
	}
	if (atomic_file_sync_dir(dir, &e) == -1) {
		say(&e, state_dir, dir, path, err, errsize);
		return -1;
	}
	return 0;
}

void
ctl_expect_from(const struct markers *node, const struct markers *own,
    struct ctl_expect *e)
{
	const struct markers	*all[2] = { node, own };
	bool			 maint = false, drain = false, off = false;
	size_t			 i;

	for (i = 0; i < 2; i++) {
		if (all[i] == NULL)
			continue;
		maint |= all[i]->m[MARKER_MAINT].present;
		drain |= all[i]->m[MARKER_DRAIN].present;
		off |= all[i]->m[MARKER_OFF].present;
	}
	/* Maint wins over drain, as in every reply. */
	e->state = maint ? "maint" : drain ? "drain" : NULL;
	e->off = off;
	/* The service's own marker first, as decision_make() picks it. */
	e->reason = NULL;
	if (e->state != NULL) {
		enum marker_kind k = maint ? MARKER_MAINT : MARKER_DRAIN;

		e->reason = own != NULL && own->m[k].present ? own->m[k].reason :
		    node->m[k].reason;
	}
}

/*
 * Whether the reason shown is the marker's: itself, or with what the
 * peer guard adds when no other node serves (service.c: alone_reason).
 */
static bool
marker_reason(const char *shown, const char *want)
{
	static const char	 tail[] = " (" MARKER_ALONE_WORDS ")";
	size_t			 sl = strlen(shown), tl = sizeof(tail) - 1;

	if (strcmp(shown, want) == 0)
		return true;
	if (want[0] == '\0')
		return strcmp(shown, MARKER_ALONE_WORDS) == 0;
	/* The marker's reason (cut if the two did not fit in a reason's
	 * REASON_MAX), then the words. */
	return sl > tl && strcmp(shown + sl - tl, tail) == 0 &&
	    (sl - tl == strlen(want) || (sl == REASON_MAX &&
	    sl - tl < strlen(want))) && strncmp(shown, want, sl - tl) == 0;
}

bool
ctl_reflects(const json_t *svc, const struct ctl_expect *e, bool check_state,
    bool check_automation)
{
	const char	*state = ctl_json_str(svc, "state");
	const char	*automation = ctl_json_str(svc, "automation");

	if (!json_is_object(svc))
		return false;
	if (check_state) {
		if (e->state != NULL && strcmp(state, e->state) != 0)
			return false;
		/* Only the detail has the reason; the public part, the word. */
		if (e->state != NULL && e->reason != NULL &&
		    json_is_string(json_object_get(svc, "reason")) &&
		    !marker_reason(ctl_json_str(svc, "reason"), e->reason))
			return false;
		if (e->state == NULL && (strcmp(state, "maint") == 0 ||
		    strcmp(state, "drain") == 0 || state[0] == '\0'))
			return false;
	}
	/* Without off, shadow mode (by its own sources) is not off either. */
	if (check_automation)
		return e->off ? strcmp(automation, "off") == 0 :
		    strcmp(automation, "auto") == 0 ||
		    strcmp(automation, "shadow") == 0;
	return true;
}

const char *
ctl_shadow_by(const json_t *svc)
{
	const char	*by;

	if (strcmp(ctl_json_str(svc, "automation"), "shadow") != 0)
		return NULL;
	by = json_string_value(json_object_get(svc, "shadow_by"));
	return by != NULL && by[0] != '\0' ? by : "a shadow marker or setting";
}

const char *
ctl_off_not_by_marker(const json_t *svc)
{
	const json_t	*markers = json_object_get(svc, "markers");
	const json_t	*m;
	const char	*by;
	size_t		 i;

	if (!json_is_array(markers) ||
	    strcmp(ctl_json_str(svc, "automation"), "off") != 0)
		return NULL;
	json_array_foreach(markers, i, m)
		if (strcmp(ctl_json_str(m, "kind"), "off") == 0)
			return NULL;
	by = json_string_value(json_object_get(svc, "automation_off_by"));
	return by != NULL && by[0] != '\0' ? by : "a setting of lbagent's";
}
