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

#include "lbagent/core/settings.h"

/*
 * Errors found while loading, each "FILE:LINE: message", in file order;
 * and warnings, "FILE:LINE: warning: message": what this host says of the
 * file (a program or directory missing here, a user switch that needs
 * root) but that may be right where lbagent runs. Warnings never make
 * config_load fail; lbagent -c prints them and the daemon logs them.
 */
struct config_errors {
	char		**lines;
	unsigned	 *at;		/* each one's line, 0 for the file */
	size_t		  count;
	char		**warnings;
	unsigned	 *warning_at;
	size_t		  nwarnings;
};

/*
 * Loads path. Returns the configuration, or NULL with every problem in
 * errs (which the caller frees with config_errors_free either way).
 */
struct config	*config_load(const char *path, struct config_errors *errs);
void		 config_free(struct config *);
void		 config_errors_free(struct config_errors *);
/* Errors and warnings, one a line in file order, as lbagent -c prints them. */
void		 config_errors_print(FILE *, const struct config_errors *);

/* Prints the key reference (section, key, type, default, range, help). */
void		 config_print_keys(FILE *);

/* True when [peers] names other nodes: the peer guard is on (peers.on). */
bool		 config_peers_on(const struct config *);
/*
 * The other nodes read this node's public /status: with peers on other
 * hosts and an [http] listen only on loopback (the default), none can.
 * The warning to log once, or NULL.
 */
const char	*config_api_unreachable(const struct config *);
/* The service's server name on the load balancers (node_id by default). */
const char	*config_server(const struct config *,
		    const struct transition_conf *);

/* The probe or service of that name; NULL when there is none. */
const struct probe_conf	*config_probe(const struct config *, const char *name);
/*
 * Whether a [service] names the probe, in probes or as a capacity input
 * (else it is the default service's).
 */
bool		 config_probe_named(const struct config *, const char *probe);

/* "auto", "off" or "shadow", any case, as a service_mode; -1 otherwise. */
int		 config_parse_mode(const char *s, int *mode);

/* "down", "drain", "ignore" or "NN%" (1-99). */
int		 config_parse_reaction(const char *s, struct reaction *,
		    const char **why);
/* Writes a reaction as the config reads it. */
const char	*config_reaction_text(const struct reaction *, char buf[8]);

/* Parses "ADDR:PORT" ("*:9505", "127.0.0.1:9505", "[::1]:9505"). */
int		 config_parse_listen(const char *s, struct config_listen *,
		    const char **why);

#endif
