/* Probe kinds in unit tests: settings and real runs on a real loop. */
#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "lbagent/clock.h"
#include "probeutil.h"
#include "testutil.h"

static void
reported(struct probe_run *run, const struct probe_outcome *out)
{
	struct pu	*pu = run->owner;

	pu->out = *out;
	pu->nreports++;
}

void
pu_init(struct pu *pu, const struct probe_ops *ops)
{
	pu_init_on(pu, ops, NULL);
}

void
pu_init_on(struct pu *pu, const struct probe_ops *ops, struct event_base *base)
{
	memset(pu, 0, sizeof(*pu));
	if ((pu->base = base) == NULL) {
		ck_assert_ptr_nonnull(pu->base = event_base_new());
		pu->own_base = 1;
	}
	pu->env.base = pu->base;
	pu->env.proc_root = "/proc";
	pu->ops = ops;
	ck_assert_ptr_nonnull(pu->conf = ops->conf_new());
	pu->run.ops = ops;
	pu->run.name = "test";
	pu->run.conf = pu->conf;
	pu->run.env = &pu->env;
	pu->run.timeout_ms = 2000;
	pu->run.reported = reported;
	pu->run.owner = pu;
}

void
pu_done(struct pu *pu)
{
	ck_assert(!pu->run.in_flight);
	if (pu->run.keep != NULL && pu->ops->keep_free != NULL)
		pu->ops->keep_free(pu->run.keep);
	pu->ops->conf_free(pu->conf);
	if (pu->own_base)
		event_base_free(pu->base);
}

void
pu_set(struct pu *pu, const char *key, const char *value)
{
	const char	*why = NULL;

	ck_assert_msg(pu->ops->conf_set(pu->conf, key, value, &why) == 0,
	    "%s = %s: %s", key, value, why);
}

const char *
pu_set_bad(struct pu *pu, const char *key, const char *value)
{
	const char	*why = NULL;

	ck_assert_msg(pu->ops->conf_set(pu->conf, key, value, &why) == -1,
	    "%s = %s accepted", key, value);
	ck_assert_ptr_nonnull(why);
	return why;
}

void
pu_check(struct pu *pu)
{
	const char	*why = NULL;

	ck_assert_msg(pu->ops->conf_check(pu->conf, &why) == 0, "%s", why);
}

const char *
pu_check_bad(struct pu *pu)
{
	const char	*why = NULL;

	ck_assert_msg(pu->ops->conf_check(pu->conf, &why) == -1,
	    "conf_check passed");
	ck_assert_ptr_nonnull(why);
	return why;
}

void
pu_start(struct pu *pu)
{
	pu->nreports = 0;
	pu->run.in_flight = true;
	pu->ops->start(&pu->run);
}

static void
expire_cb(evutil_socket_t fd, short what, void *arg)
{
	*(bool *)arg = true;
}

/* Runs the loop until done(pu) or limit_ms; true when done. */
static bool
loop_until(struct pu *pu, int64_t limit_ms, bool (*done)(struct pu *))
{
	struct timeval	 tv = { (time_t)(limit_ms / 1000),
			    (suseconds_t)(limit_ms % 1000) * 1000 };
	struct event	*limit;
	bool		 expired = false, ok;

	ck_assert_ptr_nonnull(limit = evtimer_new(pu->base, expire_cb,
	    &expired));
	ck_assert_int_eq(evtimer_add(limit, &tv), 0);
	while (!(ok = done(pu)) && !expired)
		ck_assert_int_ne(event_base_loop(pu->base, EVLOOP_ONCE), -1);
	event_free(limit);
	return ok;
}

static bool
has_reported(struct pu *pu)
{
	return pu->nreports > 0;
}

static bool
never(struct pu *pu)
{
	return false;
}

/* Nothing but our own limit timer is left on the loop. */
static bool
loop_empty(struct pu *pu)
{
	return event_base_get_num_events(pu->base,
	    EVENT_BASE_COUNT_ADDED | EVENT_BASE_COUNT_ACTIVE) <= 1;
}

const struct probe_outcome *
pu_wait(struct pu *pu, int64_t limit_ms)
{
	ck_assert_msg(loop_until(pu, limit_ms, has_reported),
	    "no report within %lldms", (long long)limit_ms);
	ck_assert_int_eq(pu->nreports, 1);
	ck_assert(!pu->run.in_flight);
	return &pu->out;
}

const struct probe_outcome *
pu_run(struct pu *pu, int64_t limit_ms)
{
	pu_start(pu);
	return pu_wait(pu, limit_ms);
}

void
pu_loop_ms(struct pu *pu, int64_t ms)
{
	loop_until(pu, ms, never);
}

void
pu_drain(struct pu *pu, int64_t limit_ms)
{
	ck_assert_msg(loop_until(pu, limit_ms, loop_empty),
	    "events still pending after %lldms", (long long)limit_ms);
}

void
pu_cancel(struct pu *pu)
{
	ck_assert(pu->run.in_flight);
	pu->ops->cancel(&pu->run);
	pu->run.in_flight = false;
}

int
pu_count_fds(void)
{
	DIR		*d;
	struct dirent	*e;
	int		 n = 0;

	ck_assert_ptr_nonnull(d = opendir("/proc/self/fd"));
	while ((e = readdir(d)) != NULL)
		if (isdigit((unsigned char)e->d_name[0]) &&
		    atoi(e->d_name) != dirfd(d))
			n++;
	closedir(d);
	return n;
}

/* State and parent from /proc/PID/stat; -1 when gone. */
static int
proc_stat(pid_t pid, char *state, pid_t *ppid)
{
	char	 path[64], buf[512], *p;
	FILE	*fp;
	size_t	 n;
	int	 pp;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fp = fopen(path, "re")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	/* The command name may hold anything: skip to its last ')'. */
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 1, " %c %d", state, &pp) != 2)
		return -1;
	*ppid = pp;
	return 0;
}

int
pu_count_children(int *zombies)
{
	DIR		*d;
	struct dirent	*e;
	pid_t		 ppid;
	char		 state;
	int		 n = 0;

	*zombies = 0;
	ck_assert_ptr_nonnull(d = opendir("/proc"));
	while ((e = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (proc_stat(atoi(e->d_name), &state, &ppid) == -1 ||
		    ppid != getpid())
			continue;
		n++;
		if (state == 'Z')
			(*zombies)++;
	}
	closedir(d);
	return n;
}

int
pu_alive(pid_t pid)
{
	pid_t	ppid;
	char	state;

	if (proc_stat(pid, &state, &ppid) == -1)
		return 0;
	return state != 'Z' && state != 'X' && state != 'x';
}

int
pu_wait_dead(pid_t pid, int64_t limit_ms)
{
	int64_t	until = clock_now_ms() + limit_ms;

	while (pu_alive(pid)) {
		if (clock_now_ms() > until)
			return 0;
		usleep(10000);
	}
	return 1;
}
