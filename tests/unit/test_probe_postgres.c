/*
 * postgres probes without a server: configuration errors (libpq's own
 * words, never the conninfo), no warning for a host name (the probe
 * resolves it, not libpq), a refused connection, and a peer that accepts
 * and says nothing, cancelled at the owner's timeout without a descriptor
 * left.
 * The runs against a real server are in tests/integration/test_65_postgres.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lbagent/probes/kinds.h"
#include "probeutil.h"
#include "testutil.h"

#define RUN_LIMIT_MS	20000

/* A loopback TCP socket on a free port, listening or only bound. */
static int
loopback(int *port, bool listen_too)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof(sin);
	int			fd;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) == -1 ||
	    (listen_too && listen(fd, 4) == -1)) {
		close(fd);
		return -1;
	}
	*port = ntohs(sin.sin_port);
	return fd;
}

static void
set_port(struct pu *pu, int port)
{
	char	conninfo[128];

	snprintf(conninfo, sizeof(conninfo), "host=127.0.0.1 port=%d "
	    "user=lbagent dbname=postgres sslmode=disable gssencmode=disable "
	    "password=s3cret-never-shown", port);
	pu_set(pu, "conninfo", conninfo);
	pu_check(pu);
}

START_TEST(conf_errors)
{
	struct pu	 pu;
	const char	*why;

	pu_init(&pu, &probe_postgres_ops, NULL);
	ck_assert_str_eq(pu_check_bad(&pu), "conninfo is required");
	/* libpq's words, without what it quoted of the string. */
	why = pu_set_bad(&pu, "conninfo", "host=db password=hunter2x port");
	ck_assert_ptr_null(strstr(why, "hunter2x"));
	ck_assert_ptr_null(strstr(why, "port"));
	ck_assert_ptr_nonnull(strstr(why, "missing \"=\""));
	why = pu_set_bad(&pu, "conninfo", "host='db password=hunter2x");
	ck_assert_ptr_null(strstr(why, "hunter2x"));
	why = pu_set_bad(&pu, "conninfo",
	    "postgresql://app:hunter2x@[::1/db");
	ck_assert_ptr_null(strstr(why, "hunter2x"));
	/* An unknown keyword is a key's name: libpq's quote of it stays. */
	ck_assert_str_eq(pu_set_bad(&pu, "conninfo", "hots=db"),
	    "invalid connection option \"hots\"");
	ck_assert_str_eq(pu_set_bad(&pu, "expect_role", "master"),
	    "expected primary or standby");
	ck_assert_ptr_nonnull(pu_set_bad(&pu, "warn", "ten"));
	ck_assert_ptr_nonnull(pu_set_bad(&pu, "crit", "5s"));
	ck_assert_ptr_nonnull(pu_set_bad(&pu, "warn_latency", "fast"));
	ck_assert_str_eq(pu_set_bad(&pu, "timeout", "1s"), "unknown key");
	ck_assert_str_eq(pu_check_bad(&pu), "conninfo is required");

	pu_set(&pu, "conninfo", "host=127.0.0.1 port=5432 dbname=app");
	pu_check(&pu);
	pu_set(&pu, "expect_value", "1");
	pu_set(&pu, "warn", "10");
	ck_assert_str_eq(pu_check_bad(&pu),
	    "expect_value or warn/crit, not both");
	pu_done(&pu);

	pu_conf_check_fails(&probe_postgres_ops,
	    "warn_latency must be below crit_latency", "conninfo", "dbname=app",
	    "warn_latency", "2s", "crit_latency", "1s", NULL);
	pu_conf_check_fails(&probe_postgres_ops,
	    "expect_value or warn/crit, not both", "conninfo", "dbname=app",
	    "crit", "5", "expect_value", "t", NULL);

	pu_init(&pu, &probe_postgres_ops, NULL);
	pu_set(&pu, "conninfo", "postgresql://app@127.0.0.1:5432/app");
	pu_set(&pu, "query", "SELECT COALESCE(EXTRACT(EPOCH FROM now() - "
	    "pg_last_xact_replay_timestamp()), 0)");
	pu_set(&pu, "warn", "10");
	pu_set(&pu, "crit", "60");
	pu_set(&pu, "expect_role", "standby");
	pu_set(&pu, "passfile", "/etc/lbagent/pgpass");
	pu_set(&pu, "warn_latency", "200ms");
	pu_set(&pu, "crit_latency", "1s");
	pu_check(&pu);
	pu_done(&pu);
	ck_assert(pu_documents(&probe_postgres_ops, "conninfo"));
	ck_assert(pu_documents(&probe_postgres_ops, "expect_role"));
	ck_assert(pu_documents(&probe_postgres_ops, "passfile"));
}
END_TEST

/*
 * Names are resolved by the probe (evdns), never by libpq: no warning for
 * any host list. requirepeer would ask who holds the relay's pair.
 */
