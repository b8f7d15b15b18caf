/*
 * The load-balancer key table's state, shared by its rooms and by
 * nothing else: lbkeys.c (the table, claims and restore words) and
 * lbkeys_json.c (its form in the state file). Everyone else holds a
 * struct lbkeys * and reads it through lbkeys.h.
 */
#ifndef LBAGENT_LBKEYS_IMPL_H
#define LBAGENT_LBKEYS_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "lbagent/core/lbkeys.h"

struct lbkeys {
	struct lbkey	*keys;		/* unordered; swap-removed */
	size_t		 count, cap;
	unsigned	 claims;	/* what the current decision claims */
	struct lbkey	*last;		/* of the latest check; NULL after a removal */
	int64_t		 forget_after_ms;
	/*
	 * Claims a state file showed: a key first seen before inherit_until
	 * may have seen them in the last moments before lbagent died, its
	 * "saw" not yet saved (lbkeys_from_json).
	 */
	unsigned	 inherit;
	int64_t		 inherit_until_ms;
	/* Newcomers refused or evicted since the last warning about them. */
	unsigned	 crowded;
	int64_t		 crowded_warned_ms;	/* INT64_MIN: never */
	/* Checks for a service that does not exist; their warnings. */
	uint64_t	 unknown_checks;
	unsigned	 unknown_warns;		/* since unknown_since_ms */
	int64_t		 unknown_since_ms;	/* INT64_MIN: none yet */
};

/* The key (addr, text); NULL when there is none. */
struct lbkey	*lbkeys_find(const struct lbkeys *, const char *addr,
		    const char *text, size_t len);
/* A new key at the end of the table; NULL when out of memory. */
struct lbkey	*lbkeys_append(struct lbkeys *, const char *addr,
		    const char *text, size_t len, int64_t now_ms);
/* Drops key i, moving the last key into its place. */
void		 lbkeys_remove_at(struct lbkeys *, size_t i);

#endif
