/* A probe's runs over a time window: error rate and exact percentiles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/units.h"
#include "lbagent/core/window.h"

size_t
window_capacity(uint64_t window_ms, uint64_t interval_ms,
    uint64_t samples_per_run)
{
	uint64_t	runs;

	if (window_ms == 0 || interval_ms == 0 || samples_per_run == 0)
		return 0;
	/* A jittered interval is at least 90% of its value. */
	runs = window_ms * 10 / (interval_ms * 9) + 2;
	if (runs > WINDOW_MAX_SAMPLES * 2 / samples_per_run)
		return WINDOW_MAX_SAMPLES * 2;
	return (size_t)(runs * samples_per_run);
}

uint64_t
window_expected(uint64_t window_ms, uint64_t interval_ms,
    uint64_t samples_per_run)
{
	if (interval_ms == 0)
		return 0;
	return window_ms / interval_ms * samples_per_run;
}

int
window_init(struct window *w, uint64_t window_ms, size_t capacity)
{
	memset(w, 0, sizeof(*w));
	if (capacity == 0)
		capacity = 1;
	w->ring = calloc(capacity, sizeof(*w->ring));
	w->sorted = calloc(capacity, sizeof(*w->sorted));
	if (w->ring == NULL || w->sorted == NULL) {
		window_free(w);
		return -1;
	}
	w->window_ms = window_ms;
	w->cap = capacity;
	return 0;
}

void
window_free(struct window *w)
{
	free(w->ring);
	free(w->sorted);
	memset(w, 0, sizeof(*w));
}

/* Drops the samples that ended more than window_ms before now_ms. */
static void
expire(struct window *w, int64_t now_ms)
{
	while (w->count > 0 &&
	    now_ms - w->ring[w->head].at_ms > (int64_t)w->window_ms) {
		w->head = (w->head + 1) % w->cap;
		w->count--;
	}
}

void
window_add(struct window *w, int64_t now_ms, uint64_t latency_ms, bool ok)
{
	struct window_sample	*s;

	if (w->cap == 0)
		return;
	expire(w, now_ms);
	if (w->count == w->cap) {	/* full: the oldest goes */
		w->head = (w->head + 1) % w->cap;
		w->count--;
	}
	s = &w->ring[(w->head + w->count) % w->cap];
	s->at_ms = now_ms;
	s->latency_ms = latency_ms > UINT32_MAX ? UINT32_MAX :
	    (uint32_t)latency_ms;
	s->ok = ok;
	w->count++;
	w->total_samples++;
	w->total_latency_ms += s->latency_ms;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t	x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Nearest rank: the ceil(p * n / 100)-th smallest, 1-based. */
static uint32_t
rank(const uint32_t *sorted, size_t n, unsigned p)
{
	size_t	r = (p * n + 99) / 100;

	return sorted[r == 0 ? 0 : r - 1];
}

void
window_stats(struct window *w, int64_t now_ms, struct window_stats *st)
{
	size_t	i;

	memset(st, 0, sizeof(*st));
	expire(w, now_ms);
	if (w->count == 0)
		return;
	for (i = 0; i < w->count; i++) {
		const struct window_sample *s = &w->ring[(w->head + i) % w->cap];

		w->sorted[i] = s->latency_ms;
		if (!s->ok)
			st->errors++;
	}
	qsort(w->sorted, w->count, sizeof(*w->sorted), cmp_u32);
	st->samples = w->count;
	st->error_rate = 100.0 * (double)st->errors / (double)w->count;
	st->p50_ms = rank(w->sorted, w->count, 50);
	st->p95_ms = rank(w->sorted, w->count, 95);
	st->p99_ms = rank(w->sorted, w->count, 99);
	st->oldest_ms = w->ring[w->head].at_ms;
}

/* A measured latency as people read it: 850ms, 1.8s, 12s. */
static void
format_latency(uint32_t ms, char *buf, size_t size)
{
	if (ms < 1000)
		snprintf(buf, size, "%ums", ms);
	else if (ms < 10000)
		snprintf(buf, size, "%u.%us", ms / 1000, ms % 1000 / 100);
	else
		snprintf(buf, size, "%us", ms / 1000);
}

/* A share of runs: whole percents, tenths below 10%. */
static void
format_rate(double pct, char *buf, size_t size)
{
	if (pct < 10 && pct != (double)(int)pct)
		snprintf(buf, size, "%.1f%%", pct);
	else
		snprintf(buf, size, "%.0f%%", pct);
}

static enum probe_result
level(double figure, uint64_t warn, uint64_t crit, uint64_t *limit)
{
	if (crit != 0 && figure >= (double)crit) {
		*limit = crit;
		return PROBE_CRIT;
	}
	if (warn != 0 && figure >= (double)warn) {
		*limit = warn;
		return PROBE_WARN;
	}
	return PROBE_OK;
}

enum probe_result
window_judge(const struct window_conf *c, const struct window_stats *st,
    bool *judging, char *reason, size_t size)
{
	enum probe_result	 worst = PROBE_OK, r;
	uint64_t		 limit = 0, l;
	char			 span[32], fig[32], thr[32];
	const char		*what = NULL;
	double			 figure = 0;

	units_format_ms(c->window_ms, span, sizeof(span));
	*judging = st->samples >= c->min_samples && st->samples > 0;
	if (!*judging) {
		snprintf(reason, size, "%zu of %llu samples over %s: not "
		    "judged yet", st->samples,
		    (unsigned long long)c->min_samples, span);
		return PROBE_OK;
	}
	r = level(st->error_rate, c->warn_error_rate, c->crit_error_rate, &l);
	if (r > worst) {
		worst = r, limit = l, what = "error rate";
		figure = st->error_rate;
	}
	r = level(st->p99_ms, c->warn_p99_ms, c->crit_p99_ms, &l);
	if (r > worst) {
		worst = r, limit = l, what = "p99";
		figure = st->p99_ms;
	}
	r = level(st->p95_ms, c->warn_p95_ms, c->crit_p95_ms, &l);
	if (r > worst) {
		worst = r, limit = l, what = "p95";
		figure = st->p95_ms;
	}
	if (what == NULL) {
		format_latency(st->p99_ms, fig, sizeof(fig));
		format_rate(st->error_rate, thr, sizeof(thr));
		snprintf(reason, size, "p99 %s, error rate %s over %s", fig,
		    thr, span);
		return PROBE_OK;
	}
	if (strcmp(what, "error rate") == 0) {
		format_rate(figure, fig, sizeof(fig));
		snprintf(thr, sizeof(thr), "%llu%%", (unsigned long long)limit);
	} else {
		format_latency((uint32_t)figure, fig, sizeof(fig));
		units_format_ms(limit, thr, sizeof(thr));
	}
	snprintf(reason, size, "%s %s over %s (%s %s)", what, fig, span,
	    worst == PROBE_CRIT ? "crit" : "warn", thr);
	return worst;
}
