/*
 * HAProxy's statistics read in pieces (core/hastats_reader.c): the same
 * rows as hastats.c reads from the whole answer, however the answer is
 * cut into pieces, and the limits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/hastats.h"
#include "lbagent/core/hastats_reader.h"
#include "testutil.h"

static const char *const backends[] = { "be", "web", "other", "app" };
#define NBACKENDS	4

/* The real captures (data/hastats/README), each version's three, and one
 * after requests went through. */
static const char *const fixtures[] = {
	"show-stat-2.6.csv", "show-stat-3.0.csv", "show-stat-3.2.csv",
	"http-stats-2.6.csv", "http-stats-3.0.csv", "http-stats-3.2.csv",
	"stat-and-state-2.6.txt", "stat-and-state-3.0.txt",
	"stat-and-state-3.2.txt", "traffic-2.6.csv",
};
#define NFIXTURES	(int)(sizeof(fixtures) / sizeof(fixtures[0]))

/* Odd but readable, and broken: each must read the same in any pieces. */
static const char *const odd[] = {
	"# pxname,svname,status,weight,agent_desc\n"
	    "\"a,b\",\"s\"\"1\",\"UP\",\"4\",\"say \"\"hi\"\", ok\"\n"
	    "be,s0,UP,1,\"two\nlines, \"\"x\"\"\"\nbe,s1,DOWN,2,\"x\"\r\n"
	    "be,s\"2,UP,1,plain\"quote\n\nbe\nbe,s3,UP,-1,x\n",
	"# pxname,svname,status,weight\nbe,\"s1\"x,UP,1\nbe,s2,UP,1\n",
	"# pxname,svname,status,weight\nbe,s1,UP,1\nbe,s2,UP",
	"# pxname,svname,status,weight\nbe,s1,UP,1\nbe,\"s2,UP,1\n",
	"# \"pxname\",svname,\"status\",weight\r\nbe,s1,UP,1\r\n",
	"<html><body>503</body></html>\n",
	"",
	"# pxname,svname,sta",
	"# pxname,svname,status,weight,iweight\nbe,s1,UP,5,10\n\n1\n"
	    "# be_id be_name srv_id srv_name srv_iweight\n"
	    "3 be 1 s1 12\n3 be 1 s1 13\n4 other 1 s1 x\n3 be 2 s2 9",
	"# pxname,svname,status,weight\nbe,s1,UP,1\n1\n"
	    "# be_id be_name srv_name\n3 be s1\n",
	/* Runs taken at once (past pxname, or in a row skipped) end at a
	 * quote: a newline inside it ends no record. */
	"# pxname,svname,status,weight,agent_desc\n"
	    "zz,x,UP,1,\"q\nbe,fake,UP,1,x\"\nbe,s1,UP,1,\"a,\nb\"\n"
	    "be,s2,UP,2,x\"y\nzz,y,UP,1,\"\"\nbe,s3,UP,3,z\n",
	"No such proxy.\n\n# pxname,svname,status,weight\nbe,s1,UP,1\n\n"
	    "# pxname,svname,status,weight\nother,s1,DOWN,1\n\n"
	    "Can't find backend.\n\n1\n# be_id be_name srv_name srv_iweight\n"
	    "3 be s1 4\n\n1\n# be_id be_name srv_name srv_iweight\n"
	    "4 other s1 6\n\n",
	"No such proxy.\r\n\r\n1\n# be_id be_name srv_name srv_iweight\n"
	    "3 be s1 4\n",
	"No such proxy.\n\n1\n",
};
#define NODD		(int)(sizeof(odd) / sizeof(odd[0]))

static char *
fixture(const char *name, size_t *len)
{
	const char	*root = getenv("SOURCE_ROOT");
	char		 path[1024], *buf;
	FILE		*fp;
	long		 n;

	snprintf(path, sizeof(path), "%s/tests/unit/data/hastats/%s",
	    root != NULL ? root : ".", name);
	ck_assert_msg((fp = fopen(path, "r")) != NULL, "%s", path);
	ck_assert_int_eq(fseek(fp, 0, SEEK_END), 0);
	ck_assert_int_gt(n = ftell(fp), 0);
	rewind(fp);
	ck_assert_ptr_nonnull(buf = malloc((size_t)n));
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	*len = (size_t)n;
	return buf;
}

static char	whybuf[128];

