/*
 * A monitoring plugin's output (core/plugin_output.c): the text without
 * its performance data, the first perfdata item's value and unit, quoted
 * labels, long output, and garbage that gives no value but never fails.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lbagent/core/plugin_output.h"
#include "testutil.h"

static struct plugin_output
parse(const char *out)
{
	struct plugin_output	po;

	plugin_output_parse(out, strlen(out), &po);
	return po;
}

/* The text of out's first line is text; its value value (NAN: none). */
static void
expect(const char *out, const char *text, double value, const char *unit)
{
	struct plugin_output	po = parse(out);

	ck_assert_msg(po.textlen == strlen(text) &&
	    memcmp(po.text, text, po.textlen) == 0, "%s: text '%.*s', want "
	    "'%s'", out, (int)po.textlen, po.text, text);
	if (isnan(value)) {
		ck_assert_msg(isnan(po.value), "%s: value %g, want none", out,
		    po.value);
		ck_assert_str_eq(po.unit, "");
		return;
	}
	ck_assert_msg(po.value == value, "%s: value %g, want %g", out,
	    po.value, value);
	ck_assert_msg(strcmp(po.unit, unit) == 0, "%s: unit '%s', want '%s'",
	    out, po.unit, unit);
}

START_TEST(the_real_plugins)
{
	/* What check_tcp, check_http, check_load and check_disk print. */
	expect("TCP OK - 0.000 second response time on 127.0.0.1 port 22|"
	    "time=0.000164s;;;0.000000;10.000000\n",
	    "TCP OK - 0.000 second response time on 127.0.0.1 port 22",
	    0.000164, "s");
	expect("HTTP OK: HTTP/1.0 200 OK - 15568 bytes in 0.003 second "
	    "response time |time=0.003273s;;;0.000000;10.000000 "
	    "size=15568B;;;0;\n",
	    "HTTP OK: HTTP/1.0 200 OK - 15568 bytes in 0.003 second response "
	    "time", 0.003273, "s");
	expect("LOAD WARNING - total load average: 1.46, 1.33, 0.87|"
	    "load1=1.460;0.000;1000.000;0; load5=1.330;0.000;1000.000;0; "
	    "load15=0.870;0.000;1000.000;0; \n",
	    "LOAD WARNING - total load average: 1.46, 1.33, 0.87", 1.46, "");
	expect("DISK OK - free space: / 79678MiB (81% inode=97%);| "
	    "/=19195232256B;267847005634;270552530944;0;270552530944\n",
	    "DISK OK - free space: / 79678MiB (81% inode=97%);",
	    19195232256.0, "B");
	/* No perfdata at all. */
	expect("connect to address 127.0.0.1 and port 1: Connection refused\n",
	    "connect to address 127.0.0.1 and port 1: Connection refused",
	    NAN, "");
	expect("check_tcp: Port must be a positive integer\nUsage:\n"
	    "check_tcp -H host -p port [-w <warning time>]\n",
	    "check_tcp: Port must be a positive integer", NAN, "");
}
END_TEST

START_TEST(units_of_measure)
{
	static const char *const units[] = {
		"s", "ms", "us", "%", "B", "KB", "MB", "GB", "TB", "c", ""
	};
	char	out[64];
	size_t	i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		snprintf(out, sizeof(out), "OK|x=12.5%s;1;2;0;100", units[i]);
		expect(out, "OK", 12.5, units[i]);
	}
	expect("OK|x=-3", "OK", -3, "");
	expect("OK|x=+3", "OK", 3, "");
	expect("OK|x=.5s", "OK", 0.5, "s");
	expect("OK|x=-0.25ms;;", "OK", -0.25, "ms");
	expect("OK|x=7.", "OK", 7, "");
	expect("OK|x=42", "OK", 42, "");
	expect("OK|x=42 y=1s", "OK", 42, "");
	expect("OK|x=42\ty=1s", "OK", 42, "");
	/* Not the guidelines' units: no value rather than a wrong one. */
	expect("OK|x=1KiB", "OK", NAN, "");
	expect("OK|x=1kb", "OK", NAN, "");
	expect("OK|x=1b", "OK", NAN, "");
	expect("OK|x=1S", "OK", NAN, "");
	expect("OK|x=1sec", "OK", NAN, "");
	expect("OK|x=1e3", "OK", NAN, "");
	expect("OK|x=1,5", "OK", NAN, "");
	expect("OK|x=1..5", "OK", NAN, "");
}
END_TEST

