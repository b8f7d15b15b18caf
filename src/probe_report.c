/* probe_report(): the single path by which every probe kind reports. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lbagent/probe.h"

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

/* Printable ASCII of the first line, at most PROBE_REASON_MAX bytes. */
static void
sanitize(char *dst, const char *src)
{
	size_t	n = 0;

	for (; *src != '\0' && *src != '\n' && *src != '\r' &&
	    n < PROBE_REASON_MAX; src++) {
		unsigned char c = (unsigned char)*src;

		dst[n++] = c == '\t' ? ' ' : (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	while (n > 0 && dst[n - 1] == ' ')
		n--;
	dst[n] = '\0';
}

void
probe_report(struct probe_run *run, enum probe_result result, double value,
    const char *fmt, ...)
{
	struct probe_outcome	out;
	char			buf[1024];
	va_list			ap;

	if (!run->in_flight) {
		log_warnx("probe %s: reported twice or after its timeout; "
		    "ignored", run->name);
		return;
	}
	run->in_flight = false;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	memset(&out, 0, sizeof(out));
	out.result = (unsigned)result < PROBE_RESULT_COUNT ? result : PROBE_CRIT;
	out.value = value;
	sanitize(out.reason, buf);
	if (run->reported != NULL)
		run->reported(run, &out);
}
