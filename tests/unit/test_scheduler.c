/*
 * The scheduler over a real event loop, with a kind written for the test:
 * its runs report what the test scripted, or never (to meet the timeout).
 */
#include <string.h>

#include "lbagent/scheduler.h"
#include "testutil.h"

static enum probe_result	 script[16];
static int			 nscript, next_run, cancels, starts;
static bool			 hang;

static void
script_start(struct probe_run *run)
{
	enum probe_result	r;

	starts++;
	if (hang)
		return;			/* never reports: the timeout must */
	r = next_run < nscript ? script[next_run] : PROBE_OK;
	next_run++;
	probe_report(run, r, 42.0, "run %d: %s\nsecond line", next_run,
	    probe_result_name(r));
}

static void
script_cancel(struct probe_run *run)
{
	(void)run;
	cancels++;
}

static const struct probe_key_doc no_keys[] = { { NULL, NULL, NULL, false } };

static const struct probe_ops script_ops = {
	.name = "script",
	.unit = "",
	.keys = no_keys,
	.start = script_start,
	.cancel = script_cancel,
};

struct seen {
	int			 runs, changes;
	struct event_base	*base;
	int			 stop_after;
};

static void
ran(struct probe *p, bool changed, void *arg)
{
	struct seen	*s = arg;

	(void)p;
	s->runs++;
	if (changed)
		s->changes++;
	if (s->runs >= s->stop_after)
		event_base_loopbreak(s->base);
}

static struct probe_conf
conf(uint64_t interval_ms, uint64_t timeout_ms, uint64_t fall, uint64_t rise)
{
	struct probe_conf	pc;

	memset(&pc, 0, sizeof(pc));
	pc.name = "t";
	pc.ops = &script_ops;
	pc.interval_ms = interval_ms;
	pc.timeout_ms = timeout_ms;
	pc.fall = fall;
	pc.rise = rise;
	return pc;
}

/* Runs the loop until `runs` runs completed, or fails after 10 s. */
static void
run_until(struct event_base *base, struct seen *s, int runs)
{
	struct timeval	limit = { 10, 0 };

	s->base = base;
	s->stop_after = runs;
	event_base_loopexit(base, &limit);
	event_base_dispatch(base);
	ck_assert_msg(s->runs >= runs, "only %d of %d runs in 10 s", s->runs,
	    runs);
}

START_TEST(fall_and_rise_over_runs)
{
	struct event_base	*base = event_base_new();
	struct probe_env	 env = { base, NULL, "/proc" };
	struct probe_conf	 pc = conf(20, 10, 2, 3);
	struct seen		 s;
	struct probe		*p;
	const struct probe_state *st;

	memset(&s, 0, sizeof(s));
	nscript = 0;
	script[nscript++] = PROBE_CRIT;		/* 1 bad: not yet (fall 2) */
	script[nscript++] = PROBE_CRIT;		/* 2 bad: crit */
	script[nscript++] = PROBE_WARN;		/* failing: warn at once */
	script[nscript++] = PROBE_OK;		/* 1 ok: still warn (rise 3) */
	script[nscript++] = PROBE_OK;
	script[nscript++] = PROBE_OK;		/* 3 ok: ok again */
	next_run = 0;
	hang = false;
	p = probe_new(&pc, &env, ran, &s);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(probe_schedule(p), 0);
	st = probe_state(p);

	run_until(base, &s, 1);
	ck_assert_int_eq(st->counted, PROBE_OK);
	ck_assert_int_eq(st->last.result, PROBE_CRIT);
	ck_assert_str_eq(st->last.reason, "run 1: crit");
	ck_assert(st->last.value == 42.0);
	run_until(base, &s, 2);
	ck_assert_int_eq(st->counted, PROBE_CRIT);
	ck_assert_str_eq(st->counted_reason, "run 2: crit");
	run_until(base, &s, 3);
	ck_assert_int_eq(st->counted, PROBE_WARN);
	ck_assert_str_eq(st->counted_reason, "run 3: warn");
	run_until(base, &s, 5);
	ck_assert_int_eq(st->counted, PROBE_WARN);
	run_until(base, &s, 6);
	ck_assert_int_eq(st->counted, PROBE_OK);
	ck_assert_str_eq(st->counted_reason, "");
	ck_assert_int_eq(s.changes, 3);
	ck_assert_uint_eq(st->runs[PROBE_CRIT], 2);
	ck_assert_uint_eq(st->runs[PROBE_WARN], 1);
	ck_assert_uint_ge(st->runs[PROBE_OK], 3);
	probe_free(p);
	event_base_free(base);
}
END_TEST

