/*
 * Logging. On a terminal, plain lines on stderr. Under systemd, stderr is
 * journald's stream (JOURNAL_STREAM), so lines carry "<N>" priorities and
 * nothing goes to syslog twice. Anywhere else, syslog and stderr both, so
 * a supervisor that captures stderr still sees everything.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "lbagent/sys/clock.h"
#include "lbagent/sys/log.h"

static enum { LOG_TO_TTY, LOG_TO_JOURNAL, LOG_TO_SYSLOG } log_mode = LOG_TO_TTY;
static int log_debug_on;

/* True when stderr is the journald stream systemd gave us. */
static int
stderr_is_journal(void)
{
	const char		*env = getenv("JOURNAL_STREAM");
	unsigned long long	 dev, ino;
	struct stat		 st;

	if (env == NULL || sscanf(env, "%llu:%llu", &dev, &ino) != 2)
		return 0;
	if (fstat(STDERR_FILENO, &st) == -1)
		return 0;
	return st.st_dev == dev && st.st_ino == ino;
}

static const char *
prio_name(int prio)
{
	switch (prio) {
	case LOG_ERR:		return "error";
	case LOG_WARNING:	return "warning";
	case LOG_NOTICE:	return "notice";
	case LOG_INFO:		return "info";
	default:		return "debug";
	}
}

/*
 * libevent's messages by kind (the text before the first ':', e.g.
 * "Error from accept() call"), each with its own limit: a message that
 * repeats in a loop must not flood the log. The least recently used
 * kind makes room for a new one.
 */
#define LIBEVENT_KINDS		8
#define LIBEVENT_KIND_MAX	64

static struct libevent_kind {
	char			text[LIBEVENT_KIND_MAX];
	struct log_limit	limit;
	int64_t			used_ms;
} libevent_kinds[LIBEVENT_KINDS];

static struct log_limit *
libevent_limit(const char *msg)
{
	struct libevent_kind	*k, *lru = &libevent_kinds[0];
	size_t			 len = strcspn(msg, ":"), i;
	int64_t			 now = clock_now_ms();

	if (len >= LIBEVENT_KIND_MAX)
		len = LIBEVENT_KIND_MAX - 1;
	for (i = 0; i < LIBEVENT_KINDS; i++) {
		k = &libevent_kinds[i];
		if (k->used_ms != 0 && strncmp(k->text, msg, len) == 0 &&
		    k->text[len] == '\0') {
			k->used_ms = now;
			return &k->limit;
		}
		if (k->used_ms < lru->used_ms)
			lru = k;
	}
	memset(lru, 0, sizeof(*lru));
	memcpy(lru->text, msg, len);
	lru->used_ms = now;
	return &lru->limit;
}

/* libevent's own messages go through the same path, rate-limited. */
static void
log_libevent(int severity, const char *msg)
{
	struct log_limit	*lim = libevent_limit(msg);

	switch (severity) {
	case EVENT_LOG_ERR:
		log_limited(lim, LOG_ERR, "libevent: %s", msg);
		break;
	case EVENT_LOG_WARN:
		log_limited(lim, LOG_WARNING, "libevent: %s", msg);
		break;
	case EVENT_LOG_MSG:
		log_limited(lim, LOG_INFO, "libevent: %s", msg);
		break;
	default:
		log_debug("libevent: %s", msg);
		break;
	}
}

void
log_init(const char *ident)
{
	if (isatty(STDERR_FILENO))
		log_mode = LOG_TO_TTY;
	else if (stderr_is_journal())
		log_mode = LOG_TO_JOURNAL;
	else {
		log_mode = LOG_TO_SYSLOG;
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	}
	event_set_log_callback(log_libevent);
}

void
log_close(void)
{
	if (log_mode == LOG_TO_SYSLOG)
		closelog();
}

void
log_set_debug(int on)
{
	log_debug_on = on;
}

static void	log_vemit(int, const char *, const char *, va_list)
		    __attribute__((format(printf, 3, 0)));

static void
log_vemit(int prio, const char *errstr, const char *fmt, va_list ap)
{
	char		 msg[1024];
	char		 when[32];
	struct timespec	 ts;
	struct tm	 tm;
	int		 n;

	if (prio == LOG_DEBUG && !log_debug_on)
		return;
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n >= 0 && errstr != NULL && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n, ": %s", errstr);

	switch (log_mode) {
	case LOG_TO_JOURNAL:
		fprintf(stderr, "<%d>%s\n", prio, msg);
		break;
	case LOG_TO_SYSLOG:
		syslog(prio, "%s", msg);
		/* FALLTHROUGH */
	case LOG_TO_TTY:
		clock_gettime(CLOCK_REALTIME, &ts);
		gmtime_r(&ts.tv_sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		fprintf(stderr, "%s.%03ldZ %s: %s\n", when,
		    ts.tv_nsec / 1000000, prio_name(prio), msg);
		break;
	}
}

static void	log_emit(int, const char *, ...) LOG_PRINTF(2, 3);

static void
log_emit(int prio, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	log_vemit(prio, NULL, fmt, ap);
	va_end(ap);
}

#define LOG_FN(fn, prio, with_errno)				\
void								\
fn(const char *fmt, ...)					\
{								\
	va_list	ap;						\
	int	saved = errno;					\
								\
	va_start(ap, fmt);					\
	log_vemit(prio, with_errno ? strerror(saved) : NULL, fmt, ap); \
	va_end(ap);						\
	errno = saved;						\
}

LOG_FN(log_err, LOG_ERR, 1)
LOG_FN(log_errx, LOG_ERR, 0)
LOG_FN(log_warn, LOG_WARNING, 1)
LOG_FN(log_warnx, LOG_WARNING, 0)
LOG_FN(log_notice, LOG_NOTICE, 0)
LOG_FN(log_info, LOG_INFO, 0)
LOG_FN(log_debug, LOG_DEBUG, 0)

bool
log_limited(struct log_limit *lim, int prio, const char *fmt, ...)
{
	va_list	ap;
	int64_t	now = clock_now_ms();
	int	saved = errno;
	char	msg[1024];

	if (lim->next_ms != 0 && now < lim->next_ms) {
		lim->dropped++;
		return false;
	}
	lim->next_ms = now + (lim->interval_ms > 0 ? lim->interval_ms :
	    LOG_LIMIT_MS);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (lim->dropped > 0)
		log_emit(prio, "%s (repeated %lu times)", msg, lim->dropped);
	else
		log_emit(prio, "%s", msg);
	lim->dropped = 0;
	errno = saved;
	return true;
}
