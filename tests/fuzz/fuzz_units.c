/*
 * Fuzz target: the value parsers of src/core/units.c (durations, booleans,
 * counts, percentages, sizes, numbers), each over the whole input as one
 * NUL-terminated string. A duration that parses must format and parse
 * back to itself; every refusal must say why.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/units.h"
#include "fuzzutil.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_init();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		*s = fz_str(data, size), buf[64];
	const char	*why;
	uint64_t	 u, back;
	double		 d;
	bool		 b;

	why = NULL;
	if (units_duration_ms(s, &u, &why) == 0) {
		units_format_ms(u, buf, sizeof(buf));
		FZ_ASSERT(units_duration_ms(buf, &back, &why) == 0);
		FZ_ASSERT(back == u);
		units_format_age(u, buf, sizeof(buf));
	} else
		FZ_ASSERT(why != NULL && *why != '\0');
	why = NULL;
	if (units_bool(s, &b, &why) != 0)
		FZ_ASSERT(why != NULL);
	why = NULL;
	if (units_uint(s, &u, &why) == 0)
		units_format_age(u, buf, sizeof(buf));
	else
		FZ_ASSERT(why != NULL);
	why = NULL;
	if (units_percent(s, &d, &why) == 0)
		FZ_ASSERT(d >= 0 && d <= 100);
	else
		FZ_ASSERT(why != NULL);
	why = NULL;
	if (units_size(s, &u, &why) != 0)
		FZ_ASSERT(why != NULL);
	why = NULL;
	if (units_double(s, &d, &why) == 0)
		FZ_ASSERT(isfinite(d));
	else
		FZ_ASSERT(why != NULL);
	free(s);
	return 0;
}
