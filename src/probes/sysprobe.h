/*
 * What the local-system kinds (disk, inodes, load, cpu, memory, swap,
 * file, process) share: bounded reads of small files, warn/crit limits and
 * how they are shown, and blocking calls moved to a worker thread.
 */
#ifndef LBAGENT_PROBES_SYSPROBE_H
#define LBAGENT_PROBES_SYSPROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lbagent/probes/probe.h"

/* Room for a reason fragment naming a file. */
#define SYS_WHY_MAX	PROBE_REASON_MAX

/*
 * Reads at most size - 1 bytes of path into buf and NUL-terminates it.
 * Returns the length; when the file had more, the partial last line is
 * dropped and *full (if not NULL) set. On failure returns -1 with
 * "PATH: strerror" in why and errno kept. Never blocks on a FIFO.
 */
ssize_t	sysprobe_read(const char *path, char *buf, size_t size,
	    bool *full, char why[SYS_WHY_MAX]);
/* The same for <root>/<rel>. */
ssize_t	sysprobe_read_proc(const char *root, const char *rel, char *buf,
	    size_t size, bool *full, char why[SYS_WHY_MAX]);

/*
 * Reports a failed read or call, why saying "PATH: strerror": unknown when
 * err (its errno) is lbagent's own shortage, as when out of descriptors,
 * so that it does not count against the service; crit otherwise.
 */
void	sysprobe_report_failed(struct probe_run *, int err,
	    const char *why);

/*
 * One warn or crit limit. ABOVE: the measure (a percentage or a number)
 * is bad above value. FREE: free space is bad below bytes.
 */
struct sys_limit {
	enum { LIMIT_NONE, LIMIT_ABOVE, LIMIT_FREE } kind;
	bool		pct;		/* ABOVE: shown with a % sign */
	double		value;
	uint64_t	bytes;
};

/* "85%". */
int	sysprobe_limit_pct(const char *s, struct sys_limit *,
	    const char **why);
/* "1.5", not negative. */
int	sysprobe_limit_num(const char *s, struct sys_limit *,
	    const char **why);
/* "85%" (used) or "5G" (minimum free). */
int	sysprobe_limit_pct_or_free(const char *s, struct sys_limit *,
	    const char **why);
/* When both are given and comparable, crit must be worse than warn. */
int	sysprobe_limits_check(const struct sys_limit *warn,
	    const struct sys_limit *crit, const char **why);
/*
 * The result of a measure against warn and crit (crit first); *hit is
 * the limit crossed, NULL when ok. Equal to a limit is not past it.
 */
enum probe_result sysprobe_limits_eval(const struct sys_limit *warn,
	    const struct sys_limit *crit, double value, uint64_t free_bytes,
	    const struct sys_limit **hit);
/* "(crit 90%)", "(warn below 5G)", "(warn 1.5)". */
void	sysprobe_limit_format(const struct sys_limit *, enum probe_result,
	    char *buf, size_t size);

/* "91%", "90.4%": a percentage with at most one decimal. */
void	sysprobe_format_pct(double pct, char *buf, size_t size);
/* "4.1G", "512M", "100B": bytes, one decimal at most. */
void	sysprobe_format_size(uint64_t bytes, char *buf, size_t size);

/*
 * Blocking calls (statvfs, stat) on a worker thread, at most one per probe:
 * run->keep holds the call in flight, or the abandoned one still blocked.
 * arg is a single malloc'd block (freed with free()) that fn fills in and
 * done() reads; done() finds its run through arg.
 *
 * sysprobe_offload_start: reports crit "<what> still blocked since <age>" when
 * the previous call has not returned, or crit when no thread could start;
 * both return -1 having freed arg. Otherwise 0, and done(arg) follows on
 * the loop unless the run is cancelled.
 */
int	sysprobe_offload_start(struct probe_run *, const char *what,
	    void (*fn)(void *), void (*done)(void *), void *arg);
/* In done(), after reading arg: frees the job and arg. */
void	sysprobe_offload_finish(struct probe_run *);
/* ops->cancel: abandons the call; its thread may stay blocked. */
void	sysprobe_offload_cancel(struct probe_run *);
/* ops->keep_free. */
void	sysprobe_offload_keep_free(void *keep);

/* Path key values: absolute, below PATH_MAX. Replaces *dst. */
int	sysprobe_conf_path(char **dst, const char *value, const char **why);

#endif
