/*
 * Fuzz target: argv_split (src/core/argv.c), the exec probe's command line,
 * over the whole input as one string. A split gives at least one word and
 * a NULL-terminated vector; a refusal says why.
 */
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/argv.h"
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
	char		*s = fz_str(data, size), **av = NULL;
	const char	*why = NULL;
	size_t		 total = 0;
	int		 n, i;

	if ((n = argv_split(s, &av, &why)) == -1)
		FZ_ASSERT(why != NULL && *why != '\0');
	else {
		FZ_ASSERT(n >= 1 && av != NULL && av[n] == NULL);
		/* No word holds more than the line did. */
		for (i = 0; i < n; i++)
			total += strlen(av[i]);
		FZ_ASSERT(total <= strlen(s));
		argv_free(av);
	}
	free(s);
	return 0;
}
