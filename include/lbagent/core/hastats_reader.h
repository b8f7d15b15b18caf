/*
 * HAProxy's statistics CSV read as it arrives: fed piece by piece, it
 * keeps only the rows of the backends asked for and, of those, only the
 * columns lbagent reads (found by name in the header, as hastats.c does),
 * and the configured weights of their servers from a servers state after
 * the CSV ("show stat;show servers state"). The Runtime API's answer to
 * one command a backend ("show stat BE 4 -1;...;show servers state
 * BE;...") reads the same: each CSV's header after the first and each
 * servers state's after the first are passed over, and so is the answer
 * for a backend the load balancer does not have ("No such proxy.",
 * "Can't find backend."): its rows are simply not there. Bounded: total
 * bytes, one line's bytes and rows kept. Pure: no I/O.
 */
#ifndef LBAGENT_HASTATS_READER_H
#define LBAGENT_HASTATS_READER_H

#include <stdbool.h>
#include <stddef.h>

#include "lbagent/core/hastats.h"

#define HASTATS_BYTES_MAX	(8 * 1024 * 1024)	/* a whole answer */
#define HASTATS_LINE_MAX	(64 * 1024)		/* one record */
#define HASTATS_ROWS_MAX	8192			/* rows kept */

/*
 * The longest Runtime API request built (HAProxy reads a command line of
 * up to its tune.bufsize, 16 KiB by default).
 */
#define HASTATS_REQUEST_MAX	8192

struct hastats_limits {
	size_t	bytes_max;
	size_t	line_max;
	size_t	rows_max;
};

struct hastats_reader;
struct hastats_table;

/*
 * A reader keeping the rows of these backends (copied). limits NULL: the
 * HASTATS_*_MAX above. NULL when out of memory.
 */
struct hastats_reader	*hastats_reader_new(const char *const *backends,
			    size_t nbackends, const struct hastats_limits *);
/*
 * Reads the next len bytes. 0, or -1 with *why (over a limit, out of
 * memory; text that lives as long as the reader): the answer is then
 * unusable and every later call fails the same way.
 */
int			 hastats_reader_feed(struct hastats_reader *,
			    const char *data, size_t len, const char **why);
/*
 * The answer is complete: its table (the reader's to give once), or NULL
 * with *why as hastats_reader_feed. Text that is not HAProxy statistics,
 * or is malformed or cut short, still gives a table: every look-up in it
 * fails with that reason, as hastats_find would.
 */
struct hastats_table	*hastats_reader_finish(struct hastats_reader *,
			    const char **why);
void			 hastats_reader_free(struct hastats_reader *);
/*
 * The answer also holds, in this order, the answer to "get weight
 * backends[i]/servers[i]" for each i < n, each after that server's row
 * (hastats_request_own): "N (initial M)" gives the server its configured
 * weight M (hastats_table_initial_weight), as a servers state would; "No
 * such server." or "No such backend." leaves it unknown. Every backend
 * must be one the reader keeps. Before any byte is fed; -1: out of
 * memory or a backend not kept.
 */
int			 hastats_reader_weights(struct hastats_reader *,
			    const char *const *backends,
			    const char *const *servers, size_t n);

/*
 * As hastats_find and hastats_each on the whole answer, for a backend the
 * reader kept (another one: -1, "backend not read").
 */
int		 hastats_table_find(const struct hastats_table *,
		    const char *backend, const char *server,
		    struct hastats_row *, const char **why);
int		 hastats_table_each(const struct hastats_table *,
		    const char *backend, int (*fn)(void *arg,
		    const char *server, const struct hastats_row *), void *arg,
		    const char **why);
/* srv_iweight from the servers state; -1 when not given or not a number. */
long		 hastats_table_initial_weight(const struct hastats_table *,
		    const char *backend, const char *server);
/* Rows kept. */
size_t		 hastats_table_rows(const struct hastats_table *);
void		 hastats_table_free(struct hastats_table *);
/*
 * What src read takes the place of what dst read of the same servers
 * (their rows and configured weights), in dst's backends; the others'
 * rows stay as dst had them. src must be well formed (a look-up in it
 * does not fail). -1: out of memory (dst then has what it had, and part
 * of src).
 */
int		 hastats_table_merge(struct hastats_table *dst,
		    const struct hastats_table *src);

/*
 * The Runtime API request for these backends, with its newline, into buf
 * (HASTATS_REQUEST_MAX bytes): "show stat BE 4 -1;" for each (their
 * servers' rows, nothing of the load balancer's other proxies), then
 * "show servers state BE;" for each. None, or more than fits: the whole
 * "show stat;show servers state", which the reader reads the same.
 */
void		 hastats_request(const char *const *backends, size_t nbackends,
		    char *buf);
/*
 * The Runtime API request for one server of each backend, servers[i] of
 * backends[i] with its numeric id sids[i] (hastats_row.sid, learnt from
 * an answer to hastats_request), into buf: "show stat BE 4 SID;get weight
 * BE/SERVER;" for each, its newline at the end. An answer holds the CSV's
 * header and that server's row, then its current and configured weight
 * (hastats_reader_weights): its size does not grow with the servers in
 * the backend. -1, buf undefined: none, an id unknown (below 0), a name
 * that is not one word of HAProxy's characters, or more than fits.
 */
int		 hastats_request_own(const char *const *backends,
		    const char *const *servers, const long *sids, size_t n,
		    char *buf);
/*
 * The same, each server's id read from t (a whole answer's, or one
 * merged from such): -1 as well when one is not in t, or t has more than
 * HASTATS_OWN_MAX to ask.
 */
#define HASTATS_OWN_MAX		64
int		 hastats_table_own_request(const struct hastats_table *,
		    const char *const *backends, const char *const *servers,
		    size_t n, char *buf);
/* Whether every servers[i] of backends[i] has a row in the table. */
bool		 hastats_table_has_all(const struct hastats_table *,
		    const char *const *backends, const char *const *servers,
		    size_t n);

#endif
