/* HAProxy's statistics CSV: real 2.6, 3.0 and 3.2 output, then odd and broken input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/hastats.h"
#include "testutil.h"

struct want {
	const char	*backend, *server;
	const char	*status;
	long		 weight, initial_weight;
	const char	*agent_status, *agent_desc;
	bool		 serving;
	const char	*admin;		/* NULL: none */
};

/*
 * The HAProxy versions Debian 12, 13 and testing ship, whose real output the
 * fixtures hold (data/hastats/README); a loop test's _i indexes them.
 */
static const char *const versions[] = { "2.6", "3.0", "3.2" };
#define NVERSIONS	(int)(sizeof(versions) / sizeof(versions[0]))

/* "show-stat-" "3.0" ".csv" */
static const char *
versioned(const char *stem, int i, const char *ext)
{
	static char	name[64];

	snprintf(name, sizeof(name), "%s-%s.%s", stem, versions[i], ext);
	return name;
}

/* What every version showed for each server in the captures. */
static const struct want fixture_rows[] = {
	{ "be", "s1", "UP", 10, 10, "", "", true, NULL },
	{ "be", "s10", "UP", 20, 20, "", "", true, NULL },
	{ "be", "down", "DOWN", 1, 1, "", "", false, NULL },
	{ "be", "maint", "MAINT", 1, 1, "", "", false, "MAINT" },
	{ "be", "drain", "DRAIN", 1, 1, "", "", false, "DRAIN" },
	{ "be", "zero", "UP", 0, 0, "", "", false, NULL },
	{ "be", "nocheck", "no check", 1, 1, "", "", true, NULL },
	{ "be", "agent", "UP", 75, 75, "L7OK", "Layer7 check passed", true,
	    NULL },
	{ "be", "agentdrain", "DRAIN (agent)", 1, 1, "CHECKED",
	    "No status change", false, "DRAIN" },
	{ "be", "agentdown", "DOWN (agent)", 1, 1, "L7STS",
	    "Layer7 wrong status", false, NULL },
	{ "be", "slowagent", "UP", 0, 0, "L7OK", "Layer7 check passed", false,
	    NULL },
	{ "be", "disabled", "MAINT", 1, 1, "", "", false, "MAINT" },
	{ "be", "going", "UP 992/1000", 1, 1, "", "", true, NULL },
	{ "be", "coming", "DOWN 7/1000", 1, 1, "", "", false, NULL },
	{ "be", "tracked", "MAINT (via be/maint)", 1, 1, "", "", false,
	    "MAINT" },
	{ "web", "nolb", "NOLB", 1, 1, "", "", false, "DRAIN" },
	{ "other", "s1", "no check", 1, 1, "", "", true, NULL },
	{ "be", "BACKEND", "UP", 107, 107, "", "", true, NULL },
	{ NULL, NULL, NULL, 0, 0, NULL, NULL, false, NULL },
};

/* Reads a fixture into an exact-size buffer: no NUL to lean on. */
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

/* hastats_find on a copy of exactly len bytes, so ASan sees any over-read. */
static int
find(const char *csv, size_t len, const char *backend, const char *server,
    struct hastats_row *r, const char **why)
{
	char	*copy = malloc(len > 0 ? len : 1);
	int	 rv;

	ck_assert_ptr_nonnull(copy);
	memcpy(copy, csv, len);
	*why = NULL;
	rv = hastats_find(copy, len, backend, server, r, why);
	free(copy);
	return rv;
}

static int
find_s(const char *csv, const char *backend, const char *server,
    struct hastats_row *r, const char **why)
{
	return find(csv, strlen(csv), backend, server, r, why);
}

static void
check_row(const struct hastats_row *r, const struct want *w)
{
	const char	*admin = hastats_admin(r);

	ck_assert_str_eq(r->status, w->status);
	ck_assert_int_eq(r->weight, w->weight);
	ck_assert_int_eq(r->initial_weight, w->initial_weight);
	ck_assert_str_eq(r->agent_status, w->agent_status);
	ck_assert_str_eq(r->agent_desc, w->agent_desc);
	ck_assert_msg(hastats_serving(r) == w->serving, "%s/%s serving",
	    w->backend, w->server);
	if (w->admin == NULL)
		ck_assert_ptr_null(admin);
	else
		ck_assert_str_eq(admin, w->admin);
}

