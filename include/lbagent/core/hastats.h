/*
 * HAProxy's statistics CSV ("show stat" on the Runtime API, or the stats
 * page's ";csv"): one server's row, read by column name. Pure: no I/O.
 */
#ifndef LBAGENT_HASTATS_H
#define LBAGENT_HASTATS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * What a row says, as HAProxy wrote it, cut to fit; control and non-ASCII
 * bytes become '?'.
 */
struct hastats_row {
	char	status[32];		/* "UP", "DOWN", "MAINT", "DRAIN (agent)",
					   "UP 1/3", "no check", ... */
	long	weight;			/* effective weight; -1 when empty */
	long	initial_weight;		/* "iweight", else "uweight", else -1 */
	char	agent_status[24];	/* "L7OK", "L7STS", ... without the
					   "* " of a check in progress; or "" */
	char	agent_desc[128];	/* or "" */
	long	scur;			/* current sessions; -1 when not given */
	long	qcur;			/* queued requests; -1 when not given */
	long long stot;			/* sessions since HAProxy started (a
					   counter; a reload starts it over);
					   -1 when not given */
	long	rtime_ms;		/* "rtime": average response time of the
					   last 1024 requests; -1 not given */
	long	qtime_ms;		/* "qtime": the same for time queued */
	long long responses;		/* HTTP responses since HAProxy started,
					   hrsp_1xx to hrsp_other summed (a
					   counter, as stot); -1 not given (a
					   server in mode tcp) */
	long	sid;			/* "sid": the server's numeric id in its
					   backend ("id"), what "show stat BE 4
					   SID" asks for; -1 not given */
};

/* A server name as hastats_each gives it, its NUL included. */
#define HASTATS_NAME_MAX	128

/*
 * Finds the row whose pxname is backend and svname is server. The first
 * line must be the header ("# pxname,svname,..."); columns are found by
 * name. pxname, svname, status and weight must be there; the others are
 * empty (or -1) when missing. Reads at most len bytes, needs no NUL.
 * 1 found, 0 not there, -1 malformed (or cut short before the row was
 * seen) with *why.
 */
int		 hastats_find(const char *csv, size_t len, const char *backend,
		    const char *server, struct hastats_row *, const char **why);
/*
 * Calls fn(arg, server, row) for every server of backend (not its
 * BACKEND row), in the CSV's order, until fn returns non-zero; a server
 * whose name is longer than HASTATS_NAME_MAX - 1 is skipped. 0, or -1
 * malformed (or cut short) with *why, after the rows before it.
 */
int		 hastats_each(const char *csv, size_t len, const char *backend,
		    int (*fn)(void *arg, const char *server,
		    const struct hastats_row *), void *arg, const char **why);
/*
 * UP (with "UP 1/3", a server going down, and "no check") with a weight
 * above 0: the load balancer sends it new traffic.
 */
bool		 hastats_serving(const struct hastats_row *);
/* "MAINT" (any "MAINT..."), "DRAIN" (any "DRAIN..." or "NOLB...") or NULL. */
const char	*hastats_admin(const struct hastats_row *);

/*
 * The Runtime API's "show stat;show servers state" in one answer: the
 * CSV comes first, then the servers state ("1", "# be_id be_name ...").
 * Returns the length of the CSV part and points *state at the rest (len
 * and NULL when there is none).
 */
size_t		 hastats_split(const char *text, size_t len, const char **state,
		    size_t *state_len);
/*
 * The configured ("initial") weight of backend/server from "show servers
 * state" (srv_iweight): on HAProxy 2.6 the CSV's uweight is the current
 * weight, an agent's percentage applied. 1 found, 0 not there, -1
 * malformed with *why. Reads at most len bytes.
 */
int		 hastats_initial_weight(const char *state, size_t len,
		    const char *backend, const char *server, long *iweight,
		    const char **why);

#endif
