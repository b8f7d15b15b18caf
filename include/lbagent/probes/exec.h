/* The exec probe kind's one entry point beyond its ops. */
#ifndef LBAGENT_PROBE_EXEC_H
#define LBAGENT_PROBE_EXEC_H

/*
 * Cancelled exec runs leave their process group dying in the background:
 * SIGTERM, SIGKILL a second later, then the reaping, all on the event
 * loop. At shutdown, before the loop is freed, this finishes them at once:
 * SIGKILL to every such group, reap (waiting a second at most for a
 * process stuck in the kernel), free. Safe to call at any time.
 */
void	probe_exec_reap_all(void);

#endif
