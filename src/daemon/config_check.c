/*
 * The checks across keys and sections, once their values are read: the
 * transitions' and the guard's timings, a probe's window against its
 * interval, the probes a service names, sources named twice, what the
 * load balancers need.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "lbagent/core/redact.h"
#include "lbagent/core/units.h"
#include "lbagent/core/window.h"
#include "lbagent/daemon/fetch.h"
#include "lbagent/probes/probe.h"
#include "config_impl.h"

/* A [service] section: what it does not set it takes from [agent]. */
static bool
inherits(const struct parse *p, size_t section)
{
	return section != SIZE_MAX && p->sections[section].kind == SEC_SERVICE;
}

/*
 * The guard's settings of one service (or of [peers]): the load
 * balancers need a backend, a look again needs to come within just_out.
 */
void
config_check_guard(struct parse *p, size_t section,
    const struct transition_conf *tc, const char *where)
{
	unsigned		 line;
	char			 r[32], j[32];

	if (section == SIZE_MAX)
		line = 0;
	else if ((line = config_first_line(p, section, "recheck_after",
	    NULL)) == 0 && (line = config_first_line(p, section, "just_out",
	    NULL)) == 0) {
		/* A [service] that sets neither has [peers]', said there. */
		if (inherits(p, section))
			return;
		line = p->sections[section].line;
	}
	if (tc->recheck_after_ms > tc->just_out_ms) {
		units_format_ms(tc->recheck_after_ms, r, sizeof(r));
		units_format_ms(tc->just_out_ms, j, sizeof(j));
		config_error(p->errs, p->path, line,
		    "%srecheck_after %s must be at most just_out %s", where,
		    r, j);
	}
}

/* "Longer before coming back": up_after may not be below down_after. */
void
config_check_transitions(struct parse *p, size_t section,
    const struct transition_conf *tc, const char *where)
{
	char		 u[32], d[32];
	unsigned	 line = config_first_line(p, section, "up_after", NULL);

	if (tc->up_after_ms >= tc->down_after_ms)
		return;
	if (line == 0)
		line = config_first_line(p, section, "down_after", NULL);
	/* A [service] that sets neither has [agent]'s, said there once. */
	if (line == 0 && inherits(p, section))
		return;
	if (line == 0 && section != SIZE_MAX)
		line = p->sections[section].line;
	units_format_ms(tc->up_after_ms, u, sizeof(u));
	units_format_ms(tc->down_after_ms, d, sizeof(d));
	config_error(p->errs, p->path, line, "%sup_after %s must be at least "
	    "down_after %s", where, u, d);
}

/* A warn threshold at or above its crit one could never say warn. */
static void
check_pair(struct parse *p, size_t section, const char *what, uint64_t warn,
    uint64_t crit, bool duration)
{
	char	 w[32], c[32], key[32];

	if (warn == 0 || crit == 0 || warn < crit)
		return;
	if (duration) {
		units_format_ms(warn, w, sizeof(w));
		units_format_ms(crit, c, sizeof(c));
	} else {
		snprintf(w, sizeof(w), "%llu%%", (unsigned long long)warn);
		snprintf(c, sizeof(c), "%llu%%", (unsigned long long)crit);
	}
	snprintf(key, sizeof(key), "warn_%s", what);
	config_error(p->errs, p->path, config_first_line(p, section, key, NULL),
	    "[probe %s]: warn_%s %s must be below crit_%s %s",
	    p->sections[section].name, what, w, what, c);
}