/* text read in pieces of cut bytes (the first at most first). */
static struct hastats_table *
read_pieces(const char *text, size_t len, size_t first, size_t cut,
    const struct hastats_limits *lim, const char **why)
{
	struct hastats_reader	*r = hastats_reader_new(backends, NBACKENDS,
				    lim);
	struct hastats_table	*t = NULL;
	size_t			 off = 0, n;
	bool			 started = false;
	char			*piece;

	ck_assert_ptr_nonnull(r);
	while (off < len) {
		n = !started ? first : cut;
		started = true;
		if (n > len - off)
			n = len - off;
		/* An exact-size copy: ASan sees any read past a piece. */
		ck_assert_ptr_nonnull(piece = malloc(n ? n : 1));
		memcpy(piece, text + off, n);
		off += n;
		if (hastats_reader_feed(r, piece, n, why) == -1) {
			free(piece);
			goto done;
		}
		free(piece);
	}
	t = hastats_reader_finish(r, why);
done:
	/* The reason is the reader's text: kept past it. */
	if (t == NULL) {
		snprintf(whybuf, sizeof(whybuf), "%s", *why);
		*why = whybuf;
	}
	hastats_reader_free(r);
	return t;
}

static struct hastats_table *
read_whole(const char *text, size_t len)
{
	const char		*why;
	struct hastats_table	*t = read_pieces(text, len, len, len, NULL,
				    &why);

	ck_assert_ptr_nonnull(t);
	return t;
}

static void
put(char *out, size_t size, const char *server, const struct hastats_row *r)
{
	size_t	len = strlen(out);

	snprintf(out + len, size - len, "[%s|%s|%ld|%ld|%s|%s|%ld|%ld|%lld|"
	    "%ld|%ld]", server, r->status, r->weight, r->initial_weight,
	    r->agent_status, r->agent_desc, r->scur, r->qcur, r->stot,
	    r->rtime_ms, r->qtime_ms);
}

struct dump {
	const struct hastats_table	*t;
	const char			*backend;
	char				*out;
	size_t				 size;
};

static int
dump_row(void *arg, const char *server, const struct hastats_row *r)
{
	struct dump	*d = arg;
	size_t		 len;

	put(d->out, d->size, server, r);
	len = strlen(d->out);
	snprintf(d->out + len, d->size - len, "iw%ld",
	    hastats_table_initial_weight(d->t, d->backend, server));
	return 0;
}

/* Everything a table says, as text: what the guard could ever read. */
static void
dump(const struct hastats_table *t, char *out, size_t size)
{
	static const char *const special[] = { "BACKEND", "FRONTEND", "none",
	    "s1", "s2", "s\"1" };
	struct hastats_row	 r;
	struct dump		 d = { t, NULL, out, size };
	const char		*why;
	size_t			 i, j, len;
	int			 rv;

	out[0] = '\0';
	for (i = 0; i < NBACKENDS; i++) {
		d.backend = backends[i];
		why = NULL;
		rv = hastats_table_each(t, backends[i], dump_row, &d, &why);
		len = strlen(out);
		snprintf(out + len, size - len, "\n%s each %d %s:", backends[i],
		    rv, why != NULL ? why : "");
		for (j = 0; j < sizeof(special) / sizeof(special[0]); j++) {
			why = NULL;
			rv = hastats_table_find(t, backends[i], special[j], &r,
			    &why);
			len = strlen(out);
			snprintf(out + len, size - len, " %s=%d%s", special[j],
			    rv, rv == -1 ? why : "");
			if (rv == 1)
				put(out, size, special[j], &r);
		}
	}
	len = strlen(out);
	snprintf(out + len, size - len, "\nrows %zu", hastats_table_rows(t));
}

#define DUMP_MAX	(64 * 1024)

/*
 * A boundary at every byte, in pieces of every shape the reader meets: [0, k)
 * then the rest for every k of the first CUT_ALL bytes (most of a header
 * line; every k of a small input), then the whole in pieces of
 * each size 1 to 64 (size 1: a boundary at every byte; each size: at every
 * offset within a line that is a multiple of it) and of a few prime sizes
 * that hold several lines and a part. Every k of a 10 KB capture costs the
 * square of its length, a minute under AddressSanitizer.
 */
#define CUT_ALL		1024

static void
check_one(const char *text, size_t len, size_t first, size_t then,
    const char *whole, char *got, const char *what)
{
	struct hastats_table	*t;
	const char		*why;

	t = read_pieces(text, len, first, then, NULL, &why);
	ck_assert_ptr_nonnull(t);
	dump(t, got, DUMP_MAX);
	hastats_table_free(t);
	ck_assert_msg(strcmp(whole, got) == 0, "%s cut at %zu, then pieces of "
	    "%zu:\n%s\nwhole:\n%s", what, first, then, got, whole);
}

