/* probe_report(): the single path by which every probe kind reports. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/text.h"
#include "lbagent/probes/probe.h"

/*
 * The one place that tells lbagent's own shortages from the checked
 * thing's failures, for every kind.
 */
const char *
probe_errno_local(int err)
{
	switch (err) {
	case EMFILE:
		return "lbagent out of descriptors";
	case ENFILE:
		return "out of descriptors system-wide";
	case ENOMEM:
	case ENOBUFS:
		return "lbagent out of memory";
	case EAGAIN:
		return "lbagent out of processes or threads";
	default:
		return NULL;
	}
}

int
probe_set_string(char **dst, const char *value, bool empty_ok,
    const char **why)
{
	char	*s;

	if (!empty_ok && *value == '\0') {
		*why = "expected some text";
		return -1;
	}
	if ((s = strdup(value)) == NULL) {
		*why = "out of memory";
		return -1;
	}
	free(*dst);
	*dst = s;
	return 0;
}

int
probe_set_flagged(int rv, bool *given)
{
	if (rv == 0)
		*given = true;
	return rv;
}

void
probe_free_secret(char *s)
{
	if (s != NULL) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void
probe_report_errno(struct probe_run *run, int err, const char *fmt, ...)
{
	const char	*local = probe_errno_local(err);
	char		 what[512];
	va_list		 ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (local != NULL)
		probe_report(run, PROBE_UNKNOWN, NAN, "%s: %s (%s)", what,
		    strerror(err), local);
	else
		probe_report(run, PROBE_CRIT, NAN, "%s: %s", what,
		    strerror(err));
}

static void	report(struct probe_run *, enum probe_result, bool, double,
		    const char *, const char *, va_list) LOG_PRINTF(6, 0);

/* Both ways back: from_check only with probe_report_check(). */
static void
report(struct probe_run *run, enum probe_result result, bool from_check,
    double value, const char *unit, const char *fmt, va_list ap)
{
	struct probe_outcome	out;
	char			buf[1024];
	int			n;

	if (!run->in_flight) {
		log_warnx("probe %s: reported twice or after its timeout; "
		    "ignored", run->name);
		return;
	}
	run->in_flight = false;
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	memset(&out, 0, sizeof(out));
	out.result = (unsigned)result < PROBE_RESULT_COUNT ? result : PROBE_CRIT;
	out.from_check = from_check && out.result == PROBE_UNKNOWN;
	out.value = value;
	if (unit == NULL)
		unit = run->ops != NULL ? run->ops->unit : "";
	if (isfinite(value))
		snprintf(out.unit, sizeof(out.unit), "%s", unit);
	text_line(out.reason, PROBE_REASON_MAX, buf,
	    n < 0 ? 0 : n >= (int)sizeof(buf) ? sizeof(buf) - 1 : (size_t)n);
	if (run->reported != NULL)
		run->reported(run, &out);
}

void
probe_report(struct probe_run *run, enum probe_result result, double value,
    const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	report(run, result, false, value, NULL, fmt, ap);
	va_end(ap);
}

void
probe_report_unit(struct probe_run *run, enum probe_result result,
    double value, const char *unit, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	report(run, result, false, value, unit, fmt, ap);
	va_end(ap);
}

void
probe_report_check(struct probe_run *run, enum probe_result result,
    double value, const char *unit, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	report(run, result, true, value, unit, fmt, ap);
	va_end(ap);
}
