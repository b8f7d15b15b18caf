/*
 * HAProxy's statistics CSV read as it arrives: fed piece by piece, it
 * keeps only the rows of the backends asked for and, of those, only the
 * columns lbagent reads (found by name in the header, as hastats.c does),
 * and the configured weights of their servers from a servers state after
 * the CSV ("show stat;show servers state"). Bounded: total bytes, one
 * line's bytes and rows kept. Pure: no I/O.
 */
#ifndef LBAGENT_HASTATS_READER_H
#define LBAGENT_HASTATS_READER_H

#include <stddef.h>

#include "lbagent/core/hastats.h"

#define HASTATS_BYTES_MAX	(8 * 1024 * 1024)	/* a whole answer */
#define HASTATS_LINE_MAX	(64 * 1024)		/* one record */
#define HASTATS_ROWS_MAX	8192			/* rows kept */

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

#endif
