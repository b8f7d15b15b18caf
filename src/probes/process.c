/*
 * process: a daemon must be alive, found by its pidfile or by name among
 * <proc_root>/PID/comm. Zombies do not count: they are exited processes
 * nobody has reaped.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lbagent/probes/kinds.h"
#include "sysprobe.h"

/* The kernel keeps 15 bytes of a command name (TASK_COMM_LEN - 1). */
#define COMM_MAX	15
#define NAME_MAX_LEN	255

struct process_conf {
	char	*pidfile;
	char	*name;
};

static const struct probe_key_doc process_keys[] = {
	{ "pidfile", NULL, "Absolute path of a file holding the pid; this or "
	    "name.", false },
	{ "name", NULL, "Command name as in /proc/PID/comm (its first 15 "
	    "characters are compared); this or pidfile.", false },
	{ NULL, NULL, NULL, false }
};

static void *
process_conf_new(void)
{
	return calloc(1, sizeof(struct process_conf));
}

static void
process_conf_free(void *conf)
{
	struct process_conf	*c = conf;

	if (c == NULL)
		return;
	free(c->pidfile);
	free(c->name);
	free(c);
}

static int
process_conf_set(void *conf, const char *key, const char *value,
    const char **why)
{
	struct process_conf	*c = conf;
	char			*copy;

	if (strcmp(key, "pidfile") == 0)
		return sysprobe_conf_path(&c->pidfile, value, why);
	if (strcmp(key, "name") != 0) {
		*why = "unknown key";
		return -1;
	}
	if (*value == '\0') {
		*why = "expected a command name";
		return -1;
	}
	if (strlen(value) > NAME_MAX_LEN) {
		*why = "name too long";
		return -1;
	}
	if ((copy = strdup(value)) == NULL) {
		*why = "out of memory";
		return -1;
	}
	free(c->name);
	c->name = copy;
	return 0;
}

static int
process_conf_check(void *conf, const char **why)
{
	struct process_conf	*c = conf;

	if (c->pidfile == NULL && c->name == NULL) {
		*why = "pidfile or name is required";
		return -1;
	}
	if (c->pidfile != NULL && c->name != NULL) {
		*why = "give pidfile or name, not both";
		return -1;
	}
	return 0;
}

/*
 * The state letter of <root>/<pid>/stat: "pid (comm) S ...", where comm
 * may hold spaces and parentheses, so the state follows the last ')'.
 * 0, or -1 with why (and errno ENOENT when the process is gone).
 */
static int
pid_state(const char *root, const char *pid, char *state,
    char why[SYS_WHY_MAX])
{
	char		 rel[64], buf[1024];
	const char	*p;

	snprintf(rel, sizeof(rel), "%s/stat", pid);
	if (sysprobe_read_proc(root, rel, buf, sizeof(buf), NULL, why) == -1)
		return -1;
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ' ||
	    !isalpha((unsigned char)p[2])) {
		snprintf(why, SYS_WHY_MAX, "%s/%s: malformed", root, rel);
		errno = EINVAL;
		return -1;
	}
	*state = p[2];
	return 0;
}

/*
 * One lookup, done on a worker thread: reading /proc scales with the
 * number of processes, and a pidfile may sit on a hung mount. The thread
 * fills the outcome, which process_done reports on the loop.
 */
struct process_call {
	struct probe_run	*run;
	enum probe_result	 result;
	double			 value;
	char			 reason[PROBE_REASON_MAX + 1];
	bool			 by_pidfile;
	char			 root[PATH_MAX];
	char			 what[];	/* the pidfile, or the name */
};

static void LOG_PRINTF(4, 5)
out_set(struct process_call *o, enum probe_result r, double value,
    const char *fmt, ...)
{
	va_list	ap;

	o->result = r;
	o->value = value;
	va_start(ap, fmt);
	vsnprintf(o->reason, sizeof(o->reason), fmt, ap);
	va_end(ap);
}

/* As sysprobe_report_failed. */
static void
out_failed(struct process_call *o, int err, const char *why)
{
	const char	*local = probe_errno_local(err);

	if (local != NULL)
		out_set(o, PROBE_UNKNOWN, NAN, "%s (%s)", why, local);
	else
		out_set(o, PROBE_CRIT, NAN, "%s", why);
}

/* As probe_report_errno. */
static void
out_errno(struct process_call *o, int err, const char *what)
{
	const char	*local = probe_errno_local(err);

	if (local != NULL)
		out_set(o, PROBE_UNKNOWN, NAN, "%s: %s (%s)", what,
		    strerror(err), local);
	else
		out_set(o, PROBE_CRIT, NAN, "%s: %s", what, strerror(err));
}

