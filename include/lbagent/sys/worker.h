/*
 * One blocking call (statvfs on a possibly hung network mount) on a thread
 * of its own, so a hang never stalls the event loop. The thread wakes the
 * loop through an eventfd of its own; it never touches libevent, so no
 * evthread_use_pthreads() and no worker_init() are needed.
 *
 * Ownership: the job owns arg from worker_start() on and passes it to
 * release() (when not NULL) once both the thread has returned and the owner
 * has called worker_free(), on whichever of the two threads comes last.
 */
#ifndef LBAGENT_WORKER_H
#define LBAGENT_WORKER_H

#include <stdbool.h>

#include <event2/event.h>

struct worker_job;

/*
 * Runs fn(arg) on a new detached thread with every signal blocked, then
 * done(arg) on base's loop thread unless the job was abandoned first.
 * Returns NULL with errno set when no thread could be started; arg then
 * stays the caller's.
 */
struct worker_job	*worker_start(struct event_base *base,
			    void (*fn)(void *), void (*done)(void *),
			    void (*release)(void *), void *arg);
/*
 * done() will never be called. The thread may stay blocked forever; the
 * handle stays valid (for worker_running) until worker_free().
 */
void			 worker_abandon(struct worker_job *);
/* True while fn has not returned. */
bool			 worker_running(struct worker_job *);
/* Drops the owner's handle (abandoning the job if done() is still due). */
void			 worker_free(struct worker_job *);

#endif
