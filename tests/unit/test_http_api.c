/* The HTTP API's pure parts: the token comparison. */
#include <string.h>

#include "lbagent/http_api.h"
#include "testutil.h"

START_TEST(token_equal)
{
	ck_assert(http_token_equal("abc", 3, "abc", 3));
	ck_assert(!http_token_equal("abd", 3, "abc", 3));
	ck_assert(!http_token_equal("ab", 2, "abc", 3));
	ck_assert(!http_token_equal("abcd", 4, "abc", 3));
	ck_assert(!http_token_equal("", 0, "abc", 3));
	/* No token configured: nothing matches, not even nothing. */
	ck_assert(!http_token_equal("", 0, "", 0));
	ck_assert(!http_token_equal("x", 1, "", 0));
	/* A NUL inside does not end the comparison early. */
	ck_assert(!http_token_equal("a\0c", 3, "a\0d", 3));
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("http_api");
	TCase	*tc = tcase_create("http_api");

	tcase_add_test(tc, token_equal);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
