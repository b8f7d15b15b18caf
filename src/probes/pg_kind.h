/*
 * What the postgres kind's files share: its settings (struct pg_conf),
 * a run (struct pg_run) and what a probe keeps across runs (struct
 * pg_keep), and the steps each file gives the others. postgres.c holds
 * the ops and a run's start, end and cancel; pg_conf.c the keys;
 * pg_conn.c the connection's state machine on the loop; pg_judge.c what
 * libpq's messages and the results come to; pg_resolve.c the host names,
 * resolved with evdns. Internal to src/probes/.
 */
#ifndef LBAGENT_PG_KIND_H
#define LBAGENT_PG_KIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>
#include <libpq-fe.h>

#include "lbagent/core/threshold.h"
#include "lbagent/probes/pg_hosts.h"
#include "lbagent/probes/probe.h"
#include "pg_cancel.h"
#include "pg_relay.h"

#define PG_SHOWN_MAX		40	/* of a value in a reason */
#define PG_WHY_MAX		160	/* of a config error from libpq */
#define PG_MARGIN_MIN_MS	50	/* statement_timeout under the rest */
#define PG_DEFAULT_QUERY	"SELECT 1"
#define PG_SQLSTATE_CANCELED	"57014"
#define PG_READ_MAX_MIB		1	/* read from the server in a run */
#define PG_READ_MAX		((size_t)PG_READ_MAX_MIB << 20)
#define PG_ROWS_MAX		1000	/* of the user's query, then stopped */

enum pg_role {
	PG_ROLE_ANY,
	PG_ROLE_PRIMARY,
	PG_ROLE_STANDBY,
};

struct pg_conf {
	char		*conninfo;	/* secret: may hold a password */
	char		*passfile;
	char		*query;		/* NULL: PG_DEFAULT_QUERY */
	char		*expect_value;
	struct threshold	 num;	/* on the first column */
	struct latency_limit	 latency;
	enum pg_role	 role;
	struct pg_hosts	 hosts;		/* the names among them resolved */
	char		 why[PG_WHY_MAX];
};

enum pg_state {
	PG_RESOLVING,	/* evdns, a name of the host list at a time */
	PG_CONNECTING,	/* PQconnectPoll until it says OK */
	PG_SETUP,	/* SET statement_timeout (and pg_is_in_recovery()) */
	PG_QUERY,	/* the user's query */
};

/*
 * Across runs of one probe: its resolver, made on first need, and its
 * cancel requests. evdns calls back a cancelled lookup later, from the
 * loop, and touches the resolver then: so the keep lives until the last
 * such callback, even when the probe is gone (keep_free during a reload).
 */
struct pg_keep {
	struct event_base	*base;
	struct evdns_base	*dns;
	unsigned		 lookups;	/* in flight, cancelled ones too */
	bool			 freed;		/* the probe is gone */
	struct pg_canceller	*cancel;
};

struct pg_run {
	struct probe_run	*run;		/* NULL once cancelled (lookup) */
	const struct pg_conf	*conf;
	struct pg_keep		*keep;
	PGconn			*conn;
	struct event		*ev;
	enum pg_state		 state;
	/* resolving: the entry asked for, and each name's addresses */
	size_t			 host_i;
	struct evdns_getaddrinfo_request *req;
	bool			 starting;	/* inside evdns_getaddrinfo */
	bool			 answered;	/* ... which answered at once */
	int			 gai_err;
	struct evutil_addrinfo	*ais;
	int			 resolve_err;	/* of the first name that failed */
	const char		*resolve_host;
	char			 addrs[PG_HOSTS_MAX][PG_HOST_ADDRS_MAX][48];
	size_t			 n_addrs[PG_HOSTS_MAX];
	/* what the server sent: through the relay, counted */
	struct pg_relay		*relay;
	size_t			 spent;		/* by earlier attempts' relays */
	uint64_t		 rows;		/* of the user's query */
	struct timespec		 t0;		/* the run's start */
	struct timespec		 tq;		/* the user's query sent */
	int64_t			 stmt_timeout_ms;
	/* what the results said, gathered until PQgetResult gives NULL */
	bool			 failed;
	char			 sqlstate[6];
	char			 error[PROBE_REASON_MAX + 1];
	bool			 got_rows;	/* a result with tuples came */
	bool			 got_value;	/* ... and a first row */
	bool			 is_null;
	char			*value;
	char			*column;
};

/* pg_conf.c: the keys and their checks. */
extern const struct probe_key_doc	 pg_keys[];
extern const char *const		 pg_secret_keys[];
void	*pg_conf_new(void);
void	 pg_conf_free(void *);
int	 pg_conf_set(void *, const char *key, const char *value,
	    const char **why);
int	 pg_conf_check(void *, const char **why);

/* postgres.c: a run's end, and the probe's keep. */
double	 pg_elapsed_ms(const struct timespec *since);
/* Frees the run and what it holds; reports nothing. */
void	 pg_release(struct pg_run *);
/* Releases the run, then reports it: the order probe_report() asks for. */
void	 pg_finish(struct pg_run *, enum probe_result, double value,
	    const char *fmt, ...) LOG_PRINTF(4, 5);
/* The probe's keep, made on first need; NULL when out of memory. */
struct pg_keep	*pg_keep(struct probe_run *);
void	 pg_keep_destroy(struct pg_keep *);

/* pg_conn.c: connects (lists NULL: libpq's own host list), then queries. */
void	 pg_connect(struct pg_run *, const struct pg_host_lists *lists);

/* pg_judge.c: libpq's messages and the results, in lbagent's words. */
/* libpq's message, as one trimmed line without "FATAL:  " and the like. */
void	 pg_one_line(const char *msg, char *buf, size_t size);
/* The connection failed: reports why. */
void	 pg_connect_failed(struct pg_run *);
/* Takes in one result of the current step. */
void	 pg_result(struct pg_run *, PGresult *);
/* All of a step's results are in: true when it failed (then reported). */
bool	 pg_step_failed(struct pg_run *);
/* The role pg_is_in_recovery() gave is not the one asked (reported). */
bool	 pg_role_wrong(struct pg_run *);
/* Every result of the user's query is in: reports the verdict. */
void	 pg_query_done(struct pg_run *);

/* pg_resolve.c: the names of the host list, then pg_connect(). */
void	 pg_resolve(struct pg_run *);

#endif
