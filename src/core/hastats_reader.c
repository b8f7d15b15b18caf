/*
 * HAProxy's statistics read as they arrive. Bytes are taken one record at
 * a time: a small state machine finds where a record ends (a newline
 * outside quotes, as hastats_csv_field reads quotes), and only a record
 * that may be kept is copied; a row's pxname, once read, says whether the
 * rest of it is copied or only counted. A complete record is then read by
 * the same code as hastats_find, so both give the same rows. What is kept
 * is the rows of the backends asked for, each cut to a hastats_row.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/hastats_reader.h"
#include "hastats_impl.h"

/* Where the reader stands in the answer. */
enum mode {
	MODE_HEADER,	/* before the end of the CSV's header line */
	MODE_CSV,	/* in the CSV's rows */
	MODE_STATE,	/* in the servers state after the CSV */
	MODE_BAD,	/* malformed: the rest is only counted */
	MODE_FAILED,	/* over a limit, or out of memory */
};

/* Where a record's current field stands (record ends only at Q_START..). */
enum quote {
	Q_START,	/* at a field's first byte */
	Q_PLAIN,	/* in a field without quotes */
	Q_QUOTED,	/* inside quotes */
	Q_QUOTE,	/* a quote inside quotes: closing, or the first of '""' */
};

/* A row kept. */
struct entry {
	size_t			 backend;	/* in the table's backends */
	char			 server[HASTATS_NAME_MAX];
	struct hastats_row	 row;
	const char		*why;		/* the row is malformed */
	long			 iweight;	/* servers state; -1: none */
	bool			 state_seen;
};

struct hastats_table {
	char		**backends;
	size_t		  nbackends;
	const char	 *bad;		/* every look-up fails with this */
	struct entry	 *rows;
	size_t		  n, cap;
};

struct hastats_reader {
	struct hastats_limits	 lim;
	struct hastats_table	*t;
	enum mode		 mode;
	enum quote		 q;
	bool			 lead;		/* the header's "# " */
	bool			 absent;	/* a backend not on the LB */
	bool			 skip;		/* a row not kept: count only */
	size_t			 col[HASTATS_COL_COUNT];
	size_t			 field;		/* the field being read */
	size_t			 field_start;	/* its first byte, in line */
	size_t			 reclen;	/* the record's bytes so far */
	char			*line;		/* the record, when copied */
	size_t			 len, room;
	size_t			 total;
	bool			 st_header, st_usable;
	size_t			 st_be, st_srv, st_iw;
	size_t			*w_be;		/* "get weight" answers due: */
	char			**w_srv;	/* their backends and servers */
	size_t			 nw, w_next;
	char			 error[96];
};

static const struct hastats_limits defaults = {
	HASTATS_BYTES_MAX, HASTATS_LINE_MAX, HASTATS_ROWS_MAX,
};

void
hastats_table_free(struct hastats_table *t)
{
	size_t	i;

	if (t == NULL)
		return;
	for (i = 0; i < t->nbackends; i++)
		free(t->backends[i]);
	free(t->backends);
	free(t->rows);
	free(t);
}

struct hastats_reader *
hastats_reader_new(const char *const *backends, size_t nbackends,
    const struct hastats_limits *lim)
{
	struct hastats_reader	*r;
	size_t			 i;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->lim = lim != NULL ? *lim : defaults;
	r->lead = true;
	if ((r->t = calloc(1, sizeof(*r->t))) == NULL ||
	    (r->t->backends = calloc(nbackends ? nbackends : 1,
	    sizeof(char *))) == NULL)
		goto error;
	for (i = 0; i < nbackends; i++) {
		if ((r->t->backends[i] = strdup(backends[i])) == NULL)
			goto error;
		r->t->nbackends++;
	}
	return r;
error:
	hastats_reader_free(r);
	return NULL;
}

void
hastats_reader_free(struct hastats_reader *r)
{
	if (r == NULL)
		return;
	hastats_table_free(r->t);
	free(r->line);
	for (; r->nw > 0; r->nw--)
		free(r->w_srv[r->nw - 1]);
	free(r->w_srv);
	free(r->w_be);
	free(r);
}

