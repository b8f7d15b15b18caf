/*
 * What runs first in the daemon's one event loop. Libevent runs the
 * active events by priority, the most urgent (0) first:
 *
 *   LOOP_PRIORITY_AGENT	the agent port: accepts, requests, replies;
 *				HAProxy's checks wait on these
 *   LOOP_PRIORITY_DEFAULT	what keeps the replies true: probes' I/O,
 *				stats rounds, peers, timers
 *   LOOP_PRIORITY_HTTP		the HTTP API
 *
 * After LOOP_DISPATCH_MAX callbacks of LOOP_PRIORITY_DEFAULT or below,
 * the loop looks for new events again: an agent check that came
 * meanwhile waits for at most that many callbacks, each of them bounded
 * (a piece of a stats answer, one HTTP request).
 */
#ifndef LBAGENT_DAEMON_LOOP_H
#define LBAGENT_DAEMON_LOOP_H

#define LOOP_PRIORITIES		3
#define LOOP_PRIORITY_AGENT	0
#define LOOP_PRIORITY_DEFAULT	1	/* libevent's default with 3 levels */
#define LOOP_PRIORITY_HTTP	2
#define LOOP_DISPATCH_MAX	8

#endif
