/*
 * Which service a check is for: the port's own, else the one its text
 * names, else the default; and what the keys remember of an address's
 * texts, for the listener's wait for a late one; the names asked for
 * that no service has.
 */
#include <string.h>

#include "lbagent/core/lbkeys.h"
#include "lbagent/core/name.h"
#include "lbagent/core/unknown_names.h"
#include "lbagent/sys/clock.h"

#include "agent_impl.h"

int
agent_select(const struct agent *a, int port, const char *text, size_t len)
{
	size_t	i;

	if (port != AGENT_SHARED_PORT)	/* a connection older than a reload */
		return (size_t)port < a->nsvcs ? port : 0;
	for (i = 1; i < a->nsvcs; i++) {
		const struct service_conf *sc = &a->cfg->services[i - 1];

		/* A service with its own port answers to its name here too. */
		if (strlen(sc->name) == len && memcmp(sc->name, text, len) == 0)
			return (int)i;
	}
	return 0;
}

bool
agent_names_no_service(const struct agent *a, const char *text, size_t len)
{
	size_t	i;

	/* Without [service] sections the text only tells keys apart. */
	if (a->nsvcs < 2 || len == 0)
		return false;
	if (len == strlen(NAME_DEFAULT_SERVICE) &&
	    memcmp(text, NAME_DEFAULT_SERVICE, len) == 0)
		return false;
	for (i = 1; i < a->nsvcs; i++)
		if (strlen(a->svcs[i].s.name) == len &&
		    memcmp(a->svcs[i].s.name, text, len) == 0)
			return false;
	return true;
}

bool
agent_wants_name(const struct agent *a, int port)
{
	size_t	i;

	if (port != AGENT_SHARED_PORT)
		return false;
	for (i = 0; i < a->cfg->nservices; i++)
		if (a->cfg->services[i].listen.count == 0)
			return true;
	return false;
}

bool
agent_addr_sends_text(const struct agent *a, const char *addr)
{
	size_t	i;

	for (i = 0; i < a->nsvcs; i++)
		if (lbkeys_addr_sends_text(a->svcs[i].s.keys, addr))
			return true;
	return false;
}

bool
agent_addr_quiet(const struct agent *a, const char *addr)
{
	unsigned	have = 0;
	size_t		i;

	for (i = 0; i < a->nsvcs; i++)
		have |= lbkeys_addr_texts(a->svcs[i].s.keys, addr);
	return have == LBKEYS_ADDR_NO_TEXT;
}

void
agent_unknown_name(struct agent *a, const char *addr, const char *text,
    size_t len, int64_t now_ms)
{
	if (unknown_names_seen(&a->unknown, addr, text, len, now_ms,
	    clock_wall_ms()))
		a->generation++;	/* a name, its asker or recent */
}

void
agent_unknown_names_age(struct agent *a)
{
	if (unknown_names_age(&a->unknown, clock_now_ms()))
		a->generation++;
}

/* A kept name is escaped; a service's name has nothing to escape. */
static bool
still_unknown(const char *name, void *a)
{
	return agent_names_no_service(a, name, strlen(name));
}

void
agent_unknown_names_reload(struct agent *a)
{
	unknown_names_keep(&a->unknown, still_unknown, a);
}
