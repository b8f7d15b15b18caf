/*
 * The postgres kind: one connection per run on libpq's asynchronous API,
 * driven by the event loop (PQconnectPoll, then PQsendQuery / PQflush /
 * PQconsumeInput / PQgetResult on the connection's socket), never a
 * blocking call; PQfinish at the end or at the cancel.
 *
 * Whatever the server does, a run costs the loop little: a host name is
 * resolved with evdns and given to libpq as hostaddr (libpq resolves
 * nothing); what the server sends reaches libpq through a relay that stops
 * reading after PG_READ_MAX bytes (pg_relay.h); rows come one at a time
 * (single-row mode) and the run stops after PG_ROWS_MAX of them.
 *
 * Before the user's query, the same session gets a statement_timeout a
 * little under what is left of the probe's timeout, so that a slow query
 * is cancelled by the server itself, and, with expect_role, SELECT
 * pg_is_in_recovery(). A query still running at the probe's timeout is
 * cancelled too, by a cancel request on a worker thread (pg_cancel.h).
 *
 * The conninfo may hold a password: it is never shown (its key is secret
 * to the configuration loader, and libpq's messages never quote it).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>
#include <libpq-fe.h>

#include "lbagent/core/threshold.h"
#include "lbagent/core/units.h"
#include "lbagent/probes/kinds.h"
#include "lbagent/probes/pg_hosts.h"
#include "lbagent/probes/postgres.h"
#include "lbagent/probes/probe.h"
#include "pg_cancel.h"
#include "pg_relay.h"

#define PG_SHOWN_MAX		40	/* of a value in a reason */
#define PG_WHY_MAX		160	/* of a config error from libpq */
#define PG_MARGIN_MIN_MS	50	/* statement_timeout under the rest */
#define PG_DEFAULT_QUERY	"SELECT 1"
#define PG_SQLSTATE_CANCELED	"57014"
#define PG_READ_MAX_MIB		1	/* read from the server in a run */
#define PG_READ_MAX		((size_t)PG_READ_MAX_MIB << 20)
#define PG_ROWS_MAX		1000	/* of the user's query, then stopped */

static const char	*resolv_conf = "/etc/resolv.conf";

enum pg_role {
	PG_ROLE_ANY,
	PG_ROLE_PRIMARY,
	PG_ROLE_STANDBY,
};

struct pg_conf {
	char		*conninfo;	/* secret: may hold a password */
	char		*passfile;
	char		*query;		/* NULL: PG_DEFAULT_QUERY */
	char		*expect_value;
	struct threshold	 num;	/* on the first column */
	struct latency_limit	 latency;
	enum pg_role	 role;
	struct pg_hosts	 hosts;		/* the names among them resolved */
	char		 why[PG_WHY_MAX];
};

enum pg_state {
	PG_RESOLVING,	/* evdns, a name of the host list at a time */
	PG_CONNECTING,	/* PQconnectPoll until it says OK */
	PG_SETUP,	/* SET statement_timeout (and pg_is_in_recovery()) */
	PG_QUERY,	/* the user's query */
};

/*
 * Across runs of one probe: its resolver, made on first need, and its
 * cancel requests. evdns calls back a cancelled lookup later, from the
 * loop, and touches the resolver then: so the keep lives until the last
 * such callback, even when the probe is gone (keep_free during a reload).
 */
struct pg_keep {
	struct event_base	*base;
	struct evdns_base	*dns;
	unsigned		 lookups;	/* in flight, cancelled ones too */
	bool			 freed;		/* the probe is gone */
	struct pg_canceller	*cancel;
};

struct pg_run {
	struct probe_run	*run;		/* NULL once cancelled (lookup) */
	const struct pg_conf	*conf;
	struct pg_keep		*keep;
	PGconn			*conn;
	struct event		*ev;
	enum pg_state		 state;
	/* resolving: the entry asked for, and each name's addresses */
	size_t			 host_i;
	struct evdns_getaddrinfo_request *req;
	bool			 starting;	/* inside evdns_getaddrinfo */
	bool			 answered;	/* ... which answered at once */
	int			 gai_err;
	struct evutil_addrinfo	*ais;
	int			 resolve_err;	/* of the first name that failed */
	const char		*resolve_host;
	char			 addrs[PG_HOSTS_MAX][PG_HOST_ADDRS_MAX][48];
	size_t			 n_addrs[PG_HOSTS_MAX];
	/* what the server sent: through the relay, counted */
	struct pg_relay		*relay;
	size_t			 spent;		/* by earlier attempts' relays */
	uint64_t		 rows;		/* of the user's query */
	struct timespec		 t0;		/* the run's start */
	struct timespec		 tq;		/* the user's query sent */
	int64_t			 stmt_timeout_ms;
	/* what the results said, gathered until PQgetResult gives NULL */
	bool			 failed;
	char			 sqlstate[6];
	char			 error[PROBE_REASON_MAX + 1];
	bool			 got_rows;	/* a result with tuples came */
	bool			 got_value;	/* ... and a first row */
	bool			 is_null;
	char			*value;
	char			*column;
};

