/*
 * The agent-send names no service has: the most recent UNKNOWN_NAMES_MAX,
 * with their counts (see unknown_names.h).
 */
#include <stdio.h>
#include <string.h>

#include "lbagent/core/text.h"
#include "lbagent/core/unknown_names.h"

static struct unknown_name *
find(struct unknown_names *u, const char *name)
{
	size_t	i;

	for (i = 0; i < u->count; i++)
		if (strcmp(u->v[i].name, name) == 0)
			return &u->v[i];
	return NULL;
}

/* A free slot, or the one asked for longest ago. */
static struct unknown_name *
slot(struct unknown_names *u)
{
	size_t	i, old = 0;

	if (u->count < UNKNOWN_NAMES_MAX)
		return &u->v[u->count++];
	for (i = 1; i < u->count; i++)
		if (u->v[i].seq < u->v[old].seq)
			old = i;
	u->dropped++;
	return &u->v[old];
}

bool
unknown_names_seen(struct unknown_names *u, const char *addr,
    const char *text, size_t len, int64_t now_ms, int64_t wall_ms)
{
	char			 name[4 * LBKEY_TEXT_MAX + 1];
	struct unknown_name	*n;
	bool			 shown = false;

	if (len > LBKEY_TEXT_MAX)
		len = LBKEY_TEXT_MAX;
	text_escape(name, text, len);
	if ((n = find(u, name)) == NULL) {
		n = slot(u);
		memset(n, 0, sizeof(*n));
		snprintf(n->name, sizeof(n->name), "%s", name);
		n->first_wall_ms = wall_ms;
		shown = true;
	}
	if (strcmp(n->from, addr) != 0) {
		snprintf(n->from, sizeof(n->from), "%s", addr);
		shown = true;
	}
	if (!n->recent)
		shown = true;
	n->recent = true;
	n->checks++;
	n->seq = ++u->asks;
	n->last_ms = now_ms;
	n->last_wall_ms = wall_ms;
	return shown;
}

bool
unknown_names_age(struct unknown_names *u, int64_t now_ms)
{
	size_t	i;
	bool	aged = false;

	for (i = 0; i < u->count; i++)
		if (u->v[i].recent &&
		    now_ms - u->v[i].last_ms >= UNKNOWN_NAME_RECENT_MS) {
			u->v[i].recent = false;
			aged = true;
		}
	return aged;
}

bool
unknown_names_keep(struct unknown_names *u,
    bool (*keep)(const char *escaped, void *), void *arg)
{
	size_t	i = 0;
	bool	gone = false;

	while (i < u->count) {
		if (keep(u->v[i].name, arg)) {
			i++;
			continue;
		}
		memmove(&u->v[i], &u->v[i + 1], (u->count - i - 1) *
		    sizeof(u->v[0]));
		u->count--;
		gone = true;
	}
	return gone;
}

bool
unknown_names_recent(const struct unknown_names *u)
{
	size_t	i;

	for (i = 0; i < u->count; i++)
		if (u->v[i].recent)
			return true;
	return false;
}
