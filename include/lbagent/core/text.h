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

/* How text_term shows bytes: flags, or-ed. */
#define TEXT_TERM_UTF8		0x1	/* keep printable UTF-8 characters */
#define TEXT_TERM_LAYOUT	0x2	/* keep '\n' and '\t' as they are */
#define TEXT_TERM_RAW_BACKSLASH	0x4	/* keep '\\' (text escaped already) */

/* The size text_term needs for len bytes: nothing cut. */
#define TEXT_TERM_SIZE(len)	(4 * (size_t)(len) + 1)

/*
 * The length of the printable UTF-8 character that s (len bytes) starts
 * with: 2 to 4. 0 when s starts with something else: ASCII, a byte that
 * cannot start a character, an overlong form, a surrogate, a code point
 * above U+10FFFF, a C1 control (U+0080 to U+009F), or a format character
 * that reorders or breaks a line (bidirectional marks, embeddings,
 * overrides and isolates; U+2028, U+2029). -1 when the len bytes are the
 * valid start of a printable character cut short.
 */
int	text_utf8_char(const char *s, size_t len);

/*
 * Untrusted bytes as a terminal may show them: printable ASCII stays, a
 * backslash becomes "\\", anything else (C0 controls, DEL, bytes from
 * 0x80 up) "\xHH" for each byte, so that no byte can drive the terminal
 * and the text reads back unambiguously. With TEXT_TERM_UTF8, printable
 * UTF-8 characters (text_utf8_char) stay whole. At most size - 1 bytes are
 * written, never part of an escape or of a character; dst is always ended
 * (size > 0). Returns the length written.
 */
size_t	text_term(char *dst, size_t size, const char *src, size_t len,
	    unsigned flags);

#endif
