/* log_limited: one line per interval, then how many were dropped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "lbagent/sys/log.h"
#include "testutil.h"

/* Runs with stderr in a file; returns what was written there. */
static char *
stderr_text(FILE *fp)
{
	static char	buf[65536];
	size_t		n;

	fflush(stderr);
	rewind(fp);
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	return buf;
}

static size_t
count_lines(const char *s)
{
	size_t	n = 0;

	for (; *s != '\0'; s++)
		n += *s == '\n';
	return n;
}

START_TEST(limited_drops_and_counts)
{
	struct log_limit	 quiet = LOG_LIMIT_INIT(3600 * 1000);
	struct log_limit	 brief = LOG_LIMIT_INIT(20);
	FILE			*fp = tmpfile();
	unsigned long		 dropped = 0;
	char			 want[64], *text;
	int			 i;

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_ne(dup2(fileno(fp), STDERR_FILENO), -1);

	/* An hour's interval: the first line goes out, the rest do not. */
	ck_assert(log_limited(&quiet, LOG_WARNING, "accept: %s", "flood"));
	for (i = 0; i < 1000; i++)
		ck_assert(!log_limited(&quiet, LOG_WARNING, "accept: %s",
		    "flood"));
	text = stderr_text(fp);
	ck_assert_uint_eq(count_lines(text), 1);
	ck_assert_ptr_nonnull(strstr(text, "warning: accept: flood\n"));

	/* A short one: the next line that goes out says how many did not. */
	ck_assert(log_limited(&brief, LOG_ERR, "evict %d", 1));
	while (!log_limited(&brief, LOG_ERR, "evict %d", 2))
		dropped++;
	text = stderr_text(fp);
	ck_assert_uint_eq(count_lines(text), 3);
	snprintf(want, sizeof(want), "error: evict 2 (repeated %lu times)\n",
	    dropped);
	if (dropped == 0)
		snprintf(want, sizeof(want), "error: evict 2\n");
	ck_assert_ptr_nonnull(strstr(text, want));
	ck_assert_uint_eq(brief.dropped, 0);
	fclose(fp);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("log");
	TCase	*tc = tcase_create("log");

	tcase_add_test(tc, limited_drops_and_counts);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
