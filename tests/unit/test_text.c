/* Reasons and escaping of untrusted bytes. */
#include <stdio.h>
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

/* term(src) with flags, as a string of its own. */
static const char *
term(const char *src, size_t len, unsigned flags)
{
	static char	out[4 * 64 + 1];

	text_term(out, sizeof(out), src, len, flags);
	return out;
}

/* A terminal's danger: what no text_term output may hold. */
static void
assert_safe(const char *out, unsigned flags)
{
	const unsigned char	*p;

	for (p = (const unsigned char *)out; *p != '\0'; p++) {
		if ((flags & TEXT_TERM_LAYOUT) && (*p == '\n' || *p == '\t'))
			continue;
		ck_assert_msg(*p >= 0x20 && *p != 0x7f, "byte 0x%02x", *p);
		if (!(flags & TEXT_TERM_UTF8))
			ck_assert_msg(*p < 0x80, "byte 0x%02x", *p);
	}
}

START_TEST(term_every_byte)
{
	static const char hex[] = "0123456789abcdef";
	unsigned	flags[] = { 0, TEXT_TERM_UTF8, TEXT_TERM_LAYOUT,
			    TEXT_TERM_UTF8 | TEXT_TERM_LAYOUT |
			    TEXT_TERM_RAW_BACKSLASH };
	char		b, want[8];
	size_t		f;
	int		c;

	for (f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
		for (c = 0; c < 256; c++) {
			const char *out;

			b = (char)c;
			out = term(&b, 1, flags[f]);
			assert_safe(out, flags[f]);
			if (c == '\\')
				snprintf(want, sizeof(want), "%s",
				    flags[f] & TEXT_TERM_RAW_BACKSLASH ? "\\" :
				    "\\\\");
			else if ((c >= 0x20 && c < 0x7f) || ((c == '\n' ||
			    c == '\t') && (flags[f] & TEXT_TERM_LAYOUT)))
				snprintf(want, sizeof(want), "%c", c);
			else
				snprintf(want, sizeof(want), "\\x%c%c",
				    hex[c >> 4], hex[c & 0xf]);
			/* A lone byte from 0x80 up is never a character. */
			ck_assert_msg(strcmp(out, want) == 0, "byte 0x%02x "
			    "flags %u: \"%s\", not \"%s\"", c, flags[f], out,
			    want);
		}
	/* All 256 in a row, and NUL is not an end. */
	{
		char	all[256], out[TEXT_TERM_SIZE(256)];

		for (c = 0; c < 256; c++)
			all[c] = (char)c;
		text_term(out, sizeof(out), all, sizeof(all), TEXT_TERM_UTF8);
		assert_safe(out, TEXT_TERM_UTF8);
		ck_assert_uint_eq(strlen(out), 94 + 2 + 161 * 4);
		ck_assert(strncmp(out, "\\x00\\x01", 8) == 0);
	}
}
END_TEST

START_TEST(term_terminal_escapes)
{
	ck_assert_str_eq(term("\x1b[2Jx", 5, TEXT_TERM_UTF8), "\\x1b[2Jx");
	/* C1 CSI, as UTF-8 (U+009B) and as a raw byte. */
	ck_assert_str_eq(term("a\xc2\x9b" "2J", 5, TEXT_TERM_UTF8),
	    "a\\xc2\\x9b2J");
	ck_assert_str_eq(term("a\x9b" "2J", 4, TEXT_TERM_UTF8), "a\\x9b2J");
	ck_assert_str_eq(term("\r\b\x7f", 3, TEXT_TERM_UTF8 | TEXT_TERM_LAYOUT),
	    "\\x0d\\x08\\x7f");
	ck_assert_str_eq(term("a\tb\nc", 5, TEXT_TERM_LAYOUT), "a\tb\nc");
	ck_assert_str_eq(term("a\tb\nc", 5, 0), "a\\x09b\\x0ac");
	/* The backslash itself: "\x1b" as text reads back as it was. */
	ck_assert_str_eq(term("\\x1b", 4, 0), "\\\\x1b");
	ck_assert_str_eq(term("\\x1b", 4, TEXT_TERM_RAW_BACKSLASH), "\\x1b");
	/* Bidirectional overrides and line separators are escaped too. */
	ck_assert_str_eq(term("\xe2\x80\xae", 3, TEXT_TERM_UTF8),
	    "\\xe2\\x80\\xae");
	ck_assert_str_eq(term("\xe2\x80\xa8", 3, TEXT_TERM_UTF8),
	    "\\xe2\\x80\\xa8");
	ck_assert_str_eq(term("\xe2\x81\xa6", 3, TEXT_TERM_UTF8),
	    "\\xe2\\x81\\xa6");
}
END_TEST

START_TEST(term_utf8_boundaries)
{
	static const struct {
		const char	*in;
		int		 keep;	/* its length, or 0: escaped */
	} cases[] = {
		{ "\xc2\x80", 0 },		/* U+0080, C1 */
		{ "\xc2\x9f", 0 },		/* U+009F, C1 */
		{ "\xc2\xa0", 2 },		/* U+00A0 */
		{ "\xc3\xa9", 2 },		/* é */
		{ "\xdf\xbf", 2 },		/* U+07FF */
		{ "\xe0\xa0\x80", 3 },		/* U+0800 */
		{ "\xed\x9f\xbf", 3 },		/* U+D7FF */
		{ "\xee\x80\x80", 3 },		/* U+E000 */
		{ "\xef\xbf\xbd", 3 },		/* U+FFFD */
		{ "\xef\xbf\xbf", 3 },		/* U+FFFF */
		{ "\xf0\x90\x80\x80", 4 },	/* U+10000 */
		{ "\xf4\x8f\xbf\xbf", 4 },	/* U+10FFFF */
		{ "\xe2\x80\x8d", 3 },		/* U+200D, a joiner */
		/* Overlong forms. */
		{ "\xc0\x80", 0 }, { "\xc1\xbf", 0 }, { "\xc0\xaf", 0 },
		{ "\xe0\x80\x80", 0 }, { "\xe0\x9f\xbf", 0 },
		{ "\xf0\x80\x80\x80", 0 }, { "\xf0\x8f\xbf\xbf", 0 },
		/* Surrogates, beyond U+10FFFF, bytes that start nothing. */
		{ "\xed\xa0\x80", 0 }, { "\xed\xbf\xbf", 0 },
		{ "\xf4\x90\x80\x80", 0 }, { "\xf5\x80\x80\x80", 0 },
		{ "\xf8\x88\x80\x80\x80", 0 }, { "\xfe", 0 }, { "\xff", 0 },
		{ "\x80", 0 }, { "\xbf", 0 },
		/* Cut short, or a continuation missing. */
		{ "\xc3", 0 }, { "\xe0\xa0", 0 }, { "\xf0\x90\x80", 0 },
		{ "\xc3" "A", 0 }, { "\xe2\x82" "A", 0 },
		{ "\xf0\x90\x80" "A", 0 },
	};
	size_t	i;
	char	out[64];

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char	*in = cases[i].in;
		size_t		 len = strlen(in);

		text_term(out, sizeof(out), in, len, TEXT_TERM_UTF8);
		assert_safe(out, TEXT_TERM_UTF8);
		if (cases[i].keep) {
			ck_assert_int_eq(text_utf8_char(in, len), cases[i].keep);
			ck_assert_msg(strcmp(out, in) == 0, "case %zu: %s", i,
			    out);
		} else {
			ck_assert_msg(text_utf8_char(in, len) <= 0, "case %zu", i);
			ck_assert_msg(strchr(out, '\x80') == NULL &&
			    strncmp(out, in, len) != 0, "case %zu kept: %s", i,
			    out);
			ck_assert_msg(out[0] == '\\', "case %zu: %s", i, out);
		}
		/* Without a UTF-8 terminal every byte from 0x80 up is escaped. */
		text_term(out, sizeof(out), in, len, 0);
		assert_safe(out, 0);
	}
	/* Valid starts cut short say so; wrong starts do not. */
	ck_assert_int_eq(text_utf8_char("\xc3", 1), -1);
	ck_assert_int_eq(text_utf8_char("\xe2", 1), -1);
	ck_assert_int_eq(text_utf8_char("\xe2\x82", 2), -1);
	ck_assert_int_eq(text_utf8_char("\xf0\x90\x80", 3), -1);
	ck_assert_int_eq(text_utf8_char("\xc2", 1), -1);
	ck_assert_int_eq(text_utf8_char("\xe0\x9f", 2), 0);
	ck_assert_int_eq(text_utf8_char("\xed\xa0", 2), 0);
	ck_assert_int_eq(text_utf8_char("\xf0\x8f", 2), 0);
	ck_assert_int_eq(text_utf8_char("\xf4\x90", 2), 0);
	ck_assert_int_eq(text_utf8_char("A", 1), 0);
	ck_assert_int_eq(text_utf8_char("", 0), 0);
	ck_assert_str_eq(term("caf\xc3\xa9", 5, 0), "caf\\xc3\\xa9");
	ck_assert_str_eq(term("caf\xc3\xa9", 5, TEXT_TERM_UTF8), "caf\xc3\xa9");
}
END_TEST

