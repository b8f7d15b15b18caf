/*
 * A real agent for the targets that need one (fuzz_request,
 * fuzz_http_api): services web and api on the shared port, each with a
 * file probe a day apart, state, markers and the HTTP API's unix socket
 * (token s3cret) in the temp dir. Its event
 * base runs only when a target dispatches it.
 */
#ifndef LBAGENT_FUZZAGENT_H
#define LBAGENT_FUZZAGENT_H

#include <event2/event.h>

#include "lbagent/daemon/agent.h"

struct fz_agent {
	struct event_base	*base;
	struct config		*cfg;
	struct agent		*agent;
};

/* Starts it (after fz_init), or aborts; freed at exit. */
const struct fz_agent	*fz_agent(void);

#endif
