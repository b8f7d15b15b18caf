/*
 * The marker file's format (old and new forms, garbage, oversize, bad
 * dates) and when a marker with an end ends, on a fake clock.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lbagent/core/marker.h"
#include "testutil.h"

#define T0	1796181600000LL		/* 2026-12-02T03:20:00Z */

static void
parse(struct marker *m, const char *s)
{
	memset(m, 0, sizeof(*m));
	m->present = true;
	marker_parse(m, MARKER_DRAIN, s, strlen(s), false);
}

START_TEST(times)
{
	int64_t		 ms;
	const char	*why;
	char		 buf[MARKER_TIME_LEN + 1];

	ck_assert_int_eq(marker_time_parse("2026-12-02T03:20:00Z", 20, &ms,
	    &why), 0);
	ck_assert_int_eq(ms, T0);
	marker_time_format(ms, buf);
	ck_assert_str_eq(buf, "2026-12-02T03:20:00Z");
	ck_assert_int_eq(marker_time_parse("2026-12-02T04:20+01:00", 22, &ms,
	    &why), 0);
	ck_assert_int_eq(ms, T0);
	ck_assert_int_eq(marker_time_parse("2026-12-01T22:20:00-0500", 24, &ms,
	    &why), 0);
	ck_assert_int_eq(ms, T0);
	ck_assert_int_eq(marker_time_parse("2026-12-02t03:20:00.250z", 24, &ms,
	    &why), 0);
	ck_assert_int_eq(ms, T0 + 250);
	ck_assert_int_eq(marker_time_parse("2024-02-29T00:00:00Z", 20, &ms,
	    &why), 0);
	marker_time_format(ms, buf);
	ck_assert_str_eq(buf, "2024-02-29T00:00:00Z");
	ck_assert_int_eq(marker_time_parse("1970-01-01T00:00Z", 17, &ms,
	    &why), 0);
	ck_assert_int_eq(ms, 0);
}
END_TEST

START_TEST(bad_times)
{
	static const char *const bad[] = {
		"", "2026", "2026-12-02", "2026-12-02T03:20",	/* no zone */
		"2026-12-02 03:20Z", "2026-13-02T03:20Z", "2026-02-29T00:00Z",
		"2026-12-32T00:00Z", "2026-12-02T24:00Z", "2026-12-02T03:60Z",
		"1969-12-31T23:59Z", "2026-12-02T03:20:00Zjunk",
		"2026-12-02T03:20:00.Z", "2026-12-02T03:20+1", "+2026-12-02T03Z",
		"tomorrow", "2026-12-02T03:20:00+01:00:00",
	};
	int64_t		 ms;
	const char	*why;
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(marker_time_parse(bad[i], strlen(bad[i]), &ms,
		    &why) == -1, "%s read as a time", bad[i]);
	marker_time_parse("2026-12-02T03:20", 16, &ms, &why);
	ck_assert_ptr_nonnull(strstr(why, "zone"));
}
END_TEST

/* touch, echo: what markers were before they had an end. */
START_TEST(old_form)
{
	struct marker	m;

	parse(&m, "");
	ck_assert_str_eq(m.reason, "drain marker");
	ck_assert(!m.has_until && !m.has_since);
	ck_assert_str_eq(m.owner, "");
	ck_assert_str_eq(m.note, "");
	parse(&m, "kernel upgrade\n");
	ck_assert_str_eq(m.reason, "kernel upgrade");
	ck_assert(!m.has_until);
	/* Free text after the reason is the operator's, not ours. */
	parse(&m, "kernel upgrade\nby alice, back at noon\n\nticket 42\n");
	ck_assert_str_eq(m.reason, "kernel upgrade");
	ck_assert(!m.has_until);
	ck_assert_str_eq(m.note, "");
}
END_TEST

START_TEST(new_form)
{
	struct marker	m;
	char		buf[MARKER_FILE_MAX];
	int		n;

	n = marker_format(buf, sizeof(buf), "kernel upgrade", "alice", "web1",
	    T0, true, T0 + 7200000);
	ck_assert_int_gt(n, 0);
	ck_assert_str_eq(buf, "kernel upgrade\nowner: alice\nhost: web1\n"
	    "since: 2026-12-02T03:20:00Z\nuntil: 2026-12-02T05:20:00Z\n");
	parse(&m, buf);
	ck_assert_str_eq(m.reason, "kernel upgrade");
	ck_assert_str_eq(m.owner, "alice");
	ck_assert_str_eq(m.host, "web1");
	ck_assert(m.has_since && m.since_wall_ms == T0);
	ck_assert(m.has_until && m.until_wall_ms == T0 + 7200000);
	ck_assert_str_eq(m.note, "");
	/* An empty reason line: the default reason, the end still read. */
	parse(&m, "\r\nuntil:2026-12-02T05:20:00Z\r\n");
	ck_assert_str_eq(m.reason, "drain marker");
	ck_assert(m.has_until && m.until_wall_ms == T0 + 7200000);
	/* Without until: no end, as before. */
	ck_assert_int_gt(marker_format(buf, sizeof(buf), NULL, "bob", "h", T0,
	    false, 0), 0);
	parse(&m, buf);
	ck_assert(!m.has_until);
	ck_assert_str_eq(m.owner, "bob");
	ck_assert_int_eq(marker_format(buf, 20, "x", "alice", "web1", T0,
	    true, T0), -1);
}
END_TEST

