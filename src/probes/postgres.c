/*
 * The postgres kind: one connection per run on libpq's asynchronous API,
 * driven by the event loop (PQconnectPoll, then PQsendQuery / PQflush /
 * PQconsumeInput / PQgetResult on the connection's socket), never a
 * thread, a fork or a blocking call; PQfinish at the end or at the cancel.
 *
 * Before the user's query, the same session gets a statement_timeout a
 * little under what is left of the probe's timeout, so that a slow query
 * is cancelled by the server itself (PQcancel would block the loop), and,
 * with expect_role, SELECT pg_is_in_recovery().
 *
 * The conninfo may hold a password: it is never shown (its key is secret
 * to the configuration loader, and libpq's messages never quote it).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <libpq-fe.h>

#include "lbagent/core/threshold.h"
#include "lbagent/core/units.h"
#include "lbagent/probes/kinds.h"
#include "lbagent/probes/probe.h"

#define PG_SHOWN_MAX		40	/* of a value in a reason */
#define PG_WHY_MAX		160	/* of a config error from libpq */
#define PG_MARGIN_MIN_MS	50	/* statement_timeout under the rest */
#define PG_DEFAULT_QUERY	"SELECT 1"
#define PG_SQLSTATE_CANCELED	"57014"

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
	char		*host_warning;	/* for the configuration's warnings */
	char		 why[PG_WHY_MAX];
};

enum pg_state {
	PG_CONNECTING,	/* PQconnectPoll until it says OK */
	PG_SETUP,	/* SET statement_timeout (and pg_is_in_recovery()) */
	PG_QUERY,	/* the user's query */
};

struct pg_run {
	struct probe_run	*run;
	const struct pg_conf	*conf;
	PGconn			*conn;
	struct event		*ev;
	enum pg_state		 state;
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
	free(c->host_warning);
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

/* An address, or a socket directory: nothing libpq resolves. */
static bool
host_numeric(const char *h, size_t len)
{
	char		buf[256];
	unsigned char	a[16];

	if (len == 0 || h[0] == '/' || h[0] == '@')
		return true;
	if (len >= sizeof(buf))
		return false;
	memcpy(buf, h, len);
	buf[len] = '\0';
	return inet_pton(AF_INET, buf, a) == 1 ||
	    inet_pton(AF_INET6, buf, a) == 1;
}

/*
 * libpq resolves a host name with the blocking getaddrinfo() inside
 * PQconnectStart: with a name and no hostaddr, say so, once, at load.
 */
static int
host_check(struct pg_conf *c, const PQconninfoOption *opts, const char **why)
{
	const PQconninfoOption	*o;
	const char		*host = NULL, *h, *end;
	bool			 hostaddr = false;
	size_t			 len;

	for (o = opts; o->keyword != NULL; o++) {
		if (o->val == NULL || o->val[0] == '\0')
			continue;
		if (strcmp(o->keyword, "host") == 0)
			host = o->val;
		else if (strcmp(o->keyword, "hostaddr") == 0)
			hostaddr = true;
	}
	free(c->host_warning);
	c->host_warning = NULL;
	if (host == NULL || hostaddr)
		return 0;
	for (h = host; *h != '\0'; h = *end == ',' ? end + 1 : end) {
		end = h + strcspn(h, ",");
		len = (size_t)(end - h);
		if (host_numeric(h, len))
			continue;
		if (asprintf(&c->host_warning, "conninfo: host %.*s is a name, "
		    "which libpq resolves with a blocking lookup at each run "
		    "(a slow DNS server holds up all of lbagent); give an "
		    "address, or hostaddr with it", (int)(len > 64 ? 64 : len),
		    h) == -1) {
			c->host_warning = NULL;
			*why = "out of memory";
			return -1;
		}
		break;
	}
	return 0;
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
	rv = host_check(c, opts, why);
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

static const char *
pg_conf_warning(const void *p, const char **key)
{
	const struct pg_conf	*c = p;

	*key = "conninfo";
	return c->host_warning;
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
		PQfinish(r->conn);
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

/*
 * The server libpq names, shorter: 'at "H", port P' as " (H:P)",
 * 'on socket "S"' as " (S)"; as it is otherwise.
 */
static void
server_of(const char *s, size_t len, char *buf, size_t size)
{
	const char	*q, *end = s + len;
	int		 n;

	if (len > 4 && strncmp(s, "at \"", 4) == 0 &&
	    (q = memchr(s + 4, '"', len - 4)) != NULL &&
	    end - q > 8 && strncmp(q, "\", port ", 8) == 0) {
		n = (int)(q - (s + 4));
		snprintf(buf, size, " (%s%.*s%s:%.*s)", memchr(s + 4, ':',
		    (size_t)n) != NULL ? "[" : "", n, s + 4, memchr(s + 4, ':',
		    (size_t)n) != NULL ? "]" : "", (int)(end - q - 8), q + 8);
	} else if (len > 11 && strncmp(s, "on socket \"", 11) == 0 &&
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

static void
pg_connect_poll(struct pg_run *r)
{
	switch (PQconnectPoll(r->conn)) {
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
	case PGRES_TUPLES_OK:
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

static void
pg_start(struct probe_run *run)
{
	const struct pg_conf	*c = run->conf;
	const char		*keys[4], *values[4];
	struct pg_run		*r;
	int			 n = 0;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		probe_report(run, PROBE_UNKNOWN, NAN, "%s",
		    probe_errno_local(ENOMEM));
		return;
	}
	r->run = run;
	r->conf = c;
	r->state = PG_CONNECTING;
	run->data = r;
	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	/* Keywords after the expanded dbname override what it says. */
	keys[n] = "fallback_application_name";
	values[n++] = "lbagent";
	keys[n] = "dbname";
	values[n++] = c->conninfo;
	if (c->passfile != NULL) {
		keys[n] = "passfile";
		values[n++] = c->passfile;
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
	/* As if PQconnectPoll had said PGRES_POLLING_WRITING. */
	pg_wait(r, EV_WRITE);
}

/* The timeout passed: drop the connection, never report. */
static void
pg_cancel(struct probe_run *run)
{
	struct pg_run	*r = run->data;

	if (r == NULL)
		return;
	run->data = NULL;
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
	.conf_warning = pg_conf_warning,
	.start = pg_start,
	.cancel = pg_cancel,
};
