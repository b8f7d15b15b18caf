/*
 * A monitoring plugin's output: the text of its first line, and the first
 * item of its performance data as the probe's measured value. Performance
 * data never reaches the reason: the guidelines put it after a '|', and
 * it would fill the reply's hundred bytes with numbers.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/plugin_output.h"

/* The guidelines' units of measure; anything else gives no value. */
static const char *const plugin_units[] = {
	"s", "ms", "us", "%", "B", "KB", "MB", "GB", "TB", "c", NULL
};

/* Long enough for any number a plugin prints: more is not a number. */
#define NUMBER_MAX	64

static bool
blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Between perfdata items, where long output's may cross lines. */
static bool
space(char c)
{
	return blank(c) || c == '\n';
}

/* The end of an item's value and unit. */
static bool
item_end(const char *p, const char *end)
{
	return p == end || *p == ';' || space(*p);
}

/*
 * The label, quoted ('a b', with '' for a quote) or bare: *pp is left on
 * the '=' after it. False when there is no well-formed label.
 */
static bool
skip_label(const char **pp, const char *end)
{
	const char	*p = *pp, *start;

	if (*p == '\'') {
		for (start = ++p;; p++) {
			if (p == end || *p == '\n')
				return false;
			if (*p != '\'')
				continue;
			if (p + 1 < end && p[1] == '\'') {
				p++;
				continue;
			}
			break;
		}
		if (p == start)
			return false;
		p++;
	} else {
		for (start = p; p < end && *p != '=' && *p != '\''; p++)
			if (space(*p))
				return false;
		if (p == start)
			return false;
	}
	if (p == end || *p != '=')
		return false;
	*pp = p;
	return true;
}

/* A number as the guidelines write it: [-]digits[.digits], or [-].digits. */
static bool
read_number(const char **pp, const char *end, double *value)
{
	const char	*p = *pp, *start = p;
	char		 buf[NUMBER_MAX + 1];
	size_t		 digits = 0;
	bool		 dot = false;

	if (p < end && (*p == '-' || *p == '+'))
		p++;
	for (; p < end; p++) {
		if (*p >= '0' && *p <= '9')
			digits++;
		else if (*p == '.' && !dot)
			dot = true;
		else
			break;
	}
	if (digits == 0 || (size_t)(p - start) > NUMBER_MAX)
		return false;
	memcpy(buf, start, (size_t)(p - start));
	buf[p - start] = '\0';
	*value = strtod(buf, NULL);
	if (!isfinite(*value))
		return false;
	*pp = p;
	return true;
}

/* The first item of perfdata in [p, end): true when there is one at all. */
static bool
first_item(const char *p, const char *end, struct plugin_output *po)
{
	const char	*u;
	double		 value;
	size_t		 i, n;

	while (p < end && space(*p))
		p++;
	if (p == end)
		return false;
	if (!skip_label(&p, end))
		return true;
	p++;				/* the '=' */
	if (!read_number(&p, end, &value))
		return true;		/* "U" (undetermined) among them */
	for (u = p; p < end && !item_end(p, end); p++)
		;
	n = (size_t)(p - u);
	if (n > PLUGIN_UNIT_MAX)
		return true;
	for (i = 0; plugin_units[i] != NULL; i++) {
		if (strlen(plugin_units[i]) == n &&
		    memcmp(plugin_units[i], u, n) == 0)
			break;
	}
	if (n > 0 && plugin_units[i] == NULL)
		return true;
	po->value = value;
	memcpy(po->unit, u, n);
	po->unit[n] = '\0';
	return true;
}

void
plugin_output_parse(const char *out, size_t len, struct plugin_output *po)
{
	const char	*s = out, *end = out + len, *nl, *bar, *t;

	memset(po, 0, sizeof(*po));
	po->value = NAN;
	po->text = "";
	if (len == 0)
		return;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	nl = memchr(s, '\n', (size_t)(end - s));
	if (nl == NULL)
		nl = end;
	bar = memchr(s, '|', (size_t)(nl - s));
	for (t = bar != NULL ? bar : nl; t > s && blank(t[-1]); t--)
		;
	po->text = s;
	po->textlen = (size_t)(t - s);
	/*
	 * The first line's perfdata comes first; without any, the first of
	 * the long output's, which runs from its first '|' to the end.
	 */
	if (bar != NULL && first_item(bar + 1, nl, po))
		return;
	if (nl < end && (bar = memchr(nl, '|', (size_t)(end - nl))) != NULL)
		(void)first_item(bar + 1, end, po);
}
