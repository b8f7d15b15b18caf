/* The markers' names: the files' names in state_dir, and the words logs use. */
#include "lbagent/core/marker.h"

static const char *const marker_names[MARKER_COUNT] = {
	[MARKER_MAINT] = "maint",
	[MARKER_DRAIN] = "drain",
	[MARKER_OFF] = "off",
	[MARKER_SHADOW] = "shadow",
};

const char *
marker_name(enum marker_kind kind)
{
	return marker_names[kind];
}
