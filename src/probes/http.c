/*
 * The http kind: one request per run on the shared curl loop, judged in
 * order by transport, status, body substring, a JSON field and latency.
 * Credentials in the URL are taken out at configuration time and given to
 * libcurl apart (CURLOPT_USERNAME/PASSWORD), so the URL libcurl sees, and
 * anything it says about it, carries none; header values are never shown.
 * An auth_file's user:password is read at each run (start() reads one
 * small file) and wiped once libcurl has its copy.
 *
 * This file holds the ops and the request each run makes; the keys are
 * in http_conf.c, the verdict in http_judge.c.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include <curl/curl.h>

#include "lbagent/probes/kinds.h"
#include "lbagent/probes/probe.h"
#include "curl_probe.h"
#include "http_kind.h"

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
		if (http_auth_read(c->auth_file, &user, &pass, &why) == -1) {
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