int
hastats_reader_weights(struct hastats_reader *r, const char *const *backends,
    const char *const *servers, size_t n)
{
	size_t	i, k;

	if ((r->w_be = calloc(n ? n : 1, sizeof(*r->w_be))) == NULL ||
	    (r->w_srv = calloc(n ? n : 1, sizeof(*r->w_srv))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		for (k = 0; k < r->t->nbackends; k++)
			if (strcmp(r->t->backends[k], backends[i]) == 0)
				break;
		if (k == r->t->nbackends ||
		    (r->w_srv[i] = strdup(servers[i])) == NULL)
			return -1;
		r->w_be[i] = k;
		r->nw++;
	}
	return 0;
}

/* "8 MiB", "64 KiB" or "100 bytes". */
static void
size_text(char *buf, size_t size, size_t n)
{
	if (n >= 1024 * 1024 && n % (1024 * 1024) == 0)
		snprintf(buf, size, "%zu MiB", n / (1024 * 1024));
	else if (n >= 1024 && n % 1024 == 0)
		snprintf(buf, size, "%zu KiB", n / 1024);
	else
		snprintf(buf, size, "%zu bytes", n);
}

/* Over a limit (what, then its size) or out of memory (what only). */
static int
fail(struct hastats_reader *r, const char *what, size_t n, const char **why)
{
	char	sz[32];

	if (n == 0)
		snprintf(r->error, sizeof(r->error), "%s", what);
	else {
		size_text(sz, sizeof(sz), n);
		snprintf(r->error, sizeof(r->error), "%s %s", what, sz);
	}
	r->mode = MODE_FAILED;
	*why = r->error;
	return -1;
}

static void
bad(struct hastats_reader *r, const char *why)
{
	r->t->bad = why;
	r->mode = MODE_BAD;
}

/* The backend asked for that f names, or -1. */
static long
backend_of(const struct hastats_table *t, const struct hastats_field *f)
{
	size_t	k;

	for (k = 0; k < t->nbackends; k++)
		if (hastats_csv_eq(f, t->backends[k]))
			return (long)k;
	return -1;
}

/* A field ends: once pxname is read, whether the row is kept. */
static void
field_done(struct hastats_reader *r)
{
	struct hastats_scan	s = { r->line + r->field_start,
				    r->line + r->len };
	struct hastats_field	f;
	const char		*why;

	if (r->mode == MODE_CSV && !r->skip &&
	    r->field == r->col[HASTATS_COL_PXNAME] &&
	    !(r->len >= 8 && memcmp(r->line, "# be_id ", 8) == 0) &&
	    hastats_csv_field(&s, &f, &why) == HASTATS_END_COMMA &&
	    backend_of(r->t, &f) == -1) {
		r->skip = true;
		r->len = 0;
	}
	r->field++;
	r->field_start = r->len;
}

/* A CSV row, complete: kept when it is a server of a backend asked for. */
static int
csv_row(struct hastats_reader *r, const char **why)
{
	struct hastats_scan	 s = { r->line, r->line + r->len };
	struct hastats_field	 got[HASTATS_COL_COUNT];
	bool			 have[HASTATS_COL_COUNT];
	struct hastats_table	*t = r->t;
	struct entry		*e, *grown;
	enum hastats_end	 end;
	const char		*err;
	char			 name[HASTATS_NAME_MAX];
	size_t			 n, cap;
	long			 k;

	if ((end = hastats_csv_record(&s, r->col, got, have, &err)) ==
	    HASTATS_END_BAD) {
		bad(r, err);
		return 0;
	}
	if (end == HASTATS_END_DATA) {
		bad(r, "cut short");
		return 0;
	}
	if (!have[HASTATS_COL_PXNAME] || !have[HASTATS_COL_SVNAME] ||
	    (k = backend_of(t, &got[HASTATS_COL_PXNAME])) == -1)
		return 0;
	/* A name longer than kept, or with a NUL, is no name looked up. */
	n = hastats_csv_text(&got[HASTATS_COL_SVNAME], name, sizeof(name));
	if (n == sizeof(name) - 1 || strlen(name) != n)
		return 0;
	if (t->n == r->lim.rows_max) {
		fail(r, "", 0, why);
		snprintf(r->error, sizeof(r->error), "more than %zu rows of "
		    "the backends read", r->lim.rows_max);
		return -1;
	}
	if (t->n == t->cap) {
		cap = t->cap ? t->cap * 2 : 16;
		if (cap > r->lim.rows_max)
			cap = r->lim.rows_max;
		if ((grown = realloc(t->rows, cap * sizeof(*grown))) == NULL)
			return fail(r, "out of memory", 0, why);
		t->rows = grown;
		t->cap = cap;
	}
	e = &t->rows[t->n++];
	memset(e, 0, sizeof(*e));
	e->backend = (size_t)k;
	memcpy(e->server, name, n + 1);
	e->iweight = -1;
	if (hastats_csv_row(got, have, r->col, &e->row, &err) == -1)
		e->why = err;
	return 0;
}

/* The next space-separated word of [*p, end); false at the end. */
static bool
next_word(const char **p, const char *end, const char **w, size_t *wlen)
{
	const char	*s = *p;

	while (s < end && *s == ' ')
		s++;
	if (s == end)
		return false;
	*w = s;
	while (s < end && *s != ' ')
		s++;
	*wlen = (size_t)(s - *w);
	*p = s;
	return true;
}

static bool
word_eq(const char *w, size_t wlen, const char *s)
{
	return strlen(s) == wlen && memcmp(w, s, wlen) == 0;
}

/* The servers state's header, as hastats_initial_weight reads it. */
static void
state_header(struct hastats_reader *r, const char *p, const char *end)
{
	const char	*w;
	size_t		 wlen, col;

	r->st_be = r->st_srv = r->st_iw = SIZE_MAX;
	for (col = 0, p += 2; next_word(&p, end, &w, &wlen); col++) {
		if (word_eq(w, wlen, "be_name"))
			r->st_be = col;
		else if (word_eq(w, wlen, "srv_name"))
			r->st_srv = col;
		else if (word_eq(w, wlen, "srv_iweight"))
			r->st_iw = col;
	}
	r->st_header = true;
	r->st_usable = r->st_be != SIZE_MAX && r->st_srv != SIZE_MAX &&
	    r->st_iw != SIZE_MAX;
}

/* One line of the servers state: a kept server's configured weight. */
static void
state_line(struct hastats_reader *r, const char *p, size_t len)
{
	const char	*end = p + len, *w, *be = NULL, *srv = NULL, *iw = NULL;
	size_t		 wlen, col, be_len = 0, srv_len = 0, iw_len = 0, i;
	struct entry	*e;
	char		 num[24], *stop;
	long		 v = -1;

	if (!r->st_header) {
		if (len >= 2 && p[0] == '#' && p[1] == ' ')
			state_header(r, p, end);
		return;	/* else the version line */
	}
	/* A later servers state's version line and header (one a backend). */
	if (!r->st_usable || (len >= 2 && p[0] == '#' && p[1] == ' '))
		return;
	for (col = 0; next_word(&p, end, &w, &wlen); col++)
		if (col == r->st_be) {
			be = w;
			be_len = wlen;
		} else if (col == r->st_srv) {
			srv = w;
			srv_len = wlen;
		} else if (col == r->st_iw) {
			iw = w;
			iw_len = wlen;
		}
	if (be == NULL || srv == NULL)
		return;
	for (i = 0; i < r->t->n; i++) {
		e = &r->t->rows[i];
		if (word_eq(srv, srv_len, e->server) &&
		    word_eq(be, be_len, r->t->backends[e->backend]))
			break;
	}
	/* The first line for a server says; later ones do not. */
	if (i == r->t->n || e->state_seen)
		return;
	e->state_seen = true;
	if (iw != NULL && iw_len < sizeof(num)) {
		memcpy(num, iw, iw_len);
		num[iw_len] = '\0';
		v = strtol(num, &stop, 10);
		if (*stop != '\0' || v < 0)
			v = -1;
	}
	e->iweight = v;
}

/*
 * Before any header: what the Runtime API answers, one backend a command
 * ("show stat BE 4 -1;...;show servers state BE;..."), for a backend it
 * does not have, the blank line after each command's answer, and, after
 * such an answer, the version line of a servers state. Such records are
 * passed over; anything else must be the CSV's header.
 */
static bool
header_skip(struct hastats_reader *r)
{
	size_t	n = r->len, i;

	while (n > 0 && (r->line[n - 1] == '\n' || r->line[n - 1] == '\r'))
		n--;
	if ((n == 14 && memcmp(r->line, "No such proxy.", 14) == 0) ||
	    (n == 19 && memcmp(r->line, "Can't find backend.", 19) == 0)) {
		r->absent = true;
		return true;
	}
	if (n == 0)
		return r->absent;
	/* The line is no string: count its digits within its n bytes. */
	for (i = 0; i < n && r->line[i] >= '0' && r->line[i] <= '9'; i++)
		;
	return r->absent && i == n;
}

/* Digits only, at least one, within [p, p + n): their value, else -1. */
static long
digits(const char *p, size_t n)
{
	long	v = 0;
	size_t	i;

	if (n == 0 || n > 9)
		return -1;
	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	return v;
}

/*
 * The answer to the next "get weight BE/SERVER" due: "N (initial M)", or
 * the error it gives for a server or backend not there. The configured
 * weight, M, is the server's (its row read before it, in the same
 * answer); an error leaves it unknown. False: not such an answer.
 */
static bool
weight_line(struct hastats_reader *r)
{
	static const char	 mid[] = " (initial ";
	const char		*p = r->line, *sp;
	size_t			 n = r->len, i;
	long			 iw = -1;

	while (n > 0 && (p[n - 1] == '\n' || p[n - 1] == '\r'))
		n--;
	if (r->w_next == r->nw || n < 2)
		return false;
	if ((sp = memchr(p, ' ', n)) != NULL && digits(p, (size_t)(sp - p)) >=
	    0 && (size_t)(p + n - sp) > sizeof(mid) && memcmp(sp, mid,
	    sizeof(mid) - 1) == 0 && p[n - 1] == ')')
		iw = digits(sp + sizeof(mid) - 1, (size_t)(p + n - 1 - sp) -
		    (sizeof(mid) - 1));
	if (iw == -1 && !((n == 15 && memcmp(p, "No such server.", 15) == 0) ||
	    (n == 16 && memcmp(p, "No such backend.", 16) == 0)))
		return false;
	for (i = 0; iw != -1 && i < r->t->n; i++) {
		struct entry *e = &r->t->rows[i];

		if (e->backend == r->w_be[r->w_next] &&
		    strcmp(e->server, r->w_srv[r->w_next]) == 0) {
			e->iweight = iw;
			e->state_seen = true;
			break;
		}
	}
	r->w_next++;
	return true;
}

/* A record is complete (its newline included in line, when copied). */
static int
record_done(struct hastats_reader *r, const char **why)
{
	struct hastats_scan	 s = { r->line, r->line + r->len };
	const char		*err;
	int			 rv = 0;

	if (r->skip)
		;
	else if (r->mode != MODE_STATE && weight_line(r))
		r->lead = r->mode == MODE_HEADER;
	else if (r->mode == MODE_STATE)
		state_line(r, r->line, r->len - 1);
	else if (r->mode == MODE_HEADER && header_skip(r))
		r->lead = true;		/* the next record may be the header */
	else if (r->mode == MODE_HEADER && r->absent && r->len >= 8 &&
	    memcmp(r->line, "# be_id ", 8) == 0) {
		r->mode = MODE_STATE;	/* no CSV: none of the backends */
		state_line(r, r->line, r->len - 1);
	} else if (r->mode == MODE_HEADER) {
		if (hastats_csv_header(&s, r->col, &err) == -1)
			bad(r, err);
		else
			r->mode = MODE_CSV;
	} else if (r->len >= 8 && memcmp(r->line, "# be_id ", 8) == 0) {
		r->mode = MODE_STATE;
		state_line(r, r->line, r->len - 1);
	} else
		rv = csv_row(r, why);
	r->q = Q_START;
	r->skip = false;
	r->len = r->reclen = r->field = r->field_start = 0;
	return rv;
}

/* Room for one byte more in line (line_max bounds it). */
static int
line_grow(struct hastats_reader *r)
{
	size_t	 room = r->room ? r->room * 2 : 1024;
	char	*p;

	if (room > r->lim.line_max)
		room = r->lim.line_max;
	if ((p = realloc(r->line, room)) == NULL)
		return -1;
	r->line = p;
	r->room = room;
	return 0;
}

/*
 * A CSV row's bytes that the state machine would only pass over, taken
 * at once: once the row is known to be skipped or its pxname is read, a
 * run of bytes with no '"' and no newline changes nothing but where the
 * field stands (after a ',' or inside one). Returns how many bytes it
 * took (0: the next byte needs the state machine).
 */
static size_t
plain_run(struct hastats_reader *r, const char *data, size_t len)
{
	const char	*nl, *quote;
	size_t		 n;

	if (r->mode != MODE_CSV || r->lead || r->q == Q_QUOTED ||
	    r->q == Q_QUOTE || (!r->skip &&
	    (r->col[HASTATS_COL_PXNAME] == HASTATS_COL_NONE ||
	    r->field <= r->col[HASTATS_COL_PXNAME])))
		return 0;
	if ((nl = memchr(data, '\n', len)) != NULL)
		len = (size_t)(nl - data);
	if ((quote = memchr(data, '"', len)) != NULL)
		len = (size_t)(quote - data);
	/* The byte past line_max is the state machine's, to be told. */
	n = r->lim.line_max - r->reclen;
	if (len > n)
		len = n;
	if (len == 0)
		return 0;
	if (!r->skip) {
		while (r->room - r->len < len)
			if (line_grow(r) == -1)
				return 0;	/* told by the next byte */
		memcpy(r->line + r->len, data, len);
		r->len += len;
	}
	r->reclen += len;
	r->q = data[len - 1] == ',' ? Q_START : Q_PLAIN;
	return len;
}

int
hastats_reader_feed(struct hastats_reader *r, const char *data, size_t len,
    const char **why)
{
	size_t	i, room = r->lim.bytes_max - r->total;
	bool	over = len > room;
	char	c;

	if (r->mode == MODE_FAILED) {
		*why = r->error;
		return -1;
	}
	/* The bytes within the limit first: the first limit met is told,
	 * however the answer came in pieces. */
	if (over)
		len = room;
	r->total += len;
	for (i = 0; i < len && r->mode != MODE_BAD; i++) {
		i += plain_run(r, data + i, len - i);
		if (i == len)
			break;
		c = data[i];
		if (++r->reclen > r->lim.line_max)
			return fail(r, "a statistics line longer than",
			    r->lim.line_max, why);
		if (!r->skip) {
			if (r->len == r->room && line_grow(r) == -1)
				return fail(r, "out of memory", 0, why);
			r->line[r->len++] = c;
		}
		if (r->mode == MODE_STATE) {
			if (c == '\n' && record_done(r, why) == -1)
				return -1;
			continue;
		}
		if (r->lead) {
			/* "# " before the first column name. */
			if ((c == '#' && r->reclen == 1) ||
			    (c == ' ' && r->reclen > 1 && r->line[0] == '#'))
				continue;
			r->lead = false;
		}
		switch (r->q) {
		case Q_QUOTED:
			if (c == '"')
				r->q = Q_QUOTE;
			continue;
		case Q_QUOTE:
		case Q_START:
			if (c == '"') {
				r->q = Q_QUOTED;
				continue;
			}
			break;
		case Q_PLAIN:
			break;
		}
		if (c == ',') {
			field_done(r);
			r->q = Q_START;
		} else if (c == '\n') {
			if (record_done(r, why) == -1)
				return -1;
		} else
			r->q = Q_PLAIN;
	}
	if (over)
		return fail(r, "statistics larger than", r->lim.bytes_max,
		    why);
	return 0;
}

struct hastats_table *
hastats_reader_finish(struct hastats_reader *r, const char **why)
{
	struct hastats_scan	 s = { "", "" };
	struct hastats_table	*t;
	const char		*err;

	if (r->line != NULL) {
		s.p = r->line;
		s.end = r->line + r->len;
	}
	if (r->mode == MODE_FAILED) {
		*why = r->error;
		return NULL;
	}
	if (r->mode == MODE_HEADER && r->absent && r->reclen == 0)
		;	/* none of the backends is there: none of their rows */
	else if (r->mode == MODE_HEADER) {
		/* Empty, or the header without its end: say which. */
		if (hastats_csv_header(&s, r->col, &err) == -1)
			bad(r, err);
		else
			bad(r, "cut short in the header");
	} else if (r->mode == MODE_STATE && r->reclen > 0)
		state_line(r, r->line, r->len);	/* no newline at the end */
	else if (r->mode == MODE_CSV && r->reclen > 0)
		bad(r, "cut short");
	t = r->t;
	r->t = NULL;
	return t;
}

/* The table's index of backend, or -1. */
static long
table_backend(const struct hastats_table *t, const char *backend)
{
	size_t	k;

	for (k = 0; k < t->nbackends; k++)
		if (strcmp(t->backends[k], backend) == 0)
			return (long)k;
	return -1;
}

int
hastats_table_find(const struct hastats_table *t, const char *backend,
    const char *server, struct hastats_row *row, const char **why)
{
	long	k = table_backend(t, backend);
	size_t	i;

	if (k == -1) {
		*why = "backend not read";
		return -1;
	}
	if (t->bad != NULL) {
		*why = t->bad;
		return -1;
	}
	for (i = 0; i < t->n; i++) {
		const struct entry *e = &t->rows[i];

		if (e->backend != (size_t)k || strcmp(e->server, server) != 0)
			continue;
		if (e->why != NULL) {
			*why = e->why;
			return -1;
		}
		*row = e->row;
		return 1;
	}
	return 0;
}

int
hastats_table_each(const struct hastats_table *t, const char *backend,
    int (*fn)(void *, const char *, const struct hastats_row *), void *arg,
    const char **why)
{
	long	k = table_backend(t, backend);
	size_t	i;

	if (k == -1) {
		*why = "backend not read";
		return -1;
	}
	if (t->bad != NULL) {
		*why = t->bad;
		return -1;
	}
	for (i = 0; i < t->n; i++) {
		const struct entry *e = &t->rows[i];

		if (e->backend != (size_t)k || strcmp(e->server,
		    "BACKEND") == 0 || strcmp(e->server, "FRONTEND") == 0)
			continue;
		if (e->why != NULL) {
			*why = e->why;
			return -1;
		}
		if (fn(arg, e->server, &e->row) != 0)
			break;
	}
	return 0;
}

long
hastats_table_initial_weight(const struct hastats_table *t,
    const char *backend, const char *server)
{
	long	k = table_backend(t, backend);
	size_t	i;

	if (k == -1 || t->bad != NULL)
		return -1;
	for (i = 0; i < t->n; i++)
		if (t->rows[i].backend == (size_t)k &&
		    strcmp(t->rows[i].server, server) == 0)
			return t->rows[i].iweight;
	return -1;
}

size_t
hastats_table_rows(const struct hastats_table *t)
{
	return t->n;
}

int
hastats_table_merge(struct hastats_table *dst, const struct hastats_table *src)
{
	struct entry	*grown;
	size_t		 i, j;
	long		 k, iw;
	bool		 seen;

	for (i = 0; i < src->n; i++) {
		const struct entry *e = &src->rows[i];

		if ((k = table_backend(dst, src->backends[e->backend])) == -1)
			continue;
		for (j = 0; j < dst->n; j++)
			if (dst->rows[j].backend == (size_t)k &&
			    strcmp(dst->rows[j].server, e->server) == 0)
				break;
		if (j == dst->n && dst->n == dst->cap) {
			if ((grown = realloc(dst->rows, (dst->cap + 16) *
			    sizeof(*grown))) == NULL)
				return -1;
			dst->rows = grown;
			dst->cap += 16;
		}
		if (j == dst->n) {
			dst->n++;
			dst->rows[j].iweight = -1;
			dst->rows[j].state_seen = false;
		}
		/* A configured weight src does not give stays dst's. */
		iw = e->state_seen ? e->iweight : dst->rows[j].iweight;
		seen = e->state_seen || dst->rows[j].state_seen;
		dst->rows[j] = *e;
		dst->rows[j].backend = (size_t)k;
		dst->rows[j].iweight = iw;
		dst->rows[j].state_seen = seen;
	}
	return 0;
}