START_TEST(labels)
{
	expect("OK|'a b'=1s;2;3", "OK", 1, "s");
	expect("OK|'it''s'=2ms", "OK", 2, "ms");
	expect("OK|'a=b'=3%", "OK", 3, "%");
	expect("OK|'''quoted'''=4", "OK", 4, "");
	expect("OK|'x|y'=5c", "OK", 5, "c");
	expect("OK|/var/lib=6GB", "OK", 6, "GB");
	/* Broken labels: no value. */
	expect("OK|''=1", "OK", NAN, "");
	expect("OK|'open=1", "OK", NAN, "");
	expect("OK|'a'b=1", "OK", NAN, "");
	expect("OK|a b=1", "OK", NAN, "");
	expect("OK|=1", "OK", NAN, "");
	expect("OK|a'b=1", "OK", NAN, "");
	expect("OK|'a\nb'=1", "OK", NAN, "");
}
END_TEST

START_TEST(the_text)
{
	expect("  \tpadded  \t\n", "padded", NAN, "");
	expect("crlf\r\n", "crlf", NAN, "");
	expect("before   |  x=1s", "before", 1, "s");
	expect("|x=1s", "", 1, "s");
	expect("no newline", "no newline", NAN, "");
	expect("", "", NAN, "");
	expect("\nsecond line|x=1", "", 1, "");
	expect("a | b | c=1", "a", NAN, "");	/* "b" is not an item */
	expect("OK|", "OK", NAN, "");
	expect("OK|   \t ", "OK", NAN, "");
}
END_TEST

START_TEST(long_output)
{
	/* The guidelines' example: perfdata on the first and later lines. */
	expect("DISK OK - free space: / 3326 MB (56%); | /=2643MB;5948;5958;0;"
	    "5968\n/ 15272 MB (77%);\n/boot 68 MB (69%);\n/home 69357 MB (27%);"
	    "\n/var/log 819 MB (84%); | /boot=68MB;88;93;0;98\n/home=69357MB;"
	    "253404;253409;0;253414\n/var/log=818MB;970;975;0;980\n",
	    "DISK OK - free space: / 3326 MB (56%);", 2643, "MB");
	/* Perfdata only in the long output: its first item. */
	expect("DISK OK\n/boot 68 MB (69%); | /boot=68MB;88;93;0;98\n"
	    "/home=69357MB;253404;253409;0;253414\n", "DISK OK", 68, "MB");
	expect("OK\nsome text\nmore | \n\n  'a b'=9us\n", "OK", 9, "us");
	/* A first line with nothing after its '|': the long output's. */
	expect("OK | \nlong | x=3s", "OK", 3, "s");
	/* A bad first item on the first line: no value, none looked for. */
	expect("OK | x=U\nlong | y=3s", "OK", NAN, "");
	expect("OK | x\nlong | y=3s", "OK", NAN, "");
	/* Long output without perfdata. */
	expect("OK\nline two\nline three\n", "OK", NAN, "");
}
END_TEST

START_TEST(garbage)
{
	static const char *const bad[] = {
		"OK|x", "OK|x=", "OK|x=;", "OK|x=U", "OK|x=U;1;2", "OK|x=-",
		"OK|x=.", "OK|x=-.", "OK|x=abc", "OK|x=1.2.3", "OK|x==1",
		"OK|x=inf", "OK|x=nan", "OK|x=0x10", "OK|;;;", "OK|'", "OK|''",
		"OK|x=1s2", "OK|x=1%%", "OK|x=1 s",
	};
	char		 big[512];
	struct plugin_output po;
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (strcmp(bad[i], "OK|x=1 s") == 0)
			expect(bad[i], "OK", 1, "");	/* "s" is another item */
		else
			expect(bad[i], "OK", NAN, "");
	/* A number longer than any a plugin prints. */
	memset(big, '9', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "OK|x=", 5);
	expect(big, "OK", NAN, "");
	/* Sixty digits are still one. */
	big[5 + 60] = '\0';
	expect(big, "OK", 1e60, "");
	/* NUL bytes are bytes: the text goes on past one. */
	plugin_output_parse("a\0b|x=1s\n", 9, &po);
	ck_assert_uint_eq(po.textlen, 3);
	ck_assert(memcmp(po.text, "a\0b", 3) == 0);
	ck_assert(po.value == 1);
	plugin_output_parse("OK|x=1\0s", 8, &po);
	ck_assert(isnan(po.value));
	/* The length given, not the NUL: nothing is read past it. */
	plugin_output_parse("OK|x=12s", 6, &po);
	ck_assert(po.value == 1);
	ck_assert_str_eq(po.unit, "");
	plugin_output_parse(NULL, 0, &po);
	ck_assert_uint_eq(po.textlen, 0);
	ck_assert(isnan(po.value));
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("plugin_output");
	TCase	*tc = tcase_create("plugin_output");

	tcase_add_test(tc, the_real_plugins);
	tcase_add_test(tc, units_of_measure);
	tcase_add_test(tc, labels);
	tcase_add_test(tc, the_text);
	tcase_add_test(tc, long_output);
	tcase_add_test(tc, garbage);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