/* The window keys together: what needs the window, what it can hold. */
void
config_check_window(struct parse *p, size_t section,
    const struct probe_conf *pc)
{
	const struct window_conf	*w = &pc->window;
	const char			*name = p->sections[section].name;
	unsigned			 line;
	uint64_t			 expected;
	size_t				 i, cap;
	char				 t1[32], t2[32], t3[32];

	if (pc->ops == NULL || !pc->ops->windowed)
		return;
	if (w->window_ms == 0) {
		for (i = 0; i < config_window_nkeys; i++)
			if ((line = config_first_line(p, section,
			    config_window_keys[i].name, NULL)) != 0)
				config_error(p->errs, p->path, line,
				    "[probe %s]: %s needs window", name,
				    config_window_keys[i].name);
		return;
	}
	line = config_first_line(p, section, "window", NULL);
	check_pair(p, section, "p95", w->warn_p95_ms, w->crit_p95_ms, true);
	check_pair(p, section, "p99", w->warn_p99_ms, w->crit_p99_ms, true);
	check_pair(p, section, "error_rate", w->warn_error_rate,
	    w->crit_error_rate, false);
	if (pc->interval_ms == 0 || w->samples_per_run == 0)
		return;		/* already reported */
	if (w->samples_per_run > 1 &&
	    pc->timeout_ms > pc->interval_ms / w->samples_per_run) {
		units_format_ms(pc->timeout_ms, t1, sizeof(t1));
		units_format_ms(pc->interval_ms / w->samples_per_run, t2,
		    sizeof(t2));
		config_error(p->errs, p->path,
		    config_first_line(p, section, "samples_per_run", NULL),
		    "[probe %s]: samples_per_run %llu leaves %s per request: "
		    "timeout %s must be at most that", name,
		    (unsigned long long)w->samples_per_run, t2, t1);
	}
	cap = window_capacity(w->window_ms, pc->interval_ms,
	    w->samples_per_run);
	expected = window_expected(w->window_ms, pc->interval_ms,
	    w->samples_per_run);
	units_format_ms(w->window_ms, t1, sizeof(t1));
	units_format_ms(pc->interval_ms, t2, sizeof(t2));
	if (cap > WINDOW_MAX_SAMPLES)
		config_error(p->errs, p->path, line, "[probe %s]: window %s at "
		    "interval %s keeps up to %zu samples, more than %d",
		    name, t1, t2, cap, WINDOW_MAX_SAMPLES);
	else if (w->min_samples > expected) {
		snprintf(t3, sizeof(t3), "%llu",
		    (unsigned long long)w->samples_per_run);
		if (config_first_line(p, section, "min_samples", NULL) != 0)
			line = config_first_line(p, section, "min_samples",
			    NULL);
		config_error(p->errs, p->path, line, "[probe %s]: window %s "
		    "holds about %llu samples at interval %s and "
		    "samples_per_run %s: fewer than min_samples %llu, it would never judge", name,
		    t1, (unsigned long long)expected, t2, t3,
		    (unsigned long long)w->min_samples);
	}
}

/* Whether a bad [probe NAME] header was given: its error said it. */
static bool
bad_probe_header(const struct parse *p, const char *name)
{
	size_t	i;

	for (i = 0; i < p->nsections; i++)
		if (p->sections[i].bad && p->sections[i].kind == SEC_PROBE &&
		    strcmp(p->sections[i].name, name) == 0)
			return true;
	return false;
}

/* Every probe a service names must exist (a bad header of it said so). */
void
config_check_service_probes(struct parse *p)
{
	struct config	*cfg = p->cfg;
	size_t		 i, j, s;

	for (i = 0, s = 0; i < p->nsections; i++) {
		const struct entry *e;

		if (p->sections[i].kind != SEC_SERVICE || p->sections[i].bad)
			continue;
		e = config_find_entry(p, i, "probes");
		for (j = 0; e != NULL && j < cfg->services[s].nprobes; j++)
			if (config_probe(cfg,
			    cfg->services[s].probes[j]) == NULL &&
			    !bad_probe_header(p, cfg->services[s].probes[j]))
				config_error(p->errs, p->path, e->line,
				    "probes: no [probe %s] section",
				    cfg->services[s].probes[j]);
		s++;
	}
}

void
config_check_default_probes(struct parse *p, size_t agent)
{
	const struct config	*cfg = p->cfg;
	size_t			 i;

	for (i = 0; i < cfg->nprobes; i++)
		if (!config_probe_named(cfg, cfg->probes[i].name))
			return;
	if (cfg->no_probes)
		return;
	config_warning(p->errs, p->path, agent < p->nsections ?
	    p->sections[agent].line : 1, "the default service (no agent-send, "
	    "`default`, or a name no [service] has) has no probes: it says up "
	    "unless a marker says otherwise, and /health answers 203; give it "
	    "a [probe] no [service] names, or set no_probes = yes in [agent] "
	    "if that is meant");
}

/*
 * What a source is asked at, credentials aside: an HTTP URL as libcurl
 * reads it, without user, password or a default port (an agent's with the
 * /status lbagent reads); a socket's path or address. -1 when it cannot
 * tell (out of memory): then no two items are the same.
 */