START_TEST(timeout_is_crit_and_cancels)
{
	struct event_base	*base = event_base_new();
	struct probe_env	 env = { base, NULL, "/proc" };
	struct probe_conf	 pc = conf(500, 50, 1, 1);
	struct seen		 s;
	struct probe		*p;

	memset(&s, 0, sizeof(s));
	hang = true;
	cancels = 0;
	p = probe_new(&pc, &env, ran, &s);
	probe_schedule(p);
	run_until(base, &s, 1);
	ck_assert_int_eq(cancels, 1);
	ck_assert_int_eq(probe_state(p)->counted, PROBE_CRIT);
	ck_assert_str_eq(probe_state(p)->counted_reason, "timed out after 50ms");
	ck_assert(isnan(probe_state(p)->last.value));
	probe_free(p);
	event_base_free(base);
}
END_TEST

START_TEST(free_cancels_a_run_in_flight)
{
	struct event_base	*base = event_base_new();
	struct probe_env	 env = { base, NULL, "/proc" };
	struct probe_conf	 pc = conf(500, 400, 1, 1);
	struct seen		 s;
	struct probe		*p;
	struct timeval		 brief = { 0, 50000 };

	memset(&s, 0, sizeof(s));
	hang = true;
	cancels = starts = 0;
	p = probe_new(&pc, &env, ran, &s);
	probe_schedule(p);
	event_base_loopexit(base, &brief);
	event_base_dispatch(base);
	ck_assert_int_eq(starts, 1);
	probe_free(p);
	ck_assert_int_eq(cancels, 1);
	ck_assert_int_eq(s.runs, 0);
	event_base_free(base);
}
END_TEST

/* probe_state_apply alone: fall 1 / rise 1 is immediate both ways. */
START_TEST(apply_defaults_immediate)
{
	struct probe_state	st;
	struct probe_outcome	bad = { PROBE_CRIT, "down", NAN };
	struct probe_outcome	good = { PROBE_OK, "fine", NAN };

	memset(&st, 0, sizeof(st));
	ck_assert(probe_state_apply(&st, 1, 1, &bad));
	ck_assert_int_eq(st.counted, PROBE_CRIT);
	ck_assert(!probe_state_apply(&st, 1, 1, &bad));
	ck_assert(probe_state_apply(&st, 1, 1, &good));
	ck_assert_int_eq(st.counted, PROBE_OK);
	ck_assert(!probe_state_apply(&st, 1, 1, &good));
	/* A failed run between good ones restarts the rise count. */
	memset(&st, 0, sizeof(st));
	probe_state_apply(&st, 1, 2, &bad);
	probe_state_apply(&st, 1, 2, &good);
	ck_assert(probe_state_apply(&st, 1, 2, &bad) == false);
	ck_assert(!probe_state_apply(&st, 1, 2, &good));
	ck_assert(probe_state_apply(&st, 1, 2, &good));
}
END_TEST

/* A probe's "ok" counts as evidence only after rise good runs or fall bad. */
START_TEST(settled_needs_evidence)
{
	struct probe_state	st;
	struct probe_outcome	bad = { PROBE_CRIT, "down", NAN };
	struct probe_outcome	good = { PROBE_OK, "fine", NAN };

	memset(&st, 0, sizeof(st));
	ck_assert(!st.settled);
	/* fall 3: two bad runs are not yet failing, nor a passing verdict. */
	probe_state_apply(&st, 3, 2, &bad);
	probe_state_apply(&st, 3, 2, &bad);
	ck_assert_int_eq(st.counted, PROBE_OK);
	ck_assert(!st.settled);
	probe_state_apply(&st, 3, 2, &bad);
	ck_assert_int_eq(st.counted, PROBE_CRIT);
	ck_assert(st.settled);
	/* Settled stays settled: its verdict rests on runs from now on. */
	probe_state_apply(&st, 3, 2, &good);
	ck_assert(st.settled);
	memset(&st, 0, sizeof(st));
	probe_state_apply(&st, 3, 2, &good);
	ck_assert(!st.settled);
	probe_state_apply(&st, 3, 2, &good);
	ck_assert(st.settled);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("scheduler");
	TCase	*tc = tcase_create("scheduler");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, fall_and_rise_over_runs);
	tcase_add_test(tc, timeout_is_crit_and_cancels);
	tcase_add_test(tc, free_cancels_a_run_in_flight);
	tcase_add_test(tc, apply_defaults_immediate);
	tcase_add_test(tc, settled_needs_evidence);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
