/*
 * The bearer token's file, read as the daemon and lbagentctl both must:
 * the two would not agree otherwise.
 */
#ifndef LBAGENT_TOKEN_FILE_H
#define LBAGENT_TOKEN_FILE_H

#include <sys/types.h>

#define TOKEN_FILE_MAX		512
#define TOKEN_FILE_MAX_TEXT	"512"

/*
 * Reads a token file: its first line, blanks around it dropped, 1 to
 * TOKEN_FILE_MAX bytes, into buf (TOKEN_FILE_MAX + 1 bytes). Returns its
 * length, or -1 with *why (strerror, "empty", "longer than 512 bytes").
 * Wipes what it read.
 */
ssize_t	token_file_read(const char *path, char *buf, const char **why);

#endif
