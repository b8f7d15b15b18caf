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
 * A program may leave processes outside its group (setsid, a double fork
 * into a new session); the group kill misses them. lbagent is a child
 * subreaper (main.c), so every such process, once its parent is gone,
 * becomes lbagent's child. lbagent forks nothing but exec runs, so a
 * child that is not a run's leader is a run's leftover: after a leader
 * exits, and after each leftover dies (its own children come to us
 * then), the sweep SIGKILLs every such child and watches it through a
 * pidfd until it is reaped. We never wait on a pid we did not find as our
 * own child, so no one else's exit status is taken. The sweep acts only
 * when this process is a subreaper: otherwise orphans go to init, and a
 * child that is not ours to kill (a test's helper) could be taken for one.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "lbagent/core/argv.h"
#include "lbagent/core/plugin_output.h"
#include "lbagent/sys/clock.h"
#include "lbagent/sys/log.h"
#include "lbagent/probes/exec.h"
#include "lbagent/probes/kinds.h"
#include "lbagent/probes/probe.h"

/* Where bare program names are found, and the PATH the program gets. */
#define EXEC_PATH \
	"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:" \
	"/usr/lib/nagios/plugins:/usr/lib/monitoring-plugins"
#define EXEC_OUTPUT_MAX		4096	/* kept; the rest is read and dropped */
#define EXEC_READ_MAX		(64 * 1024)	/* per wakeup, for fairness */
/*
 * Of a run's whole output: past it the program is killed and the run is
 * unknown, so a program writing forever costs the loop this much reading,
 * not a pipe's worth every turn until its timeout.
 */
#define EXEC_DRAIN_MAX		(4 * 1024 * 1024)
#define EXEC_DRAIN_TEXT		"4 MiB"
#define EXEC_KILL_AFTER_MS	1000	/* from SIGTERM to SIGKILL */
#define EXEC_SWEEP_MAX		256	/* children per sweep; more: next one */
#define EXEC_LEFT_LOG_MS	60000	/* leftovers logged once a minute */
#define EXEC_EXIT_WAIT_MS	2000	/* at exit, for leftovers to die */

/* What the child says on its error pipe when it cannot exec. */
enum child_stage {
	STAGE_SETUP,	/* descriptors, /dev/null, chdir */
	STAGE_USER,	/* setgroups, setgid, setuid */
	STAGE_EXEC,
};

struct child_error {
	int	stage;
	int	err;
};

struct exec_conf {
	char	**argv;		/* argv[0] as written */
	char	 *path;		/* the program: absolute */
	char	 *user;		/* NULL: lbagent's own */
	uid_t	  uid;
	gid_t	  gid;
	gid_t	 *groups;	/* supplementary, from the group database */
	int	  ngroups;
	char	  why[512];	/* conf_check's messages that name things */
};

/* One child; outlives its run when cancelled, until it is reaped. */
struct exec_child {
	struct exec_child	*prev, *next;	/* dying, once cancelled */
	struct exec_child	*lprev, *lnext;	/* leaders, until reaped */
	bool			 listed;	/* on leaders */
	struct event_base	*base;
	struct probe_run	*run;		/* NULL once cancelled */
	const struct exec_conf	*conf;
	pid_t			 pid;		/* also its process group */
	int			 pidfd;
	int			 outfd;
	int			 errfd;
	struct event		*exit_ev;	/* pidfd readable: leader exited */
	struct event		*out_ev;
	struct event		*kill_ev;	/* SIGKILL after SIGTERM */
	bool			 exited;
	bool			 killed;	/* SIGKILL sent to the group */
	bool			 flooded;	/* wrote past EXEC_DRAIN_MAX */
	char			 out[EXEC_OUTPUT_MAX];
	size_t			 outlen;
	size_t			 drained;	/* bytes read in all */
};

/* Cancelled children not yet reaped, for probe_exec_reap_all(). */
static struct exec_child	*dying;
/* Every child whose leader is not reaped yet, running or dying. */
static struct exec_child	*leaders;

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

static void	sweep(struct event_base *, pid_t);

static const struct probe_key_doc exec_keys[] = {
	{ "command", NULL, "The program and its arguments (required), quoted "
	    "as in a shell but run without one; a bare name is looked up in "
	    EXEC_PATH ".", false },
	{ "user", NULL, "Run as this user (lbagent must run as root).",
	    false },
	{ NULL, NULL, NULL, false },
};

static void *
exec_conf_new(void)
{
	return calloc(1, sizeof(struct exec_conf));
}

static void
exec_conf_free(void *p)
{
	struct exec_conf	*conf = p;

	if (conf == NULL)
		return;
	argv_free(conf->argv);
	free(conf->path);
	free(conf->user);
	free(conf->groups);
	free(conf);
}

static int
exec_conf_set(void *p, const char *key, const char *value, const char **why)
{
	struct exec_conf	*conf = p;
	char			**argv;

	if (strcmp(key, "command") == 0) {
		if (argv_split(value, &argv, why) == -1)
			return -1;
		argv_free(conf->argv);
		conf->argv = argv;
		return 0;
	}
	if (strcmp(key, "user") == 0) {
		if (*value == '\0') {
			*why = "expected a user name";
			return -1;
		}
		free(conf->user);
		if ((conf->user = strdup(value)) == NULL) {
			*why = "out of memory";
			return -1;
		}
		return 0;
	}
	*why = "unknown key";
	return -1;
}

/* The absolute path of a program named without a slash, from EXEC_PATH. */
static char *
find_program(const char *name)
{
	const char	*dir = EXEC_PATH, *end;
	char		 path[PATH_MAX];
	struct stat	 st;
	int		 n;

	for (; *dir != '\0'; dir = *end == ':' ? end + 1 : end) {
		end = strchrnul(dir, ':');
		n = snprintf(path, sizeof(path), "%.*s/%s", (int)(end - dir),
		    dir, name);
		if (n < 0 || (size_t)n >= sizeof(path))
			continue;
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(path, X_OK) == 0)
			return strdup(path);
	}
	return NULL;
}

