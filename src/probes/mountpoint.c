/*
 * mountpoint: a path must be the root of a mount, and with fstype of that
 * type: the data volume that did not mount, leaving the application to
 * write into an empty directory of the root filesystem.
 *
 * How it tells: statx() of the path (following symlinks, triggering an
 * automount) says whether it is the root of a mount (STATX_ATTR_MOUNT_ROOT)
 * and which mount it is on (stx_mnt_id); that mount's line in
 * <proc_root>/self/mountinfo gives its type and where it is mounted. Exact
 * for bind mounts of the same device, for "/" and for stacked or hidden
 * mounts, where comparing st_dev with the parent's or path strings with
 * mountinfo's is not. Both need Linux 5.8.
 *
 * statx on a hung network mount blocks in the kernel, so the whole check
 * runs on a worker thread, one per probe, as disk's statvfs. Bounded: one
 * statx, mountinfo read in 64 KiB pieces up to the mount's line and at
 * most MP_INFO_MAX bytes; a run holds the 64 KiB buffer.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lbagent/probes/kinds.h"
#include "sysprobe.h"

#define MP_INFO_MAX	(4 << 20)	/* mountinfo bytes read at most */
#define MP_CHUNK	(64 << 10)	/* and a line's longest */
#define MP_FSTYPE_MAX	63

struct mp_conf {
	char	*path;
	char	*fstype;	/* NULL: any */
};

/* What the worker found, copied by mp_done on the loop. */
struct mp_result {
	int			 stat_error;	/* statx's errno, 0 */
	bool			 no_mnt_id;	/* the kernel gave none */
	bool			 mount_root;
	uint64_t		 mnt_id;
	enum { INFO_FOUND, INFO_FAILED, INFO_MISSING, INFO_TOO_BIG,
	    INFO_LONG_LINE } info;
	int			 info_error;	/* INFO_FAILED: errno */
	char			 why[SYS_WHY_MAX];
	char			 fstype[MP_FSTYPE_MAX + 1];
	char			 mount_point[PATH_MAX];
	char			 mountinfo[PATH_MAX];
};

/* One check: filled on the worker, freed with its job. */
struct mp_call {
	struct probe_run	*run;
	struct mp_result	 r;
	char			 path[];
};

static const struct probe_key_doc mp_keys[] = {
	{ "path", NULL, "Absolute path that must be a mount point (required); "
	    "a directory that is not one, or a path that does not exist, is "
	    "crit.", false },
	{ "fstype", NULL, "The filesystem type it must be mounted as, as "
	    "/proc/self/mountinfo names it (nfs4, ext4, xfs, fuse.sshfs); "
	    "another is crit. Without it, any type.", false },
	{ NULL, NULL, NULL, false }
};

static void *
mp_conf_new(void)
{
	return calloc(1, sizeof(struct mp_conf));
}

static void
mp_conf_free(void *conf)
{
	struct mp_conf	*c = conf;

	if (c == NULL)
		return;
	free(c->path);
	free(c->fstype);
	free(c);
}

static int
mp_conf_set(void *conf, const char *key, const char *value, const char **why)
{
	struct mp_conf	*c = conf;
	size_t		 i;

	if (strcmp(key, "path") == 0)
		return sysprobe_conf_path(&c->path, value, why);
	if (strcmp(key, "fstype") != 0) {
		*why = "unknown key";
		return -1;
	}
	for (i = 0; value[i] != '\0'; i++)
		if (!isalnum((unsigned char)value[i]) &&
		    strchr("._-+", value[i]) == NULL)
			break;
	if (i == 0 || value[i] != '\0' || i > MP_FSTYPE_MAX) {
		*why = "expected a filesystem type such as nfs4, ext4 or xfs";
		return -1;
	}
	return probe_set_string(&c->fstype, value, false, why);
}

static int
mp_conf_check(void *conf, const char **why)
{
	struct mp_conf	*c = conf;

	if (c->path == NULL) {
		*why = "path is required";
		return -1;
	}
	return 0;
}

