/*
 * A [service]'s capacity weight and adaptive maxconn keys across each
 * other, [peers], [haproxy] and the probes (the keys themselves are in
 * config_keys_service.c's table): every wrong combination said at the
 * line that makes it wrong.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/probes/probe.h"
#include "config_impl.h"

/* What a probe's value stands for. */
enum role { ROLE_RATE, ROLE_UTIL, ROLE_LATENCY };

static const char *const role_text[] = {
	"the rate in req/s", "the utilization", "the latency in ms",
};

static const char *const capacity_only[] = {
	"capacity_rate", "capacity_utilization", "capacity_reference",
	"capacity_min_rate", "capacity_blackout", "capacity_expiry",
	"capacity_half_life", "capacity_floor", "capacity_cap", NULL,
};

static const char *const maxconn_only[] = {
	"maxconn_latency", "maxconn_min", "maxconn_max", NULL,
};

void
config_capacity_free(struct capacity_conf *c)
{
	free(c->weight_from);
	free(c->rate);
	free(c->utilization);
	free(c->maxconn);
	free(c->latency);
}

/* Whether a service's capacity keys name the probe as an input. */
bool
config_capacity_names(const struct capacity_conf *c, const char *probe)
{
	const char	*in[3] = { c->rate, c->utilization, c->latency };
	size_t		 i;

	for (i = 0; i < 3; i++)
		if (in[i] != NULL && strcmp(in[i], "haproxy") != 0 &&
		    strcmp(in[i], probe) == 0)
			return true;
	return false;
}

/* The line of key in the section, or the section's own. */
static unsigned
line_of(const struct parse *p, size_t section, const char *key)
{
	const struct entry	*e = config_find_entry(p, section, key);

	return e != NULL ? e->line : p->sections[section].line;
}

/* The [probe name] section's index, SIZE_MAX: none; *bad: a bad one. */
static size_t
probe_section(const struct parse *p, const char *name, bool *bad)
{
	size_t	i;

	*bad = false;
	for (i = 0; i < p->nsections; i++)
		if (p->sections[i].kind == SEC_PROBE &&
		    strcmp(p->sections[i].name, name) == 0) {
			if (!p->sections[i].bad)
				return i;
			*bad = true;
		}
	return SIZE_MAX;
}

/*
 * A probe whose value the key takes: it exists, and its kind gives a
 * number that can stand for the role (an http probe's json_field, an
 * exec's, any for a latency in ms, a percentage or load for the
 * utilization).
 */
static void
check_probe(struct parse *p, size_t section, const char *key,
    const char *name, enum role r)
{
	const struct probe_conf	*pc;
	const char		*kind, *unit;
	unsigned		 line = line_of(p, section, key);
	size_t			 ps;
	bool			 bad, json;

	if ((ps = probe_section(p, name, &bad)) == SIZE_MAX ||
	    (pc = config_probe(p->cfg, name)) == NULL || pc->ops == NULL) {
		if (!bad)
			config_error(p->errs, p->path, line, "%s: no [probe %s] "
			    "section (or haproxy)", key, name);
		return;
	}
	kind = pc->ops->name;
	unit = pc->ops->unit != NULL ? pc->ops->unit : "";
	json = config_find_entry(p, ps, "json_field") != NULL;
	if (json || strcmp(kind, "exec") == 0 ||
	    (r == ROLE_UTIL && (strcmp(unit, "%") == 0 ||
	    strcmp(kind, "load") == 0)) ||
	    (r == ROLE_LATENCY && strcmp(unit, "ms") == 0))
		return;
	config_error(p->errs, p->path, line, "%s: [probe %s] (type = %s) "
	    "gives no value that is %s%s", key, name, kind, role_text[r],
	    strcmp(kind, "http") == 0 ? " (its value is its latency in ms; "
	    "json_field reads a number from the body)" : "");
}

/* haproxy, or a probe: an input read from [haproxy]'s sources or a probe. */
static void
check_input(struct parse *p, size_t section, const struct service_conf *svc,
    const char *key, const char *value, enum role r)
{
	unsigned	line = line_of(p, section, key);

	if (strcmp(value, "haproxy") != 0) {
		check_probe(p, section, key, value, r);
		return;
	}
	if (p->cfg->peers.haproxy.count == 0)
		config_error(p->errs, p->path, line, "%s = haproxy: no [haproxy] "
		    "sources to read this server's stats from (sources = ... "
		    "in [haproxy]), or name a probe", key);
	else if (svc->transitions.backend[0] == '\0')
		config_error(p->errs, p->path, line, "%s = haproxy: the service "
		    "has no backend to find its server row in (backend = ... in "
		    "[service %s] or [haproxy])", key, svc->name);
}

