/* Small helpers shared by the unit tests. */
#ifndef LBAGENT_TESTUTIL_H
#define LBAGENT_TESTUTIL_H

#include <stddef.h>

#include <check.h>

/* A fresh directory under /tmp, removed by tu_rmtree. */
char	*tu_tmpdir(void);
void	 tu_rmtree(const char *dir);
/* Writes len bytes (or strlen when len is -1) to dir/name; returns the path. */
char	*tu_write(const char *dir, const char *name, const char *data, long len);
/* Runs a suite; the exit status for main(). */
int	 tu_run(Suite *);

#endif
