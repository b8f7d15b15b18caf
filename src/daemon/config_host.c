/*
 * The checks of the file against this host, for lbagent -c and for the
 * daemon at each start and reload: what would fail at run time that the
 * file alone cannot tell. Warnings, never errors: the file may be right
 * where lbagent runs.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lbagent/core/argv.h"
#include "lbagent/probes/probe.h"
#include "lbagent/daemon/http_api_token.h"
#include "config_impl.h"

/*
 * What this host says of an exec probe: a program given by absolute path
 * that is not here, and a user switch lbagent cannot make unless it runs
 * as root. Both may be right where lbagent will run (another host, the
 * program installed later, lbagent started as root): warnings.
 */
static void
check_exec_host(struct parse *p, size_t section)
{
	const struct entry	*type = config_find_entry(p, section, "type");
	const struct entry	*cmd = config_find_entry(p, section, "command");
	const struct entry	*user = config_find_entry(p, section, "user");
	const char		*why;
	char			**argv;
	struct stat		 st;

	if (type == NULL || strcmp(type->value, "exec") != 0)
		return;
	if (cmd != NULL && argv_split(cmd->value, &argv, &why) != -1) {
		if (argv[0][0] == '/' && stat(argv[0], &st) == -1)
			config_warning(p->errs, p->path, cmd->line,
			    "command: no %s on this host (%s); the probe is "
			    "crit until there is", argv[0], strerror(errno));
		else if (argv[0][0] == '/' && (!S_ISREG(st.st_mode) ||
		    access(argv[0], X_OK) == -1))
			config_warning(p->errs, p->path, cmd->line,
			    "command: %s is not an executable file on this "
			    "host; the probe is crit until it is", argv[0]);
		argv_free(argv);
	}
	if (user != NULL && user->value[0] != '\0' && geteuid() != 0)
		config_warning(p->errs, p->path, user->line,
		    "user = %s needs lbagent to run as root, and it does not "
		    "here (the packages' unit runs it as the user lbagent): "
		    "the probe is crit, \"cannot run as user\"", user->value);
}

/*
 * The [http] files: a token_file the daemon cannot read (it starts, but
 * TCP callers get only the public /status), and a unix socket whose
 * directory is not there (the packages make /run/lbagent; until it
 * exists, lbagent cannot bind the socket and does not start).
 */
static void
check_http_host(struct parse *p, size_t section)
{
	const struct config_http	*h = &p->cfg->http;
	const struct entry		*e;
	const char			*why, *what;
	char				 token[HTTP_TOKEN_MAX + 1], dir[108];
	char				*slash;
	struct stat			 st;
	size_t				 i;

	if (h->token_file != NULL && http_api_token_read(h->token_file, token,
	    &why) == -1) {
		e = section != SIZE_MAX ? config_find_entry(p, section,
		    "token_file") : NULL;
		config_warning(p->errs, p->path, e != NULL ? e->line : 0,
		    "token_file %s: %s; TCP callers would get only the public "
		    "part of /status", h->token_file, why);
	}
	explicit_bzero(token, sizeof(token));
	e = section != SIZE_MAX ? config_find_entry(p, section, "listen") :
	    NULL;
	for (i = 0; i < h->count; i++) {
		if (!h->addr[i].is_unix)
			continue;
		snprintf(dir, sizeof(dir), "%s", h->addr[i].path);
		if ((slash = strrchr(dir, '/')) == NULL)
			continue;
		slash[slash == dir ? 1 : 0] = '\0';
		if (stat(dir, &st) == -1)
			what = errno == ENOENT ? "does not exist" :
			    strerror(errno);
		else if (!S_ISDIR(st.st_mode))
			what = "is not a directory";
		else
			continue;
		config_warning(p->errs, p->path, e != NULL ? e->line : 0,
		    "listen: unix:%s: the directory %s %s on this host; "
		    "lbagent cannot make the socket, and does not start, "
		    "until it is there", h->addr[i].path, dir, what);
	}
}

/* What the probe's kind says its settings will cost here (conf_warning). */
static void
check_kind_host(struct parse *p, size_t section, const struct probe_conf *pc)
{
	const struct entry	*e;
	const char		*msg, *key = NULL;

	if (pc->ops == NULL || pc->kconf == NULL ||
	    pc->ops->conf_warning == NULL ||
	    (msg = pc->ops->conf_warning(pc->kconf->conf, &key)) == NULL)
		return;
	e = key != NULL ? config_find_entry(p, section, key) : NULL;
	config_warning(p->errs, p->path, e != NULL ? e->line :
	    p->sections[section].line, "%s", msg);
}

/*
 * The checks of the file against this host, for lbagent -c and for the
 * daemon at each start and reload: what would fail at run time that the
 * file alone cannot tell.
 */
void
config_check_host(struct parse *p, size_t http)
{
	size_t	i, n = 0;

	for (i = 0; i < p->nsections; i++)
		if (!p->sections[i].bad && p->sections[i].kind == SEC_PROBE) {
			check_exec_host(p, i);
			/* build() made one probe per good probe section. */
			if (n < p->cfg->nprobes)
				check_kind_host(p, i, &p->cfg->probes[n++]);
		}
	check_http_host(p, http);
}
