/*
 * libcurl's multi interface driven by the libevent loop: any number of
 * transfers in flight, none of them blocking the loop. Shared by HTTP and
 * Docker probes (and later peers and HAProxy stats).
 */
#ifndef LBAGENT_CURL_LOOP_H
#define LBAGENT_CURL_LOOP_H

#include <curl/curl.h>
#include <event2/event.h>

struct curl_loop;

/* Called once per transfer, from the loop, after it left the multi handle. */
typedef void (*curl_loop_done_fn)(CURL *easy, CURLcode result, void *arg);

struct curl_loop	*curl_loop_new(struct event_base *);
/*
 * Aborts every transfer still in flight, without calling their done; their
 * easy handles stay the callers'. Safe from inside a done callback.
 */
void			 curl_loop_free(struct curl_loop *);

/*
 * Starts a configured easy handle; 0, or -1 when the multi refused it.
 * done is never called from in here. While the transfer runs, the loop
 * uses the handle's CURLOPT_PRIVATE; the handle stays the caller's.
 */
int			 curl_loop_add(struct curl_loop *, CURL *easy,
			    curl_loop_done_fn done, void *arg);
/* Stops a transfer in flight; its done is never called. */
void			 curl_loop_remove(struct curl_loop *, CURL *easy);

#endif
