/*
 * The scheduler over a real event loop, with a kind written for the test:
 * its runs report what the test scripted, or never (to meet the timeout).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lbagent/daemon/scheduler.h"
#include "testutil.h"

static enum probe_result	 script[16];
static int			 nscript, next_run, cancels, starts;
static bool			 hang;
static bool			 check_said;	/* unknowns: the check's own */

static void
script_start(struct probe_run *run)
{
	enum probe_result	r;

	starts++;
	if (hang)
		return;			/* never reports: the timeout must */
	r = next_run < nscript ? script[next_run] : PROBE_OK;
	next_run++;
	if (check_said)
		probe_report_check(run, r, 42.0, NULL, "run %d: %s\nsecond "
		    "line", next_run, probe_result_name(r));
	else
		probe_report(run, r, 42.0, "run %d: %s\nsecond line",
		    next_run, probe_result_name(r));
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
	p = scheduler_probe_new(&pc, &env, ran, &s);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(scheduler_probe_start(p), 0);
	st = scheduler_probe_state(p);

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
	scheduler_probe_free(p);
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
	p = scheduler_probe_new(&pc, &env, ran, &s);
	scheduler_probe_start(p);
	run_until(base, &s, 1);
	ck_assert_int_eq(cancels, 1);
	ck_assert_int_eq(scheduler_probe_state(p)->counted, PROBE_CRIT);
	ck_assert_str_eq(scheduler_probe_state(p)->counted_reason,
	    "timed out after 50ms");
	ck_assert(isnan(scheduler_probe_state(p)->last.value));
	scheduler_probe_free(p);
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
	p = scheduler_probe_new(&pc, &env, ran, &s);
	scheduler_probe_start(p);
	event_base_loopexit(base, &brief);
	event_base_dispatch(base);
	ck_assert_int_eq(starts, 1);
	scheduler_probe_free(p);
	ck_assert_int_eq(cancels, 1);
	ck_assert_int_eq(s.runs, 0);
	event_base_free(base);
}
END_TEST

/* scheduler_state_apply alone: fall 1 / rise 1 is immediate both ways. */
START_TEST(apply_defaults_immediate)
{
	struct probe_state	st;
	struct probe_outcome	bad = { PROBE_CRIT, "down", NAN, false, "" };
	struct probe_outcome	good = { PROBE_OK, "fine", NAN, false, "" };

	memset(&st, 0, sizeof(st));
	ck_assert(scheduler_state_apply(&st, 1, 1, false, &bad));
	ck_assert_int_eq(st.counted, PROBE_CRIT);
	ck_assert(!scheduler_state_apply(&st, 1, 1, false, &bad));
	ck_assert(scheduler_state_apply(&st, 1, 1, false, &good));
	ck_assert_int_eq(st.counted, PROBE_OK);
	ck_assert(!scheduler_state_apply(&st, 1, 1, false, &good));
	/* A failed run between good ones restarts the rise count. */
	memset(&st, 0, sizeof(st));
	scheduler_state_apply(&st, 1, 2, false, &bad);
	scheduler_state_apply(&st, 1, 2, false, &good);
	ck_assert(scheduler_state_apply(&st, 1, 2, false, &bad) == false);
	ck_assert(!scheduler_state_apply(&st, 1, 2, false, &good));
	ck_assert(scheduler_state_apply(&st, 1, 2, false, &good));
}
END_TEST

/* A probe's "ok" counts as evidence only after rise good runs or fall bad. */
START_TEST(settled_needs_evidence)
{
	struct probe_state	st;
	struct probe_outcome	bad = { PROBE_CRIT, "down", NAN, false, "" };
	struct probe_outcome	good = { PROBE_OK, "fine", NAN, false, "" };

	memset(&st, 0, sizeof(st));
	ck_assert(!st.settled);
	/* fall 3: two bad runs are not yet failing, nor a passing verdict. */
	scheduler_state_apply(&st, 3, 2, false, &bad);
	scheduler_state_apply(&st, 3, 2, false, &bad);
	ck_assert_int_eq(st.counted, PROBE_OK);
	ck_assert(!st.settled);
	scheduler_state_apply(&st, 3, 2, false, &bad);
	ck_assert_int_eq(st.counted, PROBE_CRIT);
	ck_assert(st.settled);
	/* Settled stays settled: its verdict rests on runs from now on. */
	scheduler_state_apply(&st, 3, 2, false, &good);
	ck_assert(st.settled);
	memset(&st, 0, sizeof(st));
	scheduler_state_apply(&st, 3, 2, false, &good);
	ck_assert(!st.settled);
	scheduler_state_apply(&st, 3, 2, false, &good);
	ck_assert(st.settled);
}
END_TEST

