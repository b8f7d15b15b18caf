/*
 * The http kind: one request per run on the shared curl loop, judged in
 * order by transport, status, body substring, a JSON field and latency.
 * Credentials in the URL are taken out at configuration time and given to
 * libcurl apart (CURLOPT_USERNAME/PASSWORD), so the URL libcurl sees, and
 * anything it says about it, carries none; header values are never shown.
 * An auth_file's user:password is read at each run (start() reads one
 * small file) and wiped once libcurl has its copy.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <curl/curl.h>
#include <jansson.h>

#include "lbagent/core/json_path.h"
#include "lbagent/core/threshold.h"
#include "lbagent/core/units.h"
#include "lbagent/probes/kinds.h"
#include "curl_probe.h"
#include "json_body.h"

#define HTTP_RANGES_MAX		32
#define HTTP_METHOD_MAX		24
#define HTTP_SHOWN_MAX		40	/* of a JSON value in a reason */
#define HTTP_AUTH_MAX		4096	/* bytes of an auth_file */

struct status_range {
	long	lo, hi;
};

struct http_conf {
	char			*url;		/* without userinfo */
	char			*user;		/* decoded, or NULL */
	char			*password;	/* decoded, or NULL */
	char			*auth_file;	/* user:password, read each run */
	char			 method[HTTP_METHOD_MAX + 1];	/* "": GET */
	struct status_range	 ranges[HTTP_RANGES_MAX];
	size_t			 nranges;	/* 0: 200-399 */
	char			*expect_body;
	struct curl_slist	*headers;
	bool			 tls_verify;
	struct latency_limit	 latency;
	struct json_path	 json;		/* json.text NULL: none */
	enum json_agg		 agg;
	bool			 has_agg;
	char			*expect_value;
	struct threshold	 num;		/* on the JSON field's number */
};

/* What a finished run comes to, built before the run's memory goes. */
struct verdict {
	enum probe_result	result;
	double			value;
	const char		*unit;	/* of value: NULL the latency's, ms */
	bool			from_check;	/* an unknown of the check's */
	char			reason[PROBE_REASON_MAX + 1];
};

static const struct probe_key_doc http_keys[] = {
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
	    "* for every element or member: *.messages_ready" },
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

static void *
http_conf_new(void)
{
	struct http_conf	*c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->tls_verify = true;
	return c;
}

static void
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

/*
 * Reads path's one line "user:password" into *user and *pass (free them
 * with probe_free_secret). -1 with *why (static text or strerror's) on
 * error; the file's content is never part of it.
 */
static int
auth_read(const char *path, char **user, char **pass, const char **why)
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

static int
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

static int
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
	else if (json && c->expect_value == NULL && !thresholds)
		*why = "json_field needs expect_value, or warn and/or crit";
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

static void LOG_PRINTF(4, 5)
verdict(struct verdict *v, enum probe_result result, double value,
    const char *fmt, ...)
{
	va_list	ap;

	v->result = result;
	v->value = value;
	v->unit = NULL;
	v->from_check = false;
	va_start(ap, fmt);
	vsnprintf(v->reason, sizeof(v->reason), fmt, ap);
	va_end(ap);
}

static bool
status_expected(const struct http_conf *c, long status)
{
	size_t	i;

	if (c->nranges == 0)
		return status >= 200 && status <= 399;
	for (i = 0; i < c->nranges; i++)
		if (status >= c->ranges[i].lo && status <= c->ranges[i].hi)
			return true;
	return false;
}