/* The user's ids and groups, looked up once: the child cannot use NSS. */
static int
resolve_user(struct exec_conf *conf, const char **why)
{
	struct passwd	*pw;
	gid_t		*groups = NULL, *g;
	int		 n = 16, want;

	errno = 0;
	if ((pw = getpwnam(conf->user)) == NULL) {
		snprintf(conf->why, sizeof(conf->why), "unknown user %s%s%s",
		    conf->user, errno != 0 ? ": " : "",
		    errno != 0 ? strerror(errno) : "");
		*why = conf->why;
		return -1;
	}
	conf->uid = pw->pw_uid;
	conf->gid = pw->pw_gid;
	for (;;) {
		if ((g = realloc(groups, (size_t)n * sizeof(*g))) == NULL)
			goto nomem;
		groups = g;
		want = n;
		if (getgrouplist(conf->user, conf->gid, groups, &want) != -1) {
			n = want;
			break;
		}
		if (want <= n || want > 65536)
			n *= 2;
		else
			n = want;
		if (n > 65536) {
			*why = "the user is in too many groups";
			free(groups);
			return -1;
		}
	}
	free(conf->groups);
	conf->groups = groups;
	conf->ngroups = n;
	return 0;

nomem:
	free(groups);
	*why = "out of memory";
	return -1;
}

static int
exec_conf_check(void *p, const char **why)
{
	struct exec_conf	*conf = p;
	const char		*prog;

	if (conf->argv == NULL) {
		*why = "command is required";
		return -1;
	}
	prog = conf->argv[0];
	free(conf->path);
	conf->path = NULL;
	if (*prog == '\0') {
		*why = "the program's name is empty";
		return -1;
	}
	if (prog[0] == '/')
		conf->path = strdup(prog);
	else if (strchr(prog, '/') != NULL) {
		snprintf(conf->why, sizeof(conf->why), "%s: give the program "
		    "as an absolute path, or as a bare name found in the PATH",
		    prog);
		*why = conf->why;
		return -1;
	} else if ((conf->path = find_program(prog)) == NULL) {
		snprintf(conf->why, sizeof(conf->why), "%s not found in "
		    EXEC_PATH " (give an absolute path)", prog);
		*why = conf->why;
		return -1;
	}
	if (conf->path == NULL) {
		*why = "out of memory";
		return -1;
	}
	if (conf->user != NULL && resolve_user(conf, why) == -1)
		return -1;
	return 0;
}

