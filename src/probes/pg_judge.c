/*
 * What the postgres kind's answers come to: libpq's messages in
 * lbagent's words (one line, the server named shorter, authentication
 * told apart), the results of each step taken in, and the verdict on the
 * first column of the first row: expect_value, warn/crit, latency.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "lbagent/core/threshold.h"
#include "lbagent/core/units.h"
#include "lbagent/probes/probe.h"
#include "pg_kind.h"

/* libpq's message, as one trimmed line without "FATAL:  " and the like. */
void
pg_one_line(const char *msg, char *buf, size_t size)
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
void
pg_connect_failed(struct pg_run *r)
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
	pg_one_line(what, line, sizeof(line));
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

/* Takes in one result of the current step. */
void
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
		pg_one_line(msg != NULL ? msg : PQresultErrorMessage(res),
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
	double			 ms = pg_elapsed_ms(&r->t0), x, t;
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

/*
 * Every result of the step is in: the step failed (reported, true), or
 * its results are there to judge (false).
 */
bool
pg_step_failed(struct pg_run *r)
{
	if (r->failed && r->state == PG_QUERY &&
	    strcmp(r->sqlstate, PG_SQLSTATE_CANCELED) == 0 &&
	    pg_elapsed_ms(&r->tq) >= (double)r->stmt_timeout_ms) {
		pg_finish(r, PROBE_CRIT, NAN, "query cancelled by the server "
		    "after %lldms (statement_timeout)",
		    (long long)r->stmt_timeout_ms);
		return true;
	}
	if (r->failed) {
		pg_finish(r, PROBE_CRIT, NAN, "%s%s%s%s",
		    r->state == PG_SETUP ? "setting up the session failed: " :
		    "query failed: ", r->sqlstate, r->sqlstate[0] ? " " : "",
		    r->error);
		return true;
	}
	if (r->got_value && (r->value == NULL || r->column == NULL)) {
		pg_finish(r, PROBE_UNKNOWN, NAN, "%s",
		    probe_errno_local(ENOMEM));
		return true;
	}
	return false;
}

/* After the setup: with expect_role, whether the server is the one asked. */
bool
pg_role_wrong(struct pg_run *r)
{
	const struct pg_conf	*c = r->conf;
	bool			 standby;

	if (c->role == PG_ROLE_ANY)
		return false;
	if (!r->got_value || r->is_null) {
		pg_finish(r, PROBE_CRIT, NAN, "pg_is_in_recovery() "
		    "gave no answer");
		return true;
	}
	standby = strcmp(r->value, "t") == 0;
	if (standby != (c->role == PG_ROLE_STANDBY)) {
		pg_finish(r, PROBE_CRIT, NAN, "is a %s, expected "
		    "%s", standby ? "standby" : "primary",
		    standby ? "primary" : "standby");
		return true;
	}
	return false;
}

/* The user's query is done: its verdict. */
void
pg_query_done(struct pg_run *r)
{
	const struct pg_conf	*c = r->conf;
	enum probe_result	 res;
	double			 value;
	char			 why[PROBE_REASON_MAX + 1];

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
