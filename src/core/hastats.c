/*
 * HAProxy's statistics CSV, read in place. management.txt (section 9.1):
 * the first line is "# " then the column names; fields are separated by
 * commas and quoted with '"' only when they hold a comma or a quote ('""'
 * inside). Columns are found by name: the order of the static ones is
 * fixed, but those after the "-" column may come and go. HAProxy 2.6 has
 * "uweight" (the user weight: "set weight" and agent weights change it)
 * but no "iweight"; newer versions add "iweight", the configured weight.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/hastats.h"
#include "hastats_impl.h"
#include "lbagent/core/text.h"

static const struct {
	const char	*name;
	const char	*missing;	/* why, when required; NULL: optional */
} cols[HASTATS_COL_COUNT] = {
	[HASTATS_COL_PXNAME] = { "pxname", "the header has no pxname column" },
	[HASTATS_COL_SVNAME] = { "svname", "the header has no svname column" },
	[HASTATS_COL_STATUS] = { "status", "the header has no status column" },
	[HASTATS_COL_WEIGHT] = { "weight", "the header has no weight column" },
	[HASTATS_COL_IWEIGHT] = { "iweight", NULL },
	[HASTATS_COL_UWEIGHT] = { "uweight", NULL },
	[HASTATS_COL_AGENT_STATUS] = { "agent_status", NULL },
	[HASTATS_COL_AGENT_DESC] = { "agent_desc", NULL },
	[HASTATS_COL_SCUR] = { "scur", NULL },
	[HASTATS_COL_QCUR] = { "qcur", NULL },
	[HASTATS_COL_STOT] = { "stot", NULL },
	[HASTATS_COL_RTIME] = { "rtime", NULL },
	[HASTATS_COL_QTIME] = { "qtime", NULL },
	[HASTATS_COL_SID] = { "sid", NULL },
	[HASTATS_COL_HRSP_1XX] = { "hrsp_1xx", NULL },
	[HASTATS_COL_HRSP_2XX] = { "hrsp_2xx", NULL },
	[HASTATS_COL_HRSP_3XX] = { "hrsp_3xx", NULL },
	[HASTATS_COL_HRSP_4XX] = { "hrsp_4xx", NULL },
	[HASTATS_COL_HRSP_5XX] = { "hrsp_5xx", NULL },
	[HASTATS_COL_HRSP_OTHER] = { "hrsp_other", NULL },
};


/* Reads one field at s->p and steps past it and its separator. */
enum hastats_end
hastats_csv_field(struct hastats_scan *s, struct hastats_field *f,
    const char **why)
{
	const char	*q;

	f->quoted = s->p < s->end && *s->p == '"';
	if (!f->quoted) {
		f->p = s->p;
		while (s->p < s->end && *s->p != ',' && *s->p != '\n')
			s->p++;
		f->len = (size_t)(s->p - f->p);
		if (s->p == s->end)
			return HASTATS_END_DATA;
		/* A "\r\n" line end leaves no '\r' in the field. */
		if (*s->p == '\n' && f->len > 0 && f->p[f->len - 1] == '\r')
			f->len--;
		return *s->p++ == ',' ? HASTATS_END_COMMA : HASTATS_END_LINE;
	}
	f->p = s->p + 1;
	for (q = f->p;; q += 2) {
		if ((q = memchr(q, '"', (size_t)(s->end - q))) == NULL) {
			s->p = s->end;
			return HASTATS_END_DATA;
		}
		if (q + 1 == s->end || q[1] != '"')
			break;
	}
	f->len = (size_t)(q - f->p);
	s->p = q + 1;
	if (s->p < s->end && *s->p == '\r')
		s->p++;
	if (s->p == s->end)
		return HASTATS_END_DATA;
	if (s->p[-1] == '\r' && *s->p != '\n') {
		*why = "text after a closing quote";
		return HASTATS_END_BAD;
	}
	if (*s->p != ',' && *s->p != '\n') {
		*why = "text after a closing quote";
		return HASTATS_END_BAD;
	}
	return *s->p++ == ',' ? HASTATS_END_COMMA : HASTATS_END_LINE;
}