static void
check_fixture(const char *name)
{
	const struct want	*w;
	struct hastats_row	 r;
	const char		*why;
	char			*csv;
	size_t			 len;

	csv = fixture(name, &len);
	for (w = fixture_rows; w->backend != NULL; w++) {
		memset(&r, 0x55, sizeof(r));
		ck_assert_msg(find(csv, len, w->backend, w->server, &r,
		    &why) == 1, "%s: %s/%s: %s", name, w->backend, w->server,
		    why != NULL ? why : "not found");
		check_row(&r, w);
	}
	free(csv);
}

/* Collects what hastats_each gives, "name:scur/qcur" each. */
static int
collect(void *arg, const char *server, const struct hastats_row *r)
{
	char	*out = arg;
	size_t	 len = strlen(out);

	snprintf(out + len, 512 - len, "%s%s:%ld/%ld", len ? " " : "", server,
	    r->scur, r->qcur);
	return strcmp(server, "stop") == 0;
}

/* Sessions and queue, and every server of a backend in order. */
START_TEST(sessions_and_every_server)
{
	static const char csv[] = "# pxname,svname,qcur,qmax,scur,smax,"
	    "status,weight,\n"
	    "fe,FRONTEND,,,4,9,OPEN,,\n"
	    "be,n1,0,0,3,5,UP,100,\n"
	    "be,n2,2,2,1,1,DRAIN,0,\n"
	    "be,n3,,,,,UP,100,\n"
	    "be,n4,x,0,-1,0,UP,100,\n"
	    "other,n1,0,0,7,7,UP,1,\n"
	    "be,BACKEND,2,2,4,5,UP,100,\n";
	static const char stop[] = "# pxname,svname,status,weight\n"
	    "be,a,UP,1\nbe,stop,UP,1\nbe,c,UP,1\n";
	struct hastats_row	 r;
	const char		*why;
	char			 out[512] = "";

	ck_assert_int_eq(find_s(csv, "be", "n1", &r, &why), 1);
	ck_assert_int_eq(r.scur, 3);
	ck_assert_int_eq(r.qcur, 0);
	ck_assert_int_eq(find_s(csv, "be", "n2", &r, &why), 1);
	ck_assert_int_eq(r.scur, 1);
	ck_assert_int_eq(r.qcur, 2);
	/* Empty or not a number: not known, and the row still reads. */
	ck_assert_int_eq(find_s(csv, "be", "n3", &r, &why), 1);
	ck_assert_int_eq(r.scur, -1);
	ck_assert_int_eq(r.qcur, -1);
	ck_assert_int_eq(find_s(csv, "be", "n4", &r, &why), 1);
	ck_assert_int_eq(r.scur, -1);
	ck_assert_int_eq(r.qcur, -1);
	ck_assert(hastats_serving(&r));
	/* Without the columns: not known. */
	ck_assert_int_eq(find_s("# pxname,svname,status,weight,\n"
	    "be,n1,UP,1,\n", "be", "n1", &r, &why), 1);
	ck_assert_int_eq(r.scur, -1);
	ck_assert_int_eq(r.qcur, -1);
	/* Every server of the backend, not its BACKEND row, not others'. */
	ck_assert_int_eq(hastats_each(csv, sizeof(csv) - 1, "be", collect,
	    out, &why), 0);
	ck_assert_str_eq(out, "n1:3/0 n2:1/2 n3:-1/-1 n4:-1/-1");
	/* It stops when asked to. */
	out[0] = '\0';
	ck_assert_int_eq(hastats_each(stop, strlen(stop), "be", collect, out,
	    &why), 0);
	ck_assert_str_eq(out, "a:-1/-1 stop:-1/-1");
	/* Cut short or malformed: -1, after the rows before. */
	out[0] = '\0';
	ck_assert_int_eq(hastats_each(csv, sizeof(csv) - 4, "be", collect,
	    out, &why), -1);
	ck_assert_str_eq(why, "cut short");
	ck_assert_str_eq(out, "n1:3/0 n2:1/2 n3:-1/-1 n4:-1/-1");
	ck_assert_int_eq(hastats_each("nope\n", 5, "be", collect, out, &why),
	    -1);
}
END_TEST

/*
 * The counters the capacity model reads, from a real HAProxy after 40
 * requests through a server of maxconn 1 answering after 20 ms
 * (data/hastats/README): stot counts them, rtime is near 20 ms, some
 * waited in the queue.
 */
