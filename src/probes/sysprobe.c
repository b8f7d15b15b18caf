/* Helpers shared by the local-system probe kinds. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lbagent/core/units.h"
#include "lbagent/sys/clock.h"
#include "lbagent/sys/worker.h"
#include "sysprobe.h"

ssize_t
sysprobe_read(const char *path, char *buf, size_t size, bool *full,
    char why[SYS_WHY_MAX])
{
	size_t	 len = 0;
	ssize_t	 n;
	char	 extra, *nl;
	int	 fd;

	if (full != NULL)
		*full = false;
	/* O_NONBLOCK: a FIFO in place of a file must not hang the loop. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) == -1)
		goto fail;
	while (len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			goto fail_close;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len == size - 1) {
		while ((n = read(fd, &extra, 1)) == -1 && errno == EINTR)
			;
		if (n == 1) {
			/* Keep whole lines only. */
			buf[len] = '\0';
			nl = strrchr(buf, '\n');
			len = nl == NULL ? 0 : (size_t)(nl - buf) + 1;
			if (full != NULL)
				*full = true;
		}
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;

fail_close:
	n = errno;
	close(fd);
	errno = (int)n;
fail:
	n = errno;
	snprintf(why, SYS_WHY_MAX, "%s: %s", path, strerror(errno));
	errno = (int)n;		/* callers tell ENOENT apart */
	return -1;
}

ssize_t
sysprobe_read_proc(const char *root, const char *rel, char *buf, size_t size,
    bool *full, char why[SYS_WHY_MAX])
{
	char	path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", root, rel) >=
	    (int)sizeof(path)) {
		snprintf(why, SYS_WHY_MAX, "%s/%s: path too long", root, rel);
		errno = ENAMETOOLONG;
		return -1;
	}
	return sysprobe_read(path, buf, size, full, why);
}

void
sysprobe_report_failed(struct probe_run *run, int err, const char *why)
{
	const char	*local = probe_errno_local(err);

	if (local != NULL)
		probe_report(run, PROBE_UNKNOWN, NAN, "%s (%s)", why, local);
	else
		probe_report(run, PROBE_CRIT, NAN, "%s", why);
}

int
sysprobe_limit_pct(const char *s, struct sys_limit *l, const char **why)
{
	double	v;

	if (units_percent(s, &v, why) == -1)
		return -1;
	l->kind = LIMIT_ABOVE;
	l->pct = true;
	l->value = v;
	return 0;
}

int
sysprobe_limit_num(const char *s, struct sys_limit *l, const char **why)
{
	double	v;

	if (units_double(s, &v, why) == -1 || v < 0) {
		*why = "expected a number of 0 or more, such as 1.5";
		return -1;
	}
	l->kind = LIMIT_ABOVE;
	l->pct = false;
	l->value = v;
	return 0;
}

int
sysprobe_limit_pct_or_free(const char *s, struct sys_limit *l, const char **why)
{
	uint64_t	bytes;
	size_t		len = strlen(s);

	if (len > 0 && s[len - 1] == '%')
		return sysprobe_limit_pct(s, l, why);
	if (units_size(s, &bytes, why) == -1) {
		*why = "expected a used percentage such as 85% or a minimum "
		    "free size such as 5G";
		return -1;
	}
	l->kind = LIMIT_FREE;
	l->pct = false;
	l->bytes = bytes;
	return 0;
}

int
sysprobe_limits_check(const struct sys_limit *warn,
    const struct sys_limit *crit, const char **why)
{
	if (warn->kind != crit->kind)
		return 0;	/* none, one, or a percentage and a size */
	if (warn->kind == LIMIT_ABOVE && !(crit->value > warn->value)) {
		*why = "crit must be above warn (a higher value is worse)";
		return -1;
	}
	if (warn->kind == LIMIT_FREE && !(crit->bytes < warn->bytes)) {
		*why = "crit must be below warn (less free space is worse)";
		return -1;
	}
	return 0;
}

static bool
limit_crossed(const struct sys_limit *l, double value, uint64_t free_bytes)
{
	switch (l->kind) {
	case LIMIT_ABOVE:
		return value > l->value;
	case LIMIT_FREE:
		return free_bytes < l->bytes;
	default:
		return false;
	}
}

enum probe_result
sysprobe_limits_eval(const struct sys_limit *warn, const struct sys_limit *crit,
    double value, uint64_t free_bytes, const struct sys_limit **hit)
{
	*hit = NULL;
	if (limit_crossed(crit, value, free_bytes)) {
		*hit = crit;
		return PROBE_CRIT;
	}
	if (limit_crossed(warn, value, free_bytes)) {
		*hit = warn;
		return PROBE_WARN;
	}
	return PROBE_OK;
}