static void
process_by_pidfile(struct process_call *o, const char *pidfile)
{
	const char	*root = o->root;
	char		 buf[64], why[SYS_WHY_MAX], dir[PATH_MAX], pid[16];
	const char	*p;
	unsigned long	 v = 0;
	struct stat	 st;
	ssize_t		 n;
	bool		 full;
	char		 state;
	int		 err;

	if ((n = sysprobe_read(pidfile, buf, sizeof(buf), &full, why)) == -1) {
		if (errno == ENOENT)
			out_set(o, PROBE_CRIT, NAN,
			    "pidfile does not exist");
		else
			out_failed(o, errno, why);
		return;
	}
	for (p = buf; *p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'; p++)
		;
	if (p == buf + n && !full) {
		out_set(o, PROBE_CRIT, NAN, "pidfile: empty");
		return;
	}
	for (p = buf; isdigit((unsigned char)*p) && v <= INT_MAX; p++)
		v = v * 10 + (unsigned long)(*p - '0');
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	/* p short of the end: junk, or a NUL byte inside. */
	if (full || p == buf || p != buf + n || v == 0 || v > INT_MAX) {
		out_set(o, PROBE_CRIT, NAN, "pidfile: not a pid");
		return;
	}
	snprintf(pid, sizeof(pid), "%lu", v);
	if (snprintf(dir, sizeof(dir), "%s/%s", root, pid) >= (int)sizeof(dir)) {
		out_set(o, PROBE_CRIT, NAN, "%s: path too long", root);
		return;
	}
	if (stat(dir, &st) == -1) {
		if (errno == ENOENT)
			out_set(o, PROBE_CRIT, 0, "pid %s not running",
			    pid);
		else
			out_errno(o, errno, dir);
		return;
	}
	if (pid_state(root, pid, &state, why) == -1) {
		err = errno;
		/* Gone with its directory: it exited in between. */
		if (err == ENOENT && stat(dir, &st) == -1 && errno == ENOENT)
			out_set(o, PROBE_CRIT, 0, "pid %s not running",
			    pid);
		else
			out_failed(o, err, why);
		return;
	}
	if (state == 'Z')
		out_set(o, PROBE_CRIT, 0, "pid %s is a zombie", pid);
	else if (state == 'X')
		out_set(o, PROBE_CRIT, 0, "pid %s not running", pid);
	else
		out_set(o, PROBE_OK, 1, "pid %s running", pid);
}

/* True when comm is name as the kernel would have truncated it. */
static bool
comm_matches(const char *comm, const char *name)
{
	size_t	len = strlen(name);

	if (len > COMM_MAX)
		len = COMM_MAX;
	return strlen(comm) == len && memcmp(comm, name, len) == 0;
}

static void
process_by_name(struct process_call *o, const char *name)
{
	const char	*root = o->root;
	struct dirent	*de;
	DIR		*d;
	char		 rel[NAME_MAX + 16], comm[64], why[SYS_WHY_MAX], state;
	const char	*p;
	ssize_t		 n;
	long		 count = 0;
	int		 err;

	if ((d = opendir(root)) == NULL) {
		out_errno(o, errno, root);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		for (p = de->d_name; isdigit((unsigned char)*p); p++)
			;
		if (p == de->d_name || *p != '\0')
			continue;
		snprintf(rel, sizeof(rel), "%s/comm", de->d_name);
		/*
		 * Processes come and go while we look: skip what vanished,
		 * but a process we could not look at for want of descriptors
		 * may be the one: then the count says nothing.
		 */
		if ((n = sysprobe_read_proc(root, rel, comm, sizeof(comm), NULL,
		    why)) <= 0) {
			if (n == -1 && probe_errno_local(errno) != NULL)
				goto failed;
			continue;
		}
		if (comm[n - 1] == '\n')
			comm[n - 1] = '\0';
		if (!comm_matches(comm, name))
			continue;
		if (pid_state(root, de->d_name, &state, why) == -1) {
			if (probe_errno_local(errno) != NULL)
				goto failed;
			continue;
		}
		if (state == 'Z' || state == 'X')
			continue;
		count++;
	}
	closedir(d);
	if (count == 0)
		out_set(o, PROBE_CRIT, 0, "no process named %s", name);
	else
		out_set(o, PROBE_OK, (double)count, "%ld process%s "
		    "named %s", count, count == 1 ? "" : "es", name);
	return;

failed:
	err = errno;
	closedir(d);
	out_failed(o, err, why);
}

/* On the worker thread. */
static void
process_lookup(void *arg)
{
	struct process_call		*o = arg;

	if (o->by_pidfile)
		process_by_pidfile(o, o->what);
	else
		process_by_name(o, o->what);
}

/* On the loop: the lookup returned in time. */
static void
process_done(void *arg)
{
	struct process_call	*o = arg;
	struct probe_run	*run = o->run;
	enum probe_result	 r = o->result;
	double			 value = o->value;
	char			 reason[PROBE_REASON_MAX + 1];

	memcpy(reason, o->reason, sizeof(reason));
	sysprobe_offload_finish(run);	/* frees o */
	probe_report(run, r, value, "%s", reason);
}

static void
process_start(struct probe_run *run)
{
	const struct process_conf	*c = run->conf;
	const char			*what = c->pidfile != NULL ? c->pidfile :
					    c->name;
	const char			*root = run->env->proc_root;
	struct process_call		*o;
	size_t				 len = strlen(what);

	if ((o = calloc(1, sizeof(*o) + len + 1)) == NULL) {
		probe_report(run, PROBE_UNKNOWN, NAN, "%s",
		    probe_errno_local(ENOMEM));
		return;
	}
	o->run = run;
	o->by_pidfile = c->pidfile != NULL;
	memcpy(o->what, what, len + 1);
	if (snprintf(o->root, sizeof(o->root), "%s", root != NULL ? root :
	    "/proc") >= (int)sizeof(o->root)) {
		free(o);
		probe_report(run, PROBE_CRIT, NAN, "proc_root too long");
		return;
	}
	sysprobe_offload_start(run, "process lookup", process_lookup,
	    process_done, o);
}

const struct probe_ops probe_process_ops = {
	.name = "process",
	.unit = "",
	.keys = process_keys,
	.conf_new = process_conf_new,
	.conf_free = process_conf_free,
	.conf_set = process_conf_set,
	.conf_check = process_conf_check,
	.start = process_start,
	.cancel = sysprobe_offload_cancel,
	.keep_free = sysprobe_offload_keep_free,
};
