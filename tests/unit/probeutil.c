/* Probe kinds in unit tests: settings and real runs on a real loop. */
#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "lbagent/sys/clock.h"
#include "probeutil.h"

static void
reported(struct probe_run *run, const struct probe_outcome *out)
{
	struct pu	*pu = run->owner;

	pu->out = *out;
	pu->nreports++;
	pu->reports++;
	if (pu->pending != NULL && *pu->pending > 0 && --*pu->pending == 0)
		event_base_loopbreak(pu->base);
}

static void
run_init(struct pu *pu, const struct probe_ops *ops, const void *conf,
    int64_t timeout_ms)
{
	pu->ops = ops;
	pu->run.ops = ops;
	pu->run.name = "web";
	pu->run.conf = conf;
	pu->run.env = &pu->env;
	pu->run.timeout_ms = timeout_ms;
	pu->run.reported = reported;
	pu->run.owner = pu;
}

void
pu_init(struct pu *pu, const struct probe_ops *ops, const char *proc_root)
{
	pu_init_on(pu, ops, NULL);
	if (proc_root != NULL)
		pu->env.proc_root = proc_root;
}

void
pu_init_on(struct pu *pu, const struct probe_ops *ops, struct event_base *base)
{
	memset(pu, 0, sizeof(*pu));
	if ((pu->base = base) == NULL) {
		ck_assert_ptr_nonnull(pu->base = event_base_new());
		pu->own_base = true;
	}
	pu->env.base = pu->base;
	pu->env.proc_root = "/proc";
	ck_assert_ptr_nonnull(pu->conf = ops->conf_new());
	pu->own_conf = true;
	run_init(pu, ops, pu->conf, 2000);
}

void
pu_init_env(struct pu *pu, const struct probe_ops *ops,
    const struct probe_env *env, const void *conf, int64_t timeout_ms)
{
	memset(pu, 0, sizeof(*pu));
	pu->base = env->base;
	pu->env = *env;
	run_init(pu, ops, conf, timeout_ms);
}

void
pu_done(struct pu *pu)
{
	ck_assert(!pu->run.in_flight);
	if (pu->run.keep != NULL && pu->ops->keep_free != NULL)
		pu->ops->keep_free(pu->run.keep);
	pu->run.keep = NULL;
	if (pu->own_conf)
		pu->ops->conf_free(pu->conf);
	if (pu->own_base)
		event_base_free(pu->base);
}

void
pu_env_init(struct probe_env *env, struct event_base *base)
{
	memset(env, 0, sizeof(*env));
	env->base = base;
	ck_assert_ptr_nonnull(env->curl = curl_loop_new(base));
	env->proc_root = "/proc";
}

void
pu_env_free(struct probe_env *env)
{
	curl_loop_free(env->curl);
}

bool
pu_documents(const struct probe_ops *ops, const char *key)
{
	const struct probe_key_doc	*k;

	for (k = ops->keys; k->name != NULL; k++)
		if (strcmp(k->name, key) == 0)
			return k->help != NULL;
	return false;
}

