/*
 * Whether the load balancers have drained this node: every one answered
 * since the wait began, sends it no new traffic and has no session and no
 * queue left on it. A load balancer that does not answer is never counted
 * as drained: it may still send the node traffic.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lbagent/core/hastats.h"
#include "lbagent/ctl/format.h"
#include "lbagent/ctl/wait.h"

/* A count of the row, -1 when null, missing (an older lbagent) or odd. */
static long
count(const json_t *row, const char *key)
{
	const json_t	*j = json_object_get(row, key);

	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return -1;
	return (long)json_integer_value(j);
}

size_t
ctl_drain_nlbs(const json_t *root)
{
	return json_array_size(json_object_get(root, "haproxy"));
}

/* Whether the row still gets new traffic: what the daemon's guard says. */
static bool
serving(const json_t *row)
{
	struct hastats_row	r;
	const json_t		*w = json_object_get(row, "weight");

	memset(&r, 0, sizeof(r));
	snprintf(r.status, sizeof(r.status), "%s", ctl_json_str(row, "status"));
	/* No weight shown: UP counts as serving, to be safe. */
	r.weight = json_is_integer(w) ? (long)json_integer_value(w) : 1;
	return hastats_serving(&r);
}

static void
worse(struct ctl_drain_lb *lb, enum ctl_drain v, const char *why)
{
	if (v <= lb->verdict)
		return;
	lb->verdict = v;
	snprintf(lb->why, sizeof(lb->why), "%s", why);
}

static void
check_one(const json_t *lbj, const char *service, double since_s,
    struct ctl_drain_lb *lb)
{
	const json_t	*row, *seen;
	char		 be[48], srv[48], st[48], err[128], why[256];
	long		 s, q;
	size_t		 i, rows = 0;

	memset(lb, 0, sizeof(*lb));
	ctl_printable(lb->source, sizeof(lb->source),
	    ctl_json_str(lbj, "source"));
	lb->verdict = CTL_DRAIN_DONE;
	if (!json_is_true(json_object_get(lbj, "ok"))) {
		ctl_printable(err, sizeof(err), ctl_json_str(lbj, "error"));
		worse(lb, CTL_DRAIN_SILENT, err[0] ? err : "no answer");
		lb->sessions = lb->queued = -1;
		return;
	}
	seen = json_object_get(lbj, "last_seen_s");
	if (!json_is_number(seen) || !isfinite(json_number_value(seen)) ||
	    json_number_value(seen) >= since_s) {
		if (json_is_number(seen))
			snprintf(why, sizeof(why), "the last one %.1fs ago",
			    json_number_value(seen));
		else
			snprintf(why, sizeof(why), "none yet");
		worse(lb, CTL_DRAIN_OLD, why);
	}
	json_array_foreach(json_object_get(lbj, "this_node"), i, row) {
		if (service != NULL &&
		    strcmp(ctl_json_str(row, "service"), service) != 0)
			continue;
		rows++;
		ctl_printable(be, sizeof(be), ctl_json_str(row, "backend"));
		ctl_printable(srv, sizeof(srv), ctl_json_str(row, "server"));
		if (!json_is_true(json_object_get(row, "found"))) {
			ctl_printable(err, sizeof(err),
			    ctl_json_str(row, "error"));
			snprintf(why, sizeof(why), "%s/%s: %s", be, srv,
			    err[0] ? err : "not found");
			worse(lb, CTL_DRAIN_UNKNOWN, why);
			lb->sessions = lb->queued = -1;
			continue;
		}
		s = count(row, "sessions");
		q = count(row, "queued");
		if (s == -1 || q == -1) {
			snprintf(why, sizeof(why), "%s/%s: its sessions and queue "
			    "are not known", be, srv);
			worse(lb, CTL_DRAIN_UNKNOWN, why);
		}
		lb->sessions = s == -1 || lb->sessions == -1 ? -1 :
		    lb->sessions + s;
		lb->queued = q == -1 || lb->queued == -1 ? -1 : lb->queued + q;
		if (serving(row)) {
			ctl_printable(st, sizeof(st),
			    ctl_json_str(row, "status"));
			if (json_is_integer(json_object_get(row, "weight")))
				snprintf(why, sizeof(why), "%s/%s %s, weight "
				    "%lld", be, srv, st, (long long)
				    json_integer_value(json_object_get(row,
				    "weight")));
			else
				snprintf(why, sizeof(why), "%s/%s %s", be, srv,
				    st);
			worse(lb, CTL_DRAIN_SERVING, why);
		} else if (s > 0 || q > 0)
			worse(lb, CTL_DRAIN_BUSY, "");
	}
	if (rows == 0)
		worse(lb, CTL_DRAIN_UNKNOWN, service != NULL ? "no row for the "
		    "service" : "no row for this node");
}

size_t
ctl_drain_check(const json_t *root, const char *service, double since_s,
    struct ctl_drain_lb *out, size_t max)
{
	const json_t	*lbj;
	size_t		 i, n = 0;

	json_array_foreach(json_object_get(root, "haproxy"), i, lbj) {
		if (n == max)
			break;
		check_one(lbj, service, since_s, &out[n++]);
	}
	return n;
}

bool
ctl_drain_done(const struct ctl_drain_lb *lbs, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (lbs[i].verdict != CTL_DRAIN_DONE)
			return false;
	return n > 0;
}

/* "1 session, 0 queued", "3 sessions, 2 queued", or what is unknown. */
static void
left(const struct ctl_drain_lb *lb, char *buf, size_t size)
{
	if (lb->sessions < 0 || lb->queued < 0)
		snprintf(buf, size, "sessions and queue unknown");
	else
		snprintf(buf, size, "%ld session%s, %ld queued", lb->sessions,
		    lb->sessions == 1 ? "" : "s", lb->queued);
}

void
ctl_drain_describe(const struct ctl_drain_lb *lb, char *buf, size_t size)
{
	char	n[64];

	left(lb, n, sizeof(n));
	switch (lb->verdict) {
	case CTL_DRAIN_DONE:
		snprintf(buf, size, "drained");
		break;
	case CTL_DRAIN_BUSY:
		snprintf(buf, size, "%s", n);
		break;
	case CTL_DRAIN_SERVING:
		snprintf(buf, size, "still in the traffic (%s), %s", lb->why, n);
		break;
	case CTL_DRAIN_UNKNOWN:
		snprintf(buf, size, "%s", lb->why);
		break;
	case CTL_DRAIN_OLD:
		snprintf(buf, size, "no answer since the wait began (%s)",
		    lb->why);
		break;
	case CTL_DRAIN_SILENT:
		snprintf(buf, size, "not answering: %s", lb->why);
		break;
	}
}
