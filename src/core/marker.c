/*
 * The markers' names (the files' names in state_dir, and the words logs
 * use), their file format, and when a marker with an end has ended.
 */
#include <stdio.h>
#include <string.h>

#include "lbagent/core/marker.h"

static const char *const marker_names[MARKER_COUNT] = {
	[MARKER_MAINT] = "maint",
	[MARKER_DRAIN] = "drain",
	[MARKER_OFF] = "off",
	[MARKER_SHADOW] = "shadow",
};

const char *
marker_name(enum marker_kind kind)
{
	return marker_names[kind];
}

static bool
digits(const char *s, size_t len, size_t at, size_t n, int *v)
{
	size_t	i;

	if (at + n > len)
		return false;
	*v = 0;
	for (i = at; i < at + n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		*v = *v * 10 + (s[i] - '0');
	}
	return true;
}

/* Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t		era, yoe, doy, doe;

	y -= m <= 2;
	era = y / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int
month_days(int y, int m)
{
	static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31,
	    30, 31 };
	bool	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : days[m - 1];
}

int
marker_time_parse(const char *s, size_t len, int64_t *wall_ms,
    const char **why)
{
	int	y, mo, d, h, mi, sec = 0, ms = 0, zh = 0, zm = 0, sign = 0, v;
	size_t	at;

	*why = "expected an ISO 8601 time such as 2026-12-02T03:00:00Z";
	if (!digits(s, len, 0, 4, &y) || len < 5 || s[4] != '-' ||
	    !digits(s, len, 5, 2, &mo) || len < 8 || s[7] != '-' ||
	    !digits(s, len, 8, 2, &d) || len < 11 ||
	    (s[10] != 'T' && s[10] != 't') || !digits(s, len, 11, 2, &h) ||
	    len < 14 || s[13] != ':' || !digits(s, len, 14, 2, &mi))
		return -1;
	at = 16;
	if (at < len && s[at] == ':') {
		if (!digits(s, len, at + 1, 2, &sec))
			return -1;
		at += 3;
		if (at < len && (s[at] == '.' || s[at] == ',')) {
			size_t	n = 0;

			for (at++; at < len && s[at] >= '0' && s[at] <= '9';
			    at++, n++)
				if (n < 3)
					ms = ms * 10 + (s[at] - '0');
			if (n == 0)
				return -1;
			for (; n < 3; n++)
				ms *= 10;
		}
	}
	if (at < len && (s[at] == 'Z' || s[at] == 'z'))
		at++;
	else if (at < len && (s[at] == '+' || s[at] == '-')) {
		sign = s[at] == '+' ? 1 : -1;
		if (!digits(s, len, at + 1, 2, &zh))
			return -1;
		at += 3;
		if (at < len && s[at] == ':')
			at++;
		if (at < len) {
			if (!digits(s, len, at, 2, &zm))
				return -1;
			at += 2;
		}
	} else {
		*why = "a time zone is needed: Z (UTC) or an offset such as "
		    "+01:00";
		return -1;
	}
	if (at != len)
		return -1;
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo) ||
	    h > 23 || mi > 59 || sec > 60 || zh > 23 || zm > 59) {
		*why = "not a date and time that exists";
		return -1;
	}
	if (sec == 60)		/* a leap second: the next one */
		sec = 59, ms = 999;
	v = sign * (zh * 60 + zm);
	*wall_ms = ((days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 +
	    sec) - (int64_t)v * 60) * 1000 + ms;
	if (*wall_ms < 0) {
		*why = "before 1970";
		return -1;
	}
	return 0;
}

void
marker_time_format(int64_t wall_ms, char buf[MARKER_TIME_LEN + 1])
{
	int64_t	s = wall_ms < 0 ? 0 : wall_ms / 1000;
	int64_t	z = s / 86400 + 719468, era, doe, yoe, doy, mp, y, m, d;
	int	sod = (int)(s % 86400);

	/* The inverse of days_from_civil(). */
	era = z / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y += m <= 2;
	if (y > 9999)
		y = 9999;
	if (snprintf(buf, MARKER_TIME_LEN + 1, "%04d-%02d-%02dT%02d:%02d:%02dZ",
	    (int)y, (int)m, (int)d, sod / 3600, sod / 60 % 60, sod % 60) >
	    MARKER_TIME_LEN)
		buf[MARKER_TIME_LEN] = '\0';	/* never: y is 1970 to 9999 */
}

/* The first thing not understood goes to the note; later ones are lost. */
static void
note(struct marker *m, size_t line, const char *what, const char *key)
{
	int	n;

	/* Cut when long: a note says what, the file has the rest. */
	if (m->note[0] == '\0' && (n = snprintf(m->note, sizeof(m->note),
	    "line %zu: %s%s", line, key, what)) >= (int)sizeof(m->note))
		m->note[sizeof(m->note) - 1] = '\0';
}

