/*
 * Configuration loading. inih splits lines into section, key and value;
 * our line reader counts lines (Debian's inih does not pass line numbers)
 * and reports what inih would only count: lines too long, lines that are
 * not "key = value", unknown sections. The key table does the rest.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <unistd.h>

#include <curl/curl.h>
#include <ini.h>

#include "lbagent/core/addr.h"
#include "lbagent/core/argv.h"
#include "lbagent/core/name.h"
#include "lbagent/core/redact.h"
#include "lbagent/core/service.h"
#include "lbagent/core/units.h"
#include "lbagent/core/window.h"
#include "lbagent/daemon/config.h"
#include "lbagent/daemon/fetch.h"
#include "lbagent/daemon/http_api_token.h"
#include "lbagent/daemon/markers.h"
#include "lbagent/daemon/state.h"
#include "lbagent/probes/probe.h"

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

static const struct config_key config_keys[] = {
	{ "agent", "listen", KEY_LISTEN, "*:9505", 0, 0, OFF(listen),
	  "Addresses for HAProxy's agent checks, comma-separated: *:PORT "
	  "(every IPv4 and IPv6 address), 127.0.0.1:PORT, [::1]:PORT." },
	{ "agent", "state_dir", KEY_PATH, "/var/lib/lbagent", 0, 0,
	  OFF(state_dir),
	  "Directory of the marker files (maint, drain) and of state.json, "
	  "what lbagent owes each load balancer across restarts." },
	{ "agent", "max_connections", KEY_UINT, "1024", 1, 65536,
	  OFF(max_connections),
	  "Agent connections open at once; beyond it, new ones wait in the "
	  "kernel's queue." },
	{ "agent", "reply_reasons", KEY_BOOL, "yes", 0, 0,
	  OFF(reply_reasons),
	  "Add '#reason' to replies (HAProxy shows it in its logs and stats "
	  "page)." },
	{ "agent", "lb_forget_after", KEY_DURATION, "10m", 1000,
	  7ULL * 24 * 3600 * 1000, OFF(lb_forget_after_ms),
	  "Forget a load balancer (source address and agent-send text) not "
	  "seen for this long." },
	{ "agent", "request_timeout", KEY_DURATION, "1s", 10, 2000,
	  OFF(request_timeout_ms),
	  "On a port shared by several services, how long to wait for the "
	  "service name (agent-send) before answering for the default "
	  "service." },
	{ "agent", "proc_root", KEY_PATH, "/proc", 0, 0, OFF(proc_root),
	  "Where probes read /proc from (tests point it at fixed files)." },
	{ "agent", "mode", KEY_MODE, "auto", 0, 0, OFF(automation_off),
	  "auto; off: no automated decision, replies say only '# lbagent "
	  "automation off' so HAProxy keeps what it has (markers still act); "
	  "or shadow: everything runs, but replies carry no state word, only "
	  "'# lbagent shadow: would reply ...' (markers still act). The "
	  "environment variable LBAGENT_MODE replaces it; the markers "
	  "state_dir/off and state_dir/shadow override it, and off, from any "
	  "source, wins over shadow." },
	{ "agent", "node_id", KEY_NAME, NULL, 0, 0, OFF(node_id),
	  "This node's name in status, metrics and for peers; the host name "
	  "when not set." },
};

/* [http]: the status, metrics and health API. */
static const struct config_key http_keys[] = {
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
};

#define TOFF(f)	offsetof(struct transition_conf, f)
#define DAY_MS	(24ULL * 3600 * 1000)
#define HOUR_MS	(3600ULL * 1000)

/* [peers]: whom the peer guard asks. */
static const struct config_key peers_keys[] = {
	{ "peers", "agents", KEY_AGENTS, NULL, 0, 0, OFF(peers.agents),
	  "The other nodes' lbagent HTTP APIs, comma-separated base URLs "
	  "(http://10.0.0.12:9506); their public /status says whether they "
	  "serve. The same list may be used on every node: a node skips "
	  "the answer that carries its own node_id. Each node once: the "
	  "same address twice, credentials aside, is an error. A line holds "
	  "198 characters: give agents again on more lines, each adds to "
	  "the list (64 at most)." },
	{ "peers", "interval", KEY_DURATION, "1s", 100, 60 * 1000,
	  OFF(peers.interval_ms),
	  "How often the peers and load balancers are asked while rounds "
	  "are wanted: a node about to go out, out, or held out by a "
	  "marker, or its /status detail read in the last 10 s. A decision "
	  "that needs a fresh answer asks at once; a node in and healthy "
	  "asks nobody." },
	{ "peers", "suspect_after", KEY_UINT, "3", 1, 100000,
	  OFF(peers.suspect_after),
	  "A peer without a good answer for this many rounds in a row is "
	  "suspect (the fleet view and the /status detail; information "
	  "only, the guard decides as before)." },
	{ "peers", "dead_after", KEY_UINT, "10", 1, 100000,
	  OFF(peers.dead_after),
	  "A peer without a good answer for this many rounds in a row is "
	  "dead; more than suspect_after. Information only." },
};

/*
 * The peer guard's settings: in [peers], and any [service NAME] may
 * override them for that service.
 */
/* [haproxy]: the load balancers' stats, for the guard and the status. */
static const struct config_key haproxy_keys[] = {
	{ "haproxy", "sources", KEY_SOURCES, NULL, 0, 0, OFF(peers.haproxy),
	  "One per load balancer: HAProxy's stats as CSV over HTTP "
	  "(http://lb1:8404/stats;csv) or its Runtime API (unix:/PATH or "
	  "tcp:ADDR:PORT, command 'show stat'), asked in the guard's rounds "
	  "(one query per load balancer, whatever the fleet). What each "
	  "shows for this node's server (status, weight, sessions, queue) "
	  "is in the /status detail, and lbagentctl drain on --wait waits "
	  "on it. The peer guard reads it: without [peers] agents, another "
	  "node serves when another server of the backend is UP with a "
	  "weight above 0 on every load balancer that answered (at least "
	  "one); with agents, a peer serves only if it says so and every "
	  "load balancer that answered shows its server UP with a weight "
	  "above 0. Needs backend. Each load balancer once: the same "
	  "address twice, credentials aside, is an error. May be given "
	  "again on more lines, each adding to the list." },
};

/*
 * This node's server on the load balancers: in [haproxy], and any
 * [service NAME] may override them for that service.
 */
static const struct config_key lb_keys[] = {
	{ "haproxy", "backend", KEY_NAME_BUF, NULL, 0, 0, TOFF(backend),
	  "The backend on the load balancers that this node's server (and "
	  "its peers') are in; required with sources." },
	{ "haproxy", "server", KEY_NAME_BUF, NULL, 0, 0, TOFF(server),
	  "This node's server name in that backend; node_id when not set. "
	  "Shown in the public /status, where peers look it up." },
};

static const struct config_key guard_keys[] = {
	{ "peers", "timeout", KEY_DURATION, "2s", 10, 60 * 1000,
	  TOFF(peer_timeout_ms),
	  "A peer or load balancer that has not answered within this long "
	  "counts as not serving." },
	{ "peers", "alone_grace", KEY_DURATION, "30s", 0, DAY_MS,
	  TOFF(alone_grace_ms),
	  "Out by the rules: come back, although failing, when no other node "
	  "has served for this long." },
	{ "peers", "recheck_after", KEY_DURATION, "1.5s", 0, HOUR_MS,
	  TOFF(recheck_after_ms),
	  "After going out, ask the peers again this soon ..." },
	{ "peers", "just_out", KEY_DURATION, "10s", 0, HOUR_MS,
	  TOFF(just_out_ms),
	  "... and at every evaluation within this long of going out: if no "
	  "other node serves, come back at once and stay in (no automated "
	  "going out) until lbagent restarts." },
};

/*
 * How decisions move ([agent], and any [service NAME] to override them
 * for that service).
 */
