/*
 * load: the load average per CPU. cpu: the busy share of CPU time since
 * the previous run. Both read small files under proc_root on the loop.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/units.h"
#include "lbagent/probes/kinds.h"
#include "sysprobe.h"

/* /proc/stat's cpu lines come first; this holds ~2500 of them. */
#define STAT_MAX	(256 * 1024)

struct load_conf {
	int			window;		/* minutes: 1, 5 or 15 */
	struct sys_limit	warn;
	struct sys_limit	crit;
};

struct cpu_conf {
	struct sys_limit	warn;
	struct sys_limit	crit;
};

/* cpu's previous sample, kept across runs. */
struct cpu_keep {
	unsigned long long	total;
	unsigned long long	idle;
};

static const struct probe_key_doc load_keys[] = {
	{ "window", "1", "Load average over 1, 5 or 15 minutes.", false },
	{ "warn", NULL, "Load average per CPU that warns (e.g. 1.5).", false },
	{ "crit", NULL, "Load average per CPU that is critical (e.g. 3).",
	    false },
	{ NULL, NULL, NULL, false }
};

static const struct probe_key_doc cpu_keys[] = {
	{ "warn", NULL, "Busy percentage since the previous run that warns "
	    "(85%); the first run only samples.", false },
	{ "crit", NULL, "Busy percentage that is critical (95%).", false },
	{ NULL, NULL, NULL, false }
};

static void *
load_conf_new(void)
{
	struct load_conf	*c;

	if ((c = calloc(1, sizeof(*c))) != NULL)
		c->window = 1;
	return c;
}

static void *
cpu_conf_new(void)
{
	return calloc(1, sizeof(struct cpu_conf));
}

static int
load_conf_set(void *conf, const char *key, const char *value,
    const char **why)
{
	struct load_conf	*c = conf;
	uint64_t		 w;

	if (strcmp(key, "window") == 0) {
		if (units_uint(value, &w, why) == -1 ||
		    (w != 1 && w != 5 && w != 15)) {
			*why = "expected 1, 5 or 15 (minutes)";
			return -1;
		}
		c->window = (int)w;
		return 0;
	}
	if (strcmp(key, "warn") == 0)
		return sysprobe_limit_num(value, &c->warn, why);
	if (strcmp(key, "crit") == 0)
		return sysprobe_limit_num(value, &c->crit, why);
	*why = "unknown key";
	return -1;
}

static int
cpu_conf_set(void *conf, const char *key, const char *value,
    const char **why)
{
	struct cpu_conf	*c = conf;

	if (strcmp(key, "warn") == 0)
		return sysprobe_limit_pct(value, &c->warn, why);
	if (strcmp(key, "crit") == 0)
		return sysprobe_limit_pct(value, &c->crit, why);
	*why = "unknown key";
	return -1;
}

static int
load_conf_check(void *conf, const char **why)
{
	struct load_conf	*c = conf;

	return sysprobe_limits_check(&c->warn, &c->crit, why);
}

static int
cpu_conf_check(void *conf, const char **why)
{
	struct cpu_conf	*c = conf;

	return sysprobe_limits_check(&c->warn, &c->crit, why);
}

/* A run of decimal digits after blanks; strtoull would take a sign. */
static int
parse_ull(const char **p, unsigned long long *v)
{
	const char	*s = *p;
	char		*end;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	*p = end;
	return 0;
}

/* Online CPUs: the cpuN lines of <root>/stat. */
static int
count_cpus(const char *root, long *ncpu, char why[SYS_WHY_MAX])
{
	char		*buf, *line, *nl;
	bool		 full, ended = false;
	long		 n = 0;

	if ((buf = malloc(STAT_MAX)) == NULL) {
		snprintf(why, SYS_WHY_MAX, "cannot read %s/stat", root);
		errno = ENOMEM;
		return -1;
	}
	if (sysprobe_read_proc(root, "stat", buf, STAT_MAX, &full, why) == -1) {
		free(buf);
		return -1;
	}
	for (line = buf; *line != '\0' && !ended; line = nl + 1) {
		if ((nl = strchr(line, '\n')) == NULL)
			nl = line + strlen(line) - 1;
		if (strncmp(line, "cpu", 3) != 0)
			ended = n > 0;
		else if (isdigit((unsigned char)line[3]))
			n++;
	}
	free(buf);
	if (full && !ended) {
		snprintf(why, SYS_WHY_MAX, "%s/stat: too many cpu lines", root);
		errno = EINVAL;
		return -1;
	}
	if (n == 0) {
		snprintf(why, SYS_WHY_MAX, "%s/stat: no cpuN lines", root);
		errno = EINVAL;
		return -1;
	}
	*ncpu = n;
	return 0;
}

