/*
 * The postgres kind's host lists: which entries are names, and the host,
 * hostaddr and port lists libpq is given once they are resolved.
 */
#include <errno.h>
#include <string.h>

#include "lbagent/probes/pg_hosts.h"
#include "testutil.h"

static char	addrs[PG_HOSTS_MAX][PG_HOST_ADDRS_MAX][48];
static size_t	n_addrs[PG_HOSTS_MAX];

#define ADDRS	((const char (*)[PG_HOST_ADDRS_MAX][48])addrs)

START_TEST(numeric)
{
	ck_assert(pg_host_numeric("10.0.0.1", 8));
	ck_assert(pg_host_numeric("::1", 3));
	ck_assert(pg_host_numeric("/run/postgresql", 15));
	ck_assert(pg_host_numeric("@abstract", 9));
	ck_assert(pg_host_numeric("", 0));
	ck_assert(!pg_host_numeric("db.example", 10));
	ck_assert(!pg_host_numeric("10.0.0.1.example", 16));
	/* The length counts, not the NUL: an entry of a list. */
	ck_assert(pg_host_numeric("10.0.0.1,db", 8));
	ck_assert(!pg_host_numeric("10.0.0.1,db", 11));
}
END_TEST

START_TEST(parse)
{
	struct pg_hosts	 h;
	const char	*why = NULL;

	memset(&h, 0, sizeof(h));
	ck_assert_int_eq(pg_hosts_parse(&h, NULL, "5432", &why), 0);
	ck_assert_uint_eq(h.n, 0);
	ck_assert(!h.any_name);
	ck_assert_int_eq(pg_hosts_parse(&h, "10.0.0.1,/tmp", NULL, &why), 0);
	ck_assert_uint_eq(h.n, 2);
	ck_assert(!h.any_name);
	ck_assert_int_eq(pg_hosts_parse(&h, "10.0.0.1,db,", "1,2,3", &why), 0);
	ck_assert_uint_eq(h.n, 3);
	ck_assert(h.any_name && !h.name[0] && h.name[1] && !h.name[2]);
	ck_assert(h.ports_listed);
	ck_assert_str_eq(h.port[1], "2");
	/* One port for all: not repeated, libpq applies it to each. */
	ck_assert_int_eq(pg_hosts_parse(&h, "a,b", "5432", &why), 0);
	ck_assert(!h.ports_listed);
	ck_assert_int_eq(pg_hosts_parse(&h,
	    "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q", NULL, &why), -1);
	ck_assert_str_eq(why, "conninfo: more than 16 hosts");
	ck_assert_uint_eq(h.n, 0);
	pg_hosts_clear(&h);
}
END_TEST

START_TEST(join)
{
	struct pg_hosts		h;
	struct pg_host_lists	l;
	const char		*why;

	memset(&h, 0, sizeof(h));
	memset(n_addrs, 0, sizeof(n_addrs));
	ck_assert_int_eq(pg_hosts_parse(&h, "10.0.0.1,db,gone,/tmp",
	    "1,2,3,4", &why), 0);
	strcpy(addrs[1][0], "10.0.0.5");
	strcpy(addrs[1][1], "fd00::5");
	n_addrs[1] = 2;
	n_addrs[2] = 0;		/* a name that resolved to nothing: left out */
	ck_assert_int_eq(pg_hosts_join(&h, ADDRS, n_addrs, &l), 0);
	ck_assert_str_eq(l.host, "10.0.0.1,db,db,/tmp");
	ck_assert_str_eq(l.hostaddr, ",10.0.0.5,fd00::5,");
	ck_assert_str_eq(l.port, "1,2,2,4");
	pg_host_lists_clear(&l);

	/* More addresses than are tried: the first ones. */
	ck_assert_int_eq(pg_hosts_parse(&h, "db", "5432", &why), 0);
	n_addrs[0] = PG_HOST_ADDRS_MAX + 3;
	strcpy(addrs[0][0], "10.0.0.1");
	strcpy(addrs[0][1], "10.0.0.2");
	strcpy(addrs[0][2], "10.0.0.3");
	strcpy(addrs[0][3], "10.0.0.4");
	ck_assert_int_eq(pg_hosts_join(&h, ADDRS, n_addrs, &l), 0);
	ck_assert_str_eq(l.host, "db,db,db,db");
	ck_assert_str_eq(l.hostaddr, "10.0.0.1,10.0.0.2,10.0.0.3,10.0.0.4");
	ck_assert_ptr_null(l.port);
	pg_host_lists_clear(&l);

	/* No name resolved: nothing to connect to. */
	n_addrs[0] = 0;
	errno = EINVAL;
	ck_assert_int_eq(pg_hosts_join(&h, ADDRS, n_addrs, &l), -1);
	ck_assert_int_eq(errno, 0);
	ck_assert_ptr_null(l.host);
	pg_hosts_clear(&h);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("pg_hosts");
	TCase	*tc = tcase_create("lists");

	tcase_add_test(tc, numeric);
	tcase_add_test(tc, parse);
	tcase_add_test(tc, join);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
