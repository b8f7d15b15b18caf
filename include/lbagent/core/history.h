/* The last transitions of a service: time, from, to, reason. Pure. */
#ifndef LBAGENT_HISTORY_H
#define LBAGENT_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lbagent/core/text.h"

#define HISTORY_MAX	100

struct history_entry {
	int64_t	wall_ms;
	char	from[24], to[24];
	char	reason[REASON_MAX + 1];
};

/* A ring of the last HISTORY_MAX; all zeroes is an empty one. */
struct history {
	struct history_entry	e[HISTORY_MAX];
	size_t			first, count;
};

void	history_add(struct history *, int64_t wall_ms, const char *from,
	    const char *to, const char *reason);
size_t	history_count(const struct history *);
/* The i-th entry, oldest first. */
const struct history_entry *history_get(const struct history *, size_t i);
json_t	*history_to_json(const struct history *);
int	 history_from_json(struct history *, const json_t *, const char **why);

#endif
