/* The node's decision. Pure: no I/O, no clock. */
#include <stdio.h>
#include <string.h>

#include "lbagent/decision.h"

static const char *const state_names[NODE_STATE_COUNT] = {
	[NODE_UP] = "up",
	[NODE_DRAIN] = "drain",
	[NODE_MAINT] = "maint",
};

const char *
node_state_name(enum node_state s)
{
	return (unsigned)s < NODE_STATE_COUNT ? state_names[s] : "?";
}

int
node_state_parse(const char *s, enum node_state *out)
{
	int	i;

	for (i = 0; i < NODE_STATE_COUNT; i++) {
		if (strcmp(s, state_names[i]) == 0) {
			*out = (enum node_state)i;
			return 0;
		}
	}
	return -1;
}

void
decision_from_markers(const struct markers *ms, struct decision *d)
{
	const struct marker	*m;

	memset(d, 0, sizeof(*d));
	d->state = NODE_UP;
	d->weight = 100;
	if (ms->m[MARKER_MAINT].present) {
		m = &ms->m[MARKER_MAINT];
		d->state = NODE_MAINT;
	} else if (ms->m[MARKER_DRAIN].present) {
		m = &ms->m[MARKER_DRAIN];
		d->state = NODE_DRAIN;
	} else
		return;
	snprintf(d->reason, sizeof(d->reason), "%s", m->reason);
}

bool
decision_equal(const struct decision *a, const struct decision *b)
{
	return a->state == b->state && a->weight == b->weight &&
	    strcmp(a->reason, b->reason) == 0;
}
