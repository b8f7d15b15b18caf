/*
 * Splitting a command line into argv the way a POSIX shell quotes words,
 * without a shell: no expansion, no redirection, no pipelines.
 */
#ifndef LBAGENT_ARGV_H
#define LBAGENT_ARGV_H

#include <stddef.h>

/*
 * Splits s into words: blanks separate them; 'single quotes' keep
 * everything literally; "double quotes" keep everything but a backslash
 * before one of " \ $ `; outside quotes a backslash keeps the next byte
 * literally. Shell syntax that would do something in a shell (| & ; < > ( )
 * ` $( ${ $NAME, or a newline) is refused unless quoted, since nothing
 * would do it here. *, ?, [, ~ and # are plain bytes.
 *
 * Returns the number of words (at least 1) and stores a NULL-terminated
 * vector for argv_free() in *argvp, or returns -1 and points *why at a
 * static explanation.
 */
int	argv_split(const char *s, char ***argvp, const char **why);
void	argv_free(char **argv);

#endif
