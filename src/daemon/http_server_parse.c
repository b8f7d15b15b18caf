/*
 * The HTTP API's request parser: the head, parsed in place, strict
 * HTTP/1.1 only (CR LF line ends, no NUL, no folded headers, a method and
 * header names of token characters, a bounded Content-Length), then
 * handed to the server's owner (its route hook).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lbagent/daemon/http_server.h"

#include "http_server_impl.h"

/* The next line of the head, its CR LF or LF cut; NULL after the last. */
static char *
next_line(char **p, char *end)
{
	char	*line = *p, *nl;

	if (line >= end)
		return NULL;
	if ((nl = memchr(line, '\n', (size_t)(end - line))) == NULL)
		nl = end;
	*nl = '\0';
	if (nl > line && nl[-1] == '\r')
		nl[-1] = '\0';
	*p = nl + 1;
	return line;
}

static bool
is_tchar(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9') || strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

static bool
is_token(const char *s, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++)
		if (!is_tchar((unsigned char)s[i]))
			return false;
	return len > 0;
}

/*
 * What is wrong with a head in bytes (NULL: nothing): every line ends in
 * CR LF, and no NUL anywhere. A bare LF or CR, which some servers take as
 * a line end and others do not, is how one request is read as two by a
 * proxy and by us; a NUL would cut a value where a proxy sees more.
 */
static const char *
head_unclean(const char *p, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++) {
		if (p[i] == '\0')
			return "NUL in the request head";
		if (p[i] == '\r' && (i + 1 == len || p[i + 1] != '\n'))
			return "bare CR in the request head (lines end in CR LF)";
		if (p[i] == '\n' && (i == 0 || p[i - 1] != '\r'))
			return "bare LF in the request head (lines end in CR LF)";
	}
	return NULL;
}

/*
 * Parses the head (the first len bytes of c->in, ending in an empty line)
 * and queues the reply. A body is never needed: it is read and dropped
 * after the reply, as is anything else the client sends.
 */
void
http_server_parse(struct http_conn *c, size_t len)
{
	struct http_req	 r = { c, false, NULL, NULL, NULL };
	char		*p = c->in, *end = c->in + len, *line, *sp, *colon;
	char		*v, *e;
	const char	*why;
	unsigned long	 clen;

	if ((why = head_unclean(c->in, len)) != NULL) {
		http_server_error(&r, 400, "Bad Request", why);
		return;
	}
	while (p < end && (*p == '\r' || *p == '\n'))
		p++;
	/* The request line: METHOD SP TARGET SP HTTP/1.x */
	if ((line = next_line(&p, end)) == NULL ||
	    (sp = strchr(line, ' ')) == NULL) {
		http_server_error(&r, 400, "Bad Request", "malformed request line");
		return;
	}
	*sp = '\0';
	r.method = line;
	r.target = sp + 1;
	r.head = strcmp(r.method, "HEAD") == 0;
	if ((sp = strchr(sp + 1, ' ')) == NULL || sp == r.target ||
	    !is_token(r.method, strlen(r.method)) ||
	    strncmp(sp + 1, "HTTP/1.", 7) != 0 || sp[8] < '0' || sp[8] > '9' ||
	    sp[9] != '\0') {
		http_server_error(&r, 400, "Bad Request", "malformed request line");
		return;
	}
	*sp = '\0';
	while ((line = next_line(&p, end)) != NULL && line[0] != '\0') {
		if (line[0] == ' ' || line[0] == '\t') {
			http_server_error(&r, 400, "Bad Request", "obsolete line "
			    "folding (a header line begins with a blank)");
			return;
		}
		if ((colon = strchr(line, ':')) == NULL ||
		    !is_token(line, (size_t)(colon - line))) {
			http_server_error(&r, 400, "Bad Request", "malformed header");
			return;
		}
		*colon = '\0';
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		for (e = v + strlen(v); e > v && (e[-1] == ' ' ||
		    e[-1] == '\t'); e--)
			;
		*e = '\0';
		if (strcasecmp(line, "Authorization") == 0)
			r.auth = v;
		else if (strcasecmp(line, "Content-Length") == 0) {
			if (v[0] < '0' || v[0] > '9' || (errno = 0,
			    clen = strtoul(v, &e, 10), *e != '\0') ||
			    errno == ERANGE) {
				http_server_error(&r, 400, "Bad Request",
				    "malformed Content-Length");
				return;
			}
			if (clen > HTTP_MAX_BODY_BYTES) {
				http_server_error(&r, 413, "Payload Too Large",
				    "at most " HTTP_MAX_BODY_TEXT " bytes of body");
				return;
			}
		}
	}
	c->srv->hooks.route(&r, c->srv->hooks.arg);
}