static const struct config_key transition_keys[] = {
	{ "agent", "down_after", KEY_DURATION, "30s", 0, DAY_MS,
	  TOFF(down_after_ms),
	  "Go down (or drain, when the rules say drain) only after the target "
	  "has been that bad on every evaluation for this long. Also the "
	  "least time from start-up to going out." },
	{ "agent", "degrade_after", KEY_DURATION, "10s", 0, DAY_MS,
	  TOFF(degrade_after_ms),
	  "Lower the weight only after the target has been that low or lower "
	  "on every evaluation for this long." },
	{ "agent", "up_after", KEY_DURATION, "60s", 0, DAY_MS,
	  TOFF(up_after_ms),
	  "Come back from down or drain only after passing on every "
	  "evaluation for this long; at least down_after." },
	{ "agent", "restore_after", KEY_DURATION, "30s", 0, DAY_MS,
	  TOFF(restore_after_ms),
	  "Raise the weight only after the target has been that high or "
	  "higher on every evaluation for this long." },
	{ "agent", "ramp", KEY_DURATION, "60s", 0, DAY_MS, TOFF(ramp_ms),
	  "Recovery window: back from down or drain, the weight rises "
	  "linearly from ramp_start to the rules' weight over this long "
	  "(steps of 5 points or more, at most one a second); 0 sends the "
	  "full weight at once." },
	{ "agent", "ramp_start", KEY_PERCENT, "25%", 1, 100,
	  TOFF(ramp_start), "The weight a recovery starts at." },
	{ "agent", "flap_limit", KEY_UINT, "3", 0, CONFIG_FLAP_LIMIT_MAX,
	  TOFF(flap_limit),
	  "Flap damping: after going out this many times within flap_window, "
	  "each further up_after doubles (10x at most) until a whole "
	  "flap_window passes without going out; 0 never damps." },
	{ "agent", "flap_window", KEY_DURATION, "10m", 1000, 7 * DAY_MS,
	  TOFF(flap_window_ms), "See flap_limit." },
};

