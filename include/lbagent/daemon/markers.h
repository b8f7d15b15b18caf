/* Marker files: an operator's manual modes, read from state_dir. */
#ifndef LBAGENT_MARKERS_H
#define LBAGENT_MARKERS_H

#include "lbagent/core/marker.h"

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
/*
 * Renames the marker kind of dir, which has ended (m: as it was read), to
 * NAME.expired, replacing an earlier one; a marker that changed since it
 * was read stays. Returns 0, or -1 with err set.
 */
int		 markers_retire(const char *dir, enum marker_kind,
		    const struct marker *m, char *err, size_t errsize);

#endif
