/*
 * lbagentctl maint|drain on --wait: whether every load balancer shows
 * this node out of its traffic with nothing left, from the detailed
 * /status (its "haproxy" array, which the daemon's rounds fill).
 */
#ifndef LBAGENT_CTL_WAIT_H
#define LBAGENT_CTL_WAIT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* From done to the worst: a load balancer's verdict is its worst row's. */
enum ctl_drain {
	CTL_DRAIN_DONE,		/* out of the traffic, no session, no queue */
	CTL_DRAIN_BUSY,		/* out of the traffic, sessions or queue left */
	CTL_DRAIN_SERVING,	/* still sends this node new traffic */
	CTL_DRAIN_UNKNOWN,	/* no such server there, or its sessions unknown */
	CTL_DRAIN_OLD,		/* no answer since the wait began */
	CTL_DRAIN_SILENT,	/* not answering */
};

struct ctl_drain_lb {
	char		 source[128];
	enum ctl_drain	 verdict;
	long		 sessions;	/* over the services waited for; -1: unknown */
	long		 queued;	/* likewise */
	char		 why[256];	/* SERVING: what it shows; UNKNOWN, SILENT:
					   the error; OLD: the last answer's age */
};

/* How many load balancers the status has (its "haproxy" array). */
size_t		 ctl_drain_nlbs(const json_t *root);

/*
 * One entry per load balancer (at most max), for service (NULL: every
 * service; "": the default one). since_s: seconds from the start of the
 * wait to when the request for root was sent; an answer counts only when
 * its last_seen_s is below that: it came after the wait began. Returns
 * how many entries it filled.
 */
size_t		 ctl_drain_check(const json_t *root, const char *service,
		    double since_s, struct ctl_drain_lb *, size_t max);

/* Whether every entry is done (and there is one at least). */
bool		 ctl_drain_done(const struct ctl_drain_lb *, size_t n);

/* An entry in a few words: "1 session, 0 queued", "not answering: ...". */
void		 ctl_drain_describe(const struct ctl_drain_lb *, char *buf,
		    size_t size);

#endif