/* A scalar as expect_value is written; free it. NULL: no memory. */
static char *
json_text(const json_t *node)
{
	switch (json_typeof(node)) {
	case JSON_STRING:
		/* An embedded NUL could make two strings look equal. */
		if (strlen(json_string_value(node)) != json_string_length(node))
			return strdup("?");
		return strdup(json_string_value(node));
	case JSON_INTEGER:
	case JSON_REAL:
		return json_dumps(node, JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
	case JSON_TRUE:
		return strdup("true");
	case JSON_FALSE:
		return strdup("false");
	case JSON_NULL:
		return strdup("null");
	default:
		return NULL;
	}
}

/*
 * Judges x against warn/crit; name says what x is, which (or NULL) the
 * element it came from: "count 42 (crit 40)", or for an aggregate "max
 * *.messages_ready 12000 (orders) at or above crit 10000".
 */
static void
threshold_judge(const struct http_conf *c, double x, const char *name,
    const char *which, struct verdict *v)
{
	char			 el[JSON_PATH_WHICH_MAX + 4] = "", lim[64];
	bool			 lower = threshold_lower_is_worse(&c->num);
	double			 t;
	enum probe_result	 r = threshold_level(&c->num, x, &t);

	if (which != NULL && *which != '\0')
		snprintf(el, sizeof(el), " (%s)", which);
	if (r == PROBE_OK)
		lim[0] = '\0';
	else if (json_path_wild(&c->json))
		snprintf(lim, sizeof(lim), " at or %s %s %.15g", lower ?
		    "below" : "above", r == PROBE_CRIT ? "crit" : "warn", t);
	else
		snprintf(lim, sizeof(lim), " (%s %.15g)", r == PROBE_CRIT ?
		    "crit" : "warn", t);
	verdict(v, r, x, "%s %.15g%s%s", name, x, el, lim);
	v->unit = "";	/* the field's number, not a latency */
}

/* A json_field with "*": the aggregate of what it matches. */
static void
fold_judge(const struct http_conf *c, json_t *root, struct verdict *v)
{
	const char		*agg = json_agg_name(c->agg);
	char			 name[JSON_PATH_WHERE_MAX + 8];
	struct json_fold	 f;

	json_path_fold(&c->json, c->agg, root, &f);
	snprintf(name, sizeof(name), "%s %s", agg, c->json.text);
	switch (f.status) {
	case JSON_FOLD_NO_FIELD:
		verdict(v, PROBE_CRIT, NAN, "no JSON field %s", c->json.text);
		return;
	case JSON_FOLD_NOT_CONTAINER:
		if (*f.where == '\0')
			verdict(v, PROBE_CRIT, NAN, "the body is %s, not an "
			    "array or object", f.type);
		else
			verdict(v, PROBE_CRIT, NAN, "%s is %s, not an array or "
			    "object", f.where, f.type);
		return;
	case JSON_FOLD_NOT_NUMBER:
		verdict(v, PROBE_CRIT, NAN, "%s is %s, not a number", f.where,
		    f.type);
		return;
	case JSON_FOLD_OK:
		break;
	}
	if (isnan(f.value)) {
		/* max or min of nothing: no value to judge, unknown. */
		verdict(v, PROBE_UNKNOWN, NAN, "%s matched nothing", name);
		v->unit = "";
		v->from_check = true;	/* counted as on_unknown says */
		return;
	}
	threshold_judge(c, f.value, name, c->agg == JSON_AGG_MAX ||
	    c->agg == JSON_AGG_MIN ? f.which : NULL, v);
}

/* On a worker thread: the body parsed within its bound, and judged. */
static void
json_judge(const struct http_conf *c, const char *body, size_t len,
    struct verdict *v)
{
	const char		*name = json_path_name(&c->json);
	enum json_body_status	 st;
	json_t			*root, *node;
	char			*text = NULL;

	if ((root = json_body_parse(body, len, JSON_DECODE_ANY, &st)) ==
	    NULL) {
		if (st == JSON_BODY_TOO_BIG)
			verdict(v, PROBE_CRIT, NAN, "JSON body would take over "
			    JSON_BODY_MEM_TEXT " to parse");
		else
			verdict(v, PROBE_CRIT, NAN, "body is not JSON");
		return;
	}
	if (json_path_wild(&c->json))
		fold_judge(c, root, v);
	else if ((node = json_path_get(&c->json, root)) == NULL)
		verdict(v, PROBE_CRIT, NAN, "no JSON field %s", c->json.text);
	else if (c->expect_value != NULL) {
		if (json_is_object(node) || json_is_array(node))
			verdict(v, PROBE_CRIT, NAN, "%s is an %s (expected "
			    "\"%s\")", name, json_is_object(node) ? "object" :
			    "array", c->expect_value);
		else if ((text = json_text(node)) == NULL)
			verdict(v, PROBE_UNKNOWN, NAN, "%s",
			    probe_errno_local(ENOMEM));
		else if (strcmp(text, c->expect_value) != 0)
			verdict(v, PROBE_CRIT, NAN, "%s is \"%.*s\" (expected "
			    "\"%s\")", name, HTTP_SHOWN_MAX, text,
			    c->expect_value);
		else
			verdict(v, PROBE_OK, NAN, "%s is \"%.*s\"", name,
			    HTTP_SHOWN_MAX, text);
		free(text);
	} else if (!json_is_number(node))
		verdict(v, PROBE_CRIT, NAN, "%s is not a number", name);
	else
		threshold_judge(c, json_number_value(node), name, NULL, v);
	json_decref(root);
}

/* Worse latency than the verdict so far replaces it. */
static void
latency_judge(const struct http_conf *c, double ms, struct verdict *v)
{
	char			 limit[32];
	uint64_t		 lim;
	enum probe_result	 r = latency_level(&c->latency, ms, &lim);
	double			 value;

	if (r == PROBE_OK || r <= v->result)
		return;
	units_format_ms(lim, limit, sizeof(limit));
	/* With JSON thresholds the value stays the field's number. */
	value = c->json.text != NULL && c->expect_value == NULL ? v->value : ms;
	verdict(v, r, value, "latency %.0fms (%s %s)", floor(ms),
	    r == PROBE_CRIT ? "crit" : "warn", limit);
}

/*
 * Judges the transfer up to the JSON field. True when the field is still
 * to judge (on a worker: http_json_start), with the latency in *ms.
 */
static bool
http_judge(const struct http_conf *c, struct curl_probe *cp, CURLcode rc,
    struct verdict *v, double *ms)
{
	curl_off_t	 us = 0;
	long		 status = 0;
	const char	*local;

	if (rc != CURLE_OK && (local = curl_probe_local(cp, rc)) != NULL) {
		verdict(v, PROBE_UNKNOWN, NAN, "%s", local);
		return false;
	}
	if (rc != CURLE_OK) {
		verdict(v, PROBE_CRIT, NAN, "%s", curl_probe_error(cp, rc));
		return false;
	}
	curl_probe_answered(cp);
	curl_easy_getinfo(cp->easy, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(cp->easy, CURLINFO_TOTAL_TIME_T, &us);
	*ms = (double)us / 1000.0;
	if (!status_expected(c, status)) {
		verdict(v, PROBE_CRIT, *ms, "HTTP %ld", status);
		return false;
	}
	if (c->expect_body != NULL && (cp->body == NULL ||
	    memmem(cp->body, cp->len, c->expect_body,
	    strlen(c->expect_body)) == NULL)) {
		verdict(v, PROBE_CRIT, *ms, "body lacks \"%s\"", c->expect_body);
		return false;
	}
	if (c->json.text != NULL)
		return true;
	verdict(v, PROBE_OK, *ms, "HTTP %ld in %.0fms", status, floor(*ms));
	latency_judge(c, *ms, v);
	return false;
}

/* The JSON field judged after the transfer, on a worker thread. */
struct http_json_job {
	struct curl_probe	*cp;	/* the loop's; never read by the thread */
	struct http_conf	*conf;	/* the JSON keys, a copy: a reload may
					 * free the probe's while the thread runs */
	char			*body;	/* taken from cp */
	size_t			 len;
	double			 ms;
	struct verdict		 v;
};

static void
http_json_free(void *arg)
{
	struct http_json_job	*j = arg;

	http_conf_free(j->conf);
	free(j->body);
	free(j);
}

static void
http_json_work(void *arg)
{
	struct http_json_job	*j = arg;

	json_judge(j->conf, j->body, j->len, &j->v);
}

static void
http_report(struct probe_run *run, const struct verdict *v)
{
	if (v->from_check)
		probe_report_check(run, v->result, v->value, v->unit, "%s",
		    v->reason);
	else
		probe_report_unit(run, v->result, v->value, v->unit, "%s",
		    v->reason);
}

/* Back on the loop: the field's verdict, then latency. */
static void
http_json_done(void *arg)
{
	struct http_json_job	*j = arg;
	struct curl_probe	*cp = j->cp;
	struct probe_run	*run = cp->run;
	const struct http_conf	*c = run->conf;
	struct verdict		 v = j->v;
	double			 ms = j->ms;

	/* Only JSON thresholds make the field's number the value. */
	if (c->expect_value != NULL)
		v.value = ms;
	if (v.result != PROBE_CRIT)
		latency_judge(c, ms, &v);
	run->data = NULL;
	curl_probe_free(cp);	/* frees j */
	http_report(run, &v);
}

/* A copy of c's JSON keys for the thread; NULL when out of memory. */
static struct http_conf *
json_conf_copy(const struct http_conf *c)
{
	struct http_conf	*d;
	const char		*why;

	if ((d = http_conf_new()) == NULL)
		return NULL;
	if (json_path_parse(&d->json, c->json.text, &why) == -1 ||
	    (c->expect_value != NULL &&
	    (d->expect_value = strdup(c->expect_value)) == NULL)) {
		http_conf_free(d);
		return NULL;
	}
	d->agg = c->agg;
	d->has_agg = c->has_agg;
	d->num = c->num;
	return d;
}

/* 0: the field is judged on a worker; -1 with *v set: report it now. */
static int
http_json_start(struct curl_probe *cp, double ms, struct verdict *v)
{
	struct http_json_job	*j;
	int			 err;

	if ((j = calloc(1, sizeof(*j))) == NULL ||
	    (j->conf = json_conf_copy(cp->run->conf)) == NULL) {
		free(j);
		verdict(v, PROBE_UNKNOWN, NAN, "%s", probe_errno_local(ENOMEM));
		return -1;
	}
	j->cp = cp;
	j->ms = ms;
	j->body = cp->body;
	j->len = cp->len;
	cp->body = NULL;
	cp->len = cp->cap = 0;
	if (curl_probe_offload(cp, http_json_work, http_json_done,
	    http_json_free, j) == 0)
		return 0;
	err = errno;
	http_json_free(j);
	curl_probe_thread_failed(err, v->reason, sizeof(v->reason),
	    &v->result);
	v->value = NAN;
	v->unit = NULL;
	v->from_check = false;
	return -1;
}

static void
http_done(CURL *easy, CURLcode rc, void *arg)
{
	struct curl_probe	*cp = arg;
	struct probe_run	*run = cp->run;
	struct verdict		 v;
	double			 ms = 0;

	rc = curl_probe_result(cp, rc);
	if (http_judge(run->conf, cp, rc, &v, &ms) &&
	    http_json_start(cp, ms, &v) == 0)
		return;
	run->data = NULL;
	curl_probe_free(cp);
	http_report(run, &v);
}

static void
http_start(struct probe_run *run)
{
	const struct http_conf	*c = run->conf;
	struct curl_probe	*cp;
	CURL			*e;
	char			*user, *pass;
	const char		*why;

	cp = curl_probe_new(run, c->url, c->expect_body != NULL ||
	    c->json.text != NULL);
	if (cp == NULL) {
		probe_report(run, PROBE_UNKNOWN, NAN, "%s",
		    probe_errno_local(ENOMEM));
		return;
	}
	e = cp->easy;
	if (c->auth_file != NULL) {
		/* Read each run: a rotated password needs no reload. */
		if (auth_read(c->auth_file, &user, &pass, &why) == -1) {
			curl_probe_free(cp);
			probe_report(run, PROBE_CRIT, NAN, "auth_file %s: %s",
			    c->auth_file, why);
			return;
		}
		/* libcurl keeps its own copies, freed with the handle. */
		curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(e, CURLOPT_USERNAME, user);
		curl_easy_setopt(e, CURLOPT_PASSWORD, pass);
		probe_free_secret(user);
		probe_free_secret(pass);
	} else if (c->user != NULL) {
		curl_easy_setopt(e, CURLOPT_USERNAME, c->user);
		curl_easy_setopt(e, CURLOPT_PASSWORD,
		    c->password != NULL ? c->password : "");
	}
	if (c->headers != NULL)
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, c->headers);
	if (!c->tls_verify) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (strcmp(c->method, "HEAD") == 0)
		curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
	else if (strcmp(c->method, "POST") == 0 ||
	    strcmp(c->method, "PUT") == 0) {
		/* An empty body, announced: "Content-Length: 0". */
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, 0L);
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, "");
		if (strcmp(c->method, "PUT") == 0)
			curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "PUT");
	} else if (c->method[0] != '\0' && strcmp(c->method, "GET") != 0)
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, c->method);
	if (curl_probe_start(cp, http_done) == -1) {
		curl_probe_free(cp);
		probe_report(run, PROBE_CRIT, NAN, "cannot start the request");
	}
}

/*
 * An auth_file this user cannot read now: every run would be crit until
 * it can. A warning, not an error: the file may be put there after the
 * configuration (and lbagent -c may run as another user than lbagent).
 */
static const char *
http_conf_warning(const void *conf, const char **key)
{
	static char		 msg[PATH_MAX + 128];
	const struct http_conf	*c = conf;
	const char		*why;
	char			*user, *pass;

	*key = "auth_file";
	if (c->auth_file == NULL)
		return NULL;
	if (auth_read(c->auth_file, &user, &pass, &why) == 0) {
		probe_free_secret(user);
		probe_free_secret(pass);
		return NULL;
	}
	snprintf(msg, sizeof(msg), "auth_file %s: %s; each run would be crit "
	    "until it can be read", c->auth_file, why);
	return msg;
}

const struct probe_ops probe_http_ops = {
	.name = "http",
	.unit = "ms",
	.keys = http_keys,
	.windowed = true,
	.conf_new = http_conf_new,
	.conf_free = http_conf_free,
	.conf_set = http_conf_set,
	.conf_check = http_conf_check,
	.conf_warning = http_conf_warning,
	.start = http_start,
	.cancel = curl_probe_cancel,
	.keep_free = curl_probe_keep_free,
};
