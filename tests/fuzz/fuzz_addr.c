/*
 * Fuzz target: addr_parse (src/core/addr.c), the one reader of peer and
 * load-balancer addresses, over the input as a configuration value. An
 * address it accepts is well formed: its strings are terminated within
 * their fields, a URL's scheme is lower case and its port within 1 to
 * 65535 or 0, a unix socket's path absolute, a tcp address's port given;
 * one it refuses says why. The host's loopback test never fails on what
 * the parser hands it.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/addr.h"
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
	char		*s = fz_str(data, size);
	struct addr	 a;
	const char	*why = NULL;
	size_t		 i;

	if (addr_parse(s, &a, &why) == -1) {
		FZ_ASSERT(why != NULL && why[0] != '\0');
		free(s);
		return 0;
	}
	FZ_ASSERT(memchr(a.scheme, '\0', sizeof(a.scheme)) != NULL);
	FZ_ASSERT(memchr(a.host, '\0', sizeof(a.host)) != NULL);
	FZ_ASSERT(memchr(a.path, '\0', sizeof(a.path)) != NULL);
	FZ_ASSERT(a.port <= 65535);
	switch (a.kind) {
	case ADDR_URL:
		FZ_ASSERT(a.scheme[0] != '\0');
		for (i = 0; a.scheme[i] != '\0'; i++)
			FZ_ASSERT(!isupper((unsigned char)a.scheme[i]));
		(void)addr_host_loopback(a.host);
		break;
	case ADDR_UNIX:
		FZ_ASSERT(a.path[0] == '/');
		break;
	case ADDR_TCP:
		FZ_ASSERT(a.host[0] != '\0' && a.port >= 1);
		(void)addr_host_loopback(a.host);
		break;
	default:
		FZ_ASSERT(!"addr_parse gave no kind");
	}
	free(s);
	return 0;
}
