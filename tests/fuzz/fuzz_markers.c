/*
 * Fuzz target: marker content (src/daemon/markers.c). The input is written as
 * the maint marker, and its last N bytes (N from its first byte) as the
 * drain marker, in a temp dir; markers_read takes them. Each reason must
 * be printable ASCII within REASON_MAX, and so must the reply line
 * composed from them
 * (src/core/decision.c, src/core/reply.c): one line, ending in its newline.
 */
#include <string.h>

#include "lbagent/core/decision.h"
#include "lbagent/core/reply.h"
#include "lbagent/daemon/markers.h"
#include "fuzzutil.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_init();
	return 0;
}

static void
printable(const char *s, size_t max)
{
	size_t	n = strlen(s), i;

	FZ_ASSERT(n <= max);
	for (i = 0; i < n; i++)
		FZ_ASSERT(s[i] >= 0x20 && s[i] < 0x7f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct markers	 node, own;
	struct decision	 target, d;
	char		 line[REPLY_MAX];
	size_t		 len, cut = size > 0 ? data[0] % (size + 1) : 0;
	int		 i;

	fz_write("maint", data, size);
	fz_write("drain", data + size - cut, cut);
	memset(&node, 0, sizeof(node));
	markers_read(fz_dir(), &node);
	FZ_ASSERT(node.m[MARKER_MAINT].present);
	FZ_ASSERT(node.m[MARKER_DRAIN].present);
	FZ_ASSERT(!node.m[MARKER_OFF].present);
	for (i = 0; i < MARKER_COUNT; i++) {
		printable(node.m[i].reason, REASON_MAX);
		FZ_ASSERT(!node.m[i].present || node.m[i].reason[0] != '\0');
	}
	/* The drain one alone, as a service's own marker. */
	memset(&own, 0, sizeof(own));
	own.m[MARKER_DRAIN] = node.m[MARKER_DRAIN];
	memset(&node.m[MARKER_DRAIN], 0, sizeof(node.m[MARKER_DRAIN]));
	memset(&target, 0, sizeof(target));
	decision_up(&target);
	decision_make(&node, &own, &target, &d);
	FZ_ASSERT(d.state == NODE_MAINT);
	len = reply_compose(&d, CLAIM_ALL, true, line);
	FZ_ASSERT(len > 0 && len < REPLY_MAX && line[len - 1] == '\n');
	FZ_ASSERT(memchr(line, '\n', len - 1) == NULL);
	line[len - 1] = '\0';
	printable(line, REPLY_MAX);
	fz_clean();
	return 0;
}
