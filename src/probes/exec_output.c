/*
 * What an exec run comes to: the child's stdout read as it comes, kept up
 * to EXEC_OUTPUT_MAX and drained up to EXEC_DRAIN_MAX so that the child
 * never blocks on a full pipe nor floods the loop; then the verdict, from
 * the exit status as the monitoring plugins' guidelines have it (0 ok,
 * 1 warn, 2 crit, 3 unknown), the first line of output as the reason and
 * its first perfdata item as the value (core/plugin_output.c).
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "lbagent/core/plugin_output.h"
#include "lbagent/probes/probe.h"
#include "exec_kind.h"

void
exec_close_output(struct exec_child *c)
{
	if (c->out_ev != NULL) {
		event_free(c->out_ev);
		c->out_ev = NULL;
	}
	if (c->outfd != -1) {
		close(c->outfd);
		c->outfd = -1;
	}
}

/*
 * Reads what the child wrote: the first EXEC_OUTPUT_MAX bytes are kept,
 * the rest dropped, so the child never blocks on a full pipe. Bounded per
 * call so that a flood cannot hold the loop, and per run (EXEC_DRAIN_MAX)
 * so that it cannot keep the loop busy until the timeout.
 */
void
exec_read_output(struct exec_child *c)
{
	char	 scratch[16384];
	size_t	 total = 0;
	ssize_t	 n;

	while (c->outfd != -1 && total < EXEC_READ_MAX) {
		if (c->drained >= EXEC_DRAIN_MAX) {
			/* No plugin says that much: stop it, and reading. */
			c->flooded = true;
			exec_close_output(c);
			if (!c->exited)
				(void)kill(-c->pid, SIGKILL);
			return;
		}
		if (c->outlen < sizeof(c->out))
			n = read(c->outfd, c->out + c->outlen,
			    sizeof(c->out) - c->outlen);
		else
			n = read(c->outfd, scratch, sizeof(scratch));
		if (n > 0) {
			if (c->outlen < sizeof(c->out))
				c->outlen += (size_t)n;
			total += (size_t)n;
			c->drained += (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		exec_close_output(c);	/* EOF, or nothing more to read */
	}
}

void
exec_out_cb(evutil_socket_t fd, short what, void *arg)
{
	exec_read_output(arg);
}

/* The exit codes of the guidelines, as results. */
static const enum probe_result exit_results[] = {
	PROBE_OK, PROBE_WARN, PROBE_CRIT, PROBE_UNKNOWN
};

/* Reports the finished run: from the exit status, the output, errfd. */
void
exec_report_exit(struct probe_run *run, struct exec_child *c,
    const siginfo_t *si)
{
	const struct exec_conf	*conf = c->conf;
	struct child_error	 ce;
	struct plugin_output	 po;
	char			 line[PROBE_REASON_MAX + 1];
	size_t			 len, i;
	ssize_t			 n;
	int			 code;
	bool			 flooded;

	plugin_output_parse(c->out, c->outlen, &po);
	len = po.textlen < PROBE_REASON_MAX ? po.textlen : PROBE_REASON_MAX;
	memcpy(line, po.text, len);
	line[len] = '\0';
	/* probe_report() makes it printable, but a NUL would cut it short. */
	for (i = 0; i < len; i++)
		if (line[i] == '\0')
			line[i] = '?';
	n = read(c->errfd, &ce, sizeof(ce));
	flooded = c->flooded;
	exec_child_free(c);	/* po.text pointed into it: line is a copy */
	if (n == (ssize_t)sizeof(ce)) {
		/*
		 * The child is still lbagent until the exec: out of
		 * descriptors or memory there is lbagent's shortage.
		 */
		if (ce.stage != STAGE_USER && probe_errno_local(ce.err) != NULL)
			probe_report_errno(run, ce.err, "cannot run %s",
			    conf->path);
		else if (ce.stage == STAGE_USER)
			probe_report(run, PROBE_CRIT, NAN, "cannot run as user "
			    "%s: %s", conf->user, strerror(ce.err));
		else
			probe_report(run, PROBE_CRIT, NAN, "cannot run %s: %s",
			    conf->path, strerror(ce.err));
		return;
	}
	/* Killed for its flood, or it exited in the middle of one. */
	if (flooded) {
		probe_report_check(run, PROBE_UNKNOWN, NAN, NULL, "output "
		    "larger than " EXEC_DRAIN_TEXT ", killed");
		return;
	}
	/* Whatever it printed before it was killed is not its verdict. */
	if (si->si_code != CLD_EXITED) {
		probe_report_check(run, PROBE_UNKNOWN, NAN, NULL,
		    "killed by signal %d", si->si_status);
		return;
	}
	code = si->si_status;
	if (code >= 0 && code <= 3) {
		if (len > 0)
			probe_report_check(run, exit_results[code], po.value,
			    po.unit, "%s", line);
		else
			probe_report_check(run, exit_results[code], po.value,
			    po.unit, "exit %d", code);
		return;
	}
	/* Not a plugin's code: unknown, and its output no measurement. */
	probe_report_check(run, PROBE_UNKNOWN, NAN, NULL, "exit %d%s%s", code,
	    len > 0 ? ": " : "", line);
}
