/* Durations, booleans and counts. */
#include <stdbool.h>
#include <stdint.h>

#include "lbagent/core/units.h"
#include "testutil.h"

static uint64_t
dur_ok(const char *s)
{
	uint64_t	 ms = 12345;
	const char	*why = NULL;

	ck_assert_msg(units_duration_ms(s, &ms, &why) == 0, "%s: %s", s, why);
	return ms;
}

static void
dur_bad(const char *s, const char *why_expected)
{
	uint64_t	 ms = 7;
	const char	*why = NULL;

	ck_assert_msg(units_duration_ms(s, &ms, &why) == -1, "%s accepted", s);
	ck_assert_uint_eq(ms, 7);
	ck_assert_str_eq(why, why_expected);
}

START_TEST(durations)
{
	ck_assert_uint_eq(dur_ok("500ms"), 500);
	ck_assert_uint_eq(dur_ok("2s"), 2000);
	ck_assert_uint_eq(dur_ok("1m"), 60000);
	ck_assert_uint_eq(dur_ok("1h"), 3600000);
	ck_assert_uint_eq(dur_ok("0s"), 0);
	ck_assert_uint_eq(dur_ok("0"), 0);	/* nothing needs no unit */
	ck_assert_uint_eq(dur_ok("00"), 0);
	ck_assert_uint_eq(dur_ok("1500ms"), 1500);
	ck_assert_uint_eq(dur_ok("168h"), 168ULL * 3600000);
	dur_bad("", "expected a duration such as 500ms, 1.5s, 2s, 1m or 1h");
	dur_bad("s", "expected a duration such as 500ms, 1.5s, 2s, 1m or 1h");
	dur_bad("-1s", "expected a duration such as 500ms, 1.5s, 2s, 1m or 1h");
	dur_bad(" 2s", "expected a duration such as 500ms, 1.5s, 2s, 1m or 1h");
	dur_bad("2", "duration needs a unit: ms, s, m or h");
	dur_bad("1", "duration needs a unit: ms, s, m or h");
	dur_bad("2x", "unknown duration unit (use ms, s, m or h)");
	ck_assert_uint_eq(dur_ok("1.5s"), 1500);
	ck_assert_uint_eq(dur_ok("0.25s"), 250);
	ck_assert_uint_eq(dur_ok("1.5m"), 90000);
	ck_assert_uint_eq(dur_ok("2.0ms"), 2);
	ck_assert_uint_eq(dur_ok("167.5h"), 603000000);
	dur_bad("1.5ms", "duration must be whole milliseconds");
	dur_bad("0.0001s", "duration must be whole milliseconds");
	dur_bad("1.s", "expected digits after the decimal point");
	dur_bad("1.5", "duration needs a unit: ms, s, m or h");
	dur_bad("1.1234567s", "too many decimal places");
	dur_bad("168.5h", "duration too long (at most 168h)");
	dur_bad(".5s", "expected a duration such as 500ms, 1.5s, 2s, 1m or 1h");
	dur_bad("2s ", "unknown duration unit (use ms, s, m or h)");
	dur_bad("2S", "unknown duration unit (use ms, s, m or h)");
	dur_bad("169h", "duration too long (at most 168h)");
	dur_bad("99999999999999999999999s",
	    "expected a duration such as 500ms, 1.5s, 2s, 1m or 1h");
}
END_TEST

START_TEST(booleans)
{
	const char	*yes[] = { "yes", "true", "on", "YES", "True" };
	const char	*no[] = { "no", "false", "off", "NO", "Off" };
	const char	*bad[] = { "", "1", "0", "y", "enabled", "yes " };
	const char	*why;
	bool		 v;
	size_t		 i;

	for (i = 0; i < 5; i++) {
		v = false;
		ck_assert_int_eq(units_bool(yes[i], &v, &why), 0);
		ck_assert(v);
		ck_assert_int_eq(units_bool(no[i], &v, &why), 0);
		ck_assert(!v);
	}
	for (i = 0; i < 6; i++) {
		ck_assert_int_eq(units_bool(bad[i], &v, &why), -1);
		ck_assert_str_eq(why, "expected yes, no, true, false, on or off");
	}
}
END_TEST