/*
 * Unknown runs (lbagent could not run the check) between bad runs do not
 * count towards fall, nor break the streak; between good runs they
 * neither reset nor advance rise; they never change what the probe
 * counts as, its reason, or whether it is settled.
 */
START_TEST(unknown_changes_nothing)
{
	struct probe_state	st;
	struct probe_outcome	bad = { PROBE_CRIT, "down", NAN, false, "" };
	struct probe_outcome	warn = { PROBE_WARN, "slow", NAN, false, "" };
	struct probe_outcome	good = { PROBE_OK, "fine", NAN, false, "" };
	struct probe_outcome	unk = { PROBE_UNKNOWN, "pipe: Too many open "
				    "files (lbagent out of descriptors)", NAN,
				    false, "" };
	int			i;

	/* Before any evidence: unknown runs settle nothing. */
	memset(&st, 0, sizeof(st));
	for (i = 0; i < 10; i++)
		ck_assert(!scheduler_state_apply(&st, 1, 1, false, &unk));
	ck_assert(st.has_run);
	ck_assert(!st.settled);
	ck_assert_int_eq(st.counted, PROBE_OK);
	ck_assert_int_eq(st.last.result, PROBE_UNKNOWN);
	ck_assert_str_eq(st.last.reason, unk.reason);
	ck_assert_uint_eq(st.runs[PROBE_UNKNOWN], 10);
	ck_assert_uint_eq(st.runs[PROBE_CRIT] + st.runs[PROBE_OK], 0);

	/* fall 3: bad, unknown, bad, unknown is two bad runs, not failing. */
	memset(&st, 0, sizeof(st));
	scheduler_state_apply(&st, 3, 2, false, &good);
	scheduler_state_apply(&st, 3, 2, false, &good);
	ck_assert(st.settled);
	ck_assert(!scheduler_state_apply(&st, 3, 2, false, &bad));
	ck_assert(!scheduler_state_apply(&st, 3, 2, false, &unk));
	ck_assert(!scheduler_state_apply(&st, 3, 2, false, &bad));
	for (i = 0; i < 20; i++)
		ck_assert(!scheduler_state_apply(&st, 3, 2, false, &unk));
	ck_assert_int_eq(st.counted, PROBE_OK);
	ck_assert_uint_eq(st.bad_streak, 2);
	/* ...and the streak was not broken: the third bad run fails it. */
	ck_assert(scheduler_state_apply(&st, 3, 2, false, &bad));
	ck_assert_int_eq(st.counted, PROBE_CRIT);
	ck_assert_str_eq(st.counted_reason, "down");

	/* Failing: unknown is not a change between warn and crit. */
	ck_assert(!scheduler_state_apply(&st, 3, 2, false, &unk));
	ck_assert_int_eq(st.counted, PROBE_CRIT);
	ck_assert_str_eq(st.counted_reason, "down");
	ck_assert(scheduler_state_apply(&st, 3, 2, false, &warn));
	ck_assert_int_eq(st.counted, PROBE_WARN);

	/* rise 2: unknown runs alone never bring it back... */
	for (i = 0; i < 20; i++)
		ck_assert(!scheduler_state_apply(&st, 3, 2, false, &unk));
	ck_assert_int_eq(st.counted, PROBE_WARN);
	ck_assert_str_eq(st.counted_reason, "slow");
	/* ...nor reset a good streak: good, unknown, good is back. */
	ck_assert(!scheduler_state_apply(&st, 3, 2, false, &good));
	ck_assert(!scheduler_state_apply(&st, 3, 2, false, &unk));
	ck_assert_uint_eq(st.ok_streak, 1);
	ck_assert(scheduler_state_apply(&st, 3, 2, false, &good));
	ck_assert_int_eq(st.counted, PROBE_OK);
	ck_assert_uint_eq(st.runs[PROBE_UNKNOWN], 43);
}
END_TEST

