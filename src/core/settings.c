/*
 * A probe kind's settings, counted: held by the configuration that parsed
 * them and by each probe running with them (see settings.h).
 */
#include <stdlib.h>

#include "lbagent/core/settings.h"

struct probe_kconf *
settings_kconf_hold(struct probe_kconf *k)
{
	if (k != NULL)
		k->refs++;
	return k;
}

void
settings_kconf_release(struct probe_kconf *k)
{
	if (k == NULL || --k->refs > 0)
		return;
	k->conf_free(k->conf);
	free(k);
}
