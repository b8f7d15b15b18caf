/* The HTTP API's pure parts: the token comparison. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/daemon/http_api.h"
#include "testutil.h"

START_TEST(token_equal)
{
	ck_assert(http_api_token_equal("abc", 3, "abc", 3));
	ck_assert(!http_api_token_equal("abd", 3, "abc", 3));
	ck_assert(!http_api_token_equal("ab", 2, "abc", 3));
	ck_assert(!http_api_token_equal("abcd", 4, "abc", 3));
	ck_assert(!http_api_token_equal("", 0, "abc", 3));
	/* No token configured: nothing matches, not even nothing. */
	ck_assert(!http_api_token_equal("", 0, "", 0));
	ck_assert(!http_api_token_equal("x", 1, "", 0));
	/* A NUL inside does not end the comparison early. */
	ck_assert(!http_api_token_equal("a\0c", 3, "a\0d", 3));
}
END_TEST

/* The daemon and lbagentctl read a token file through this one function. */
START_TEST(token_read)
{
	char		*dir = tu_tmpdir(), *path, buf[HTTP_TOKEN_MAX + 1];
	char		 big[HTTP_TOKEN_MAX + 3];
	const char	*why = NULL;

	path = tu_write(dir, "t", "  s3cret \r\nsecond line\n", -1);
	ck_assert_int_eq(http_api_token_read(path, buf, &why), 6);
	ck_assert_str_eq(buf, "s3cret");
	free(path);
	path = tu_write(dir, "e", " \t\n", -1);
	ck_assert_int_eq(http_api_token_read(path, buf, &why), -1);
	ck_assert_str_eq(why, "empty");
	free(path);
	memset(big, 'x', sizeof(big) - 2);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	path = tu_write(dir, "b", big, -1);
	ck_assert_int_eq(http_api_token_read(path, buf, &why), -1);
	ck_assert_str_eq(why, "longer than 512 bytes");
	free(path);
	big[HTTP_TOKEN_MAX] = '\n';
	path = tu_write(dir, "m", big, -1);
	ck_assert_int_eq(http_api_token_read(path, buf, &why), HTTP_TOKEN_MAX);
	free(path);
	ck_assert_int_eq(http_api_token_read("/nonexistent/token", buf, &why),
	    -1);
	ck_assert_str_eq(why, strerror(ENOENT));
	tu_rmtree(dir);
	free(dir);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("http_api");
	TCase	*tc = tcase_create("http_api");

	tcase_add_test(tc, token_equal);
	tcase_add_test(tc, token_read);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
