/*
 * A JSON body parsed within a memory bound: what jansson allocates for
 * the tree is counted, on the parsing thread only, and past the bound the
 * parse fails. The http and docker kinds parse on a worker thread
 * (curl_probe_offload), so neither the time nor the memory a body costs
 * is the loop's. Internal to src/probes/.
 */
#ifndef LBAGENT_JSON_BODY_H
#define LBAGENT_JSON_BODY_H

#include <stddef.h>

#include <jansson.h>

/* What the tree of one body may take; a 1 MiB body of "{}," takes ~80. */
#define JSON_BODY_MEM_MAX	(16 * 1024 * 1024)
#define JSON_BODY_MEM_TEXT	"16 MiB"

enum json_body_status {
	JSON_BODY_OK,
	JSON_BODY_NOT_JSON,
	JSON_BODY_TOO_BIG,	/* its tree would take over JSON_BODY_MEM_MAX */
};

/*
 * Routes jansson's allocations through the counting ones (plain malloc
 * and free while no parse counts). On the loop thread, before the first
 * json_body_parse on any other thread; later calls do nothing.
 */
void	 json_body_init(void);
/* json_loadb within the bound; NULL with *status when not JSON_BODY_OK. */
json_t	*json_body_parse(const char *buf, size_t len, size_t flags,
	    enum json_body_status *status);

#endif
