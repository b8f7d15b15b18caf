/* Durations, booleans and counts: the only place human values are parsed. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lbagent/core/units.h"

/* Longest duration we accept: a week, far above any sane window. */
#define UNITS_MAX_DURATION_MS	(7ULL * 24 * 3600 * 1000)

static const struct {
	const char	*suffix;
	uint64_t	 ms;
} duration_units[] = {
	{ "ms", 1 },
	{ "s", 1000 },
	{ "m", 60 * 1000 },
	{ "h", 3600 * 1000 },
};

/* Reads a run of decimal digits; strtoull would accept signs and spaces. */
static int
parse_digits(const char **p, uint64_t *value)
{
	uint64_t	v = 0;
	const char	*s = *p;

	if (!isdigit((unsigned char)*s))
		return -1;
	for (; isdigit((unsigned char)*s); s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*value = v;
	return 0;
}

int
units_duration_ms(const char *s, uint64_t *ms, const char **why)
{
	uint64_t	v, frac = 0, scale = 1, unit;
	size_t		i;

	if (parse_digits(&s, &v) == -1) {
		*why = "expected a duration such as 500ms, 1.5s, 2s, 1m or 1h";
		return -1;
	}
	/* "1.5s": a fraction, as long as the result is whole milliseconds. */
	if (*s == '.') {
		s++;
		if (!isdigit((unsigned char)*s)) {
			*why = "expected digits after the decimal point";
			return -1;
		}
		for (; isdigit((unsigned char)*s); s++) {
			if (scale >= 1000000) {
				*why = "too many decimal places";
				return -1;
			}
			frac = frac * 10 + (uint64_t)(*s - '0');
			scale *= 10;
		}
	}
	for (i = 0; i < sizeof(duration_units) / sizeof(duration_units[0]); i++) {
		if (strcmp(s, duration_units[i].suffix) != 0)
			continue;
		unit = duration_units[i].ms;
		if (v > UNITS_MAX_DURATION_MS / unit ||
		    v * unit + frac * unit / scale > UNITS_MAX_DURATION_MS) {
			*why = "duration too long (at most 168h)";
			return -1;
		}
		if (frac * unit % scale != 0) {
			*why = "duration must be whole milliseconds";
			return -1;
		}
		*ms = v * unit + frac * unit / scale;
		return 0;
	}
	/* Nothing needs no unit: "ramp = 0". */
	if (*s == '\0' && v == 0 && scale == 1) {
		*ms = 0;
		return 0;
	}
	*why = *s == '\0' ? "duration needs a unit: ms, s, m or h" :
	    "unknown duration unit (use ms, s, m or h)";
	return -1;
}

int
units_bool(const char *s, bool *value, const char **why)
{
	static const char *const yes[] = { "yes", "true", "on" };
	static const char *const no[] = { "no", "false", "off" };
	size_t	i;

	for (i = 0; i < 3; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*value = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*value = false;
			return 0;
		}
	}
	*why = "expected yes, no, true, false, on or off";
	return -1;
}

int
units_uint(const char *s, uint64_t *value, const char **why)
{
	if (parse_digits(&s, value) == -1 || *s != '\0') {
		*why = "expected a whole number";
		return -1;
	}
	return 0;
}

int
units_double(const char *s, double *value, const char **why)
{
	char	*end;
	double	 v;

	errno = 0;
	/* strtod would take hex, "inf" and leading blanks: none are ours. */
	if (*s == '\0' || strspn(s, "+-0123456789.eE") != strlen(s) ||
	    (v = strtod(s, &end), *end != '\0') || errno != 0 || !isfinite(v)) {
		*why = "expected a number";
		return -1;
	}
	*value = v;
	return 0;
}

int
units_percent(const char *s, double *pct, const char **why)
{
	char	buf[32];
	size_t	len = strlen(s);

	if (len < 2 || len >= sizeof(buf) || s[len - 1] != '%') {
		*why = "expected a percentage such as 85%";
		return -1;
	}
	memcpy(buf, s, len - 1);
	buf[len - 1] = '\0';
	if (units_double(buf, pct, why) == -1 || *pct < 0 || *pct > 100) {
		*why = "expected a percentage from 0% to 100%";
		return -1;
	}
	return 0;
}

int
units_size(const char *s, uint64_t *bytes, const char **why)
{
	static const char	 suffixes[] = "KMGT";
	const char		*p;
	uint64_t		 v, mult = 1;

	if (parse_digits(&s, &v) == -1) {
		*why = "expected a size such as 512M or 5G";
		return -1;
	}
	if (*s != '\0') {
		if ((p = strchr(suffixes, *s)) == NULL || s[1] != '\0') {
			*why = "unknown size unit (use K, M, G or T)";
			return -1;
		}
		mult = 1ULL << (10 * (p - suffixes + 1));
	}
	if (v > UINT64_MAX / mult) {
		*why = "size too large";
		return -1;
	}
	*bytes = v * mult;
	return 0;
}

void
units_format_ms(uint64_t ms, char *buf, unsigned long size)
{
	if (ms != 0 && ms % (3600 * 1000) == 0)
		snprintf(buf, size, "%lluh", (unsigned long long)(ms / 3600000));
	else if (ms != 0 && ms % (60 * 1000) == 0)
		snprintf(buf, size, "%llum", (unsigned long long)(ms / 60000));
	else if (ms % 1000 == 0)
		snprintf(buf, size, "%llus", (unsigned long long)(ms / 1000));
	else
		snprintf(buf, size, "%llums", (unsigned long long)ms);
}

/*
 * The house format for elapsed times, everywhere people read one: the
 * largest unit, then the next one on two digits unless it is zero. Under
 * 10s the tenths matter (probe timeouts, short windows); above, a second
 * more or less does not. Truncates: "9.99s" has not yet been 10s.
 */
void
units_format_age(uint64_t ms, char *buf, unsigned long size)
{
	unsigned long long	s = ms / 1000, a, b;
	const char		*ua, *ub;

	if (ms < 10000) {
		if (ms % 1000 < 100)
			snprintf(buf, size, "%llus", s);
		else
			snprintf(buf, size, "%llu.%llus", s,
			    (unsigned long long)(ms % 1000) / 100);
		return;
	}
	if (s < 60) {
		snprintf(buf, size, "%llus", s);
		return;
	}
	if (s < 3600) {
		a = s / 60;
		b = s % 60;
		ua = "m";
		ub = "s";
	} else if (s < 86400) {
		a = s / 3600;
		b = s / 60 % 60;
		ua = "h";
		ub = "m";
	} else {
		a = s / 86400;
		b = s / 3600 % 24;
		ua = "d";
		ub = "h";
	}
	if (b == 0)
		snprintf(buf, size, "%llu%s", a, ua);
	else
		snprintf(buf, size, "%llu%s%02llu%s", a, ua, b, ub);
}
