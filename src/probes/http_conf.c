/*
 * The http kind's settings: the URL parsed by libcurl with its userinfo
 * set apart, the method, the status ranges, headers checked for what
 * libcurl would refuse, the auth_file (its path at load, read at each run
 * and once for a warning), the JSON keys, and the checks across keys.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <curl/curl.h>

#include "lbagent/core/json_path.h"
#include "lbagent/core/threshold.h"
#include "lbagent/core/units.h"
#include "lbagent/probes/probe.h"
#include "http_kind.h"

const struct probe_key_doc http_keys[] = {
	{ .name = "url", .help = "http:// or https:// URL to request; "
	    "user:password@ in it is used but never shown" },
	{ .name = "method", .def = "GET", .help = "request method, an "
	    "uppercase token: HEAD, GET, POST, PUT, ..." },
	{ .name = "expect_status", .def = "200-399", .help = "accepted status "
	    "codes and ranges, e.g. 200 or 200-299, 301; redirects are not "
	    "followed" },
	{ .name = "expect_body", .help = "text the body must contain" },
	{ .name = "header", .repeatable = true, .help = "a request header, "
	    "Name: value (values are never shown; \"Name:\" alone drops a "
	    "header libcurl would send)" },
	{ .name = "tls_verify", .def = "yes", .help = "verify the server's "
	    "certificate and name" },
	{ .name = "warn_latency", .help = "total time at or above which the "
	    "run is warn" },
	{ .name = "crit_latency", .help = "total time at or above which the "
	    "run is crit" },
	{ .name = "auth_file", .help = "file holding one line user:password "
	    "for basic authentication, read at each run (never shown); not with "
	    "user:password@ in url" },
	{ .name = "json_field", .help = "dotted path into a JSON body, object "
	    "keys and array indexes: status, 0.messages_ready, queues.2.name; "
	    "* for every element or member: *.messages_ready; without "
	    "expect_value, warn or crit it only measures: ok with the field's "
	    "number as the value, crit when it is absent or not a number" },
	{ .name = "json_aggregate", .def = "max", .help = "with * in "
	    "json_field: max, min, sum or count of the values matched" },
	{ .name = "expect_value", .help = "with json_field: the field's value "
	    "as text (strings as-is, numbers, true, false, null) must equal "
	    "this" },
	{ .name = "warn", .help = "with json_field: the number at or above "
	    "which the run is warn (at or below when crit is below warn)" },
	{ .name = "crit", .help = "with json_field: the number at or above "
	    "which the run is crit (at or below when crit is below warn)" },
	{ .name = NULL },
};

void *
http_conf_new(void)
{
	struct http_conf	*c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->tls_verify = true;
	return c;
}

void
http_conf_free(void *conf)
{
	struct http_conf	*c = conf;

	if (c == NULL)
		return;
	free(c->url);
	probe_free_secret(c->user);
	probe_free_secret(c->password);
	free(c->auth_file);
	free(c->expect_body);
	curl_slist_free_all(c->headers);
	json_path_free(&c->json);
	free(c->expect_value);
	free(c);
}

/* Parses the URL with libcurl's own parser and sets its userinfo apart. */
static int
set_url(struct http_conf *c, const char *value, const char **why)
{
	CURLU		*u;
	CURLUcode	 uc;
	char		*scheme = NULL, *user = NULL, *pass = NULL, *url = NULL;
	int		 rv = -1;

	*why = "expected an http:// or https:// URL";
	if ((u = curl_url()) == NULL) {
		*why = "out of memory";
		return -1;
	}
	if (curl_url_set(u, CURLUPART_URL, value, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0))
		goto fail;
	uc = curl_url_get(u, CURLUPART_USER, &user, CURLU_URLDECODE);
	if (uc != CURLUE_OK && uc != CURLUE_NO_USER) {
		*why = "the URL's user name must not decode to control "
		    "characters";
		goto fail;
	}
	uc = curl_url_get(u, CURLUPART_PASSWORD, &pass, CURLU_URLDECODE);
	if (uc != CURLUE_OK && uc != CURLUE_NO_PASSWORD) {
		*why = "the URL's password must not decode to control "
		    "characters";
		goto fail;
	}
	if (curl_url_set(u, CURLUPART_USER, NULL, 0) != CURLUE_OK ||
	    curl_url_set(u, CURLUPART_PASSWORD, NULL, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK)
		goto fail;
	free(c->url);
	probe_free_secret(c->user);
	probe_free_secret(c->password);
	c->user = c->password = NULL;
	if ((c->url = strdup(url)) == NULL ||
	    (user != NULL && (c->user = strdup(user)) == NULL) ||
	    (pass != NULL && (c->password = strdup(pass)) == NULL)) {
		*why = "out of memory";
		goto fail;
	}
	rv = 0;
fail:
	if (user != NULL)
		explicit_bzero(user, strlen(user));
	if (pass != NULL)
		explicit_bzero(pass, strlen(pass));
	curl_free(scheme);
	curl_free(user);
	curl_free(pass);
	curl_free(url);
	curl_url_cleanup(u);
	return rv;
}

static int
set_method(struct http_conf *c, const char *value, const char **why)
{
	size_t	len = strlen(value);

	if (len == 0 || len > HTTP_METHOD_MAX ||
	    strspn(value, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != len) {
		*why = "expected an uppercase method such as GET, HEAD or POST";
		return -1;
	}
	memcpy(c->method, value, len + 1);
	return 0;
}

/* Drops blanks around s, in place. */
static char *
trim(char *s)
{
	size_t	len;

	s += strspn(s, " \t");
	len = strlen(s);
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		s[--len] = '\0';
	return s;
}

/* A status code in a range list: 100 to 599. */
static int
status_code(const char *s, long *code, const char **why)
{
	uint64_t	v;

	if (units_uint(s, &v, why) == -1) {
		*why = "expected status codes or ranges such as 200, "
		    "200-299, 301";
		return -1;
	}
	if (v < 100 || v > 599) {
		*why = "status codes go from 100 to 599";
		return -1;
	}
	*code = (long)v;
	return 0;
}

/* "200", "200-299, 301": comma-separated codes and low-high ranges. */
static int
set_status(struct http_conf *c, const char *value, const char **why)
{
	static const char	 usage[] = "expected status codes or ranges "
	    "such as 200, 200-299, 301";
	struct status_range	 r[HTTP_RANGES_MAX];
	char			 buf[256], *tok, *dash, *next;
	size_t			 n = 0;

	if (strlen(value) >= sizeof(buf)) {
		*why = usage;
		return -1;
	}
	strcpy(buf, value);
	for (tok = buf; tok != NULL; tok = next) {
		if ((next = strchr(tok, ',')) != NULL)
			*next++ = '\0';
		if (n == HTTP_RANGES_MAX) {
			*why = "at most 32 codes or ranges";
			return -1;
		}
		if ((dash = strchr(tok, '-')) != NULL)
			*dash++ = '\0';
		if (status_code(trim(tok), &r[n].lo, why) == -1 ||
		    status_code(trim(dash != NULL ? dash : tok), &r[n].hi,
		    why) == -1)
			return -1;
		if (r[n].lo > r[n].hi) {
			*why = "a range goes from low to high, e.g. 200-299";
			return -1;
		}
		n++;
	}
	memcpy(c->ranges, r, n * sizeof(r[0]));
	c->nranges = n;
	return 0;
}

static int
set_header(struct http_conf *c, const char *value, const char **why)
{
	static const char	 tchar[] = "!#$%&'*+-.^_`|~0123456789"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	const char		*p;
	size_t			 name = strspn(value, tchar);
	struct curl_slist	*l;

	if (name == 0 || value[name] != ':') {
		*why = "expected Name: value";
		return -1;
	}
	for (p = value + name + 1; *p != '\0'; p++)
		if ((*p < 0x20 && *p != '\t') || *p == 0x7f) {
			*why = "a header value must not contain control "
			    "characters";
			return -1;
		}
	if ((l = curl_slist_append(c->headers, value)) == NULL) {
		*why = "out of memory";
		return -1;
	}
	c->headers = l;
	return 0;
}

/* One small file, opened so that nothing there can hold the loop. */
int
http_auth_read(const char *path, char **user, char **pass,
    const char **why)
{
	char		 buf[HTTP_AUTH_MAX + 2], *colon;
	struct stat	 st;
	ssize_t		 n;
	size_t		 len = 0, i;
	int		 fd, rv = -1;

	*user = *pass = NULL;
	/* O_NONBLOCK: a FIFO put there must not hold the loop in open(). */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) ==
	    -1) {
		*why = strerror(errno);
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		close(fd);
		return -1;
	}
	while (len < sizeof(buf) - 1 &&
	    (n = read(fd, buf + len, sizeof(buf) - 1 - len)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			*why = strerror(errno);
			goto out;
		}
		len += (size_t)n;
	}
	buf[len] = '\0';
	*why = "larger than 4096 bytes";
	if (len > HTTP_AUTH_MAX)
		goto out;
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		buf[--len] = '\0';
	*why = "expected one line user:password";
	if ((colon = memchr(buf, ':', len)) == NULL || memchr(buf, '\n', len)
	    != NULL)
		goto out;
	*why = "the user name before ':' is empty";
	if (colon == buf)
		goto out;
	*why = "user:password must not contain control characters";
	for (i = 0; i < len; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			goto out;
	*colon = '\0';
	*why = "out of memory";
	if ((*user = strdup(buf)) == NULL || (*pass = strdup(colon + 1)) ==
	    NULL) {
		probe_free_secret(*user);
		*user = NULL;
		goto out;
	}
	rv = 0;
out:
	explicit_bzero(buf, sizeof(buf));
	close(fd);
	return rv;
}

/*
 * Only the path at load: the file is read at each run, so a rotated
 * password needs no reload, and a configuration checked on another machine
 * (lbagent -c) does not need the secret there.
 */
static int
set_auth_file(struct http_conf *c, const char *value, const char **why)
{
	char	*path;

	if (value[0] != '/') {
		*why = "expected an absolute path";
		return -1;
	}
	if ((path = strdup(value)) == NULL) {
		*why = "out of memory";
		return -1;
	}
	free(c->auth_file);
	c->auth_file = path;
	return 0;
}

int
http_conf_set(void *conf, const char *key, const char *value,
    const char **why)
{
	struct http_conf	*c = conf;

	if (strcmp(key, "url") == 0)
		return set_url(c, value, why);
	if (strcmp(key, "method") == 0)
		return set_method(c, value, why);
	if (strcmp(key, "expect_status") == 0)
		return set_status(c, value, why);
	if (strcmp(key, "expect_body") == 0)
		return probe_set_string(&c->expect_body, value, false, why);
	if (strcmp(key, "header") == 0)
		return set_header(c, value, why);
	if (strcmp(key, "tls_verify") == 0)
		return units_bool(value, &c->tls_verify, why);
	if (strcmp(key, "warn_latency") == 0)
		return probe_set_flagged(units_duration_ms(value,
		    &c->latency.warn_ms, why), &c->latency.has_warn);
	if (strcmp(key, "crit_latency") == 0)
		return probe_set_flagged(units_duration_ms(value,
		    &c->latency.crit_ms, why), &c->latency.has_crit);
	if (strcmp(key, "auth_file") == 0)
		return set_auth_file(c, value, why);
	if (strcmp(key, "json_field") == 0)
		return json_path_parse(&c->json, value, why);
	if (strcmp(key, "json_aggregate") == 0)
		return probe_set_flagged(json_agg_parse(value, &c->agg, why),
		    &c->has_agg);
	if (strcmp(key, "expect_value") == 0)
		return probe_set_string(&c->expect_value, value, true, why);
	if (strcmp(key, "warn") == 0)
		return probe_set_flagged(units_double(value, &c->num.warn, why),
		    &c->num.has_warn);
	if (strcmp(key, "crit") == 0)
		return probe_set_flagged(units_double(value, &c->num.crit, why),
		    &c->num.has_crit);
	*why = "unknown key";
	return -1;
}

int
http_conf_check(void *conf, const char **why)
{
	struct http_conf	*c = conf;
	bool			 thresholds = threshold_any(&c->num);
	bool			 json = c->json.text != NULL;

	if (c->url == NULL)
		*why = "url is required";
	else if (c->auth_file != NULL && c->user != NULL)
		*why = "auth_file and user:password@ in url: give one";
	else if (json && json_path_wild(&c->json) && c->expect_value != NULL)
		*why = "json_field with * gives a number: use warn and/or crit";
	else if (c->has_agg && !(json && json_path_wild(&c->json)))
		*why = "json_aggregate needs * in json_field";
	else if (json && c->expect_value != NULL && thresholds)
		*why = "json_field takes expect_value or warn/crit, not both";
	else if (!json && (c->expect_value != NULL ||
	    thresholds))
		*why = "expect_value, warn and crit need json_field";
	else if (strcmp(c->method, "HEAD") == 0 && (c->expect_body != NULL ||
	    json))
		*why = "a HEAD request has no body to check";
	else if ((*why = latency_limit_check(&c->latency)) == NULL)
		return 0;
	return -1;
}

/*
 * An auth_file this user cannot read now: every run would be crit until
 * it can. A warning, not an error: the file may be put there after the
 * configuration (and lbagent -c may run as another user than lbagent).
 */
const char *
http_conf_warning(const void *conf, const char **key)
{
	static char		 msg[PATH_MAX + 128];
	const struct http_conf	*c = conf;
	const char		*why;
	char			*user, *pass;

	*key = "auth_file";
	if (c->auth_file == NULL)
		return NULL;
	if (http_auth_read(c->auth_file, &user, &pass, &why) == 0) {
		probe_free_secret(user);
		probe_free_secret(pass);
		return NULL;
	}
	snprintf(msg, sizeof(msg), "auth_file %s: %s; each run would be crit "
	    "until it can be read", c->auth_file, why);
	return msg;
}