static int
source_key(const char *item, bool agent, char *buf, size_t size)
{
	struct fetch_source	 src;
	const char		*why;
	char			 url[sizeof(src.url) + 8], *out = NULL;
	CURLU			*u;
	int			 rv = -1, n;

	if (fetch_source_parse(item, &src, &why) == -1)
		return -1;
	if (src.kind == FETCH_UNIX) {
		n = snprintf(buf, size, "unix:%s", src.path);
		return n < 0 || (size_t)n >= size ? -1 : 0;
	}
	if (src.kind == FETCH_TCP) {
		n = snprintf(buf, size, "tcp:%s:%s", src.host, src.port);
		return n < 0 || (size_t)n >= size ? -1 : 0;
	}
	if (agent ? config_agent_status_url(item, url, sizeof(url)) == -1 :
	    snprintf(url, sizeof(url), "%s", item) >= (int)sizeof(url))
		return -1;
	if ((u = curl_url()) == NULL)
		return -1;
	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_set(u, CURLUPART_USER, NULL, 0) == CURLUE_OK &&
	    curl_url_set(u, CURLUPART_PASSWORD, NULL, 0) == CURLUE_OK &&
	    curl_url_set(u, CURLUPART_OPTIONS, NULL, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_URL, &out, CURLU_NO_DEFAULT_PORT) ==
	    CURLUE_OK && (size_t)snprintf(buf, size, "%s", out) < size)
		rv = 0;
	curl_free(out);
	curl_url_cleanup(u);
	return rv;
}

#define SOURCE_KEY_MAX	(1024 + 64)	/* a URL and /status, as libcurl writes it */

/*
 * [peers] agents or haproxy naming one source twice: the same load
 * balancer (or node) asked twice, whatever credentials each item carries,
 * is a mistake, and the status could not tell the two apart.
 */
static void
check_sources(struct parse *p, size_t section, const char *key,
    const struct config_list *l, bool agent)
{
	char		(*keys)[SOURCE_KEY_MAX], shown[256];
	const struct entry *e = config_find_entry(p, section, key);
	size_t		 i, j;

	if (l->count < 2 || e == NULL ||
	    (keys = calloc(l->count, sizeof(*keys))) == NULL)
		return;
	for (i = 0; i < l->count; i++) {
		if (source_key(l->items[i], agent, keys[i],
		    sizeof(keys[i])) == -1)
			continue;
		for (j = 0; j < i; j++) {
			if (keys[j][0] == '\0' || strcmp(keys[i], keys[j]) != 0)
				continue;
			redact_url(l->items[i], shown, sizeof(shown));
			config_error(p->errs, p->path, e->line, "%s: %s given "
			    "twice (items %zu and %zu: the same address, "
			    "credentials aside)", key, shown, j + 1, i + 1);
			break;
		}
	}
	free(keys);
}

/*
 * [peers] and [haproxy] together: no source named twice, the load
 * balancers' backend, dead_after beyond suspect_after, the guard's timings.
 */
void
config_check_peers(struct parse *p, size_t peers, size_t hx)
{
	struct config	*cfg = p->cfg;
	unsigned	 line;

	if (peers != SIZE_MAX)
		check_sources(p, peers, "agents", &cfg->peers.agents, true);
	if (hx != SIZE_MAX && config_first_line(p, hx, "sources", NULL) != 0) {
		p->peers_haproxy_line = config_first_line(p, hx, "sources",
		    NULL);
		check_sources(p, hx, "sources", &cfg->peers.haproxy, false);
	} else if (peers != SIZE_MAX) {
		p->peers_haproxy_line = config_first_line(p, peers, "haproxy",
		    NULL);
		check_sources(p, peers, "haproxy", &cfg->peers.haproxy, false);
	}
	if (cfg->peers.haproxy.count > 0 &&
	    cfg->transitions.backend[0] == '\0')
		config_error(p->errs, p->path, p->peers_haproxy_line,
		    "the load balancers need backend in [haproxy] (this "
		    "node's backend on them)");
	if (cfg->peers.dead_after <= cfg->peers.suspect_after) {
		line = config_first_line(p, peers, "dead_after", NULL);
		config_error(p->errs, p->path, line != 0 ? line :
		    config_first_line(p, peers, "suspect_after", NULL),
		    "dead_after must be more than suspect_after (rounds)");
	}
	config_check_guard(p, peers, &cfg->transitions, "");
}