START_TEST(term_cut_whole)
{
	char	out[8];

	/* Never half an escape or half a character. */
	ck_assert_uint_eq(text_term(out, sizeof(out), "ab\x1b" "cd", 5, 0), 7);
	ck_assert_str_eq(out, "ab\\x1bc");
	ck_assert_uint_eq(text_term(out, 6, "abc\x1b", 4, 0), 3);
	ck_assert_str_eq(out, "abc");
	ck_assert_uint_eq(text_term(out, 6, "abc\xe2\x82\xac", 6,
	    TEXT_TERM_UTF8), 3);
	ck_assert_str_eq(out, "abc");
	ck_assert_uint_eq(text_term(out, 4, "a\\\\", 3, 0), 3);
	ck_assert_str_eq(out, "a\\\\");
	ck_assert_uint_eq(text_term(out, 3, "a\\", 2, 0), 1);
	ck_assert_uint_eq(text_term(out, 1, "abc", 3, 0), 0);
	ck_assert_str_eq(out, "");
	ck_assert_uint_eq(text_term(out, 0, "abc", 3, 0), 0);
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
	tcase_add_test(tc, term_every_byte);
	tcase_add_test(tc, term_terminal_escapes);
	tcase_add_test(tc, term_utf8_boundaries);
	tcase_add_test(tc, term_cut_whole);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
