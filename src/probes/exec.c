/*
 * exec: runs a program the way monitoring-plugins' check_* expect to be
 * run, without a shell. The child gets its own process group, /dev/null on
 * stdin and stderr, a pipe on stdout, a fixed minimal environment, only
 * descriptors 0-2, and optionally another user. What it says is read as
 * the monitoring plugins' guidelines have it: exit 0 ok, 1 warn, 2 crit,
 * 3 unknown; any other exit and death by a signal are unknown too (the
 * check's own, which on_unknown governs). The first line of stdout
 * without its performance data is the reason, the first perfdata item
 * the measured value (core/plugin_output.c).
 *
 * The child is watched through a pidfd on the event loop, so we never need
 * a SIGCHLD handler that could reap other code's children, and its process
 * group can be signalled safely: until we reap the leader, its pid (the
 * group's id) cannot be reused. On cancel the group gets SIGTERM, then
 * SIGKILL a second later, and the leader is reaped in the background.
 *
 * A program may leave processes outside its group; those are swept up
 * as lbagent's children (exec_sweep.c). This file holds the ops and a
 * run's life: start, exit, cancel, and the reaping at shutdown.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "lbagent/sys/log.h"
#include "lbagent/probes/exec.h"
#include "lbagent/probes/kinds.h"
#include "lbagent/probes/probe.h"
#include "exec_kind.h"

/* Cancelled children not yet reaped, for probe_exec_reap_all(). */
static struct exec_child	*dying;
/* Every child whose leader is not reaped yet, running or dying. */
static struct exec_child	*leaders;

/* Releases what the child holds; the leader must be reaped already. */
void
exec_child_free(struct exec_child *c)
{
	if (c->listed) {
		if (c->lprev != NULL)
			c->lprev->lnext = c->lnext;
		else
			leaders = c->lnext;
		if (c->lnext != NULL)
			c->lnext->lprev = c->lprev;
	}
	if (c->run == NULL) {
		if (c->prev != NULL)
			c->prev->next = c->next;
		else if (dying == c)
			dying = c->next;
		if (c->next != NULL)
			c->next->prev = c->prev;
	}
	if (c->exit_ev != NULL)
		event_free(c->exit_ev);
	if (c->out_ev != NULL)
		event_free(c->out_ev);
	if (c->kill_ev != NULL)
		event_free(c->kill_ev);
	if (c->pidfd != -1)
		close(c->pidfd);
	if (c->outfd != -1)
		close(c->outfd);
	if (c->errfd != -1)
		close(c->errfd);
	free(c);
}

/*
 * Reaps the leader if it has exited. Returns 1 with its status in *si, 0
 * while it runs, -1 when it was reaped elsewhere (SIGCHLD ignored).
 */
static int
reap(struct exec_child *c, siginfo_t *si)
{
	memset(si, 0, sizeof(*si));
	while (waitid(P_PIDFD, (id_t)c->pidfd, si, WEXITED | WNOHANG) == -1) {
		if (errno != EINTR)
			return -1;
	}
	return si->si_pid != 0 ? 1 : 0;
}

static void
exit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct exec_child	*c = arg;
	struct probe_run	*run = c->run;
	struct event_base	*base = c->base;
	siginfo_t		 si;
	int			 r;

	c->exited = true;
	if (run == NULL && !c->killed) {
		/*
		 * Hold the zombie, and so the group's id, until SIGKILL. What
		 * it left outside its group need not wait for that; the group
		 * keeps its second after SIGTERM.
		 */
		event_del(c->exit_ev);
		exec_sweep(base, c->pid);
		return;
	}
	if (run != NULL) {
		/* It wrote everything before it exited: take what is left. */
		exec_read_output(c);
		/* Whatever it left running in its group goes with it. */
		(void)kill(-c->pid, SIGKILL);
	}
	if ((r = reap(c, &si)) == 0)
		return;		/* not yet: the pidfd stays watched */
	if (run == NULL) {
		exec_child_free(c);
		exec_sweep(base, 0);
		return;
	}
	run->data = NULL;
	if (r == -1) {
		log_warnx("probe %s: exit status of pid %ld lost: is SIGCHLD "
		    "ignored?", run->name, (long)c->pid);
		exec_child_free(c);
		probe_report(run, PROBE_CRIT, NAN, "exit status lost");
	} else
		exec_report_exit(run, c, &si);
	/* What it left outside its group is ours now. */
	exec_sweep(base, 0);
}

/* A second after SIGTERM: SIGKILL to the group, then reap. */
static void
kill_cb(evutil_socket_t fd, short what, void *arg)
{
	struct exec_child	*c = arg;
	struct event_base	*base;
	siginfo_t		 si;

	(void)kill(-c->pid, SIGKILL);
	c->killed = true;
	if (c->exited && reap(c, &si) != 0) {
		base = c->base;
		exec_child_free(c);
		exec_sweep(base, 0);
		return;
	}
	event_add(c->exit_ev, NULL);
}

