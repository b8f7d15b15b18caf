/* The fuzz targets' agent; see fuzzagent.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/daemon/config.h"
#include "fuzzagent.h"
#include "fuzzutil.h"

static struct fz_agent	fa;
static struct probe_env	env;

static void
stop(void)
{
	agent_free(fa.agent);
	config_free(fa.cfg);
	event_base_free(fa.base);
}

const struct fz_agent *
fz_agent(void)
{
	struct config_errors	 errs;
	char			 text[2048], sock[512], token[512];
	size_t			 i;

	if (fa.agent != NULL)
		return &fa;
	snprintf(sock, sizeof(sock), "%s", fz_write("api.sock", NULL, 0));
	snprintf(token, sizeof(token), "%s", fz_write("token", "s3cret\n", 7));
	snprintf(text, sizeof(text),
	    "[agent]\nstate_dir = %s\nnode_id = fuzz\n"
	    "[http]\nlisten = unix:%s\ntoken_file = %s\n"
	    "[probe ready]\ntype = file\npath = %s\ninterval = 24h\n"
	    "[service web]\nprobes = ready\n[service api]\nprobes = ready\n",
	    fz_dir(), sock, token, fz_dir());
	fz_write("lbagent.conf", text, strlen(text));
	memset(&errs, 0, sizeof(errs));
	if ((fa.cfg = config_load(fz_write("lbagent.conf", NULL, 0), &errs))
	    == NULL) {
		for (i = 0; i < errs.count; i++)
			fz_note(errs.lines[i], strlen(errs.lines[i]));
		abort();
	}
	config_errors_free(&errs);
	if ((fa.base = event_base_new()) == NULL)
		abort();
	env.base = fa.base;
	env.proc_root = "/proc";
	if ((fa.agent = agent_new(fa.base, fa.cfg, &env, -1)) == NULL)
		abort();
	atexit(stop);
	return &fa;
}
