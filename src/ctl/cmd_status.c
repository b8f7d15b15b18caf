/*
 * The commands that show lbagent's status: status (text, --short or
 * JSON), why, and fleet (every peer from the local lbagent's detail).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "lbagent/ctl/fleet.h"
#include "lbagent/ctl/format.h"
#include "lbagent/ctl/term.h"
#include "cmd.h"

int
cmd_status(struct ctl *c)
{
	json_t		*root;
	const json_t	*svc = NULL;
	int		 rc = CTL_EXIT_OK;

	if ((root = cmd_status_for(c, NULL, NULL)) == NULL)
		return CTL_EXIT_FAIL;
	if (c->o->service != NULL)
		svc = ctl_service(root, c->o->service);
	if (c->o->json) {
		if (ctl_term_json(stdout, svc != NULL ? svc : root,
		    JSON_INDENT(2) | JSON_PRESERVE_ORDER) == -1) {
			cmd_errx("out of memory");
			rc = CTL_EXIT_FAIL;
		}
	} else if (c->o->brief)
		ctl_format_short(stdout, root, c->o->service, WIDTH);
	else
		ctl_format_status(stdout, root, c->o->service, WIDTH);
	/* Like systemctl is-active: whether what is shown serves. */
	if (rc == CTL_EXIT_OK)
		rc = ctl_status_exit(root, c->o->service);
	json_decref(root);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		cmd_errx("writing the status: %s", strerror(errno));
		rc = CTL_EXIT_FAIL;
	}
	return rc;
}

int
cmd_why(struct ctl *c)
{
	json_t		*root;
	int		 rc;

	if ((root = cmd_status_for(c, "why", "the reasons")) == NULL)
		return CTL_EXIT_FAIL;
	ctl_format_why(stdout, root, c->o->service, WIDTH, time(NULL));
	rc = ctl_status_exit(root, c->o->service);
	json_decref(root);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		cmd_errx("writing: %s", strerror(errno));
		rc = CTL_EXIT_FAIL;
	}
	return rc;
}

/*
 * The fleet from the local lbagent's detail: its rounds already ask every
 * peer (each within its timeout, in parallel), so one request gives one
 * consistent view, whose age the table shows.
 */
int
cmd_fleet(struct ctl *c)
{
	json_t		*root, *fleet;
	int		 rc = CTL_EXIT_OK;

	if ((root = cmd_status_for(c, "fleet", "its peers")) == NULL)
		return CTL_EXIT_FAIL;
	if ((fleet = ctl_fleet_json(root, c->o->service)) == NULL) {
		cmd_errx("out of memory");
		json_decref(root);
		return CTL_EXIT_FAIL;
	}
	if (c->o->json) {
		if (ctl_term_json(stdout, fleet, JSON_INDENT(2) |
		    JSON_PRESERVE_ORDER) == -1) {
			cmd_errx("out of memory");
			rc = CTL_EXIT_FAIL;
		}
	} else
		ctl_fleet_format(stdout, fleet, WIDTH);
	json_decref(fleet);
	json_decref(root);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		cmd_errx("writing: %s", strerror(errno));
		rc = CTL_EXIT_FAIL;
	}
	return rc;
}
