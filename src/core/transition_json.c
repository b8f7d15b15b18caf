/*
 * The transition engine's part of the state file: times go out as ages
 * and come back against the new clock (transition.h). Pure.
 */
#include <string.h>

#include "lbagent/core/text.h"
#include "transition_impl.h"

/* Ages in a file beyond this are nonsense; clamping keeps sums in range. */
#define AGE_MAX_MS	(100LL * 365 * 24 * 3600 * 1000)

static json_int_t
age_of(int64_t start, int64_t now_ms)
{
	int64_t	age = now_ms - start;

	return age < 0 ? 0 : age > AGE_MAX_MS ? AGE_MAX_MS : age;
}

/* An age from the file: a number, clamped to [0, AGE_MAX_MS]. */
static int
age_from(const json_t *v, int64_t *age)
{
	json_int_t	a;

	if (!json_is_integer(v))
		return -1;
	a = json_integer_value(v);
	*age = a < 0 ? 0 : a > AGE_MAX_MS ? AGE_MAX_MS : a;
	return 0;
}

json_t *
transition_to_json(const struct transition *t, int64_t now_ms)
{
	json_t	*o, *runs, *outs, *ramp = json_null();
	int	 level;
	size_t	 i;

	if ((runs = json_array()) == NULL || (outs = json_array()) == NULL) {
		json_decref(runs);
		return NULL;
	}
	/* Runs as steps: a level and the run start of it and of the levels
	 * above, up to the next step. */
	for (level = LEVEL_DOWN; level <= LEVEL_MAX; level++) {
		int64_t s = t->ge_ms[IDX(level)];

		if (level > LEVEL_DOWN && s == t->ge_ms[IDX(level - 1)])
			continue;
		json_array_append_new(runs, json_pack("[i, o]", level,
		    s == NO_RUN ? json_null() : json_integer(age_of(s, now_ms))));
	}
	for (i = 0; i < t->nouts; i++)
		json_array_append_new(outs, json_integer(age_of(t->outs_ms[i],
		    now_ms)));
	if (t->ramping)
		ramp = json_pack("{s:I, s:i}", "age_ms", age_of(t->ramp_ms,
		    now_ms), "weight", (int)t->ramp_weight);
	o = json_pack("{s:i, s:I, s:s, s:o, s:o, s:o, s:i}", "level", t->level,
	    "since_age_ms", age_of(t->since_ms, now_ms), "reason", t->reason,
	    "passing_runs", runs, "ramp", ramp, "outs_age_ms", outs,
	    "damping", (int)t->damping);
	return o;
}

/* Steps rise from -1; each holds from its level up to the next one. */
static int
runs_from_json(int64_t ge[LEVEL_COUNT], const json_t *runs, int64_t now_ms,
    int64_t credit_ms, const char **why)
{
	const json_t	*step;
	size_t		 i;
	int		 l, prev = LEVEL_DOWN - 1;
	int64_t		 start, age;
	json_int_t	 jl;
	json_t		*a;

	if (!json_is_array(runs) || json_array_size(runs) == 0) {
		*why = "passing_runs is not a non-empty array";
		return -1;
	}
	json_array_foreach(runs, i, step) {
		if (json_unpack((json_t *)step, "[I, o]", &jl, &a) != 0 ||
		    jl <= prev || jl > LEVEL_MAX ||
		    (i == 0 && jl != LEVEL_DOWN)) {
			*why = "passing_runs: steps must be [level, age] in rising "
			    "order from -1";
			return -1;
		}
		if (json_is_null(a))
			start = NO_RUN;
		else if (age_from(a, &age) == -1) {
			*why = "passing_runs: an age is not a number";
			return -1;
		} else
			start = now_ms - age - credit_ms;
		prev = (int)jl;
		for (l = prev; l <= LEVEL_MAX; l++)
			ge[IDX(l)] = start;
	}
	return 0;
}