/* Keys every [probe NAME] has, whatever its type. */
static const struct config_key probe_keys[] = {
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

#define WOFF(f)	offsetof(struct probe_conf, window.f)

/* Keys of the probes whose kind keeps a window (ops->windowed). */
static const struct config_key window_keys[] = {
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

/* Keys of a [service NAME]. */
static const struct config_key service_keys[] = {
	{ "service", "probes", KEY_NAMES, NULL, 0, 0, 0,
	  "The probes whose results decide this service, comma-separated." },
	{ "service", "listen", KEY_LISTEN, NULL, 0, 0,
	  offsetof(struct service_conf, listen),
	  "Optional ports of this service alone (HAProxy connects there and "
	  "needs no agent-send); without it, agent-send \"NAME\\n\" on the "
	  "shared port selects the service." },
};

#define NKEYS_OF(t)	(sizeof(t) / sizeof((t)[0]))
#define NKEYS		NKEYS_OF(config_keys)

/* Longest line we accept; inih's own buffer is INI_MAX_LINE. */
#define LINE_MAX_LEN	(INI_MAX_LINE - 1)
#define NAME_MAX_LEN	CONFIG_NAME_MAX

enum section_kind { SEC_AGENT, SEC_PROBE, SEC_SERVICE, SEC_HTTP,
    SEC_PEERS, SEC_HAPROXY, SEC_KINDS };

static const char *const section_words[] = {
	[SEC_AGENT] = "agent",
	[SEC_PROBE] = "probe",
	[SEC_SERVICE] = "service",
	[SEC_HTTP] = "http",
	[SEC_PEERS] = "peers",
	[SEC_HAPROXY] = "haproxy",
};

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
	unsigned		 kind_errors;	/* bad values of probe kinds' keys */
	unsigned		 peers_haproxy_line;
};

/*
 * An error quotes the file: its control and non-ASCII bytes become \xHH,
 * so that no file puts terminal escapes in lbagent -c or the log. dst
 * holds 4 * strlen(src) + 1.
 */
static void
escape_controls(char *dst, const char *src)
{
	static const char	 hex[] = "0123456789abcdef";
	const unsigned char	*s = (const unsigned char *)src;

	for (; *s != '\0'; s++) {
		if (*s >= 0x20 && *s < 0x7f) {
			*dst++ = (char)*s;
			continue;
		}
		*dst++ = '\\';
		*dst++ = 'x';
		*dst++ = hex[*s >> 4];
		*dst++ = hex[*s & 0xf];
	}
	*dst = '\0';
}

static void
add_error(struct config_errors *errs, const char *path, unsigned line,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
add_error(struct config_errors *errs, const char *path, unsigned line,
    const char *fmt, ...)
{
	char		 msg[512], safe[4 * sizeof(msg)], *full, **lines;
	unsigned	*at;
	va_list		 ap;
	int		 n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	escape_controls(safe, msg);
	if (line > 0)
		n = asprintf(&full, "%s:%u: %s", path, line, safe);
	else
		n = asprintf(&full, "%s: %s", path, safe);
	if (n == -1)
		return;
	lines = realloc(errs->lines, (errs->count + 1) * sizeof(*lines));
	if (lines == NULL) {
		free(full);
		return;
	}
	errs->lines = lines;
	at = realloc(errs->at, (errs->count + 1) * sizeof(*at));
	if (at == NULL) {
		free(full);
		return;
	}
	errs->at = at;
	errs->at[errs->count] = line;
	errs->lines[errs->count++] = full;
}

static void
add_warning(struct config_errors *errs, const char *path, unsigned line,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* As add_error, into the warnings: the same quoting, "warning: " first. */
static void
add_warning(struct config_errors *errs, const char *path, unsigned line,
    const char *fmt, ...)
{
	struct config_errors	w = { .lines = errs->warnings,
				    .at = errs->warning_at,
				    .count = errs->nwarnings };
	char			msg[512];
	va_list			ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	add_error(&w, path, line, "warning: %s", msg);
	errs->warnings = w.lines;
	errs->warning_at = w.at;
	errs->nwarnings = w.count;
}

static const char *
type_name(enum key_type t)
{
	switch (t) {
	case KEY_DURATION:	return "duration";
	case KEY_BOOL:		return "boolean";
	case KEY_UINT:		return "number";
	case KEY_PATH:		return "path";
	case KEY_LISTEN:	return "address list";
	case KEY_REACTION:	return "reaction";
	case KEY_TYPE:		return "probe type";
	case KEY_NAMES:		return "name list";
	case KEY_PERCENT:	return "percentage";
	case KEY_MODE:		return "auto, off or shadow";
	case KEY_NAME:		return "name";
	case KEY_HTTP_LISTEN:	return "address list";
	case KEY_NAME_BUF:	return "name";
	case KEY_AGENTS:	return "URL list";
	case KEY_SOURCES:	return "source list";
	}
	return "?";
}

int
config_parse_listen(const char *s, struct config_listen *l, const char **why)
{
	const char	*colon, *host, *port;
	size_t		 hostlen;
	uint64_t	 p;
	char		 buf[64];

	memset(l, 0, sizeof(*l));
	if (strlen(s) >= sizeof(l->text)) {
		*why = "address too long";
		return -1;
	}
	snprintf(l->text, sizeof(l->text), "%s", s);
	if (s[0] == '[') {
		colon = strchr(s, ']');
		if (colon == NULL || colon[1] != ':') {
			*why = "expected [IPv6]:PORT";
			return -1;
		}
		host = s + 1;
		hostlen = (size_t)(colon - host);
		port = colon + 2;
		if (hostlen == 0 || hostlen >= sizeof(buf) ||
		    strspn(host, "0123456789abcdefABCDEF:.") < hostlen) {
			*why = "not a numeric IPv6 address";
			return -1;
		}
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL) {
			*why = "expected ADDR:PORT, e.g. *:9505 or 127.0.0.1:9505";
			return -1;
		}
		host = s;
		hostlen = (size_t)(colon - s);
		port = colon + 1;
		if (hostlen == 1 && host[0] == '*')
			hostlen = 0;
		else if (hostlen == 0 || hostlen >= sizeof(buf) ||
		    strspn(host, "0123456789.") < hostlen ||
		    memchr(host, ':', hostlen) != NULL) {
			*why = "not a numeric IPv4 address, '*' or [IPv6]";
			return -1;
		}
	}
	if (units_uint(port, &p, why) == -1 || p == 0 || p > 65535) {
		*why = "port must be a number from 1 to 65535";
		return -1;
	}
	memcpy(l->host, host, hostlen);
	l->host[hostlen] = '\0';
	snprintf(l->port, sizeof(l->port), "%u", (unsigned)p);
	return 0;
}

/* Splits a comma-separated list; each item trimmed, empty ones kept. */
static int
split_list(const char *value, char ***itemsp, size_t *countp)
{
	char	**items = NULL, **grown, *copy, *item, *end, *next;
	size_t	  n = 0;

	if ((copy = strdup(value)) == NULL)
		return -1;
	for (item = copy; item != NULL; item = next) {
		if ((next = strchr(item, ',')) != NULL)
			*next++ = '\0';
		while (isspace((unsigned char)*item))
			item++;
		end = item + strlen(item);
		while (end > item && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if ((grown = realloc(items, (n + 1) * sizeof(*items))) == NULL)
			goto fail;
		items = grown;
		if ((items[n] = strdup(item)) == NULL)
			goto fail;
		n++;
	}
	free(copy);
	*itemsp = items;
	*countp = n;
	return 0;
fail:
	while (n > 0)
		free(items[--n]);
	free(items);
	free(copy);
	return -1;
}

static void
free_list(char **items, size_t n)
{
	while (n > 0)
		free(items[--n]);
	free(items);
}

/* Splits a comma-separated list of listen addresses. */
static int
parse_listen_list(struct config_listens *ls, const char *value,
    const char **why)
{
	char	**items;
	size_t	  n, i;
	int	  rc = 0;

	if (split_list(value, &items, &n) == -1) {
		*why = "out of memory";
		return -1;
	}
	ls->count = 0;
	if (n == 1 && items[0][0] == '\0')
		n = 0, free(items[0]);
	for (i = 0; i < n && rc == 0; i++) {
		if (ls->count == CONFIG_MAX_LISTEN) {
			*why = "too many addresses (at most 16)";
			rc = -1;
		} else if (items[i][0] == '\0' && n > 1) {
			*why = "an empty address in the list";
			rc = -1;
		} else if (config_parse_listen(items[i], &ls->addr[ls->count],
		    why) == -1)
			rc = -1;
		else
			ls->count++;
	}
	if (rc == 0 && ls->count == 0) {
		*why = "no address given";
		rc = -1;
	}
	free_list(items, n);
	return rc;
}

/* [http] listen: ADDR:PORT or unix:/PATH entries, or "none". */
static int
parse_http_listen(struct config_http *h, const char *value, const char **why)
{
	struct config_listens	 tcp;
	char			**items;
	size_t			 n, i;
	int			 rc = 0;

	h->count = 0;
	if (strcmp(value, "none") == 0)
		return 0;
	if (split_list(value, &items, &n) == -1) {
		*why = "out of memory";
		return -1;
	}
	for (i = 0; i < n && rc == 0; i++) {
		struct config_http_listen *l = &h->addr[h->count];

		memset(l, 0, sizeof(*l));
		if (h->count == CONFIG_MAX_LISTEN) {
			*why = "too many addresses (at most 16)";
			rc = -1;
		} else if (strncmp(items[i], "unix:", 5) == 0) {
			const char *path = items[i] + 5;

			if (path[0] != '/') {
				*why = "unix: needs an absolute path";
				rc = -1;
			} else if (strlen(path) >= sizeof(l->path)) {
				*why = "unix socket path too long";
				rc = -1;
			} else {
				l->is_unix = true;
				snprintf(l->path, sizeof(l->path), "%s", path);
				h->count++;
			}
		} else if (parse_listen_list(&tcp, items[i], why) == 0) {
			l->tcp = tcp.addr[0];
			h->count++;
		} else
			rc = -1;
	}
	free_list(items, n);
	return rc;
}

/* Parses "name, name": valid, distinct names. */
static int
parse_names(struct service_conf *svc, const char *value, const char **why)
{
	char	**items;
	size_t	  n, i, j;

	if (split_list(value, &items, &n) == -1) {
		*why = "out of memory";
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (!name_valid(items[i])) {
			*why = "expected probe names separated by commas";
			free_list(items, n);
			return -1;
		}
		for (j = 0; j < i; j++) {
			if (strcmp(items[i], items[j]) == 0) {
				*why = "a probe is named twice";
				free_list(items, n);
				return -1;
			}
		}
	}
	free_list(svc->probes, svc->nprobes);
	svc->probes = items;
	svc->nprobes = n;
	return 0;
}

int
config_parse_mode(const char *s, int *mode)
{
	if (strcasecmp(s, "auto") == 0)
		*mode = SERVICE_MODE_AUTO;
	else if (strcasecmp(s, "off") == 0)
		*mode = SERVICE_MODE_OFF;
	else if (strcasecmp(s, "shadow") == 0)
		*mode = SERVICE_MODE_SHADOW;
	else
		return -1;
	return 0;
}

int
config_parse_reaction(const char *s, struct reaction *r, const char **why)
{
	double	pct;

	memset(r, 0, sizeof(*r));
	if (strcmp(s, "down") == 0)
		r->kind = REACT_DOWN;
	else if (strcmp(s, "drain") == 0)
		r->kind = REACT_DRAIN;
	else if (strcmp(s, "ignore") == 0)
		r->kind = REACT_IGNORE;
	else if (units_percent(s, &pct, why) == 0 && pct >= 1 && pct <= 99 &&
	    pct == (unsigned)pct) {
		r->kind = REACT_WEIGHT;
		r->weight = (unsigned)pct;
	} else {
		*why = "expected down, drain, ignore or a weight from 1% to 99%";
		return -1;
	}
	return 0;
}

const char *
config_reaction_text(const struct reaction *r, char buf[8])
{
	switch (r->kind) {
	case REACT_DOWN:	return "down";
	case REACT_DRAIN:	return "drain";
	case REACT_IGNORE:	return "ignore";
	case REACT_WEIGHT:	break;
	}
	snprintf(buf, 8, "%u%%", r->weight);
	return buf;
}

/* A number within the key's range, stored through it. */
static int
store_number(void *base, const struct config_key *k, uint64_t u,
    const char **why)
{
	if (u < k->min || u > k->max) {
		*why = "out of range";
		return -1;
	}
	memcpy((char *)base + k->offset, &u, sizeof(u));
	return 0;
}

/* A copy of value, replacing what the key held. */
static int
store_string(void *base, const struct config_key *k, const char *value,
    const char **why)
{
	char	**sp = (char **)(void *)((char *)base + k->offset);

	free(*sp);
	if ((*sp = strdup(value)) == NULL) {
		*why = "out of memory";
		return -1;
	}
	return 0;
}

/*
 * [peers] agents and haproxy: each item a source fetch.h can reach;
 * agents only http(s).
 */
static int
parse_sources(struct config_list *l, const char *value, bool http_only,
    const char **why)
{
	struct fetch_source	 src;
	char			**items, **grown;
	size_t			 n, i;

	if (split_list(value, &items, &n) == -1) {
		*why = "out of memory";
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (items[i][0] == '\0')
			*why = "an empty item in the list";
		else if (l->count + n > CONFIG_PEERS_MAX)
			*why = "too many (at most 64)";
		else if (http_only && strncmp(items[i], "http://", 7) != 0 &&
		    strncmp(items[i], "https://", 8) != 0)
			*why = "expected http:// or https:// URLs";
		else if (fetch_source_parse(items[i], &src, why) == -1)
			;
		else
			continue;	/* twice: check_sources, naming it */
		free_list(items, n);
		return -1;
	}
	/* The key given again adds to the list (see table_apply). */
	if ((grown = realloc(l->items, (l->count + n) * sizeof(*grown))) ==
	    NULL) {
		free_list(items, n);
		*why = "out of memory";
		return -1;
	}
	memcpy(grown + l->count, items, n * sizeof(*items));
	free(items);
	l->items = grown;
	l->count += n;
	return 0;
}

int
config_agent_status_url(const char *base, char *buf, size_t size)
{
	size_t	len = strlen(base);
	int	n;

	n = snprintf(buf, size, "%s%s", base, len > 0 && base[len - 1] == '/' ?
	    "status" : "/status");
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

const char *
config_api_unreachable(const struct config *cfg)
{
	struct addr	 a;
	const char	*why;
	size_t		 i;

	for (i = 0; i < cfg->http.count; i++)
		if (!cfg->http.addr[i].is_unix &&
		    !addr_host_loopback(cfg->http.addr[i].tcp.host))
			return NULL;
	for (i = 0; i < cfg->peers.agents.count; i++)
		if (addr_parse(cfg->peers.agents.items[i], &a, &why) == 0 &&
		    a.kind == ADDR_URL && !addr_host_loopback(a.host))
			return "peer-guard: [http] listen has no address other "
			    "nodes can reach, so they cannot ask this node "
			    "whether it serves (they will count it as not "
			    "serving)";
	return NULL;
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

static const struct entry *find_entry(const struct parse *, size_t,
		    const char *);

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
	const struct entry *e = find_entry(p, section, key);
	size_t		 i, j;

	if (l->count < 2 || e == NULL ||
	    (keys = calloc(l->count, sizeof(*keys))) == NULL)
		return;
	for (i = 0; i < l->count; i++) {
		if (source_key(l->items[i], agent, keys[i], sizeof(keys[i])) == -1)
			continue;
		for (j = 0; j < i; j++) {
			if (keys[j][0] == '\0' || strcmp(keys[i], keys[j]) != 0)
				continue;
			redact_url(l->items[i], shown, sizeof(shown));
			add_error(p->errs, p->path, e->line, "%s: %s given twice "
			    "(items %zu and %zu: the same address, credentials "
			    "aside)", key, shown, j + 1, i + 1);
			break;
		}
	}
	free(keys);
}

/* Stores one value through a key table entry into base. */
static int
set_value(void *base, const struct config_key *k, const char *value,
    const char **why)
{
	uint64_t	 u;
	bool		 b;

	if (*value == '\0') {
		*why = "empty value";
		return -1;
	}
	switch (k->type) {
	case KEY_DURATION:
	case KEY_UINT:
		if ((k->type == KEY_DURATION ? units_duration_ms(value, &u, why) :
		    units_uint(value, &u, why)) == -1)
			return -1;
		return store_number(base, k, u, why);
	case KEY_BOOL:
		if (units_bool(value, &b, why) == -1)
			return -1;
		memcpy((char *)base + k->offset, &b, sizeof(b));
		return 0;
	case KEY_PATH:
		if (value[0] != '/') {
			*why = "must be an absolute path";
			return -1;
		}
		if (strlen(value) >= PATH_MAX - 64) {
			*why = "path too long";
			return -1;
		}
		return store_string(base, k, value, why);
	case KEY_LISTEN:
		return parse_listen_list((struct config_listens *)(void *)
		    ((char *)base + k->offset), value, why);
	case KEY_REACTION:
		return config_parse_reaction(value, (struct reaction *)(void *)
		    ((char *)base + k->offset), why);
	case KEY_NAMES:
		return parse_names(base, value, why);
	case KEY_TYPE:
		return 0;	/* read before the rest of its section */
	case KEY_PERCENT: {
		double pct;

		if (units_percent(value, &pct, why) == -1 ||
		    pct != (uint64_t)pct) {
			*why = "expected a whole percentage such as 25%";
			return -1;
		}
		return store_number(base, k, (uint64_t)pct, why);
	}
	case KEY_NAME:
		if (!name_valid(value)) {
			*why = "must be 1 to 64 letters, digits, '_', '-' or '.'";
			return -1;
		}
		return store_string(base, k, value, why);
	case KEY_HTTP_LISTEN:
		return parse_http_listen((struct config_http *)(void *)
		    ((char *)base + k->offset), value, why);
	case KEY_NAME_BUF:
		if (!name_valid(value)) {
			*why = "must be 1 to 64 letters, digits, '_', '-' or '.'";
			return -1;
		}
		snprintf((char *)base + k->offset, CONFIG_NAME_MAX + 1, "%s",
		    value);
		return 0;
	case KEY_AGENTS:
	case KEY_SOURCES:
		return parse_sources((struct config_list *)(void *)
		    ((char *)base + k->offset), value, k->type == KEY_AGENTS,
		    why);
	case KEY_MODE: {
		int	mode;

		if (config_parse_mode(value, &mode) == -1) {
			*why = "expected auto, off or shadow";
			return -1;
		}
		/* The one KEY_MODE sets both of struct config's. */
		b = mode == SERVICE_MODE_OFF;
		memcpy((char *)base + k->offset, &b, sizeof(b));
		b = mode == SERVICE_MODE_SHADOW;
		memcpy((char *)base + k->offset + offsetof(struct config,
		    shadow) - offsetof(struct config, automation_off), &b,
		    sizeof(b));
		return 0;
	}
	}
	*why = "unknown key type";
	return -1;
}

/* Describes a key's range for error messages and the reference. */
static void
format_range(const struct config_key *k, char *buf, size_t size)
{
	char	lo[32], hi[32];

	buf[0] = '\0';
	if (k->type == KEY_UINT)
		snprintf(buf, size, "%llu to %llu", (unsigned long long)k->min,
		    (unsigned long long)k->max);
	else if (k->type == KEY_PERCENT)
		snprintf(buf, size, "%llu%% to %llu%%", (unsigned long long)k->min,
		    (unsigned long long)k->max);
	else if (k->type == KEY_DURATION) {
		units_format_ms(k->min, lo, sizeof(lo));
		units_format_ms(k->max, hi, sizeof(hi));
		snprintf(buf, size, "%s to %s", lo, hi);
	}
}

/*
 * A list of sources as written, each item's credentials redacted: errors
 * show the list, never a password.
 */
static void
redact_list(const char *value, char *buf, size_t size)
{
	char		 item[1024];
	const char	*p = value, *end;
	size_t		 len = 0, n;

	buf[0] = '\0';
	for (;;) {
		/* The blanks as written, then the item redacted. */
		for (; *p == ' ' || *p == '\t'; p++)
			if (len + 1 < size) {
				buf[len++] = *p;
				buf[len] = '\0';
			}
		end = p + strcspn(p, ",");
		n = (size_t)(end - p) < sizeof(item) ? (size_t)(end - p) :
		    sizeof(item) - 1;
		memcpy(item, p, n);
		item[n] = '\0';
		len += redact_url(item, buf + len, size - len);
		if (len + 1 >= size || *end == '\0')
			break;
		buf[len++] = ',';
		buf[len] = '\0';
		p = end + 1;
	}
}

/* Reports a bad value in the one format every key uses. */
static void
value_error(struct parse *p, const struct entry *e, const struct config_key *k,
    const char *why)
{
	char	range[80], shown[512];

	if (k != NULL && strcmp(why, "out of range") == 0) {
		format_range(k, range, sizeof(range));
		add_error(p->errs, p->path, e->line, "%s: '%s' out of range (%s)",
		    e->key, e->value, range);
	} else if (e->value[0] == '\0')
		add_error(p->errs, p->path, e->line, "%s: %s", e->key, why);
	else if (k != NULL && (k->type == KEY_AGENTS || k->type == KEY_SOURCES)) {
		redact_list(e->value, shown, sizeof(shown));
		add_error(p->errs, p->path, e->line, "%s: %s: '%s'", e->key,
		    why, shown);
	} else
		add_error(p->errs, p->path, e->line, "%s: %s: '%s'", e->key,
		    why, e->value);
}

static const struct config_key *
find_key(const struct config_key *table, size_t n, const char *name)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

/* The line a key was first given on in a section, or 0. */
static unsigned
first_line_of(const struct parse *p, size_t section, const char *key,
    const struct entry *before)
{
	size_t	i;

	for (i = 0; i < p->nentries && &p->entries[i] != before; i++)
		if (p->entries[i].section == section &&
		    strcmp(p->entries[i].key, key) == 0)
			return p->entries[i].line;
	return 0;
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
	    (first = first_line_of(p, e->section, e->key, e)) == 0)
		return false;
	add_error(p->errs, p->path, e->line,
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

	if (set_value(base, k, e->value, &why) == -1)
		value_error(p, e, k, why);
	else if (k->type == KEY_LISTEN)
		((struct config_listens *)(void *)at)->line = e->line;
	else if (k->type == KEY_HTTP_LISTEN)
		((struct config_http *)(void *)at)->line = e->line;
}

/* Applies a table's defaults for the keys a section did not give. */
static void
table_defaults(struct parse *p, const struct config_key *table, size_t n,
    void *base, size_t section)
{
	const char	*why;
	size_t		 i;

	for (i = 0; i < n; i++) {
		if (table[i].def == NULL ||
		    first_line_of(p, section, table[i].name, NULL) != 0)
			continue;
		if (set_value(base, &table[i], table[i].def, &why) == -1)
			add_error(p->errs, p->path, 0,
			    "internal error: default of %s: %s", table[i].name,
			    why);
	}
}

/*
 * Sets the entries of one section through a table. Returns the entries
 * the table does not know, for the caller (a probe's kind) to try.
 */
static void
table_apply(struct parse *p, size_t section, const struct config_key *table,
    size_t n, void *base, bool (*other)(struct parse *, struct entry *, void *),
    void *arg)
{
	const struct config_key	*k;
	size_t			 i;

	for (i = 0; i < p->nentries; i++) {
		struct entry *e = &p->entries[i];

		if (e->section != section)
			continue;
		if ((k = find_key(table, n, e->key)) == NULL) {
			if (other == NULL || !other(p, e, arg))
				add_error(p->errs, p->path, e->line,
				    "unknown key '%s' in [%s%s%s]", e->key,
				    section_words[p->sections[section].kind],
				    p->sections[section].name[0] ? " " : "",
				    p->sections[section].name);
			continue;
		}
		if (!given_twice(p, e, k))
			apply_value(p, e, k, base);
	}
	table_defaults(p, table, n, base, section);
}

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
	    (first = first_line_of(p, e->section, e->key, e)) != 0) {
		add_error(p->errs, p->path, e->line,
		    "%s: given twice (first on line %u)", e->key, first);
		return true;
	}
	if (e->value[0] == '\0') {
		value_error(p, e, NULL, "empty value");
		p->kind_errors++;
	} else if (pc->ops->conf_set(pc->kconf->conf, e->key, e->value,
	    &why) == -1) {
		/* A secret's value (a conninfo with its password) never shown. */
		if (key_secret(pc->ops, e->key))
			add_error(p->errs, p->path, e->line, "%s: %s", e->key,
			    why);
		else
			value_error(p, e, NULL, why);
		p->kind_errors++;
	}
	return true;
}

static bool	table_key(struct parse *, struct entry *,
		    const struct config_key *, size_t, void *);

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
	if (find_key(window_keys, NKEYS_OF(window_keys), e->key) == NULL)
		return false;
	if (!pc->ops->windowed) {
		add_error(p->errs, p->path, e->line, "%s: a probe of type %s "
		    "keeps no window (windows are for types %s)", e->key,
		    pc->ops->name, probe_windowed_kind_names());
		return true;
	}
	return table_key(p, e, window_keys, NKEYS_OF(window_keys), pc);
}

/* Sets e through k (once per section); false when there is no k. */
static bool
entry_key(struct parse *p, struct entry *e, const struct config_key *k,
    void *arg)
{
	if (k == NULL)
		return false;
	if (!given_twice(p, e, k))
		apply_value(p, e, k, arg);
	return true;
}

/* Sets e through table if the table knows it; false when it does not. */
static bool
table_key(struct parse *p, struct entry *e, const struct config_key *table,
    size_t n, void *arg)
{
	return entry_key(p, e, find_key(table, n, e->key), arg);
}

/*
 * A key of transition_keys in [agent] or [service], or of guard_keys in
 * [service]; arg: the transition_conf it goes into.
 */
static bool
transition_key(struct parse *p, struct entry *e, void *arg)
{
	return table_key(p, e, transition_keys, NKEYS_OF(transition_keys),
	    arg) || (p->sections[e->section].kind == SEC_SERVICE &&
	    (table_key(p, e, guard_keys, NKEYS_OF(guard_keys), arg) ||
	    table_key(p, e, lb_keys, NKEYS_OF(lb_keys), arg)));
}

/* The section [haproxy] is, or SIZE_MAX. */
static size_t
haproxy_section(const struct parse *p)
{
	size_t	i;

	for (i = 0; i < p->nsections; i++)
		if (p->sections[i].kind == SEC_HAPROXY && !p->sections[i].bad)
			return i;
	return SIZE_MAX;
}

/*
 * A key of guard_keys in [peers]; arg: the [agent]'s transitions. Before
 * [haproxy], the load balancers were [peers] haproxy, backend and server:
 * still read, with a warning saying where they go now.
 */
static bool
guard_key(struct parse *p, struct entry *e, void *arg)
{
	const char	*now = strcmp(e->key, "haproxy") == 0 ? "sources" :
			    e->key;
	size_t		 hx;

	if (table_key(p, e, guard_keys, NKEYS_OF(guard_keys), arg))
		return true;
	if (strcmp(e->key, "haproxy") != 0 && find_key(lb_keys,
	    NKEYS_OF(lb_keys), e->key) == NULL)
		return false;
	hx = haproxy_section(p);
	if (hx != SIZE_MAX && first_line_of(p, hx, now, NULL) != 0) {
		add_error(p->errs, p->path, e->line, "%s: given in [haproxy] "
		    "as %s too (line %u); keep that one", e->key, now,
		    first_line_of(p, hx, now, NULL));
		return true;
	}
	add_warning(p->errs, p->path, e->line, "[peers] %s is deprecated: "
	    "write it as %s in [haproxy]", e->key, now);
	if (strcmp(e->key, "haproxy") == 0)
		return entry_key(p, e, find_key(haproxy_keys,
		    NKEYS_OF(haproxy_keys), "sources"), p->cfg);
	return table_key(p, e, lb_keys, NKEYS_OF(lb_keys), arg);
}

/* A key of lb_keys in [haproxy]; arg: the [agent]'s transitions. */
static bool
lb_key(struct parse *p, struct entry *e, void *arg)
{
	return table_key(p, e, lb_keys, NKEYS_OF(lb_keys), arg);
}

/*
 * The guard's settings of one service (or of [peers]): the load
 * balancers need a backend, a look again needs to come within just_out.
 */
static void
check_guard(struct parse *p, size_t section, const struct transition_conf *tc,
    const char *where)
{
	unsigned		 line;
	char			 r[32], j[32];

	if (section == SIZE_MAX)
		line = 0;
	else if ((line = first_line_of(p, section, "recheck_after", NULL)) == 0)
		line = p->sections[section].line;
	if (tc->recheck_after_ms > tc->just_out_ms) {
		units_format_ms(tc->recheck_after_ms, r, sizeof(r));
		units_format_ms(tc->just_out_ms, j, sizeof(j));
		add_error(p->errs, p->path, line, "%srecheck_after %s must be "
		    "at most just_out %s", where, r, j);
	}
}

/* "Longer before coming back": up_after may not be below down_after. */
static void
check_transitions(struct parse *p, size_t section,
    const struct transition_conf *tc, const char *where)
{
	char		 u[32], d[32];
	unsigned	 line = first_line_of(p, section, "up_after", NULL);

	if (tc->up_after_ms >= tc->down_after_ms)
		return;
	if (line == 0)
		line = first_line_of(p, section, "down_after", NULL);
	if (line == 0 && section != SIZE_MAX)
		line = p->sections[section].line;
	units_format_ms(tc->up_after_ms, u, sizeof(u));
	units_format_ms(tc->down_after_ms, d, sizeof(d));
	add_error(p->errs, p->path, line, "%sup_after %s must be at least "
	    "down_after %s", where, u, d);
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

static const struct entry *
find_entry(const struct parse *p, size_t section, const char *key)
{
	size_t	i;

	for (i = 0; i < p->nentries; i++)
		if (p->entries[i].section == section &&
		    strcmp(p->entries[i].key, key) == 0)
			return &p->entries[i];
	return NULL;
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
	k->ops = ops;
	k->refs = 1;
	return k;
}

struct probe_kconf *
config_kconf_hold(struct probe_kconf *k)
{
	if (k != NULL)
		k->refs++;
	return k;
}

void
config_kconf_release(struct probe_kconf *k)
{
	if (k == NULL || --k->refs > 0)
		return;
	k->ops->conf_free(k->conf);
	free(k);
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
	add_error(p->errs, p->path, first_line_of(p, section, key, NULL),
	    "[probe %s]: warn_%s %s must be below crit_%s %s",
	    p->sections[section].name, what, w, what, c);
}

/* The window keys together: what needs the window, what it can hold. */
static void
check_window(struct parse *p, size_t section, const struct probe_conf *pc)
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
		for (i = 0; i < NKEYS_OF(window_keys); i++)
			if ((line = first_line_of(p, section,
			    window_keys[i].name, NULL)) != 0)
				add_error(p->errs, p->path, line,
				    "[probe %s]: %s needs window", name,
				    window_keys[i].name);
		return;
	}
	line = first_line_of(p, section, "window", NULL);
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
		add_error(p->errs, p->path,
		    first_line_of(p, section, "samples_per_run", NULL),
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
		add_error(p->errs, p->path, line, "[probe %s]: window %s at "
		    "interval %s keeps up to %zu samples, more than %d",
		    name, t1, t2, cap, WINDOW_MAX_SAMPLES);
	else if (w->min_samples > expected) {
		snprintf(t3, sizeof(t3), "%llu",
		    (unsigned long long)w->samples_per_run);
		if (first_line_of(p, section, "min_samples", NULL) != 0)
			line = first_line_of(p, section, "min_samples", NULL);
		add_error(p->errs, p->path, line, "[probe %s]: window %s holds "
		    "about %llu samples at interval %s and samples_per_run %s: "
		    "fewer than min_samples %llu, it would never judge", name,
		    t1, (unsigned long long)expected, t2, t3,
		    (unsigned long long)w->min_samples);
	}
}

static void
build_probe(struct parse *p, size_t section, struct probe_conf *pc)
{
	const struct section	*sec = &p->sections[section];
	const struct entry	*type = find_entry(p, section, "type");
	const char		*why = NULL;
	char			 t1[32], t2[32];
	unsigned		 kind_errors;

	pc->line = sec->line;
	if ((pc->name = strdup(sec->name)) == NULL ||
	    (pc->signature = section_signature(p, section)) == NULL)
		return;
	if (type == NULL)
		add_error(p->errs, p->path, sec->line,
		    "[probe %s]: no type (one of: %s)", sec->name,
		    probe_kind_names());
	else if ((pc->ops = probe_kind(type->value)) == NULL)
		add_error(p->errs, p->path, type->line,
		    "type: unknown probe type '%s' (one of: %s)", type->value,
		    probe_kind_names());
	else if ((pc->kconf = kconf_new(pc->ops)) == NULL)
		add_error(p->errs, p->path, sec->line, "out of memory");
	kind_errors = p->kind_errors;
	table_apply(p, section, probe_keys, NKEYS_OF(probe_keys), pc,
	    probe_other_key, pc);
	table_defaults(p, window_keys, NKEYS_OF(window_keys), pc, section);
	/* After a bad value, "x is required" would only repeat it. */
	if (pc->kconf != NULL && p->kind_errors == kind_errors &&
	    pc->ops->conf_check(pc->kconf->conf, &why) == -1)
		add_error(p->errs, p->path, sec->line, "[probe %s]: %s",
		    sec->name, why);
	/* An interval that did not parse is 0 and already reported. */
	if (pc->interval_ms != 0 && pc->timeout_ms >= pc->interval_ms) {
		units_format_ms(pc->timeout_ms, t1, sizeof(t1));
		units_format_ms(pc->interval_ms, t2, sizeof(t2));
		add_error(p->errs, p->path, sec->line,
		    "[probe %s]: timeout %s must be below interval %s",
		    sec->name, t1, t2);
	}
	check_window(p, section, pc);
}

static void
build_service(struct parse *p, size_t section, struct service_conf *svc)
{
	const struct section	*sec = &p->sections[section];

	char			 where[NAME_MAX_LEN + 16];

	svc->line = sec->line;
	if ((svc->name = strdup(sec->name)) == NULL)
		return;
	svc->transitions = p->cfg->transitions;
	table_apply(p, section, service_keys, NKEYS_OF(service_keys), svc,
	    transition_key, &svc->transitions);
	snprintf(where, sizeof(where), "[service %s]: ", sec->name);
	check_transitions(p, section, &svc->transitions, where);
	check_guard(p, section, &svc->transitions, where);
	if (find_entry(p, section, "probes") == NULL)
		add_error(p->errs, p->path, sec->line,
		    "[service %s]: no probes (probes = name, name, ...)",
		    sec->name);
}

/* Every probe a service names must exist. */
static void
check_service_probes(struct parse *p)
{
	struct config	*cfg = p->cfg;
	size_t		 i, j, s;

	for (i = 0, s = 0; i < p->nsections; i++) {
		const struct entry *e;

		if (p->sections[i].kind != SEC_SERVICE || p->sections[i].bad)
			continue;
		e = find_entry(p, i, "probes");
		for (j = 0; e != NULL && j < cfg->services[s].nprobes; j++)
			if (config_probe(cfg, cfg->services[s].probes[j]) == NULL)
				add_error(p->errs, p->path, e->line,
				    "probes: no [probe %s] section",
				    cfg->services[s].probes[j]);
		s++;
	}
}

/*
 * What this host says of an exec probe: a program given by absolute path
 * that is not here, and a user switch lbagent cannot make unless it runs
 * as root. Both may be right where lbagent will run (another host, the
 * program installed later, lbagent started as root): warnings.
 */
static void
check_exec_host(struct parse *p, size_t section)
{
	const struct entry	*type = find_entry(p, section, "type");
	const struct entry	*cmd = find_entry(p, section, "command");
	const struct entry	*user = find_entry(p, section, "user");
	const char		*why;
	char			**argv;
	struct stat		 st;

	if (type == NULL || strcmp(type->value, "exec") != 0)
		return;
	if (cmd != NULL && argv_split(cmd->value, &argv, &why) != -1) {
		if (argv[0][0] == '/' && stat(argv[0], &st) == -1)
			add_warning(p->errs, p->path, cmd->line,
			    "command: no %s on this host (%s); the probe is "
			    "crit until there is", argv[0], strerror(errno));
		else if (argv[0][0] == '/' && (!S_ISREG(st.st_mode) ||
		    access(argv[0], X_OK) == -1))
			add_warning(p->errs, p->path, cmd->line,
			    "command: %s is not an executable file on this "
			    "host; the probe is crit until it is", argv[0]);
		argv_free(argv);
	}
	if (user != NULL && user->value[0] != '\0' && geteuid() != 0)
		add_warning(p->errs, p->path, user->line,
		    "user = %s needs lbagent to run as root, and it does not "
		    "here (the packages' unit runs it as the user lbagent): "
		    "the probe is crit, \"cannot run as user\"", user->value);
}

/*
 * The [http] files: a token_file the daemon cannot read (it starts, but
 * TCP callers get only the public /status), and a unix socket whose
 * directory is not there (the packages make /run/lbagent; until it
 * exists, lbagent cannot bind the socket and does not start).
 */
static void
check_http_host(struct parse *p, size_t section)
{
	const struct config_http	*h = &p->cfg->http;
	const struct entry		*e;
	const char			*why, *what;
	char				 token[HTTP_TOKEN_MAX + 1], dir[108];
	char				*slash;
	struct stat			 st;
	size_t				 i;

	if (h->token_file != NULL && http_api_token_read(h->token_file, token,
	    &why) == -1) {
		e = section != SIZE_MAX ? find_entry(p, section, "token_file") :
		    NULL;
		add_warning(p->errs, p->path, e != NULL ? e->line : 0,
		    "token_file %s: %s; TCP callers would get only the public "
		    "part of /status", h->token_file, why);
	}
	explicit_bzero(token, sizeof(token));
	e = section != SIZE_MAX ? find_entry(p, section, "listen") : NULL;
	for (i = 0; i < h->count; i++) {
		if (!h->addr[i].is_unix)
			continue;
		snprintf(dir, sizeof(dir), "%s", h->addr[i].path);
		if ((slash = strrchr(dir, '/')) == NULL)
			continue;
		slash[slash == dir ? 1 : 0] = '\0';
		if (stat(dir, &st) == -1)
			what = errno == ENOENT ? "does not exist" :
			    strerror(errno);
		else if (!S_ISDIR(st.st_mode))
			what = "is not a directory";
		else
			continue;
		add_warning(p->errs, p->path, e != NULL ? e->line : 0,
		    "listen: unix:%s: the directory %s %s on this host; "
		    "lbagent cannot make the socket, and does not start, "
		    "until it is there", h->addr[i].path, dir, what);
	}
}

/* What the probe's kind says its settings will cost here (conf_warning). */
static void
check_kind_host(struct parse *p, size_t section, const struct probe_conf *pc)
{
	const struct entry	*e;
	const char		*msg, *key = NULL;

	if (pc->ops == NULL || pc->kconf == NULL ||
	    pc->ops->conf_warning == NULL ||
	    (msg = pc->ops->conf_warning(pc->kconf->conf, &key)) == NULL)
		return;
	e = key != NULL ? find_entry(p, section, key) : NULL;
	add_warning(p->errs, p->path, e != NULL ? e->line :
	    p->sections[section].line, "%s", msg);
}

/*
 * The checks of the file against this host, for lbagent -c and for the
 * daemon at each start and reload: what would fail at run time that the
 * file alone cannot tell.
 */
static void
check_host(struct parse *p, size_t http)
{
	size_t	i, n = 0;

	for (i = 0; i < p->nsections; i++)
		if (!p->sections[i].bad && p->sections[i].kind == SEC_PROBE) {
			check_exec_host(p, i);
			/* build() made one probe per good probe section. */
			if (n < p->cfg->nprobes)
				check_kind_host(p, i, &p->cfg->probes[n++]);
		}
	check_http_host(p, http);
}

/* Interprets every section now that all of them are known. */
static void
build(struct parse *p)
{
	struct config	*cfg = p->cfg;
	size_t		 i, np = 0, ns = 0, agent = SIZE_MAX, http = SIZE_MAX;
	size_t		 peers = SIZE_MAX, hx = SIZE_MAX;
	char		 host[256];

	for (i = 0; i < p->nsections; i++) {
		if (p->sections[i].bad)
			continue;
		if (p->sections[i].kind == SEC_PROBE)
			np++;
		else if (p->sections[i].kind == SEC_SERVICE)
			ns++;
		else if (p->sections[i].kind == SEC_HTTP)
			http = i;
		else if (p->sections[i].kind == SEC_PEERS)
			peers = i;
		else if (p->sections[i].kind == SEC_HAPROXY)
			hx = i;
		else if (agent == SIZE_MAX)
			agent = i;
	}
	cfg->probes = calloc(np ? np : 1, sizeof(*cfg->probes));
	cfg->services = calloc(ns ? ns : 1, sizeof(*cfg->services));
	if (cfg->probes == NULL || cfg->services == NULL) {
		add_error(p->errs, p->path, 0, "out of memory");
		return;
	}
	/* [agent] may be absent: its defaults still apply. */
	table_apply(p, agent, config_keys, NKEYS, cfg, transition_key,
	    &cfg->transitions);
	table_defaults(p, transition_keys, NKEYS_OF(transition_keys),
	    &cfg->transitions, agent);
	check_transitions(p, agent, &cfg->transitions, "");
	if (cfg->node_id == NULL) {
		if (gethostname(host, sizeof(host)) == -1 || host[0] == '\0')
			snprintf(host, sizeof(host), "localhost");
		host[sizeof(host) - 1] = '\0';
		host[strcspn(host, " \t\r\n")] = '\0';
		if ((cfg->node_id = strdup(host)) == NULL)
			add_error(p->errs, p->path, 0, "out of memory");
	}
	table_apply(p, http, http_keys, NKEYS_OF(http_keys), cfg, NULL, NULL);
	/* Before the services, which start from [peers]' guard settings. */
	table_apply(p, peers, peers_keys, NKEYS_OF(peers_keys), cfg, guard_key,
	    &cfg->transitions);
	table_defaults(p, guard_keys, NKEYS_OF(guard_keys), &cfg->transitions,
	    peers);
	/* After [peers], whose deprecated haproxy keys it checks. */
	table_apply(p, hx, haproxy_keys, NKEYS_OF(haproxy_keys), cfg, lb_key,
	    &cfg->transitions);
	if (peers != SIZE_MAX)
		check_sources(p, peers, "agents", &cfg->peers.agents, true);
	if (hx != SIZE_MAX && first_line_of(p, hx, "sources", NULL) != 0) {
		p->peers_haproxy_line = first_line_of(p, hx, "sources", NULL);
		check_sources(p, hx, "sources", &cfg->peers.haproxy, false);
	} else if (peers != SIZE_MAX) {
		p->peers_haproxy_line = first_line_of(p, peers, "haproxy", NULL);
		check_sources(p, peers, "haproxy", &cfg->peers.haproxy, false);
	}
	if (cfg->peers.haproxy.count > 0 &&
	    cfg->transitions.backend[0] == '\0')
		add_error(p->errs, p->path, p->peers_haproxy_line,
		    "the load balancers need backend in [haproxy] (this "
		    "node's backend on them)");
	if (cfg->peers.dead_after <= cfg->peers.suspect_after) {
		unsigned line = first_line_of(p, peers, "dead_after", NULL);

		add_error(p->errs, p->path, line != 0 ? line :
		    first_line_of(p, peers, "suspect_after", NULL),
		    "dead_after must be more than suspect_after (rounds)");
	}
	check_guard(p, peers, &cfg->transitions, "");
	for (i = 0; i < p->nsections; i++) {
		if (p->sections[i].bad)
			continue;
		if (p->sections[i].kind == SEC_PROBE)
			build_probe(p, i, &cfg->probes[cfg->nprobes++]);
		else if (p->sections[i].kind == SEC_SERVICE)
			build_service(p, i, &cfg->services[cfg->nservices++]);
	}
	check_service_probes(p);
	check_host(p, http);
}

static int
config_ini_handler(void *user, const char *section, const char *name,
    const char *value)
{
	struct parse	*p = user;
	struct entry	*grown, *e;

	(void)section;
	if (p->bad_line == p->lineno)
		return 1;
	if (!p->in_section) {
		add_error(p->errs, p->path, p->lineno,
		    "%s: key outside any section (expected [agent] first)",
		    name);
		return 1;
	}
	if (p->sections[p->nsections - 1].bad)
		return 1;
	grown = realloc(p->entries, (p->nentries + 1) * sizeof(*grown));
	if (grown == NULL)
		return 0;
	p->entries = grown;
	e = &p->entries[p->nentries];
	e->section = p->nsections - 1;
	e->line = p->lineno;
	e->key = strdup(name);
	e->value = strdup(value);
	if (e->key == NULL || e->value == NULL) {
		free(e->key);
		free(e->value);
		return 0;
	}
	p->nentries++;
	return 1;
}

static bool
named_section(int k)
{
	return k == SEC_PROBE || k == SEC_SERVICE;
}

/* Checks a section header ("[agent]", "[probe NAME]", "[service NAME]"). */
static void
section_line(struct parse *p, const char *s)
{
	const char	*end = strchr(s, ']');
	struct section	 sec, *grown;
	char		 head[NAME_MAX_LEN * 2 + 16], word[16], why[256];
	size_t		 len, i;
	int		 n, k;

	memset(&sec, 0, sizeof(sec));
	sec.line = p->lineno;
	sec.bad = true;
	p->in_section = true;
	len = end ? (size_t)(end - s - 1) : 0;
	if (end == NULL)
		add_error(p->errs, p->path, p->lineno,
		    "section header without ']'");
	else if (len >= sizeof(head))
		add_error(p->errs, p->path, p->lineno, "section name too long");
	else {
		memcpy(head, s + 1, len);
		head[len] = '\0';
		n = sscanf(head, "%15s %64s", word, sec.name);
		for (k = 0; k < SEC_KINDS; k++)
			if (n >= 1 && strcmp(word, section_words[k]) == 0)
				break;
		sec.kind = (enum section_kind)k;
		if (n < 1 || k == SEC_KINDS)
			add_error(p->errs, p->path, p->lineno,
			    "unknown section [%s] (known: [agent], [probe NAME], "
			    "[service NAME], [http], [peers], [haproxy])", head);
		else if (!named_section(k) && n != 1)
			add_error(p->errs, p->path, p->lineno,
			    "[%s] takes no name", word);
		else if (named_section(k) && (n != 2 ||
		    !name_valid(sec.name) ||
		    strlen(word) + 1 + strlen(sec.name) != strlen(head)))
			add_error(p->errs, p->path, p->lineno,
			    "[%s NAME]: NAME must be 1 to %d letters, digits, "
			    "'_', '-' or '.'", word, NAME_MAX_LEN);
		else if (k == SEC_SERVICE &&
		    name_service(sec.name, why, sizeof(why)) == -1)
			add_error(p->errs, p->path, p->lineno, "[service %s]: %s",
			    sec.name, why);
		else
			sec.bad = false;
	}
	for (i = 0; !sec.bad && i < p->nsections; i++) {
		if (p->sections[i].bad || p->sections[i].kind != sec.kind ||
		    strcmp(p->sections[i].name, sec.name) != 0)
			continue;
		add_error(p->errs, p->path, p->lineno,
		    "[%s%s%s] given twice (first on line %u)",
		    section_words[sec.kind], sec.name[0] ? " " : "", sec.name,
		    p->sections[i].line);
		sec.bad = true;
	}
	if ((grown = realloc(p->sections, (p->nsections + 1) *
	    sizeof(*grown))) == NULL)
		return;
	p->sections = grown;
	p->sections[p->nsections++] = sec;
}

/*
 * inih's line reader. Counts lines and reports problems inih would only
 * return as "the first bad line": every one gets its own message here.
 */
static char *
config_ini_reader(char *str, int num, void *stream)
{
	struct parse	*p = stream;
	size_t		 len;
	const char	*s, *eq, *colon;
	int		 c;

	if (fgets(str, num, p->fp) == NULL)
		return NULL;
	p->lineno++;
	len = strlen(str);
	if (len > 0 && str[len - 1] != '\n' && !feof(p->fp)) {
		add_error(p->errs, p->path, p->lineno,
		    "line too long (at most %d characters)", LINE_MAX_LEN - 1);
		p->bad_line = p->lineno;
		while ((c = fgetc(p->fp)) != EOF && c != '\n')
			;
		str[0] = '\0';		/* inih sees a blank line */
		return str;
	}
	for (s = str; isspace((unsigned char)*s); s++)
		;
	if (*s == '\0' || *s == ';' || *s == '#')
		return str;
	if (*s == '[') {
		section_line(p, s);
		return str;
	}
	if (s != str) {
		add_error(p->errs, p->path, p->lineno,
		    "continuation lines are not supported; keep a value on one "
		    "line");
		p->bad_line = p->lineno;
		str[0] = '\0';
		return str;
	}
	eq = strchr(s, '=');
	colon = strchr(s, ':');
	if (colon != NULL && (eq == NULL || colon < eq)) {
		/* inih would split at ':'; "listen: x" is not our syntax. */
		add_error(p->errs, p->path, p->lineno,
		    "expected 'key = value' (':' is not a separator)");
		p->bad_line = p->lineno;
		str[0] = '\0';
	} else if (eq == NULL) {
		add_error(p->errs, p->path, p->lineno,
		    "expected 'key = value'");
		p->bad_line = p->lineno;
		str[0] = '\0';
	}
	return str;
}

/* Errors in file order: lines are read first, sections interpreted after. */
static void
sort_errors(struct config_errors *errs)
{
	size_t		 i, j;
	unsigned	 at;
	char		*line;

	for (i = 1; i < errs->count; i++) {
		for (j = i; j > 0 && errs->at[j - 1] > errs->at[j]; j--) {
			at = errs->at[j];
			errs->at[j] = errs->at[j - 1];
			errs->at[j - 1] = at;
			line = errs->lines[j];
			errs->lines[j] = errs->lines[j - 1];
			errs->lines[j - 1] = line;
		}
	}
}

static void
sort_warnings(struct config_errors *errs)
{
	struct config_errors	w = { .lines = errs->warnings,
				    .at = errs->warning_at,
				    .count = errs->nwarnings };

	sort_errors(&w);
}

static void
parse_free(struct parse *p)
{
	size_t	i;

	for (i = 0; i < p->nentries; i++) {
		free(p->entries[i].key);
		free(p->entries[i].value);
	}
	free(p->entries);
	free(p->sections);
}

struct config *
config_load(const char *path, struct config_errors *errs)
{
	struct parse	 p;
	struct config	*cfg;

	memset(errs, 0, sizeof(*errs));
	memset(&p, 0, sizeof(p));
	if ((cfg = calloc(1, sizeof(*cfg))) == NULL ||
	    (cfg->path = strdup(path)) == NULL) {
		add_error(errs, path, 0, "out of memory");
		config_free(cfg);
		return NULL;
	}
	p.cfg = cfg;
	p.errs = errs;
	p.path = path;
	if ((p.fp = fopen(path, "re")) == NULL) {
		add_error(errs, path, 0, "cannot open: %s", strerror(errno));
		config_free(cfg);
		return NULL;
	}
	/* Line problems were reported by the reader; inih's count adds nothing. */
	if (ini_parse_stream(config_ini_reader, &p, config_ini_handler, &p) == -2)
		add_error(errs, path, 0, "out of memory");
	if (ferror(p.fp))
		add_error(errs, path, 0, "read error: %s", strerror(errno));
	fclose(p.fp);
	build(&p);
	parse_free(&p);
	sort_errors(errs);
	sort_warnings(errs);
	if (errs->count > 0) {
		config_free(cfg);
		return NULL;
	}
	return cfg;
}

const struct probe_conf *
config_probe(const struct config *cfg, const char *name)
{
	size_t	i;

	for (i = 0; i < cfg->nprobes; i++)
		if (cfg->probes[i].name != NULL &&
		    strcmp(cfg->probes[i].name, name) == 0)
			return &cfg->probes[i];
	return NULL;
}

void
config_free(struct config *cfg)
{
	size_t	i;

	if (cfg == NULL)
		return;
	for (i = 0; i < cfg->nprobes; i++) {
		config_kconf_release(cfg->probes[i].kconf);
		free(cfg->probes[i].name);
		free(cfg->probes[i].signature);
	}
	free(cfg->probes);
	for (i = 0; i < cfg->nservices; i++) {
		free(cfg->services[i].name);
		free_list(cfg->services[i].probes, cfg->services[i].nprobes);
	}
	free(cfg->services);
	free(cfg->path);
	free(cfg->state_dir);
	free(cfg->proc_root);
	free(cfg->node_id);
	free(cfg->http.token_file);
	free_list(cfg->peers.agents.items, cfg->peers.agents.count);
	free_list(cfg->peers.haproxy.items, cfg->peers.haproxy.count);
	free(cfg);
}

void
config_errors_free(struct config_errors *errs)
{
	size_t	i;

	for (i = 0; i < errs->count; i++)
		free(errs->lines[i]);
	free(errs->lines);
	free(errs->at);
	errs->lines = NULL;
	errs->at = NULL;
	errs->count = 0;
	for (i = 0; i < errs->nwarnings; i++)
		free(errs->warnings[i]);
	free(errs->warnings);
	free(errs->warning_at);
	errs->warnings = NULL;
	errs->warning_at = NULL;
	errs->nwarnings = 0;
}

void
config_errors_print(FILE *fp, const struct config_errors *errs)
{
	size_t	e = 0, w = 0;

	/* One list in file order; on one line, the error first. */
	while (e < errs->count || w < errs->nwarnings) {
		if (w == errs->nwarnings || (e < errs->count &&
		    errs->at[e] <= errs->warning_at[w]))
			fprintf(fp, "%s\n", errs->lines[e++]);
		else
			fprintf(fp, "%s\n", errs->warnings[w++]);
	}
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

		format_range(k, range, sizeof(range));
		fprintf(fp, "%s (%s, default %s%s%s)\n    %s\n", k->name,
		    type_name(k->type), k->def ? k->def : "none",
		    range[0] ? ", " : "", range, k->help);
	}
}

