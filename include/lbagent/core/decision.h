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
	unsigned	weight;			/* 0-256, meaningful when up */
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
	/*
	 * Capacity weights (docs/capacity.md): the factor (percent) an
	 * estimate gave the weight, which is then health_weight (the rules'
	 * and the engine's) times it; 0: the weight is the health weight
	 * alone. maxconn: the reply's maxconn:N; 0: none.
	 */
	unsigned	capacity_pct;
	unsigned	health_weight;
	unsigned	maxconn;
	char		reason[REASON_MAX + 1];	/* "" when there is nothing to say */
};

/* HAProxy's greatest effective weight: no reply asks for more. */
#define DECISION_WEIGHT_MAX	256

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
/*
 * The capacity factor over an automated decision that is up: the weight
 * times factor_pct / 100 (rounded down, at least 1 when it was above 0,
 * at most DECISION_WEIGHT_MAX) when factor_pct is not 0, and maxconn
 * (0: none). Down, a marker and automation off are left as they are.
 */
void		 decision_capacity(struct decision *, unsigned factor_pct,
		    unsigned maxconn);

#endif