/* Copies f's text, quotes undone, cut at size - 1; returns its length. */
size_t
hastats_csv_text(const struct hastats_field *f, char *buf, size_t size)
{
	size_t	i, n = 0;

	for (i = 0; i < f->len && n + 1 < size; i++) {
		buf[n++] = f->p[i];
		/* Inside quotes, '""' stands for one '"'. */
		if (f->quoted && f->p[i] == '"')
			i++;
	}
	buf[n] = '\0';
	return n;
}

/* Whether f's text, quotes undone, is s. */
bool
hastats_csv_eq(const struct hastats_field *f, const char *s)
{
	size_t	i;

	for (i = 0; i < f->len; i++, s++) {
		if (*s == '\0' || f->p[i] != *s)
			return false;
		if (f->quoted && f->p[i] == '"')
			i++;
	}
	return *s == '\0';
}

/* A weight: digits, or empty for -1. */
static int
field_number(const struct hastats_field *f, long long *v)
{
	char	buf[24];
	size_t	i, n;

	if ((n = hastats_csv_text(f, buf, sizeof(buf))) == 0) {
		*v = -1;
		return 0;
	}
	if (n == sizeof(buf) - 1)
		return -1;
	for (*v = 0, i = 0; i < n; i++) {
		if (buf[i] < '0' || buf[i] > '9' ||
		    *v > (LLONG_MAX - (buf[i] - '0')) / 10)
			return -1;
		*v = *v * 10 + (buf[i] - '0');
	}
	return 0;
}

static int
field_weight(const struct hastats_field *f, long *v)
{
	long long	n;

	if (field_number(f, &n) == -1 || n > LONG_MAX)
		return -1;
	*v = (long)n;
	return 0;
}

/*
 * A count, which only informs: -1 when its column is not there, it is
 * empty, or it is not a number.
 */
static long long
field_count(const struct hastats_field *f, bool have, long long max)
{
	long long	n;

	if (!have || field_number(f, &n) == -1 || n > max)
		return -1;
	return n;
}

/*
 * The HTTP responses the server gave, every class summed; -1 unless
 * hrsp_2xx is a count (a TCP-mode server's are empty). A class that is
 * not a count adds nothing.
 */
static long long
responses(const struct hastats_field got[HASTATS_COL_COUNT],
    const bool have[HASTATS_COL_COUNT])
{
	long long	sum = 0, n;
	size_t		c;

	if (field_count(&got[HASTATS_COL_HRSP_2XX], have[HASTATS_COL_HRSP_2XX],
	    LLONG_MAX) == -1)
		return -1;
	for (c = HASTATS_COL_HRSP_1XX; c <= HASTATS_COL_HRSP_OTHER; c++)
		if ((n = field_count(&got[c], have[c], LLONG_MAX)) != -1) {
			if (n > LLONG_MAX - sum)
				return -1;
			sum += n;
		}
	return sum;
}

/* Shown text: quotes undone, first line, control bytes as '?'. */
static void
field_show(const struct hastats_field *f, char *dst, size_t size,
    bool in_progress)
{
	char		 buf[256];
	const char	*p = buf;
	size_t		 n;

	n = hastats_csv_text(f, buf, sizeof(buf));
	/* A check under way is "* L7OK": the last result, marked. */
	if (in_progress && n >= 2 && buf[0] == '*' && buf[1] == ' ') {
		p += 2;
		n -= 2;
	}
	text_line(dst, size - 1, p, n);
}

