/*
 * A key table applied to a section: each entry found in the table and set
 * once (a key given twice is an error), the defaults of those not given;
 * and the reference of every table (lbagent --keys).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lbagent/core/suggest.h"
#include "lbagent/probes/probe.h"
#include "config_impl.h"

const struct config_key *
config_find_key(const struct config_key *table, size_t n, const char *name)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

/* The line a key was first given on in a section, or 0. */
unsigned
config_first_line(const struct parse *p, size_t section, const char *key,
    const struct entry *before)
{
	size_t	i;

	for (i = 0; i < p->nentries && &p->entries[i] != before; i++)
		if (p->entries[i].section == section &&
		    strcmp(p->entries[i].key, key) == 0)
			return p->entries[i].line;
	return 0;
}

const struct entry *
config_find_entry(const struct parse *p, size_t section, const char *key)
{
	size_t	i;

	for (i = 0; i < p->nentries; i++)
		if (p->entries[i].section == section &&
		    strcmp(p->entries[i].key, key) == 0)
			return &p->entries[i];
	return NULL;
}

/*
 * Whether e gives again a key given before in its section, said as an
 * error. A line holds LINE_MAX_LEN - 1 characters, seven or eight peer
 * URLs: a list of sources may go on over several lines of its key, each
 * adding to it.
 */
static bool
given_twice(struct parse *p, const struct entry *e, const struct config_key *k)
{
	unsigned	first;

	if (k->type == KEY_AGENTS || k->type == KEY_SOURCES ||
	    (first = config_first_line(p, e->section, e->key, e)) == 0)
		return false;
	config_error(p->errs, p->path, e->line,
	    "%s: given twice (first on line %u)", e->key, first);
	return true;
}

/* Sets e through k; a listen key keeps its line for the bind's errors. */
static void
apply_value(struct parse *p, const struct entry *e, const struct config_key *k,
    void *base)
{
	const char	*why;
	char		*at = (char *)base + k->offset;

	if (config_set_value(base, k, e->value, &why) == -1)
		config_value_error(p, e, k, why);
	else if (k->type == KEY_LISTEN)
		((struct config_listens *)(void *)at)->line = e->line;
	else if (k->type == KEY_HTTP_LISTEN)
		((struct config_http *)(void *)at)->line = e->line;
}

/* Applies a table's defaults for the keys a section did not give. */
void
config_table_defaults(struct parse *p, const struct config_key *table, size_t n,
    void *base, size_t section)
{
	const char	*why;
	size_t		 i;

	for (i = 0; i < n; i++) {
		if (table[i].def == NULL ||
		    config_first_line(p, section, table[i].name, NULL) != 0)
			continue;
		if (config_set_value(base, &table[i], table[i].def, &why) == -1)
			config_error(p->errs, p->path, 0,
			    "internal error: default of %s: %s", table[i].name,
			    why);
	}
}

/* Names for suggest_nearest, from a table, into names[*n..max). */
static void
table_names(const char **names, size_t *n, size_t max,
    const struct config_key *table, size_t count)
{
	size_t	i;

	for (i = 0; i < count && *n < max; i++)
		names[(*n)++] = table[i].name;
}

/*
 * The key of this section's table (of a probe's, its window's and its
 * type's too) that key is likely a typo of, or NULL.
 */
static const char *
near_key(const struct parse *p, size_t section, const struct config_key *table,
    size_t count, const char *key)
{
	const char		*names[256];
	const struct entry	*type;
	const struct probe_ops	*ops;
	size_t			 n = 0, i;

	table_names(names, &n, 256, table, count);
	if (p->sections[section].kind == SEC_PROBE) {
		table_names(names, &n, 256, config_window_keys,
		    config_window_nkeys);
		type = config_find_entry(p, section, "type");
		if (type != NULL && (ops = probe_kind(type->value)) != NULL)
			for (i = 0; ops->keys[i].name != NULL && n < 256; i++)
				names[n++] = ops->keys[i].name;
	}
	return suggest_nearest(key, names, n);
}

/*
 * Sets the entries of one section through a table. Returns the entries
 * the table does not know, for the caller (a probe's kind) to try.
 */
