/*
 * systemd integration without libsystemd: the notify protocol (one
 * datagram per message to $NOTIFY_SOCKET), the watchdog and socket
 * activation (LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES).
 *
 * The notify state is the process's, like the environment it comes from:
 * systemd_init() reads it once at start-up, systemd_close() forgets it.
 * Every function is a no-op when lbagent does not run under systemd.
 */
#ifndef LBAGENT_SYSTEMD_H
#define LBAGENT_SYSTEMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "lbagent/sys/log.h"

/* Longest STATUS= text sent; longer text is cut. */
#define SYSTEMD_STATUS_MAX	200
/* The name of a socket-activated descriptor kept for the HTTP API. */
#define SYSTEMD_FDNAME_HTTP	"http"

/*
 * Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID and removes them
 * from the environment, so that probe commands lbagent runs do not talk
 * to systemd in its name. Call once, before any thread starts. An
 * unusable NOTIFY_SOCKET is logged and notifications stay off.
 */
void	systemd_init(void);
/* Stops the watchdog and closes the notify socket. */
void	systemd_close(void);
/* True when notifications go somewhere. */
bool	systemd_notify_enabled(void);

/*
 * Sends msg ("READY=1", or several "KEY=VALUE" lines) as one datagram,
 * without ever blocking. 0 when sent; -1 when it could not be (the first
 * failure in a row is logged, the rest are not) or notify is off.
 */
int	systemd_notify(const char *msg);
int	systemd_notifyf(const char *fmt, ...) LOG_PRINTF(1, 2);

/* READY=1: the listeners are up. */
int	systemd_ready(void);
/* RELOADING=1 with MONOTONIC_USEC= (Type=notify-reload): follow with READY=1. */
int	systemd_reloading(void);
/* STOPPING=1. */
int	systemd_stopping(void);
/*
 * STATUS=<first line of line, control bytes as '?', at most
 * SYSTEMD_STATUS_MAX bytes>, sent only when that differs from the last
 * STATUS= that went out: call it with every reply line, it costs a
 * compare when nothing changed.
 */
void	systemd_status(const char *line);

/*
 * The watchdog ping interval in microseconds: half of WATCHDOG_USEC, when
 * it is set and WATCHDOG_PID is unset or this process. 0: no watchdog.
 */
uint64_t systemd_watchdog_interval_us(void);
/*
 * Sends WATCHDOG=1 from a timer on base every interval, so that a stuck
 * event loop stops the pings. 0 when started or not asked for; -1 on
 * failure (logged).
 */
int	systemd_watchdog_start(struct event_base *);

/* Listening sockets passed by systemd's socket activation. */
struct systemd_sockets {
	int	*agent;		/* the shared agent port, instead of [agent] listen */
	size_t	 nagent;
	int	*http;		/* named "http": kept for the HTTP API */
	size_t	 nhttp;
};

/*
 * Takes the sockets systemd passed (descriptors 3 onwards) when LISTEN_PID
 * is this process, each one checked to be a listening stream socket (TCP
 * for the agent port), made close-on-exec and non-blocking; removes the
 * LISTEN_* variables from the environment in any case. 0 with none when
 * not socket-activated; -1 (every problem logged, nothing taken) on a bad
 * variable or descriptor.
 */
int	systemd_listen_fds(struct systemd_sockets *);
/* Closes the descriptors still listed (a taker sets its count to 0). */
void	systemd_sockets_free(struct systemd_sockets *);

#endif
