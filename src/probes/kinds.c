/* The probe kinds, found by name. Adding a kind: its file and one line here. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lbagent/core/suggest.h"
#include "lbagent/probes/kinds.h"

static const struct probe_ops *const kinds[] = {
	&probe_http_ops,
	&probe_docker_ops,
	&probe_disk_ops,
	&probe_inodes_ops,
	&probe_load_ops,
	&probe_cpu_ops,
	&probe_memory_ops,
	&probe_swap_ops,
	&probe_file_ops,
	&probe_process_ops,
	&probe_tcp_ops,
	&probe_exec_ops,
	&probe_postgres_ops,
	&probe_mountpoint_ops,
	NULL
};

const struct probe_ops *
probe_kind(const char *name)
{
	size_t	i;

	for (i = 0; kinds[i] != NULL; i++)
		if (strcmp(kinds[i]->name, name) == 0)
			return kinds[i];
	return NULL;
}

const char *
probe_kind_nearest(const char *name)
{
	const char	*names[sizeof(kinds) / sizeof(kinds[0])];
	size_t		 n;

	for (n = 0; kinds[n] != NULL; n++)
		names[n] = kinds[n]->name;
	return suggest_nearest(name, names, n);
}

const char *
probe_kind_names(void)
{
	static char	names[256];
	size_t		i, n = 0;

	if (names[0] != '\0')
		return names;
	for (i = 0; kinds[i] != NULL && n < sizeof(names); i++)
		n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s",
		    i ? ", " : "", kinds[i]->name);
	return names;
}

const char *
probe_windowed_kind_names(void)
{
	static char	names[256];
	size_t		i, n = 0;

	if (names[0] != '\0')
		return names;
	for (i = 0; kinds[i] != NULL && n < sizeof(names); i++)
		if (kinds[i]->windowed)
			n += (size_t)snprintf(names + n, sizeof(names) - n,
			    "%s%s", n ? ", " : "", kinds[i]->name);
	return names;
}