static const struct probe_key_doc pg_keys[] = {
	{ .name = "conninfo", .help = "libpq connection "
	    "string, key=value pairs or a postgresql:// URI (required); never "
	    "shown, as it may hold a password" },
	{ .name = "passfile", .help = "a libpq password file (mode 0600, "
	    "owned by lbagent's user); PGPASSFILE and ~/.pgpass work too" },
	{ .name = "query", .def = PG_DEFAULT_QUERY, .help = "the query run "
	    "at each run; its first column of the first row is judged" },
	{ .name = "expect_value", .help = "text the first column of the "
	    "first row must equal" },
	{ .name = "warn", .help = "the number in the first column at or above "
	    "which the run is warn (at or below when crit is below warn)" },
	{ .name = "crit", .help = "the number in the first column at or above "
	    "which the run is crit (at or below when crit is below warn)" },
	{ .name = "warn_latency", .help = "total time (connecting included) "
	    "at or above which the run is warn" },
	{ .name = "crit_latency", .help = "total time (connecting included) "
	    "at or above which the run is crit" },
	{ .name = "expect_role", .help = "primary or standby, from "
	    "pg_is_in_recovery() asked before the query" },
	{ .name = NULL },
};

static const char *const pg_secret_keys[] = { "conninfo", NULL };

static void	pg_io_cb(evutil_socket_t, short, void *);

static void *
pg_conf_new(void)
{
	return calloc(1, sizeof(struct pg_conf));
}

static void
pg_conf_free(void *p)
{
	struct pg_conf	*c = p;

	if (c == NULL)
		return;
	probe_free_secret(c->conninfo);
	free(c->passfile);
	free(c->query);
	free(c->expect_value);
	pg_hosts_clear(&c->hosts);
	free(c);
}

/*
 * libpq's complaint about a conninfo, made safe to show: one line, and
 * what it quotes of the string dropped (it could be part of a password),
 * but for an unknown keyword, which is a key's name.
 */
static void
conninfo_why(struct pg_conf *c, const char *msg)
{
	const char	*s = msg, *close;
	size_t		 n = 0, len = strcspn(msg, "\n");
	bool		 keep;

	keep = strncmp(msg, "invalid connection option", 25) == 0;
	while (s < msg + len && n + 6 < sizeof(c->why)) {
		/* A quote of one character ("=") says no more than libpq. */
		if (*s == '"' && !keep && (close = memchr(s + 1, '"',
		    (size_t)(msg + len - s - 1))) != NULL) {
			if (close - s > 2)
				memcpy(c->why + n, "\"...\"", 5);
			else
				memcpy(c->why + n, s, (size_t)(close - s + 1));
			n += close - s > 2 ? 5 : (size_t)(close - s + 1);
			s = close + 1;
			continue;
		}
		c->why[n++] = *s++;
	}
	c->why[n] = '\0';
	while (n > 0 && (c->why[n - 1] == ' ' || c->why[n - 1] == '.'))
		c->why[--n] = '\0';
	if (n == 0)
		snprintf(c->why, sizeof(c->why), "not a libpq connection "
		    "string");
}

/*
 * The host list, for the names the probe resolves itself. With hostaddr,
 * libpq resolves nothing: neither does the probe. requirepeer asks who
 * holds the other end of libpq's socket, which is the probe's relay.
 */
static int
hosts_of(struct pg_conf *c, const PQconninfoOption *opts, const char **why)
{
	const PQconninfoOption	*o;
	const char		*host = NULL, *port = NULL;
	bool			 hostaddr = false;

	for (o = opts; o->keyword != NULL; o++) {
		if (o->val == NULL || o->val[0] == '\0')
			continue;
		if (strcmp(o->keyword, "host") == 0)
			host = o->val;
		else if (strcmp(o->keyword, "port") == 0)
			port = o->val;
		else if (strcmp(o->keyword, "hostaddr") == 0)
			hostaddr = true;
		else if (strcmp(o->keyword, "requirepeer") == 0) {
			*why = "requirepeer is not supported (the probe relays "
			    "the connection, bounding what it reads)";
			return -1;
		}
	}
	if (host == NULL)
		host = getenv("PGHOST");
	if (port == NULL)
		port = getenv("PGPORT");
	return pg_hosts_parse(&c->hosts, hostaddr ? NULL : host, port, why);
}

static int
set_conninfo(struct pg_conf *c, const char *value, const char **why)
{
	PQconninfoOption	*opts;
	char			*err = NULL;
	int			 rv;

	if ((opts = PQconninfoParse(value, &err)) == NULL) {
		conninfo_why(c, err != NULL ? err : "out of memory");
		PQfreemem(err);
		*why = c->why;
		return -1;
	}
	rv = hosts_of(c, opts, why);
	PQconninfoFree(opts);
	if (rv == -1)
		return -1;
	probe_free_secret(c->conninfo);
	c->conninfo = NULL;
	return probe_set_string(&c->conninfo, value, true, why);
}

