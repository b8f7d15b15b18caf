/*
 * Fuzz target: what the exec probe makes of a program's output and exit
 * (src/probes/exec_output.c: exec_read_output, exec_report_exit with
 * core/plugin_output.c, then probe_report), through the exec kind's own
 * header (src/probes/exec_kind.h). No program runs:
 * the input goes through a pipe as the child's stdout, and its first two
 * bytes say how the child ended:
 *   byte 0 % 3: 0 exited, 1 killed by a signal, 2 could not exec;
 *   byte 1: the exit code, the signal, or the errno of the failure.
 * The reason reported must be one printable line within
 * PROBE_REASON_MAX without performance data ('|'), the result the one the
 * exit code means (3, other codes and signals: the check's own unknown),
 * the value none or a finite one with one of the guidelines' units, and
 * the same as the parser alone gives.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lbagent/core/plugin_output.h"

#include "../../src/probes/exec_kind.h"

#include "fuzzutil.h"

static struct probe_outcome	got;
static int			reports;

static const char *const units[] = {
	"", "s", "ms", "us", "%", "B", "KB", "MB", "GB", "TB", "c", NULL
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_init();
	return 0;
}

static void
reported(struct probe_run *run, const struct probe_outcome *o)
{
	got = *o;
	reports++;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct exec_conf	 conf;
	struct probe_run	 run;
	struct exec_child	*c;
	struct child_error	 ce;
	struct plugin_output	 po;
	siginfo_t		 si;
	unsigned		 how, code;
	int			 out[2], err[2];
	size_t			 n, i;

	if (size < 2)
		return 0;
	how = data[0] % 3;
	code = data[1];
	data += 2;
	size -= 2;

	memset(&conf, 0, sizeof(conf));
	conf.path = (char *)"/usr/lib/nagios/plugins/check_x";
	conf.user = (char *)"nobody";
	memset(&run, 0, sizeof(run));
	run.name = "fuzz";
	run.conf = &conf;
	run.reported = reported;
	run.in_flight = true;
	FZ_ASSERT((c = calloc(1, sizeof(*c))) != NULL);
	c->run = &run;
	c->conf = &conf;
	c->pid = 1;
	c->pidfd = -1;
	FZ_ASSERT(pipe2(out, O_CLOEXEC | O_NONBLOCK) == 0);
	FZ_ASSERT(pipe2(err, O_CLOEXEC | O_NONBLOCK) == 0);
	/* What a pipe holds at once is more than the probe keeps. */
	n = size < 65536 ? size : 65536;
	FZ_ASSERT(n == 0 || write(out[1], data, n) == (ssize_t)n);
	close(out[1]);
	c->outfd = out[0];
	if (how == 2) {
		ce.stage = code % 3;
		ce.err = code;
		FZ_ASSERT(write(err[1], &ce, sizeof(ce)) == sizeof(ce));
	}
	close(err[1]);
	c->errfd = err[0];

	exec_read_output(c);
	FZ_ASSERT(c->outfd == -1);	/* EOF: the child closed it */
	FZ_ASSERT(c->outlen == (n < EXEC_OUTPUT_MAX ? n : EXEC_OUTPUT_MAX));
	plugin_output_parse(c->out, c->outlen, &po);
	memset(&si, 0, sizeof(si));
	si.si_code = how == 1 ? CLD_KILLED : CLD_EXITED;
	si.si_status = (int)code;
	reports = 0;
	exec_report_exit(&run, c, &si);	/* frees c */
	FZ_ASSERT(reports == 1);
	FZ_ASSERT(strlen(got.reason) <= PROBE_REASON_MAX);
	for (i = 0; got.reason[i] != '\0'; i++)
		FZ_ASSERT(got.reason[i] >= 0x20 && got.reason[i] < 0x7f &&
		    got.reason[i] != '|');
	if (how == 0 && code <= 2)
		FZ_ASSERT(got.result == (enum probe_result)code &&
		    !got.from_check);
	else if (how == 0 || how == 1)
		FZ_ASSERT(got.result == PROBE_UNKNOWN && got.from_check);
	else if (ce.stage != STAGE_USER &&
	    probe_errno_local((int)code) != NULL)
		FZ_ASSERT(got.result == PROBE_UNKNOWN &&	/* lbagent's */
		    !got.from_check);
	else
		FZ_ASSERT(got.result == PROBE_CRIT && !got.from_check);
	/* A value only from a plugin's own ending, as the parser read it. */
	if (how == 0 && code <= 3 && !isnan(po.value)) {
		FZ_ASSERT(isfinite(got.value) && got.value == po.value);
		FZ_ASSERT(strcmp(got.unit, po.unit) == 0);
	} else
		FZ_ASSERT(isnan(got.value) && got.unit[0] == '\0');
	for (i = 0; units[i] != NULL && strcmp(units[i], got.unit) != 0; i++)
		;
	FZ_ASSERT(units[i] != NULL);
	return 0;
}