START_TEST(traffic_counters)
{
	struct hastats_row	 r;
	const char		*why;
	size_t			 len;
	char			*csv = fixture("traffic-2.6.csv", &len);

	ck_assert_int_eq(hastats_find(csv, len, "app", "a", &r, &why), 1);
	ck_assert_int_eq(r.stot, 40);
	ck_assert(r.responses == 40);	/* hrsp_2xx 40, the rest 0 */
	ck_assert_int_eq(r.scur, 0);
	ck_assert_int_eq(r.qcur, 0);
	ck_assert_int_eq(r.rtime_ms, 21);
	ck_assert_int_eq(r.qtime_ms, 59);
	/* A server that served nothing says 0, not "not known". */
	ck_assert_int_eq(hastats_find(csv, len, "app", "idle", &r, &why), 1);
	ck_assert_int_eq(r.stot, 0);
	ck_assert_int_eq(r.rtime_ms, 0);
	ck_assert_int_eq(r.qtime_ms, 0);
	free(csv);
	/* The frontend's rtime and qtime are empty: not known. */
	csv = fixture("show-stat-2.6.csv", &len);
	ck_assert_int_eq(hastats_find(csv, len, "fe", "FRONTEND", &r, &why), 1);
	ck_assert_int_eq(r.rtime_ms, -1);
	ck_assert_int_eq(r.qtime_ms, -1);
	ck_assert_int_eq(r.stot, 0);
	free(csv);
}
END_TEST

/* The responses: every hrsp_ class summed; unknown without hrsp_2xx. */
START_TEST(responses_summed)
{
	static const char csv[] = "# pxname,svname,status,weight,stot,"
	    "hrsp_1xx,hrsp_2xx,hrsp_3xx,hrsp_4xx,hrsp_5xx,hrsp_other\n"
	    "be,http,UP,1,50,1,30,2,3,4,5\n"
	    "be,tcp,UP,1,50,,,,,,\n"
	    "be,odd,UP,1,50,x,7,,-1,1,\n"
	    "be,over,UP,1,50,0,9223372036854775807,1,0,0,0\n";
	static const char no_cols[] = "# pxname,svname,status,weight,stot\n"
	    "be,old,UP,1,50\n";
	struct hastats_row	 r;
	const char		*why;

	ck_assert_int_eq(find_s(csv, "be", "http", &r, &why), 1);
	ck_assert(r.responses == 45);
	ck_assert_int_eq(find_s(csv, "be", "tcp", &r, &why), 1);
	ck_assert(r.responses == -1);
	ck_assert(r.stot == 50);
	ck_assert_int_eq(find_s(csv, "be", "odd", &r, &why), 1);
	ck_assert(r.responses == 8);
	ck_assert_int_eq(find_s(csv, "be", "over", &r, &why), 1);
	ck_assert(r.responses == -1);
	ck_assert_int_eq(find_s(no_cols, "be", "old", &r, &why), 1);
	ck_assert(r.responses == -1);
}
END_TEST

/* stot is a long long; empty, absent, signed or too big: not known. */
START_TEST(counters_odd)
{
	static const char csv[] = "# pxname,svname,stot,status,weight,rtime,"
	    "qtime\n"
	    "be,big,9223372036854775807,UP,1,7,0\n"
	    "be,over,9223372036854775808,UP,1,99999999999999999999,x\n"
	    "be,empty,,UP,1,,\n"
	    "be,neg,-3,UP,1,-1,+2\n"
	    "be,quoted,\"12\",UP,1,\"3\",\"4\"\n";
	struct hastats_row	 r;
	const char		*why;

	ck_assert_int_eq(find_s(csv, "be", "big", &r, &why), 1);
	ck_assert(r.stot == 9223372036854775807LL);
	ck_assert_int_eq(r.rtime_ms, 7);
	ck_assert_int_eq(r.qtime_ms, 0);
	ck_assert_int_eq(find_s(csv, "be", "over", &r, &why), 1);
	ck_assert(r.stot == -1);
	ck_assert_int_eq(r.rtime_ms, -1);
	ck_assert_int_eq(r.qtime_ms, -1);
	ck_assert_int_eq(find_s(csv, "be", "empty", &r, &why), 1);
	ck_assert(r.stot == -1);
	ck_assert_int_eq(r.rtime_ms, -1);
	ck_assert_int_eq(find_s(csv, "be", "neg", &r, &why), 1);
	ck_assert(r.stot == -1);
	ck_assert_int_eq(r.rtime_ms, -1);
	ck_assert_int_eq(r.qtime_ms, -1);
	ck_assert_int_eq(find_s(csv, "be", "quoted", &r, &why), 1);
	ck_assert(r.stot == 12);
	ck_assert_int_eq(r.rtime_ms, 3);
	ck_assert_int_eq(r.qtime_ms, 4);
	/* Without the columns: not known. */
	ck_assert_int_eq(find_s("# pxname,svname,status,weight\nbe,n,UP,1\n",
	    "be", "n", &r, &why), 1);
	ck_assert(r.stot == -1);
	ck_assert_int_eq(r.rtime_ms, -1);
	ck_assert_int_eq(r.qtime_ms, -1);
}
END_TEST

