/* Reply lines. Pure: decision and restore words in, one line out. */
#include <stdio.h>
#include <string.h>

#include "lbagent/reply.h"

unsigned
reply_claims(const struct decision *d)
{
	unsigned	claims = 0;

	if (d->state == NODE_DRAIN || d->state == NODE_MAINT)
		claims |= CLAIM_ADMIN;
	if (d->state == NODE_UP && d->weight < 100)
		claims |= CLAIM_WEIGHT;
	return claims;
}

const char *
reply_restore_word(unsigned claim_bit)
{
	return claim_bit == CLAIM_ADMIN ? "ready" : "100%";
}

size_t
reply_compose(const struct decision *d, unsigned restore, bool reasons,
    char buf[REPLY_MAX])
{
	size_t	n = 0;

	/* "ready" would undo a drain or maint we are asserting right now. */
	if ((restore & CLAIM_ADMIN) && d->state != NODE_DRAIN &&
	    d->state != NODE_MAINT)
		n += (size_t)snprintf(buf + n, REPLY_MAX - n, "ready ");
	n += (size_t)snprintf(buf + n, REPLY_MAX - n, "%s",
	    node_state_name(d->state));
	/* A marker's word says nothing of up or down: say it, as it holds. */
	if (d->state == NODE_DRAIN || d->state == NODE_MAINT)
		n += (size_t)snprintf(buf + n, REPLY_MAX - n, " %s",
		    d->failing ? "down" : "up");
	if (d->state == NODE_UP && d->weight < 100)
		n += (size_t)snprintf(buf + n, REPLY_MAX - n, " %u%%", d->weight);
	else if (restore & CLAIM_WEIGHT)
		n += (size_t)snprintf(buf + n, REPLY_MAX - n, " 100%%");
	if (reasons && d->reason[0] != '\0')
		n += (size_t)snprintf(buf + n, REPLY_MAX - n, " #%s", d->reason);
	buf[n++] = '\n';
	buf[n] = '\0';
	return n;
}
