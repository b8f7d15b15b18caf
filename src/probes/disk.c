/*
 * disk and inodes: how full a filesystem is, from statvfs. statvfs on a
 * hung network mount blocks in the kernel, so it runs on a worker thread;
 * a probe whose previous call still hangs reports so at once instead of
 * starting another thread.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "lbagent/probes/kinds.h"
#include "sysprobe.h"

struct disk_conf {
	bool			 inodes;	/* which kind */
	char			*path;
	struct sys_limit	 warn;
	struct sys_limit	 crit;
	char			 why[96];	/* made for a bad value */
};

/* One statvfs: filled on the worker, read by disk_done on the loop. */
struct disk_call {
	struct probe_run	*run;
	struct statvfs		 st;
	int			 error;
	char			 path[];
};

static const struct probe_key_doc disk_keys[] = {
	{ "path", NULL, "Any absolute path on the filesystem to watch "
	    "(required; missing is crit).", false },
	{ "warn", NULL, "Used percentage (85%) or minimum free space (5G) "
	    "that warns.", false },
	{ "crit", NULL, "Used percentage (95%) or minimum free space (1G) "
	    "that is critical.", false },
	{ NULL, NULL, NULL, false }
};

static const struct probe_key_doc inodes_keys[] = {
	{ "path", NULL, "Any absolute path on the filesystem to watch "
	    "(required; missing is crit).", false },
	{ "warn", NULL, "Used percentage of inodes (85%) that warns; a "
	    "filesystem without an inode limit is ok.", false },
	{ "crit", NULL, "Used percentage of inodes (95%) that is critical.",
	    false },
	{ NULL, NULL, NULL, false }
};

static void *
disk_conf_new(void)
{
	return calloc(1, sizeof(struct disk_conf));
}

static void *
inodes_conf_new(void)
{
	struct disk_conf	*c;

	if ((c = calloc(1, sizeof(*c))) != NULL)
		c->inodes = true;
	return c;
}

static void
disk_conf_free(void *conf)
{
	struct disk_conf	*c = conf;

	if (c == NULL)
		return;
	free(c->path);
	free(c);
}

static int
disk_conf_set(void *conf, const char *key, const char *value,
    const char **why)
{
	struct disk_conf	*c = conf;
	struct sys_limit	*l;

	if (strcmp(key, "path") == 0)
		return sysprobe_conf_path(&c->path, value, why);
	if (strcmp(key, "warn") == 0)
		l = &c->warn;
	else if (strcmp(key, "crit") == 0)
		l = &c->crit;
	else {
		*why = "unknown key";
		return -1;
	}
	/* Inodes have no size to speak of: percentages only. */
	if (c->inodes)
		return sysprobe_limit_pct(value, l, why);
	/*
	 * A bare number is bytes free; one up to 100 was meant as a
	 * percentage (else "crit must be below warn" would be all it says).
	 */
	if (value[0] != '\0' && value[strspn(value, "0123456789")] == '\0' &&
	    strlen(value) <= 3 && atoi(value) <= 100) {
		snprintf(c->why, sizeof(c->why), "%s is read as %s bytes free; "
		    "did you mean %s%%?", value, value, value);
		*why = c->why;
		return -1;
	}
	return sysprobe_limit_pct_or_free(value, l, why);
}

static int
disk_conf_check(void *conf, const char **why)
{
	struct disk_conf	*c = conf;

	if (c->path == NULL) {
		*why = "path is required";
		return -1;
	}
	return sysprobe_limits_check(&c->warn, &c->crit, why);
}

/* On the worker thread: the call that may hang. */
static void
disk_statvfs(void *arg)
{
	struct disk_call	*call = arg;

	call->error = statvfs(call->path, &call->st) == -1 ? errno : 0;
}

