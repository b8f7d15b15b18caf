/* Marker files: missing, empty, long, binary, unreadable, and precedence. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "lbagent/core/decision.h"
#include "lbagent/daemon/markers.h"
#include "testutil.h"

static char	*dir;

static void
setup(void)
{
	dir = tu_tmpdir();
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

START_TEST(missing)
{
	struct markers	ms;

	memset(&ms, 0, sizeof(ms));

	markers_read(dir, &ms);
	ck_assert(!ms.m[MARKER_MAINT].present);
	ck_assert(!ms.m[MARKER_DRAIN].present);
	/* A state_dir that does not exist holds no markers. */
	markers_read("/nonexistent/dir", &ms);
	ck_assert(!ms.m[MARKER_DRAIN].present);
}
END_TEST

START_TEST(empty_gives_default_reason)
{
	struct markers	ms;

	memset(&ms, 0, sizeof(ms));

	free(tu_write(dir, "drain", "", -1));
	free(tu_write(dir, "maint", "\n\n", -1));
	markers_read(dir, &ms);
	ck_assert(ms.m[MARKER_DRAIN].present);
	ck_assert(!ms.m[MARKER_DRAIN].unreadable);
	ck_assert_str_eq(ms.m[MARKER_DRAIN].reason, "drain marker");
	ck_assert_str_eq(ms.m[MARKER_MAINT].reason, "maint marker");
}
END_TEST

START_TEST(first_line_is_reason)
{
	struct markers	ms;

	memset(&ms, 0, sizeof(ms));

	free(tu_write(dir, "drain", "maintenance: kernel upgrade\nby alice\n", -1));
	markers_read(dir, &ms);
	ck_assert_str_eq(ms.m[MARKER_DRAIN].reason, "maintenance: kernel upgrade");
}
END_TEST

START_TEST(long_and_binary)
{
	struct markers	ms;

	memset(&ms, 0, sizeof(ms));
	char		big[5000];

	memset(big, 'y', sizeof(big));
	free(tu_write(dir, "drain", big, sizeof(big)));
	free(tu_write(dir, "maint", "\x01\x02zap\xff\x00ok", 9));
	markers_read(dir, &ms);
	ck_assert_uint_eq(strlen(ms.m[MARKER_DRAIN].reason), REASON_MAX);
	ck_assert_str_eq(ms.m[MARKER_MAINT].reason, "??zap??ok");
}
END_TEST