static int
pg_conf_set(void *p, const char *key, const char *value, const char **why)
{
	struct pg_conf	*c = p;

	if (strcmp(key, "conninfo") == 0)
		return set_conninfo(c, value, why);
	if (strcmp(key, "passfile") == 0)
		return probe_set_string(&c->passfile, value, true, why);
	if (strcmp(key, "query") == 0)
		return probe_set_string(&c->query, value, true, why);
	if (strcmp(key, "expect_value") == 0)
		return probe_set_string(&c->expect_value, value, true, why);
	if (strcmp(key, "warn") == 0)
		return probe_set_flagged(units_double(value, &c->num.warn, why),
		    &c->num.has_warn);
	if (strcmp(key, "crit") == 0)
		return probe_set_flagged(units_double(value, &c->num.crit, why),
		    &c->num.has_crit);
	if (strcmp(key, "warn_latency") == 0)
		return probe_set_flagged(units_duration_ms(value,
		    &c->latency.warn_ms, why), &c->latency.has_warn);
	if (strcmp(key, "crit_latency") == 0)
		return probe_set_flagged(units_duration_ms(value,
		    &c->latency.crit_ms, why), &c->latency.has_crit);
	if (strcmp(key, "expect_role") == 0) {
		if (strcmp(value, "primary") == 0)
			c->role = PG_ROLE_PRIMARY;
		else if (strcmp(value, "standby") == 0)
			c->role = PG_ROLE_STANDBY;
		else {
			*why = "expected primary or standby";
			return -1;
		}
		return 0;
	}
	*why = "unknown key";
	return -1;
}

static int
pg_conf_check(void *p, const char **why)
{
	struct pg_conf	*c = p;

	if (c->conninfo == NULL)
		*why = "conninfo is required";
	else if (c->expect_value != NULL && threshold_any(&c->num))
		*why = "expect_value or warn/crit, not both";
	else if ((*why = latency_limit_check(&c->latency)) == NULL)
		return 0;
	return -1;
}

static double
elapsed_ms(const struct timespec *since)
{
	struct timespec	now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - since->tv_sec) * 1e3 +
	    (double)(now.tv_nsec - since->tv_nsec) / 1e6;
}

static void
pg_release(struct pg_run *r)
{
	if (r->ev != NULL)
		event_free(r->ev);
	if (r->conn != NULL)
		PQfinish(r->conn);	/* its goodbye, through the relay */
	pg_relay_free(r->relay);
	if (r->ais != NULL)
		evutil_freeaddrinfo(r->ais);
	free(r->value);
	free(r->column);
	free(r);
}

/* Releases the run, then reports it: the order probe_report() asks for. */
static void LOG_PRINTF(4, 5)
pg_finish(struct pg_run *r, enum probe_result result, double value,
    const char *fmt, ...)
{
	struct probe_run	*run = r->run;
	const struct pg_conf	*c = r->conf;
	char			 reason[PROBE_REASON_MAX + 1];
	const char		*unit = NULL;
	va_list			 ap;

	/* Only the thresholds make the value the first column's number. */
	if (threshold_any(&c->num) && !isnan(value) &&
	    r->state == PG_QUERY && r->got_value && !r->failed)
		unit = "";
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	run->data = NULL;
	pg_release(r);
	probe_report_unit(run, result, value, unit, "%s", reason);
}

/* libpq's message, as one trimmed line without "FATAL:  " and the like. */
static void
one_line(const char *msg, char *buf, size_t size)
{
	static const char *const levels[] = { "FATAL:", "ERROR:", "PANIC:" };
	size_t	i, n;

	if (msg == NULL)
		msg = "";
	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (strncmp(msg, levels[i], strlen(levels[i])) == 0)
			msg += strlen(levels[i]);
	msg += strspn(msg, " \t");
	n = strcspn(msg, "\r\n");
	while (n > 0 && (msg[n - 1] == ' ' || msg[n - 1] == '\t'))
		n--;
	snprintf(buf, size, "%.*s", (int)n, msg);
}

/* An address as written with a port after it: IPv6 in brackets. */
static void
addr_of(const char *a, size_t n, char *buf, size_t size)
{
	bool	v6 = memchr(a, ':', n) != NULL;

	snprintf(buf, size, "%s%.*s%s", v6 ? "[" : "", (int)n, a,
	    v6 ? "]" : "");
}

/*
 * The server libpq names, shorter: 'at "H", port P' as " (H:P)",
 * 'at "H" (A), port P' (a name and the address it resolved to) as
 * " (H, A:P)", 'on socket "S"' as " (S)"; as it is otherwise.
 */
