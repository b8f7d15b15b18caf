/* Probe runs driven like the scheduler drives them, bounded in time. */
#include <math.h>
#include <string.h>

#include <event2/event.h>

#include "testprobe.h"
#include "testutil.h"

void
tp_env_init(struct probe_env *env, struct event_base *base)
{
	memset(env, 0, sizeof(*env));
	env->base = base;
	ck_assert_ptr_nonnull(env->curl = curl_loop_new(base));
	env->proc_root = "/proc";
}

void
tp_env_free(struct probe_env *env)
{
	curl_loop_free(env->curl);
}

void *
tp_conf(const struct probe_ops *ops, const char *const *kv)
{
	void		*conf = ops->conf_new();
	const char	*why = NULL;

	ck_assert_ptr_nonnull(conf);
	for (; kv[0] != NULL; kv += 2)
		ck_assert_msg(ops->conf_set(conf, kv[0], kv[1], &why) == 0,
		    "%s = %s: %s", kv[0], kv[1], why);
	ck_assert_msg(ops->conf_check(conf, &why) == 0, "check: %s", why);
	return conf;
}

const char *
tp_conf_error(const struct probe_ops *ops, const char *const *kv)
{
	void		*conf = ops->conf_new();
	const char	*why = NULL;

	ck_assert_ptr_nonnull(conf);
	for (; kv[0] != NULL; kv += 2)
		if (ops->conf_set(conf, kv[0], kv[1], &why) == -1)
			goto out;
	if (ops->conf_check(conf, &why) == 0)
		why = NULL;
out:
	ops->conf_free(conf);
	return why;
}

static void
tp_reported(struct probe_run *run, const struct probe_outcome *out)
{
	struct tp_runner	*r = run->owner;

	r->out = *out;
	r->reported++;
	if (r->pending != NULL && *r->pending > 0 && --*r->pending == 0)
		event_base_loopbreak(r->base);
}

void
tp_runner_init(struct tp_runner *r, const struct probe_ops *ops,
    const struct probe_env *env, const void *conf, int64_t timeout_ms)
{
	memset(r, 0, sizeof(*r));
	r->base = env->base;
	r->env = *env;
	r->run.ops = ops;
	r->run.name = "web";
	r->run.conf = conf;
	r->run.env = &r->env;
	r->run.timeout_ms = timeout_ms;
	r->run.reported = tp_reported;
	r->run.owner = r;
}

void
tp_runner_free(struct tp_runner *r)
{
	if (r->run.keep != NULL)
		r->run.ops->keep_free(r->run.keep);
	r->run.keep = NULL;
}

void
tp_start(struct tp_runner *r)
{
	ck_assert(!r->run.in_flight);
	memset(&r->out, 0, sizeof(r->out));
	r->out.value = -12345;
	r->run.in_flight = true;
	r->run.ops->start(&r->run);
}

static void
tp_bound(evutil_socket_t fd, short what, void *arg)
{
	event_base_loopbreak(arg);
}

bool
tp_loop(struct event_base *base, unsigned *pending, int ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };
	struct event	*bound = evtimer_new(base, tp_bound, base);

	ck_assert_ptr_nonnull(bound);
	evtimer_add(bound, &tv);
	if (pending == NULL || *pending > 0)
		event_base_dispatch(base);
	event_free(bound);
	return pending == NULL || *pending == 0;
}

void
tp_run(struct tp_runner *r)
{
	unsigned	pending = 1;
	unsigned	before = r->reported;

	r->pending = &pending;
	tp_start(r);
	if (r->reported == before)
		ck_assert_msg(tp_loop(r->base, &pending, 20000),
		    "no report within 20s");
	r->pending = NULL;
	ck_assert_uint_eq(r->reported, before + 1);
	ck_assert(!r->run.in_flight);
	ck_assert_ptr_null(r->run.data);
}
