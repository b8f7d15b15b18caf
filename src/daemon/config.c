/*
 * Configuration loading. inih splits lines into section, key and value;
 * our line reader counts lines (Debian's inih does not pass line numbers)
 * and reports what inih would only count: lines too long, lines that are
 * not "key = value", unknown sections. The key tables (config_keys_*.c)
 * do the rest; this file owns the reader, the order in which sections are
 * interpreted, the error list, and what the others ask of a loaded
 * configuration.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "lbagent/core/addr.h"
#include "lbagent/core/name.h"
#include "lbagent/core/suggest.h"
#include "config_impl.h"

/* Longest line we accept; inih's own buffer is INI_MAX_LINE. */
#define LINE_MAX_LEN	(INI_MAX_LINE - 1)

const char *const config_section_words[] = {
	[SEC_AGENT] = "agent",
	[SEC_PROBE] = "probe",
	[SEC_SERVICE] = "service",
	[SEC_HTTP] = "http",
	[SEC_PEERS] = "peers",
	[SEC_HAPROXY] = "haproxy",
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

void
config_error(struct config_errors *errs, const char *path, unsigned line,
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

/* As config_error, into the warnings: the same quoting, "warning: " first. */
void
config_warning(struct config_errors *errs, const char *path, unsigned line,
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
	config_error(&w, path, line, "warning: %s", msg);
	errs->warnings = w.lines;
	errs->warning_at = w.at;
	errs->nwarnings = w.count;
}

/* Where the sections are: the single ones' indexes (SIZE_MAX: absent). */
struct layout {
	size_t	np, ns;		/* good probe and service sections */
	size_t	agent, http, peers, hx;
};

static void
find_sections(const struct parse *p, struct layout *l)
{
	size_t	i;

	l->np = l->ns = 0;
	l->agent = l->http = l->peers = l->hx = SIZE_MAX;
	for (i = 0; i < p->nsections; i++) {
		if (p->sections[i].bad)
			continue;
		if (p->sections[i].kind == SEC_PROBE)
			l->np++;
		else if (p->sections[i].kind == SEC_SERVICE)
			l->ns++;
		else if (p->sections[i].kind == SEC_HTTP)
			l->http = i;
		else if (p->sections[i].kind == SEC_PEERS)
			l->peers = i;
		else if (p->sections[i].kind == SEC_HAPROXY)
			l->hx = i;
		else if (l->agent == SIZE_MAX)
			l->agent = i;
	}
}

/* Interprets every section now that all of them are known. */
static void
build(struct parse *p)
{
	struct config	*cfg = p->cfg;
	struct layout	 l;
	size_t		 i;

	find_sections(p, &l);
	cfg->probes = calloc(l.np ? l.np : 1, sizeof(*cfg->probes));
	cfg->services = calloc(l.ns ? l.ns : 1, sizeof(*cfg->services));
	if (cfg->probes == NULL || cfg->services == NULL) {
		config_error(p->errs, p->path, 0, "out of memory");
		return;
	}
	/* [agent] may be absent: its defaults still apply. */
	config_build_agent(p, l.agent);
	config_table_apply(p, l.http, config_http_keys, config_http_nkeys, cfg,
	    NULL, NULL);
	/* Before the services, which start from [peers]' guard settings. */
	config_build_peers(p, l.peers, l.hx);
	config_check_peers(p, l.peers, l.hx);
	for (i = 0; i < p->nsections; i++) {
		if (p->sections[i].bad)
			continue;
		if (p->sections[i].kind == SEC_PROBE)
			config_build_probe(p, i, &cfg->probes[cfg->nprobes++]);
		else if (p->sections[i].kind == SEC_SERVICE)
			config_build_service(p, i,
			    &cfg->services[cfg->nservices++]);
	}
	config_check_service_probes(p);
	config_check_capacity(p);
	config_check_default_probes(p, l.agent);
	config_check_host(p, l.http);
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
		config_error(p->errs, p->path, p->lineno,
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

/*
 * What a header without ']' meant, kept in its bad section: a service
 * that names "[probe NAME" is not told again that there is no such probe.
 */
static void
header_meant(struct section *sec, const char *s)
{
	char	word[16];

	if (sscanf(s, "%15s %64[^] \t\r\n]", word, sec->name) == 2 &&
	    strcmp(word, config_section_words[SEC_PROBE]) == 0)
		sec->kind = SEC_PROBE;
	else
		sec->name[0] = '\0';
}

/* Checks a section header ("[agent]", "[probe NAME]", "[service NAME]"). */
static void
section_line(struct parse *p, const char *s)
{
	const char	*end = strchr(s, ']');
	struct section	 sec, *grown;
	char		 head[NAME_MAX_LEN * 2 + 16], word[16], why[256];
	const char	*near;
	size_t		 len, i;
	int		 n, k;

	memset(&sec, 0, sizeof(sec));
	sec.line = p->lineno;
	sec.bad = true;
	p->in_section = true;
	len = end ? (size_t)(end - s - 1) : 0;
	if (end == NULL) {
		config_error(p->errs, p->path, p->lineno,
		    "section header without ']'");
		header_meant(&sec, s + 1);
	} else if (len >= sizeof(head))
		config_error(p->errs, p->path, p->lineno,
		    "section name too long");
	else {
		memcpy(head, s + 1, len);
		head[len] = '\0';
		n = sscanf(head, "%15s %64s", word, sec.name);
		for (k = 0; k < SEC_KINDS; k++)
			if (n >= 1 &&
			    strcmp(word, config_section_words[k]) == 0)
				break;
		sec.kind = (enum section_kind)k;
		near = n < 1 ? NULL : suggest_nearest(word,
		    config_section_words, SEC_KINDS);
		if (n < 1 || k == SEC_KINDS)
			config_error(p->errs, p->path, p->lineno,
			    "unknown section [%s]%s%s%s (known: [agent], [probe "
			    "NAME], [service NAME], [http], [peers], [haproxy])",
			    head, near ? "; did you mean [" : "", near ? near :
			    "", near ? "]?" : "");
		else if (!named_section(k) && n != 1)
			config_error(p->errs, p->path, p->lineno,
			    "[%s] takes no name", word);
		else if (named_section(k) && (n != 2 ||
		    !name_valid(sec.name) ||
		    strlen(word) + 1 + strlen(sec.name) != strlen(head)))
			config_error(p->errs, p->path, p->lineno,
			    "[%s NAME]: NAME must be 1 to %d letters, digits, "
			    "'_', '-' or '.'", word, NAME_MAX_LEN);
		else if (k == SEC_SERVICE &&
		    name_service(sec.name, why, sizeof(why)) == -1)
			config_error(p->errs, p->path, p->lineno,
			    "[service %s]: %s", sec.name, why);
		else
			sec.bad = false;
	}
	for (i = 0; !sec.bad && i < p->nsections; i++) {
		if (p->sections[i].bad || p->sections[i].kind != sec.kind ||
		    strcmp(p->sections[i].name, sec.name) != 0)
			continue;
		config_error(p->errs, p->path, p->lineno,
		    "[%s%s%s] given twice (first on line %u)",
		    config_section_words[sec.kind], sec.name[0] ? " " : "", sec.name,
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
		config_error(p->errs, p->path, p->lineno,
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
		config_error(p->errs, p->path, p->lineno,
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
		config_error(p->errs, p->path, p->lineno,
		    "expected 'key = value' (':' is not a separator)");
		p->bad_line = p->lineno;
		str[0] = '\0';
	} else if (eq == NULL) {
		config_error(p->errs, p->path, p->lineno,
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
		config_error(errs, path, 0, "out of memory");
		config_free(cfg);
		return NULL;
	}
	p.cfg = cfg;
	p.errs = errs;
	p.path = path;
	if ((p.fp = fopen(path, "re")) == NULL) {
		config_error(errs, path, 0, "cannot open: %s", strerror(errno));
		config_free(cfg);
		return NULL;
	}
	/* Line problems were reported by the reader; inih's count adds nothing. */
	if (ini_parse_stream(config_ini_reader, &p, config_ini_handler,
	    &p) == -2)
		config_error(errs, path, 0, "out of memory");
	if (ferror(p.fp))
		config_error(errs, path, 0, "read error: %s", strerror(errno));
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

bool
config_probe_named(const struct config *cfg, const char *probe)
{
	size_t	i, j;

	for (i = 0; i < cfg->nservices; i++) {
		if (config_capacity_names(&cfg->services[i].capacity, probe))
			return true;
		for (j = 0; j < cfg->services[i].nprobes; j++)
			if (strcmp(cfg->services[i].probes[j], probe) == 0)
				return true;
	}
	return false;
}

void
config_free(struct config *cfg)
{
	size_t	i;

	if (cfg == NULL)
		return;
	for (i = 0; i < cfg->nprobes; i++) {
		settings_kconf_release(cfg->probes[i].kconf);
		free(cfg->probes[i].name);
		free(cfg->probes[i].signature);
	}
	free(cfg->probes);
	for (i = 0; i < cfg->nservices; i++) {
		free(cfg->services[i].name);
		config_free_list(cfg->services[i].probes,
		    cfg->services[i].nprobes);
		config_capacity_free(&cfg->services[i].capacity);
	}
	free(cfg->services);
	free(cfg->path);
	free(cfg->state_dir);
	free(cfg->proc_root);
	free(cfg->node_id);
	free(cfg->http.token_file);
	config_free_list(cfg->peers.agents.items, cfg->peers.agents.count);
	config_free_list(cfg->peers.haproxy.items, cfg->peers.haproxy.count);
	config_free_list(cfg->peers.agent_status.items,
	    cfg->peers.agent_status.count);
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

bool
config_peers_on(const struct config *cfg)
{
	return cfg->peers.on;
}

const char *
config_server(const struct config *cfg, const struct transition_conf *tc)
{
	return tc->server[0] != '\0' ? tc->server : cfg->node_id;
}
