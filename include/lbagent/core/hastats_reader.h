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
 * The Runtime API request for these backends, with its newline, into buf
 * (HASTATS_REQUEST_MAX bytes): "show stat BE 4 -1;" for each (their
 * servers' rows, nothing of the load balancer's other proxies), then
 * "show servers state BE;" for each. None, or more than fits: the whole
 * "show stat;show servers state", which the reader reads the same.
 */
void		 hastats_request(const char *const *backends, size_t nbackends,
		    char *buf);

#endif
