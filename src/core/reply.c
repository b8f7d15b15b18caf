/* Reply lines. Pure: decision and restore words in, one line out. */
#include <stdio.h>
#include <string.h>

#include "lbagent/core/reply.h"

unsigned
reply_claims(const struct decision *d)
{
	unsigned	claims = 0;

	if (d->state == NODE_DRAIN || d->state == NODE_MAINT)
		claims |= CLAIM_ADMIN;
	if (d->state == NODE_UP && d->weight != 100 && !d->automation_off)
		claims |= CLAIM_WEIGHT;
	return claims;
}

const char *
reply_restore_word(unsigned claim_bit)
{
	return claim_bit == CLAIM_ADMIN ? "ready" : "100%";
}

/* Off's words: a marker's, or "ready" when one ended. */
static size_t
off_words(const struct decision *d, unsigned restore, char buf[REPLY_MAX])
{
	if (d->state == NODE_DRAIN || d->state == NODE_MAINT)
		return (size_t)snprintf(buf, REPLY_MAX, "%s ",
		    decision_state_name(d->state));
	if (restore & CLAIM_ADMIN)
		return (size_t)snprintf(buf, REPLY_MAX, "ready ");
	return 0;
}

#define OFF_TEXT	"lbagent automation off"

/*
 * Automation off: a marker's word and "ready" when a marker ended, never
 * an up, down or weight; the comment always (an empty line is an invalid
 * reply).
 */
static size_t
compose_off(const struct decision *d, unsigned restore, bool reasons,
    char buf[REPLY_MAX])
{
	size_t	n = off_words(d, restore, buf);

	if (reasons && d->reason[0] != '\0')
		n += (size_t)snprintf(buf + n, REPLY_MAX - n, "#%s; " OFF_TEXT,
		    d->reason);
	else
		n += (size_t)snprintf(buf + n, REPLY_MAX - n, "# " OFF_TEXT);
	buf[n++] = '\n';
	buf[n] = '\0';
	return n;
}

size_t
reply_compose_shadow(const struct decision *d, unsigned restore,
    const char *would, char buf[REPLY_MAX])
{
	size_t	n = off_words(d, restore, buf);

	n += (size_t)snprintf(buf + n, REPLY_MAX - n, "# " REPLY_SHADOW_TEXT
	    "%.*s", (int)strcspn(would, "\n"), would);
	if (n > REPLY_MAX - 2)
		n = REPLY_MAX - 2;
	buf[n++] = '\n';
	buf[n] = '\0';
	return n;
}

size_t
reply_compose(const struct decision *d, unsigned restore, bool reasons,
    char buf[REPLY_MAX])
{
	size_t	n = 0;

	if (d->automation_off)
		return compose_off(d, restore, reasons, buf);
	/* "ready" would undo a drain or maint we are asserting right now. */
	if ((restore & CLAIM_ADMIN) && d->state != NODE_DRAIN &&
	    d->state != NODE_MAINT)
		n += (size_t)snprintf(buf + n, REPLY_MAX - n, "ready ");
	n += (size_t)snprintf(buf + n, REPLY_MAX - n, "%s",
	    decision_state_name(d->state));
	/* A marker's word says nothing of up or down: say it, as it holds. */
	if (d->state == NODE_DRAIN || d->state == NODE_MAINT)
		n += (size_t)snprintf(buf + n, REPLY_MAX - n, " %s",
		    d->failing ? "down" : "up");
	if (d->state == NODE_UP && d->weight != 100)
		n += (size_t)snprintf(buf + n, REPLY_MAX - n, " %u%%", d->weight);
	else if (restore & CLAIM_WEIGHT)
		n += (size_t)snprintf(buf + n, REPLY_MAX - n, " 100%%");
	/* Never maxconn:0, which HAProxy reads as no limit. */
	if (d->state == NODE_UP && d->maxconn > 0)
		n += (size_t)snprintf(buf + n, REPLY_MAX - n, " maxconn:%u",
		    d->maxconn);
	if (reasons && d->reason[0] != '\0')
		n += (size_t)snprintf(buf + n, REPLY_MAX - n, " #%s", d->reason);
	buf[n++] = '\n';
	buf[n] = '\0';
	return n;
}
