/* Small helpers shared by the unit tests. */
#ifndef LBAGENT_TESTUTIL_H
#define LBAGENT_TESTUTIL_H

#include <stddef.h>
#include <sys/resource.h>

#include <check.h>

/* A fresh directory under /tmp, removed by tu_rmtree. */
char	*tu_tmpdir(void);
/* A private mount namespace for this process (testutil.c); -1: errno. */
int	 tu_private_mounts(void);
void	 tu_rmtree(const char *dir);
/* Writes len bytes (or strlen when len is -1) to dir/name; returns the path. */
char	*tu_write(const char *dir, const char *name, const char *data, long len);
/*
 * This process out of descriptors, as lbagent can be: RLIMIT_NOFILE cut to
 * TU_FD_LIMIT and every descriptor below it taken but nfree, the highest.
 * tu_fds_release gives them back and restores the limit.
 */
#define TU_FD_LIMIT	64
struct tu_fds {
	int		fds[TU_FD_LIMIT];
	int		n;
	struct rlimit	saved;
};
void	 tu_fds_exhaust(struct tu_fds *, int nfree);
void	 tu_fds_release(struct tu_fds *);
/* Runs a suite; the exit status for main(). */
int	 tu_run(Suite *);

#endif
