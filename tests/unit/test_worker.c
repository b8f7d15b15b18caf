/*
 * The worker: a real call on a real thread, done() on the loop thread,
 * and a real blocked call (reading a FIFO nobody writes) abandoned,
 * then unblocked, proving done() never runs and the job frees itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lbagent/sys/worker.h"
#include "testutil.h"

/* What one job touches; the test owns it, so release only records. */
struct job_arg {
	const char	*fifo;		/* NULL: return at once */
	atomic_int	 ran;
	atomic_int	 done;
	atomic_int	 released;
	atomic_bool	 signals_blocked;
	pthread_t	 done_thread;
	char		 got;
	int		 notify;	/* release writes a byte here */
	struct event_base *base;	/* done breaks its loop */
};

static void
job_fn(void *p)
{
	struct job_arg	*a = p;
	sigset_t	 mask;
	int		 fd;

	pthread_sigmask(SIG_BLOCK, NULL, &mask);
	a->signals_blocked = sigismember(&mask, SIGTERM) &&
	    sigismember(&mask, SIGCHLD);
	if (a->fifo != NULL) {
		/* Blocks until someone opens the FIFO for writing. */
		if ((fd = open(a->fifo, O_RDONLY)) != -1) {
			if (read(fd, &a->got, 1) != 1)
				a->got = '?';
			close(fd);
		}
	}
	a->ran++;
}

static void
job_done(void *p)
{
	struct job_arg	*a = p;

	a->done_thread = pthread_self();
	a->done++;
	if (a->base != NULL)
		event_base_loopbreak(a->base);
}

static void
job_release(void *p)
{
	struct job_arg	*a = p;
	ssize_t		 n;

	a->released++;
	if (a->notify != -1)
		n = write(a->notify, "r", 1), (void)n;
}

static void
job_init(struct job_arg *a, struct event_base *base)
{
	memset(a, 0, sizeof(*a));
	a->notify = -1;
	a->base = base;
}

static void
break_loop(evutil_socket_t fd, short what, void *base)
{
	event_base_loopbreak(base);
}

/* Runs the loop until something breaks it or ms pass. */
static void
loop_for(struct event_base *base, int ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };
	struct event	*t;

	ck_assert_ptr_nonnull(t = evtimer_new(base, break_loop, base));
	evtimer_add(t, &tv);
	event_base_dispatch(base);
	event_free(t);
}

/* Waits (bounded at 10s) for release()'s byte on fd, and takes it. */
static bool
wait_readable(int fd)
{
	struct pollfd	pfd = { fd, POLLIN, 0 };
	char		c;

	return poll(&pfd, 1, 10000) == 1 && read(fd, &c, 1) == 1;
}

