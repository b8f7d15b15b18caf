/*
 * Fuzz target: the configuration loader (src/daemon/config.c: inih's callback,
 * every key's parser, the probe kinds' settings and the checks after
 * each section). The input is written as a config file in a temp dir and
 * loaded with config_load, as lbagent -c does. A refused file must say
 * why, each error as "FILE:LINE: ..." in printable ASCII (the file's own
 * bytes escaped); a loaded one must give back what it read: reactions
 * and listen addresses written as text parse again to the same value.
 */
#include <stdlib.h>
#include <string.h>

#include "lbagent/daemon/config.h"
#include "fuzzutil.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_init();
	return 0;
}

static void
printable(const char *s)
{
	for (; *s != '\0'; s++)
		FZ_ASSERT(*s >= 0x20 && *s < 0x7f);
}

static void
reaction_back(const struct reaction *r)
{
	struct reaction	 back;
	const char	*why;
	char		 buf[8];

	FZ_ASSERT(config_parse_reaction(config_reaction_text(r, buf), &back,
	    &why) == 0);
	FZ_ASSERT(back.kind == r->kind);
	if (r->kind == REACT_WEIGHT)
		FZ_ASSERT(back.weight == r->weight);
}

static void
listens_back(const struct config_listens *ls)
{
	struct config_listen	 back;
	const char		*why;
	size_t			 i;

	FZ_ASSERT(ls->count <= CONFIG_MAX_LISTEN);
	for (i = 0; i < ls->count; i++) {
		FZ_ASSERT(config_parse_listen(ls->addr[i].text, &back,
		    &why) == 0);
		FZ_ASSERT(strcmp(back.host, ls->addr[i].host) == 0);
		FZ_ASSERT(strcmp(back.port, ls->addr[i].port) == 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config_errors	 errs;
	struct config		*cfg;
	const char		*path = fz_write("lbagent.conf", data, size);
	size_t			 i, plen = strlen(path);

	memset(&errs, 0, sizeof(errs));
	cfg = config_load(path, &errs);
	if (cfg == NULL) {
		FZ_ASSERT(errs.count > 0);
		for (i = 0; i < errs.count; i++) {
			FZ_ASSERT(strncmp(errs.lines[i], path, plen) == 0);
			FZ_ASSERT(errs.lines[i][plen] == ':');
			printable(errs.lines[i]);
		}
	} else {
		FZ_ASSERT(errs.count == 0);
		listens_back(&cfg->listen);
		for (i = 0; i < cfg->nprobes; i++) {
			reaction_back(&cfg->probes[i].on_warn);
			reaction_back(&cfg->probes[i].on_crit);
			FZ_ASSERT(config_probe(cfg, cfg->probes[i].name) != NULL);
		}
		for (i = 0; i < cfg->nservices; i++) {
			listens_back(&cfg->services[i].listen);
			FZ_ASSERT(config_server(cfg,
			    &cfg->services[i].transitions) != NULL);
		}
		(void)config_peers_on(cfg);
		config_free(cfg);
	}
	config_errors_free(&errs);
	return 0;
}
