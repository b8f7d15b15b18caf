/*
 * What the http and docker kinds share: one libcurl transfer bound to one
 * probe run, its body read up to a bound, and the short reasons for
 * libcurl's failures. Internal to src/probes/.
 */
#ifndef LBAGENT_CURL_PROBE_H
#define LBAGENT_CURL_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

#include "lbagent/sys/curl_loop.h"
#include "lbagent/probes/probe.h"

/*
 * Bodies beyond this are not read. A body kept for a check (expect_body,
 * json_field, docker's answer) makes the run crit; a body nothing reads
 * ends the transfer there, and the run is judged on what came so far.
 */
#define CURL_PROBE_BODY_MAX	(1024 * 1024)
#define CURL_PROBE_BODY_TEXT	"1 MiB"
/* Response headers beyond this (all lines, 1xx answers too): crit. */
#define CURL_PROBE_HEADERS_MAX	(64 * 1024)
#define CURL_PROBE_HEADERS_TEXT	"64 KiB"

struct worker_job;

struct curl_probe {
	struct probe_run	*run;
	CURL			*easy;
	struct worker_job	*work;		/* judging the body, after */
	char			*body;		/* when kept; not NUL-terminated */
	size_t			 len, cap;
	bool			 keep_body;
	size_t			 seen;		/* body bytes, kept or not */
	size_t			 header_len;	/* header bytes so far */
	bool			 too_big;	/* over CURL_PROBE_BODY_MAX */
	bool			 enough;	/* unkept body cut at the max */
	bool			 headers_too_big;
	bool			 no_memory;
	int			 socket_errno;	/* socket() failed: why */
	char			 errbuf[CURL_ERROR_SIZE];
	char			 local[PROBE_REASON_MAX + 1];
};

/*
 * A transfer of url for run, with what every probe wants: no signals, no
 * proxy from the environment, no redirects, a fresh connection, the run's
 * timeout, our user agent. The body is kept only if keep_body. NULL when
 * out of memory.
 */
struct curl_probe	*curl_probe_new(struct probe_run *, const char *url,
			    bool keep_body);
void			 curl_probe_free(struct curl_probe *);

/*
 * Puts the transfer on the run's curl loop; done gets the curl_probe.
 * 0, or -1 (nothing started, the caller reports).
 */
int			 curl_probe_start(struct curl_probe *, curl_loop_done_fn);
/*
 * From the transfer's done callback: the body's judging, fn(arg), on a
 * worker thread, then done(arg) on the loop; run->data stays cp, so the
 * run's timeout (curl_probe_cancel) abandons it. arg is the job's from
 * here on: release(arg) once the thread has returned and cp is freed, so
 * done() reads arg before curl_probe_free(cp). 0, or -1 with errno (no
 * thread; arg stays the caller's).
 */
int			 curl_probe_offload(struct curl_probe *,
			    void (*fn)(void *), void (*done)(void *),
			    void (*release)(void *), void *arg);
/* No thread for curl_probe_offload: the reason and result, as for errno. */
void			 curl_probe_thread_failed(int err, char *reason,
			    size_t size, enum probe_result *result);
/* The kinds' cancel: drops the transfer in run->data, reports nothing. */
void			 curl_probe_cancel(struct probe_run *);
void			 curl_probe_keep_free(void *);

/*
 * The short reason for a failed transfer ("connection refused",
 * "timed out", "TLS: certificate verify failed"). Logs libcurl's own
 * text when it says more than that and the failure differs from the
 * previous run's, so a lasting failure is logged once.
 */
const char		*curl_probe_error(struct curl_probe *, CURLcode);
/*
 * When a failed transfer failed for want of lbagent's own resources (no
 * descriptor for the socket, no memory, no resolver thread), the reason
 * for an unknown run; NULL when it is the far side's failure.
 */
const char		*curl_probe_local(struct curl_probe *, CURLcode);
/*
 * rc, but CURLE_OK for a transfer stopped only because the body nobody
 * reads reached CURL_PROBE_BODY_MAX.
 */
CURLcode		 curl_probe_result(const struct curl_probe *, CURLcode);
/* Notes a run that got an answer, so the next failure is logged again. */
void			 curl_probe_answered(struct curl_probe *);

#endif