/* Waits (bounded at 10s) until the job's fn has returned. */
static bool
wait_returned(struct worker_job *job)
{
	struct timespec	ts = { 0, 5 * 1000 * 1000 };
	int		i;

	for (i = 0; i < 2000; i++) {
		if (!worker_running(job))
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

static char *
make_fifo(char **dir)
{
	char	*path;

	*dir = tu_tmpdir();
	ck_assert_int_ne(asprintf(&path, "%s/fifo", *dir), -1);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	return path;
}

/* Opens the FIFO's write side, meeting the blocked reader, and writes. */
static void
unblock_fifo(const char *path)
{
	int	fd;

	ck_assert_int_ne(fd = open(path, O_WRONLY), -1);
	ck_assert_int_eq(write(fd, "x", 1), 1);
	close(fd);
}

START_TEST(done_on_loop_thread)
{
	struct event_base	*base = event_base_new();
	struct worker_job	*job;
	struct job_arg		 a;

	job_init(&a, base);
	ck_assert_ptr_nonnull(job = worker_start(base, job_fn, job_done,
	    job_release, &a));
	loop_for(base, 10000);
	ck_assert_int_eq(a.ran, 1);
	ck_assert_int_eq(a.done, 1);
	ck_assert(pthread_equal(a.done_thread, pthread_self()));
	ck_assert(a.signals_blocked);
	ck_assert(!worker_running(job));
	ck_assert_int_eq(a.released, 0);
	worker_free(job);
	ck_assert_int_eq(a.released, 1);
	/* Nothing is left on the base. */
	ck_assert_int_eq(event_base_get_num_events(base, EVENT_BASE_COUNT_ADDED),
	    0);
	event_base_free(base);
}
END_TEST

START_TEST(many_at_once)
{
	enum { N = 32 };
	struct event_base	*base = event_base_new();
	struct worker_job	*jobs[N];
	struct job_arg		 a[N];
	int			 i, total, tries;

	for (i = 0; i < N; i++) {
		job_init(&a[i], NULL);
		ck_assert_ptr_nonnull(jobs[i] = worker_start(base, job_fn,
		    job_done, job_release, &a[i]));
	}
	for (tries = 0; tries < 1000; tries++) {
		for (total = 0; total < N && a[total].done; total++)
			;
		if (total == N)
			break;
		event_base_loop(base, EVLOOP_ONCE);
	}
	for (i = 0; i < N; i++) {
		ck_assert_int_eq(a[i].done, 1);
		worker_free(jobs[i]);
		ck_assert_int_eq(a[i].released, 1);
	}
	event_base_free(base);
}
END_TEST

/* Abandoned while blocked, freed while blocked: the thread cleans up. */
START_TEST(abandoned_blocked_then_freed)
{
	struct event_base	*base = event_base_new();
	struct worker_job	*job;
	struct job_arg		 a;
	char			*dir, *fifo = make_fifo(&dir);
	int			 p[2];

	ck_assert_int_eq(pipe(p), 0);
	job_init(&a, base);
	a.fifo = fifo;
	a.notify = p[1];
	ck_assert_ptr_nonnull(job = worker_start(base, job_fn, job_done,
	    job_release, &a));
	loop_for(base, 200);		/* the "timeout" */
	ck_assert_int_eq(a.done, 0);
	ck_assert(worker_running(job));
	worker_abandon(job);
	ck_assert(worker_running(job));
	worker_free(job);
	ck_assert_int_eq(a.released, 0);	/* the thread still holds it */

	unblock_fifo(fifo);
	ck_assert_msg(wait_readable(p[0]), "release never ran");
	ck_assert_int_eq(a.ran, 1);
	ck_assert_int_eq(a.got, 'x');
	ck_assert_int_eq(a.released, 1);
	loop_for(base, 100);
	ck_assert_int_eq(a.done, 0);
	ck_assert_int_eq(event_base_get_num_events(base, EVENT_BASE_COUNT_ADDED),
	    0);
	event_base_free(base);
	close(p[0]);
	close(p[1]);
	tu_rmtree(dir);
	free(dir);
	free(fifo);
}
END_TEST

/* Abandoned while blocked, freed after it returned: the owner cleans up. */
START_TEST(abandoned_blocked_then_returned)
{
	struct event_base	*base = event_base_new();
	struct worker_job	*job;
	struct job_arg		 a;
	char			*dir, *fifo = make_fifo(&dir);

	job_init(&a, base);
	a.fifo = fifo;
	ck_assert_ptr_nonnull(job = worker_start(base, job_fn, job_done,
	    job_release, &a));
	loop_for(base, 200);
	worker_abandon(job);
	unblock_fifo(fifo);
	ck_assert_msg(wait_returned(job), "fn never returned");
	loop_for(base, 100);
	ck_assert_int_eq(a.ran, 1);
	ck_assert_int_eq(a.done, 0);
	ck_assert_int_eq(a.released, 0);
	worker_free(job);
	ck_assert_int_eq(a.released, 1);
	event_base_free(base);
	tu_rmtree(dir);
	free(dir);
	free(fifo);
}
END_TEST

/* Returned but not yet delivered when abandoned: done() never runs. */
START_TEST(abandoned_after_return)
{
	struct event_base	*base = event_base_new();
	struct worker_job	*job;
	struct job_arg		 a;

	job_init(&a, base);
	ck_assert_ptr_nonnull(job = worker_start(base, job_fn, job_done,
	    job_release, &a));
	ck_assert(wait_returned(job));
	worker_abandon(job);
	worker_abandon(job);		/* twice is harmless */
	loop_for(base, 100);
	ck_assert_int_eq(a.done, 0);
	worker_free(job);
	ck_assert_int_eq(a.released, 1);
	event_base_free(base);
}
END_TEST

/* Freed without abandoning (owner going away): same as abandoning. */
START_TEST(freed_before_delivery)
{
	struct event_base	*base = event_base_new();
	struct worker_job	*job;
	struct job_arg		 a;
	int			 p[2];

	ck_assert_int_eq(pipe(p), 0);
	job_init(&a, base);
	a.notify = p[1];
	ck_assert_ptr_nonnull(job = worker_start(base, job_fn, job_done,
	    job_release, &a));
	worker_free(job);
	ck_assert_msg(wait_readable(p[0]), "release never ran");
	loop_for(base, 100);
	ck_assert_int_eq(a.ran, 1);
	ck_assert_int_eq(a.done, 0);
	ck_assert_int_eq(a.released, 1);
	event_base_free(base);
	close(p[0]);
	close(p[1]);
}
END_TEST

static Suite *
worker_suite(void)
{
	Suite	*s = suite_create("worker");
	TCase	*tc = tcase_create("worker");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, done_on_loop_thread);
	tcase_add_test(tc, many_at_once);
	tcase_add_test(tc, abandoned_blocked_then_freed);
	tcase_add_test(tc, abandoned_blocked_then_returned);
	tcase_add_test(tc, abandoned_after_return);
	tcase_add_test(tc, freed_before_delivery);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(worker_suite());
}