/* Reads the header line: where each column we want is. */
int
hastats_csv_header(struct hastats_scan *s, size_t col[HASTATS_COL_COUNT],
    const char **why)
{
	struct hastats_field	 f;
	enum hastats_end	 e;
	size_t		 i;
	int		 c;

	if (s->p == s->end || *s->p != '#') {
		*why = "not HAProxy statistics: no \"# pxname,svname,...\" "
		    "header";
		return -1;
	}
	for (s->p++; s->p < s->end && *s->p == ' '; s->p++)
		;
	for (c = 0; c < HASTATS_COL_COUNT; c++)
		col[c] = HASTATS_COL_NONE;
	for (i = 0;; i++) {
		if ((e = hastats_csv_field(s, &f, why)) == HASTATS_END_BAD)
			return -1;
		if (e == HASTATS_END_DATA) {
			*why = "cut short in the header";
			return -1;
		}
		for (c = 0; c < HASTATS_COL_COUNT; c++) {
			if (!hastats_csv_eq(&f, cols[c].name))
				continue;
			if (col[c] != HASTATS_COL_NONE) {
				*why = "a column appears twice in the header";
				return -1;
			}
			col[c] = i;
		}
		if (e == HASTATS_END_LINE)
			break;
	}
	for (c = 0; c < HASTATS_COL_COUNT; c++)
		if (col[c] == HASTATS_COL_NONE && cols[c].missing != NULL) {
			*why = cols[c].missing;
			return -1;
		}
	return 0;
}

enum hastats_end
hastats_csv_record(struct hastats_scan *s, const size_t col[HASTATS_COL_COUNT],
    struct hastats_field got[HASTATS_COL_COUNT], bool have[HASTATS_COL_COUNT],
    const char **why)
{
	struct hastats_field	 f;
	enum hastats_end	 e;
	size_t			 at[HASTATS_COL_COUNT], i, n = 0, k = 0;
	int			 who[HASTATS_COL_COUNT], c;

	/* The columns read in the order they come: one look a field. */
	for (c = 0; c < HASTATS_COL_COUNT; c++) {
		have[c] = false;
		if (col[c] == HASTATS_COL_NONE)
			continue;
		for (i = n++; i > 0 && at[i - 1] > col[c]; i--) {
			at[i] = at[i - 1];
			who[i] = who[i - 1];
		}
		at[i] = col[c];
		who[i] = c;
	}
	for (i = 0;; i++) {
		if ((e = hastats_csv_field(s, &f, why)) == HASTATS_END_BAD)
			return e;
		for (; k < n && at[k] == i; k++) {
			got[who[k]] = f;
			have[who[k]] = true;
		}
		if (e != HASTATS_END_COMMA)
			return e;
	}
}

/* Fills r from the fields of the row found. */
int
hastats_csv_row(struct hastats_field got[HASTATS_COL_COUNT],
    const bool have[HASTATS_COL_COUNT], const size_t col[HASTATS_COL_COUNT],
    struct hastats_row *r, const char **why)
{
	int	c;

