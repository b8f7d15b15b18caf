/*
 * The HTTP API's bearer token: read from its file, as the daemon (the API,
 * and the configuration's check of [http] token_file) and lbagentctl all
 * must, and compared in time that does not depend on its bytes.
 */
#ifndef LBAGENT_HTTP_API_TOKEN_H
#define LBAGENT_HTTP_API_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define HTTP_TOKEN_MAX		512
#define HTTP_TOKEN_MAX_TEXT	"512"

/*
 * Reads a token file, as the daemon and lbagentctl both must: its first
 * line, blanks around it dropped, 1 to HTTP_TOKEN_MAX bytes, into buf
 * (HTTP_TOKEN_MAX + 1 bytes). Returns its length, or -1 with *why
 * (strerror, "empty", "longer than 512 bytes"). Wipes what it read.
 */
ssize_t		 http_api_token_read(const char *path, char *buf,
		    const char **why);

/* Compares in time that depends on the lengths only. */
bool		 http_api_token_equal(const char *a, size_t alen,
		    const char *b, size_t blen);

#endif
