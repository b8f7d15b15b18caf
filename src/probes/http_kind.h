/*
 * What the http kind's files share: its settings (struct http_conf), what
 * a finished run comes to (struct verdict), and the steps each file gives
 * the others. http.c holds the ops and the request; http_conf.c the keys
 * and the auth_file's reading; http_judge.c the verdict on the answer,
 * the JSON field's on a worker thread. Internal to src/probes/.
 */
#ifndef LBAGENT_HTTP_KIND_H
#define LBAGENT_HTTP_KIND_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

#include "lbagent/core/json_path.h"
#include "lbagent/core/threshold.h"
#include "lbagent/probes/probe.h"
#include "curl_probe.h"

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

/* http_conf.c: the keys and their checks. */
extern const struct probe_key_doc	 http_keys[];
void		*http_conf_new(void);
void		 http_conf_free(void *);
int		 http_conf_set(void *, const char *key, const char *value,
		    const char **why);
int		 http_conf_check(void *, const char **why);
const char	*http_conf_warning(const void *, const char **key);
/*
 * Reads path's one line "user:password" into *user and *pass (free them
 * with probe_free_secret). -1 with *why (static text or strerror's) on
 * error; the file's content is never part of it.
 */
int		 http_auth_read(const char *path, char **user, char **pass,
		    const char **why);

/* http_judge.c: what the answer comes to. */
/*
 * Judges the transfer up to the JSON field. True when the field is still
 * to judge (on a worker: http_json_start), with the latency in *ms.
 */
bool		 http_judge(const struct http_conf *, struct curl_probe *,
		    CURLcode rc, struct verdict *v, double *ms);
/* 0: the field is judged on a worker; -1 with *v set: report it now. */
int		 http_json_start(struct curl_probe *, double ms,
		    struct verdict *v);
void		 http_report(struct probe_run *, const struct verdict *);

#endif