static void
server_of(const char *s, size_t len, char *buf, size_t size)
{
	const char	*q, *p, *cl, *end = s + len;
	char		 host[96], addr[64], port[16];

	if (len > 4 && strncmp(s, "at \"", 4) == 0 &&
	    (q = memchr(s + 4, '"', len - 4)) != NULL) {
		addr_of(s + 4, (size_t)(q - (s + 4)), host, sizeof(host));
		addr[0] = '\0';
		p = q + 1;
		if (end - p > 2 && p[0] == ' ' && p[1] == '(' &&
		    (cl = memchr(p + 2, ')', (size_t)(end - p - 2))) != NULL) {
			addr_of(p + 2, (size_t)(cl - (p + 2)), addr,
			    sizeof(addr));
			snprintf(host, sizeof(host), "%.*s, %s",
			    (int)(q - (s + 4)), s + 4, addr);
			p = cl + 1;
		}
		if (end - p > 7 && strncmp(p, ", port ", 7) == 0) {
			snprintf(port, sizeof(port), "%.*s", (int)(end - p - 7),
			    p + 7);
			/* The reason keeps its first bytes: long names cut. */
			snprintf(buf, size, " (%.*s:%s)", (int)(size - 4 -
			    strlen(port) > sizeof(host) ? sizeof(host) : size -
			    4 - strlen(port)), host, port);
			return;
		}
	}
	if (len > 11 && strncmp(s, "on socket \"", 11) == 0 &&
	    s[len - 1] == '"')
		snprintf(buf, size, " (%.*s)", (int)(len - 12), s + 11);
	else
		snprintf(buf, size, " (%.*s)", (int)(len > 80 ? 80 : len), s);
}

/*
 * Why the connection failed, in lbagent's words: libpq says
 * 'connection to server at "H", port P failed: WHAT' or
 * 'connection to server on socket "S" failed: WHAT'.
 */
static void
connect_failed(struct pg_run *r)
{
	const char	*msg = PQerrorMessage(r->conn), *what, *at;
	char		 where[96], line[PROBE_REASON_MAX + 1];

	where[0] = '\0';
	what = msg;
	if (strncmp(msg, "connection to server ", 21) == 0 &&
	    (at = strstr(msg, " failed: ")) != NULL &&
	    at < msg + strcspn(msg, "\n")) {
		server_of(msg + 21, (size_t)(at - (msg + 21)), where,
		    sizeof(where));
		what = at + 9;
	}
	one_line(what, line, sizeof(line));
	/* The class first: a reply keeps only the reason's first bytes. */
	if (PQconnectionNeedsPassword(r->conn))
		pg_finish(r, PROBE_CRIT, NAN, "authentication failed: the "
		    "server asks for a password and none is given%s", where);
	else if (strstr(line, "authentication failed") != NULL ||
	    (PQconnectionUsedPassword(r->conn) &&
	    strstr(line, "password") != NULL))
		pg_finish(r, PROBE_CRIT, NAN, "authentication failed: %s%s",
		    line, where);
	else
		pg_finish(r, PROBE_CRIT, NAN, "cannot connect: %s%s", line,
		    where);
}

static void
pg_wait(struct pg_run *r, short what)
{
	if (r->ev != NULL)
		event_free(r->ev);
	/* The socket may change between polls (another address tried). */
	r->ev = event_new(r->run->env->base, PQsocket(r->conn), what,
	    pg_io_cb, r);
	if (r->ev == NULL || event_add(r->ev, NULL) == -1)
		pg_finish(r, PROBE_UNKNOWN, NAN, "cannot watch the socket (%s)",
		    probe_errno_local(ENOMEM));
}

static void
pg_send(struct pg_run *r, const char *sql)
{
	char	line[PROBE_REASON_MAX + 1];

	r->failed = r->got_rows = r->got_value = r->is_null = false;
	r->sqlstate[0] = r->error[0] = '\0';
	free(r->value);
	free(r->column);
	r->value = r->column = NULL;
	if (!PQsendQuery(r->conn, sql)) {
		one_line(PQerrorMessage(r->conn), line, sizeof(line));
		pg_finish(r, PROBE_CRIT, NAN, "cannot send the query: %s",
		    line);
		return;
	}
	/* Rows one at a time, counted: never a whole result in memory. */
	if (r->state == PG_QUERY)
		(void)PQsetSingleRowMode(r->conn);
	switch (PQflush(r->conn)) {
	case 0:
		pg_wait(r, EV_READ);
		break;
	case 1:
		pg_wait(r, EV_READ | EV_WRITE);
		break;
	default:
		one_line(PQerrorMessage(r->conn), line, sizeof(line));
		pg_finish(r, PROBE_CRIT, NAN, "cannot send the query: %s",
		    line);
		break;
	}
}

