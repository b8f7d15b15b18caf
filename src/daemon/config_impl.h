/*
 * What the configuration loader's files share (config.c, config_value.c,
 * config_table.c, config_keys_*.c, config_check.c, config_host.c): the key
 * tables' shape, the file as read (sections and their "key = value"
 * entries), and the steps each file provides. Private to the loader.
 */
#ifndef LBAGENT_CONFIG_IMPL_H
#define LBAGENT_CONFIG_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lbagent/daemon/config.h"

enum key_type {
	KEY_DURATION,	/* uint64_t milliseconds */
	KEY_BOOL,	/* bool */
	KEY_UINT,	/* uint64_t */
	KEY_PATH,	/* char *, absolute */
	KEY_LISTEN,	/* a listen array */
	KEY_REACTION,	/* struct reaction */
	KEY_TYPE,	/* a probe's kind */
	KEY_NAMES,	/* a list of probe names */
	KEY_PERCENT,	/* uint64_t, a whole percentage "25%" */
	KEY_MODE,	/* bool automation_off, then bool shadow: "auto", "off"
			   or "shadow" */
	KEY_NAME,	/* char *, a name (letters, digits, '_', '-', '.') */
	KEY_HTTP_LISTEN, /* struct config_http: addresses or unix:PATH */
	KEY_NAME_BUF,	/* char[CONFIG_NAME_MAX + 1], a name */
	KEY_AGENTS,	/* struct config_list of http(s) URLs */
	KEY_SOURCES,	/* struct config_list of http(s), unix:, tcp: */
};

struct config_key {
	const char	*section;
	const char	*name;
	enum key_type	 type;
	const char	*def;
	uint64_t	 min, max;	/* for numbers and durations */
	size_t		 offset;
	const char	*help;
};

#define OFF(f)	offsetof(struct config, f)
#define POFF(f)	offsetof(struct probe_conf, f)
#define TOFF(f)	offsetof(struct transition_conf, f)
#define WOFF(f)	offsetof(struct probe_conf, window.f)
#define DAY_MS	(24ULL * 3600 * 1000)
#define HOUR_MS	(3600ULL * 1000)

#define NKEYS_OF(t)	(sizeof(t) / sizeof((t)[0]))
#define NAME_MAX_LEN	CONFIG_NAME_MAX

/* The tables, one per section's keys (config_keys_*.c). */
extern const struct config_key	config_agent_keys[];		/* [agent] */
extern const size_t		config_agent_nkeys;
extern const struct config_key	config_transition_keys[];	/* and [service] */
extern const size_t		config_transition_nkeys;
extern const struct config_key	config_http_keys[];
extern const size_t		config_http_nkeys;
extern const struct config_key	config_peers_keys[];
extern const size_t		config_peers_nkeys;
extern const struct config_key	config_guard_keys[];		/* and [service] */
extern const size_t		config_guard_nkeys;
extern const struct config_key	config_haproxy_keys[];
extern const size_t		config_haproxy_nkeys;
extern const struct config_key	config_lb_keys[];		/* and [service] */
extern const size_t		config_lb_nkeys;
extern const struct config_key	config_probe_keys[];
extern const size_t		config_probe_nkeys;
extern const struct config_key	config_window_keys[];
extern const size_t		config_window_nkeys;
extern const struct config_key	config_service_keys[];
extern const size_t		config_service_nkeys;

enum section_kind { SEC_AGENT, SEC_PROBE, SEC_SERVICE, SEC_HTTP,
    SEC_PEERS, SEC_HAPROXY, SEC_KINDS };

extern const char *const	config_section_words[];

struct section {
	enum section_kind	 kind;
	char			 name[NAME_MAX_LEN + 1];	/* "" for [agent] */
	unsigned		 line;
	bool			 bad;		/* reported; its keys are ignored */
};

/* One "key = value" line, kept until its section can be interpreted. */
struct entry {
	size_t		 section;
	char		*key, *value;
	unsigned	 line;
};

