/* Driving one probe like the scheduler does; see sysrun.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sysrun.h"

static void
reported(struct probe_run *run, const struct probe_outcome *out)
{
	struct sysrun	*sr = run->owner;

	sr->out = *out;
	sr->reports++;
	event_base_loopbreak(sr->base);
}

static void
bound(evutil_socket_t fd, short what, void *arg)
{
	event_base_loopbreak(arg);
}

void
sysrun_init(struct sysrun *sr, const struct probe_ops *ops,
    const char *proc_root)
{
	memset(sr, 0, sizeof(*sr));
	ck_assert_ptr_nonnull(sr->base = event_base_new());
	sr->ops = ops;
	ck_assert_ptr_nonnull(sr->conf = ops->conf_new());
	sr->env.base = sr->base;
	sr->env.proc_root = proc_root != NULL ? proc_root : "/proc";
	sr->run.ops = ops;
	sr->run.name = "test";
	sr->run.conf = sr->conf;
	sr->run.env = &sr->env;
	sr->run.timeout_ms = 2000;
	sr->run.reported = reported;
	sr->run.owner = sr;
}

void
sysrun_set(struct sysrun *sr, const char *key, const char *value)
{
	const char	*why = NULL;

	ck_assert_msg(sysconf_documents(sr->ops, key), "%s: %s undocumented",
	    sr->ops->name, key);
	ck_assert_msg(sr->ops->conf_set(sr->conf, key, value, &why) == 0,
	    "%s = %s: %s", key, value, why);
}

void
sysrun_check(struct sysrun *sr)
{
	const char	*why = NULL;

	ck_assert_msg(sr->ops->conf_check(sr->conf, &why) == 0, "%s", why);
}

bool
sysrun_once(struct sysrun *sr, int64_t wait_ms)
{
	struct timeval	 tv = { wait_ms / 1000, (wait_ms % 1000) * 1000 };
	struct event	*timer;
	int		 before = sr->reports;

	sr->run.in_flight = true;
	sr->ops->start(&sr->run);
	if (sr->reports == before) {
		ck_assert_ptr_nonnull(timer = evtimer_new(sr->base, bound,
		    sr->base));
		evtimer_add(timer, &tv);
		event_base_dispatch(sr->base);
		event_free(timer);
	}
	ck_assert_int_le(sr->reports, before + 1);
	if (sr->reports == before) {
		ck_assert(sr->ops->cancel != NULL);
		sr->ops->cancel(&sr->run);
		sr->run.in_flight = false;
		return false;
	}
	ck_assert(!sr->run.in_flight);
	return true;
}

void
sysrun_expect(struct sysrun *sr, enum probe_result r, const char *reason)
{
	ck_assert_msg(sysrun_once(sr, 10000), "no report within 10s");
	ck_assert_msg(sr->out.result == r, "%s, not %s: %s",
	    probe_result_name(sr->out.result), probe_result_name(r),
	    sr->out.reason);
	ck_assert_str_eq(sr->out.reason, reason);
}

void
sysrun_free(struct sysrun *sr)
{
	if (sr->ops->keep_free != NULL)
		sr->ops->keep_free(sr->run.keep);
	sr->ops->conf_free(sr->conf);
	event_base_free(sr->base);
}

bool
sysconf_documents(const struct probe_ops *ops, const char *key)
{
	const struct probe_key_doc	*k;

	for (k = ops->keys; k->name != NULL; k++)
		if (strcmp(k->name, key) == 0)
			return k->help != NULL;
	return false;
}

void
sysconf_set_fails(const struct probe_ops *ops, const char *key,
    const char *value, const char *why)
{
	const char	*got = NULL;
	void		*conf;

	ck_assert(sysconf_documents(ops, key));
	ck_assert_ptr_nonnull(conf = ops->conf_new());
	ck_assert_msg(ops->conf_set(conf, key, value, &got) == -1,
	    "%s: %s = %s accepted", ops->name, key, value);
	ck_assert_str_eq(got, why);
	ops->conf_free(conf);
}

void
sysconf_check_fails(const struct probe_ops *ops, const char *why, ...)
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

char *
sys_mkdirs(const char *root, const char *rel)
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
sys_junk(char *buf, size_t max, unsigned *seed)
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
