/*
 * What an http run comes to, judged in order by transport, status, body
 * substring, a JSON field and latency. The JSON field is judged on a
 * worker thread (the body parsed within its bound, json_body.h): a plain
 * field against expect_value or warn/crit, a field with * as the
 * aggregate of what it matches.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "lbagent/core/json_path.h"
#include "lbagent/core/threshold.h"
#include "lbagent/core/units.h"
#include "lbagent/probes/probe.h"
#include "curl_probe.h"
#include "http_kind.h"
#include "json_body.h"

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

/* Transport, status, body, then latency: all but the JSON field. */
bool
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

void
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

/* The body handed to a worker thread with a copy of the JSON keys. */
int
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
