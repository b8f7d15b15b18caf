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
