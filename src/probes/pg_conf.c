/*
 * The postgres kind's settings: the keys, the conninfo parsed by libpq at
 * load (its complaints made safe to show, its host list kept for the
 * names the probe resolves), and the checks across keys.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "lbagent/core/threshold.h"
#include "lbagent/core/units.h"
#include "lbagent/probes/pg_hosts.h"
#include "lbagent/probes/probe.h"
#include "pg_kind.h"

const struct probe_key_doc pg_keys[] = {
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

const char *const pg_secret_keys[] = { "conninfo", NULL };

void *
pg_conf_new(void)
{
	return calloc(1, sizeof(struct pg_conf));
}

void
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

int
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

int
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
