/* What the node should be, and why: the single input of every reply. */
#ifndef LBAGENT_DECISION_H
#define LBAGENT_DECISION_H

#include <stdbool.h>

#include "lbagent/core/marker.h"
#include "lbagent/core/text.h"

enum node_state {
	NODE_UP,	/* serving at `weight` percent (0: drained by rules) */
	NODE_DOWN,	/* failing by rules: HAProxy marks it DOWN (agent) */
	NODE_DRAIN,	/* no new sessions (marker) */
	NODE_MAINT,	/* out entirely (marker) */
	NODE_STATE_COUNT
};

struct decision {
	enum node_state	state;
	unsigned	weight;			/* 0-100, meaningful when up */
	/*
	 * Under a marker: the rules say down. Replies carry the operational
	 * word with drain or maint ("drain up", "maint down"), so that an
	 * agent DOWN lbagent set earlier does not outlive the rules' verdict.
	 */
	bool		failing;
	bool		ramping;		/* up, recovering at a lower weight */
	/*
	 * Automation is off: replies carry no state word of lbagent's own,
	 * only a marker's (drain, maint) and "ready" when one ends.
	 */
	bool		automation_off;
	/*
	 * Shadow mode (automation_off is set too): the replies are those of
	 * automation off, and their comment carries the line automation
	 * would send (reply_compose_shadow).
	 */
	bool		shadow;
	char		reason[REASON_MAX + 1];	/* "" when there is nothing to say */
};

const char	*decision_state_name(enum node_state);
int		 decision_state_parse(const char *, enum node_state *);

/*
 * The decision for a service: its markers or the node's (maint wins over
 * drain, the service's own reason first) override the rules' target.
 * own may be NULL (the default service has only the node's).
 */
void		 decision_make(const struct markers *node,
		    const struct markers *own, const struct decision *target,
		    struct decision *out);
void		 decision_up(struct decision *);
/* The decision while automation is off: nothing of lbagent's own. */
void		 decision_off(struct decision *);
/* The decision HAProxy is told in shadow mode: off's, marked shadow. */
void		 decision_shadow(struct decision *);
/*
 * What HAProxy is told, in words: "up", "up 50%", "down", "drain",
 * "automation off", "shadow".
 */
const char	*decision_words(const struct decision *, char buf[24]);
bool		 decision_equal(const struct decision *, const struct decision *);

#endif
