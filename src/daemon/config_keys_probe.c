/*
 * [probe NAME]'s keys: those of every probe, the window's (kinds that keep
 * one), and the kind's own, which its ops parse. Interprets one probe
 * section, with its signature (what a reload compares).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/units.h"
#include "lbagent/core/window.h"
#include "lbagent/probes/probe.h"
#include "config_impl.h"

/* Keys every [probe NAME] has, whatever its type. */
const struct config_key config_probe_keys[] = {
	{ "probe", "type", KEY_TYPE, NULL, 0, 0, 0,
	  "The kind of check (required)." },
	{ "probe", "interval", KEY_DURATION, "5s", 100,
	  24ULL * 3600 * 1000, POFF(interval_ms),
	  "How often the probe runs (jittered by up to 10%)." },
	{ "probe", "timeout", KEY_DURATION, "2s", 10, 24ULL * 3600 * 1000,
	  POFF(timeout_ms),
	  "A run taking longer is crit ('timed out after 2s'); below "
	  "interval." },
	{ "probe", "on_warn", KEY_REACTION, "ignore", 0, 0, POFF(on_warn),
	  "What a warn result does: down, drain (sent as 0%), NN% (1-99) or "
	  "ignore (logged and shown only)." },
	{ "probe", "on_crit", KEY_REACTION, "down", 0, 0, POFF(on_crit),
	  "What a crit result does: down, drain, NN% or ignore." },
	{ "probe", "on_unknown", KEY_REACTION, "ignore", 0, 0, POFF(on_unknown),
	  "What an unknown result of the check's own does (an exec program's "
	  "exit 3 or another code, or its death by a signal): down, drain, "
	  "NN% or ignore (logged and shown only, and not counted towards "
	  "fall or rise). An unknown because lbagent itself could not run "
	  "the check (out of descriptors, memory, processes) never counts." },
	{ "probe", "fall", KEY_UINT, "1", 1, 1000, POFF(fall),
	  "Consecutive non-ok runs before the probe counts as failing." },
	{ "probe", "rise", KEY_UINT, "1", 1, 1000, POFF(rise),
	  "Consecutive ok runs before a failing probe counts as ok again." },
};
const size_t config_probe_nkeys = NKEYS_OF(config_probe_keys);

/* Keys of the probes whose kind keeps a window (ops->windowed). */
const struct config_key config_window_keys[] = {
	{ "probe", "window", KEY_DURATION, NULL, 1000, DAY_MS,
	  WOFF(window_ms),
	  "Keep each run's latency and result this long (60s), for the "
	  "figures p50, p95, p99 and error rate shown in status and metrics "
	  "and judged by the thresholds below; none by default." },
	{ "probe", "warn_p95", KEY_DURATION, NULL, 1, DAY_MS,
	  WOFF(warn_p95_ms),
	  "With window: the 95th percentile of latency at or above which "
	  "the probe is warn." },
	{ "probe", "crit_p95", KEY_DURATION, NULL, 1, DAY_MS,
	  WOFF(crit_p95_ms), "As warn_p95, for crit." },
	{ "probe", "warn_p99", KEY_DURATION, NULL, 1, DAY_MS,
	  WOFF(warn_p99_ms), "As warn_p95, for the 99th percentile." },
	{ "probe", "crit_p99", KEY_DURATION, NULL, 1, DAY_MS,
	  WOFF(crit_p99_ms), "As warn_p99, for crit." },
	{ "probe", "warn_error_rate", KEY_PERCENT, NULL, 1, 100,
	  WOFF(warn_error_rate),
	  "With window: the share of the window's runs that were not ok at "
	  "or above which the probe is warn (20%)." },
	{ "probe", "crit_error_rate", KEY_PERCENT, NULL, 1, 100,
	  WOFF(crit_error_rate), "As warn_error_rate, for crit." },
	{ "probe", "min_samples", KEY_UINT, "10", 1, WINDOW_MAX_SAMPLES,
	  WOFF(min_samples),
	  "With window: with fewer runs in the window, it judges nothing "
	  "(status says so)." },
	{ "probe", "samples_per_run", KEY_UINT, "1", 1, 100,
	  WOFF(samples_per_run),
	  "With window: requests each interval, the first at the run's start "
	  "(the run fall and rise count), the others spread over the "
	  "interval, feeding the window only; timeout must then be at most "
	  "interval / samples_per_run." },
};
const size_t config_window_nkeys = NKEYS_OF(config_window_keys);

/* Whether the kind's key holds a secret, never shown. */
static bool
key_secret(const struct probe_ops *ops, const char *key)
{
	const char *const	*k;

	for (k = ops->secret_keys; k != NULL && *k != NULL; k++)
		if (strcmp(*k, key) == 0)
			return true;
	return false;
}

