/*
 * The state file, state_dir/state.json: what lbagent claimed and what it
 * owes each load balancer, per service, so a restart mid-release still
 * delivers every restore word. Written atomically; a bad file is moved
 * aside, never fatal.
 */
#ifndef LBAGENT_STATE_H
#define LBAGENT_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lbagent/decision.h"
#include "lbagent/lbkeys.h"

#define STATE_FILE	"state.json"
#define STATE_VERSION	1

/* One service's persisted part; the default service is named "". */
struct state_service {
	const char	*name;
	bool		 has_decision;
	struct decision	 decision;	/* the last one replied */
	struct lbkeys	*keys;
};

enum state_load_result {
	STATE_LOADED,
	STATE_NONE,	/* no file: a first start */
	STATE_CORRUPT,	/* moved aside to state.json.corrupt; starting fresh */
};

/*
 * Loads dir/state.json into the services named in svcs (their keys must
 * be empty); services the file has and svcs lacks are dropped with a
 * notice. On STATE_CORRUPT everything is left empty and the reason logged.
 */
enum state_load_result state_load(const char *dir, uint64_t *incarnation,
		    struct state_service *svcs, size_t n, int64_t now_ms,
		    int64_t wall_ms);

/* Writes dir/state.json atomically (temp file, fsync, rename). 0 or -1. */
int		 state_save(const char *dir, uint64_t incarnation,
		    const struct state_service *svcs, size_t n, int64_t now_ms,
		    int64_t wall_ms);

#endif
