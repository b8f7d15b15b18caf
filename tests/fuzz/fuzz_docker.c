/*
 * Fuzz target: the Docker Engine API's container inspect answer as the
 * docker probe reads it (src/probes/docker.c: docker_state, after
 * json_loadb as in docker_work). Those are static, so this file
 * includes docker.c and the core library's copy of it is left out of the
 * link. The reason must be one printable line that fits, through
 * probe_report as the probe sends it.
 */
#include "../../src/probes/docker.c"

#include "fuzzutil.h"

static struct docker_conf	*conf;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char	*why;

	fz_init();
	conf = docker_conf_new();
	if (conf == NULL || docker_conf_set(conf, "container", "web-1",
	    &why) != 0 || docker_conf_check(conf, &why) != 0)
		abort();
	return 0;
}

static void
reported(struct probe_run *run, const struct probe_outcome *o)
{
	size_t	i;

	FZ_ASSERT(strlen(o->reason) <= PROBE_REASON_MAX);
	for (i = 0; o->reason[i] != '\0'; i++)
		FZ_ASSERT(o->reason[i] >= 0x20 && o->reason[i] < 0x7f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char			 reason[PROBE_REASON_MAX + 1];
	struct probe_run	 run;
	json_error_t		 err;
	json_t			*root;
	enum probe_result	 r;

	/* As docker_work loads a 200 answer's body. */
	if ((root = json_loadb((const char *)data, size, 0, &err)) == NULL)
		return 0;
	memset(reason, 0x55, sizeof(reason));
	r = docker_state(conf, root, reason, sizeof(reason));
	json_decref(root);
	FZ_ASSERT(r == PROBE_OK || r == PROBE_WARN || r == PROBE_CRIT);
	FZ_ASSERT(memchr(reason, '\0', sizeof(reason)) != NULL);
	memset(&run, 0, sizeof(run));
	run.name = "fuzz";
	run.reported = reported;
	run.in_flight = true;
	probe_report(&run, r, NAN, "%s", reason);
	return 0;
}