START_TEST(garbage)
{
	struct marker	m;
	char		bin[300];
	size_t		i;

	/* A bad end is no end: the operator's state is kept, and said. */
	parse(&m, "x\nuntil: tomorrow\n");
	ck_assert(!m.has_until);
	ck_assert_str_eq(m.note, "line 2: until: expected an ISO 8601 time "
	    "such as 2026-12-02T03:00:00Z");
	parse(&m, "x\nuntil: 2026-02-30T00:00Z\n");
	ck_assert(!m.has_until);
	ck_assert_ptr_nonnull(strstr(m.note, "exists"));
	parse(&m, "x\nuntil: 2026-12-02T03:20\n");
	ck_assert(!m.has_until);
	ck_assert_ptr_nonnull(strstr(m.note, "zone"));
	/* Twice: the first counts. */
	parse(&m, "x\nuntil: 2026-12-02T03:20Z\nuntil: 2027-01-01T00:00Z\n");
	ck_assert(m.has_until && m.until_wall_ms == T0);
	ck_assert_str_eq(m.note, "line 3: until: given twice, the first counts");
	/* Unknown keys and keys in capitals are free text. */
	parse(&m, "x\nUntil: 2026-12-02T03:20Z\nuntill: 2026-12-02T03:20Z\n");
	ck_assert(!m.has_until);
	/* Control bytes and non-ASCII never reach a log or JSON. */
	parse(&m, "x\nowner: al\x1b[31mice\xc3\xa9\nhost: \x01web\n");
	ck_assert_str_eq(m.owner, "al?[31mice??");
	ck_assert_str_eq(m.host, "?web");
	for (i = 0; i < sizeof(bin); i++)
		bin[i] = (char)(i * 37 + 11);
	memset(&m, 0, sizeof(m));
	marker_parse(&m, MARKER_MAINT, bin, sizeof(bin), false);
	ck_assert(!m.has_until);
	ck_assert_uint_le(strlen(m.reason), REASON_MAX);
}
END_TEST

START_TEST(oversize)
{
	struct marker	m;
	char		buf[MARKER_FILE_MAX + 400];
	int		n;

	/* An owner longer than its field is cut, and said. */
	memset(buf, 0, sizeof(buf));
	n = snprintf(buf, sizeof(buf), "x\nowner: ");
	memset(buf + n, 'o', 200);
	parse(&m, buf);
	ck_assert_uint_eq(strlen(m.owner), MARKER_OWNER_MAX);
	ck_assert_str_eq(m.note, "line 2: owner: too long, cut");
	/* An end cut by the read limit is not half read: no end. */
	memset(buf, 0, sizeof(buf));
	n = snprintf(buf, sizeof(buf), "x\n");
	memset(buf + n, '#', MARKER_FILE_MAX - 20 - n);
	n = MARKER_FILE_MAX - 20;
	buf[n - 1] = '\n';
	snprintf(buf + n, sizeof(buf) - (size_t)n,
	    "until: 2026-12-02T03:20:00Z\n");
	memset(&m, 0, sizeof(m));
	marker_parse(&m, MARKER_DRAIN, buf, MARKER_FILE_MAX, true);
	ck_assert(!m.has_until);
	ck_assert_ptr_nonnull(strstr(m.note, "longer than"));
	/* Whole within the limit, the end counts. */
	memset(&m, 0, sizeof(m));
	marker_parse(&m, MARKER_DRAIN, buf, strlen(buf), false);
	ck_assert(m.has_until);
}
END_TEST

/* A marker read at now/wall, following old (the read before). */
static bool
read_at(struct marker *old, const char *content, int64_t now, int64_t wall)
{
	struct marker	m;
	bool		ended;

	parse(&m, content);
	ended = marker_track(old, &m, now, wall);
	*old = m;
	return ended;
}

#define UNTIL_T0_PLUS_2H	"x\nuntil: 2026-12-02T05:20:00Z\n"

