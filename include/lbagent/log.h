/* One logging API: stderr on a terminal, journald's stream, or syslog. */
#ifndef LBAGENT_LOG_H
#define LBAGENT_LOG_H

#include <stdarg.h>

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
_Noreturn void	fatalx(const char *, ...) LOG_PRINTF(1, 2);

#endif
