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
	if (config_find_entry(p, section, "probes") == NULL)
		config_error(p->errs, p->path, sec->line,
		    "[service %s]: no probes (probes = name, name, ...)",
		    sec->name);
}