START_TEST(show_stat_socket)
{
	check_fixture(versioned("show-stat", _i, "csv"));
}
END_TEST

START_TEST(stats_page_csv)
{
	check_fixture(versioned("http-stats", _i, "csv"));
}
END_TEST

/* Names that are prefixes of others, and names that are not there. */
START_TEST(names_exact)
{
	struct hastats_row	 r;
	const char		*why;
	char			*csv;
	size_t			 len;

	csv = fixture(versioned("show-stat", _i, "csv"), &len);
	ck_assert_int_eq(find(csv, len, "be", "s1", &r, &why), 1);
	ck_assert_int_eq(r.weight, 10);
	ck_assert_int_eq(find(csv, len, "be", "s10", &r, &why), 1);
	ck_assert_int_eq(r.weight, 20);
	ck_assert_int_eq(find(csv, len, "be", "s", &r, &why), 0);
	ck_assert_int_eq(find(csv, len, "be", "s100", &r, &why), 0);
	ck_assert_int_eq(find(csv, len, "b", "s1", &r, &why), 0);
	ck_assert_int_eq(find(csv, len, "be2", "s1", &r, &why), 0);
	ck_assert_int_eq(find(csv, len, "nope", "s1", &r, &why), 0);
	ck_assert_int_eq(find(csv, len, "other", "s10", &r, &why), 0);
	ck_assert_int_eq(find(csv, len, "", "", &r, &why), 0);
	/* A column name is no row. */
	ck_assert_int_eq(find(csv, len, "pxname", "svname", &r, &why), 0);
	ck_assert_int_eq(find(csv, len, "# pxname", "svname", &r, &why), 0);
	free(csv);
	/* The same server in two backends: each its own. */
	ck_assert_int_eq(find_s("# pxname,svname,status,weight\n"
	    "a,s1,UP,3\nb,s1,DOWN,4\n", "b", "s1", &r, &why), 1);
	ck_assert_str_eq(r.status, "DOWN");
	ck_assert_int_eq(r.weight, 4);
}
END_TEST

/* Columns found by name wherever they are; iweight wins over uweight. */
START_TEST(columns_by_name)
{
	struct hastats_row	 r;
	const char		*why;

	ck_assert_int_eq(find_s("# agent_desc,weight,uweight,status,svname,"
	    "x,agent_status,pxname\n"
	    "fine,7,9,UP,s1,,* L7OK,be\n"
	    "nope,0,0,DOWN,s2,,L4CON,be\n", "be", "s1", &r, &why), 1);
	ck_assert_str_eq(r.status, "UP");
	ck_assert_int_eq(r.weight, 7);
	ck_assert_int_eq(r.initial_weight, 9);
	ck_assert_str_eq(r.agent_status, "L7OK");
	ck_assert_str_eq(r.agent_desc, "fine");
	ck_assert(hastats_serving(&r));

	/* Newer HAProxy: iweight, the configured weight, beside uweight. */
	ck_assert_int_eq(find_s("# pxname,svname,status,weight,uweight,"
	    "iweight\nbe,s1,UP,5,5,100\n", "be", "s1", &r, &why), 1);
	ck_assert_int_eq(r.initial_weight, 100);
	ck_assert_int_eq(find_s("# pxname,svname,status,weight,iweight\n"
	    "be,s1,UP,5,\n", "be", "s1", &r, &why), 1);
	ck_assert_int_eq(r.initial_weight, -1);

	/* Only the required ones: the rest empty. */
	memset(&r, 0x55, sizeof(r));
	ck_assert_int_eq(find_s("#svname,weight,pxname,status\r\n"
	    "s1,,be,no check\r\n", "be", "s1", &r, &why), 1);
	ck_assert_str_eq(r.status, "no check");
	ck_assert_int_eq(r.weight, -1);
	ck_assert_int_eq(r.initial_weight, -1);
	ck_assert_str_eq(r.agent_status, "");
	ck_assert_str_eq(r.agent_desc, "");
	ck_assert(!hastats_serving(&r));
}
END_TEST