/* Connected: the session's statement_timeout, and the role if asked. */
static void
pg_connected(struct pg_run *r)
{
	char	sql[96];
	int64_t	left, margin;

	if (PQsetnonblocking(r->conn, 1) == -1) {
		pg_finish(r, PROBE_UNKNOWN, NAN, "cannot make the connection "
		    "non-blocking");
		return;
	}
	/*
	 * What is left of the timeout, less a margin (10%, at least 50ms) for
	 * the server's answer to come back before the scheduler gives up.
	 */
	left = r->run->timeout_ms - (int64_t)elapsed_ms(&r->t0);
	margin = left / 10 > PG_MARGIN_MIN_MS ? left / 10 : PG_MARGIN_MIN_MS;
	r->stmt_timeout_ms = left - margin > 1 ? left - margin : 1;
	snprintf(sql, sizeof(sql), "SET statement_timeout = %lld%s",
	    (long long)r->stmt_timeout_ms, r->conf->role != PG_ROLE_ANY ?
	    "; SELECT pg_is_in_recovery()" : "");
	r->state = PG_SETUP;
	pg_send(r, sql);
}

/* The relay read past the budget: stop there. */
static void
pg_over(void *arg)
{
	struct pg_run	*r = arg;

	pg_finish(r, PROBE_CRIT, NAN, "answer over %d MiB: read stopped",
	    PG_READ_MAX_MIB);
}

/*
 * Puts the relay under libpq's socket once connected (libpq checks the
 * connect on the real one), again after libpq moved on to another address
 * or host (it closed the relay's pair). False when the run is over.
 */
static bool
pg_relay_sync(struct pg_run *r)
{
	ConnStatusType	st = PQstatus(r->conn);
	int		fd = PQsocket(r->conn);

	if (r->relay != NULL && !pg_relay_on(r->relay, fd)) {
		r->spent += pg_relay_read(r->relay);
		pg_relay_free(r->relay);
		r->relay = NULL;
	}
	if (r->relay != NULL || fd == -1 || st == CONNECTION_BAD ||
	    st == CONNECTION_STARTED || st == CONNECTION_NEEDED)
		return true;
	if (r->spent >= PG_READ_MAX) {
		pg_over(r);
		return false;
	}
	r->relay = pg_relay_new(r->run->env->base, fd, PG_READ_MAX - r->spent,
	    pg_over, r);
	if (r->relay == NULL) {
		pg_finish(r, PROBE_UNKNOWN, NAN, "cannot relay the connection "
		    "(%s)", probe_errno_local(errno) != NULL ?
		    probe_errno_local(errno) : strerror(errno));
		return false;
	}
	return true;
}

static void
pg_connect_poll(struct pg_run *r)
{
	PostgresPollingStatusType	ps = PQconnectPoll(r->conn);

	if (ps != PGRES_POLLING_FAILED && !pg_relay_sync(r))
		return;
	switch (ps) {
	case PGRES_POLLING_READING:
		pg_wait(r, EV_READ);
		break;
	case PGRES_POLLING_WRITING:
		pg_wait(r, EV_WRITE);
		break;
	case PGRES_POLLING_OK:
		pg_connected(r);
		break;
	default:
		connect_failed(r);
		break;
	}
}

/* Takes in one result of the current step. */
static void
pg_result(struct pg_run *r, PGresult *res)
{
	const char	*state, *msg;

	switch (PQresultStatus(res)) {
	case PGRES_SINGLE_TUPLE:
	case PGRES_TUPLES_OK:
		if (r->state == PG_QUERY)
			r->rows += (uint64_t)PQntuples(res);
		if (r->got_rows)
			break;
		r->got_rows = true;
		if (PQntuples(res) < 1 || PQnfields(res) < 1)
			break;
		r->got_value = true;
		r->is_null = PQgetisnull(res, 0, 0);
		r->value = strdup(r->is_null ? "" : PQgetvalue(res, 0, 0));
		r->column = strdup(PQfname(res, 0));
		break;
	case PGRES_COMMAND_OK:
	case PGRES_EMPTY_QUERY:
		break;
	default:
		if (r->failed)
			break;
		r->failed = true;
		state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
		msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
		snprintf(r->sqlstate, sizeof(r->sqlstate), "%s",
		    state != NULL ? state : "");
		one_line(msg != NULL ? msg : PQresultErrorMessage(res),
		    r->error, sizeof(r->error));
		break;
	}
}

/* The first column of the first row against expect_value or warn/crit. */
static void
pg_judge(struct pg_run *r, enum probe_result *res, double *value,
    char *why, size_t size)
{
	const struct pg_conf	*c = r->conf;
	const char		*col = r->column != NULL ? r->column : "value";
	double			 ms = elapsed_ms(&r->t0), x, t;
	char			*end, limit[32];
	enum probe_result	 lr;
	uint64_t		 lim;

	*res = PROBE_OK;
	*value = ms;
	if (c->expect_value != NULL) {
		if (strcmp(r->value, c->expect_value) != 0) {
			*res = PROBE_CRIT;
			*value = NAN;
			snprintf(why, size, "%s is \"%.*s\" (expected \"%s\")",
			    col, PG_SHOWN_MAX, r->value, c->expect_value);
			return;
		}
		snprintf(why, size, "%s is \"%.*s\"", col, PG_SHOWN_MAX,
		    r->value);
	} else if (threshold_any(&c->num)) {
		errno = 0;
		x = strtod(r->value, &end);
		if (r->value[0] == '\0' || *end != '\0' || errno == ERANGE ||
		    isnan(x)) {
			*res = PROBE_CRIT;
			*value = NAN;
			snprintf(why, size, "%s is not a number (\"%.*s\")", col,
			    PG_SHOWN_MAX, r->value);
			return;
		}
		*value = x;
		*res = threshold_level(&c->num, x, &t);
		if (*res == PROBE_OK)
			snprintf(why, size, "%s %.15g", col, x);
		else
			snprintf(why, size, "%s %.15g (%s %.15g)", col, x,
			    *res == PROBE_CRIT ? "crit" : "warn", t);
	} else
		snprintf(why, size, "query ok in %.0fms", floor(ms));
	/* A worse latency than the verdict so far replaces it. */
	lr = latency_level(&c->latency, ms, &lim);
	if (lr > *res) {
		*res = lr;
		units_format_ms(lim, limit, sizeof(limit));
		snprintf(why, size, "latency %.0fms (%s %s)", floor(ms),
		    lr == PROBE_CRIT ? "crit" : "warn", limit);
	}
}