struct parse {
	struct config		*cfg;
	struct config_errors	*errs;
	const char		*path;
	FILE			*fp;
	unsigned		 lineno;
	unsigned		 bad_line;	/* line the reader already reported */
	struct section		*sections;
	size_t			 nsections;
	struct entry		*entries;
	size_t			 nentries;
	bool			 in_section;
	unsigned		 kind_errors;	/* bad values of probe kinds' keys,
						   unknown keys of probes */
	unsigned		 peers_haproxy_line;
};

/* config.c: "FILE:LINE: message" (line 0: "FILE: message"), quoted safe. */
void	config_error(struct config_errors *, const char *path, unsigned line,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* As config_error, into the warnings: "warning: " first. */
void	config_warning(struct config_errors *, const char *path,
	    unsigned line, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));

/* config_value.c: values by key type. */
const char	*config_type_name(enum key_type);
/* Stores one value through a key table entry into base. */
int		 config_set_value(void *base, const struct config_key *,
		    const char *value, const char **why);
/* Describes a key's range for error messages and the reference. */
void		 config_format_range(const struct config_key *, char *buf,
		    size_t size);
/* Reports a bad value in the one format every key uses (k may be NULL). */
void		 config_value_error(struct parse *, const struct entry *,
		    const struct config_key *k, const char *why);
void		 config_free_list(char **items, size_t n);

/* config_table.c: tables applied to sections. */
const struct config_key	*config_find_key(const struct config_key *table,
			    size_t n, const char *name);
/* The line a key was first given on in a section (before `before`), or 0. */
unsigned	 config_first_line(const struct parse *, size_t section,
		    const char *key, const struct entry *before);
const struct entry	*config_find_entry(const struct parse *,
			    size_t section, const char *key);
void		 config_backend_line(struct parse *, size_t peers,
		    size_t hx);
void		 config_table_defaults(struct parse *,
		    const struct config_key *table, size_t n, void *base,
		    size_t section);
void		 config_table_apply(struct parse *, size_t section,
		    const struct config_key *table, size_t n, void *base,
		    bool (*other)(struct parse *, struct entry *, void *),
		    void *arg);
bool		 config_entry_key(struct parse *, struct entry *,
		    const struct config_key *, void *arg);
bool		 config_table_key(struct parse *, struct entry *,
		    const struct config_key *table, size_t n, void *arg);

/* config_keys_*.c: each section interpreted. */
bool		 config_transition_key(struct parse *, struct entry *,
		    void *arg);
/* An agent's /status URL: 0, or -1 when it does not fit in size. */
int		 config_agent_status_url(const char *base, char *buf,
		    size_t size);
void		 config_build_agent(struct parse *, size_t agent);
void		 config_build_peers(struct parse *, size_t peers, size_t hx);
void		 config_build_probe(struct parse *, size_t section,
		    struct probe_conf *);
void		 config_build_service(struct parse *, size_t section,
		    struct service_conf *);

/* config_check.c: across keys and sections. */
void		 config_check_transitions(struct parse *, size_t section,
		    const struct transition_conf *, const char *where);
void		 config_check_guard(struct parse *, size_t section,
		    const struct transition_conf *, const char *where);
void		 config_check_window(struct parse *, size_t section,
		    const struct probe_conf *);
void		 config_check_peers(struct parse *, size_t peers, size_t hx);
void		 config_check_service_probes(struct parse *);
/* The default service has no probes and no_probes is not set: a warning
 * at the [agent] line (1 without one). */
void		 config_check_default_probes(struct parse *, size_t agent);

/* config_keys_capacity.c: each service's capacity keys, once all are read. */
void		 config_check_capacity(struct parse *);
void		 config_capacity_free(struct capacity_conf *);
bool		 config_capacity_names(const struct capacity_conf *,
		    const char *probe);

/* config_host.c: against this host (warnings). */
void		 config_check_host(struct parse *, size_t http);

#endif