/* A `key: value` line; false for anything else (free text). */
static bool
key_value(const char *s, size_t len, size_t *klen, const char **val,
    size_t *vlen)
{
	size_t	i;

	for (i = 0; i < len && ((s[i] >= 'a' && s[i] <= 'z') || s[i] == '_');
	    i++)
		;
	if (i == 0 || i >= len || s[i] != ':')
		return false;
	*klen = i;
	for (i++; i < len && (s[i] == ' ' || s[i] == '\t'); i++)
		;
	*val = s + i;
	*vlen = len - i;
	while (*vlen > 0 && ((*val)[*vlen - 1] == ' ' ||
	    (*val)[*vlen - 1] == '\t'))
		(*vlen)--;
	return true;
}

static bool
is_key(const char *s, size_t len, const char *key)
{
	return strlen(key) == len && memcmp(s, key, len) == 0;
}

/* A text value: printable, cut at max (noted), given once. */
static void
text_value(struct marker *m, size_t line, const char *key, char *dst,
    size_t max, const char *val, size_t vlen)
{
	if (dst[0] != '\0') {
		note(m, line, ": given twice, the first counts", key);
		return;
	}
	if (text_line(dst, max, val, vlen) < vlen)
		note(m, line, ": too long, cut", key);
}

static void
time_value(struct marker *m, size_t line, const char *key, bool *has,
    int64_t *ms, const char *val, size_t vlen)
{
	const char	*why;
	char		 buf[MARKER_NOTE_MAX + 1];

	if (*has) {
		note(m, line, ": given twice, the first counts", key);
		return;
	}
	if (marker_time_parse(val, vlen, ms, &why) == 0) {
		*has = true;
		return;
	}
	snprintf(buf, sizeof(buf), ": %s", why);
	note(m, line, buf, key);
}

void
marker_parse(struct marker *m, enum marker_kind kind, const char *buf,
    size_t len, bool truncated)
{
	const char	*val;
	size_t		 at, end, line = 1, klen, vlen;

	m->owner[0] = m->host[0] = m->note[0] = '\0';
	m->has_since = m->has_until = false;
	m->since_wall_ms = m->until_wall_ms = 0;
	if (text_reason(m->reason, buf, len) == 0)
		snprintf(m->reason, sizeof(m->reason), "%s marker",
		    marker_name(kind));
	for (at = 0; at < len && buf[at] != '\n'; at++)
		;
	/* A line cut by the read limit is not read: half a date is none. */
	if (truncated)
		while (len > at && buf[len - 1] != '\n')
			len--;
	for (at++; at < len; at = end + 1) {
		for (end = at; end < len && buf[end] != '\n'; end++)
			;
		line++;
		vlen = end - at;
		if (vlen > 0 && buf[end - 1] == '\r')
			vlen--;
		if (!key_value(buf + at, vlen, &klen, &val, &vlen))
			continue;	/* free text after the reason */
		if (is_key(buf + at, klen, "owner"))
			text_value(m, line, "owner", m->owner, MARKER_OWNER_MAX,
			    val, vlen);
		else if (is_key(buf + at, klen, "host"))
			text_value(m, line, "host", m->host, MARKER_HOST_MAX,
			    val, vlen);
		else if (is_key(buf + at, klen, "since"))
			time_value(m, line, "since", &m->has_since,
			    &m->since_wall_ms, val, vlen);
		else if (is_key(buf + at, klen, "until"))
			time_value(m, line, "until", &m->has_until,
			    &m->until_wall_ms, val, vlen);
	}
	if (truncated && m->note[0] == '\0')
		snprintf(m->note, sizeof(m->note), "longer than %d bytes: the "
		    "rest is not read", MARKER_FILE_MAX);
}

int
marker_format(char *buf, size_t size, const char *reason, const char *owner,
    const char *host, int64_t since_wall_ms, bool has_until,
    int64_t until_wall_ms)
{
	char	since[MARKER_TIME_LEN + 1], until[MARKER_TIME_LEN + 1];
	int	n;

	marker_time_format(since_wall_ms, since);
	marker_time_format(until_wall_ms, until);
	n = snprintf(buf, size, "%s\nowner: %s\nhost: %s\nsince: %s\n%s%s%s",
	    reason != NULL ? reason : "", owner, host, since,
	    has_until ? "until: " : "", has_until ? until : "",
	    has_until ? "\n" : "");
	return n < 0 || (size_t)n >= size ? -1 : n;
}

bool
marker_ended(const struct marker *m, int64_t now_ms, int64_t wall_ms)
{
	if (!m->has_until || wall_ms < m->until_wall_ms)
		return false;
	return now_ms - m->seen_now_ms >= m->until_wall_ms - m->seen_wall_ms;
}

bool
marker_track(const struct marker *old, struct marker *m, int64_t now_ms,
    int64_t wall_ms)
{
	bool	same;

	/* Kept from before (this read proved nothing): as it was. */
	if (!m->present && m->expired)
		return false;
	if (!m->present || m->unreadable || !m->has_until) {
		m->expired = false;
		return false;
	}
	/* The same end, read again: it was first seen back then. */
	same = (old->present || old->expired) && old->has_until &&
	    old->until_wall_ms == m->until_wall_ms;
	m->seen_now_ms = same ? old->seen_now_ms : now_ms;
	m->seen_wall_ms = same ? old->seen_wall_ms : wall_ms;
	m->expired = marker_ended(m, now_ms, wall_ms);
	if (!m->expired)
		return false;
	m->present = false;
	return !(same && old->expired);
}