static void
check_pieces(const char *text, size_t len, const char *what)
{
	static const size_t	 primes[] = { 127, 509, 1021, 4093 };
	struct hastats_table	*t;
	char			*whole = malloc(DUMP_MAX), *got = malloc(DUMP_MAX);
	size_t			 k;

	ck_assert_ptr_nonnull(whole);
	ck_assert_ptr_nonnull(got);
	t = read_whole(text, len);
	dump(t, whole, DUMP_MAX);
	hastats_table_free(t);
	for (k = 0; k <= len && k <= CUT_ALL; k++)
		check_one(text, len, k, len, whole, got, what);
	for (k = 1; k <= 64; k++)
		check_one(text, len, k, k, whole, got, what);
	for (k = 0; k < sizeof(primes) / sizeof(primes[0]); k++)
		check_one(text, len, primes[k], primes[k], whole, got, what);
	free(whole);
	free(got);
}

START_TEST(fixtures_in_pieces)
{
	size_t	 len;
	char	*text = fixture(fixtures[_i], &len);

	check_pieces(text, len, fixtures[_i]);
	free(text);
}
END_TEST

START_TEST(odd_in_pieces)
{
	check_pieces(odd[_i], strlen(odd[_i]), odd[_i]);
}
END_TEST

struct names {
	char	list[64][HASTATS_NAME_MAX];
	size_t	n;
};

static int
add_name(void *arg, const char *server, const struct hastats_row *r)
{
	struct names	*n = arg;

	(void)r;
	ck_assert_uint_lt(n->n, 64);
	snprintf(n->list[n->n++], HASTATS_NAME_MAX, "%s", server);
	return 0;
}

/* The real captures: what hastats.c reads from the whole, row by row. */
START_TEST(fixtures_as_whole_parser)
{
	struct hastats_table	*t;
	struct hastats_row	 a, b;
	struct names		 names;
	const char		*why, *state;
	size_t			 len, csv_len, state_len, i, j, rows = 0;
	char			*text = fixture(fixtures[_i], &len);
	long			 iw;
	int			 rv;

	t = read_whole(text, len);
	csv_len = hastats_split(text, len, &state, &state_len);
	for (i = 0; i < NBACKENDS; i++) {
		memset(&names, 0, sizeof(names));
		ck_assert_int_eq(hastats_each(text, csv_len, backends[i],
		    add_name, &names, &why), 0);
		snprintf(names.list[names.n++], HASTATS_NAME_MAX, "BACKEND");
		rows += names.n;
		for (j = 0; j < names.n; j++) {
			memset(&a, 0x55, sizeof(a));
			memset(&b, 0x55, sizeof(b));
			rv = hastats_find(text, csv_len, backends[i],
			    names.list[j], &a, &why);
			ck_assert_int_eq(hastats_table_find(t, backends[i],
			    names.list[j], &b, &why), rv);
			if (rv == 1)
				ck_assert_mem_eq(&a, &b, sizeof(a));
			if (state == NULL)
				continue;
			if (hastats_initial_weight(state, state_len,
			    backends[i], names.list[j], &iw, &why) != 1)
				iw = -1;
			ck_assert_int_eq(hastats_table_initial_weight(t,
			    backends[i], names.list[j]), iw);
		}
	}
	/* Every server was kept, and no more. */
	ck_assert_uint_ge(rows, 4);
	ck_assert_uint_le(hastats_table_rows(t), rows + NBACKENDS);
	hastats_table_free(t);
	free(text);
}
END_TEST

/* The counters read as they come, as the whole parser reads them. */
START_TEST(traffic_counters)
{
	struct hastats_table	*t;
	struct hastats_row	 r;
	const char		*why;
	size_t			 len;
	char			*text = fixture("traffic-2.6.csv", &len);

	t = read_pieces(text, len, 7, 13, NULL, &why);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(hastats_table_find(t, "app", "a", &r, &why), 1);
	ck_assert(r.stot == 40);
	ck_assert_int_eq(r.rtime_ms, 21);
	ck_assert_int_eq(r.qtime_ms, 59);
	ck_assert_int_eq(r.scur, 0);
	hastats_table_free(t);
	free(text);
}
END_TEST

