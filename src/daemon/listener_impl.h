/*
 * The agent port's own parts, shared by its files: listener.c (the line
 * protocol and a connection's life, from the accept to the close),
 * listener_share.c (the connections each address holds, its share of
 * them, the pressure cut) and listener_bind.c (the listening sockets:
 * configured addresses bound, systemd's taken, kept or closed at a
 * reload).
 */
#ifndef LBAGENT_LISTENER_IMPL_H
#define LBAGENT_LISTENER_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "lbagent/core/lbkeys.h"
#include "lbagent/daemon/agent.h"
#include "lbagent/daemon/config.h"
#include "lbagent/daemon/listener.h"
#include "lbagent/sys/log.h"
#include "lbagent/sys/slab.h"

#define NAME_KEY_MAX		160
#define SOURCE_BUCKETS		1024	/* hash of the addresses with connections */
#define COMMON_TIMEOUTS		8	/* the holds' and waits' fixed lengths */

enum conn_state {
	CONN_REQUEST,	/* waiting for the request line */
	CONN_REPLY,	/* writing the reply line */
	CONN_DRAIN,	/* reply written, write side shut: reading to EOF */
};

/* One listening socket and the service it is for. */
struct port {
	struct listener		*l;
	evutil_socket_t		 fd;
	struct event		*ev;		/* readable: port_accept_cb */
	int			 service;	/* or AGENT_SHARED_PORT */
	/* What a reload matches it by: service name and address as written. */
	char			 key[NAME_KEY_MAX];
	bool			 passed;	/* by systemd: kept across reloads */
	bool			 wanted;	/* during a reload */
};

/*
 * The connections one source address has open, for the fairness check:
 * counted as they open and close, since counting them by walking every
 * open connection at each accept took most of the loop's time once
 * thousands were open (scripts/bench --full, with idle connections).
 */
struct source {
	struct source		*next;		/* same bucket */
	size_t			 nconns;
	char			 addr[LBKEY_ADDR_MAX];
};

struct conn {
	struct conn		*prev, *next;	/* listener::conns */
	struct listener		*l;
	struct source		*src;		/* NULL if it could not be counted */
	int			 port;		/* the port's service */
	int			 service;	/* chosen when replying */
	evutil_socket_t		 fd;
	struct event		 ev;		/* I/O, persistent: see conn_wait */
	struct event		 timer;		/* the request wait's end */
	struct event		 cap;		/* the deadline: closes */
	short			 waiting;	/* what ev is added for, or 0 */
	bool			 capped;	/* cap added */
	enum conn_state		 state;
	int			 hold_ms;	/* the deadline, from the accept */
	int64_t			 deadline_ms;
	int64_t			 request_until_ms;
	char			 addr[LBKEY_ADDR_MAX];
	size_t			 reqlen;
	bool			 replied_early;	/* before any request text */
	bool			 quiet_addr;	/* known to send none; not waited for */
	bool			 pressed;	/* under the pressure cut: see conn_mute */
	bool			 sends_none;	/* agent_addr_quiet, where text chooses */
	bool			 late_done;
	struct agent_check	 ck;
	size_t			 outlen, outoff;
	size_t			 drained;
	/* Buffers last: a reused conn zeroes everything before them. */
	char			 req[LISTENER_REQUEST_MAX];
	char			 out[REPLY_MAX];
};

struct listener {
	struct event_base	*base;
	const struct config	*cfg;
	struct agent		*agent;
	struct port		**ports;
	size_t			 nports;
	struct conn		*conns;
	size_t			 nconns;
	struct slab_pool	 slabs;		/* the conns */
	size_t			 peak;		/* most open since the last trim */
	struct event		*trim_ev;	/* trim_cb */
	uint64_t		 muted;		/* closed unanswered: conn_mute */
	struct log_limit	 muted_log;
	bool			 paused;
	bool			 pressed;	/* near capacity: short holds */
	bool			 starved;	/* out of descriptors; logged once */
	struct event		*resume_ev;
	struct log_limit	 refused_log;	/* addresses over their share */
	struct source		*sources[SOURCE_BUCKETS];
	struct source		*spare_source;	/* no malloc per lone check */
	/* libevent's common timeouts for the fixed lengths: see fixed_tv. */
	struct {
		int			 ms;
		const struct timeval	*tv;
	}			 common[COMMON_TIMEOUTS];
	size_t			 ncommon;
};

/* listener.c */
void		 listener_pause(struct listener *);
void		 listener_resume(struct listener *);
const struct timeval *listener_fixed_tv(struct listener *, int ms,
		    struct timeval *);
bool		 listener_text_chooses(const struct listener *, int port);
void		 listener_port_accept_cb(evutil_socket_t, short, void *port);
void		 listener_remap_conns(struct listener *);

/* listener_share.c */
bool		 listener_source_admit(struct listener *, evutil_socket_t,
		    const char *addr, struct source **);
void		 listener_source_drop(struct listener *, struct source *);
bool		 listener_pressed_accept(struct listener *, int64_t now_ms);
int		 listener_pressed_wait_ms(const struct listener *,
		    const struct conn *);

/* listener_bind.c */
int		 listener_bind(struct listener *, const int *fds, size_t nfds);
void		 listener_close_ports(struct listener *);

#endif
