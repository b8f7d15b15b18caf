/*
 * The agent-send names no service has (a typo in HAProxy's configuration:
 * "aip" for "api"), kept for /metrics, status and why. Bounded: the
 * UNKNOWN_NAMES_MAX most recently asked for are kept, the one asked for
 * longest ago giving way to a new one, so a sender of ever new names
 * cannot grow the table. Names are kept escaped (text_escape: printable
 * ASCII, anything else as \xNN), never as sent.
 */
#ifndef LBAGENT_UNKNOWN_NAMES_H
#define LBAGENT_UNKNOWN_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lbagent/core/lbkeys.h"

#define UNKNOWN_NAMES_MAX	16
/* A name asked for within this long is "asked now" (lbagentctl status
 * exits 5 for it): a few of any sane agent-inter. */
#define UNKNOWN_NAME_RECENT_MS	60000

struct unknown_name {
	char		name[4 * LBKEY_TEXT_MAX + 1];	/* escaped */
	char		from[LBKEY_ADDR_MAX];		/* the latest asker */
	uint64_t	checks;
	int64_t		first_wall_ms;
	int64_t		last_ms, last_wall_ms;
	bool		recent;		/* as of the latest unknown_names_age */
	uint64_t	seq;		/* the latest ask's, for giving way */
};

struct unknown_names {
	struct unknown_name	v[UNKNOWN_NAMES_MAX];
	size_t			count;
	uint64_t		dropped;	/* names that gave way */
	uint64_t		asks;		/* asks counted: the order, even
						   within a millisecond */
};

/*
 * A check from addr asked for text (len bytes), which names no service.
 * True when what status shows of the names changed beyond the counts (a
 * new name, or one asked for again after its recent window).
 */
bool	unknown_names_seen(struct unknown_names *, const char *addr,
	    const char *text, size_t len, int64_t now_ms, int64_t wall_ms);
/* Marks the names not asked for within UNKNOWN_NAME_RECENT_MS: true when
 * one stopped being recent. */
bool	unknown_names_age(struct unknown_names *, int64_t now_ms);
/* Drops the names keep() says no longer hold (a reload added the
 * service); true when one went. */
bool	unknown_names_keep(struct unknown_names *,
	    bool (*keep)(const char *escaped, void *), void *arg);
/* Whether a name was asked for within UNKNOWN_NAME_RECENT_MS. */
bool	unknown_names_recent(const struct unknown_names *);

#endif
