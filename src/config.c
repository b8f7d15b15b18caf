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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "lbagent/config.h"
#include "lbagent/units.h"

enum key_type {
	KEY_DURATION,	/* uint64_t milliseconds */
	KEY_BOOL,	/* bool */
	KEY_UINT,	/* uint64_t */
	KEY_PATH,	/* char *, absolute */
	KEY_LISTEN,	/* the listen array */
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

static const struct config_key config_keys[] = {
	{ "agent", "listen", KEY_LISTEN, "*:9505", 0, 0, 0,
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
};

#define NKEYS	(sizeof(config_keys) / sizeof(config_keys[0]))

static const char *const config_sections[] = { "agent" };

/* Longest line we accept; inih's own buffer is INI_MAX_LINE. */
#define LINE_MAX_LEN	(INI_MAX_LINE - 1)

struct parse {
	struct config		*cfg;
	struct config_errors	*errs;
	const char		*path;
	FILE			*fp;
	unsigned		 lineno;
	unsigned		 bad_line;	/* line the reader already reported */
	unsigned		 seen[NKEYS];	/* line each key was set on */
};

static void
add_error(struct config_errors *errs, const char *path, unsigned line,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void
add_error(struct config_errors *errs, const char *path, unsigned line,
    const char *fmt, ...)
{
	char	msg[512], *full, **lines;
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		n = asprintf(&full, "%s:%u: %s", path, line, msg);
	else
		n = asprintf(&full, "%s: %s", path, msg);
	if (n == -1)
		return;
	lines = realloc(errs->lines, (errs->count + 1) * sizeof(*lines));
	if (lines == NULL) {
		free(full);
		return;
	}
	errs->lines = lines;
	errs->lines[errs->count++] = full;
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

/* Splits a comma-separated list of listen addresses into cfg->listen. */
static int
parse_listen_list(struct config *cfg, const char *value, const char **why)
{
	char	*copy, *item, *save = NULL, *end;
	int	 rc = 0;

	if ((copy = strdup(value)) == NULL) {
		*why = "out of memory";
		return -1;
	}
	cfg->nlisten = 0;
	for (item = strtok_r(copy, ",", &save); item != NULL;
	    item = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*item))
			item++;
		end = item + strlen(item);
		while (end > item && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (cfg->nlisten == CONFIG_MAX_LISTEN) {
			*why = "too many addresses (at most 16)";
			rc = -1;
			break;
		}
		if (config_parse_listen(item, &cfg->listen[cfg->nlisten],
		    why) == -1) {
			rc = -1;
			break;
		}
		cfg->nlisten++;
	}
	if (rc == 0 && cfg->nlisten == 0) {
		*why = "no address given";
		rc = -1;
	}
	free(copy);
	return rc;
}

/* Stores one value through the table; returns -1 with *why on error. */
static int
set_value(struct config *cfg, const struct config_key *k, const char *value,
    const char **why)
{
	char		*base = (char *)cfg;
	uint64_t	 u;
	bool		 b;
	char		**sp;

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
		if (u < k->min || u > k->max) {
			*why = "out of range";
			return -1;
		}
		memcpy(base + k->offset, &u, sizeof(u));
		return 0;
	case KEY_BOOL:
		if (units_bool(value, &b, why) == -1)
			return -1;
		memcpy(base + k->offset, &b, sizeof(b));
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
		sp = (char **)(void *)(base + k->offset);
		free(*sp);
		if ((*sp = strdup(value)) == NULL) {
			*why = "out of memory";
			return -1;
		}
		return 0;
	case KEY_LISTEN:
		return parse_listen_list(cfg, value, why);
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
	else if (k->type == KEY_DURATION) {
		units_format_ms(k->min, lo, sizeof(lo));
		units_format_ms(k->max, hi, sizeof(hi));
		snprintf(buf, size, "%s to %s", lo, hi);
	}
}

static int
known_section(const char *name)
{
	size_t	i;

	for (i = 0; i < sizeof(config_sections) / sizeof(config_sections[0]); i++)
		if (strcmp(name, config_sections[i]) == 0)
			return 1;
	return 0;
}

static int
config_ini_handler(void *user, const char *section, const char *name,
    const char *value)
{
	struct parse		*p = user;
	const struct config_key	*k;
	const char		*why;
	char			 range[80];
	size_t			 i;

	if (p->bad_line == p->lineno)
		return 1;
	if (section[0] == '\0') {
		add_error(p->errs, p->path, p->lineno,
		    "%s: key outside any section (expected [agent] first)",
		    name);
		return 1;
	}
	if (!known_section(section))
		return 1;	/* reported where the section starts */
	for (i = 0; i < NKEYS; i++) {
		k = &config_keys[i];
		if (strcmp(k->section, section) == 0 &&
		    strcmp(k->name, name) == 0)
			break;
	}
	if (i == NKEYS) {
		add_error(p->errs, p->path, p->lineno,
		    "unknown key '%s' in [%s]", name, section);
		return 1;
	}
	if (p->seen[i] != 0) {
		add_error(p->errs, p->path, p->lineno,
		    "%s: given twice (first on line %u)", name, p->seen[i]);
		return 1;
	}
	p->seen[i] = p->lineno;
	if (set_value(p->cfg, k, value, &why) == -1) {
		format_range(k, range, sizeof(range));
		if (strcmp(why, "out of range") == 0)
			add_error(p->errs, p->path, p->lineno,
			    "%s: '%s' out of range (%s)", name, value, range);
		else if (*value == '\0')
			add_error(p->errs, p->path, p->lineno, "%s: %s", name,
			    why);
		else
			add_error(p->errs, p->path, p->lineno, "%s: %s: '%s'",
			    name, why, value);
	}
	return 1;
}

/* Checks a section header line ("[name]") the reader has seen. */
static void
check_section_line(struct parse *p, const char *s)
{
	const char	*end = strchr(s, ']');
	char		 name[64];
	size_t		 len;

	if (end == NULL) {
		add_error(p->errs, p->path, p->lineno,
		    "section header without ']'");
		p->bad_line = p->lineno;
		return;
	}
	len = (size_t)(end - s - 1);
	if (len >= sizeof(name))
		len = sizeof(name) - 1;
	memcpy(name, s + 1, len);
	name[len] = '\0';
	if (!known_section(name))
		add_error(p->errs, p->path, p->lineno,
		    "unknown section [%s] (known: [agent])", name);
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
	if (memchr(str, '\0', len) != NULL || strlen(str) != len)
		str[0] = '\0';
	for (s = str; isspace((unsigned char)*s); s++)
		;
	if (*s == '\0' || *s == ';' || *s == '#')
		return str;
	if (*s == '[') {
		check_section_line(p, s);
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

static void
apply_defaults(struct parse *p)
{
	const char	*why;
	size_t		 i;

	for (i = 0; i < NKEYS; i++) {
		if (p->seen[i] != 0)
			continue;
		if (set_value(p->cfg, &config_keys[i], config_keys[i].def,
		    &why) == -1)
			add_error(p->errs, p->path, 0,
			    "internal error: default of %s: %s",
			    config_keys[i].name, why);
	}
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
	apply_defaults(&p);
	if (errs->count > 0) {
		config_free(cfg);
		return NULL;
	}
	return cfg;
}

void
config_free(struct config *cfg)
{
	if (cfg == NULL)
		return;
	free(cfg->path);
	free(cfg->state_dir);
	free(cfg);
}

void
config_errors_free(struct config_errors *errs)
{
	size_t	i;

	for (i = 0; i < errs->count; i++)
		free(errs->lines[i]);
	free(errs->lines);
	errs->lines = NULL;
	errs->count = 0;
}

void
config_print_keys(FILE *fp)
{
	const struct config_key	*k;
	const char		*section = "";
	char			 range[80];
	size_t			 i;

	for (i = 0; i < NKEYS; i++) {
		k = &config_keys[i];
		if (strcmp(section, k->section) != 0) {
			fprintf(fp, "%s[%s]\n", i ? "\n" : "", k->section);
			section = k->section;
		}
		format_range(k, range, sizeof(range));
		fprintf(fp, "%s (%s, default %s%s%s)\n    %s\n", k->name,
		    type_name(k->type), k->def, range[0] ? ", " : "", range,
		    k->help);
	}
}
