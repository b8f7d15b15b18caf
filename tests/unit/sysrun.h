/*
 * Driving one probe the way the scheduler does, for the tests of the
 * local-system kinds: conf from key/value pairs, runs on a real
 * event_base bounded by a timer, cancel at the bound.
 */
#ifndef LBAGENT_TEST_SYSRUN_H
#define LBAGENT_TEST_SYSRUN_H

#include <stdbool.h>
#include <stdint.h>

#include "lbagent/probe.h"
#include "testutil.h"

struct sysrun {
	struct event_base	*base;
	struct probe_env	 env;
	struct probe_run	 run;
	const struct probe_ops	*ops;
	void			*conf;
	struct probe_outcome	 out;
	int			 reports;
};

/* A fresh conf; proc_root may be NULL for "/proc". */
void	sysrun_init(struct sysrun *, const struct probe_ops *,
	    const char *proc_root);
/* key = value must be accepted. */
void	sysrun_set(struct sysrun *, const char *key, const char *value);
/* The section must pass conf_check. */
void	sysrun_check(struct sysrun *);
/*
 * One run: start, then the loop until it reports or wait_ms passes; at
 * the bound it is cancelled like the owner does. True when it reported.
 */
bool	sysrun_once(struct sysrun *, int64_t wait_ms);
/* Releases keep, conf and the base. */
void	sysrun_free(struct sysrun *);

/* Runs once (bounded at 10s) and asserts the result and the reason. */
void	sysrun_expect(struct sysrun *, enum probe_result, const char *reason);

/* key = value must be refused with why. */
void	sysconf_set_fails(const struct probe_ops *, const char *key,
	    const char *value, const char *why);
/* Pairs key, value, ..., NULL are accepted; conf_check refuses with why. */
void	sysconf_check_fails(const struct probe_ops *, const char *why, ...);
/* Every key in ops->keys is accepted by name (documented, then parsed). */
bool	sysconf_documents(const struct probe_ops *, const char *key);

/*
 * Deterministic junk for parsers: up to max bytes drawn mostly from
 * pieces of the real formats (digits, blanks, newlines, "cpu", ")"...).
 * Returns the length; *seed advances.
 */
size_t	sys_junk(char *buf, size_t max, unsigned *seed);

/* mkdir -p of root/rel; returns root/rel. */
char	*sys_mkdirs(const char *root, const char *rel);

#endif
