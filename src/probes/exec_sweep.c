/*
 * What exec runs leave outside their process groups. A program may leave
 * processes there (setsid, a double fork into a new session); the group
 * kill misses them. lbagent is a child subreaper (main.c), so every such
 * process, once its parent is gone, becomes lbagent's child. lbagent forks
 * nothing but exec runs, so a child that is not a run's leader is a run's
 * leftover: after a leader exits, and after each leftover dies (its own
 * children come to us then), the sweep SIGKILLs every such child and
 * watches it through a pidfd until it is reaped. We never wait on a pid we
 * did not find as our own child, so no one else's exit status is taken.
 * The sweep acts only when this process is a subreaper: otherwise orphans
 * go to init, and a child that is not ours to kill (a test's helper) could
 * be taken for one.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "lbagent/sys/clock.h"
#include "lbagent/sys/log.h"
#include "exec_kind.h"

/* A process a run left behind, killed, watched until it is reaped. */
struct exec_leftover {
	struct exec_leftover	*prev, *next;
	struct event_base	*base;
	pid_t			 pid;
	int			 pidfd;
	struct event		*ev;
};
static struct exec_leftover	*leftovers;
static unsigned			 left_unlogged;
static bool			 left_logged;
static int64_t			 left_logged_ms;

/* Whether pid is a run's leader or a leftover already being killed. */
static bool
known(pid_t pid)
{
	const struct exec_leftover	*l;

	if (exec_is_leader(pid))
		return true;
	for (l = leftovers; l != NULL; l = l->next)
		if (l->pid == pid)
			return true;
	return false;
}

static bool
subreaper(void)
{
	int	on = 0;

	return prctl(PR_GET_CHILD_SUBREAPER, &on) == 0 && on != 0;
}

/* Adds the pids in a children file ("1 2 3 ") to pids; returns the count. */
static size_t
read_children(const char *path, pid_t *pids, size_t n, size_t max)
{
	FILE	*fp;
	long	 pid;

	if ((fp = fopen(path, "re")) == NULL)
		return n;
	while (n < max && fscanf(fp, "%ld", &pid) == 1)
		pids[n++] = (pid_t)pid;
	fclose(fp);
	return n;
}

/*
 * This process's children that are neither leaders nor leftovers known:
 * from its threads' children files, or where the kernel has none, from
 * the parent of every process in /proc.
 */