void
config_table_apply(struct parse *p, size_t section,
    const struct config_key *table, size_t n, void *base,
    bool (*other)(struct parse *, struct entry *, void *), void *arg)
{
	const struct config_key	*k;
	size_t			 i;

	for (i = 0; i < p->nentries; i++) {
		struct entry *e = &p->entries[i];

		if (e->section != section)
			continue;
		if ((k = config_find_key(table, n, e->key)) == NULL) {
			if (other == NULL || !other(p, e, arg)) {
				const char *near = near_key(p, section, table,
				    n, e->key);

				config_error(p->errs, p->path, e->line,
				    "unknown key '%s' in [%s%s%s]%s%s%s", e->key,
				    config_section_words[p->sections[section].kind],
				    p->sections[section].name[0] ? " " : "",
				    p->sections[section].name,
				    near ? "; did you mean '" : "",
				    near ? near : "", near ? "'?" : "");
				/* Maybe a required key misspelt: said once. */
				if (p->sections[section].kind == SEC_PROBE)
					p->kind_errors++;
			}
			continue;
		}
		if (!given_twice(p, e, k))
			apply_value(p, e, k, base);
	}
	config_table_defaults(p, table, n, base, section);
}

/* Sets e through k (once per section); false when there is no k. */
bool
config_entry_key(struct parse *p, struct entry *e, const struct config_key *k,
    void *arg)
{
	if (k == NULL)
		return false;
	if (!given_twice(p, e, k))
		apply_value(p, e, k, arg);
	return true;
}

/* Sets e through table if the table knows it; false when it does not. */
bool
config_table_key(struct parse *p, struct entry *e,
    const struct config_key *table, size_t n, void *arg)
{
	return config_entry_key(p, e, config_find_key(table, n, e->key), arg);
}

static void
print_table(FILE *fp, const char *title, const struct config_key *table,
    size_t n)
{
	char	range[80];
	size_t	i;

	fprintf(fp, "%s\n", title);
	for (i = 0; i < n; i++) {
		const struct config_key *k = &table[i];

		config_format_range(k, range, sizeof(range));
		fprintf(fp, "%s (%s, default %s%s%s)\n    %s\n", k->name,
		    config_type_name(k->type), k->def ? k->def : "none",
		    range[0] ? ", " : "", range, k->help);
	}
}

void
config_print_keys(FILE *fp)
{
	const struct probe_key_doc	*d;
	const struct probe_ops		*ops;
	char				 names[512], *save, *name;

	print_table(fp, "[agent]", config_agent_keys, config_agent_nkeys);
	print_table(fp, "\n[agent], and [service NAME] to override for one "
	    "service", config_transition_keys, config_transition_nkeys);
	print_table(fp, "\n[probe NAME], every type", config_probe_keys,
	    config_probe_nkeys);
	snprintf(names, sizeof(names), "\n[probe NAME] of types %s: the "
	    "window", probe_windowed_kind_names());
	print_table(fp, names, config_window_keys, config_window_nkeys);
	snprintf(names, sizeof(names), "%s", probe_kind_names());
	for (name = strtok_r(names, ", ", &save); name != NULL;
	    name = strtok_r(NULL, ", ", &save)) {
		if ((ops = probe_kind(name)) == NULL)
			continue;
		fprintf(fp, "\n[probe NAME] type = %s\n", name);
		for (d = ops->keys; d != NULL && d->name != NULL; d++)
			fprintf(fp, "%s (default %s%s)\n    %s\n", d->name,
			    d->def ? d->def : "none",
			    d->repeatable ? ", repeatable" : "", d->help);
	}
	print_table(fp, "\n[service NAME]", config_service_keys,
	    config_service_nkeys);
	print_table(fp, "\n[http]", config_http_keys, config_http_nkeys);
	print_table(fp, "\n[peers]", config_peers_keys, config_peers_nkeys);
	print_table(fp, "\n[peers], and [service NAME] to override for one "
	    "service", config_guard_keys, config_guard_nkeys);
	print_table(fp, "\n[haproxy]", config_haproxy_keys,
	    config_haproxy_nkeys);
	print_table(fp, "\n[haproxy], and [service NAME] to override for one "
	    "service", config_lb_keys, config_lb_nkeys);
}
