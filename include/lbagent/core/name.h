/*
 * Names: the one check of what a name of the configuration may be, and of
 * what a service may be called, for the daemon, lbagentctl and names that
 * come from elsewhere (peers' answers).
 */
#ifndef LBAGENT_NAME_H
#define LBAGENT_NAME_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Whether s is a name of the configuration (a section, a probe, a node id):
 * 1 to CONFIG_NAME_MAX letters, digits, '_', '-' or '.'. The one check of
 * names, for the config and for names that come from elsewhere (peers).
 */
bool	name_valid(const char *s);

/*
 * What the default service is called where it needs a name (the metrics'
 * service label, an agent-send text that asks for it): no [service] may
 * take it.
 */
#define NAME_DEFAULT_SERVICE	"default"

/*
 * Whether name can be a [service NAME] (lbagentctl's --service too): 1 to
 * CONFIG_NAME_MAX letters, digits, '_', '-' or '.', and not a name the
 * state directory itself uses, since the service's markers are in
 * state_dir/NAME/: not '.', '..' or any name starting with '.', not a
 * marker's (drain, maint, off), not the state file's (state.json and
 * state.json.*), not the default service's (NAME_DEFAULT_SERVICE). 0, or
 * -1 with why (a sentence naming it) in why.
 */
int	name_service(const char *name, char *why, size_t size);

#endif