/* In the child, after a failure: tell the parent why, then go. */
static _Noreturn void
child_fail(int errfd, int stage)
{
	struct child_error	ce = { stage, errno };

	(void)!write(errfd, &ce, sizeof(ce));
	_exit(127);
}

/* F_DUPFD to 10 failed: EINVAL means a descriptor limit of 10 or less. */
static _Noreturn void
child_fail_dup(int errfd)
{
	if (errno == EINVAL)
		errno = EMFILE;
	child_fail(errfd, STAGE_SETUP);
}

/*
 * The child, between fork and exec: async-signal-safe calls only (no
 * malloc, no NSS). errfd is close-on-exec, so the parent reads EOF from it
 * once the program runs.
 */
static _Noreturn void
child_exec(const struct exec_conf *conf, int outfd, int errfd)
{
	static char		 env_path[] = "PATH=" EXEC_PATH;
	static char		 env_lang[] = "LANG=C";
	char *const		 envp[] = { env_path, env_lang, NULL };
	struct sigaction	 sa;
	sigset_t		 none;
	struct rlimit		 rl;
	int			 sig, nul, fd;

	/* Our handlers, ignored signals and mask are not the program's. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	(void)setpgid(0, 0);

	/* Out of the way of 0-2 first: lbagent may run with them closed. */
	if ((fd = fcntl(errfd, F_DUPFD_CLOEXEC, 10)) == -1)
		child_fail_dup(errfd);
	errfd = fd;
	if ((outfd = fcntl(outfd, F_DUPFD_CLOEXEC, 10)) == -1)
		child_fail_dup(errfd);
	if ((nul = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1 ||
	    dup2(nul, 0) == -1 || dup2(nul, 2) == -1 || dup2(outfd, 1) == -1 ||
	    dup3(errfd, 3, O_CLOEXEC) == -1)
		child_fail(errfd, STAGE_SETUP);
	errfd = 3;
	for (fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_SETFD, 0) == -1)
			child_fail(errfd, STAGE_SETUP);
	if (close_range(4, ~0U, 0) == -1) {
		/* Kernels before 5.9. */
		if (getrlimit(RLIMIT_NOFILE, &rl) == -1 ||
		    rl.rlim_cur > 1024 * 1024)
			rl.rlim_cur = 1024 * 1024;
		for (fd = 4; fd < (int)rl.rlim_cur; fd++)
			(void)close(fd);
	}
	if (chdir("/") == -1)
		child_fail(errfd, STAGE_SETUP);
	if (conf->user != NULL &&
	    (setgroups((size_t)conf->ngroups, conf->groups) == -1 ||
	    setgid(conf->gid) == -1 || setuid(conf->uid) == -1))
		child_fail(errfd, STAGE_USER);
	execve(conf->path, conf->argv, envp);
	child_fail(errfd, STAGE_EXEC);
}

/* Releases what the child holds; the leader must be reaped already. */
static void
child_free(struct exec_child *c)
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