void
config_print_keys(FILE *fp)
{
	const struct probe_key_doc	*d;
	const struct probe_ops		*ops;
	char				 names[512], *save, *name;

	print_table(fp, "[agent]", config_keys, NKEYS);
	print_table(fp, "\n[agent], and [service NAME] to override for one "
	    "service", transition_keys, NKEYS_OF(transition_keys));
	print_table(fp, "\n[probe NAME], every type", probe_keys,
	    NKEYS_OF(probe_keys));
	snprintf(names, sizeof(names), "\n[probe NAME] of types %s: the "
	    "window", probe_windowed_kind_names());
	print_table(fp, names, window_keys, NKEYS_OF(window_keys));
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
	print_table(fp, "\n[service NAME]", service_keys,
	    NKEYS_OF(service_keys));
	print_table(fp, "\n[http]", http_keys, NKEYS_OF(http_keys));
	print_table(fp, "\n[peers]", peers_keys, NKEYS_OF(peers_keys));
	print_table(fp, "\n[peers], and [service NAME] to override for one "
	    "service", guard_keys, NKEYS_OF(guard_keys));
	print_table(fp, "\n[haproxy]", haproxy_keys, NKEYS_OF(haproxy_keys));
	print_table(fp, "\n[haproxy], and [service NAME] to override for one "
	    "service", lb_keys, NKEYS_OF(lb_keys));
}

bool
config_peers_on(const struct config *cfg)
{
	return cfg->peers.agents.count > 0 || cfg->peers.haproxy.count > 0;
}

const char *
config_server(const struct config *cfg, const struct transition_conf *tc)
{
	return tc->server[0] != '\0' ? tc->server : cfg->node_id;
}
