/*
 * lbagentctl: the pieces of a status document every command's output
 * reads (fmt.c): its strings, printable, and its services by name.
 */
#ifndef LBAGENT_CTL_FMT_STRINGS_H
#define LBAGENT_CTL_FMT_STRINGS_H

#include <stddef.h>

#include <jansson.h>

/* A string member of obj, "" when it is missing or not a string. */
const char	*ctl_json_str(const json_t *obj, const char *key);

/*
 * Untrusted text (a status document's) made printable into dst, cut to
 * size - 1 bytes at a whole escape or character: ctl_term_text.
 */
void		 ctl_printable(char *dst, size_t size, const char *src);

/* The service object of that name in a /status document, or NULL. */
const json_t	*ctl_service(const json_t *root, const char *name);

/* "(default)" for "", the name otherwise. */
const char	*ctl_service_label(const char *name);

#endif