/* Only the backends asked for are kept; another one is "not read". */
START_TEST(only_backends_asked)
{
	static const char	 csv[] = "# pxname,svname,status,weight\n"
	    "fe,FRONTEND,OPEN,\nbe,s1,UP,1\nzz,s1,DOWN,1\nzz,BACKEND,UP,1\n"
	    "be,BACKEND,UP,1\n";
	struct hastats_table	*t = read_whole(csv, sizeof(csv) - 1);
	struct hastats_row	 r;
	const char		*why;

	ck_assert_uint_eq(hastats_table_rows(t), 2);
	ck_assert_int_eq(hastats_table_find(t, "be", "s1", &r, &why), 1);
	ck_assert_str_eq(r.status, "UP");
	ck_assert_int_eq(hastats_table_find(t, "zz", "s1", &r, &why), -1);
	ck_assert_str_eq(why, "backend not read");
	ck_assert_int_eq(hastats_table_find(t, "other", "s1", &r, &why), 0);
	hastats_table_free(t);
}
END_TEST

/* Quoted fields as management.txt says; broken text fails every look-up. */
START_TEST(quoted_and_broken)
{
	struct hastats_table	*t;
	struct hastats_row	 r;
	const char		*why;

	t = read_whole(odd[0], strlen(odd[0]));
	ck_assert_int_eq(hastats_table_find(t, "be", "s1", &r, &why), 1);
	ck_assert_str_eq(r.status, "DOWN");
	ck_assert_int_eq(hastats_table_find(t, "be", "s0", &r, &why), 1);
	ck_assert_str_eq(r.agent_desc, "two");
	ck_assert_int_eq(hastats_table_find(t, "be", "s\"2", &r, &why), 1);
	ck_assert_str_eq(r.agent_desc, "plain\"quote");
	ck_assert_int_eq(hastats_table_find(t, "be", "s3", &r, &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "weight"));
	hastats_table_free(t);

	t = read_whole(odd[1], strlen(odd[1]));
	ck_assert_int_eq(hastats_table_find(t, "be", "s2", &r, &why), -1);
	ck_assert_str_eq(why, "text after a closing quote");
	hastats_table_free(t);
	t = read_whole(odd[2], strlen(odd[2]));
	ck_assert_int_eq(hastats_table_find(t, "be", "s1", &r, &why), -1);
	ck_assert_str_eq(why, "cut short");
	hastats_table_free(t);
	t = read_whole(odd[5], strlen(odd[5]));
	ck_assert_int_eq(hastats_table_find(t, "be", "s1", &r, &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "not HAProxy statistics"));
	hastats_table_free(t);
	t = read_whole("", 0);
	ck_assert_int_eq(hastats_table_find(t, "be", "s1", &r, &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "not HAProxy statistics"));
	hastats_table_free(t);
	t = read_whole(odd[7], strlen(odd[7]));
	ck_assert_int_eq(hastats_table_find(t, "be", "s1", &r, &why), -1);
	ck_assert_str_eq(why, "cut short in the header");
	hastats_table_free(t);
	t = read_whole(odd[4], strlen(odd[4]));
	ck_assert_int_eq(hastats_table_find(t, "be", "s1", &r, &why), 1);
	hastats_table_free(t);
	t = read_whole(odd[10], strlen(odd[10]));
	ck_assert_uint_eq(hastats_table_rows(t), 3);
	ck_assert_int_eq(hastats_table_find(t, "be", "fake", &r, &why), 0);
	ck_assert_int_eq(hastats_table_find(t, "be", "s1", &r, &why), 1);
	ck_assert_int_eq(r.weight, 1);
	ck_assert_int_eq(hastats_table_find(t, "be", "s2", &r, &why), 1);
	ck_assert_str_eq(r.agent_desc, "x\"y");
	ck_assert_int_eq(hastats_table_find(t, "be", "s3", &r, &why), 1);
	ck_assert_int_eq(r.weight, 3);
	hastats_table_free(t);
}
END_TEST

/* The servers state: the first line for a server says its weight. */
START_TEST(servers_state)
{
	struct hastats_table	*t = read_whole(odd[8], strlen(odd[8]));

	ck_assert_int_eq(hastats_table_initial_weight(t, "be", "s1"), 12);
	ck_assert_int_eq(hastats_table_initial_weight(t, "be", "s2"), -1);
	ck_assert_int_eq(hastats_table_initial_weight(t, "be", "none"), -1);
	hastats_table_free(t);
	t = read_whole(odd[9], strlen(odd[9]));
	ck_assert_int_eq(hastats_table_initial_weight(t, "be", "s1"), -1);
	hastats_table_free(t);
}
END_TEST

