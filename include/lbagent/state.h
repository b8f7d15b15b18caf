/*
 * The state file, state_dir/state.json: what lbagent claimed and what it
 * owes each load balancer, so a restart mid-release still delivers every
 * restore word. Written atomically; a bad file is moved aside, never fatal.
 */
#ifndef LBAGENT_STATE_H
#define LBAGENT_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "lbagent/decision.h"
#include "lbagent/lbkeys.h"

#define STATE_FILE	"state.json"
#define STATE_VERSION	1

struct state {
	uint64_t	incarnation;	/* rises at every start */
	bool		has_decision;
	struct decision	decision;	/* the last one replied */
};

enum state_load_result {
	STATE_LOADED,
	STATE_NONE,	/* no file: a first start */
	STATE_CORRUPT,	/* moved aside to state.json.corrupt; starting fresh */
};

/*
 * Loads dir/state.json into st and lbk (lbk must be empty). On
 * STATE_CORRUPT, st and lbk are left empty and the reason is logged.
 */
enum state_load_result state_load(const char *dir, struct state *st,
		    struct lbkeys *lbk, int64_t now_ms, int64_t wall_ms);

/* Writes dir/state.json atomically (temp file, fsync, rename). 0 or -1. */
int		 state_save(const char *dir, const struct state *st,
		    const struct lbkeys *lbk, int64_t now_ms, int64_t wall_ms);

#endif