/* mountinfo's octal escapes (\040 for a blank) undone into dst. */
static void
mp_unescape(const char *s, size_t len, char *dst, size_t size)
{
	size_t	i, n = 0;

	for (i = 0; i < len && n + 1 < size; i++) {
		if (s[i] == '\\' && i + 3 < len &&
		    s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' &&
		    s[i + 3] >= '0' && s[i + 3] <= '7') {
			dst[n++] = (char)((s[i + 1] - '0') << 6 |
			    (s[i + 2] - '0') << 3 | (s[i + 3] - '0'));
			i += 3;
		} else
			dst[n++] = s[i];
	}
	dst[n] = '\0';
}

/*
 * One line of mountinfo ("36 35 98:0 /root /mount/point opts [tags] -
 * fstype source superopts"): true when it is r's mount, its mount point
 * and type then filled in.
 */
static bool
mp_line(struct mp_result *r, const char *line, size_t len)
{
	const char	*p = line, *end = line + len, *mp = NULL, *sep;
	size_t		 mplen = 0;
	char		*num_end;
	int		 i;

	if (strtoull(line, &num_end, 10) != r->mnt_id || *num_end != ' ')
		return false;
	for (i = 0; i < 5; i++) {	/* id parent dev root mount-point */
		while (p < end && *p == ' ')
			p++;
		mp = p;
		while (p < end && *p != ' ')
			p++;
		mplen = (size_t)(p - mp);
	}
	/* The optional fields end at a lone "-"; the type follows it. */
	if ((sep = memmem(p, (size_t)(end - p), " - ", 3)) == NULL)
		return false;
	p = sep += 3;
	while (p < end && *p != ' ')
		p++;
	mp_unescape(mp, mplen, r->mount_point, sizeof(r->mount_point));
	mp_unescape(sep, (size_t)(p - sep), r->fstype, sizeof(r->fstype));
	return true;
}

static void
mp_info_failed(struct mp_result *r, int err)
{
	r->info = INFO_FAILED;
	r->info_error = err;
	/* Cut, if need be, as the reason will be. */
	if (snprintf(r->why, sizeof(r->why), "%s: %s", r->mountinfo,
	    strerror(err)) >= (int)sizeof(r->why))
		r->why[sizeof(r->why) - 1] = '\0';
}

/*
 * Reads mountinfo in pieces of buf (MP_CHUNK bytes) up to r's mount,
 * MP_INFO_MAX bytes at most: r->info says how it went.
 */
static void
mp_read_mountinfo(struct mp_result *r, char *buf)
{
	size_t	 have = 0, total = 0, start, want;
	ssize_t	 n;
	char	*nl;
	int	 fd, err;

	r->info = INFO_MISSING;
	if ((fd = open(r->mountinfo, O_RDONLY | O_CLOEXEC)) == -1) {
		mp_info_failed(r, errno);
		return;
	}
	while (total < MP_INFO_MAX) {
		want = MP_CHUNK - have;
		if (want > MP_INFO_MAX - total)
			want = MP_INFO_MAX - total;
		n = read(fd, buf + have, want);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			err = errno;
			close(fd);
			mp_info_failed(r, err);
			return;
		}
		if (n == 0)
			break;	/* a last line without a newline is ignored */
		have += (size_t)n;
		total += (size_t)n;
		start = 0;
		while ((nl = memchr(buf + start, '\n', have - start)) != NULL) {
			if (mp_line(r, buf + start,
			    (size_t)(nl - buf) - start)) {
				r->info = INFO_FOUND;
				close(fd);
				return;
			}
			start = (size_t)(nl - buf) + 1;
		}
		if (start == 0 && have == MP_CHUNK) {
			r->info = INFO_LONG_LINE;
			break;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
		if (total >= MP_INFO_MAX)
			r->info = INFO_TOO_BIG;
	}
	close(fd);
}

