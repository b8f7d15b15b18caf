/*
 * lbagentctl: the status document as text: status in format.c, status
 * --short and why in why.c, the replies after a marker change in
 * replies.c, the pieces they share in fmt.c.
 */
#ifndef LBAGENT_CTL_FORMAT_H
#define LBAGENT_CTL_FORMAT_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include <jansson.h>

#include "lbagent/ctl/fmt.h"

/*
 * Writes the status document as text in at most width columns: a summary
 * of every service, then, with detail, one section per service (only that
 * one when service is not NULL).
 */
void		 ctl_format_status(FILE *, const json_t *root,
		    const char *service, unsigned width);

/*
 * status's exit status for the services shown (only when not NULL): 0
 * when every one serves (up with a weight above 0), 3 when one does not
 * (down, drain, maint, weight 0) or there is none, else 5 when
 * ctl_attention.
 */
int		 ctl_status_exit(const json_t *root, const char *only);

/*
 * Whether lbagent needs the operator while it may serve (attention.c):
 * its last reload failed, or a load balancer asked lately (the status's
 * unknown_names, recent) for a service no [service] has.
 */
bool		 ctl_attention(const json_t *root);
/* Those, a line each, "ATTENTION: ...": status's and why's first lines. */
void		 ctl_format_attention(FILE *, const json_t *root,
		    unsigned width);

/*
 * status --short: a line per service: its name, the reply's words, why
 * (cut to fit the width), since when (local HH:MM:SS).
 */
void		 ctl_format_short(FILE *, const json_t *root, const char *only,
		    unsigned width);

/*
 * why: for each service (only that one when only is not NULL), a few
 * lines: what it replies since when, why, and what would change it. now
 * is the wall clock, for the ages and the times to come (local HH:MM:SS).
 */
void		 ctl_format_why(FILE *, const json_t *root, const char *only,
		    unsigned width, time_t now);

/*
 * What the load balancers get from one service now, after label (padded
 * to 12 columns): "replies LINE to ..." once when every load balancer that
 * asks gets the same line, else one line per different line with the
 * load balancers that get it; the service's state alone in the public
 * part, which has no reply.
 */
void		 ctl_format_replies(FILE *, const json_t *svc, const char *label,
		    unsigned width);

#endif