bool
exec_is_leader(pid_t pid)
{
	const struct exec_child	*c;

	for (c = leaders; c != NULL; c = c->lnext)
		if (c->pid == pid)
			return true;
	return false;
}

/* The child watched: its exit through a pidfd, its output, the kill timer. */
static int
watch(struct exec_child *c, const char **what)
{
	struct event_base	*base = c->base;

	*what = "pidfd_open";
	if ((c->pidfd = pidfd_open(c->pid, 0)) == -1)
		return -1;
	*what = "event";
	errno = ENOMEM;		/* libevent fails for want of memory */
	if ((c->exit_ev = event_new(base, c->pidfd, EV_READ | EV_PERSIST,
	    exit_cb, c)) == NULL ||
	    (c->out_ev = event_new(base, c->outfd, EV_READ | EV_PERSIST,
	    exec_out_cb, c)) == NULL ||
	    (c->kill_ev = evtimer_new(base, kill_cb, c)) == NULL ||
	    event_add(c->exit_ev, NULL) == -1 ||
	    event_add(c->out_ev, NULL) == -1)
		return -1;
	return 0;
}

static void
exec_start(struct probe_run *run)
{
	const struct exec_conf	*conf = run->conf;
	struct exec_child	*c;
	const char		*what;
	int			 saved;

	if (conf->user != NULL && geteuid() != 0) {
		probe_report(run, PROBE_CRIT, NAN, "cannot run as user %s: "
		    "lbagent is not running as root", conf->user);
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		probe_report_errno(run, ENOMEM, "cannot start %s", conf->path);
		return;
	}
	c->conf = conf;
	c->base = run->env->base;
	c->pid = -1;
	c->pidfd = c->outfd = c->errfd = -1;
	if (exec_spawn(c, &what) == -1)
		goto fail;
	/* Known as ours before anything can sweep. */
	c->lnext = leaders;
	if (leaders != NULL)
		leaders->lprev = c;
	leaders = c;
	c->listed = true;
	/* Also here, so that a cancel right away reaches the group. */
	(void)setpgid(c->pid, c->pid);
	if (watch(c, &what) == -1)
		goto fail;
	c->run = run;
	run->data = c;
	return;

fail:
	saved = errno;
	if (c->pid > 0) {
		/* Just forked, nothing to wait for: this cannot block long. */
		(void)kill(-c->pid, SIGKILL);
		(void)kill(c->pid, SIGKILL);
		while (waitpid(c->pid, NULL, 0) == -1 && errno == EINTR)
			;
	}
	exec_child_free(c);
	/* All of these are lbagent's own: descriptors, memory, processes. */
	probe_report_errno(run, saved, "cannot start %s: %s", conf->path,
	    what);
}

/* The timeout passed: stop the run and leave the group to be killed. */
static void
exec_cancel(struct probe_run *run)
{
	struct exec_child	*c = run->data;
	struct timeval		 tv = { EXEC_KILL_AFTER_MS / 1000,
				    (EXEC_KILL_AFTER_MS % 1000) * 1000 };

	if (c == NULL)
		return;
	run->data = NULL;
	c->run = NULL;
	c->next = dying;
	if (dying != NULL)
		dying->prev = c;
	dying = c;
	exec_close_output(c);
	(void)kill(-c->pid, SIGTERM);
	if (evtimer_add(c->kill_ev, &tv) == -1)
		kill_cb(-1, 0, c);	/* no timer: kill now */
}

void
probe_exec_reap_all(void)
{
	struct exec_child	*c;
	struct pollfd		 pfd;
	siginfo_t		 si;

	while ((c = dying) != NULL) {
		(void)kill(-c->pid, SIGKILL);
		pfd.fd = c->pidfd;
		pfd.events = POLLIN;
		/* SIGKILL is quick unless the process is stuck in the kernel. */
		if (poll(&pfd, 1, 1000) == 1)
			(void)reap(c, &si);
		else
			log_warnx("exec: pid %ld does not die; left behind",
			    (long)c->pid);
		exec_child_free(c);
	}
	exec_sweep_reap_all();
}

const struct probe_ops probe_exec_ops = {
	.name = "exec",
	.unit = "",
	.keys = exec_keys,
	.conf_new = exec_conf_new,
	.conf_free = exec_conf_free,
	.conf_set = exec_conf_set,
	.conf_check = exec_conf_check,
	.start = exec_start,
	.cancel = exec_cancel,
	.keep_free = NULL,
};
