/* Marker files: an operator's manual modes, read from state_dir. */
#ifndef LBAGENT_MARKERS_H
#define LBAGENT_MARKERS_H

#include <stdbool.h>

#include "lbagent/text.h"

enum marker_kind {
	MARKER_MAINT,
	MARKER_DRAIN,
	MARKER_OFF,		/* automation off (the kill switch) */
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

/*
 * Reads every marker in dir into ms, which holds what was known before.
 * Never blocks on a FIFO or device and never follows a marker that is a
 * symbolic link: a marker that exists but cannot be read, or is a link,
 * counts as present (unreadable, with "<name> marker" as its reason). When lbagent itself is out of descriptors or
 * memory, a marker's entry is left as it was.
 */
void		 markers_read(const char *dir, struct markers *);
/*
 * The same for a service's directory (state_dir/NAME), which must be a
 * directory, not a link: markers in a linked one count as present, unread.
 */
void		 markers_read_service(const char *dir, struct markers *);

#endif
