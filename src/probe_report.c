/* probe_report(): the single path by which every probe kind reports. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lbagent/probe.h"
#include "lbagent/text.h"

static const char *const result_names[PROBE_RESULT_COUNT] = {
	[PROBE_OK] = "ok",
	[PROBE_WARN] = "warn",
	[PROBE_CRIT] = "crit",
};

const char *
probe_result_name(enum probe_result r)
{
	return (unsigned)r < PROBE_RESULT_COUNT ? result_names[r] : "?";
}

void
probe_report(struct probe_run *run, enum probe_result result, double value,
    const char *fmt, ...)
{
	struct probe_outcome	out;
	char			buf[1024];
	va_list			ap;
	int			n;

	if (!run->in_flight) {
		log_warnx("probe %s: reported twice or after its timeout; "
		    "ignored", run->name);
		return;
	}
	run->in_flight = false;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	memset(&out, 0, sizeof(out));
	out.result = (unsigned)result < PROBE_RESULT_COUNT ? result : PROBE_CRIT;
	out.value = value;
	text_line(out.reason, PROBE_REASON_MAX, buf,
	    n < 0 ? 0 : n >= (int)sizeof(buf) ? sizeof(buf) - 1 : (size_t)n);
	if (run->reported != NULL)
		run->reported(run, &out);
}