/*
 * One command a backend, as peers.c asks the Runtime API: the backends
 * there are read as from the whole answer, the one missing has no rows.
 */
START_TEST(filtered)
{
	size_t			 len;
	char			*text = fixture("filtered-2.6.txt", &len);
	struct hastats_table	*t = read_whole(text, len);
	struct hastats_row	 r;
	const char		*why;

	ck_assert_uint_eq(hastats_table_rows(t), 3);
	ck_assert_int_eq(hastats_table_find(t, "be", "a", &r, &why), 1);
	ck_assert_int_eq(r.weight, 7);
	ck_assert_int_eq(hastats_table_find(t, "other", "x", &r, &why), 1);
	ck_assert_int_eq(hastats_table_find(t, "web", "a", &r, &why), 0);
	ck_assert_int_eq(hastats_table_initial_weight(t, "be", "a"), 7);
	ck_assert_int_eq(hastats_table_initial_weight(t, "be", "b"), 1);
	ck_assert_int_eq(hastats_table_initial_weight(t, "other", "x"), 1);
	hastats_table_free(t);
	free(text);
	text = fixture("filtered-absent-2.6.txt", &len);
	t = read_whole(text, len);
	ck_assert_uint_eq(hastats_table_rows(t), 0);
	ck_assert_int_eq(hastats_table_find(t, "be", "a", &r, &why), 0);
	hastats_table_free(t);
	free(text);

	t = read_whole(odd[11], strlen(odd[11]));
	ck_assert_uint_eq(hastats_table_rows(t), 2);
	ck_assert_int_eq(hastats_table_find(t, "other", "s1", &r, &why), 1);
	ck_assert_str_eq(r.status, "DOWN");
	ck_assert_int_eq(hastats_table_initial_weight(t, "be", "s1"), 4);
	ck_assert_int_eq(hastats_table_initial_weight(t, "other", "s1"), 6);
	hastats_table_free(t);
	t = read_whole(odd[12], strlen(odd[12]));
	ck_assert_int_eq(hastats_table_find(t, "be", "s1", &r, &why), 0);
	hastats_table_free(t);
	/* Only after a backend's absence is a number no statistics. */
	t = read_whole("1\n", 2);
	ck_assert_int_eq(hastats_table_find(t, "be", "s1", &r, &why), -1);
	hastats_table_free(t);
	t = read_whole("Permission denied\n\n", 19);
	ck_assert_int_eq(hastats_table_find(t, "be", "s1", &r, &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "not HAProxy statistics"));
	hastats_table_free(t);
}
END_TEST

/* What peers.c asks the Runtime API. */
START_TEST(request)
{
	static const char *const two[] = { "be", "web.v2" };
	const char	*many[200];
	char		 buf[HASTATS_REQUEST_MAX], name[70];
	size_t		 i;

	hastats_request(two, 2, buf);
	ck_assert_str_eq(buf, "show stat be 4 -1;show stat web.v2 4 -1;"
	    "show servers state be;show servers state web.v2\n");
	hastats_request(two, 0, buf);
	ck_assert_str_eq(buf, "show stat;show servers state\n");
	/* Longer than HAProxy reads in a line: the whole stats instead. */
	memset(name, 'n', 64);
	name[64] = '\0';
	for (i = 0; i < 200; i++)
		many[i] = name;
	hastats_request(many, 200, buf);
	ck_assert_str_eq(buf, "show stat;show servers state\n");
	hastats_request(many, 40, buf);
	ck_assert_uint_lt(strlen(buf), HASTATS_REQUEST_MAX);
	ck_assert_ptr_nonnull(strstr(buf, ";show servers state nnn"));
}
END_TEST

/* text read in pieces of cut bytes, with "get weight" answers due. */
static struct hastats_table *
read_own(const char *text, size_t len, size_t cut, const char *const *be,
    const char *const *srv, size_t n)
{
	static const char *const kept[] = { "be", "nosuch", "other" };
	struct hastats_reader	*r = hastats_reader_new(kept, 3, NULL);
	struct hastats_table	*t;
	const char		*why;
	size_t			 off, k;

	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(hastats_reader_weights(r, be, srv, n), 0);
	for (off = 0; off < len; off += k) {
		k = len - off < cut ? len - off : cut;
		ck_assert_int_eq(hastats_reader_feed(r, text + off, k, &why), 0);
	}
	ck_assert_ptr_nonnull(t = hastats_reader_finish(r, &why));
	hastats_reader_free(r);
	return t;
}

