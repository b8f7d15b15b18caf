/* [http]'s keys: the status, metrics and health API. */
#include <stddef.h>

#include "config_impl.h"

/* [http]: the status, metrics and health API. */
const struct config_key config_http_keys[] = {
	{ "http", "listen", KEY_HTTP_LISTEN, "127.0.0.1:9506", 0, 0, OFF(http),
	  "Addresses of the HTTP API, comma-separated: ADDR:PORT as for "
	  "[agent] listen, or unix:PATH (callers there see the detail: the "
	  "socket's permissions are the access control); none: no API." },
	{ "http", "token_file", KEY_PATH, NULL, 0, 0, OFF(http.token_file),
	  "A file whose first line is the bearer token that shows the detail "
	  "of /status to TCP callers (Authorization: Bearer TOKEN)." },
	{ "http", "max_connections", KEY_UINT, "256", 1, 65536,
	  OFF(http.max_connections),
	  "API connections open at once (TCP and unix together), never more "
	  "than the descriptor limit leaves after [agent] max_connections "
	  "and 64 for lbagent itself; beyond it, new ones wait in the "
	  "kernel's queue." },
	{ "http", "per_address", KEY_UINT, NULL, 1, 65536,
	  OFF(http.per_address),
	  "API connections one address may hold at once (every unix caller "
	  "counting as one address); default max_connections / 8, at least "
	  "4. Raise it when a proxy in front of the API gathers many callers "
	  "on one address; never more than max_connections." },
	{ "http", "max_rate", KEY_UINT, "500", 0, 1000000,
	  OFF(http.max_rate),
	  "TCP connections the API accepts a second, a quarter of a second's "
	  "at once; past it accepting waits (the kernel queues the rest), so "
	  "that clients asking without pause cannot take the event loop from "
	  "the agent port. Unix sockets are not counted. 0: no limit." },
};
const size_t config_http_nkeys = NKEYS_OF(config_http_keys);