START_TEST(columns_missing)
{
	static const struct {
		const char	*csv, *why;
	} bad[] = {
		{ "# svname,status,weight\ns1,UP,1\n", "pxname" },
		{ "# pxname,status,weight\nbe,UP,1\n", "svname" },
		{ "# pxname,svname,weight\nbe,s1,1\n", "status" },
		{ "# pxname,svname,status,uweight\nbe,s1,UP,1\n", "weight" },
		{ "# pxname,svname,status,weight,status\nbe,s1,UP,1,UP\n",
		    "twice" },
		{ NULL, NULL },
	};
	struct hastats_row	 r;
	const char		*why;
	size_t			 i;

	for (i = 0; bad[i].csv != NULL; i++) {
		ck_assert_int_eq(find_s(bad[i].csv, "be", "s1", &r, &why), -1);
		ck_assert_ptr_nonnull(why);
		ck_assert_msg(strstr(why, bad[i].why) != NULL, "%s", why);
	}
}
END_TEST

/* Quoting as management.txt says, and bytes HAProxy would not send. */
START_TEST(odd_fields)
{
	struct hastats_row	 r;
	const char		*why;
	static const char	 nul[] = "# pxname,svname,status,weight\n"
	    "be,s1\0x,UP,1\nbe,s1,DOWN,1\n";

	/* Quoted names and fields, '""' inside, a comma inside. */
	ck_assert_int_eq(find_s("# pxname,svname,status,weight,agent_desc\n"
	    "\"a,b\",\"s\"\"1\",\"UP\",\"4\",\"say \"\"hi\"\", ok\"\n",
	    "a,b", "s\"1", &r, &why), 1);
	ck_assert_str_eq(r.status, "UP");
	ck_assert_int_eq(r.weight, 4);
	ck_assert_str_eq(r.agent_desc, "say \"hi\", ok");
	/* A quoted field across lines: the row after it still lines up. */
	ck_assert_int_eq(find_s("# pxname,svname,status,weight,agent_desc\n"
	    "be,s0,UP,1,\"two\nlines\"\nbe,s1,DOWN,2,\"x\"\r\n", "be", "s1",
	    &r, &why), 1);
	ck_assert_str_eq(r.status, "DOWN");
	ck_assert_int_eq(find_s("# pxname,svname,status,weight,agent_desc\n"
	    "be,s0,UP,1,\"two\nlines\"\n", "be", "s0", &r, &why), 1);
	ck_assert_str_eq(r.agent_desc, "two");
	/* A quote inside an unquoted field is just a quote. */
	ck_assert_int_eq(find_s("# pxname,svname,status,weight\n"
	    "be,s\"1,UP,1\n", "be", "s\"1", &r, &why), 1);
	/* Control bytes shown as '?', blanks around dropped. */
	ck_assert_int_eq(find_s("# pxname,svname,status,weight,agent_status\n"
	    "be,s1, UP\x01\x7f ,1,\x1b[2J\n", "be", "s1", &r, &why), 1);
	ck_assert_str_eq(r.status, "UP??");
	ck_assert_str_eq(r.agent_status, "?[2J");
	/* A NUL in the data: bounded by len, the names do not match. */
	ck_assert_int_eq(find(nul, sizeof(nul) - 1, "be", "s1", &r, &why), 1);
	ck_assert_str_eq(r.status, "DOWN");
	/* Too long for the row: cut. */
	ck_assert_int_eq(find_s("# pxname,svname,status,weight\n"
	    "be,s1,MAINT (via backend-with-a-long-name/server-too),1\n", "be",
	    "s1", &r, &why), 1);
	ck_assert_str_eq(r.status, "MAINT (via backend-with-a-long-");
	ck_assert_str_eq(hastats_admin(&r), "MAINT");

	/* Broken: text after a closing quote, weights that are no number. */
	ck_assert_int_eq(find_s("# pxname,svname,status,weight\n"
	    "be,\"s1\"x,UP,1\n", "be", "s1", &r, &why), -1);
	ck_assert_str_eq(why, "text after a closing quote");
	ck_assert_int_eq(find_s("# pxname,svname,status,weight\n"
	    "be,s1,UP,-1\n", "be", "s1", &r, &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "weight"));
	ck_assert_int_eq(find_s("# pxname,svname,status,weight\n"
	    "be,s1,UP,99999999999999999999999\n", "be", "s1", &r, &why), -1);
	ck_assert_int_eq(find_s("# pxname,svname,status,weight,uweight\n"
	    "be,s1,UP,1,x\n", "be", "s1", &r, &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "initial weight"));
	/* Our row shorter than the header. */
	ck_assert_int_eq(find_s("# pxname,svname,status,weight,agent_desc\n"
	    "be,s1,UP,1\n", "be", "s1", &r, &why), -1);
	ck_assert_ptr_nonnull(strstr(why, "fewer fields"));
	/* Another row's shortness is not ours. */
	ck_assert_int_eq(find_s("# pxname,svname,status,weight\n"
	    "be\n\nbe,s1,UP,1\n", "be", "s1", &r, &why), 1);
}
END_TEST