/*
 * The own rows, as peers.c asks them when no decision waits on the other
 * servers (own-2.6.txt, HAProxy's answer): one row a backend there, its
 * configured weight from "get weight", whatever the pieces; what a
 * backend or server not there answers is no row and no malformed answer.
 */
START_TEST(own_rows)
{
	static const char *const be[] = { "be", "nosuch", "other" };
	static const char *const srv[] = { "a", "a", "y" };
	static const size_t	cuts[] = { 1, 7, 100000 };
	struct hastats_table	*t;
	struct hastats_row	 r;
	const char		*why;
	size_t			 len, i;
	char			*text = fixture("own-2.6.txt", &len);

	for (i = 0; i < 3; i++) {
		t = read_own(text, len, cuts[i], be, srv, 3);
		ck_assert_uint_eq(hastats_table_rows(t), 1);
		ck_assert_int_eq(hastats_table_find(t, "be", "a", &r, &why), 1);
		ck_assert_int_eq(r.weight, 3);
		ck_assert_int_eq(r.sid, 1);
		ck_assert_int_eq(hastats_table_initial_weight(t, "be", "a"), 7);
		ck_assert_int_eq(hastats_table_find(t, "other", "y", &r, &why),
		    0);
		ck_assert(hastats_table_has_all(t, be, srv, 1));
		ck_assert(!hastats_table_has_all(t, be + 2, srv + 2, 1));
		hastats_table_free(t);
	}
	/* Without a weight due, "3 (initial 7)" is no configured weight. */
	t = read_own(text, len, len, be, srv, 0);
	ck_assert_int_eq(hastats_table_find(t, "be", "a", &r, &why), 1);
	ck_assert_int_eq(hastats_table_initial_weight(t, "be", "a"), -1);
	hastats_table_free(t);
	free(text);
	/* A backend gone since its id was learnt: no row, nothing malformed. */
	t = read_own("No such proxy.\n\nNo such backend.\n\n", 34, 3, be,
	    srv, 1);
	ck_assert_int_eq(hastats_table_find(t, "be", "a", &r, &why), 0);
	hastats_table_free(t);
	/* Not a weight: a row of no backend kept, passed over. */
	t = read_own("# pxname,svname,status,weight\nbe,a,UP,4\n\n"
	    "3 (initial x)\n\n", 56, 5, be, srv, 1);
	ck_assert_int_eq(hastats_table_find(t, "be", "a", &r, &why), 1);
	ck_assert_int_eq(hastats_table_initial_weight(t, "be", "a"), -1);
	hastats_table_free(t);
}
END_TEST

/* The own rows take the place of theirs in the whole table read before. */
START_TEST(own_merged)
{
	static const char *const be[] = { "be", "other" };
	static const char *const srv[] = { "b", "x" };
	static const char *const bad[] = { "a b", "x;y" };
	static const long	sids[] = { 2, 1 };
	struct hastats_table	*whole, *own;
	struct hastats_row	 r;
	const char		*why;
	char			 buf[HASTATS_REQUEST_MAX], *text;
	size_t			 len;

	text = fixture("filtered-2.6.txt", &len);
	whole = read_whole(text, len);
	free(text);
	ck_assert_int_eq(hastats_table_find(whole, "be", "b", &r, &why), 1);
	ck_assert_int_eq(r.sid, 2);
	ck_assert_int_eq(hastats_table_own_request(whole, be, srv, 2, buf), 0);
	ck_assert_str_eq(buf, "show stat be 4 2;get weight be/b;"
	    "show stat other 4 1;get weight other/x\n");
	/* An id not known, a name HAProxy would split: not asked so. */
	ck_assert_int_eq(hastats_table_own_request(whole, be, bad, 1, buf), -1);
	ck_assert_int_eq(hastats_request_own(bad, srv, sids, 1, buf), -1);
	ck_assert_int_eq(hastats_request_own(be, bad + 1, sids, 1, buf), -1);
	ck_assert_int_eq(hastats_request_own(be, srv, sids, 0, buf), -1);

	text = fixture("own-2.6.txt", &len);
	own = read_own(text, len, len, (const char *const[]){ "be", "nosuch",
	    "other" }, (const char *const[]){ "a", "a", "y" }, 3);
	free(text);
	ck_assert_int_eq(hastats_table_merge(whole, own), 0);
	ck_assert_uint_eq(hastats_table_rows(whole), 3);
	ck_assert_int_eq(hastats_table_find(whole, "be", "a", &r, &why), 1);
	ck_assert_int_eq(r.weight, 3);
	ck_assert_int_eq(hastats_table_initial_weight(whole, "be", "a"), 7);
	/* The others as the whole answer read them. */
	ck_assert_int_eq(hastats_table_find(whole, "be", "b", &r, &why), 1);
	ck_assert_int_eq(r.weight, 1);
	ck_assert_int_eq(hastats_table_initial_weight(whole, "be", "b"), 1);
	ck_assert_int_eq(hastats_table_find(whole, "other", "x", &r, &why), 1);
	hastats_table_free(own);
	hastats_table_free(whole);
}
END_TEST

