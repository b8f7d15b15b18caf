/*
 * The reply line, composed from a decision. HAProxy shares its MAINT and
 * DRAIN flags and the weight with operators, so a reply "claims" them, and
 * the words that undo a claim (ready, 100%) are sent only to load
 * balancers that saw it (see lbkeys.h).
 */
#ifndef LBAGENT_REPLY_H
#define LBAGENT_REPLY_H

#include <stdbool.h>
#include <stddef.h>

#include "lbagent/core/decision.h"

/* What a reply sets on the load balancer; bit i is undone by restore word i. */
enum reply_claim {
	CLAIM_ADMIN = 1 << 0,	/* drain or maint; undone by "ready" */
	CLAIM_WEIGHT = 1 << 1,	/* a weight other than 100%; undone by "100%" */
};
#define CLAIM_ALL	(CLAIM_ADMIN | CLAIM_WEIGHT)
#define CLAIM_COUNT	2

/*
 * "ready maint down 100% #" and a full reason, or "maint #" a reason
 * "; lbagent automation off", or in shadow mode "ready # lbagent shadow:
 * would reply " and such a line, with room to spare.
 */
#define REPLY_MAX	(80 + REASON_MAX)
#define REPLY_SHADOW_TEXT	"lbagent shadow: would reply "

unsigned	 reply_claims(const struct decision *);
const char	*reply_restore_word(unsigned claim_bit);

/*
 * Writes the line for d, with the restore words in `restore` (CLAIM_*
 * bits) and the reason when `reasons` is set, ending in "\n". Returns its
 * length.
 */
size_t		 reply_compose(const struct decision *d, unsigned restore,
		    bool reasons, char buf[REPLY_MAX]);
/*
 * In shadow mode (d->shadow): the words off would send (a marker's drain
 * or maint, "ready" for the restore words in `restore`), then only the
 * comment "# lbagent shadow: would reply " and `would`, the line
 * automation would send (without its newline). No up, down or weight:
 * HAProxy changes nothing it would not change with automation off.
 */
size_t		 reply_compose_shadow(const struct decision *d,
		    unsigned restore, const char *would, char buf[REPLY_MAX]);

#endif