/* Not statistics at all: what a CLI error or an HTML page looks like. */
START_TEST(not_csv)
{
	static const char	*bad[] = {
		"",
		"Unknown command. Please enter one of the following commands "
		    "only :\n",
		"Permission denied\n",
		"<html><body>503</body></html>\n",
		"\n# pxname,svname,status,weight\nbe,s1,UP,1\n",
		"pxname,svname,status,weight\nbe,s1,UP,1\n",
		NULL,
	};
	struct hastats_row	 r;
	const char		*why;
	size_t			 i;

	for (i = 0; bad[i] != NULL; i++) {
		ck_assert_int_eq(find_s(bad[i], "be", "s1", &r, &why), -1);
		ck_assert_ptr_nonnull(why);
		ck_assert_msg(strstr(why, "not HAProxy statistics") != NULL,
		    "%s", why);
	}
	/* A header and nothing else: a HAProxy without servers. */
	ck_assert_int_eq(find_s("# pxname,svname,status,weight\n", "be", "s1",
	    &r, &why), 0);
}
END_TEST

/*
 * The capture cut short: the row is found only when all of its line came,
 * and "not there" is said only when the cut fell at a line end (nothing can
 * tell that from a whole answer). Cut at every length around where the
 * answer changes (the header line, the row's own line, each line's end)
 * and at every 13th elsewhere: every length costs the square of the
 * capture's, over half a minute under AddressSanitizer.
 */
static bool
cut_tried(const char *csv, size_t len, size_t cut, size_t header_end,
    size_t row_start, size_t need)
{
	return cut <= header_end + 2 || (cut + 2 >= row_start && cut <= need + 2) ||
	    (cut > 0 && csv[cut - 1] == '\n') || (cut + 1 < len &&
	    csv[cut] == '\n') || cut % 13 == 0;
}

START_TEST(truncated)
{
	const char		*stems[] = { "show-stat", "http-stats" };
	const struct want	*w;
	struct hastats_row	 r;
	const char		*why, *line, *end;
	char			*csv;
	size_t			 len, cut, need, i;
	int			 rv;

	for (i = 0; i < 2; i++) {
		csv = fixture(versioned(stems[i], _i, "csv"), &len);
		for (w = fixture_rows; w->backend != NULL; w++) {
			/* The first server and a late one. */
			if (strcmp(w->backend, "be") != 0 ||
			    (strcmp(w->server, "coming") != 0 &&
			    strcmp(w->server, "s1") != 0))
				continue;
			ck_assert_ptr_nonnull(line = memmem(csv, len,
			    w->server[0] == 'c' ? "\nbe,coming," : "\nbe,s1,",
			    w->server[0] == 'c' ? 11 : 7));
			ck_assert_ptr_nonnull(end = memchr(line + 1, '\n',
			    len - (size_t)(line + 1 - csv)));
			need = (size_t)(end - csv) + 1;
			for (cut = 0; cut < len; cut++) {
				if (!cut_tried(csv, len, cut, (size_t)((const char *)
				    memchr(csv, '\n', len) - csv), (size_t)(line + 1 -
				    csv), need))
					continue;
				rv = find(csv, cut, w->backend, w->server, &r,
				    &why);
				if (cut >= need) {
					ck_assert_int_eq(rv, 1);
					check_row(&r, w);
				} else if (cut > 0 && csv[cut - 1] == '\n' &&
				    cut > (size_t)((const char *)memchr(csv, '\n',
				    len) - csv))
					ck_assert_int_eq(rv, 0);
				else {
					ck_assert_msg(rv == -1, "cut %zu: %d",
					    cut, rv);
					ck_assert_ptr_nonnull(why);
				}
			}
		}
		free(csv);
	}
}
END_TEST

