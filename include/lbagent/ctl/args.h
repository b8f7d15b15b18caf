/*
 * lbagentctl: its command line and exit statuses.
 */
#ifndef LBAGENT_CTL_ARGS_H
#define LBAGENT_CTL_ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses. */
#define CTL_EXIT_OK	0
#define CTL_EXIT_FAIL	1	/* daemon missing, timeout, bad config */
#define CTL_EXIT_USAGE	2
#define CTL_EXIT_NOT_SERVING 3	/* status, why: a service shown does not serve */
#define CTL_EXIT_NOT_DRAINED 4	/* --wait: sessions or queue left at the
				   timeout, or a load balancer not answering */
#define CTL_EXIT_ATTENTION 5	/* status, why: all serve, but the last reload
				   failed or a name no service has is asked */

#define CTL_TIMEOUT_DEFAULT_S	10
#define CTL_REQUEST_TIMEOUT_MS	2000
#define CTL_POLL_MS		100
/* --wait: a deploy's drain takes minutes, not the seconds of a marker. */
#define CTL_WAIT_TIMEOUT_DEFAULT_S	300
#define CTL_WAIT_POLL_MS	250

enum ctl_cmd {
	CTL_STATUS,
	CTL_MAINT,
	CTL_DRAIN,
	CTL_MODE,
	CTL_CHECK,
	CTL_RELOAD,
	CTL_WHY,
	CTL_FLEET,
	CTL_HELP,	/* -h */
	CTL_VERSION,	/* -V */
};

struct ctl_opts {
	enum ctl_cmd	 cmd;
	const char	*config;	/* -f; NULL: CONFIG_DEFAULT_PATH */
	const char	*address;	/* -s; NULL: the config's [http] listen */
	double		 timeout_s;	/* -t, --timeout */
	bool		 timeout_given;
	bool		 json;		/* status --json */
	bool		 brief;		/* status --short */
	const char	*service;	/* status/why SERVICE, --service; NULL:
					   all/node */
	bool		 on;		/* maint/drain on, mode off */
	const char	*reason;	/* --reason; NULL: an empty marker */
	const char	*until;		/* --until, as given; NULL: none */
	uint64_t	 for_ms;	/* --for; 0: none */
	bool		 wait;		/* --wait: until the LBs have drained */
	bool		 force;		/* --force: even the last node serving */
};

/*
 * Parses argv. Returns 0, or CTL_EXIT_USAGE with a one-line complaint in
 * why. The strings in opts point into argv.
 */
int		 ctl_parse_args(int argc, char *argv[], struct ctl_opts *,
		    char *why, size_t whysize);
void		 ctl_usage(FILE *, bool full);

#endif