/* An answer of total bytes: rows of "zz", then be/s1 last. */
static char *
big(size_t total, size_t *len)
{
	static const char	head[] = "# pxname,svname,status,weight\n";
	static const char	row[] = "zz,filler,UP,1\n";
	static const char	last[] = "be,s1,UP,7\n";
	char			*p = malloc(total);
	size_t			 off = 0;

	ck_assert_ptr_nonnull(p);
	memcpy(p, head, sizeof(head) - 1);
	off = sizeof(head) - 1;
	while (off + sizeof(row) - 1 + sizeof(last) - 1 <= total) {
		memcpy(p + off, row, sizeof(row) - 1);
		off += sizeof(row) - 1;
	}
	/* Blank lines make the total exact. */
	while (off + sizeof(last) - 1 < total)
		p[off++] = '\n';
	memcpy(p + off, last, sizeof(last) - 1);
	*len = off + sizeof(last) - 1;
	return p;
}

START_TEST(limit_bytes)
{
	struct hastats_limits	 lim = { 100, 1000, 8 };
	struct hastats_reader	*rd;
	struct hastats_table	*t;
	struct hastats_row	 r;
	const char		*why;
	size_t			 len;
	char			*text, buf[101];

	/* 8 MiB exactly, in 16 KiB pieces: the last row is read. */
	text = big(HASTATS_BYTES_MAX, &len);
	ck_assert_uint_eq(len, HASTATS_BYTES_MAX);
	t = read_pieces(text, len, 16384, 16384, NULL, &why);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(hastats_table_find(t, "be", "s1", &r, &why), 1);
	ck_assert_int_eq(r.weight, 7);
	hastats_table_free(t);
	free(text);
	/* One byte more: no table, a reason. */
	text = big(HASTATS_BYTES_MAX + 1, &len);
	ck_assert_uint_eq(len, HASTATS_BYTES_MAX + 1);
	t = read_pieces(text, len, 16384, 16384, NULL, &why);
	ck_assert_ptr_null(t);
	ck_assert_str_eq(why, "statistics larger than 8 MiB");
	free(text);
	/* Small limits, and a reader that failed stays failed. */
	rd = hastats_reader_new(backends, NBACKENDS, &lim);
	memset(buf, 'x', sizeof(buf));
	ck_assert_int_eq(hastats_reader_feed(rd, buf, 101, &why), -1);
	ck_assert_str_eq(why, "statistics larger than 100 bytes");
	ck_assert_int_eq(hastats_reader_feed(rd, "", 0, &why), -1);
	ck_assert_ptr_null(hastats_reader_finish(rd, &why));
	ck_assert_str_eq(why, "statistics larger than 100 bytes");
	hastats_reader_free(rd);
}
END_TEST

/* "# pxname,...\n", a row of zz of n bytes with its newline, be/s1. */
static char *
long_row(size_t n, bool quoted)
{
	static const char	head[] = "# pxname,svname,status,weight\n";
	static const char	last[] = "be,s1,UP,1\n";
	char			*p = malloc(sizeof(head) + n + sizeof(last));
	size_t			 i, off = sizeof(head) - 1;

	ck_assert_ptr_nonnull(p);
	memcpy(p, head, off);
	memcpy(p + off, quoted ? "be,s2,UP,1,\"" : "zz,s1,UP,1,x", 12);
	for (i = 12; i < n - 2; i++)
		p[off + i] = i == 40 && quoted ? '\n' : 'x';
	p[off + n - 2] = quoted ? '"' : 'x';
	p[off + n - 1] = '\n';
	memcpy(p + off + n, last, sizeof(last));
	return p;
}