/*
 * The check's own unknown (from_check): with on_unknown = ignore it is
 * like lbagent's (nothing counts); when on_unknown counts it is a bad run
 * like warn and crit, towards fall, and what the probe counts as. Then
 * lbagent's own unknown still never counts.
 */
START_TEST(check_unknown_counts_when_on_unknown_does)
{
	struct probe_state	st;
	struct probe_outcome	bad = { PROBE_CRIT, "down", NAN, false, "" };
	struct probe_outcome	good = { PROBE_OK, "fine", NAN, false, "" };
	struct probe_outcome	said = { PROBE_UNKNOWN, "UNKNOWN - bad option",
				    NAN, true, "" };
	struct probe_outcome	own = { PROBE_UNKNOWN, "fork: Resource "
				    "temporarily unavailable", NAN, false, "" };
	int			i;

	/* ignore: nothing counts, a failing probe stays failing. */
	memset(&st, 0, sizeof(st));
	ck_assert(scheduler_state_apply(&st, 1, 1, false, &bad));
	for (i = 0; i < 5; i++)
		ck_assert(!scheduler_state_apply(&st, 1, 1, false, &said));
	ck_assert_int_eq(st.counted, PROBE_CRIT);
	ck_assert_str_eq(st.counted_reason, "down");
	ck_assert_int_eq(st.last.result, PROBE_UNKNOWN);
	ck_assert(st.last.from_check);
	ck_assert_uint_eq(st.runs[PROBE_UNKNOWN], 5);

	/* Counting, fall 2: two unknown runs in a row make it unknown. */
	memset(&st, 0, sizeof(st));
	scheduler_state_apply(&st, 2, 1, true, &good);
	ck_assert(!scheduler_state_apply(&st, 2, 1, true, &said));
	ck_assert_int_eq(st.counted, PROBE_OK);
	/* lbagent's own neither counts nor breaks the streak. */
	ck_assert(!scheduler_state_apply(&st, 2, 1, true, &own));
	ck_assert_uint_eq(st.bad_streak, 1);
	ck_assert(scheduler_state_apply(&st, 2, 1, true, &said));
	ck_assert_int_eq(st.counted, PROBE_UNKNOWN);
	ck_assert_str_eq(st.counted_reason, "UNKNOWN - bad option");
	ck_assert(st.settled);
	/* Failing: crit after unknown is a change at once, and back. */
	ck_assert(scheduler_state_apply(&st, 2, 1, true, &bad));
	ck_assert_int_eq(st.counted, PROBE_CRIT);
	ck_assert(scheduler_state_apply(&st, 2, 1, true, &said));
	ck_assert_int_eq(st.counted, PROBE_UNKNOWN);
	ck_assert(!scheduler_state_apply(&st, 2, 1, true, &own));
	ck_assert_int_eq(st.counted, PROBE_UNKNOWN);
	ck_assert(scheduler_state_apply(&st, 2, 1, true, &good));
	ck_assert_int_eq(st.counted, PROBE_OK);
	/* Every unknown run is shown, counted or not: three and two. */
	ck_assert_uint_eq(st.runs[PROBE_UNKNOWN], 5);
}
END_TEST

/* The lines of path that contain needle. */
static int
count_lines(const char *path, const char *needle)
{
	FILE	*fp = fopen(path, "r");
	char	 line[2048];
	int	 n = 0;

	ck_assert_ptr_nonnull(fp);
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strstr(line, needle) != NULL)
			n++;
	fclose(fp);
	return n;
}

/*
 * Over the loop: unknown runs are told to the owner as no change, shown as
 * the last run, and logged once (the next line waits a minute).
 */