START_TEST(ends_on_time)
{
	struct marker	m;
	int64_t		now = 5000;

	memset(&m, 0, sizeof(m));
	ck_assert(!read_at(&m, UNTIL_T0_PLUS_2H, now, T0));
	ck_assert(m.present && !m.expired);
	ck_assert(!read_at(&m, UNTIL_T0_PLUS_2H, now + 7199999,
	    T0 + 7199999));
	ck_assert(m.present);
	ck_assert(read_at(&m, UNTIL_T0_PLUS_2H, now + 7200000, T0 + 7200000));
	ck_assert(!m.present && m.expired);
	/* Read again (the rename failed): ended, but not anew. */
	ck_assert(!read_at(&m, UNTIL_T0_PLUS_2H, now + 7200250,
	    T0 + 7200250));
	ck_assert(!m.present && m.expired);
	/* A read that proved nothing keeps the entry: still ended, not anew. */
	{
		struct marker kept = m;

		ck_assert(!marker_track(&m, &kept, now + 7200300, T0 + 7200300));
		ck_assert(!kept.present && kept.expired);
	}
	/* Set again with another end: present again. */
	ck_assert(!read_at(&m, "x\nuntil: 2026-12-02T06:20:00Z\n",
	    now + 7200500, T0 + 7200500));
	ck_assert(m.present && !m.expired);
	/* Without an end, never. */
	ck_assert(!read_at(&m, "x\n", now + 999999999, T0 + 999999999));
	ck_assert(m.present && !m.expired);
}
END_TEST

/* The wall clock set forward an hour: the marker still lasts its 2 h. */
START_TEST(clock_forward_never_ends_early)
{
	struct marker	m;
	int64_t		now = 0, jump = 3600000;

	memset(&m, 0, sizeof(m));
	read_at(&m, UNTIL_T0_PLUS_2H, now, T0);
	ck_assert(!read_at(&m, UNTIL_T0_PLUS_2H, now + 3600000,
	    T0 + 3600000 + jump));
	/* The wall clock says past the end; only 1.5 h went by. */
	ck_assert(!read_at(&m, UNTIL_T0_PLUS_2H, now + 5400000,
	    T0 + 5400000 + jump));
	ck_assert(m.present);
	ck_assert(read_at(&m, UNTIL_T0_PLUS_2H, now + 7200000,
	    T0 + 7200000 + jump));
}
END_TEST

/* Set back an hour: the marker ends an hour later (kept, not dropped). */
START_TEST(clock_back_ends_later_by_the_jump)
{
	struct marker	m;
	int64_t		now = 0, jump = -3600000;

	memset(&m, 0, sizeof(m));
	read_at(&m, UNTIL_T0_PLUS_2H, now, T0);
	ck_assert(!read_at(&m, UNTIL_T0_PLUS_2H, now + 7200000,
	    T0 + 7200000 + jump));
	ck_assert(!read_at(&m, UNTIL_T0_PLUS_2H, now + 10799999,
	    T0 + 10799999 + jump));
	ck_assert(read_at(&m, UNTIL_T0_PLUS_2H, now + 10800000,
	    T0 + 10800000 + jump));
}
END_TEST

/*
 * A restart forgets when the end was first seen: the new lbagent counts
 * from its own first read, so a clock that jumped at the restart ends
 * the marker early by the jump at most; one past its end by the wall
 * clock at the first read ends at once.
 */
START_TEST(restart)
{
	struct marker	m;

	memset(&m, 0, sizeof(m));
	ck_assert(!read_at(&m, UNTIL_T0_PLUS_2H, 100, T0 + 3600000));
	ck_assert(!read_at(&m, UNTIL_T0_PLUS_2H, 100 + 3599999,
	    T0 + 7199999));
	ck_assert(read_at(&m, UNTIL_T0_PLUS_2H, 100 + 3600000, T0 + 7200000));
	memset(&m, 0, sizeof(m));
	ck_assert(read_at(&m, UNTIL_T0_PLUS_2H, 100, T0 + 7200001));
	ck_assert(!m.present && m.expired);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("marker_format");
	TCase	*tc = tcase_create("marker_format");

	tcase_add_test(tc, times);
	tcase_add_test(tc, bad_times);
	tcase_add_test(tc, old_form);
	tcase_add_test(tc, new_form);
	tcase_add_test(tc, garbage);
	tcase_add_test(tc, oversize);
	tcase_add_test(tc, ends_on_time);
	tcase_add_test(tc, clock_forward_never_ends_early);
	tcase_add_test(tc, clock_back_ends_later_by_the_jump);
	tcase_add_test(tc, restart);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
