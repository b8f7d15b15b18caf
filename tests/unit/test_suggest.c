/* "Did you mean": the edit distance and the nearest known word. */
#include <stdint.h>
#include <string.h>

#include "lbagent/core/suggest.h"
#include "testutil.h"

START_TEST(distances)
{
	ck_assert_uint_eq(suggest_distance("", ""), 0);
	ck_assert_uint_eq(suggest_distance("interval", "interval"), 0);
	ck_assert_uint_eq(suggest_distance("intervall", "interval"), 1);
	ck_assert_uint_eq(suggest_distance("intreval", "interval"), 1);
	ck_assert_uint_eq(suggest_distance("timout", "timeout"), 1);
	ck_assert_uint_eq(suggest_distance("kitten", "sitting"), 3);
	ck_assert_uint_eq(suggest_distance("", "abc"), 3);
	ck_assert_uint_eq(suggest_distance("abc", ""), 3);
	ck_assert_uint_eq(suggest_distance("ca", "abc"), 3);	/* OSA, not Damerau */
}
END_TEST

START_TEST(nearest)
{
	static const char *const keys[] = { "interval", "timeout", "agents",
	    "alone_grace", "tcp", "http" };
	char	long_word[SUGGEST_LEN_MAX + 2];

	ck_assert_str_eq(suggest_nearest("intervall", keys, 6), "interval");
	ck_assert_str_eq(suggest_nearest("timout", keys, 6), "timeout");
	ck_assert_str_eq(suggest_nearest("agent", keys, 6), "agents");
	ck_assert_str_eq(suggest_nearest("htp", keys, 6), "http");
	ck_assert_str_eq(suggest_nearest("tpc", keys, 6), "tcp");
	/* Too far to be a typo, or not a typo at all. */
	ck_assert_ptr_null(suggest_nearest("colour", keys, 6));
	ck_assert_ptr_null(suggest_nearest("udp", keys, 6));
	ck_assert_ptr_null(suggest_nearest("interval", keys, 6));
	ck_assert_ptr_null(suggest_nearest("x", keys, 6));
	ck_assert_ptr_null(suggest_nearest("", keys, 6));
	ck_assert_ptr_null(suggest_nearest("interval", keys, 0));
	memset(long_word, 'a', sizeof(long_word) - 1);
	long_word[sizeof(long_word) - 1] = '\0';
	ck_assert_uint_eq(suggest_distance(long_word, "a"), SIZE_MAX);
	ck_assert_ptr_null(suggest_nearest(long_word, keys, 6));
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("suggest");
	TCase	*tc = tcase_create("suggest");

	tcase_add_test(tc, distances);
	tcase_add_test(tc, nearest);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