/*
 * The recovery ramp (null: none) into n, whose level is loaded: it
 * resumes from the step HAProxy was last told, not further.
 */
static int
ramp_from_json(struct transition *n, const json_t *ramp, int64_t now_ms,
    const char **why)
{
	json_t		*v;
	json_int_t	 w;
	int64_t		 age;

	n->ramping = false;
	if (json_is_null(ramp))
		return 0;
	if (json_unpack((json_t *)ramp, "{s:o, s:I}", "age_ms", &v, "weight",
	    &w) != 0 || age_from(v, &age) == -1 || w < 0 || w > LEVEL_MAX) {
		*why = "ramp lacks age_ms or a weight from 0 to 100";
		return -1;
	}
	/* From the step HAProxy was last told, not further. */
	n->ramping = n->level >= 1;
	n->ramp_ms = now_ms - age;
	n->ramp_weight = (unsigned)w;
	n->ramp_step_ms = now_ms;
	return 0;
}

/* The goings-out kept (flap damping) into n, aged by the gap. */
static int
outs_from_json(struct transition *n, const json_t *outs, int64_t now_ms,
    int64_t gap_ms, const char **why)
{
	json_t	*v;
	int64_t	 age;
	size_t	 i;

	if (!json_is_array(outs)) {
		*why = "outs_age_ms is not an array";
		return -1;
	}
	n->nouts = 0;
	json_array_foreach(outs, i, v) {
		if (age_from(v, &age) == -1) {
			*why = "outs_age_ms holds something not a number";
			return -1;
		}
		transition_push_out(n, now_ms - age - gap_ms);
	}
	/* Oldest first, whatever order the file had. */
	for (i = 1; i < n->nouts; i++) {
		int64_t x = n->outs_ms[i];
		size_t j = i;

		for (; j > 0 && n->outs_ms[j - 1] > x; j--)
			n->outs_ms[j] = n->outs_ms[j - 1];
		n->outs_ms[j] = x;
	}
	return 0;
}

int
transition_from_json(struct transition *t, const json_t *o, int64_t now_ms,
    int64_t gap_ms, bool same_boot, const char **why)
{
	struct transition	 n = *t;
	json_t			*runs, *ramp, *outs, *v;
	json_int_t		 level, damping;
	const char		*reason;
	int64_t			 age;

	if (gap_ms < 0)
		gap_ms = 0;
	if (gap_ms > AGE_MAX_MS)
		gap_ms = AGE_MAX_MS;
	if (json_unpack((json_t *)o, "{s:I, s:o, s:s, s:o, s:o, s:o, s:I}",
	    "level", &level, "since_age_ms", &v, "reason", &reason,
	    "passing_runs", &runs, "ramp", &ramp, "outs_age_ms", &outs,
	    "damping", &damping) != 0) {
		*why = "transition lacks level, since_age_ms, reason, "
		    "passing_runs, ramp, outs_age_ms or damping";
		return -1;
	}
	if (level < LEVEL_DOWN || level > LEVEL_MAX) {
		*why = "transition level out of range";
		return -1;
	}
	if (damping < 1 || damping > TRANSITION_DAMPING_MAX) {
		*why = "damping out of range";
		return -1;
	}
	if (age_from(v, &age) == -1) {
		*why = "since_age_ms is not a number";
		return -1;
	}
	n.level = (int)level;
	n.since_ms = now_ms - age - gap_ms;
	n.damping = (unsigned)damping;
	text_reason(n.reason, reason, strlen(reason));
	transition_restart_counts(&n);
	if (runs_from_json(n.ge_ms, runs, now_ms, same_boot ? gap_ms : 0,
	    why) == -1)
		return -1;
	if (ramp_from_json(&n, ramp, now_ms, why) == -1 ||
	    outs_from_json(&n, outs, now_ms, gap_ms, why) == -1)
		return -1;
	n.resumed = true;
	*t = n;
	return 0;
}
