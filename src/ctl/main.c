/*
 * lbagentctl: the operator's side of lbagent. It writes the same marker
 * files a touch would, then asks the daemon's HTTP API until the answer
 * shows the change; it shows the status, checks a configuration and asks
 * for a reload. It never talks to HAProxy and never needs the network.
 *
 * This file parses the command line and hands over to the command: see
 * cmd.h for where each lives.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "lbagent/ctl/args.h"
#include "lbagent/ctl/conf.h"
#include "lbagent/ctl/term.h"
#include "lbagent/daemon/config.h"
#include "cmd.h"

#ifndef LBAGENT_VERSION
#define LBAGENT_VERSION "unknown"
#endif

int
main(int argc, char *argv[])
{
	struct ctl_opts	 o;
	struct ctl	 c;
	char		 why[256];
	int		 rc;

	/* Before anything is written: every byte goes out escaped. */
	if (ctl_term_setup() == -1) {
		perror("lbagentctl: cannot set up the output");
		return CTL_EXIT_FAIL;
	}
	if (ctl_parse_args(argc, argv, &o, why, sizeof(why)) != 0) {
		/* The error alone, not buried under the usage: a hint. */
		cmd_errx("%s", why);
		fprintf(stderr, "try 'lbagentctl --help'\n");
		return CTL_EXIT_USAGE;
	}
	switch (o.cmd) {
	case CTL_HELP:
		ctl_usage(stdout, true);
		return CTL_EXIT_OK;
	case CTL_VERSION:
		printf("lbagentctl %s\n", LBAGENT_VERSION);
		return CTL_EXIT_OK;
	default:
		break;
	}
	memset(&c, 0, sizeof(c));
	c.o = &o;
	c.config_path = o.config != NULL ? o.config : CONFIG_DEFAULT_PATH;
	signal(SIGPIPE, SIG_IGN);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		cmd_errx("cannot start libcurl");
		return CTL_EXIT_FAIL;
	}
	switch (o.cmd) {
	case CTL_STATUS:
		rc = cmd_status(&c);
		break;
	case CTL_MAINT:
	case CTL_DRAIN:
	case CTL_MODE:
		rc = cmd_marker(&c);
		break;
	case CTL_WHY:
		rc = cmd_why(&c);
		break;
	case CTL_FLEET:
		rc = cmd_fleet(&c);
		break;
	case CTL_CHECK:
		rc = cmd_check(&c);
		break;
	case CTL_RELOAD:
		rc = cmd_reload(&c);
		break;
	default:
		rc = CTL_EXIT_USAGE;
		break;
	}
	ctl_conf_free(&c.conf);
	if (c.token != NULL) {
		memset(c.token, 0, strlen(c.token));
		free(c.token);
	}
	curl_global_cleanup();
	return rc;
}
