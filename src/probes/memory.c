/* memory and swap: used percentages from <proc_root>/meminfo. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/probes/kinds.h"
#include "sysprobe.h"

/* meminfo is about 1.5 KiB; the keys we read are near its top. */
#define MEMINFO_MAX	8192

struct mem_conf {
	bool			swap;		/* which kind */
	struct sys_limit	warn;
	struct sys_limit	crit;
};

static const struct probe_key_doc memory_keys[] = {
	{ "warn", NULL, "Used percentage of memory (total less MemAvailable) "
	    "that warns (85%).", false },
	{ "crit", NULL, "Used percentage that is critical (95%).", false },
	{ NULL, NULL, NULL, false }
};

static const struct probe_key_doc swap_keys[] = {
	{ "warn", NULL, "Used percentage of swap that warns (50%); no swap "
	    "is ok.", false },
	{ "crit", NULL, "Used percentage of swap that is critical (90%).",
	    false },
	{ NULL, NULL, NULL, false }
};

static void *
memory_conf_new(void)
{
	return calloc(1, sizeof(struct mem_conf));
}

static void *
swap_conf_new(void)
{
	struct mem_conf	*c;

	if ((c = calloc(1, sizeof(*c))) != NULL)
		c->swap = true;
	return c;
}

static int
mem_conf_set(void *conf, const char *key, const char *value,
    const char **why)
{
	struct mem_conf	*c = conf;

	if (strcmp(key, "warn") == 0)
		return sysprobe_limit_pct(value, &c->warn, why);
	if (strcmp(key, "crit") == 0)
		return sysprobe_limit_pct(value, &c->crit, why);
	*why = "unknown key";
	return -1;
}

static int
mem_conf_check(void *conf, const char **why)
{
	struct mem_conf	*c = conf;

	return sysprobe_limits_check(&c->warn, &c->crit, why);
}

/*
 * Finds "Key:   123 kB" in meminfo. Returns 1 with the value, 0 when the
 * key is absent, -1 when its line is malformed.
 */
static int
meminfo_get(const char *buf, const char *key, unsigned long long *kb)
{
	size_t		 klen = strlen(key);
	const char	*line, *p;
	char		*end;

	for (line = buf; line != NULL && *line != '\0';
	    line = (p = strchr(line, '\n')) == NULL ? NULL : p + 1) {
		if (strncmp(line, key, klen) != 0 || line[klen] != ':')
			continue;
		for (p = line + klen + 1; *p == ' ' || *p == '\t'; p++)
			;
		if (!isdigit((unsigned char)*p))
			return -1;
		errno = 0;
		*kb = strtoull(p, &end, 10);
		if (errno != 0 || (*end != ' ' && *end != '\n' && *end != '\0'))
			return -1;
		return 1;
	}
	return 0;
}

/* Reads one key; on failure reports crit naming the file and returns -1. */
static int
meminfo_need(struct probe_run *run, const char *buf, const char *key,
    const char *missing, unsigned long long *kb)
{
	const char	*root = run->env->proc_root;

	switch (meminfo_get(buf, key, kb)) {
	case 1:
		return 0;
	case 0:
		probe_report(run, PROBE_CRIT, NAN, "%s/meminfo: no %s%s", root,
		    key, missing);
		return -1;
	default:
		probe_report(run, PROBE_CRIT, NAN, "%s/meminfo: malformed %s",
		    root, key);
		return -1;
	}
}

static void
mem_start(struct probe_run *run)
{
	const struct mem_conf	*c = run->conf;
	const struct sys_limit	*hit;
	enum probe_result	 r;
	unsigned long long	 total, avail;
	double			 pct;
	char			 buf[MEMINFO_MAX], why[SYS_WHY_MAX];
	char			 pcts[32], lim[64];

	if (sysprobe_read_proc(run->env->proc_root, "meminfo", buf, sizeof(buf),
	    NULL, why) == -1) {
		sysprobe_report_failed(run, errno, why);
		return;
	}
	if (c->swap) {
		if (meminfo_need(run, buf, "SwapTotal", "", &total) == -1 ||
		    meminfo_need(run, buf, "SwapFree", "", &avail) == -1)
			return;
		if (total == 0) {
			probe_report(run, PROBE_OK, NAN, "no swap");
			return;
		}
	} else {
		if (meminfo_need(run, buf, "MemTotal", "", &total) == -1 ||
		    meminfo_need(run, buf, "MemAvailable",
		    " (kernel before 3.14?)", &avail) == -1)
			return;
		if (total == 0) {
			probe_report(run, PROBE_CRIT, NAN,
			    "%s/meminfo: MemTotal is 0", run->env->proc_root);
			return;
		}
	}
	pct = avail >= total ? 0 :
	    100.0 * (double)(total - avail) / (double)total;
	sysprobe_format_pct(pct, pcts, sizeof(pcts));
	r = sysprobe_limits_eval(&c->warn, &c->crit, pct, 0, &hit);
	if (hit == NULL)
		probe_report(run, r, pct, "%s used", pcts);
	else {
		sysprobe_limit_format(hit, r, lim, sizeof(lim));
		probe_report(run, r, pct, "%s used %s", pcts, lim);
	}
}

const struct probe_ops probe_memory_ops = {
	.name = "memory",
	.unit = "%",
	.keys = memory_keys,
	.conf_new = memory_conf_new,
	.conf_free = free,
	.conf_set = mem_conf_set,
	.conf_check = mem_conf_check,
	.start = mem_start,
	.cancel = NULL,
	.keep_free = free,
};

const struct probe_ops probe_swap_ops = {
	.name = "swap",
	.unit = "%",
	.keys = swap_keys,
	.conf_new = swap_conf_new,
	.conf_free = free,
	.conf_set = mem_conf_set,
	.conf_check = mem_conf_check,
	.start = mem_start,
	.cancel = NULL,
	.keep_free = free,
};