static size_t
unknown_children(pid_t *pids, size_t max)
{
	char		 path[PATH_MAX], buf[512], *p;
	struct dirent	*e;
	DIR		*d;
	FILE		*fp;
	size_t		 n = 0, i, kept = 0;
	bool		 by_task;
	long		 ppid;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/children",
	    (long)getpid());
	by_task = access(path, R_OK) == 0;
	if ((d = opendir(by_task ? "/proc/self/task" : "/proc")) == NULL)
		return 0;
	while (n < max && (e = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (by_task) {
			snprintf(path, sizeof(path), "/proc/self/task/%s/"
			    "children", e->d_name);
			n = read_children(path, pids, n, max);
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if ((fp = fopen(path, "re")) == NULL)
			continue;
		p = fgets(buf, sizeof(buf), fp);
		fclose(fp);
		/* "pid (comm) S ppid ...": comm may hold anything. */
		if (p == NULL || (p = strrchr(buf, ')')) == NULL ||
		    sscanf(p + 1, " %*c %ld", &ppid) != 1 || ppid != getpid())
			continue;
		pids[n++] = (pid_t)atol(e->d_name);
	}
	closedir(d);
	for (i = 0; i < n; i++)
		if (!known(pids[i]))
			pids[kept++] = pids[i];
	return kept;
}

static void
leftover_free(struct exec_leftover *l)
{
	if (l->prev != NULL)
		l->prev->next = l->next;
	else
		leftovers = l->next;
	if (l->next != NULL)
		l->next->prev = l->prev;
	if (l->ev != NULL)
		event_free(l->ev);
	if (l->pidfd != -1)
		close(l->pidfd);
	free(l);
}

/* A leftover died: reap it; its own children are ours now. */
static void
leftover_cb(evutil_socket_t fd, short what, void *arg)
{
	struct exec_leftover	*l = arg;
	struct event_base	*base = l->base;
	siginfo_t		 si;
	int			 r;

	memset(&si, 0, sizeof(si));
	while ((r = waitid(P_PIDFD, (id_t)l->pidfd, &si, WEXITED |
	    WNOHANG)) == -1 && errno == EINTR)
		;
	if (r == 0 && si.si_pid == 0)
		return;		/* not yet */
	leftover_free(l);
	exec_sweep(base, 0);
}

/* Once a minute at most, with how many since. */
static void
log_leftover(pid_t pid)
{
	char	 path[64], comm[32] = "?";
	FILE	*fp;
	int64_t	 now = clock_now_ms();

	left_unlogged++;
	if (left_logged && now - left_logged_ms < EXEC_LEFT_LOG_MS)
		return;
	snprintf(path, sizeof(path), "/proc/%ld/comm", (long)pid);
	if ((fp = fopen(path, "re")) != NULL) {
		if (fgets(comm, sizeof(comm), fp) != NULL)
			comm[strcspn(comm, "\n")] = '\0';
		fclose(fp);
	}
	if (left_unlogged == 1)
		log_warnx("exec: killed pid %ld (%s), which a probe's program "
		    "left running outside its process group", (long)pid, comm);
	else
		log_warnx("exec: killed pid %ld (%s) and %u more, which "
		    "probes' programs left running outside their process "
		    "groups, since the last such message", (long)pid, comm,
		    left_unlogged - 1);
	left_unlogged = 0;
	left_logged = true;
	left_logged_ms = now;
}

/*
 * SIGKILL to every child that is not a run's leader (nor in the process
 * group spare, when not 0), each watched until it is reaped. Without a
 * pidfd (out of descriptors) it is reaped here if it is already dead, or
 * found again by a later sweep.
 */
void
exec_sweep(struct event_base *base, pid_t spare)
{
	pid_t			 pids[EXEC_SWEEP_MAX];
	struct exec_leftover	*l;
	size_t			 n, i;

	if (!subreaper())
		return;
	n = unknown_children(pids, EXEC_SWEEP_MAX);
	for (i = 0; i < n; i++) {
		if (spare != 0 && getpgid(pids[i]) == spare)
			continue;
		log_leftover(pids[i]);
		/* Our child, not reaped: its pid cannot be anyone else's. */
		(void)kill(pids[i], SIGKILL);
		if ((l = calloc(1, sizeof(*l))) == NULL) {
			(void)waitpid(pids[i], NULL, WNOHANG);
			continue;
		}
		l->base = base;
		l->pid = pids[i];
		l->next = leftovers;
		if (leftovers != NULL)
			leftovers->prev = l;
		leftovers = l;
		if ((l->pidfd = pidfd_open(pids[i], 0)) == -1 ||
		    (l->ev = event_new(base, l->pidfd, EV_READ | EV_PERSIST,
		    leftover_cb, l)) == NULL || event_add(l->ev, NULL) == -1) {
			(void)waitpid(pids[i], NULL, WNOHANG);
			leftover_free(l);
		}
	}
}

void
exec_sweep_reap_all(void)
{
	pid_t			 pids[EXEC_SWEEP_MAX];
	struct timespec		 tick = { 0, 10 * 1000 * 1000 };
	int64_t			 until;
	size_t			 n, i, left;

	/*
	 * What runs left outside their groups: killed and reaped now, and
	 * their children after them as they come to us, for a while at most.
	 */
	while (leftovers != NULL)
		leftover_free(leftovers);
	if (!subreaper())
		return;
	until = clock_now_ms() + EXEC_EXIT_WAIT_MS;
	while ((n = unknown_children(pids, EXEC_SWEEP_MAX)) > 0 &&
	    clock_now_ms() < until) {
		for (i = 0; i < n; i++)
			(void)kill(pids[i], SIGKILL);
		for (left = n; left > 0;) {
			for (i = left = 0; i < n; i++)
				if (pids[i] != 0 &&
				    waitpid(pids[i], NULL, WNOHANG) == 0)
					left++;
				else
					pids[i] = 0;
			if (left == 0 || clock_now_ms() >= until)
				break;
			nanosleep(&tick, NULL);
		}
		if (left > 0) {
			log_warnx("exec: %zu processes left by probes do not "
			    "die; left behind", left);
			return;
		}
	}
}
