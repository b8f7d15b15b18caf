/* [service NAME]'s keys, and one service section interpreted. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "config_impl.h"

/* Keys of a [service NAME]. */
const struct config_key config_service_keys[] = {
	{ "service", "probes", KEY_NAMES, NULL, 0, 0, 0,
	  "The probes whose results decide this service, comma-separated." },
	{ "service", "listen", KEY_LISTEN, NULL, 0, 0,
	  offsetof(struct service_conf, listen),
	  "Optional ports of this service alone (HAProxy connects there and "
	  "needs no agent-send); without it, agent-send \"NAME\\n\" on the "
	  "shared port selects the service." },
};
const size_t config_service_nkeys = NKEYS_OF(config_service_keys);

/*
 * Which backend the service is judged against (the peer guard, drain
 * --wait) and where that was said: a service that names none takes
 * [haproxy]'s, which is right only when it is that backend's; say so.
 */
static void
backend_from(struct parse *p, size_t section, struct service_conf *svc)
{
	const struct section	*sec = &p->sections[section];
	const struct entry	*e;

	if (svc->transitions.backend[0] == '\0')
		return;
	if ((e = config_find_entry(p, section, "backend")) != NULL) {
		svc->backend_line = e->line;
		return;
	}
	svc->backend_inherited = true;
	svc->backend_line = p->cfg->backend_line;
	config_warning(p->errs, p->path, sec->line, "[service %s]: judged "
	    "against backend %s, inherited from [haproxy] backend (line %u): "
	    "name its own (backend = ...), or backend = %s to keep it",
	    sec->name, svc->transitions.backend, p->cfg->backend_line,
	    svc->transitions.backend);
}

void
config_build_service(struct parse *p, size_t section, struct service_conf *svc)
{
	const struct section	*sec = &p->sections[section];

	char			 where[NAME_MAX_LEN + 16];

	svc->line = sec->line;
	if ((svc->name = strdup(sec->name)) == NULL)
		return;
	svc->transitions = p->cfg->transitions;
	config_table_apply(p, section, config_service_keys,
	    config_service_nkeys, svc, config_transition_key,
	    &svc->transitions);
	snprintf(where, sizeof(where), "[service %s]: ", sec->name);
	config_check_transitions(p, section, &svc->transitions, where);
	config_check_guard(p, section, &svc->transitions, where);
	backend_from(p, section, svc);
	if (config_find_entry(p, section, "probes") == NULL)
		config_error(p->errs, p->path, sec->line,
		    "[service %s]: no probes (probes = name, name, ...)",
		    sec->name);
}
