/*
 * What a monitoring plugin prints, read the way the Monitoring Plugins
 * guidelines lay it out: a first line "TEXT|PERFDATA", then optional long
 * text whose lines may carry more performance data after a '|' (from
 * there to the end, all of it is). Pure: text in, its parts out.
 */
#ifndef LBAGENT_PLUGIN_OUTPUT_H
#define LBAGENT_PLUGIN_OUTPUT_H

#include <stddef.h>

/* The longest unit of measure the guidelines name ("ms", "KB"...). */
#define PLUGIN_UNIT_MAX	2

struct plugin_output {
	/* The first line's text: blanks around it and its perfdata cut. */
	const char	*text;
	size_t		 textlen;
	/*
	 * The first perfdata item, 'label'=value[UOM];warn;crit;min;max: its
	 * value as written (NAN when there is none, "U", or the item is not
	 * well-formed) and its unit (s ms us % B KB MB GB TB c, or "").
	 */
	double		 value;
	char		 unit[PLUGIN_UNIT_MAX + 1];
};

/*
 * Reads len bytes of out (any bytes: a NUL is a byte like another) into
 * *po, whose text points into out. Never fails: what cannot be read as
 * performance data gives no value.
 */
void	plugin_output_parse(const char *out, size_t len, struct plugin_output *po);

#endif