START_TEST(limit_line)
{
	struct hastats_limits	 lim = { HASTATS_BYTES_MAX, 64, 8 };
	struct hastats_table	*t;
	struct hastats_row	 r;
	const char		*why;
	char			*text;
	size_t			 i, n;

	/* 64 bytes with the newline: read, in pieces or whole. */
	text = long_row(64, false);
	t = read_pieces(text, strlen(text), 5, 5, &lim, &why);
	ck_assert_msg(t != NULL, "%s", why);
	ck_assert_int_eq(hastats_table_find(t, "be", "s1", &r, &why), 1);
	hastats_table_free(t);
	free(text);
	text = long_row(64, true);
	t = read_pieces(text, strlen(text), 500, 500, &lim, &why);
	ck_assert_msg(t != NULL, "%s", why);
	ck_assert_int_eq(hastats_table_find(t, "be", "s2", &r, &why), 1);
	hastats_table_free(t);
	free(text);
	/* 65, in a backend not kept, or a newline inside quotes: over. */
	text = long_row(65, false);
	t = read_pieces(text, strlen(text), 5, 5, &lim, &why);
	ck_assert_ptr_null(t);
	ck_assert_str_eq(why, "a statistics line longer than 64 bytes");
	free(text);
	text = long_row(65, true);
	t = read_pieces(text, strlen(text), 500, 500, &lim, &why);
	ck_assert_ptr_null(t);
	ck_assert_str_eq(why, "a statistics line longer than 64 bytes");
	free(text);
	/* The default: 64 KiB. */
	n = 70 * 1024;
	ck_assert_ptr_nonnull(text = malloc(n));
	memcpy(text, "# pxname,svname,status,weight\nbe,s1,UP,1,", 41);
	for (i = 41; i < n - 1; i++)
		text[i] = 'y';
	text[n - 1] = '\n';
	t = read_pieces(text, n, 4096, 4096, NULL, &why);
	ck_assert_ptr_null(t);
	ck_assert_str_eq(why, "a statistics line longer than 64 KiB");
	free(text);
}
END_TEST

START_TEST(limit_rows)
{
	struct hastats_limits	 lim = { HASTATS_BYTES_MAX, 1024, 2 };
	struct hastats_table	*t;
	const char		*why, *text;
	char			*buf, *p;
	size_t			 i;

	/* Rows of other backends do not count. */
	text = "# pxname,svname,status,weight\nzz,a,UP,1\nzz,b,UP,1\n"
	    "zz,c,UP,1\nbe,s1,UP,1\nbe,s2,UP,1\n";
	t = read_pieces(text, strlen(text), 7, 7, &lim, &why);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(hastats_table_rows(t), 2);
	hastats_table_free(t);
	text = "# pxname,svname,status,weight\nbe,s1,UP,1\nbe,s2,UP,1\n"
	    "web,s3,UP,1\n";
	t = read_pieces(text, strlen(text), 65, 65, &lim, &why);
	ck_assert_ptr_null(t);
	ck_assert_str_eq(why, "more than 2 rows of the backends read");
	/* The default: 8192. */
	ck_assert_ptr_nonnull(buf = malloc(8200 * 16 + 64));
	p = buf + sprintf(buf, "# pxname,svname,status,weight\n");
	for (i = 0; i < HASTATS_ROWS_MAX; i++)
		p += sprintf(p, "be,n%zu,UP,1\n", i);
	t = read_pieces(buf, (size_t)(p - buf), 16384, 16384, NULL, &why);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(hastats_table_rows(t), HASTATS_ROWS_MAX);
	hastats_table_free(t);
	p += sprintf(p, "web,n%zu,UP,1\n", i);
	t = read_pieces(buf, (size_t)(p - buf), 16384, 16384, NULL, &why);
	ck_assert_ptr_null(t);
	ck_assert_str_eq(why, "more than 8192 rows of the backends read");
	free(buf);
}
END_TEST

static Suite *
reader_suite(void)
{
	Suite	*s = suite_create("hastats_reader");
	TCase	*tc = tcase_create("hastats_reader");

	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, fixtures_in_pieces, 0, NFIXTURES);
	tcase_add_loop_test(tc, odd_in_pieces, 0, NODD);
	tcase_add_loop_test(tc, fixtures_as_whole_parser, 0, NFIXTURES);
	tcase_add_test(tc, only_backends_asked);
	tcase_add_test(tc, traffic_counters);
	tcase_add_test(tc, quoted_and_broken);
	tcase_add_test(tc, servers_state);
	tcase_add_test(tc, filtered);
	tcase_add_test(tc, request);
	tcase_add_test(tc, own_rows);
	tcase_add_test(tc, own_merged);
	tcase_add_test(tc, limit_bytes);
	tcase_add_test(tc, limit_line);
	tcase_add_test(tc, limit_rows);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(reader_suite());
}
