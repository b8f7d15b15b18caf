/* The node's decision. Pure: no I/O, no clock. */
#include <stdio.h>
#include <string.h>

#include "lbagent/core/decision.h"

static const char *const state_names[NODE_STATE_COUNT] = {
	[NODE_UP] = "up",
	[NODE_DOWN] = "down",
	[NODE_DRAIN] = "drain",
	[NODE_MAINT] = "maint",
};

const char *
decision_state_name(enum node_state s)
{
	return (unsigned)s < NODE_STATE_COUNT ? state_names[s] : "?";
}

int
decision_state_parse(const char *s, enum node_state *out)
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
decision_up(struct decision *d)
{
	memset(d, 0, sizeof(*d));
	d->state = NODE_UP;
	d->weight = 100;
}

void
decision_off(struct decision *d)
{
	decision_up(d);
	d->automation_off = true;
}

void
decision_shadow(struct decision *d)
{
	decision_off(d);
	d->shadow = true;
}

const char *
decision_words(const struct decision *d, char buf[24])
{
	unsigned	w;

	if (d->state == NODE_UP && d->shadow)
		return "shadow";
	if (d->state == NODE_UP && d->automation_off)
		return "automation off";
	/* A capacity factor is no change in kind: the health weight's is. */
	w = d->capacity_pct != 0 ? d->health_weight : d->weight;
	if (d->state == NODE_UP && w < 100) {
		snprintf(buf, 24, "up %u%%", w);
		return buf;
	}
	return decision_state_name(d->state);
}

/* The marker of kind k in own, else in node; NULL when neither has it. */
static const struct marker *
pick(const struct markers *node, const struct markers *own,
    enum marker_kind k)
{
	if (own != NULL && own->m[k].present)
		return &own->m[k];
	return node->m[k].present ? &node->m[k] : NULL;
}

void
decision_make(const struct markers *node, const struct markers *own,
    const struct decision *target, struct decision *d)
{
	const struct marker	*m;

	if ((m = pick(node, own, MARKER_MAINT)) != NULL) {
		decision_up(d);
		d->state = NODE_MAINT;
	} else if ((m = pick(node, own, MARKER_DRAIN)) != NULL) {
		decision_up(d);
		d->state = NODE_DRAIN;
	} else {
		*d = *target;
		return;
	}
	d->failing = target->state == NODE_DOWN;
	d->automation_off = target->automation_off;
	d->shadow = target->shadow;
	snprintf(d->reason, sizeof(d->reason), "%s", m->reason);
}

bool
decision_equal(const struct decision *a, const struct decision *b)
{
	return a->state == b->state && a->weight == b->weight &&
	    a->failing == b->failing && a->ramping == b->ramping &&
	    a->automation_off == b->automation_off && a->shadow == b->shadow &&
	    a->capacity_pct == b->capacity_pct &&
	    a->health_weight == b->health_weight && a->maxconn == b->maxconn &&
	    strcmp(a->reason, b->reason) == 0;
}

void
decision_capacity(struct decision *d, unsigned factor_pct, unsigned maxconn)
{
	unsigned long	w;

	if (d->state != NODE_UP || d->automation_off)
		return;
	d->maxconn = maxconn;
	if (factor_pct == 0)
		return;
	d->capacity_pct = factor_pct;
	d->health_weight = d->weight;
	w = (unsigned long)d->weight * factor_pct / 100;
	if (w == 0 && d->weight > 0)
		w = 1;
	d->weight = w > DECISION_WEIGHT_MAX ? DECISION_WEIGHT_MAX : (unsigned)w;
}