/* Keys of a feature that is off: each one said at its line. */
static void
check_off(struct parse *p, size_t section, const char *const *keys,
    const char *needs, const char *switch_key)
{
	const struct entry	*sw = config_find_entry(p, section, switch_key);
	char			 was[96];
	size_t			 i;

	if (sw != NULL)
		snprintf(was, sizeof(was), "line %u says %s", sw->line,
		    sw->value);
	else
		snprintf(was, sizeof(was), "%s is not set", switch_key);
	for (i = 0; keys[i] != NULL; i++)
		if (config_find_entry(p, section, keys[i]) != NULL)
			config_error(p->errs, p->path,
			    line_of(p, section, keys[i]), "%s: only with %s (%s)",
			    keys[i], needs, was);
}

static void
check_weight(struct parse *p, size_t section, const struct service_conf *svc)
{
	const struct capacity_conf	*c = &svc->capacity;
	unsigned			 line = line_of(p, section,
					    "weight_from");

	if (c->rate == NULL)
		config_error(p->errs, p->path, line, "weight_from = capacity: "
		    "no capacity_rate (haproxy, or a probe whose value is the "
		    "rate in req/s)");
	else
		check_input(p, section, svc, "capacity_rate", c->rate,
		    ROLE_RATE);
	if (c->utilization == NULL)
		config_error(p->errs, p->path, line, "weight_from = capacity: "
		    "no capacity_utilization (a probe whose value is the "
		    "utilization: a cpu probe, an http probe's json_field)");
	else if (strcmp(c->utilization, "haproxy") == 0)
		config_error(p->errs, p->path, line_of(p, section,
		    "capacity_utilization"), "capacity_utilization: HAProxy "
		    "gives no utilization; name a probe (a cpu probe, an http "
		    "probe's json_field)");
	else
		check_probe(p, section, "capacity_utilization", c->utilization,
		    ROLE_UTIL);
	if (c->reference == 0 && p->cfg->peers.agents.count == 0)
		config_error(p->errs, p->path, line, "weight_from = capacity: "
		    "no [peers] agents to compare estimates with, and no "
		    "capacity_reference (the req/s that count as 100%%)");
	/* 0: a bad value, said already. */
	if (c->cap_pct > 0 && c->floor_pct > c->cap_pct)
		config_error(p->errs, p->path, line_of(p, section,
		    "capacity_floor"), "capacity_floor %llu%% is over "
		    "capacity_cap %llu%%", (unsigned long long)c->floor_pct,
		    (unsigned long long)c->cap_pct);
}

static void
check_maxconn(struct parse *p, size_t section, const struct service_conf *svc)
{
	const struct capacity_conf	*c = &svc->capacity;

	if (c->latency == NULL)
		config_error(p->errs, p->path, line_of(p, section, "maxconn"),
		    "maxconn = adaptive: no maxconn_latency (haproxy, or a "
		    "probe whose value is the latency in ms)");
	else
		check_input(p, section, svc, "maxconn_latency", c->latency,
		    ROLE_LATENCY);
	if (c->maxconn_max > 0 && c->maxconn_min > c->maxconn_max)
		config_error(p->errs, p->path, line_of(p, section,
		    "maxconn_min"), "maxconn_min %llu is over maxconn_max %llu",
		    (unsigned long long)c->maxconn_min,
		    (unsigned long long)c->maxconn_max);
}

/* One word of a choice, or an error at its line; false when wrong. */
static bool
is_word(struct parse *p, size_t section, const char *key, const char *value,
    const char *yes, const char *no)
{
	if (value == NULL || strcmp(value, no) == 0)
		return false;
	if (strcmp(value, yes) == 0)
		return true;
	config_error(p->errs, p->path, line_of(p, section, key), "%s: expected "
	    "%s or %s: '%s'", key, no, yes, value);
	return false;
}

static void
check_one(struct parse *p, size_t section, struct service_conf *svc)
{
	struct capacity_conf	*c = &svc->capacity;

	c->on = is_word(p, section, "weight_from", c->weight_from, "capacity",
	    "health");
	c->adaptive = is_word(p, section, "maxconn", c->maxconn, "adaptive",
	    "off");
	if (c->on)
		check_weight(p, section, svc);
	else
		check_off(p, section, capacity_only, "weight_from = capacity",
		    "weight_from");
	if (c->adaptive)
		check_maxconn(p, section, svc);
	else
		check_off(p, section, maxconn_only, "maxconn = adaptive",
		    "maxconn");
}

void
config_check_capacity(struct parse *p)
{
	size_t	i, s;

	for (i = 0, s = 0; i < p->nsections && s < p->cfg->nservices; i++) {
		if (p->sections[i].kind != SEC_SERVICE || p->sections[i].bad)
			continue;
		check_one(p, i, &p->cfg->services[s++]);
	}
}
