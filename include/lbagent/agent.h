/*
 * The agent: markers in, decision, replies composed once per change, the
 * load-balancer bookkeeping and its persistence. The listener asks it for
 * a reply line and nothing else.
 */
#ifndef LBAGENT_AGENT_H
#define LBAGENT_AGENT_H

#include <stdbool.h>
#include <stddef.h>

#include <event2/event.h>

#include "lbagent/config.h"
#include "lbagent/reply.h"

struct agent;

/* What one reply did, kept by the connection in case its text comes late. */
struct agent_check {
	unsigned	carried;	/* CLAIM_* bits the reply carried */
	bool		created;	/* the reply created its key */
};

/* Loads the state file and reads the markers once; NULL on fatal errors. */
struct agent	*agent_new(struct event_base *, const struct config *);
void		 agent_free(struct agent *);

/* Copies the reply for a check from (addr, text) into buf; returns its length. */
size_t		 agent_reply(struct agent *, const char *addr, const char *text,
		    size_t len, char buf[REPLY_MAX], struct agent_check *);
void		 agent_late_text(struct agent *, const char *addr,
		    const char *text, size_t len, const struct agent_check *);
bool		 agent_addr_sends_text(struct agent *, const char *addr);

#endif
