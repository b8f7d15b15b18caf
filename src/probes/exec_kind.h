/*
 * What the exec kind's files share: its settings (struct exec_conf), a
 * child (struct exec_child) and the steps each file gives the others.
 * exec.c holds the ops and a run's life (start, exit, cancel, the reaping
 * at shutdown); exec_conf.c the keys; exec_spawn.c the fork and what the
 * child does before exec; exec_output.c the output read and the verdict;
 * exec_sweep.c the leftovers a run leaves outside its process group.
 * Internal to src/probes/.
 */
#ifndef LBAGENT_EXEC_KIND_H
#define LBAGENT_EXEC_KIND_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <sys/types.h>

#include <event2/event.h>

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

/* exec_conf.c: the keys, the program found, the user looked up. */
extern const struct probe_key_doc	 exec_keys[];
void	*exec_conf_new(void);
void	 exec_conf_free(void *);
int	 exec_conf_set(void *, const char *key, const char *value,
	    const char **why);
int	 exec_conf_check(void *, const char **why);

/* exec.c */
/* Releases what the child holds; the leader must be reaped already. */
void	 exec_child_free(struct exec_child *);
/* Whether pid is a run's leader, running or dying. */
bool	 exec_is_leader(pid_t pid);

/*
 * exec_spawn.c: the pipes made and the child forked, c->outfd, c->errfd
 * and c->pid set. -1 with errno and *what (what failed): nothing is left
 * open then and c is as it was.
 */
int	 exec_spawn(struct exec_child *c, const char **what);

/* exec_output.c: what the child wrote, and what its run comes to. */
void	 exec_close_output(struct exec_child *);
void	 exec_read_output(struct exec_child *);
void	 exec_out_cb(evutil_socket_t, short, void *);
/* Frees c, then reports the run from the exit status, output, errfd. */
void	 exec_report_exit(struct probe_run *, struct exec_child *c,
	    const siginfo_t *si);

/*
 * exec_sweep.c: SIGKILL to every child of ours that is not a run's leader
 * (nor in the process group spare, when not 0), each watched until it is
 * reaped; only when lbagent is a child subreaper.
 */
void	 exec_sweep(struct event_base *, pid_t spare);
/* At shutdown: the leftovers killed and reaped, for a while at most. */
void	 exec_sweep_reap_all(void);

#endif
