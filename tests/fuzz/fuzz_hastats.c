/*
 * Fuzz target: HAProxy's CSV and servers state (src/core/hastats.c), and how
 * the peer guard reads this node's row from it (peer_view_lb in
 * src/core/peer_view.c). The input is a load balancer's answer, "show stat" CSV
 * with its servers state after it as the Runtime API sends both; the
 * rows looked for are the seeds' (be/s1, be/n1) and missing ones. No NUL
 * is needed: the parsers are handed an exact-size copy.
 */
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/hastats.h"
#include "lbagent/core/hastats_reader.h"
#include "lbagent/daemon/peers.h"
#include "fuzzutil.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_init();
	return 0;
}

/* NUL-terminated within its field, control and non-ASCII bytes made '?'. */
static void
printable(const char *s, size_t size)
{
	size_t	i;

	FZ_ASSERT(memchr(s, '\0', size) != NULL);
	for (i = 0; s[i] != '\0'; i++)
		FZ_ASSERT(s[i] >= 0x20 && s[i] < 0x7f);
}

static void
row_ok(const struct hastats_row *r)
{
	printable(r->status, sizeof(r->status));
	printable(r->agent_status, sizeof(r->agent_status));
	printable(r->agent_desc, sizeof(r->agent_desc));
	(void)hastats_serving(r);
	(void)hastats_admin(r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char	*names[][2] = {
		{ "be", "s1" }, { "be", "n1" }, { "be", "srv" }, { "", "" },
	};
	static const char	*const backends[] = { "be" };
	struct hastats_reader	*rd;
	char			*copy = malloc(size > 0 ? size : 1);
	struct hastats_row	 row;
	struct lb_source	 lb;
	struct lb_view		 v;
	struct decision		 told;
	const char		*why, *state;
	size_t			 csvlen, state_len, i;
	long			 iw;
	int			 r;

	FZ_ASSERT(copy != NULL);
	memcpy(copy, data, size);
	csvlen = hastats_split(copy, size, &state, &state_len);
	FZ_ASSERT(csvlen <= size);
	if (state != NULL)
		FZ_ASSERT(state >= copy && state + state_len <= copy + size);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		why = NULL;
		memset(&row, 0x55, sizeof(row));
		r = hastats_find(copy, size, names[i][0], names[i][1], &row,
		    &why);
		FZ_ASSERT(r >= -1 && r <= 1);
		if (r == -1)
			FZ_ASSERT(why != NULL);
		if (r == 1)
			row_ok(&row);
		r = hastats_find(copy, csvlen, names[i][0], names[i][1], &row,
		    &why);
		if (r == 1)
			row_ok(&row);
		if (state != NULL) {
			why = NULL;
			r = hastats_initial_weight(state, state_len,
			    names[i][0], names[i][1], &iw, &why);
			FZ_ASSERT(r >= -1 && r <= 1);
			if (r == -1)
				FZ_ASSERT(why != NULL);
		}
	}
	/* The peer guard's view of this node on such a load balancer. */
	memset(&lb, 0, sizeof(lb));
	lb.answered = true;
	FZ_ASSERT((rd = hastats_reader_new(backends, 1, NULL)) != NULL);
	FZ_ASSERT(hastats_reader_feed(rd, copy, size, &why) == 0);
	FZ_ASSERT((lb.table = hastats_reader_finish(rd, &why)) != NULL);
	hastats_reader_free(rd);
	memset(&told, 0, sizeof(told));
	decision_up(&told);
	peer_view_lb(&lb, "be", "n1", &told, &v);
	FZ_ASSERT(v.nwarnings <= LB_WARNINGS_MAX);
	FZ_ASSERT(memchr(v.error, '\0', sizeof(v.error)) != NULL);
	told.state = NODE_DRAIN;
	peer_view_lb(&lb, "be", "n1", &told, &v);
	hastats_table_free(lb.table);
	free(copy);
	return 0;
}
