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
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <event2/dns.h>
#include <libpq-fe.h>

#include "lbagent/core/threshold.h"
#include "lbagent/probes/kinds.h"
#include "lbagent/probes/probe.h"
#include "pg_cancel.h"
#include "pg_kind.h"
#include "pg_relay.h"

double
pg_elapsed_ms(const struct timespec *since)
{
	struct timespec	now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - since->tv_sec) * 1e3 +
	    (double)(now.tv_nsec - since->tv_nsec) / 1e6;
}

/* Frees the run and what it holds; reports nothing. */
void
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
void
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

void
pg_keep_destroy(struct pg_keep *keep)
{
	if (keep->dns != NULL)
		evdns_base_free(keep->dns, 0);
	pg_canceller_free(keep->cancel);
	free(keep);
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
		pg_keep_destroy(keep);
}

/* The probe's keep, made on first need. */
struct pg_keep *
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
