/*
 * Fuzz target: the state file (src/daemon/state.c, and the parts in
 * src/core/lbkeys.c, src/core/transition_json.c and src/core/history.c that read their
 * own objects). The input is written as state.json in a temp dir and
 * loaded for two services, the default ("") and "web", each with keys,
 * a transition engine and a history, at fixed clocks. What loads must
 * save, and the saved file must load back and save again to the same
 * bytes; a file refused must leave everything empty. Then the loaded
 * engines run on, as after a restart: the last byte of the input picks
 * the targets (up, down, 50%) of a few evaluations a second apart; every
 * decision must be one a reply can say.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lbagent/core/history.h"
#include "lbagent/daemon/state.h"
#include "fuzzutil.h"

static const struct transition_conf tconf = {
	.down_after_ms = 30000, .degrade_after_ms = 10000,
	.up_after_ms = 60000, .restore_after_ms = 30000, .ramp_ms = 60000,
	.ramp_start = 25, .flap_limit = 3, .flap_window_ms = 600000,
};

struct two {
	struct state_service	ss[2];
	struct transition	*tr[2];
	struct history		h[2];
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_init();
	return 0;
}

static void
two_init(struct two *t, const struct state_clock *c)
{
	size_t	i;

	memset(t, 0, sizeof(*t));
	t->ss[0].name = "";
	t->ss[1].name = "web";
	for (i = 0; i < 2; i++) {
		FZ_ASSERT((t->ss[i].keys = lbkeys_new(600000)) != NULL);
		FZ_ASSERT((t->tr[i] = transition_new(&tconf, c->now_ms)) !=
		    NULL);
		t->ss[i].tr = t->tr[i];
		t->ss[i].history = &t->h[i];
	}
}

static void
two_free(struct two *t)
{
	lbkeys_free(t->ss[0].keys);
	lbkeys_free(t->ss[1].keys);
	transition_free(t->tr[0]);
	transition_free(t->tr[1]);
}

/* The saved file, malloc'd, and its length. */
static char *
slurp(size_t *len)
{
	char	*buf = NULL;
	size_t	 cap = 0;
	ssize_t	 n;
	int	 fd;

	FZ_ASSERT((fd = open(fz_write(STATE_FILE, NULL, 0), O_RDONLY)) != -1);
	*len = 0;
	for (;;) {
		if (*len == cap) {
			cap = cap ? cap * 2 : 4096;
			FZ_ASSERT((buf = realloc(buf, cap)) != NULL);
		}
		FZ_ASSERT((n = read(fd, buf + *len, cap - *len)) >= 0);
		if (n == 0)
			break;
		*len += (size_t)n;
	}
	close(fd);
	return buf;
}

static void
decision_ok(const struct decision *d)
{
	FZ_ASSERT((unsigned)d->state < NODE_STATE_COUNT);
	FZ_ASSERT(d->weight <= DECISION_WEIGHT_MAX);
	FZ_ASSERT(memchr(d->reason, '\0', sizeof(d->reason)) != NULL);
}

/* The loaded engines evaluated on, by the targets in bits. */
static void
run_on(struct two *t, const struct state_clock *c, unsigned bits)
{
	struct transition_pending	 p;
	struct decision			 target, out;
	char				 buf[256];
	int64_t				 now;
	size_t				 i;
	int				 k;

	for (i = 0; i < 2; i++) {
		if (t->ss[i].has_decision)
			decision_ok(&t->ss[i].decision);
		transition_current(t->tr[i], &out);
		decision_ok(&out);
		for (k = 0, now = c->now_ms; k < 4; k++, now += 1000) {
			decision_up(&target);
			switch ((bits >> (2 * k)) & 3) {
			case 1:
				target.state = NODE_DOWN;
				snprintf(target.reason, sizeof(target.reason),
				    "api: HTTP 503");
				break;
			case 2:
				target.weight = 50;
				break;
			}
			(void)transition_evaluate(t->tr[i], &target, true,
			    NULL, now, &out, NULL);
			decision_ok(&out);
			if (transition_pending(t->tr[i], now, &p))
				transition_pending_text(t->tr[i], &p, buf,
				    sizeof(buf));
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct state_clock	 c = { 100000, 1700000000000, 500000, "b" };
	struct state_resume	 res;
	struct two		 a, b;
	enum state_load_result	 r;
	uint64_t		 inc, inc2;
	char			*first, *second;
	size_t			 flen, slen, i;

	fz_write(STATE_FILE, data, size);
	two_init(&a, &c);
	r = state_load(fz_dir(), &inc, a.ss, 2, &c, &res);
	FZ_ASSERT(r == STATE_LOADED || r == STATE_CORRUPT);
	FZ_ASSERT(res.gap_ms >= 0);
	if (r == STATE_CORRUPT) {
		FZ_ASSERT(inc == 0);
		for (i = 0; i < 2; i++) {
			FZ_ASSERT(!a.ss[i].has_decision);
			FZ_ASSERT(lbkeys_count(a.ss[i].keys) == 0);
			FZ_ASSERT(lbkeys_claims(a.ss[i].keys) == 0);
		}
		two_free(&a);
		fz_clean();
		return 0;
	}
	FZ_ASSERT(state_save(fz_dir(), inc, a.ss, 2, &c) == 0);
	first = slurp(&flen);
	two_init(&b, &c);
	FZ_ASSERT(state_load(fz_dir(), &inc2, b.ss, 2, &c, &res) ==
	    STATE_LOADED);
	FZ_ASSERT(inc2 == inc);
	FZ_ASSERT(state_save(fz_dir(), inc2, b.ss, 2, &c) == 0);
	second = slurp(&slen);
	if (flen != slen || memcmp(first, second, flen) != 0) {
		fz_note(first, flen);
		fz_note(second, slen);
		FZ_ASSERT(!"a saved state saves back the same");
	}
	free(first);
	free(second);
	run_on(&b, &c, size > 0 ? data[size - 1] : 0);
	two_free(&a);
	two_free(&b);
	fz_clean();
	return 0;
}