static void
close_output(struct exec_child *c)
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
static void
read_output(struct exec_child *c)
{
	char	 scratch[16384];
	size_t	 total = 0;
	ssize_t	 n;

	while (c->outfd != -1 && total < EXEC_READ_MAX) {
		if (c->drained >= EXEC_DRAIN_MAX) {
			/* No plugin says that much: stop it, and reading. */
			c->flooded = true;
			close_output(c);
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
		close_output(c);	/* EOF, or nothing more to read */
	}
}

static void
out_cb(evutil_socket_t fd, short what, void *arg)
{
	read_output(arg);
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

/* The exit codes of the guidelines, as results. */
static const enum probe_result exit_results[] = {
	PROBE_OK, PROBE_WARN, PROBE_CRIT, PROBE_UNKNOWN
};

/* Reports the finished run: from the exit status, the output, errfd. */
static void
report_exit(struct probe_run *run, struct exec_child *c, const siginfo_t *si)
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
	child_free(c);		/* po.text pointed into it: line is a copy */
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
		sweep(base, c->pid);
		return;
	}
	if (run != NULL) {
		/* It wrote everything before it exited: take what is left. */
		read_output(c);
		/* Whatever it left running in its group goes with it. */
		(void)kill(-c->pid, SIGKILL);
	}
	if ((r = reap(c, &si)) == 0)
		return;		/* not yet: the pidfd stays watched */
	if (run == NULL) {
		child_free(c);
		sweep(base, 0);
		return;
	}
	run->data = NULL;
	if (r == -1) {
		log_warnx("probe %s: exit status of pid %ld lost: is SIGCHLD "
		    "ignored?", run->name, (long)c->pid);
		child_free(c);
		probe_report(run, PROBE_CRIT, NAN, "exit status lost");
	} else
		report_exit(run, c, &si);
	/* What it left outside its group is ours now. */
	sweep(base, 0);
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
		child_free(c);
		sweep(base, 0);
		return;
	}
	event_add(c->exit_ev, NULL);
}

/* Whether pid is a run's leader or a leftover already being killed. */
static bool
known(pid_t pid)
{
	const struct exec_child		*c;
	const struct exec_leftover	*l;

	for (c = leaders; c != NULL; c = c->lnext)
		if (c->pid == pid)
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
	sweep(base, 0);
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
static void
sweep(struct event_base *base, pid_t spare)
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

static void
exec_start(struct probe_run *run)
{
	const struct exec_conf	*conf = run->conf;
	struct event_base	*base = run->env->base;
	struct exec_child	*c;
	int			 out[2] = { -1, -1 }, err[2] = { -1, -1 };
	const char		*what;
	pid_t			 pid;
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
	c->pid = -1;
	c->pidfd = c->outfd = c->errfd = -1;
	what = "pipe";
	if (pipe2(out, O_CLOEXEC) == -1 || pipe2(err, O_CLOEXEC) == -1 ||
	    fcntl(out[0], F_SETFL, O_NONBLOCK) == -1 ||
	    fcntl(err[0], F_SETFL, O_NONBLOCK) == -1)
		goto fail;
	what = "fork";
	if ((pid = fork()) == -1)
		goto fail;
	if (pid == 0)
		child_exec(conf, out[1], err[1]);
	close(out[1]);
	close(err[1]);
	out[1] = err[1] = -1;
	c->outfd = out[0];
	c->errfd = err[0];
	c->pid = pid;
	c->base = base;
	/* Known as ours before anything can sweep. */
	c->lnext = leaders;
	if (leaders != NULL)
		leaders->lprev = c;
	leaders = c;
	c->listed = true;
	/* Also here, so that a cancel right away reaches the group. */
	(void)setpgid(pid, pid);
	what = "pidfd_open";
	if ((c->pidfd = pidfd_open(pid, 0)) == -1)
		goto fail;
	what = "event";
	errno = ENOMEM;		/* libevent fails for want of memory */
	if ((c->exit_ev = event_new(base, c->pidfd, EV_READ | EV_PERSIST,
	    exit_cb, c)) == NULL ||
	    (c->out_ev = event_new(base, c->outfd, EV_READ | EV_PERSIST,
	    out_cb, c)) == NULL ||
	    (c->kill_ev = evtimer_new(base, kill_cb, c)) == NULL ||
	    event_add(c->exit_ev, NULL) == -1 ||
	    event_add(c->out_ev, NULL) == -1)
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
	if (out[1] != -1)
		close(out[1]);
	if (err[1] != -1)
		close(err[1]);
	if (c->outfd == -1 && out[0] != -1)
		close(out[0]);
	if (c->errfd == -1 && err[0] != -1)
		close(err[0]);
	child_free(c);
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
	close_output(c);
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
	pid_t			 pids[EXEC_SWEEP_MAX];
	struct timespec		 tick = { 0, 10 * 1000 * 1000 };
	int64_t			 until;
	size_t			 n, i, left;

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
		child_free(c);
	}
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
