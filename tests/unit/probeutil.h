/*
 * Driving probe kinds in the unit tests the way the scheduler does: a
 * conf from settings, real runs on a real event loop, bounded by a timer so
 * that a hung run fails the test instead of hanging it, a cancel at the
 * owner's timeout. One runner (struct pu) for every kind.
 */
#ifndef LBAGENT_PROBEUTIL_H
#define LBAGENT_PROBEUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lbagent/sys/curl_loop.h"
#include "lbagent/probes/probe.h"
#include "testutil.h"

struct pu {
	struct event_base	*base;
	struct probe_env	 env;
	const struct probe_ops	*ops;
	void			*conf;
	struct probe_run	 run;
	struct probe_outcome	 out;		/* the last report */
	int			 nreports;	/* since the last start */
	int			 reports;	/* since init */
	unsigned		*pending;	/* shared count, 0: loop ends */
	bool			 own_base;
	bool			 own_conf;
};

/* A fresh loop and a fresh conf of the kind; proc_root NULL for /proc. */
void	pu_init(struct pu *, const struct probe_ops *, const char *proc_root);
/* The same on another pu's loop, as probes share lbagent's. */
void	pu_init_on(struct pu *, const struct probe_ops *, struct event_base *);
/* A runner on env's loop (and curl loop) for conf, which stays the caller's. */
void	pu_init_env(struct pu *, const struct probe_ops *,
	    const struct probe_env *, const void *conf, int64_t timeout_ms);
/* Frees the kind's keep, and the conf and the loop if its own. */
void	pu_done(struct pu *);

/* An env on base with a curl loop, for runners made with pu_init_env. */
void	pu_env_init(struct probe_env *, struct event_base *);
void	pu_env_free(struct probe_env *);

/* conf_set of a documented key that must succeed / must fail (the why). */
void		 pu_set(struct pu *, const char *key, const char *value);
const char	*pu_set_bad(struct pu *, const char *key, const char *value);
void		 pu_check(struct pu *);
const char	*pu_check_bad(struct pu *);

/* A conf from key/value pairs (NULL-terminated); each must be accepted. */
void		*pu_conf(const struct probe_ops *, const char *const *kv);
/* The why of the first key/value pair refused, or of conf_check. */
const char	*pu_conf_error(const struct probe_ops *, const char *const *kv);
/* key = value must be refused with why. */
void	pu_conf_set_fails(const struct probe_ops *, const char *key,
	    const char *value, const char *why);
/* Pairs key, value, ..., NULL are accepted; conf_check refuses with why. */
void	pu_conf_check_fails(const struct probe_ops *, const char *why, ...);
/* Whether key is in ops->keys, with its help. */
bool	pu_documents(const struct probe_ops *, const char *key);

/* Starts a run (not in flight); it may report at once. */
void	pu_start(struct pu *);
/* Runs the loop until the run reports; fails after limit_ms. */
const struct probe_outcome *pu_wait(struct pu *, int64_t limit_ms);
/* pu_start, then pu_wait. */
const struct probe_outcome *pu_run(struct pu *, int64_t limit_ms);
/*
 * One run: start, then the loop until it reports or wait_ms passes; at
 * the bound it is cancelled like the owner does. True when it reported.
 */
bool	pu_once(struct pu *, int64_t wait_ms);
/* Runs once (bounded at 10s) and asserts the result and the reason. */
void	pu_expect(struct pu *, enum probe_result, const char *reason);
/* Runs the loop for about ms (whatever happens in between). */
void	pu_loop_ms(struct pu *, int64_t ms);
/*
 * Runs base's loop until *pending (the runners' shared count) is 0 or ms
 * passed (pending NULL: for ms); false when timed out.
 */
bool	pu_loop_pending(struct event_base *, unsigned *pending, int ms);
/* Runs the loop until no event is left on it; fails after limit_ms. */
void	pu_drain(struct pu *, int64_t limit_ms);
/* Cancels the run in flight, as the scheduler does at the timeout. */
void	pu_cancel(struct pu *);

/* Descriptors open in this process. */
int	pu_count_fds(void);
/* Children of this process, and how many of them are zombies. */
int	pu_count_children(int *zombies);
/* Whether pid is alive: exists and is neither a zombie nor dead. */
int	pu_alive(pid_t);
/* Waits (polling, at most limit_ms) until pid is no longer alive. */
int	pu_wait_dead(pid_t, int64_t limit_ms);

/*
 * Deterministic junk for parsers: up to max bytes drawn mostly from
 * pieces of the real formats (digits, blanks, newlines, "cpu", ")"...).
 * Returns the length; *seed advances.
 */
size_t	pu_junk(char *buf, size_t max, unsigned *seed);
/* mkdir -p of root/rel; returns root/rel. */
char	*pu_mkdirs(const char *root, const char *rel);

#endif