/* A size as exactly as it was configured: "5G", "1536M", "100B". */
static void
format_size_exact(uint64_t bytes, char *buf, size_t size)
{
	static const char	units[] = "TGMK";
	int			i;

	for (i = 0; i < 4; i++) {
		uint64_t mult = 1ULL << (10 * (4 - i));

		if (bytes != 0 && bytes % mult == 0) {
			snprintf(buf, size, "%llu%c",
			    (unsigned long long)(bytes / mult), units[i]);
			return;
		}
	}
	snprintf(buf, size, "%lluB", (unsigned long long)bytes);
}

void
sysprobe_limit_format(const struct sys_limit *l, enum probe_result r, char *buf,
    size_t size)
{
	const char	*which = r == PROBE_CRIT ? "crit" : "warn";
	char		 exact[32];

	if (l->kind == LIMIT_FREE) {
		format_size_exact(l->bytes, exact, sizeof(exact));
		snprintf(buf, size, "(%s below %s)", which, exact);
	} else
		snprintf(buf, size, "(%s %g%s)", which, l->value,
		    l->pct ? "%" : "");
}

/* "%.1f" without a trailing ".0". */
static void
format_one_decimal(double v, const char *suffix, char *buf, size_t size)
{
	char	num[64];
	size_t	len;

	snprintf(num, sizeof(num), "%.1f", v);
	len = strlen(num);
	if (len > 2 && strcmp(num + len - 2, ".0") == 0)
		num[len - 2] = '\0';
	snprintf(buf, size, "%s%s", num, suffix);
}

void
sysprobe_format_pct(double pct, char *buf, size_t size)
{
	format_one_decimal(pct, "%", buf, size);
}

void
sysprobe_format_size(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "K", "M", "G", "T", "P", "E" };
	double	v = (double)bytes;
	int	i = -1;

	if (bytes < 1024) {
		snprintf(buf, size, "%lluB", (unsigned long long)bytes);
		return;
	}
	while (v >= 1024 && i < 5) {
		v /= 1024;
		i++;
	}
	format_one_decimal(v, units[i], buf, size);
}

/* A probe's blocking call: in flight, or abandoned and maybe blocked. */
struct sys_offload {
	struct worker_job	*job;
	int64_t			 started_ms;
};

int
sysprobe_offload_start(struct probe_run *run, const char *what,
    void (*fn)(void *), void (*done)(void *), void *arg)
{
	struct sys_offload	*o = run->keep;
	char			 age[32];
	int			 error;

	if (o == NULL && (o = run->keep = calloc(1, sizeof(*o))) == NULL) {
		free(arg);
		probe_report(run, PROBE_UNKNOWN, NAN, "%s",
		    probe_errno_local(ENOMEM));
		return -1;
	}
	if (o->job != NULL) {
		if (worker_running(o->job)) {
			/* One thread per probe: never pile up behind a hang. */
			free(arg);
			units_format_age((uint64_t)(clock_now_ms() -
			    o->started_ms), age, sizeof(age));
			probe_report(run, PROBE_CRIT, NAN,
			    "%s still blocked since %s", what, age);
			return -1;
		}
		worker_free(o->job);
		o->job = NULL;
	}
	o->started_ms = clock_now_ms();
	if ((o->job = worker_start(run->env->base, fn, done, free, arg)) ==
	    NULL) {
		error = errno;
		free(arg);
		probe_report_errno(run, error, "cannot start a thread");
		return -1;
	}
	return 0;
}

void
sysprobe_offload_finish(struct probe_run *run)
{
	struct sys_offload	*o = run->keep;

	worker_free(o->job);
	o->job = NULL;
}

void
sysprobe_offload_cancel(struct probe_run *run)
{
	struct sys_offload	*o = run->keep;

	/* Keep the handle: the next run must see whether it still hangs. */
	if (o != NULL && o->job != NULL)
		worker_abandon(o->job);
}

void
sysprobe_offload_keep_free(void *keep)
{
	struct sys_offload	*o = keep;

	if (o == NULL)
		return;
	worker_free(o->job);
	free(o);
}

int
sysprobe_conf_path(char **dst, const char *value, const char **why)
{
	char	*copy;

	if (value[0] != '/') {
		*why = "expected an absolute path";
		return -1;
	}
	if (strlen(value) >= PATH_MAX) {
		*why = "path too long";
		return -1;
	}
	if ((copy = strdup(value)) == NULL) {
		*why = "out of memory";
		return -1;
	}
	free(*dst);
	*dst = copy;
	return 0;
}
