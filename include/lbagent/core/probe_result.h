/*
 * What a probe's run says, as the rules see it: the one thing the pure
 * modules need from the probes, without the probes' event loop.
 */
#ifndef LBAGENT_PROBE_RESULT_H
#define LBAGENT_PROBE_RESULT_H

/*
 * PROBE_UNKNOWN: lbagent itself could not run the check (out of
 * descriptors, memory, processes or threads). Such a run is shown and
 * counted apart, but says nothing about the service: it never counts
 * towards fall or rise, nor as what the probe counts as.
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