/* A key of a probe's kind; false when the kind does not know it either. */
static bool
probe_kind_key(struct parse *p, struct entry *e, void *arg)
{
	struct probe_conf		*pc = arg;
	const struct probe_key_doc	*d;
	const char			*why = "invalid value";
	unsigned			 first;

	if (pc->ops == NULL || pc->kconf == NULL)
		return true;	/* the type error (or out of memory) says it all */
	for (d = pc->ops->keys; d != NULL && d->name != NULL; d++)
		if (strcmp(d->name, e->key) == 0)
			break;
	if (d == NULL || d->name == NULL)
		return false;
	if (!d->repeatable &&
	    (first = config_first_line(p, e->section, e->key, e)) != 0) {
		config_error(p->errs, p->path, e->line,
		    "%s: given twice (first on line %u)", e->key, first);
		return true;
	}
	if (e->value[0] == '\0') {
		config_value_error(p, e, NULL, "empty value");
		p->kind_errors++;
	} else if (pc->ops->conf_set(pc->kconf->conf, e->key, e->value,
	    &why) == -1) {
		/* A secret's value (a conninfo with its password) never shown. */
		if (key_secret(pc->ops, e->key))
			config_error(p->errs, p->path, e->line, "%s: %s",
			    e->key, why);
		else
			config_value_error(p, e, NULL, why);
		p->kind_errors++;
	}
	return true;
}

/*
 * A key of the probe's kind, or a window key of a kind that keeps a
 * window; false when neither knows it.
 */
static bool
probe_other_key(struct parse *p, struct entry *e, void *arg)
{
	struct probe_conf	*pc = arg;

	if (probe_kind_key(p, e, arg))
		return true;
	if (config_find_key(config_window_keys, config_window_nkeys,
	    e->key) == NULL)
		return false;
	if (!pc->ops->windowed) {
		config_error(p->errs, p->path, e->line, "%s: a probe of "
		    "type %s keeps no window (windows are for types %s)",
		    e->key, pc->ops->name, probe_windowed_kind_names());
		return true;
	}
	return config_table_key(p, e, config_window_keys, config_window_nkeys,
	    pc);
}

/* A section's entries as "key=value\n" lines, in file order. */
static char *
section_signature(const struct parse *p, size_t section)
{
	char	*buf = NULL;
	size_t	 len = 0, i;
	FILE	*fp;

	if ((fp = open_memstream(&buf, &len)) == NULL)
		return NULL;
	for (i = 0; i < p->nentries; i++)
		if (p->entries[i].section == section)
			fprintf(fp, "%s=%s\n", p->entries[i].key,
			    p->entries[i].value);
	if (fclose(fp) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* A kind's fresh settings, held once; NULL when out of memory. */
static struct probe_kconf *
kconf_new(const struct probe_ops *ops)
{
	struct probe_kconf	*k;

	if ((k = calloc(1, sizeof(*k))) == NULL)
		return NULL;
	if ((k->conf = ops->conf_new()) == NULL) {
		free(k);
		return NULL;
	}
	k->conf_free = ops->conf_free;
	k->refs = 1;
	return k;
}

void
config_build_probe(struct parse *p, size_t section, struct probe_conf *pc)
{
	const struct section	*sec = &p->sections[section];
	const struct entry	*type = config_find_entry(p, section, "type");
	const char		*why = NULL;
	char			 t1[32], t2[32];
	unsigned		 kind_errors;

	pc->line = sec->line;
	if ((pc->name = strdup(sec->name)) == NULL ||
	    (pc->signature = section_signature(p, section)) == NULL)
		return;
	if (type == NULL)
		config_error(p->errs, p->path, sec->line,
		    "[probe %s]: no type (one of: %s)", sec->name,
		    probe_kind_names());
	else if ((pc->ops = probe_kind(type->value)) == NULL)
		config_error(p->errs, p->path, type->line,
		    "type: unknown probe type '%s'%s%s%s (one of: %s)",
		    type->value, probe_kind_nearest(type->value) ?
		    "; did you mean '" : "", probe_kind_nearest(type->value) ?
		    probe_kind_nearest(type->value) : "",
		    probe_kind_nearest(type->value) ? "'?" : "",
		    probe_kind_names());
	else if ((pc->kconf = kconf_new(pc->ops)) == NULL)
		config_error(p->errs, p->path, sec->line, "out of memory");
	kind_errors = p->kind_errors;
	config_table_apply(p, section, config_probe_keys, config_probe_nkeys,
	    pc, probe_other_key, pc);
	config_table_defaults(p, config_window_keys, config_window_nkeys, pc,
	    section);
	/*
	 * After a bad value or an unknown key (a required one misspelt),
	 * "x is required" would only repeat it.
	 */
	if (pc->kconf != NULL && p->kind_errors == kind_errors &&
	    pc->ops->conf_check(pc->kconf->conf, &why) == -1)
		config_error(p->errs, p->path, sec->line, "[probe %s]: %s",
		    sec->name, why);
	/* An interval that did not parse is 0 and already reported. */
	if (pc->interval_ms != 0 && pc->timeout_ms >= pc->interval_ms) {
		units_format_ms(pc->timeout_ms, t1, sizeof(t1));
		units_format_ms(pc->interval_ms, t2, sizeof(t2));
		config_error(p->errs, p->path, sec->line,
		    "[probe %s]: timeout %s must be below interval %s",
		    sec->name, t1, t2);
	}
	config_check_window(p, section, pc);
}
