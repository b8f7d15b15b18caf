/* What a probe's run says, by name (logs, status, metrics). */
#include "lbagent/core/probe_result.h"

static const char *const result_names[PROBE_RESULT_COUNT] = {
	[PROBE_OK] = "ok",
	[PROBE_WARN] = "warn",
	[PROBE_CRIT] = "crit",
	[PROBE_UNKNOWN] = "unknown",
};

const char *
probe_result_name(enum probe_result r)
{
	return (unsigned)r < PROBE_RESULT_COUNT ? result_names[r] : "?";
}
