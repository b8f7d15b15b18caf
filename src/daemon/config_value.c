/*
 * What each type of key accepts: the value parsers (durations, numbers,
 * listen addresses, names, reactions, source lists) behind
 * config_set_value, and the one format every bad value is reported in.
 */
#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lbagent/core/name.h"
#include "lbagent/core/redact.h"
#include "lbagent/core/service.h"
#include "lbagent/core/units.h"
#include "lbagent/daemon/fetch.h"
#include "config_impl.h"

const char *
config_type_name(enum key_type t)
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

void
config_free_list(char **items, size_t n)
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
	config_free_list(items, n);
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
	config_free_list(items, n);
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
			config_free_list(items, n);
			return -1;
		}
		for (j = 0; j < i; j++) {
			if (strcmp(items[i], items[j]) == 0) {
				*why = "a probe is named twice";
				config_free_list(items, n);
				return -1;
			}
		}
	}
	config_free_list(svc->probes, svc->nprobes);
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
		config_free_list(items, n);
		return -1;
	}
	/* The key given again adds to the list (see config_table_apply). */
	if ((grown = realloc(l->items, (l->count + n) * sizeof(*grown))) ==
	    NULL) {
		config_free_list(items, n);
		*why = "out of memory";
		return -1;
	}
	memcpy(grown + l->count, items, n * sizeof(*items));
	free(items);
	l->items = grown;
	l->count += n;
	return 0;
}

/* A duration, a number or a whole percentage, within the key's range. */
static int
set_number(void *base, const struct config_key *k, const char *value,
    const char **why)
{
	uint64_t	u;
	char		digits[32];
	size_t		len = strlen(value);

	/* Whole, and over 100% where the key's range allows (a weight's). */
	if (k->type == KEY_PERCENT) {
		if (len < 2 || len >= sizeof(digits) || value[len - 1] != '%')
			goto not_pct;
		memcpy(digits, value, len - 1);
		digits[len - 1] = '\0';
		if (units_uint(digits, &u, why) == -1)
			goto not_pct;
		return store_number(base, k, u, why);
	}
	if ((k->type == KEY_DURATION ? units_duration_ms(value, &u, why) :
	    units_uint(value, &u, why)) == -1)
		return -1;
	return store_number(base, k, u, why);
not_pct:
	*why = "expected a whole percentage such as 25%";
	return -1;
}

/* An absolute path that fits, or a name: a copy of value. */
static int
set_string(void *base, const struct config_key *k, const char *value,
    const char **why)
{
	if (k->type == KEY_NAME) {
		if (!name_valid(value)) {
			*why = "must be 1 to 64 letters, digits, '_', '-' or '.'";
			return -1;
		}
		return store_string(base, k, value, why);
	}
	if (value[0] != '/') {
		*why = "must be an absolute path";
		return -1;
	}
	if (strlen(value) >= PATH_MAX - 64) {
		*why = "path too long";
		return -1;
	}
	return store_string(base, k, value, why);
}

/* auto, off or shadow: the one KEY_MODE sets both of struct config's. */
static int
set_mode(void *base, const struct config_key *k, const char *value,
    const char **why)
{
	int	mode;
	bool	b;

	if (config_parse_mode(value, &mode) == -1) {
		*why = "expected auto, off or shadow";
		return -1;
	}
	b = mode == SERVICE_MODE_OFF;
	memcpy((char *)base + k->offset, &b, sizeof(b));
	b = mode == SERVICE_MODE_SHADOW;
	memcpy((char *)base + k->offset + offsetof(struct config,
	    shadow) - offsetof(struct config, automation_off), &b,
	    sizeof(b));
	return 0;
}

int
config_set_value(void *base, const struct config_key *k, const char *value,
    const char **why)
{
	bool	b;

	if (*value == '\0') {
		*why = "empty value";
		return -1;
	}
	switch (k->type) {
	case KEY_DURATION:
	case KEY_UINT:
	case KEY_PERCENT:
		return set_number(base, k, value, why);
	case KEY_BOOL:
		if (units_bool(value, &b, why) == -1)
			return -1;
		memcpy((char *)base + k->offset, &b, sizeof(b));
		return 0;
	case KEY_PATH:
	case KEY_NAME:
		return set_string(base, k, value, why);
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
	case KEY_MODE:
		return set_mode(base, k, value, why);
	}
	*why = "unknown key type";
	return -1;
}

/* Describes a key's range for error messages and the reference. */
void
config_format_range(const struct config_key *k, char *buf, size_t size)
{
	char	lo[32], hi[32];

	buf[0] = '\0';
	if (k->type == KEY_UINT)
		snprintf(buf, size, "%llu to %llu", (unsigned long long)k->min,
		    (unsigned long long)k->max);
	else if (k->type == KEY_PERCENT)
		snprintf(buf, size, "%llu%% to %llu%%",
		    (unsigned long long)k->min, (unsigned long long)k->max);
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
void
config_value_error(struct parse *p, const struct entry *e,
    const struct config_key *k, const char *why)
{
	char	range[80], shown[512];

	if (k != NULL && strcmp(why, "out of range") == 0) {
		config_format_range(k, range, sizeof(range));
		config_error(p->errs, p->path, e->line,
		    "%s: '%s' out of range (%s)", e->key, e->value, range);
	} else if (e->value[0] == '\0')
		config_error(p->errs, p->path, e->line, "%s: %s", e->key, why);
	else if (k != NULL &&
	    (k->type == KEY_AGENTS || k->type == KEY_SOURCES)) {
		redact_list(e->value, shown, sizeof(shown));
		config_error(p->errs, p->path, e->line, "%s: %s: '%s'", e->key,
		    why, shown);
	} else
		config_error(p->errs, p->path, e->line, "%s: %s: '%s'", e->key,
		    why, e->value);
}
