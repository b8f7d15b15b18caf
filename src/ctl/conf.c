/*
 * What lbagentctl reads of lbagent's configuration: state_dir, [http]
 * listen and token_file, the service names. A file with errors is still
 * lbagent's file: an operator may need to drain the node, or see what is
 * running, in the middle of an edit. So when config_load() refuses it,
 * these few keys are taken from the file's lines as written, over the
 * defaults config_load() gives an empty file (one place for defaults).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "lbagent/core/name.h"
#include "lbagent/ctl/conf.h"
#include "lbagent/daemon/config.h"

static int
set_str(char **dst, const char *v)
{
	char	*s;

	if ((s = strdup(v)) == NULL)
		return -1;
	free(*dst);
	*dst = s;
	return 0;
}

/* "a, b,c" into c->listen; "none" is no address. */
static int
set_listen(struct ctl_conf *c, const char *v)
{
	const char	*p = v, *end;
	size_t		 n;

	while (c->nlisten > 0)
		free(c->listen[--c->nlisten]);
	if (strcmp(v, "none") == 0)
		return 0;
	while (*p != '\0' && c->nlisten < CONFIG_MAX_LISTEN) {
		p += strspn(p, " \t,");
		if (*p == '\0')
			break;
		end = p + strcspn(p, ",");
		n = (size_t)(end - p);
		while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if ((c->listen[c->nlisten] = strndup(p, n)) == NULL)
			return -1;
		c->nlisten++;
		p = end;
	}
	return 0;
}

static int
add_service(struct ctl_conf *c, const char *name)
{
	char	**n;
	size_t	  i;

	for (i = 0; i < c->nservices; i++)
		if (strcmp(c->services[i], name) == 0)
			return 0;
	if ((n = realloc(c->services, (c->nservices + 1) * sizeof(*n))) == NULL)
		return -1;
	c->services = n;
	if ((c->services[c->nservices] = strdup(name)) == NULL)
		return -1;
	c->nservices++;
	return 0;
}

static int
from_config(struct ctl_conf *c, const struct config *cfg)
{
	size_t	i;
	char	buf[160];

	if (set_str(&c->state_dir, cfg->state_dir) == -1)
		return -1;
	while (c->nlisten > 0)
		free(c->listen[--c->nlisten]);
	for (i = 0; i < cfg->http.count && i < CONFIG_MAX_LISTEN; i++) {
		const struct config_http_listen *l = &cfg->http.addr[i];

		if (l->is_unix)
			snprintf(buf, sizeof(buf), "unix:%s", l->path);
		else
			snprintf(buf, sizeof(buf), "%s", l->tcp.text);
		if ((c->listen[c->nlisten] = strdup(buf)) == NULL)
			return -1;
		c->nlisten++;
	}
	free(c->token_file);
	c->token_file = NULL;
	if (cfg->http.token_file != NULL &&
	    set_str(&c->token_file, cfg->http.token_file) == -1)
		return -1;
	for (i = 0; i < cfg->nservices; i++)
		if (add_service(c, cfg->services[i].name) == -1)
			return -1;
	return 0;
}

/* inih's handler: the few keys, as written; everything else passed over. */
static int
lenient(void *arg, const char *section, const char *key, const char *value)
{
	struct ctl_conf	*c = arg;
	char		 why[256];
	int		 rc = 0;

	if (strcmp(section, "agent") == 0 && strcmp(key, "state_dir") == 0 &&
	    value[0] == '/')
		rc = set_str(&c->state_dir, value);
	else if (strcmp(section, "http") == 0 && strcmp(key, "listen") == 0)
		rc = set_listen(c, value);
	else if (strcmp(section, "http") == 0 && strcmp(key, "token_file") == 0)
		rc = value[0] != '\0' ? set_str(&c->token_file, value) : 0;
	else if (strncmp(section, "service ", 8) == 0 &&
	    name_service(section + 8, why, sizeof(why)) == 0)
		rc = add_service(c, section + 8);	/* whose markers we read */
	return rc == 0;
}

int
ctl_conf_load(const char *path, struct ctl_conf *c, char *why, size_t whysize)
{
	struct config_errors	 errs;
	struct config		*cfg;
	FILE			*fp;
	int			 rc;

	memset(c, 0, sizeof(*c));
	cfg = config_load(path, &errs);
	c->nerrors = errs.count;
	config_errors_free(&errs);
	if (cfg != NULL) {
		rc = from_config(c, cfg);
		config_free(cfg);
		if (rc == -1)
			snprintf(why, whysize, "out of memory");
		return rc;
	}
	if ((fp = fopen(path, "re")) == NULL) {
		snprintf(why, whysize, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* The defaults: what an empty configuration gives. */
	if ((cfg = config_load("/dev/null", &errs)) == NULL ||
	    from_config(c, cfg) == -1) {
		config_errors_free(&errs);
		config_free(cfg);
		fclose(fp);
		snprintf(why, whysize, "cannot make the default configuration");
		return -1;
	}
	config_errors_free(&errs);
	config_free(cfg);
	rc = ini_parse_file(fp, lenient, c);
	fclose(fp);
	if (rc < 0) {
		snprintf(why, whysize, "%s: %s", path, rc == -2 ?
		    "out of memory" : "cannot read");
		return -1;
	}
	return 0;
}

void
ctl_conf_free(struct ctl_conf *c)
{
	size_t	i;

	free(c->state_dir);
	for (i = 0; i < c->nlisten; i++)
		free(c->listen[i]);
	free(c->token_file);
	for (i = 0; i < c->nservices; i++)
		free(c->services[i]);
	free(c->services);
	memset(c, 0, sizeof(*c));
}