/* Every result of the step is in: what comes of it. */
static void
pg_step_done(struct pg_run *r)
{
	const struct pg_conf	*c = r->conf;
	enum probe_result	 res;
	double			 value;
	char			 why[PROBE_REASON_MAX + 1];
	bool			 standby;

	if (r->failed && r->state == PG_QUERY &&
	    strcmp(r->sqlstate, PG_SQLSTATE_CANCELED) == 0 &&
	    elapsed_ms(&r->tq) >= (double)r->stmt_timeout_ms) {
		pg_finish(r, PROBE_CRIT, NAN, "query cancelled by the server "
		    "after %lldms (statement_timeout)",
		    (long long)r->stmt_timeout_ms);
		return;
	}
	if (r->failed) {
		pg_finish(r, PROBE_CRIT, NAN, "%s%s%s%s",
		    r->state == PG_SETUP ? "setting up the session failed: " :
		    "query failed: ", r->sqlstate, r->sqlstate[0] ? " " : "",
		    r->error);
		return;
	}
	if (r->got_value && (r->value == NULL || r->column == NULL)) {
		pg_finish(r, PROBE_UNKNOWN, NAN, "%s",
		    probe_errno_local(ENOMEM));
		return;
	}
	if (r->state == PG_SETUP) {
		if (c->role != PG_ROLE_ANY) {
			if (!r->got_value || r->is_null) {
				pg_finish(r, PROBE_CRIT, NAN, "pg_is_in_recovery() "
				    "gave no answer");
				return;
			}
			standby = strcmp(r->value, "t") == 0;
			if (standby != (c->role == PG_ROLE_STANDBY)) {
				pg_finish(r, PROBE_CRIT, NAN, "is a %s, expected "
				    "%s", standby ? "standby" : "primary",
				    standby ? "primary" : "standby");
				return;
			}
		}
		r->state = PG_QUERY;
		clock_gettime(CLOCK_MONOTONIC, &r->tq);
		pg_send(r, c->query != NULL ? c->query : PG_DEFAULT_QUERY);
		return;
	}
	if ((c->expect_value != NULL || threshold_any(&c->num)) &&
	    !r->got_value) {
		pg_finish(r, PROBE_CRIT, NAN, "the query returned no rows");
		return;
	}
	if ((c->expect_value != NULL || threshold_any(&c->num)) &&
	    r->is_null) {
		pg_finish(r, PROBE_CRIT, NAN, "%s is NULL",
		    r->column != NULL ? r->column : "the first column");
		return;
	}
	pg_judge(r, &res, &value, why, sizeof(why));
	pg_finish(r, res, value, "%s", why);
}

/* Reads what came, and takes every result that is complete. */
static void
pg_read(struct pg_run *r)
{
	PGresult	*res;
	char		 line[PROBE_REASON_MAX + 1];

	if (!PQconsumeInput(r->conn)) {
		one_line(PQerrorMessage(r->conn), line, sizeof(line));
		pg_finish(r, PROBE_CRIT, NAN, "connection lost: %s", line);
		return;
	}
	while (!PQisBusy(r->conn)) {
		if ((res = PQgetResult(r->conn)) == NULL) {
			pg_step_done(r);
			return;
		}
		pg_result(r, res);
		PQclear(res);
		if (r->rows > PG_ROWS_MAX) {
			pg_finish(r, PROBE_CRIT, NAN, "over %d rows: read "
			    "stopped", PG_ROWS_MAX);
			return;
		}
	}
	pg_wait(r, EV_READ);
}

