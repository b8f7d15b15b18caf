/* One logging API: stderr on a terminal, journald's stream, or syslog. */
#ifndef LBAGENT_LOG_H
#define LBAGENT_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#define LOG_PRINTF(a, b)	__attribute__((format(printf, a, b)))

void	log_init(const char *ident);
void	log_close(void);
void	log_set_debug(int on);

/* log_warn adds strerror(errno); log_warnx does not. */
void	log_err(const char *, ...) LOG_PRINTF(1, 2);
void	log_errx(const char *, ...) LOG_PRINTF(1, 2);
void	log_warn(const char *, ...) LOG_PRINTF(1, 2);
void	log_warnx(const char *, ...) LOG_PRINTF(1, 2);
void	log_notice(const char *, ...) LOG_PRINTF(1, 2);
void	log_info(const char *, ...) LOG_PRINTF(1, 2);
void	log_debug(const char *, ...) LOG_PRINTF(1, 2);

/*
 * A rate limit for one kind of message that can repeat without end (a
 * failing accept(), evictions): at most one line per interval_ms; the
 * next line that goes out ends in "(repeated N times)", N the lines
 * dropped since the last one. One struct log_limit per kind of message,
 * made with LOG_LIMIT_INIT (0 ms means LOG_LIMIT_MS).
 */
struct log_limit {
	int64_t		interval_ms;
	int64_t		next_ms;	/* quiet until then (monotonic) */
	unsigned long	dropped;
};

#define LOG_LIMIT_MS		10000
#define LOG_LIMIT_INIT(ms)	{ (ms), 0, 0 }

/* prio as in syslog.h (LOG_WARNING, ...); true when the line went out. */
bool	log_limited(struct log_limit *, int prio, const char *, ...)
	    LOG_PRINTF(3, 4);

#endif