void
pu_set(struct pu *pu, const char *key, const char *value)
{
	const char	*why = NULL;

	ck_assert_msg(pu_documents(pu->ops, key), "%s: %s undocumented",
	    pu->ops->name, key);
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

void *
pu_conf(const struct probe_ops *ops, const char *const *kv)
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
pu_conf_error(const struct probe_ops *ops, const char *const *kv)
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

void
pu_conf_set_fails(const struct probe_ops *ops, const char *key,
    const char *value, const char *why)
{
	const char	*got = NULL;
	void		*conf;

	ck_assert(pu_documents(ops, key));
	ck_assert_ptr_nonnull(conf = ops->conf_new());
	ck_assert_msg(ops->conf_set(conf, key, value, &got) == -1,
	    "%s: %s = %s accepted", ops->name, key, value);
	ck_assert_str_eq(got, why);
	ops->conf_free(conf);
}

void
pu_conf_check_fails(const struct probe_ops *ops, const char *why, ...)
{
	const char	*key, *value, *got = NULL;
	void		*conf;
	va_list		 ap;

	ck_assert_ptr_nonnull(conf = ops->conf_new());
	va_start(ap, why);
	while ((key = va_arg(ap, const char *)) != NULL) {
		value = va_arg(ap, const char *);
		ck_assert_msg(ops->conf_set(conf, key, value, &got) == 0,
		    "%s = %s: %s", key, value, got);
	}
	va_end(ap);
	ck_assert_msg(ops->conf_check(conf, &got) == -1, "%s: accepted",
	    ops->name);
	ck_assert_str_eq(got, why);
	ops->conf_free(conf);
}

void
pu_start(struct pu *pu)
{
	ck_assert(!pu->run.in_flight);
	memset(&pu->out, 0, sizeof(pu->out));
	pu->out.value = -12345;
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
	ck_assert_ptr_null(pu->run.data);
	return &pu->out;
}

const struct probe_outcome *
pu_run(struct pu *pu, int64_t limit_ms)
{
	pu_start(pu);
	return pu_wait(pu, limit_ms);
}

bool
pu_once(struct pu *pu, int64_t wait_ms)
{
	pu_start(pu);
	loop_until(pu, wait_ms, has_reported);
	ck_assert_int_le(pu->nreports, 1);
	if (pu->nreports == 0) {
		pu_cancel(pu);
		return false;
	}
	ck_assert(!pu->run.in_flight);
	return true;
}

void
pu_expect(struct pu *pu, enum probe_result r, const char *reason)
{
	ck_assert_msg(pu_once(pu, 10000), "no report within 10s");
	ck_assert_msg(pu->out.result == r, "%s, not %s: %s",
	    probe_result_name(pu->out.result), probe_result_name(r),
	    pu->out.reason);
	ck_assert_str_eq(pu->out.reason, reason);
}

void
pu_loop_ms(struct pu *pu, int64_t ms)
{
	loop_until(pu, ms, never);
}

static void
bound_cb(evutil_socket_t fd, short what, void *arg)
{
	event_base_loopbreak(arg);
}

bool
pu_loop_pending(struct event_base *base, unsigned *pending, int ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };
	struct event	*bound = evtimer_new(base, bound_cb, base);

	ck_assert_ptr_nonnull(bound);
	evtimer_add(bound, &tv);
	if (pending == NULL || *pending > 0)
		event_base_dispatch(base);
	event_free(bound);
	return pending == NULL || *pending == 0;
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
	ck_assert(pu->ops->cancel != NULL);
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

char *
pu_mkdirs(const char *root, const char *rel)
{
	char	*path, *p;

	ck_assert_int_ne(asprintf(&path, "%s/%s", root, rel), -1);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	mkdir(path, 0755);
	return path;
}

size_t
pu_junk(char *buf, size_t max, unsigned *seed)
{
	static const char *const pieces[] = { "0", "1", "9", "12345", " ",
	    "  ", "\n", "\t", ".", "-", "cpu", "cpu0", "cpu ", ")", "(", "Z",
	    "S", ":", " kB", "MemTotal:", "MemAvailable:", "SwapTotal:",
	    "SwapFree:", "18446744073709551615", "99999999999999999999", "/",
	    "nan", "e", "\xff", "" };
	size_t	len = 0, want, n;

	*seed = *seed * 1103515245 + 12345;
	want = (*seed >> 8) % max;
	while (len < want) {
		*seed = *seed * 1103515245 + 12345;
		n = (*seed >> 8) % (sizeof(pieces) / sizeof(pieces[0]));
		if (n == sizeof(pieces) / sizeof(pieces[0]) - 1) {
			buf[len++] = '\0';	/* a NUL byte */
			continue;
		}
		n = strlen(pieces[n]) > want - len ? 0 :
		    (memcpy(buf + len, pieces[n], strlen(pieces[n])),
		    strlen(pieces[n]));
		if (n == 0)
			buf[len++] = 'x';
		len += n;
	}
	return len;
}