START_TEST(numbers)
{
	uint64_t	 v;
	const char	*why;

	ck_assert_int_eq(units_uint("1024", &v, &why), 0);
	ck_assert_uint_eq(v, 1024);
	ck_assert_int_eq(units_uint("0", &v, &why), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(units_uint("", &v, &why), -1);
	ck_assert_int_eq(units_uint("-1", &v, &why), -1);
	ck_assert_int_eq(units_uint("12a", &v, &why), -1);
	ck_assert_int_eq(units_uint("+3", &v, &why), -1);
	ck_assert_int_eq(units_uint("18446744073709551616", &v, &why), -1);
	ck_assert_str_eq(why, "expected a whole number");
}
END_TEST

START_TEST(format_round_trips)
{
	const uint64_t	 values[] = { 0, 1, 500, 1000, 1500, 60000, 90000,
	    3600000, 7200000, 5400000 };
	char		 buf[32];
	size_t		 i;

	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		units_format_ms(values[i], buf, sizeof(buf));
		ck_assert_uint_eq(dur_ok(buf), values[i]);
	}
	units_format_ms(600000, buf, sizeof(buf));
	ck_assert_str_eq(buf, "10m");
	units_format_ms(1500, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1500ms");
}
END_TEST

START_TEST(format_ages)
{
	static const struct { uint64_t ms; const char *text; } v[] = {
		{ 0, "0s" }, { 99, "0s" }, { 250, "0.2s" }, { 3000, "3s" },
		{ 3200, "3.2s" }, { 9999, "9.9s" }, { 10000, "10s" },
		{ 59999, "59s" }, { 60000, "1m" }, { 61000, "1m01s" },
		{ 125000, "2m05s" }, { 725000, "12m05s" }, { 3600000, "1h" },
		{ 3659999, "1h" }, { 3660000, "1h01m" }, { 12000000, "3h20m" },
		{ 11525000, "3h12m" }, { 86399999, "23h59m" },
		{ 86400000, "1d" },
		{ 2 * 86400000ULL + 4 * 3600000, "2d04h" },
		{ 3 * 86400000ULL + 4 * 3600000 + 59999, "3d04h" },
		{ UINT64_MAX, "213503982334d14h" },
	};
	char	buf[32];
	size_t	i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		units_format_age(v[i].ms, buf, sizeof(buf));
		ck_assert_str_eq(buf, v[i].text);
	}
}
END_TEST

START_TEST(percent_size_double)
{
	const char	*why;
	uint64_t	 b;
	double		 d;

	ck_assert_int_eq(units_percent("85%", &d, &why), 0);
	ck_assert(d == 85.0);
	ck_assert_int_eq(units_percent("85.5%", &d, &why), 0);
	ck_assert(d == 85.5);
	ck_assert_int_eq(units_percent("0%", &d, &why), 0);
	ck_assert_int_eq(units_percent("100%", &d, &why), 0);
	ck_assert_int_eq(units_percent("101%", &d, &why), -1);
	ck_assert_int_eq(units_percent("85", &d, &why), -1);
	ck_assert_int_eq(units_percent("%", &d, &why), -1);
	ck_assert_int_eq(units_percent("-1%", &d, &why), -1);
	ck_assert_int_eq(units_percent("nan%", &d, &why), -1);

	ck_assert_int_eq(units_size("5G", &b, &why), 0);
	ck_assert_uint_eq(b, 5ULL << 30);
	ck_assert_int_eq(units_size("512M", &b, &why), 0);
	ck_assert_uint_eq(b, 512ULL << 20);
	ck_assert_int_eq(units_size("64K", &b, &why), 0);
	ck_assert_uint_eq(b, 64ULL << 10);
	ck_assert_int_eq(units_size("1T", &b, &why), 0);
	ck_assert_uint_eq(b, 1ULL << 40);
	ck_assert_int_eq(units_size("4096", &b, &why), 0);
	ck_assert_uint_eq(b, 4096);
	ck_assert_int_eq(units_size("5GB", &b, &why), -1);
	ck_assert_int_eq(units_size("5g", &b, &why), -1);
	ck_assert_int_eq(units_size("G", &b, &why), -1);
	ck_assert_int_eq(units_size("99999999999T", &b, &why), -1);
	ck_assert_str_eq(why, "size too large");

	ck_assert_int_eq(units_double("2", &d, &why), 0);
	ck_assert(d == 2.0);
	ck_assert_int_eq(units_double("0.75", &d, &why), 0);
	ck_assert(d == 0.75);
	ck_assert_int_eq(units_double("-3", &d, &why), 0);
	ck_assert(d == -3.0);
	ck_assert_int_eq(units_double("", &d, &why), -1);
	ck_assert_int_eq(units_double("0x10", &d, &why), -1);
	ck_assert_int_eq(units_double("inf", &d, &why), -1);
	ck_assert_int_eq(units_double(" 1", &d, &why), -1);
	ck_assert_int_eq(units_double("1e999", &d, &why), -1);
	ck_assert_int_eq(units_double("1.2.3", &d, &why), -1);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("units");
	TCase	*tc = tcase_create("units");

	tcase_add_test(tc, durations);
	tcase_add_test(tc, booleans);
	tcase_add_test(tc, numbers);
	tcase_add_test(tc, format_round_trips);
	tcase_add_test(tc, format_ages);
	tcase_add_test(tc, percent_size_double);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