/* Huge lines: a long header, a long unrelated row, a long field. */
START_TEST(huge_lines)
{
	struct hastats_row	 r;
	const char		*why;
	char			*csv, *p;
	size_t			 n = 1 << 20, i;

	ck_assert_ptr_nonnull(csv = malloc(4 * n));
	/* 100000 columns before the ones we need. */
	p = csv + sprintf(csv, "# ");
	for (i = 0; i < 100000; i++)
		p += sprintf(p, "c%zu,", i);
	p += sprintf(p, "pxname,svname,status,weight,agent_desc\n");
	for (i = 0; i < 100000; i++)
		*p++ = ',';
	p += sprintf(p, "be,s0,UP,1,x\n");
	/* A megabyte in one field of another row, then in ours. */
	for (i = 0; i < 100000; i++)
		*p++ = ',';
	p += sprintf(p, "be,s1,UP,1,\"");
	memset(p, 'd', n);
	p += n;
	p += sprintf(p, "\"\n");
	for (i = 0; i < 100000; i++)
		*p++ = ',';
	p += sprintf(p, "be,s2,DRAIN,3,");
	memset(p, 'e', n);
	p += n;
	*p++ = '\n';
	ck_assert_int_eq(find(csv, (size_t)(p - csv), "be", "s2", &r, &why),
	    1);
	ck_assert_str_eq(r.status, "DRAIN");
	ck_assert_int_eq(r.weight, 3);
	ck_assert_uint_eq(strlen(r.agent_desc), sizeof(r.agent_desc) - 1);
	ck_assert_int_eq(r.agent_desc[0], 'e');
	ck_assert_int_eq(find(csv, (size_t)(p - csv), "be", "s1", &r, &why),
	    1);
	ck_assert_int_eq(r.agent_desc[0], 'd');
	ck_assert_int_eq(find(csv, (size_t)(p - csv), "be", "s3", &r, &why),
	    0);
	free(csv);
}
END_TEST

/* The verdicts on their own, for statuses the captures did not show. */
START_TEST(serving_and_admin)
{
	static const struct {
		const char	*status;
		long		 weight;
		bool		 serving;
		const char	*admin;
	} t[] = {
		{ "UP", 1, true, NULL },
		{ "UP", 0, false, NULL },
		{ "UP", -1, false, NULL },
		{ "UP 1/3", 5, true, NULL },
		{ "UP (agent)", 5, true, NULL },
		{ "no check", 1, true, NULL },
		{ "no check", 0, false, NULL },
		{ "UPGRADE", 1, false, NULL },
		{ "up", 1, false, NULL },
		{ "DOWN", 1, false, NULL },
		{ "DOWN 1/2", 1, false, NULL },
		{ "NOLB", 1, false, "DRAIN" },
		{ "NOLB 1/3", 1, false, "DRAIN" },
		{ "DRAIN", 1, false, "DRAIN" },
		{ "DRAIN 1/3", 1, false, "DRAIN" },
		{ "DRAIN (agent)", 1, false, "DRAIN" },
		{ "MAINT", 1, false, "MAINT" },
		{ "MAINT (resolution)", 1, false, "MAINT" },
		{ "MAINT (via be/s1)", 1, false, "MAINT" },
		{ "", 1, false, NULL },
		{ NULL, 0, false, NULL },
	};
	struct hastats_row	 r;
	const char		*admin;
	size_t			 i;

	for (i = 0; t[i].status != NULL; i++) {
		memset(&r, 0, sizeof(r));
		snprintf(r.status, sizeof(r.status), "%s", t[i].status);
		r.weight = t[i].weight;
		ck_assert_msg(hastats_serving(&r) == t[i].serving, "%s",
		    t[i].status);
		admin = hastats_admin(&r);
		if (t[i].admin == NULL)
			ck_assert_msg(admin == NULL, "%s", t[i].status);
		else
			ck_assert_str_eq(admin, t[i].admin);
	}
}
END_TEST

