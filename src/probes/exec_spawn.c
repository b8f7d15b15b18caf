/*
 * The exec kind's child, from fork to exec: its own process group, our
 * signal handlers and mask undone, /dev/null on stdin and stderr, the
 * pipe on stdout, only descriptors 0-2 (and the error pipe, closed by the
 * exec), /, the user's ids, a fixed minimal environment. What fails
 * before the exec is told to the parent on the error pipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

#include "exec_kind.h"

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

int
exec_spawn(struct exec_child *c, const char **what)
{
	int	out[2] = { -1, -1 }, err[2] = { -1, -1 };
	int	saved, i;
	pid_t	pid;

	*what = "pipe";
	if (pipe2(out, O_CLOEXEC) == -1 || pipe2(err, O_CLOEXEC) == -1 ||
	    fcntl(out[0], F_SETFL, O_NONBLOCK) == -1 ||
	    fcntl(err[0], F_SETFL, O_NONBLOCK) == -1)
		goto fail;
	*what = "fork";
	if ((pid = fork()) == -1)
		goto fail;
	if (pid == 0)
		child_exec(c->conf, out[1], err[1]);
	close(out[1]);
	close(err[1]);
	c->outfd = out[0];
	c->errfd = err[0];
	c->pid = pid;
	return 0;

fail:
	saved = errno;
	for (i = 0; i < 2; i++) {
		if (out[i] != -1)
			close(out[i]);
		if (err[i] != -1)
			close(err[i]);
	}
	errno = saved;
	return -1;
}