START_TEST(host_names)
{
	static const char *const quiet[] = {
		"dbname=app",
		"host=127.0.0.1 dbname=app",
		"host=/run/postgresql",
		"host=db.example hostaddr=10.0.0.5",
		"host=10.0.0.1,db-2.example password=pw0rd",
		"postgresql://u:pw0rd@db.example/app",
	};
	struct pu	 pu;
	size_t		 i;

	ck_assert(probe_postgres_ops.conf_warning == NULL);
	for (i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++) {
		pu_init(&pu, &probe_postgres_ops, NULL);
		pu_set(&pu, "conninfo", quiet[i]);
		pu_check(&pu);
		pu_done(&pu);
	}
	pu_init(&pu, &probe_postgres_ops, NULL);
	ck_assert_ptr_nonnull(strstr(pu_set_bad(&pu, "conninfo",
	    "host=/run/postgresql requirepeer=postgres"),
	    "requirepeer is not supported"));
	ck_assert_str_eq(pu_set_bad(&pu, "conninfo",
	    "host=a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q"),
	    "conninfo: more than 16 hosts");
	pu_done(&pu);
}
END_TEST

START_TEST(refused)
{
	struct pu			 pu;
	const struct probe_outcome	*out;
	int				 fd, port, fds;
	char				 want[80];

	pu_init(&pu, &probe_postgres_ops, NULL);
	/* A port that was free a moment ago, and nobody listens on. */
	ck_assert_int_ne(fd = loopback(&port, false), -1);
	close(fd);
	set_port(&pu, port);
	fds = pu_count_fds();
	out = pu_run(&pu, RUN_LIMIT_MS);
	ck_assert_int_eq(out->result, PROBE_CRIT);
	snprintf(want, sizeof(want), "cannot connect: Connection refused "
	    "(127.0.0.1:%d)", port);
	ck_assert_str_eq(out->reason, want);
	ck_assert_ptr_null(strstr(out->reason, "s3cret"));
	ck_assert(isnan(out->value));
	ck_assert_int_eq(pu_count_fds(), fds);
	pu_done(&pu);
}
END_TEST

/* No server on the socket: libpq's words, with the socket's path. */
START_TEST(no_socket)
{
	struct pu			 pu;
	const struct probe_outcome	*out;
	char				 conninfo[PATH_MAX + 64], want[PATH_MAX + 80];
	char				*dir = tu_tmpdir();

	pu_init(&pu, &probe_postgres_ops, NULL);
	snprintf(conninfo, sizeof(conninfo), "host=%s port=5999 user=x", dir);
	pu_set(&pu, "conninfo", conninfo);
	pu_check(&pu);
	out = pu_run(&pu, RUN_LIMIT_MS);
	snprintf(want, sizeof(want), "cannot connect: No such file or "
	    "directory (%s/.s.PGSQL.5999)", dir);
	ck_assert_int_eq(out->result, PROBE_CRIT);
	ck_assert_msg(strncmp(out->reason, want, PROBE_REASON_MAX) == 0,
	    "%s", out->reason);
	pu_done(&pu);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* An IPv6 server in brackets, as an address with a port is written. */
START_TEST(refused_ipv6)
{
	struct pu			 pu;
	const struct probe_outcome	*out;
	char				 want[80];
	int				 port = 1;

	pu_init(&pu, &probe_postgres_ops, NULL);
	pu_set(&pu, "conninfo", "host=::1 port=1 user=x sslmode=disable");
	pu_check(&pu);
	out = pu_run(&pu, RUN_LIMIT_MS);
	ck_assert_int_eq(out->result, PROBE_CRIT);
	snprintf(want, sizeof(want), "([::1]:%d)", port);
	/* Refused, or no IPv6 here: the server is named the same way. */
	ck_assert_msg(strstr(out->reason, want) != NULL, "%s", out->reason);
	pu_done(&pu);
}
END_TEST

/* A peer that accepts and never answers: the owner cancels, nothing stays. */
START_TEST(silent_peer_cancelled)
{
	struct pu	pu;
	int		fd, port, fds;

	pu_init(&pu, &probe_postgres_ops, NULL);
	ck_assert_int_ne(fd = loopback(&port, true), -1);
	set_port(&pu, port);
	pu.run.timeout_ms = 300;
	fds = pu_count_fds();
	ck_assert(!pu_once(&pu, 300));
	ck_assert_int_eq(pu.nreports, 0);
	ck_assert_ptr_null(pu.run.data);
	ck_assert_int_eq(pu_count_fds(), fds);
	close(fd);
	pu_done(&pu);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("probe_postgres");
	TCase	*tc;

	tc = tcase_create("conf");
	tcase_add_test(tc, conf_errors);
	tcase_add_test(tc, host_names);
	suite_add_tcase(s, tc);
	tc = tcase_create("runs");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, refused);
	tcase_add_test(tc, no_socket);
	tcase_add_test(tc, refused_ipv6);
	tcase_add_test(tc, silent_peer_cancelled);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