static void
pg_io_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pg_run	*r = arg;
	char		 line[PROBE_REASON_MAX + 1];
	int		 rv;

	if (r->state == PG_CONNECTING) {
		pg_connect_poll(r);
		return;
	}
	/* Whatever woke us, what is still unsent goes first. */
	if ((rv = PQflush(r->conn)) == -1) {
		one_line(PQerrorMessage(r->conn), line, sizeof(line));
		pg_finish(r, PROBE_CRIT, NAN, "cannot send the query: %s",
		    line);
		return;
	}
	if (rv == 1) {
		/* Read what the server says meanwhile, then write again. */
		if (!PQconsumeInput(r->conn)) {
			one_line(PQerrorMessage(r->conn), line, sizeof(line));
			pg_finish(r, PROBE_CRIT, NAN, "connection lost: %s",
			    line);
			return;
		}
		pg_wait(r, EV_READ | EV_WRITE);
		return;
	}
	pg_read(r);
}

/* Notices (from SET and the like) are not the probe's business. */
static void
pg_notice(void *arg, const PGresult *res)
{
}

/* With the names resolved (lists not NULL): libpq resolves nothing. */
static void
pg_connect(struct pg_run *r, const struct pg_host_lists *lists)
{
	const struct pg_conf	*c = r->conf;
	const char		*keys[8], *values[8];
	int			 n = 0;

	r->state = PG_CONNECTING;
	/* Keywords after the expanded dbname override what it says. */
	keys[n] = "fallback_application_name";
	values[n++] = "lbagent";
	keys[n] = "dbname";
	values[n++] = c->conninfo;
	if (c->passfile != NULL) {
		keys[n] = "passfile";
		values[n++] = c->passfile;
	}
	if (lists != NULL) {
		/* host stays for TLS's name check and for the messages. */
		keys[n] = "host";
		values[n++] = lists->host;
		keys[n] = "hostaddr";
		values[n++] = lists->hostaddr;
		if (lists->port != NULL) {
			keys[n] = "port";
			values[n++] = lists->port;
		}
	}
	keys[n] = NULL;
	values[n] = NULL;
	r->conn = PQconnectStartParams(keys, values, 1);
	if (r->conn == NULL) {
		pg_finish(r, PROBE_UNKNOWN, NAN, "%s",
		    probe_errno_local(ENOMEM));
		return;
	}
	PQsetNoticeReceiver(r->conn, pg_notice, NULL);
	if (PQstatus(r->conn) == CONNECTION_BAD) {
		connect_failed(r);
		return;
	}
	if (!pg_relay_sync(r))
		return;
	/* As if PQconnectPoll had said PGRES_POLLING_WRITING. */
	pg_wait(r, EV_WRITE);
}

static void
keep_destroy(struct pg_keep *keep)
{
	if (keep->dns != NULL)
		evdns_base_free(keep->dns, 0);
	pg_canceller_free(keep->cancel);
	free(keep);
}

static void
keep_destroy_cb(evutil_socket_t fd, short what, void *arg)
{
	keep_destroy(arg);
}

static void
pg_keep_free(void *p)
{
	struct pg_keep	*keep = p;

	if (keep == NULL)
		return;
	if (keep->lookups > 0) {
		/* The last callback frees it; no more cancel requests. */
		keep->freed = true;
		pg_canceller_free(keep->cancel);
		keep->cancel = NULL;
	} else
		keep_destroy(keep);
}

/* The probe's keep, made on first need. */
static struct pg_keep *
pg_keep(struct probe_run *run)
{
	struct pg_keep	*keep = run->keep;

	if (keep == NULL) {
		if ((keep = calloc(1, sizeof(*keep))) == NULL)
			return NULL;
		keep->base = run->env->base;
		run->keep = keep;
	}
	return keep;
}

static void	pg_resolve_next(struct pg_run *);

/* The addresses of the name asked for are in (or not): the next one. */
static void
pg_resolved(struct pg_run *r, int err, struct evutil_addrinfo *res)
{
	struct evutil_addrinfo	*ai;
	const void		*a;
	size_t			 i = r->host_i, n = 0;

	for (ai = res; ai != NULL && n < PG_HOST_ADDRS_MAX; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET)
			a = &((struct sockaddr_in *)(void *)ai->ai_addr)->sin_addr;
		else if (ai->ai_family == AF_INET6)
			a = &((struct sockaddr_in6 *)(void *)
			    ai->ai_addr)->sin6_addr;
		else
			continue;
		if (evutil_inet_ntop(ai->ai_family, a, r->addrs[i][n],
		    sizeof(r->addrs[i][n])) != NULL)
			n++;
	}
	if (res != NULL)
		evutil_freeaddrinfo(res);
	r->n_addrs[i] = n;
	if (n == 0 && r->resolve_host == NULL) {
		r->resolve_host = r->conf->hosts.host[i];
		r->resolve_err = err;
	}
	r->host_i++;
	pg_resolve_next(r);
}