	for (c = 0; c < HASTATS_COL_COUNT; c++)
		if (col[c] != HASTATS_COL_NONE && !have[c]) {
			*why = "the row has fewer fields than the header";
			return -1;
		}
	memset(r, 0, sizeof(*r));
	field_show(&got[HASTATS_COL_STATUS], r->status, sizeof(r->status),
	    false);
	if (field_weight(&got[HASTATS_COL_WEIGHT], &r->weight) == -1) {
		*why = "the weight is not a number";
		return -1;
	}
	c = col[HASTATS_COL_IWEIGHT] != HASTATS_COL_NONE ? HASTATS_COL_IWEIGHT :
	    col[HASTATS_COL_UWEIGHT] != HASTATS_COL_NONE ? HASTATS_COL_UWEIGHT :
	    -1;
	r->initial_weight = -1;
	if (c != -1 && field_weight(&got[c], &r->initial_weight) == -1) {
		*why = "the initial weight is not a number";
		return -1;
	}
	r->scur = (long)field_count(&got[HASTATS_COL_SCUR],
	    have[HASTATS_COL_SCUR], LONG_MAX);
	r->qcur = (long)field_count(&got[HASTATS_COL_QCUR],
	    have[HASTATS_COL_QCUR], LONG_MAX);
	r->stot = field_count(&got[HASTATS_COL_STOT], have[HASTATS_COL_STOT],
	    LLONG_MAX);
	r->rtime_ms = (long)field_count(&got[HASTATS_COL_RTIME],
	    have[HASTATS_COL_RTIME], LONG_MAX);
	r->qtime_ms = (long)field_count(&got[HASTATS_COL_QTIME],
	    have[HASTATS_COL_QTIME], LONG_MAX);
	r->sid = (long)field_count(&got[HASTATS_COL_SID],
	    have[HASTATS_COL_SID], LONG_MAX);
	r->responses = responses(got, have);
	if (have[HASTATS_COL_AGENT_STATUS])
		field_show(&got[HASTATS_COL_AGENT_STATUS], r->agent_status,
		    sizeof(r->agent_status), true);
	if (have[HASTATS_COL_AGENT_DESC])
		field_show(&got[HASTATS_COL_AGENT_DESC], r->agent_desc,
		    sizeof(r->agent_desc), false);
	return 0;
}

/*
 * Calls fn for every server row of backend (server, when not NULL, picks
 * the one); fn returns non-zero to stop. 1 stopped by fn, 0 the end, -1
 * malformed with *why.
 */
static int
each_row(const char *csv, size_t len, const char *backend, const char *server,
    int (*fn)(void *, const char *, const struct hastats_row *), void *arg,
    const char **why)
{
	struct hastats_scan		 s = { csv, csv + len };
	struct hastats_field		 got[HASTATS_COL_COUNT], *sv;
	struct hastats_row	 r;
	bool			 have[HASTATS_COL_COUNT];
	size_t			 col[HASTATS_COL_COUNT];
	enum hastats_end		 e;
	char			 name[HASTATS_NAME_MAX];

	if (hastats_csv_header(&s, col, why) == -1)
		return -1;
	while (s.p < s.end) {
		if ((e = hastats_csv_record(&s, col, got, have, why)) ==
		    HASTATS_END_BAD)
			return -1;
		/* HAProxy ends every line: the row we want may be the rest. */
		if (e == HASTATS_END_DATA) {
			*why = server != NULL ? "cut short before the row was "
			    "found" : "cut short";
			return -1;
		}
		/* Blank lines and short ones name no server. */
		if (!have[HASTATS_COL_PXNAME] || !have[HASTATS_COL_SVNAME] ||
		    !hastats_csv_eq(&got[HASTATS_COL_PXNAME], backend))
			continue;
		sv = &got[HASTATS_COL_SVNAME];
		if (server != NULL ? !hastats_csv_eq(sv, server) :
		    hastats_csv_eq(sv, "BACKEND") ||
		    hastats_csv_eq(sv, "FRONTEND"))
			continue;
		/* A name longer than we keep could not be looked up again. */
		if (hastats_csv_text(sv, name, sizeof(name)) ==
		    sizeof(name) - 1 && server == NULL)
			continue;
		if (hastats_csv_row(got, have, col, &r, why) == -1)
			return -1;
		if (fn(arg, name, &r) != 0)
			return 1;
	}
	return 0;
}

static int
keep_row(void *arg, const char *server, const struct hastats_row *r)
{
	(void)server;
	*(struct hastats_row *)arg = *r;
	return 1;
}

int
hastats_find(const char *csv, size_t len, const char *backend,
    const char *server, struct hastats_row *r, const char **why)
{
	return each_row(csv, len, backend, server, keep_row, r, why);
}

int
hastats_each(const char *csv, size_t len, const char *backend,
    int (*fn)(void *, const char *, const struct hastats_row *), void *arg,
    const char **why)
{
	return each_row(csv, len, backend, NULL, fn, arg, why) == -1 ? -1 : 0;
}