static void
load_start(struct probe_run *run)
{
	const struct load_conf	*c = run->conf;
	const char		*root = run->env->proc_root;
	const struct sys_limit	*hit;
	enum probe_result	 r;
	const char		*p;
	char			 buf[256], why[SYS_WHY_MAX], lim[64], what[16];
	char			*end;
	double			 avg[3], per_cpu;
	long			 ncpu;
	int			 i;

	if (sysprobe_read_proc(root, "loadavg", buf, sizeof(buf), NULL,
	    why) == -1) {
		sysprobe_report_failed(run, errno, why);
		return;
	}
	for (i = 0, p = buf; i < 3; i++, p = end) {
		while (*p == ' ')
			p++;
		if (!isdigit((unsigned char)*p))
			break;
		avg[i] = strtod(p, &end);
		if (end == p || !isfinite(avg[i]) ||
		    (*end != ' ' && *end != '\n' && *end != '\0'))
			break;
	}
	if (i < 3) {
		probe_report(run, PROBE_CRIT, NAN, "%s/loadavg: malformed", root);
		return;
	}
	if (count_cpus(root, &ncpu, why) == -1) {
		sysprobe_report_failed(run, errno, why);
		return;
	}
	per_cpu = avg[c->window == 1 ? 0 : c->window == 5 ? 1 : 2] /
	    (double)ncpu;
	if (c->window == 1)
		snprintf(what, sizeof(what), "load");
	else
		snprintf(what, sizeof(what), "load%d", c->window);
	r = sysprobe_limits_eval(&c->warn, &c->crit, per_cpu, 0, &hit);
	if (hit == NULL)
		probe_report(run, r, per_cpu, "%s %.2f per CPU", what, per_cpu);
	else {
		sysprobe_limit_format(hit, r, lim, sizeof(lim));
		probe_report(run, r, per_cpu, "%s %.2f per CPU %s", what,
		    per_cpu, lim);
	}
}

/*
 * The aggregate "cpu" line: total jiffies of user through steal (guest
 * time is already inside user and nice) and idle = idle + iowait.
 */
static int
read_cpu_line(const char *root, struct cpu_keep *s, char why[SYS_WHY_MAX])
{
	unsigned long long	 f[8];
	const char		*p;
	char			 buf[1024];
	int			 n;

	/* Only the first line matters; the rest may be cut. */
	if (sysprobe_read_proc(root, "stat", buf, sizeof(buf), NULL, why) == -1)
		return -1;
	if (strncmp(buf, "cpu ", 4) != 0)
		goto malformed;
	p = buf + 4;
	for (n = 0; n < 8 && parse_ull(&p, &f[n]) == 0; n++)
		;
	if (n < 4 || (*p != ' ' && *p != '\n' && *p != '\0'))
		goto malformed;
	s->total = s->idle = 0;
	for (int i = 0; i < n; i++) {
		if (s->total + f[i] < s->total)
			goto malformed;
		s->total += f[i];
	}
	s->idle = f[3] + (n > 4 ? f[4] : 0);
	return 0;

malformed:
	snprintf(why, SYS_WHY_MAX, "%s/stat: malformed cpu line", root);
	errno = EINVAL;
	return -1;
}

static void
cpu_start(struct probe_run *run)
{
	const struct cpu_conf	*c = run->conf;
	struct cpu_keep		*prev = run->keep, now;
	const struct sys_limit	*hit;
	enum probe_result	 r;
	unsigned long long	 dtotal, didle;
	double			 busy;
	char			 why[SYS_WHY_MAX], pcts[32], lim[64];

	if (read_cpu_line(run->env->proc_root, &now, why) == -1) {
		sysprobe_report_failed(run, errno, why);
		return;
	}
	/*
	 * Busy time needs two samples; waiting for a second one inside the
	 * run would stretch it toward the timeout, so the first run only
	 * records and the next measures over the whole interval.
	 */
	if (prev == NULL) {
		if ((prev = run->keep = malloc(sizeof(*prev))) == NULL) {
			probe_report(run, PROBE_UNKNOWN, NAN, "%s",
			    probe_errno_local(ENOMEM));
			return;
		}
		*prev = now;
		probe_report(run, PROBE_OK, NAN, "first sample");
		return;
	}
	if (now.total < prev->total || now.idle < prev->idle) {
		*prev = now;
		probe_report(run, PROBE_OK, NAN,
		    "cpu counters went back; first sample again");
		return;
	}
	if ((dtotal = now.total - prev->total) == 0) {
		probe_report(run, PROBE_OK, NAN,
		    "no cpu time passed since the last sample");
		return;
	}
	didle = now.idle - prev->idle;
	*prev = now;
	busy = didle >= dtotal ? 0 :
	    100.0 * (double)(dtotal - didle) / (double)dtotal;
	sysprobe_format_pct(busy, pcts, sizeof(pcts));
	r = sysprobe_limits_eval(&c->warn, &c->crit, busy, 0, &hit);
	if (hit == NULL)
		probe_report(run, r, busy, "cpu %s busy", pcts);
	else {
		sysprobe_limit_format(hit, r, lim, sizeof(lim));
		probe_report(run, r, busy, "cpu %s busy %s", pcts, lim);
	}
}

const struct probe_ops probe_load_ops = {
	.name = "load",
	.unit = "",
	.keys = load_keys,
	.conf_new = load_conf_new,
	.conf_free = free,
	.conf_set = load_conf_set,
	.conf_check = load_conf_check,
	.start = load_start,
	.cancel = NULL,
	.keep_free = free,
};

const struct probe_ops probe_cpu_ops = {
	.name = "cpu",
	.unit = "%",
	.keys = cpu_keys,
	.conf_new = cpu_conf_new,
	.conf_free = free,
	.conf_set = cpu_conf_set,
	.conf_check = cpu_conf_check,
	.start = cpu_start,
	.cancel = NULL,
	.keep_free = free,
};
