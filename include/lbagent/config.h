/*
 * The configuration: one table of keys drives parsing, validation, -c and
 * the reference documentation. A struct config is immutable once loaded;
 * a reload builds a new one.
 */
#ifndef LBAGENT_CONFIG_H
#define LBAGENT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CONFIG_DEFAULT_PATH	"/etc/lbagent/lbagent.conf"
#define CONFIG_MAX_LISTEN	16

/* One listen address as written: host NULL means every address. */
struct config_listen {
	char	host[64];	/* numeric address, or "" for '*' */
	char	port[8];
	char	text[80];	/* as the user wrote it, for logs */
};

struct config {
	char			*path;
	struct config_listen	 listen[CONFIG_MAX_LISTEN];
	size_t			 nlisten;
	char			*state_dir;
	uint64_t		 max_connections;
	bool			 reply_reasons;
	uint64_t		 lb_forget_after_ms;
};

/* Errors found while loading, each "FILE:LINE: message", in file order. */
struct config_errors {
	char	**lines;
	size_t	  count;
};

/*
 * Loads path. Returns the configuration, or NULL with every problem in
 * errs (which the caller frees with config_errors_free either way).
 */
struct config	*config_load(const char *path, struct config_errors *errs);
void		 config_free(struct config *);
void		 config_errors_free(struct config_errors *);

/* Prints the key reference (section, key, type, default, range, help). */
void		 config_print_keys(FILE *);

/* Parses "ADDR:PORT" ("*:9505", "127.0.0.1:9505", "[::1]:9505"). */
int		 config_parse_listen(const char *s, struct config_listen *,
		    const char **why);

#endif
