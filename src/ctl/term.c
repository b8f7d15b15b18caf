/*
 * lbagentctl's output for people, escaped on its way out: a glibc cookie
 * stream around each of stdout and stderr runs every byte any printf
 * writes through text_term, so that no byte a peer, HAProxy, a file or
 * the daemon sent can drive the terminal, whichever path printed it.
 */
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lbagent/core/text.h"
#include "lbagent/ctl/term.h"

#define CHUNK	1024	/* bytes escaped at a time */

struct term_out {
	int		fd;
	unsigned char	held[4];	/* a character cut by a write */
	size_t		nheld;
};

static bool	utf8_on;

bool
ctl_term_locale_utf8(void)
{
	const char	*cs;
	bool		 utf8 = false;

	if (setlocale(LC_CTYPE, "") != NULL) {
		cs = nl_langinfo(CODESET);
		utf8 = cs != NULL && (strcmp(cs, "UTF-8") == 0 ||
		    strcmp(cs, "utf8") == 0);
	}
	setlocale(LC_CTYPE, "C");
	return utf8;
}

void
ctl_term_set_utf8(bool utf8)
{
	utf8_on = utf8;
}

void
ctl_term_text(char *dst, size_t size, const char *src)
{
	if (size == 0)
		return;
	text_term(dst, size, src != NULL ? src : "", src != NULL ?
	    strlen(src) : 0, utf8_on ? TEXT_TERM_UTF8 : 0);
}

/* Writes all of buf to fd. */
static int
write_all(int fd, const char *buf, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		if ((n = write(fd, buf, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Escapes len bytes of src to t->fd, in chunks. */
static int
put(struct term_out *t, const char *src, size_t len)
{
	unsigned	flags = TEXT_TERM_LAYOUT | TEXT_TERM_RAW_BACKSLASH |
			    (utf8_on ? TEXT_TERM_UTF8 : 0);
	char		out[TEXT_TERM_SIZE(CHUNK)];
	size_t		n, take;
	int		u;

	while (len > 0) {
		take = len < CHUNK ? len : CHUNK;
		/* A chunk ends on a whole character, where there is one. */
		if (take < len && utf8_on)
			for (n = 1; n < 4 && n < take; n++)
				if (((unsigned char)src[take - n] & 0xc0) != 0x80) {
					if ((u = text_utf8_char(src + take - n,
					    len - (take - n))) > 0 &&
					    (size_t)u > n)
						take -= n;
					break;
				}
		n = text_term(out, sizeof(out), src, take, flags);
		if (write_all(t->fd, out, n) == -1)
			return -1;
		src += take;
		len -= take;
	}
	return 0;
}

/*
 * The cookie's write: what was held, then buf, with a valid start of a
 * character at its end held for the next write.
 */
static ssize_t
term_write(void *cookie, const char *buf, size_t size)
{
	struct term_out	*t = cookie;
	size_t		 len = size, k;

	if (t->nheld > 0) {
		/* The held start and what completes it, as one. */
		unsigned char	join[8];
		size_t		need = 0, n;

		memcpy(join, t->held, t->nheld);
		n = t->nheld;
		while (n < sizeof(join) - 4 && need < len &&
		    text_utf8_char((char *)join, n) < 0)
			join[n++] = (unsigned char)buf[need++];
		if (text_utf8_char((char *)join, n) < 0 && need == len) {
			/* Still cut short: hold it all. */
			memcpy(t->held, join, n);
			t->nheld = n;
			return (ssize_t)size;
		}
		t->nheld = 0;
		if (put(t, (char *)join, n) == -1)
			return -1;
		buf += need;
		len -= need;
	}
	if (utf8_on)
		for (k = 1; k <= 3 && k <= len; k++)
			if (text_utf8_char(buf + len - k, k) < 0) {
				memcpy(t->held, buf + len - k, k);
				t->nheld = k;
				len -= k;
				break;
			}
	if (put(t, buf, len) == -1)
		return -1;
	return (ssize_t)size;
}

/* What is still held was cut short for good: escaped, then gone. */
static int
term_close(void *cookie)
{
	struct term_out	*t = cookie;
	int		 rc = 0;

	if (t->nheld > 0)
		rc = put(t, (char *)t->held, t->nheld);
	free(t);
	return rc;
}

FILE *
ctl_term_stream(int fd)
{
	cookie_io_functions_t	 io = { .write = term_write,
				    .close = term_close };
	struct term_out		*t;
	FILE			*fp;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->fd = fd;
	if ((fp = fopencookie(t, "w", io)) == NULL)
		free(t);
	return fp;
}

static void
term_close_std(void)
{
	fclose(stdout);
	fclose(stderr);
}

int
ctl_term_setup(void)
{
	FILE	*out, *err;

	ctl_term_set_utf8(ctl_term_locale_utf8());
	fflush(stdout);
	fflush(stderr);
	if ((out = ctl_term_stream(STDOUT_FILENO)) == NULL)
		return -1;
	if ((err = ctl_term_stream(STDERR_FILENO)) == NULL) {
		fclose(out);
		return -1;
	}
	setvbuf(out, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
	setvbuf(err, NULL, _IOLBF, BUFSIZ);
	/* glibc's stdout and stderr are variables made to be set. */
	stdout = out;
	stderr = err;
	atexit(term_close_std);
	return 0;
}

int
ctl_term_json(FILE *fp, const json_t *doc, size_t flags)
{
	char	*text, *p;

	if ((text = json_dumps(doc, flags | JSON_ENSURE_ASCII)) == NULL)
		return -1;
	/* jansson leaves DEL as it is; JSON allows its escape. */
	for (p = text; *p != '\0'; p++) {
		if (*p == 0x7f)
			fputs("\\u007f", fp);
		else
			fputc(*p, fp);
	}
	fputc('\n', fp);
	free(text);
	return 0;
}
