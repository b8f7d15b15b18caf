/* Untrusted bytes made safe for replies, logs and JSON. */
#ifndef LBAGENT_TEXT_H
#define LBAGENT_TEXT_H

#include <stddef.h>

/* A reason carried after '#' in a reply: printable ASCII, at most 100 bytes. */
#define REASON_MAX	100

/*
 * Copies the first line of src (at most len bytes) into dst as a reason:
 * leading and trailing blanks dropped, other control and non-ASCII bytes
 * replaced by '?', cut at REASON_MAX bytes. Returns the length written.
 */
size_t	text_reason(char dst[REASON_MAX + 1], const char *src, size_t len);
/* The same, cut at max bytes; dst must hold max + 1. */
size_t	text_line(char *dst, size_t max, const char *src, size_t len);

/*
 * Escapes bytes for a log line or a JSON string: printable ASCII stays,
 * a backslash becomes "\\", anything else "\xHH". dst must hold
 * 4 * len + 1 bytes. Returns the length written.
 */
size_t	text_escape(char *dst, const char *src, size_t len);

/*
 * Reverses text_escape. Returns the number of bytes written (at most
 * size), or -1 when src is not something text_escape produced or does not
 * fit.
 */
long	text_unescape(char *dst, size_t size, const char *src);

#endif