/* The Runtime API's "show stat;show servers state": the CSV, then weights. */
START_TEST(stat_and_servers_state)
{
	char			*text;
	size_t			 len, csv_len, state_len;
	const char		*state, *why;
	struct hastats_row	 r;
	long			 iw;

	text = fixture(versioned("stat-and-state", _i, "txt"), &len);
	csv_len = hastats_split(text, len, &state, &state_len);
	ck_assert_ptr_nonnull(state);
	ck_assert_uint_eq(csv_len + state_len, len);
	ck_assert(strncmp(state, "1\n# be_id be_name ", 18) == 0);
	/* The CSV part reads as any show stat. */
	ck_assert_int_eq(hastats_find(text, csv_len, "be", "n2", &r, &why), 1);
	ck_assert_int_eq(r.weight, 50);
	/* The configured weight is in the servers state only. */
	ck_assert_int_eq(hastats_initial_weight(state, state_len, "be", "n2",
	    &iw, &why), 1);
	ck_assert_int_eq(iw, 100);
	ck_assert_int_eq(hastats_initial_weight(state, state_len, "be", "n1",
	    &iw, &why), 1);
	ck_assert_int_eq(iw, 5);
	ck_assert_int_eq(hastats_initial_weight(state, state_len, "be", "n",
	    &iw, &why), 0);
	ck_assert_int_eq(hastats_initial_weight(state, state_len, "b", "n1",
	    &iw, &why), 0);
	/* Every cut of it: never read past the end, never a wrong weight. */
	for (len = 0; len < state_len; len++) {
		char *cut = malloc(len ? len : 1);
		int rc;

		ck_assert_ptr_nonnull(cut);
		memcpy(cut, state, len);
		iw = -7;
		rc = hastats_initial_weight(cut, len, "be", "n2", &iw, &why);
		ck_assert(rc == -1 || rc == 0 || (rc == 1 && (iw == 100 ||
		    iw == 10 || iw == 1)));
		free(cut);
	}
	free(text);
	/* Without a servers state: all of it is CSV. */
	ck_assert_uint_eq(hastats_split("# pxname,svname\n", 16, &state,
	    &state_len), 16);
	ck_assert_ptr_null(state);
	/* Headers without the columns, numbers that are not. */
	ck_assert_int_eq(hastats_initial_weight("1\n# be_id be_name srv_name\n",
	    27, "be", "n1", &iw, &why), -1);
	ck_assert_str_eq(why, "servers state without be_name, srv_name or "
	    "srv_iweight");
	ck_assert_int_eq(hastats_initial_weight("1\n", 2, "be", "n1", &iw,
	    &why), -1);
	ck_assert_str_eq(why, "no servers state header");
	state = "1\n# be_name srv_name srv_iweight\nbe n1 x\n";
	ck_assert_int_eq(hastats_initial_weight(state, strlen(state), "be",
	    "n1", &iw, &why), -1);
	ck_assert_str_eq(why, "servers state: srv_iweight is not a number");
	state = "1\n# be_name srv_name srv_iweight\nbe n1\n";
	ck_assert_int_eq(hastats_initial_weight(state, strlen(state), "be",
	    "n1", &iw, &why), -1);
	/* The last line may lack its newline. */
	state = "1\n# be_name srv_name srv_iweight\nbe n1 7";
	ck_assert_int_eq(hastats_initial_weight(state, strlen(state), "be",
	    "n1", &iw, &why), 1);
	ck_assert_int_eq(iw, 7);
}
END_TEST

static Suite *
hastats_suite(void)
{
	Suite	*s = suite_create("hastats");
	TCase	*tc = tcase_create("hastats");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, show_stat_socket, 0, NVERSIONS);
	tcase_add_loop_test(tc, stats_page_csv, 0, NVERSIONS);
	tcase_add_loop_test(tc, names_exact, 0, NVERSIONS);
	tcase_add_test(tc, columns_by_name);
	tcase_add_test(tc, columns_missing);
	tcase_add_test(tc, odd_fields);
	tcase_add_test(tc, not_csv);
	tcase_add_loop_test(tc, truncated, 0, NVERSIONS);
	tcase_add_test(tc, huge_lines);
	tcase_add_test(tc, serving_and_admin);
	tcase_add_loop_test(tc, stat_and_servers_state, 0, NVERSIONS);
	tcase_add_test(tc, sessions_and_every_server);
	tcase_add_test(tc, traffic_counters);
	tcase_add_test(tc, responses_summed);
	tcase_add_test(tc, counters_odd);
	suite_add_tcase(s, tc);
	return s;
}


int
main(void)
{
	return tu_run(hastats_suite());
}
