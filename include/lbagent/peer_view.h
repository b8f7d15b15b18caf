/*
 * What the peer guard is told about the other nodes. Pure: the rounds
 * that ask them live in peers.c.
 */
#ifndef LBAGENT_PEER_VIEW_H
#define LBAGENT_PEER_VIEW_H

#include <stdbool.h>
#include <stdint.h>

/*
 * What the peer guard knows for a service (peers.h fills it): NULL when
 * no peers are configured.
 */
struct peer_view {
	int64_t	round_ms;	/* start of the last round answered; INT64_MIN: none */
	bool	other_serving;	/* in that round, another node served */
	int64_t	served_ms;	/* start of the last round where one did (or
				   the guard's start, when none has yet) */
	char	who[96];	/* those serving: "n2, n3" */
	char	why[256];	/* why the others are not: "n2: timeout; ..." */
};

#endif
