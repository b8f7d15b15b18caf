/*
 * Probes: one file per kind (src/probes/<kind>.c) behind struct probe_ops,
 * found by name in one table. A kind starts a run and reports its outcome
 * exactly once through probe_report(); the scheduler owns intervals,
 * timeouts, fall/rise and what happens next.
 */
#ifndef LBAGENT_PROBE_H
#define LBAGENT_PROBE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

#include "lbagent/core/probe_result.h"
#include "lbagent/sys/log.h"

/* A probe's own reason; the reply joins "name: reason" within 100 bytes. */
#define PROBE_REASON_MAX	200

/*
 * err, from acquiring something of lbagent's own (socket(), pipe(), open()
 * of /proc or a small file, fork(), a thread, memory): when it says lbagent
 * ran out rather than that the checked thing failed, what ran out, as
 * "lbagent out of descriptors"; NULL otherwise. Only for such calls:
 * EAGAIN from read() or ENOMEM from a peer mean something else.
 */
const char	*probe_errno_local(int err);

/*
 * For the kinds' conf_set. probe_set_string copies value into *dst, the
 * old value freed; empty text is refused unless empty_ok. probe_set_flagged
 * marks an optional key given once its parser (rv) accepted it.
 * probe_free_secret zeroes a string that may hold a secret, then frees it.
 */
int	probe_set_string(char **dst, const char *value, bool empty_ok,
	    const char **why);
int	probe_set_flagged(int rv, bool *given);
void	probe_free_secret(char *s);

struct curl_loop;

/* What every kind may use; owned by the daemon, shared by all probes. */
struct probe_env {
	struct event_base	*base;
	struct curl_loop	*curl;		/* libcurl multi on the loop */
	const char		*proc_root;	/* "/proc", or a test's fixed tree */
};

/* A key a kind accepts, for validation, --keys and the documentation. */
struct probe_key_doc {
	const char	*name;
	const char	*def;		/* shown as the default; NULL: required or none */
	const char	*help;
	bool		 repeatable;	/* may be given more than once (header) */
};

/* The longest unit a value carries ("ms", "KB"). */
#define PROBE_UNIT_MAX		2

/* The outcome of one run. */
struct probe_outcome {
	enum probe_result	result;
	char			reason[PROBE_REASON_MAX + 1];	/* sanitized */
	double			value;		/* NAN when the kind measured none */
	/*
	 * An unknown the checked thing itself reported (a plugin's exit 3):
	 * it counts as on_unknown says. Otherwise an unknown is lbagent's
	 * own trouble, which never counts.
	 */
	bool			from_check;
	char			unit[PROBE_UNIT_MAX + 1];	/* its unit */
};

/*
 * One run of one probe, owned by the scheduler (or a unit test). A kind
 * reads the fields above the line and may use `data` (this run) and `keep`
 * (across runs of this probe; freed with ops->keep_free). The owner sets
 * in_flight before calling ops->start; probe_report() clears it.
 */
struct probe_run {
	const struct probe_ops	*ops;
	const char		*name;		/* the probe's name, for logs */
	const void		*conf;		/* the kind's settings (conf_new) */
	const struct probe_env	*env;
	int64_t			 timeout_ms;
	void			*data;
	void			*keep;
	/* ---- the owner's */
	void			(*reported)(struct probe_run *,
				    const struct probe_outcome *);
	void			*owner;
	bool			 in_flight;
};

struct probe_ops {
	const char			*name;		/* the `type` value */
	const char			*unit;		/* of the value: "ms", "%", "" */
	const struct probe_key_doc	*keys;		/* ends with { NULL } */
	/* Keys whose values are never shown, not even in errors; or NULL. */
	const char *const		*secret_keys;	/* ends with NULL */
	/*
	 * A run's duration is the checked service's latency: the probe takes
	 * the window keys (window, warn_p99, samples_per_run, ...), and the
	 * scheduler keeps its runs in a window (see core/window.h).
	 */
	bool				 windowed;

	/* Settings: a fresh conf with the defaults; free it. */
	void	*(*conf_new)(void);
	void	 (*conf_free)(void *conf);
	/* One key's value: 0, or -1 with *why ("expected ..."). */
	int	 (*conf_set)(void *conf, const char *key, const char *value,
		    const char **why);
	/* After the whole section: required keys, cross-checks. 0 or -1. */
	int	 (*conf_check)(void *conf, const char **why);
	/*
	 * May be NULL. After conf_check: what the settings will cost at run
	 * time that is no error (a token file it cannot read), for the
	 * configuration's warnings, with the key it is about; NULL if none.
	 */
	const char *(*conf_warning)(const void *conf, const char **key);

	/*
	 * Starts a run. The kind reports through probe_report() exactly once,
	 * now or later from the event loop, having released its per-run
	 * resources first. It never blocks the loop for longer than a local
	 * read of /proc or a small file.
	 */
	void	 (*start)(struct probe_run *);
	/*
	 * The run's timeout passed, or lbagent is stopping: release the run
	 * (kill its child, drop its transfer) and never report it. May be
	 * NULL for kinds that always report from start().
	 */
	void	 (*cancel)(struct probe_run *);
	void	 (*keep_free)(void *keep);
};

/*
 * The one way back: records the outcome of run and hands it to the owner.
 * value is NAN when nothing was measured. The reason is formatted,
 * cut to its first line and sanitized; kinds never put secrets in it.
 */
void	probe_report(struct probe_run *run, enum probe_result result,
	    double value, const char *fmt, ...) LOG_PRINTF(4, 5);
/* As probe_report, with the value's unit when not the kind's ("": none). */
void	probe_report_unit(struct probe_run *run, enum probe_result result,
	    double value, const char *unit, const char *fmt, ...)
	    LOG_PRINTF(5, 6);
/*
 * What the checked program itself said, as the exec kind reads it: the
 * result may be PROBE_UNKNOWN from the check (from_check), and the value
 * comes with its unit (NULL: the kind's).
 */
void	probe_report_check(struct probe_run *run, enum probe_result result,
	    double value, const char *unit, const char *fmt, ...)
	    LOG_PRINTF(5, 6);
/*
 * A failed call of the kind probe_errno_local() judges: "<fmt>: <strerror>
 * (lbagent out of descriptors)" as unknown when err is lbagent's own
 * shortage, else "<fmt>: <strerror>" as crit.
 */
void	probe_report_errno(struct probe_run *run, int err, const char *fmt,
	    ...) LOG_PRINTF(3, 4);

/* The kinds, by name; NULL when unknown. */
const struct probe_ops	*probe_kind(const char *name);
/* Lists the kinds' names, comma-separated, for error messages. */
const char		*probe_kind_names(void);
/* The kind whose name name is likely a typo of ("did you mean"), or NULL. */
const char		*probe_kind_nearest(const char *name);
/* The same, of the kinds that keep a window. */
const char		*probe_windowed_kind_names(void);

#endif
