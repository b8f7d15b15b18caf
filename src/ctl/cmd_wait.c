/*
 * maint/drain on --wait: after the reply carries the marker, asks
 * lbagent's detail until every load balancer has the node out of its
 * traffic with no session and no queue left (what that means: wait.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <jansson.h>

#include "lbagent/core/units.h"
#include "lbagent/ctl/wait.h"
#include "cmd.h"

/*
 * --wait needs what only lbagent's detail has, the load balancers' view
 * of this node: without it, refuse before the marker takes the node out.
 */
int
cmd_wait_possible(struct ctl *c, const char *path)
{
	json_t	*root;
	int	 rc = -1;

	if ((root = cmd_status_once(c)) == NULL)
		cmd_errx("--wait: lbagent must run to tell when the load "
		    "balancers have drained; %s not written", path);
	else if (!cmd_has_detail(root))
		cmd_errx("--wait needs lbagent's detailed status (the load "
		    "balancers' sessions): use its unix socket, or set [http] "
		    "token_file; %s not written", path);
	else if (ctl_drain_nlbs(root) == 0)
		cmd_errx("--wait: lbagent asks no load balancer how it sees "
		    "this node: set [haproxy] sources and backend in %s; %s "
		    "not written", c->config_path, path);
	else
		rc = 0;
	json_decref(root);
	return rc;
}

/* What each load balancer has left, one line each, to fp. */
static void
drain_lines(FILE *fp, const struct ctl_drain_lb *lbs, size_t n)
{
	char	what[512];
	size_t	i;

	for (i = 0; i < n; i++) {
		ctl_drain_describe(&lbs[i], what, sizeof(what));
		fprintf(fp, "  %s: %s\n", lbs[i].source, what);
	}
}

/* At the deadline: what is left, on stderr. */
static void
not_drained(struct ctl *c, bool asked, const char *err,
    const struct ctl_drain_lb *lbs, size_t n)
{
	char	took[32];

	units_format_age((uint64_t)(c->o->timeout_s * 1000), took,
	    sizeof(took));
	if (!asked) {
		cmd_errx("not drained within %s: lbagent did not answer: %s",
		    took, err);
		return;
	}
	cmd_errx("not drained within %s; left:", took);
	if (n == 0)
		fprintf(stderr, "  no load balancer in lbagent's status\n");
	drain_lines(stderr, lbs, n);
}

/* On a terminal, once a second: how long so far and what is left. */
static void
progress(double waited_s, bool asked, const char *err,
    const struct ctl_drain_lb *lbs, size_t n)
{
	char	took[32], line[1024], what[512];
	size_t	i;

	units_format_age((uint64_t)(waited_s * 1000), took, sizeof(took));
	/* A line per load balancer, each within 80 columns. */
	if (!asked)
		snprintf(line, sizeof(line), "waiting %s: lbagent did not "
		    "answer: %s", took, err);
	else
		snprintf(line, sizeof(line), "waiting %s:", took);
	fprintf(stderr, "%.79s\n", line);
	for (i = 0; asked && i < n; i++) {
		ctl_drain_describe(&lbs[i], what, sizeof(what));
		snprintf(line, sizeof(line), "  %s: %s", lbs[i].source, what);
		fprintf(stderr, "%.79s\n", line);
	}
}

/*
 * After the reply carries the marker: polls the detail until every load
 * balancer answered since, sends the node no new traffic, and has no
 * session and no queue left on it. On a terminal, stderr shows what is
 * left once a second (stdout stays the result, for scripts).
 */
int
cmd_wait_drained(struct ctl *c, double deadline)
{
	struct ctl_drain_lb	*lbs = NULL;
	char			 err[ERR_MAX], took[32];
	double			 start = cmd_now_s(), sent, shown = start;
	size_t			 n = 0;
	json_t			*root = NULL;
	enum ctl_http_result	 r;
	bool			 tty = isatty(STDERR_FILENO), asked = false;
	int			 rc = CTL_EXIT_NOT_DRAINED;

	err[0] = '\0';
	for (;;) {
		sent = cmd_now_s();
		json_decref(root);
		r = cmd_get_status(c, &root, err, sizeof(err));
		if (r == CTL_HTTP_OK && root != NULL) {
			struct ctl_drain_lb *more;
			size_t want = ctl_drain_nlbs(root);

			if ((more = realloc(lbs, (want ? want : 1) *
			    sizeof(*lbs))) == NULL) {
				cmd_errx("out of memory");
				rc = CTL_EXIT_FAIL;
				goto out;
			}
			lbs = more;
			n = ctl_drain_check(root, c->o->service, sent - start,
			    lbs, want);
			asked = true;
			if (ctl_drain_done(lbs, n))
				break;
		} else if (r != CTL_HTTP_OK)
			asked = false;
		if (cmd_now_s() >= deadline) {
			not_drained(c, asked, err, lbs, n);
			goto out;
		}
		if (tty && cmd_now_s() - shown >= 1) {
			shown = cmd_now_s();
			progress(shown - start, asked, err, lbs, n);
		}
		cmd_sleep_ms(CTL_WAIT_POLL_MS);
	}
	units_format_age((uint64_t)((cmd_now_s() - start) * 1000), took,
	    sizeof(took));
	printf("drained: %zu load balancer%s show%s no session and no queue "
	    "left, after %s\n", n, n == 1 ? "" : "s", n == 1 ? "s" : "",
	    took);
	rc = CTL_EXIT_OK;
out:
	free(lbs);
	json_decref(root);
	return rc;
}