/* On the worker thread: statx may hang on a dead network mount. */
static void
mp_check(void *arg)
{
	struct mp_call		*call = arg;
	struct mp_result	*r = &call->r;
	struct statx		 stx;
	char			*buf;

	/*
	 * What stat asks too: without it FUSE and NFS answer from what they
	 * hold, and a mount whose server is gone would pass as mounted.
	 */
	if (statx(AT_FDCWD, call->path, 0, STATX_BASIC_STATS | STATX_MNT_ID,
	    &stx) == -1) {
		r->stat_error = errno;
		return;
	}
	if (!(stx.stx_mask & STATX_MNT_ID) ||
	    !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)) {
		r->no_mnt_id = true;
		return;
	}
	r->mount_root = (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
	r->mnt_id = stx.stx_mnt_id;
	if ((buf = malloc(MP_CHUNK)) == NULL) {
		mp_info_failed(r, ENOMEM);
		return;
	}
	mp_read_mountinfo(r, buf);
	free(buf);
}

/* The verdict, once statx and mountinfo have answered. */
static void
mp_judge(struct probe_run *run, const struct mp_conf *c,
    const struct mp_result *r)
{
	if (!r->mount_root)
		probe_report(run, PROBE_CRIT, NAN, "not a mount point (part of "
		    "the %s mounted on %s)", r->fstype, r->mount_point);
	else if (c->fstype != NULL && strcmp(c->fstype, r->fstype) != 0)
		probe_report(run, PROBE_CRIT, NAN, "%s mounted, expected %s",
		    r->fstype, c->fstype);
	else
		probe_report(run, PROBE_OK, NAN, "%s mounted", r->fstype);
}

/* On the loop: the check returned in time. */
static void
mp_done(void *arg)
{
	struct mp_call		*call = arg;
	struct probe_run	*run = call->run;
	const struct mp_conf	*c = run->conf;
	struct mp_result	 r = call->r;

	sysprobe_offload_finish(run);	/* frees call */
	if (r.stat_error == ENOENT || r.stat_error == ENOTDIR)
		probe_report(run, PROBE_CRIT, NAN, "path does not exist");
	else if (r.stat_error != 0)
		probe_report_errno(run, r.stat_error, "statx");
	else if (r.no_mnt_id)
		probe_report(run, PROBE_CRIT, NAN, "statx gives no mount id "
		    "(Linux 5.8 or later needed)");
	else if (r.info == INFO_FAILED)
		sysprobe_report_failed(run, r.info_error, r.why);
	else if (r.info == INFO_TOO_BIG)
		probe_report(run, PROBE_CRIT, NAN, "%s larger than 4 MiB, read "
		    "stopped", r.mountinfo);
	else if (r.info == INFO_LONG_LINE)
		probe_report(run, PROBE_CRIT, NAN, "%s: a line longer than "
		    "64 KiB", r.mountinfo);
	else if (r.info == INFO_MISSING && !r.mount_root)
		/* Its mount's mount point is above lbagent's root (a chroot
		 * whose root is no mount point): mountinfo leaves it out. */
		probe_report(run, PROBE_CRIT, NAN, "not a mount point (part of "
		    "a mount outside lbagent's root)");
	else if (r.info == INFO_MISSING)
		probe_report(run, PROBE_CRIT, NAN, "mount %llu not in %s",
		    (unsigned long long)r.mnt_id, r.mountinfo);
	else
		mp_judge(run, c, &r);
}

static void
mp_start(struct probe_run *run)
{
	const struct mp_conf	*c = run->conf;
	const char		*root = run->env->proc_root;
	struct mp_call		*call;
	size_t			 len = strlen(c->path);

	if ((call = calloc(1, sizeof(*call) + len + 1)) == NULL) {
		probe_report(run, PROBE_UNKNOWN, NAN, "%s",
		    probe_errno_local(ENOMEM));
		return;
	}
	call->run = run;
	memcpy(call->path, c->path, len + 1);
	snprintf(call->r.mountinfo, sizeof(call->r.mountinfo),
	    "%s/self/mountinfo", root != NULL ? root : "/proc");
	sysprobe_offload_start(run, "stat", mp_check, mp_done, call);
}

const struct probe_ops probe_mountpoint_ops = {
	.name = "mountpoint",
	.unit = "",
	.keys = mp_keys,
	.conf_new = mp_conf_new,
	.conf_free = mp_conf_free,
	.conf_set = mp_conf_set,
	.conf_check = mp_conf_check,
	.start = mp_start,
	.cancel = sysprobe_offload_cancel,
	.keep_free = sysprobe_offload_keep_free,
};