START_TEST(unknown_runs_over_the_loop)
{
	struct event_base	*base = event_base_new();
	struct probe_env	 env = { base, NULL, "/proc" };
	struct probe_conf	 pc = conf(10, 5, 1, 1);
	struct seen		 s;
	struct probe		*p;
	const struct probe_state *st;
	char			*dir = tu_tmpdir(), *log;
	int			 fd, saved, i;

	log = tu_write(dir, "log", "", 0);
	memset(&s, 0, sizeof(s));
	nscript = 0;
	script[nscript++] = PROBE_OK;
	for (i = 0; i < 12; i++)
		script[nscript++] = PROBE_UNKNOWN;
	next_run = 0;
	hang = false;
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	fd = open(log, O_WRONLY | O_APPEND);
	ck_assert(fd != -1 && saved != -1);
	dup2(fd, STDERR_FILENO);
	close(fd);
	p = scheduler_probe_new(&pc, &env, ran, &s);
	ck_assert_ptr_nonnull(p);
	scheduler_probe_start(p);
	st = scheduler_probe_state(p);
	run_until(base, &s, 1);
	ck_assert(st->settled);
	run_until(base, &s, 13);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	ck_assert_int_eq(s.changes, 0);
	ck_assert_int_eq(st->counted, PROBE_OK);
	ck_assert(st->settled);
	ck_assert_int_eq(st->last.result, PROBE_UNKNOWN);
	ck_assert_str_eq(st->last.reason, "run 13: unknown");
	ck_assert_uint_eq(st->runs[PROBE_UNKNOWN], 12);
	ck_assert_int_eq(count_lines(log, "warning: probe t: unknown, not "
	    "counted: run 2: unknown"), 1);
	ck_assert_int_eq(count_lines(log, "unknown"), 1);
	scheduler_probe_free(p);
	event_base_free(base);
	free(log);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/*
 * Runs a new probe of pc on env's loop over the results r[0..n-1], with
 * stderr (the log) in dir/log; returns that file's path.
 */
static char *
run_logged(const struct probe_conf *pc, const struct probe_env *env,
    const enum probe_result *r, int n, struct seen *s, struct probe **pp,
    const char *dir)
{
	char	*log;
	int	 fd, saved, i;

	log = tu_write(dir, "log", "", 0);
	memset(s, 0, sizeof(*s));
	for (nscript = 0, i = 0; i < n; i++)
		script[nscript++] = r[i];
	next_run = 0;
	hang = false;
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	fd = open(log, O_WRONLY | O_TRUNC);
	ck_assert(fd != -1 && saved != -1);
	dup2(fd, STDERR_FILENO);
	close(fd);
	*pp = scheduler_probe_new(pc, env, ran, s);
	ck_assert_ptr_nonnull(*pp);
	scheduler_probe_start(*pp);
	run_until(env->base, s, n);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	return log;
}

/*
 * The check's own unknown over the loop: with on_unknown = ignore, one
 * warning as the probe turns unknown, with its reason, and a notice when
 * a run says something again, nothing counted; with on_unknown = down,
 * it counts as unknown at once (fall 1), logged at warning.
 */
START_TEST(check_unknown_over_the_loop)
{
	static const enum probe_result	r[] = { PROBE_OK, PROBE_UNKNOWN,
		PROBE_UNKNOWN, PROBE_UNKNOWN, PROBE_OK, PROBE_OK };
	struct event_base	*base = event_base_new();
	struct probe_env	 env = { base, NULL, "/proc" };
	struct probe_conf	 pc = conf(10, 5, 1, 1);
	const struct probe_state *st;
	struct probe		*p;
	struct seen		 s;
	char			*dir = tu_tmpdir(), *log;

	check_said = true;
	log = run_logged(&pc, &env, r, 6, &s, &p, dir);
	st = scheduler_probe_state(p);
	ck_assert_int_eq(s.changes, 0);
	ck_assert_int_eq(st->counted, PROBE_OK);
	ck_assert_uint_eq(st->runs[PROBE_UNKNOWN], 3);
	ck_assert_int_eq(count_lines(log, "warning: probe t: unknown "
	    "(on_unknown = ignore: not counted): run 2: unknown"), 1);
	ck_assert_int_eq(count_lines(log, "notice: probe t: no longer "
	    "unknown (ok): run 5: ok"), 1);
	ck_assert_int_eq(count_lines(log, "unknown"), 2);
	scheduler_probe_free(p);
	free(log);

	pc.on_unknown.kind = REACT_DOWN;
	log = run_logged(&pc, &env, r, 6, &s, &p, dir);
	st = scheduler_probe_state(p);
	ck_assert_int_eq(s.changes, 2);		/* unknown, then ok again */
	ck_assert_int_eq(st->counted, PROBE_OK);
	ck_assert_int_eq(count_lines(log, "warning: probe t: unknown: run 2: "
	    "unknown"), 1);
	ck_assert_int_eq(count_lines(log, "notice: probe t: ok again (run 5: "
	    "ok)"), 1);
	ck_assert_int_eq(count_lines(log, "unknown"), 1);
	scheduler_probe_free(p);
	free(log);
	check_said = false;
	event_base_free(base);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/*
 * The window makes what the probe counts as worse, never better: a warn
 * window over ok runs counts as warn with the window's reason; crit runs
 * stay crit under a warn window; a window below min_samples says nothing.
 */
START_TEST(window_combines)
{
	struct probe_state	st;
	struct probe_outcome	bad = { PROBE_CRIT, "down", NAN, false, "" };
	struct probe_outcome	good = { PROBE_OK, "fine", NAN, false, "" };

	memset(&st, 0, sizeof(st));
	st.window.on = true;
	st.window.result = PROBE_WARN;
	snprintf(st.window.reason, sizeof(st.window.reason), "p99 slow");
	/* Not judging yet: only the runs count. */
	ck_assert(!scheduler_state_apply(&st, 1, 1, false, &good));
	ck_assert_int_eq(st.counted, PROBE_OK);
	st.window.judging = true;
	ck_assert(scheduler_state_combine(&st));
	ck_assert_int_eq(st.counted, PROBE_WARN);
	ck_assert_str_eq(st.counted_reason, "p99 slow");
	ck_assert(st.settled);
	/* The runs fail: crit beats the window's warn, with their reason. */
	ck_assert(scheduler_state_apply(&st, 1, 1, false, &bad));
	ck_assert_int_eq(st.counted, PROBE_CRIT);
	ck_assert_str_eq(st.counted_reason, "down");
	/* A crit window does not change crit runs' reason. */
	st.window.result = PROBE_CRIT;
	ck_assert(!scheduler_state_combine(&st));
	ck_assert_str_eq(st.counted_reason, "down");
	/* Runs ok again: the window's crit still holds it. */
	ck_assert(!scheduler_state_apply(&st, 1, 1, false, &good));
	ck_assert_int_eq(st.counted, PROBE_CRIT);
	ck_assert_int_eq(st.run_counted, PROBE_OK);
	/* The window recovers: ok. */
	st.window.result = PROBE_OK;
	ck_assert(scheduler_state_combine(&st));
	ck_assert_int_eq(st.counted, PROBE_OK);
	ck_assert_str_eq(st.counted_reason, "");
}
END_TEST

/*
 * samples_per_run 2 at 1 s: each interval one judged run (fall/rise, the
 * runs counters) and one more half an interval later; the window gets
 * both.
 */
START_TEST(samples_per_run_feed_the_window)
{
	struct event_base	*base = event_base_new();
	struct probe_env	 env = { base, NULL, "/proc" };
	struct probe_conf	 pc = conf(1000, 100, 1, 1);
	struct seen		 s;
	struct probe		*p;
	const struct probe_state *st;

	pc.window.window_ms = 60000;
	pc.window.min_samples = 10;
	pc.window.samples_per_run = 2;
	memset(&s, 0, sizeof(s));
	hang = false;
	check_said = false;
	nscript = next_run = starts = 0;
	p = scheduler_probe_new(&pc, &env, ran, &s);
	st = scheduler_probe_state(p);
	ck_assert(st->window.on);
	ck_assert(!st->window.judging);
	ck_assert_str_eq(st->window.reason,
	    "0 of 10 samples over 1m: not judged yet");
	scheduler_probe_start(p);
	run_until(base, &s, 6);
	ck_assert_int_eq(starts, 6);
	ck_assert_uint_eq(st->runs[PROBE_OK], 3);
	ck_assert_uint_eq(st->window.stats.samples, 6);
	ck_assert_uint_eq(st->window.total_samples, 6);
	ck_assert_str_eq(st->window.reason,
	    "6 of 10 samples over 1m: not judged yet");
	scheduler_probe_free(p);
	event_base_free(base);
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
	tcase_add_test(tc, window_combines);
	tcase_add_test(tc, samples_per_run_feed_the_window);
	tcase_add_test(tc, settled_needs_evidence);
	tcase_add_test(tc, unknown_changes_nothing);
	tcase_add_test(tc, check_unknown_counts_when_on_unknown_does);
	tcase_add_test(tc, unknown_runs_over_the_loop);
	tcase_add_test(tc, check_unknown_over_the_loop);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
