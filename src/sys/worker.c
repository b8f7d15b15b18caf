/*
 * Blocking calls on threads of their own. A job has two references, the
 * owner's and the thread's, counted under the job's mutex; the last one to
 * let go frees it. The thread's only way back to the loop is one write to
 * the job's eventfd, made under the mutex and only while the job is not
 * abandoned, so closing that eventfd after abandoning is safe.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "lbagent/sys/worker.h"

struct worker_job {
	pthread_mutex_t	 lock;
	int		 refs;		/* owner + thread; under lock */
	bool		 running;	/* fn has not returned; under lock */
	bool		 abandoned;	/* done() must not run; under lock */
	/* The loop's side: only the loop thread touches these. */
	int		 efd;
	struct event	*ev;
	void		(*fn)(void *);
	void		(*done)(void *);
	void		(*release)(void *);
	void		*arg;
};

static void
worker_destroy(struct worker_job *job)
{
	if (job->release != NULL)
		job->release(job->arg);
	pthread_mutex_destroy(&job->lock);
	free(job);
}

/* Drops one reference; frees the job when it was the last. */
static void
worker_unref(struct worker_job *job)
{
	bool	last;

	pthread_mutex_lock(&job->lock);
	last = --job->refs == 0;
	pthread_mutex_unlock(&job->lock);
	if (last)
		worker_destroy(job);
}

static void *
worker_main(void *p)
{
	struct worker_job	*job = p;
	uint64_t		 one = 1;
	bool			 last;

	job->fn(job->arg);
	pthread_mutex_lock(&job->lock);
	job->running = false;
	/*
	 * Adding 1 to a fresh eventfd cannot fail; were it to, the run would
	 * end at its timeout like a hung one. No logging from this thread.
	 */
	if (!job->abandoned) {
		ssize_t	n = write(job->efd, &one, sizeof(one));

		(void)n;
	}
	last = --job->refs == 0;
	pthread_mutex_unlock(&job->lock);
	if (last)
		worker_destroy(job);
	return NULL;
}

/* On the loop thread: the call returned; hand its result to done(). */
static void
worker_ready(evutil_socket_t fd, short what, void *p)
{
	struct worker_job	*job = p;
	uint64_t		 n;

	if (read(fd, &n, sizeof(n)) == -1 && errno == EAGAIN)
		return;		/* spurious; the event is still added */
	/* Pairs with the thread's unlock: its results are visible to us. */
	pthread_mutex_lock(&job->lock);
	pthread_mutex_unlock(&job->lock);
	event_free(job->ev);
	job->ev = NULL;
	close(job->efd);
	job->efd = -1;
	/* Last touch: done() may worker_free() the job. */
	job->done(job->arg);
}

struct worker_job *
worker_start(struct event_base *base, void (*fn)(void *),
    void (*done)(void *), void (*release)(void *), void *arg)
{
	struct worker_job	*job;
	pthread_attr_t		 attr;
	pthread_t		 tid;
	sigset_t		 all, old;
	int			 error;

	if ((job = calloc(1, sizeof(*job))) == NULL)
		return NULL;
	job->efd = -1;
	if ((error = pthread_mutex_init(&job->lock, NULL)) != 0) {
		free(job);
		errno = error;
		return NULL;
	}
	job->fn = fn;
	job->done = done;
	job->release = release;
	job->arg = arg;
	job->refs = 2;
	job->running = true;
	if ((job->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) == -1)
		goto fail;
	if ((job->ev = event_new(base, job->efd, EV_READ | EV_PERSIST,
	    worker_ready, job)) == NULL || event_add(job->ev, NULL) == -1) {
		errno = ENOMEM;
		goto fail;
	}

	/* Signals belong to the loop thread (libevent, SIGCHLD for exec). */
	if ((error = pthread_attr_init(&attr)) != 0)
		goto fail_errno;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	error = pthread_create(&tid, &attr, worker_main, job);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (error != 0)
		goto fail_errno;
	return job;

fail_errno:
	errno = error;
fail:
	error = errno;
	if (job->ev != NULL)
		event_free(job->ev);
	if (job->efd != -1)
		close(job->efd);
	pthread_mutex_destroy(&job->lock);
	free(job);
	errno = error;
	return NULL;
}

void
worker_abandon(struct worker_job *job)
{
	pthread_mutex_lock(&job->lock);
	job->abandoned = true;
	pthread_mutex_unlock(&job->lock);
	/* From here on the thread never writes to efd. */
	if (job->ev != NULL) {
		event_free(job->ev);
		job->ev = NULL;
		close(job->efd);
		job->efd = -1;
	}
}

bool
worker_running(struct worker_job *job)
{
	bool	running;

	pthread_mutex_lock(&job->lock);
	running = job->running;
	pthread_mutex_unlock(&job->lock);
	return running;
}

void
worker_free(struct worker_job *job)
{
	if (job == NULL)
		return;
	worker_abandon(job);
	worker_unref(job);
}
