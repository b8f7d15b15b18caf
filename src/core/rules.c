/* The rules engine: probe states to a target. No I/O, no clock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/rules.h"

/* The reaction a probe's counted result calls for. */
static struct reaction
reaction_of(const struct rules_input *in)
{
	static const struct reaction none = { REACT_IGNORE, 0 };

	switch (in->counted) {
	case PROBE_WARN:	return in->on_warn;
	case PROBE_CRIT:	return in->on_crit;
	case PROBE_UNKNOWN:	return in->on_unknown;
	default:		return none;
	}
}

/* Orders reactions most severe first: down, drain, then lower weights. */
static int
severity_cmp(const struct reaction *a, const struct reaction *b)
{
	if (a->kind != b->kind)
		return a->kind > b->kind ? -1 : 1;
	if (a->kind == REACT_WEIGHT && a->weight != b->weight)
		return a->weight < b->weight ? -1 : 1;
	return 0;
}

struct ranked {
	const struct rules_input	*in;
	struct reaction			 r;
	size_t				 order;		/* config order breaks ties */
};

static int
ranked_cmp(const void *a, const void *b)
{
	const struct ranked	*x = a, *y = b;
	int			 c = severity_cmp(&x->r, &y->r);

	if (c != 0)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Appends "name: reason" to the target's reason while it fits. */
static void
add_reason(struct decision *d, const struct rules_input *in)
{
	size_t	len = strlen(d->reason);
	char	item[REASON_MAX * 2 + 8];
	size_t	n;

	n = (size_t)snprintf(item, sizeof(item), "%s%s: %s", len ? "; " : "",
	    in->name, in->reason ? in->reason : "");
	if (len + n > REASON_MAX)
		n = REASON_MAX - len;
	memcpy(d->reason + len, item, n);
	d->reason[len + n] = '\0';
}

void
rules_evaluate(const struct rules_input *in, size_t n, struct decision *d)
{
	struct ranked	*r;
	size_t		 i, k = 0;

	decision_up(d);
	if (n == 0 || (r = calloc(n, sizeof(*r))) == NULL)
		return;
	for (i = 0; i < n; i++) {
		struct reaction re = reaction_of(&in[i]);

		if (re.kind == REACT_IGNORE)
			continue;
		r[k].in = &in[i];
		r[k].r = re;
		r[k].order = i;
		k++;
	}
	qsort(r, k, sizeof(*r), ranked_cmp);
	if (k > 0) {
		switch (r[0].r.kind) {
		case REACT_DOWN:
			d->state = NODE_DOWN;
			break;
		case REACT_DRAIN:
			d->weight = 0;
			break;
		case REACT_WEIGHT:
			d->weight = r[0].r.weight;
			break;
		case REACT_IGNORE:
			break;
		}
	}
	for (i = 0; i < k; i++)
		add_reason(d, r[i].in);
	free(r);
}
