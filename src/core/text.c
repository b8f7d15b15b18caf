/* Turning untrusted bytes into text that can go anywhere. */
#include <string.h>

#include "lbagent/core/text.h"

static int
printable(unsigned char c)
{
	return c >= 0x20 && c < 0x7f;
}

size_t
text_reason(char dst[REASON_MAX + 1], const char *src, size_t len)
{
	return text_line(dst, REASON_MAX, src, len);
}

size_t
text_line(char *dst, size_t max, const char *src, size_t len)
{
	const unsigned char	*s = (const unsigned char *)src;
	size_t			 i, n = 0, end;

	/* Only the first line counts; tabs read as blanks. */
	for (end = 0; end < len && s[end] != '\n' && s[end] != '\r'; end++)
		;
	for (i = 0; i < end && (s[i] == ' ' || s[i] == '\t'); i++)
		;
	for (; i < end && n < max; i++) {
		if (s[i] == '\t')
			dst[n++] = ' ';
		else
			dst[n++] = printable(s[i]) ? (char)s[i] : '?';
	}
	while (n > 0 && dst[n - 1] == ' ')
		n--;
	dst[n] = '\0';
	return n;
}

size_t
text_escape(char *dst, const char *src, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char	*s = (const unsigned char *)src;
	size_t			 i, n = 0;

	for (i = 0; i < len; i++) {
		if (s[i] == '\\') {
			dst[n++] = '\\';
			dst[n++] = '\\';
		} else if (printable(s[i]) && s[i] != '"') {
			dst[n++] = (char)s[i];
		} else {
			dst[n++] = '\\';
			dst[n++] = 'x';
			dst[n++] = hex[s[i] >> 4];
			dst[n++] = hex[s[i] & 0xf];
		}
	}
	dst[n] = '\0';
	return n;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

long
text_unescape(char *dst, size_t size, const char *src)
{
	size_t	n = 0;
	int	hi, lo;

	while (*src != '\0') {
		if (n == size)
			return -1;
		if (*src != '\\') {
			if (!printable((unsigned char)*src) || *src == '"')
				return -1;
			dst[n++] = *src++;
			continue;
		}
		if (src[1] == '\\') {
			dst[n++] = '\\';
			src += 2;
			continue;
		}
		if (src[1] != 'x' || (hi = hexval(src[2])) == -1 ||
		    (lo = hexval(src[3])) == -1)
			return -1;
		dst[n++] = (char)(hi << 4 | lo);
		src += 4;
	}
	return (long)n;
}

/* A format character that reorders or breaks a terminal's line. */
static int
line_format(unsigned long cp)
{
	return cp == 0x061c || cp == 0x200e || cp == 0x200f ||
	    (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

int
text_utf8_char(const char *src, size_t len)
{
	const unsigned char	*s = (const unsigned char *)src;
	unsigned long		 cp, min;
	size_t			 n, i;

	if (len == 0)
		return 0;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
		min = 0x80;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
		min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
		min = 0x10000;
	} else
		return 0;	/* ASCII, a continuation, 0xc0, 0xc1, 0xf5.. */
	for (i = 1; i < n; i++) {
		if (i == len) {
			/* Cut short: valid so far, unless already too small. */
			cp <<= 6 * (n - i);
			if (n == 3 && i == 2 && cp < min)
				return 0;
			if (n == 4 && i >= 2 && (cp < min || cp > 0x10ffff))
				return 0;
			if (n == 3 && i == 2 && cp >= 0xd800 && cp <= 0xdfff)
				return 0;
			return -1;
		}
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
		/* The second byte settles overlongs, surrogates, the top. */
		if (i == 1 && n == 3 && ((cp << 6) < min ||
		    ((cp << 6) >= 0xd800 && (cp << 6) <= 0xdfff)))
			return 0;
		if (i == 1 && n == 4 && ((cp << 12) < min ||
		    (cp << 12) > 0x10ffff))
			return 0;
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
	    cp <= 0x9f || line_format(cp))
		return 0;
	return (int)n;
}

size_t
text_term(char *dst, size_t size, const char *src, size_t len,
    unsigned flags)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char	*s = (const unsigned char *)src;
	size_t			 i = 0, n = 0;
	int			 u;

	if (size == 0)
		return 0;
	while (i < len) {
		unsigned char	c = s[i];

		if ((printable(c) && c != '\\') || (c == '\\' &&
		    (flags & TEXT_TERM_RAW_BACKSLASH)) || ((c == '\n' ||
		    c == '\t') && (flags & TEXT_TERM_LAYOUT))) {
			if (n + 1 >= size)
				break;
			dst[n++] = (char)c;
			i++;
		} else if (c == '\\') {
			if (n + 2 >= size)
				break;
			dst[n++] = '\\';
			dst[n++] = '\\';
			i++;
		} else if ((flags & TEXT_TERM_UTF8) &&
		    (u = text_utf8_char(src + i, len - i)) > 0) {
			if (n + (size_t)u >= size)
				break;
			memcpy(dst + n, src + i, (size_t)u);
			n += (size_t)u;
			i += (size_t)u;
		} else {
			if (n + 4 >= size)
				break;
			dst[n++] = '\\';
			dst[n++] = 'x';
			dst[n++] = hex[c >> 4];
			dst[n++] = hex[c & 0xf];
			i++;
		}
	}
	dst[n] = '\0';
	return n;
}
