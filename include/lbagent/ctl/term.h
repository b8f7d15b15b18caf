/*
 * lbagentctl: what it writes for people, safe for a terminal. Strings
 * from the daemon, its peers, HAProxy and files are escaped where they are
 * formatted (ctl_term_text); stdout and stderr themselves pass every byte
 * through the same escaper, keeping only '\n' and '\t' as they are, so
 * that a string not escaped where it was formatted still cannot reach the
 * terminal raw.
 */
#ifndef LBAGENT_CTL_TERM_H
#define LBAGENT_CTL_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/*
 * Whether the locale (LC_ALL, LC_CTYPE, LANG) says UTF-8: then printable
 * UTF-8 is shown as it is, else every byte from 0x80 up is escaped. The
 * program's own locale stays "C".
 */
bool	 ctl_term_locale_utf8(void);

/* Sets what ctl_term_text keeps: UTF-8 or ASCII only (the default). */
void	 ctl_term_set_utf8(bool utf8);

/*
 * Untrusted text for people into dst (size > 0), cut to whole escapes and
 * characters: text_term with the UTF-8 choice above.
 */
void	 ctl_term_text(char *dst, size_t size, const char *src);

/*
 * A stream writing to fd, every byte through the escaper ('\n', '\t' and
 * '\\' kept); a character cut between two writes is held until the next.
 * NULL on failure (errno set).
 */
FILE	*ctl_term_stream(int fd);

/*
 * Replaces stdout and stderr by such streams (stdout line-buffered on a
 * terminal, stderr by lines), closed at exit. -1 when it cannot.
 */
int	 ctl_term_setup(void);

/*
 * A JSON document on fp for people and programs: ASCII only (anything
 * else as \u escapes, DEL too), then a newline. -1 when out of memory.
 */
int	 ctl_term_json(FILE *fp, const json_t *doc, size_t flags);

#endif
