/*
 * file: a path must exist and, with max_age (or warn_age), have been
 * modified recently: heartbeat and replication-lag files. Such files
 * often live on network mounts, so stat runs on a worker thread like
 * disk's statvfs.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "lbagent/core/units.h"
#include "lbagent/probes/kinds.h"
#include "sysprobe.h"

struct file_conf {
	char		*path;
	uint64_t	 warn_age_ms;	/* 0: none */
	uint64_t	 max_age_ms;	/* 0: none */
};

/* One stat: filled on the worker, read by file_done on the loop. */
struct file_call {
	struct probe_run	*run;
	struct stat		 st;
	int			 error;
	char			 path[];
};

static const struct probe_key_doc file_keys[] = {
	{ "path", NULL, "Absolute path that must exist (required).", false },
	{ "max_age", NULL, "Critical when last modified longer ago (e.g. 5m).",
	    false },
	{ "warn_age", NULL, "Warns when last modified longer ago (e.g. 1m).",
	    false },
	{ NULL, NULL, NULL, false }
};

static void *
file_conf_new(void)
{
	return calloc(1, sizeof(struct file_conf));
}

static void
file_conf_free(void *conf)
{
	struct file_conf	*c = conf;

	if (c == NULL)
		return;
	free(c->path);
	free(c);
}

static int
file_conf_set(void *conf, const char *key, const char *value,
    const char **why)
{
	struct file_conf	*c = conf;
	uint64_t		*age, ms;

	if (strcmp(key, "path") == 0)
		return sysprobe_conf_path(&c->path, value, why);
	if (strcmp(key, "max_age") == 0)
		age = &c->max_age_ms;
	else if (strcmp(key, "warn_age") == 0)
		age = &c->warn_age_ms;
	else {
		*why = "unknown key";
		return -1;
	}
	if (units_duration_ms(value, &ms, why) == -1)
		return -1;
	if (ms == 0) {
		*why = "must be above 0";
		return -1;
	}
	*age = ms;
	return 0;
}

static int
file_conf_check(void *conf, const char **why)
{
	struct file_conf	*c = conf;

	if (c->path == NULL) {
		*why = "path is required";
		return -1;
	}
	if (c->warn_age_ms != 0 && c->max_age_ms != 0 &&
	    c->warn_age_ms >= c->max_age_ms) {
		*why = "warn_age must be below max_age (older is worse)";
		return -1;
	}
	return 0;
}

/* On the worker thread: the call that may hang. */
static void
file_stat(void *arg)
{
	struct file_call	*call = arg;

	call->error = stat(call->path, &call->st) == -1 ? errno : 0;
}

/* On the loop: the stat returned in time. */
static void
file_done(void *arg)
{
	struct file_call	*call = arg;
	struct probe_run	*run = call->run;
	const struct file_conf	*c = run->conf;
	struct timespec		 mtime = call->st.st_mtim, now;
	int			 error = call->error;
	int64_t			 age_ms;
	char			 ages[32], lim[32];

	sysprobe_offload_finish(run);	/* frees call */
	if (error == ENOENT || error == ENOTDIR) {
		probe_report(run, PROBE_CRIT, NAN, "does not exist");
		return;
	}
	if (error != 0) {
		probe_report_errno(run, error, "stat");
		return;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	age_ms = ((int64_t)now.tv_sec - (int64_t)mtime.tv_sec) * 1000 +
	    (now.tv_nsec - mtime.tv_nsec) / 1000000;
	if (age_ms < 0)
		age_ms = 0;	/* the writer's clock is ahead: fresh */
	units_format_age((uint64_t)age_ms, ages, sizeof(ages));
	if (c->max_age_ms != 0 && (uint64_t)age_ms > c->max_age_ms) {
		units_format_ms(c->max_age_ms, lim, sizeof(lim));
		probe_report(run, PROBE_CRIT, (double)age_ms / 1000,
		    "modified %s ago (max %s)", ages, lim);
	} else if (c->warn_age_ms != 0 && (uint64_t)age_ms > c->warn_age_ms) {
		units_format_ms(c->warn_age_ms, lim, sizeof(lim));
		probe_report(run, PROBE_WARN, (double)age_ms / 1000,
		    "modified %s ago (warn %s)", ages, lim);
	} else
		probe_report(run, PROBE_OK, (double)age_ms / 1000,
		    "modified %s ago", ages);
}

static void
file_start(struct probe_run *run)
{
	const struct file_conf	*c = run->conf;
	struct file_call	*call;
	size_t			 len = strlen(c->path);

	if ((call = calloc(1, sizeof(*call) + len + 1)) == NULL) {
		probe_report(run, PROBE_UNKNOWN, NAN, "%s",
		    probe_errno_local(ENOMEM));
		return;
	}
	call->run = run;
	memcpy(call->path, c->path, len + 1);
	sysprobe_offload_start(run, "stat", file_stat, file_done, call);
}

const struct probe_ops probe_file_ops = {
	.name = "file",
	.unit = "s",
	.keys = file_keys,
	.conf_new = file_conf_new,
	.conf_free = file_conf_free,
	.conf_set = file_conf_set,
	.conf_check = file_conf_check,
	.start = file_start,
	.cancel = sysprobe_offload_cancel,
	.keep_free = sysprobe_offload_keep_free,
};
