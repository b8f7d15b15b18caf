/*
 * lbagentctl: what it reads of lbagent's configuration.
 */
#ifndef LBAGENT_CTL_CONF_H
#define LBAGENT_CTL_CONF_H

#include <stdbool.h>
#include <stddef.h>

#include "lbagent/core/settings.h"

/*
 * What lbagentctl needs of lbagent's configuration. From config_load()
 * when the file loads; when it has errors (an edit under way, a reload
 * about to fail), from the file's own lines for these keys alone, over
 * config_load()'s defaults, so that status, markers and reload still work.
 */
struct ctl_conf {
	char	*state_dir;
	char	*listen[CONFIG_MAX_LISTEN];	/* [http] listen, as written */
	size_t	 nlisten;
	char	*token_file;			/* NULL: none */
	char	**services;			/* [service NAME] names */
	size_t	 nservices;
	size_t	 nerrors;			/* errors of config_load() */
};

/*
 * Loads path into c. Returns 0 (c->nerrors > 0 when it was read leniently),
 * or -1 when the file cannot be read at all, with why.
 */
int		 ctl_conf_load(const char *path, struct ctl_conf *, char *why,
		    size_t whysize);
void		 ctl_conf_free(struct ctl_conf *);

#endif