static void
pg_dns_cb(int err, struct evutil_addrinfo *res, void *arg)
{
	struct pg_run	*r = arg;
	struct pg_keep	*keep = r->keep;

	if (r->starting) {
		/* Answered at once (hosts file): the asker carries on. */
		r->answered = true;
		r->gai_err = err;
		r->ais = res;
		return;
	}
	r->req = NULL;
	keep->lookups--;
	if (r->run != NULL) {
		pg_resolved(r, err, res);
		return;
	}
	/* Cancelled: the run is gone, only this is left. */
	if (res != NULL)
		evutil_freeaddrinfo(res);
	free(r);
	if (keep->freed && keep->lookups == 0 &&
	    event_base_once(keep->base, -1, EV_TIMEOUT, keep_destroy_cb, keep,
	    NULL) == -1)
		keep_destroy(keep);	/* not from inside evdns, unless we must */
}

/* Asks evdns for the next name of the host list; connects after the last. */
static void
pg_resolve_next(struct pg_run *r)
{
	const struct pg_hosts	*h = &r->conf->hosts;
	struct evutil_addrinfo	 hints, *res;
	struct pg_host_lists	 lists;

	while (r->host_i < h->n && !h->name[r->host_i])
		r->host_i++;
	if (r->host_i == h->n) {
		if (pg_hosts_join(h, (const char (*)[PG_HOST_ADDRS_MAX][48])
		    r->addrs, r->n_addrs, &lists) == -1) {
			if (errno == ENOMEM)
				pg_finish(r, PROBE_UNKNOWN, NAN, "%s",
				    probe_errno_local(ENOMEM));
			else
				pg_finish(r, PROBE_CRIT, NAN, "cannot resolve "
				    "%s: %s", r->resolve_host, r->resolve_err
				    != 0 ? evutil_gai_strerror(r->resolve_err) :
				    "no address");
			return;
		}
		pg_connect(r, &lists);
		pg_host_lists_clear(&lists);
		return;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	r->starting = true;
	r->answered = false;
	r->gai_err = EVUTIL_EAI_FAIL;
	r->req = evdns_getaddrinfo(r->keep->dns, h->host[r->host_i], NULL,
	    &hints, pg_dns_cb, r);
	r->starting = false;
	if (r->req == NULL) {
		res = r->ais;
		r->ais = NULL;
		pg_resolved(r, r->answered ? r->gai_err : EVUTIL_EAI_FAIL, res);
		return;
	}
	r->keep->lookups++;
}

/* The names of the host list, with the probe's resolver. */
static void
pg_resolve(struct pg_run *r)
{
	struct pg_keep	*keep;

	if ((keep = r->keep = pg_keep(r->run)) == NULL) {
		pg_finish(r, PROBE_UNKNOWN, NAN, "%s",
		    probe_errno_local(ENOMEM));
		return;
	}
	if (keep->dns == NULL) {
		if ((keep->dns = evdns_base_new(keep->base,
		    EVDNS_BASE_DISABLE_WHEN_INACTIVE)) == NULL) {
			pg_finish(r, PROBE_UNKNOWN, NAN, "cannot set up the "
			    "resolver (%s)", probe_errno_local(ENOMEM));
			return;
		}
		/* Errors leave the hosts file and a loopback server. */
		(void)evdns_base_resolv_conf_parse(keep->dns, DNS_OPTIONS_ALL,
		    resolv_conf);
	}
	r->state = PG_RESOLVING;
	r->host_i = 0;
	pg_resolve_next(r);
}

void
probe_postgres_resolv_conf(const char *path)
{
	resolv_conf = path;
}

static void
pg_start(struct probe_run *run)
{
	struct pg_run	*r;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		probe_report(run, PROBE_UNKNOWN, NAN, "%s",
		    probe_errno_local(ENOMEM));
		return;
	}
	r->run = run;
	r->conf = run->conf;
	r->state = PG_CONNECTING;
	run->data = r;
	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	if (r->conf->hosts.any_name)
		pg_resolve(r);
	else
		pg_connect(r, NULL);
}

/*
 * The timeout passed: drop the lookup or the connection, never report. A
 * query the server may still be running is cancelled there too.
 */
static void
pg_cancel(struct probe_run *run)
{
	struct pg_run	*r = run->data;
	struct pg_keep	*keep;

	if (r == NULL)
		return;
	run->data = NULL;
	if (r->state == PG_RESOLVING && r->req != NULL) {
		/* evdns calls pg_dns_cb once more; it frees r. */
		r->run = NULL;
		evdns_getaddrinfo_cancel(r->req);
		return;
	}
	if ((r->state == PG_SETUP || r->state == PG_QUERY) &&
	    (keep = pg_keep(run)) != NULL) {
		if (keep->cancel == NULL)
			keep->cancel = pg_canceller_new(keep->base, run->name);
		if (keep->cancel != NULL)
			pg_canceller_send(keep->cancel, r->conn);
	}
	pg_release(r);
}

const struct probe_ops probe_postgres_ops = {
	.name = "postgres",
	.unit = "ms",
	.keys = pg_keys,
	.secret_keys = pg_secret_keys,
	.windowed = true,
	.conf_new = pg_conf_new,
	.conf_free = pg_conf_free,
	.conf_set = pg_conf_set,
	.conf_check = pg_conf_check,
	.start = pg_start,
	.cancel = pg_cancel,
	.keep_free = pg_keep_free,
};