static void
disk_report_blocks(struct probe_run *run, const struct disk_conf *c,
    const struct statvfs *st)
{
	const struct sys_limit	*hit;
	enum probe_result	 r;
	unsigned long		 frsize = st->f_frsize ? st->f_frsize : st->f_bsize;
	uint64_t		 used, avail, free_bytes;
	double			 pct;
	char			 pcts[32], frees[32], lim[64];

	/* As df computes it: root's reserve counts as neither used nor free. */
	used = st->f_blocks > st->f_bfree ? st->f_blocks - st->f_bfree : 0;
	avail = st->f_bavail;
	if (used + avail == 0) {
		probe_report(run, PROBE_OK, NAN, "filesystem reports no blocks");
		return;
	}
	pct = 100.0 * (double)used / (double)(used + avail);
	free_bytes = avail * frsize;
	sysprobe_format_pct(pct, pcts, sizeof(pcts));
	sysprobe_format_size(free_bytes, frees, sizeof(frees));
	r = sysprobe_limits_eval(&c->warn, &c->crit, pct, free_bytes, &hit);
	if (hit == NULL)
		probe_report(run, r, pct, "%s used, %s free", pcts, frees);
	else {
		sysprobe_limit_format(hit, r, lim, sizeof(lim));
		if (hit->kind == LIMIT_FREE)
			probe_report(run, r, pct, "%s free %s", frees, lim);
		else
			probe_report(run, r, pct, "%s used %s", pcts, lim);
	}
}

static void
disk_report_inodes(struct probe_run *run, const struct disk_conf *c,
    const struct statvfs *st)
{
	const struct sys_limit	*hit;
	enum probe_result	 r;
	uint64_t		 used;
	double			 pct;
	char			 pcts[32], lim[64];

	/* btrfs and many FUSE filesystems allocate inodes on demand. */
	if (st->f_files == 0) {
		probe_report(run, PROBE_OK, NAN, "no inode limit");
		return;
	}
	used = st->f_files > st->f_ffree ? st->f_files - st->f_ffree : 0;
	pct = 100.0 * (double)used / (double)st->f_files;
	sysprobe_format_pct(pct, pcts, sizeof(pcts));
	r = sysprobe_limits_eval(&c->warn, &c->crit, pct, 0, &hit);
	if (hit == NULL)
		probe_report(run, r, pct, "%s inodes used", pcts);
	else {
		sysprobe_limit_format(hit, r, lim, sizeof(lim));
		probe_report(run, r, pct, "%s inodes used %s", pcts, lim);
	}
}

/* On the loop: the statvfs returned in time. */
static void
disk_done(void *arg)
{
	struct disk_call	*call = arg;
	struct probe_run	*run = call->run;
	const struct disk_conf	*c = run->conf;
	struct statvfs		 st = call->st;
	int			 error = call->error;

	sysprobe_offload_finish(run);	/* frees call */
	if (error == ENOENT || error == ENOTDIR)
		probe_report(run, PROBE_CRIT, NAN, "path does not exist");
	else if (error != 0)
		probe_report_errno(run, error, "statfs");
	else if (c->inodes)
		disk_report_inodes(run, c, &st);
	else
		disk_report_blocks(run, c, &st);
}

static void
disk_start(struct probe_run *run)
{
	const struct disk_conf	*c = run->conf;
	struct disk_call	*call;
	size_t			 len = strlen(c->path);

	if ((call = calloc(1, sizeof(*call) + len + 1)) == NULL) {
		probe_report(run, PROBE_UNKNOWN, NAN, "%s",
		    probe_errno_local(ENOMEM));
		return;
	}
	call->run = run;
	memcpy(call->path, c->path, len + 1);
	sysprobe_offload_start(run, "statfs", disk_statvfs, disk_done, call);
}

const struct probe_ops probe_disk_ops = {
	.name = "disk",
	.unit = "%",
	.keys = disk_keys,
	.conf_new = disk_conf_new,
	.conf_free = disk_conf_free,
	.conf_set = disk_conf_set,
	.conf_check = disk_conf_check,
	.start = disk_start,
	.cancel = sysprobe_offload_cancel,
	.keep_free = sysprobe_offload_keep_free,
};

const struct probe_ops probe_inodes_ops = {
	.name = "inodes",
	.unit = "%",
	.keys = inodes_keys,
	.conf_new = inodes_conf_new,
	.conf_free = disk_conf_free,
	.conf_set = disk_conf_set,
	.conf_check = disk_conf_check,
	.start = disk_start,
	.cancel = sysprobe_offload_cancel,
	.keep_free = sysprobe_offload_keep_free,
};
