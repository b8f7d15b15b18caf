/*
 * lbagentctl after a marker change: what the load balancers get from a
 * service now, as a line or a line per different reply.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lbagent/ctl/format.h"
#include "fmt.h"

#define KEYS_NAMED	3	/* load balancers named per line, then "N more" */

/* "127.0.0.1 \"web\"" or "127.0.0.1": a load-balancer key in words. */
static void
key_words(char *buf, size_t size, const json_t *lb)
{
	char	addr[128], text[128];

	fmt_clean(addr, sizeof(addr), fmt_str(lb, "address"));
	fmt_clean(text, sizeof(text), fmt_str(lb, "text"));
	if (text[0] != '\0')
		snprintf(buf, size, "%s \"%s\"", addr, text);
	else
		snprintf(buf, size, "%s", addr);
}

/* The line a load balancer gets now: the daemon's next_reply, else the reply. */
static const char *
lb_reply(const json_t *svc, const json_t *lb)
{
	const char	*n = json_string_value(json_object_get(lb,
	    "next_reply"));

	return n != NULL ? n : fmt_str(svc, "reply");
}

/*
 * The load balancers from the from-th on that get reply r, in words: the
 * first KEYS_NAMED named, then how many more.
 */
static void
lbs_getting(char *who, size_t size, const json_t *svc, const json_t *lbs,
    size_t from, const char *r)
{
	const json_t	*l2;
	char		 key[TEXT_MAX];
	size_t		 j, n = 0, named = 0;

	who[0] = '\0';
	json_array_foreach(lbs, j, l2) {
		if (j < from || strcmp(lb_reply(svc, l2), r) != 0)
			continue;
		if (named++ >= KEYS_NAMED) {
			n++;
			continue;
		}
		key_words(key, sizeof(key), l2);
		snprintf(who + strlen(who), size - strlen(who), "%s%s",
		    who[0] ? ", " : "", key);
	}
	if (n > 0)
		snprintf(who + strlen(who), size - strlen(who),
		    " and %zu more", n);
}

/* One line per different reply, with the first few that get it. */
static void
replies_each(struct fmt_out *o, const json_t *svc, const json_t *lbs,
    char *head, size_t hang)
{
	const json_t	*lb;
	char		 reply[TEXT_MAX], who[4 * TEXT_MAX];
	const char	*r;
	size_t		 i, j;

	json_array_foreach(lbs, i, lb) {
		bool	 seen = false;

		r = lb_reply(svc, lb);
		for (j = 0; j < i && !seen; j++)
			seen = strcmp(lb_reply(svc, json_array_get(lbs, j)),
			    r) == 0;
		if (seen)
			continue;
		lbs_getting(who, sizeof(who), svc, lbs, i, r);
		fmt_clean(reply, sizeof(reply), r);
		fmt_paraf(o, 0, head, (unsigned)hang, "replies \"%s\" to %s",
		    reply, who);
		memset(head, ' ', strlen(head));
	}
}

void
ctl_format_replies(FILE *fp, const json_t *svc, const char *label,
    unsigned width)
{
	struct fmt_out	 o = { fp, width < 40 ? 40 : width };
	const json_t	*lbs = json_object_get(svc, "load_balancers"), *lb;
	char		 head[TEXT_MAX], reply[TEXT_MAX], who[4 * TEXT_MAX];
	char		 key[TEXT_MAX];
	const char	*r;
	size_t		 i, n, hang;
	bool		 same = true;

	fmt_clean(head, sizeof(head), label);
	snprintf(head + strlen(head), sizeof(head) - strlen(head), "%*s",
	    strlen(head) < 12 ? (int)(12 - strlen(head)) : 0, "");
	strncat(head, " ", sizeof(head) - strlen(head) - 1);
	hang = strlen(head) < 24 ? strlen(head) : 4;
	if (!json_is_object(svc)) {
		fmt_para(&o, 0, head, (unsigned)hang, "not answered for by "
		    "lbagent");
		return;
	}
	if (!json_is_string(json_object_get(svc, "reply"))) {
		/* The public part: no reply, only the state. */
		fmt_clean(reply, sizeof(reply), fmt_str(svc, "state"));
		fmt_clean(who, sizeof(who), fmt_str(svc, "automation"));
		fmt_paraf(&o, 0, head, (unsigned)hang, "state %s, automation "
		    "%s", reply[0] ? reply : "?", who[0] ? who : "?");
		return;
	}
	if (!json_is_array(lbs) || json_array_size(lbs) == 0) {
		fmt_clean(reply, sizeof(reply), fmt_str(svc, "reply"));
		fmt_paraf(&o, 0, head, (unsigned)hang, "replies \"%s\" (no "
		    "load balancer has asked yet)", reply);
		return;
	}
	r = lb_reply(svc, json_array_get(lbs, 0));
	json_array_foreach(lbs, i, lb)
		if (strcmp(lb_reply(svc, lb), r) != 0)
			same = false;
	if (!same) {
		replies_each(&o, svc, lbs, head, hang);
		return;
	}
	fmt_clean(reply, sizeof(reply), r);
	n = json_array_size(lbs);
	if (n == 1) {
		key_words(key, sizeof(key), json_array_get(lbs, 0));
		fmt_paraf(&o, 0, head, (unsigned)hang, "replies \"%s\" to %s",
		    reply, key);
	} else
		fmt_paraf(&o, 0, head, (unsigned)hang, "replies \"%s\" to all "
		    "%zu load balancers that ask", reply, n);
}
