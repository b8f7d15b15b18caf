/* Reasons and escaping of untrusted bytes. */
#include <string.h>

#include "lbagent/core/text.h"
#include "testutil.h"

START_TEST(reason_first_line_sanitized)
{
	char	r[REASON_MAX + 1];

	ck_assert_uint_eq(text_reason(r, "kernel upgrade\nsecond", 21), 14);
	ck_assert_str_eq(r, "kernel upgrade");
	text_reason(r, "  \tpadded\t  \r\n", 14);
	ck_assert_str_eq(r, "padded");
	text_reason(r, "a\x01" "b\x7f" "c\xff" "d", 7);
	ck_assert_str_eq(r, "a?b?c?d");
	text_reason(r, "tab\tinside", 10);
	ck_assert_str_eq(r, "tab inside");
	ck_assert_uint_eq(text_reason(r, "", 0), 0);
	ck_assert_str_eq(r, "");
	ck_assert_uint_eq(text_reason(r, "\n\nlater", 7), 0);
	/* A NUL byte is not the end of the reason: it is replaced. */
	text_reason(r, "a\0b", 3);
	ck_assert_str_eq(r, "a?b");
}
END_TEST

START_TEST(reason_cut_at_limit)
{
	char	src[300], r[REASON_MAX + 1];

	memset(src, 'x', sizeof(src));
	ck_assert_uint_eq(text_reason(r, src, sizeof(src)), REASON_MAX);
	ck_assert_uint_eq(strlen(r), REASON_MAX);
}
END_TEST

START_TEST(escape_round_trip)
{
	char	all[256], esc[4 * 256 + 1], back[256];
	long	n;
	int	i;

	for (i = 0; i < 256; i++)
		all[i] = (char)i;
	text_escape(esc, all, sizeof(all));
	for (i = 0; esc[i] != '\0'; i++)
		ck_assert(esc[i] >= 0x20 && esc[i] < 0x7f && esc[i] != '"');
	n = text_unescape(back, sizeof(back), esc);
	ck_assert_int_eq(n, 256);
	ck_assert(memcmp(all, back, 256) == 0);

	text_escape(esc, "web\\x\n", 6);
	ck_assert_str_eq(esc, "web\\\\x\\x0a");
}
END_TEST

START_TEST(unescape_rejects)
{
	char	out[8];

	ck_assert_int_eq(text_unescape(out, sizeof(out), "\\q"), -1);
	ck_assert_int_eq(text_unescape(out, sizeof(out), "\\x4"), -1);
	ck_assert_int_eq(text_unescape(out, sizeof(out), "\\xZZ"), -1);
	ck_assert_int_eq(text_unescape(out, sizeof(out), "\\"), -1);
	ck_assert_int_eq(text_unescape(out, sizeof(out), "\t"), -1);
	ck_assert_int_eq(text_unescape(out, sizeof(out), "123456789"), -1);
	ck_assert_int_eq(text_unescape(out, sizeof(out), "12345678"), 8);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("text");
	TCase	*tc = tcase_create("text");

	tcase_add_test(tc, reason_first_line_sanitized);
	tcase_add_test(tc, reason_cut_at_limit);
	tcase_add_test(tc, escape_round_trip);
	tcase_add_test(tc, unescape_rejects);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