/* Whether s is w, or w and then a blank and more. */
static bool
first_words(const char *s, const char *w)
{
	size_t	n = strlen(w);

	return strncmp(s, w, n) == 0 && (s[n] == '\0' || s[n] == ' ');
}

bool
hastats_serving(const struct hastats_row *r)
{
	return r->weight > 0 && (first_words(r->status, "UP") ||
	    first_words(r->status, "no check"));
}

const char *
hastats_admin(const struct hastats_row *r)
{
	if (strncmp(r->status, "MAINT", 5) == 0)
		return "MAINT";
	if (strncmp(r->status, "DRAIN", 5) == 0 ||
	    strncmp(r->status, "NOLB", 4) == 0)
		return "DRAIN";
	return NULL;
}

size_t
hastats_split(const char *text, size_t len, const char **state,
    size_t *state_len)
{
	static const char	 mark[] = "\n# be_id ";
	const char		*m = memmem(text, len, mark, sizeof(mark) - 1);
	const char		*line;

	*state = NULL;
	*state_len = 0;
	if (m == NULL)
		return len;
	/* The servers state starts with its version line, just before. */
	for (line = m; line > text && line[-1] != '\n'; line--)
		;
	*state = line;
	*state_len = len - (size_t)(line - text);
	return (size_t)(line - text);
}

/* The next space-separated word of [*p, end) on this line; false at its end. */
static bool
next_word(const char **p, const char *end, const char **w, size_t *wlen)
{
	const char	*s = *p;

	while (s < end && *s == ' ')
		s++;
	if (s == end || *s == '\n')
		return false;
	*w = s;
	while (s < end && *s != ' ' && *s != '\n')
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

int
hastats_initial_weight(const char *state, size_t len, const char *backend,
    const char *server, long *iweight, const char **why)
{
	const char	*end = state + len, *p, *nl, *w;
	size_t		 wlen, col = 0, c_be = SIZE_MAX, c_srv = SIZE_MAX;
	size_t		 c_iw = SIZE_MAX;
	bool		 header = false, be_ok, srv_ok;
	char		 num[24];
	long		 v;
	char		*e;

	for (p = state; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;	/* a last line without its newline */
		if (!header) {
			if (nl - p < 2 || p[0] != '#' || p[1] != ' ')
				continue;	/* the version line */
			p += 2;
			for (col = 0; next_word(&p, nl, &w, &wlen); col++) {
				if (word_eq(w, wlen, "be_name"))
					c_be = col;
				else if (word_eq(w, wlen, "srv_name"))
					c_srv = col;
				else if (word_eq(w, wlen, "srv_iweight"))
					c_iw = col;
			}
			if (c_be == SIZE_MAX || c_srv == SIZE_MAX ||
			    c_iw == SIZE_MAX) {
				*why = "servers state without be_name, srv_name "
				    "or srv_iweight";
				return -1;
			}
			header = true;
			continue;
		}
		be_ok = srv_ok = false;
		v = -1;
		for (col = 0; next_word(&p, nl, &w, &wlen); col++) {
			if (col == c_be)
				be_ok = word_eq(w, wlen, backend);
			else if (col == c_srv)
				srv_ok = word_eq(w, wlen, server);
			else if (col == c_iw && wlen < sizeof(num)) {
				memcpy(num, w, wlen);
				num[wlen] = '\0';
				v = strtol(num, &e, 10);
				if (*e != '\0' || v < 0)
					v = -1;
			}
		}
		if (!be_ok || !srv_ok)
			continue;
		if (v < 0) {
			*why = "servers state: srv_iweight is not a number";
			return -1;
		}
		*iweight = v;
		return 1;
	}
	if (!header) {
		*why = "no servers state header";
		return -1;
	}
	return 0;
}
