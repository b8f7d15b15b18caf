/*
 * What a probe's run says, as the rules see it: the one thing the pure
 * modules need from the probes, without the probes' event loop.
 */
#ifndef LBAGENT_PROBE_RESULT_H
#define LBAGENT_PROBE_RESULT_H

/*
 * PROBE_UNKNOWN, of two kinds that are shown alike (unknown, 3) and told
 * apart by the run's outcome (from_check): lbagent itself could not run
 * the check (out of descriptors, memory, processes or threads), which
 * says nothing about the service and never counts towards fall or rise,
 * nor as what the probe counts as; or the check said it cannot tell (a
 * monitoring plugin's exit 3, another code, a signal), which counts as
 * the probe's on_unknown says (by default it does not).
 */
enum probe_result {
	PROBE_OK,
	PROBE_WARN,
	PROBE_CRIT,
	PROBE_UNKNOWN,
	PROBE_RESULT_COUNT
};

const char	*probe_result_name(enum probe_result);

#endif
