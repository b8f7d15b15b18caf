/* The markers an operator sets (maint, drain, off, shadow) as the decision reads them. */
#ifndef LBAGENT_MARKER_H
#define LBAGENT_MARKER_H

#include <stdbool.h>

#include "lbagent/core/text.h"

enum marker_kind {
	MARKER_MAINT,
	MARKER_DRAIN,
	MARKER_OFF,		/* automation off (the kill switch) */
	MARKER_SHADOW,		/* shadow mode: automation runs, tells nothing */
	MARKER_COUNT
};

struct marker {
	bool	present;
	bool	unreadable;		/* present, but its reason could not be read */
	char	reason[REASON_MAX + 1];	/* first line, or "<name> marker" */
	char	error[128];		/* why it was unreadable */
};

struct markers {
	struct marker	m[MARKER_COUNT];
};

const char	*marker_name(enum marker_kind);

#endif
