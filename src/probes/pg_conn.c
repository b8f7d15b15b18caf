/*
 * The postgres kind's connection, a state machine on the loop: libpq's
 * PQconnectPoll until connected, the relay put under its socket, then
 * the session's setup and the user's query sent with PQsendQuery /
 * PQflush and read with PQconsumeInput / PQgetResult, each step's
 * results handed to pg_judge.c. Never a blocking call.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <libpq-fe.h>

#include "lbagent/probes/pg_hosts.h"
#include "lbagent/probes/probe.h"
#include "pg_kind.h"
#include "pg_relay.h"

static void	pg_io_cb(evutil_socket_t, short, void *);

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
		pg_one_line(PQerrorMessage(r->conn), line, sizeof(line));
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
		pg_one_line(PQerrorMessage(r->conn), line, sizeof(line));
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
	int64_t	took, left, margin;

	if (PQsetnonblocking(r->conn, 1) == -1) {
		pg_finish(r, PROBE_UNKNOWN, NAN, "cannot make the connection "
		    "non-blocking");
		return;
	}
	/*
	 * What is left of the timeout, less a margin for this SET's round
	 * trip and the server's answer to come back before the scheduler
	 * gives up: 10% of it, at least 50ms, and at least what connecting
	 * took (a server or machine slow to connect is as slow to answer:
	 * on a loaded machine a fixed margin let the timeout pass first).
	 */
	took = (int64_t)pg_elapsed_ms(&r->t0);
	left = r->run->timeout_ms - took;
	margin = left / 10 > PG_MARGIN_MIN_MS ? left / 10 : PG_MARGIN_MIN_MS;
	if (margin < took)
		margin = took;
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
		pg_connect_failed(r);
		break;
	}
}

/* Every result of the step is in: what comes of it. */
static void
pg_step_done(struct pg_run *r)
{
	const struct pg_conf	*c = r->conf;

	if (pg_step_failed(r))
		return;
	if (r->state == PG_SETUP) {
		if (pg_role_wrong(r))
			return;
		r->state = PG_QUERY;
		clock_gettime(CLOCK_MONOTONIC, &r->tq);
		pg_send(r, c->query != NULL ? c->query : PG_DEFAULT_QUERY);
		return;
	}
	pg_query_done(r);
}

/* Reads what came, and takes every result that is complete. */
static void
pg_read(struct pg_run *r)
{
	PGresult	*res;
	char		 line[PROBE_REASON_MAX + 1];

	if (!PQconsumeInput(r->conn)) {
		pg_one_line(PQerrorMessage(r->conn), line, sizeof(line));
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
		pg_one_line(PQerrorMessage(r->conn), line, sizeof(line));
		pg_finish(r, PROBE_CRIT, NAN, "cannot send the query: %s",
		    line);
		return;
	}
	if (rv == 1) {
		/* Read what the server says meanwhile, then write again. */
		if (!PQconsumeInput(r->conn)) {
			pg_one_line(PQerrorMessage(r->conn), line, sizeof(line));
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
void
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
		pg_connect_failed(r);
		return;
	}
	if (!pg_relay_sync(r))
		return;
	/* As if PQconnectPoll had said PGRES_POLLING_WRITING. */
	pg_wait(r, EV_WRITE);
}