START_TEST(unreadable_counts_as_present)
{
	struct markers	ms;

	memset(&ms, 0, sizeof(ms));
	char		path[1024];

	/* A directory cannot be read as a file, even by root. */
	snprintf(path, sizeof(path), "%s/maint", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	/* A FIFO must neither block the reader nor be ignored. */
	snprintf(path, sizeof(path), "%s/drain", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	markers_read(dir, &ms);
	ck_assert(ms.m[MARKER_MAINT].present);
	ck_assert(ms.m[MARKER_MAINT].unreadable);
	ck_assert_str_eq(ms.m[MARKER_MAINT].reason, "maint marker");
	ck_assert(ms.m[MARKER_DRAIN].present);
	ck_assert(ms.m[MARKER_DRAIN].unreadable);
	ck_assert_str_eq(ms.m[MARKER_DRAIN].error, "not a regular file");
}
END_TEST

/*
 * A symbolic link is never followed: its target (a secret, lbagent's own
 * environment) must not become a public reason. It is there, so it
 * counts as present, with the default reason; dangling or not.
 */
START_TEST(symlink_is_present_and_not_read)
{
	struct markers	ms;
	char		target[1024], path[1024];
	char		*secret;

	memset(&ms, 0, sizeof(ms));
	secret = tu_write(dir, "secret", "root:SECRET-HASH:19000:0:99999\n", -1);
	snprintf(path, sizeof(path), "%s/drain", dir);
	ck_assert_int_eq(symlink(secret, path), 0);
	snprintf(target, sizeof(target), "%s/nothing-there", dir);
	snprintf(path, sizeof(path), "%s/maint", dir);
	ck_assert_int_eq(symlink(target, path), 0);
	snprintf(path, sizeof(path), "%s/off", dir);
	ck_assert_int_eq(symlink("/proc/self/environ", path), 0);
	markers_read(dir, &ms);
	ck_assert(ms.m[MARKER_DRAIN].present);
	ck_assert(ms.m[MARKER_DRAIN].unreadable);
	ck_assert_str_eq(ms.m[MARKER_DRAIN].reason, "drain marker");
	ck_assert_ptr_null(strstr(ms.m[MARKER_DRAIN].reason, "SECRET"));
	ck_assert_msg(strstr(ms.m[MARKER_DRAIN].error, "symbolic link") !=
	    NULL, "%s", ms.m[MARKER_DRAIN].error);
	/* Dangling: present all the same. */
	ck_assert(ms.m[MARKER_MAINT].present);
	ck_assert_str_eq(ms.m[MARKER_MAINT].reason, "maint marker");
	ck_assert(ms.m[MARKER_OFF].present);
	ck_assert_str_eq(ms.m[MARKER_OFF].reason, "off marker");
	free(secret);
}
END_TEST

/*
 * A service's marker directory that is a symbolic link is not read
 * through either: what is there counts as present, unread.
 */
START_TEST(symlinked_service_dir_is_not_read_through)
{
	struct markers	ms;
	char		other[1024], link[1024];

	memset(&ms, 0, sizeof(ms));
	snprintf(other, sizeof(other), "%s/elsewhere", dir);
	ck_assert_int_eq(mkdir(other, 0755), 0);
	free(tu_write(other, "drain", "SECRET-TEXT\n", -1));
	snprintf(link, sizeof(link), "%s/web", dir);
	ck_assert_int_eq(symlink(other, link), 0);
	markers_read_service(link, &ms);
	ck_assert(ms.m[MARKER_DRAIN].present);
	ck_assert(ms.m[MARKER_DRAIN].unreadable);
	ck_assert_str_eq(ms.m[MARKER_DRAIN].reason, "drain marker");
	ck_assert_msg(strstr(ms.m[MARKER_DRAIN].error, "symbolic link") !=
	    NULL, "%s", ms.m[MARKER_DRAIN].error);
	ck_assert(!ms.m[MARKER_MAINT].present);
	ck_assert(!ms.m[MARKER_OFF].present);
	/* A real directory is read as the node's is. */
	ck_assert_int_eq(unlink(link), 0);
	ck_assert_int_eq(mkdir(link, 0755), 0);
	free(tu_write(link, "maint", "web upgrade\n", -1));
	markers_read_service(link, &ms);
	ck_assert(!ms.m[MARKER_DRAIN].present);
	ck_assert(ms.m[MARKER_MAINT].present);
	ck_assert(!ms.m[MARKER_MAINT].unreadable);
	ck_assert_str_eq(ms.m[MARKER_MAINT].reason, "web upgrade");
	/* None there: no markers. */
	snprintf(link, sizeof(link), "%s/api", dir);
	markers_read_service(link, &ms);
	ck_assert(!ms.m[MARKER_MAINT].present);
	/* state_dir itself may be a link: the configured path is followed. */
	snprintf(link, sizeof(link), "%s/state-link", dir);
	ck_assert_int_eq(symlink(other, link), 0);
	markers_read(link, &ms);
	ck_assert(ms.m[MARKER_DRAIN].present);
	ck_assert(!ms.m[MARKER_DRAIN].unreadable);
	ck_assert_str_eq(ms.m[MARKER_DRAIN].reason, "SECRET-TEXT");
}
END_TEST

START_TEST(maint_wins_over_drain)
{
	struct markers	ms, own;
	struct decision	d, up, down;

	memset(&ms, 0, sizeof(ms));
	memset(&own, 0, sizeof(own));
	decision_up(&up);
	decision_up(&down);
	down.state = NODE_DOWN;
	strcpy(down.reason, "api: HTTP 503");

	markers_read(dir, &ms);
	decision_make(&ms, NULL, &up, &d);
	ck_assert_int_eq(d.state, NODE_UP);
	ck_assert_uint_eq(d.weight, 100);
	ck_assert_str_eq(d.reason, "");

	free(tu_write(dir, "drain", "draining", -1));
	markers_read(dir, &ms);
	decision_make(&ms, NULL, &up, &d);
	ck_assert_int_eq(d.state, NODE_DRAIN);
	ck_assert_str_eq(d.reason, "draining");

	free(tu_write(dir, "maint", "upgrade", -1));
	markers_read(dir, &ms);
	decision_make(&ms, NULL, &up, &d);
	ck_assert_int_eq(d.state, NODE_MAINT);
	ck_assert_str_eq(d.reason, "upgrade");

	ck_assert(!d.failing);
	/* Markers override the rules' target, and remember it was down... */
	decision_make(&ms, NULL, &down, &d);
	ck_assert_int_eq(d.state, NODE_MAINT);
	ck_assert(d.failing);
	/* ...and without markers the target stands. */
	memset(&ms, 0, sizeof(ms));
	decision_make(&ms, NULL, &down, &d);
	ck_assert_int_eq(d.state, NODE_DOWN);
	ck_assert_str_eq(d.reason, "api: HTTP 503");

	/* A service's own drain; the node's maint still wins over it. */
	own.m[MARKER_DRAIN].present = true;
	strcpy(own.m[MARKER_DRAIN].reason, "web deploy");
	decision_make(&ms, &own, &up, &d);
	ck_assert_int_eq(d.state, NODE_DRAIN);
	ck_assert_str_eq(d.reason, "web deploy");
	ms.m[MARKER_MAINT].present = true;
	strcpy(ms.m[MARKER_MAINT].reason, "node upgrade");
	decision_make(&ms, &own, &up, &d);
	ck_assert_int_eq(d.state, NODE_MAINT);
	ck_assert_str_eq(d.reason, "node upgrade");
}
END_TEST

/* Out of descriptors, a read proves nothing: what was known stays. */
START_TEST(out_of_descriptors_keeps_what_was_known)
{
	struct markers	ms;
	struct rlimit	rl;
	int		fds[64], n = 0, fd;

	memset(&ms, 0, sizeof(ms));
	free(tu_write(dir, "drain", "known reason", -1));
	markers_read(dir, &ms);
	ck_assert(ms.m[MARKER_DRAIN].present);
	free(tu_write(dir, "maint", "", -1));

	/* Each Check test runs in its own process: the limit dies with it. */
	rl.rlim_cur = rl.rlim_max = 16;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	while (n < 64 && (fd = open("/dev/null", O_RDONLY)) != -1)
		fds[n++] = fd;
	ck_assert_int_eq(errno, EMFILE);
	markers_read(dir, &ms);
	ck_assert(ms.m[MARKER_DRAIN].present);
	ck_assert(!ms.m[MARKER_DRAIN].unreadable);
	ck_assert_str_eq(ms.m[MARKER_DRAIN].reason, "known reason");
	ck_assert(!ms.m[MARKER_MAINT].present);

	while (n > 0)
		close(fds[--n]);
	markers_read(dir, &ms);
	ck_assert(ms.m[MARKER_MAINT].present);
	ck_assert(ms.m[MARKER_DRAIN].present);
}
END_TEST

static char *
slurp(const char *d, const char *name)
{
	static char	buf[256];
	char		path[4096];
	FILE		*f;
	size_t		n;

	snprintf(path, sizeof(path), "%s/%s", d, name);
	if ((f = fopen(path, "r")) == NULL)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

#define ENDED	"done\nowner: alice\nuntil: 2026-12-02T03:20:00Z\n"

/* An ended marker becomes NAME.expired, replacing an earlier one. */
START_TEST(retire_renames)
{
	struct markers	ms;
	char		err[256];

	memset(&ms, 0, sizeof(ms));
	free(tu_write(dir, "drain", ENDED, -1));
	free(tu_write(dir, "drain.expired", "an older one\n", -1));
	markers_read(dir, &ms);
	ck_assert(ms.m[MARKER_DRAIN].has_until);
	ck_assert_str_eq(ms.m[MARKER_DRAIN].owner, "alice");
	ck_assert_int_eq(markers_retire(dir, MARKER_DRAIN, &ms.m[MARKER_DRAIN],
	    err, sizeof(err)), 0);
	ck_assert_ptr_null(slurp(dir, "drain"));
	ck_assert_str_eq(slurp(dir, "drain.expired"), ENDED);
	/* Gone already: nothing to do. */
	ck_assert_int_eq(markers_retire(dir, MARKER_DRAIN, &ms.m[MARKER_DRAIN],
	    err, sizeof(err)), 0);
	markers_read(dir, &ms);
	ck_assert(!ms.m[MARKER_DRAIN].present);
}
END_TEST

/* Set anew between the read and the rename: the operator's, it stays. */
START_TEST(retire_leaves_a_new_marker)
{
	struct markers	ms;
	char		err[256];

	memset(&ms, 0, sizeof(ms));
	free(tu_write(dir, "maint", ENDED, -1));
	markers_read(dir, &ms);
	free(tu_write(dir, "maint", "again, no end\n", -1));
	ck_assert_int_eq(markers_retire(dir, MARKER_MAINT, &ms.m[MARKER_MAINT],
	    err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "changed"));
	ck_assert_str_eq(slurp(dir, "maint"), "again, no end\n");
	ck_assert_ptr_null(slurp(dir, "maint.expired"));
}
END_TEST

/* Nowhere to rename: an error to log, the file as it was. */
START_TEST(retire_read_only_dir)
{
	struct markers	ms;
	char		err[256];

	if (geteuid() == 0)
		return;		/* root writes anyway */
	memset(&ms, 0, sizeof(ms));
	free(tu_write(dir, "drain", ENDED, -1));
	markers_read(dir, &ms);
	ck_assert_int_eq(chmod(dir, 0555), 0);
	ck_assert_int_eq(markers_retire(dir, MARKER_DRAIN, &ms.m[MARKER_DRAIN],
	    err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "cannot rename"));
	ck_assert_int_eq(chmod(dir, 0755), 0);
	ck_assert_str_eq(slurp(dir, "drain"), ENDED);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("markers");
	TCase	*tc = tcase_create("markers");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, missing);
	tcase_add_test(tc, empty_gives_default_reason);
	tcase_add_test(tc, first_line_is_reason);
	tcase_add_test(tc, long_and_binary);
	tcase_add_test(tc, unreadable_counts_as_present);
	tcase_add_test(tc, symlink_is_present_and_not_read);
	tcase_add_test(tc, symlinked_service_dir_is_not_read_through);
	tcase_add_test(tc, maint_wins_over_drain);
	tcase_add_test(tc, out_of_descriptors_keeps_what_was_known);
	tcase_add_test(tc, retire_renames);
	tcase_add_test(tc, retire_leaves_a_new_marker);
	tcase_add_test(tc, retire_read_only_dir);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
