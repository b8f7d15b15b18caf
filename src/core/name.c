/* The one check of names (see name.h). */
#include <stdio.h>
#include <string.h>

#include "lbagent/core/marker.h"
#include "lbagent/core/name.h"
#include "lbagent/core/settings.h"

bool
name_valid(const char *s)
{
	size_t	len = strlen(s);

	return len > 0 && len <= CONFIG_NAME_MAX &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789_-.") == len;
}

int
name_service(const char *name, char *why, size_t size)
{
	size_t	n = strlen(STATE_FILE);
	int	k;

	if (!name_valid(name)) {
		snprintf(why, size, "a service name must be 1 to %d letters, "
		    "digits, '_', '-' or '.'", CONFIG_NAME_MAX);
		return -1;
	}
	if (name[0] == '.') {
		snprintf(why, size, "'%s' starts with '.': state_dir/%s/ would "
		    "be state_dir itself, its parent or a hidden file "
		    "(lbagentctl's temporary markers)", name, name);
		return -1;
	}
	if (strcmp(name, NAME_DEFAULT_SERVICE) == 0) {
		snprintf(why, size, "'%s' is the default service's name (the "
		    "probes no [service] lists, service=\"%s\" in the "
		    "metrics)", name, name);
		return -1;
	}
	for (k = 0; k < MARKER_COUNT; k++)
		if (strcmp(name, marker_name((enum marker_kind)k)) == 0) {
			snprintf(why, size, "'%s' is a marker's name: state_dir/%s "
			    "is the node-wide %s marker", name, name, name);
			return -1;
		}
	if (strncmp(name, STATE_FILE, n) == 0 &&
	    (name[n] == '\0' || name[n] == '.')) {
		snprintf(why, size, "'%s' is the state file's name: state_dir/%s "
		    "is lbagent's own", name, name);
		return -1;
	}
	return 0;
}
