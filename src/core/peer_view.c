/*
 * The peer guard's judging: the other nodes' answers and the load
 * balancers' stats into verdicts and a view per service. Pure.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lbagent/core/name.h"
#include "lbagent/core/peer_view.h"

#define PEER_SERVICES_MAX	1024	/* in one answer; beyond: malformed */

void
peer_view_answer_free(struct peer_answer *a)
{
	free(a->svc);
	memset(a, 0, sizeof(*a));
}

/* A name as the config allows it; other text is not a name we match. */
static int
copy_name(char dst[CONFIG_NAME_MAX + 1], const json_t *v, bool empty_ok)
{
	const char	*s;
	size_t		 len;

	if (!json_is_string(v))
		return -1;
	s = json_string_value(v);
	len = json_string_length(v);
	if (len == 0 ? !empty_ok : strlen(s) != len || !name_valid(s))
		return -1;
	memcpy(dst, s, len);
	dst[len] = '\0';
	return 0;
}

/* A short lower-case word, or "" when v is none. */
static void
copy_word(char *dst, size_t size, const json_t *v)
{
	const char	*s;
	size_t		 i, len;

	dst[0] = '\0';
	if (!json_is_string(v))
		return;
	s = json_string_value(v);
	len = json_string_length(v);
	if (len == 0 || len >= size)
		return;
	for (i = 0; i < len; i++)
		if (!(s[i] >= 'a' && s[i] <= 'z') && s[i] != '-' && s[i] != '_')
			return;
	memcpy(dst, s, len);
	dst[len] = '\0';
}

/*
 * "capacity": {"estimate": R, "age_ms": A}: both finite numbers at or
 * above 0, else nothing (NAN, -1).
 */
static void
parse_capacity(struct peer_service *s, const json_t *c)
{
	const json_t	*e = json_object_get(c, "estimate");
	const json_t	*age = json_object_get(c, "age_ms");
	double		 r, a;

	s->capacity = NAN;
	s->capacity_age_ms = -1;
	if (!json_is_object(c) || !json_is_number(e) || !json_is_number(age))
		return;
	r = json_number_value(e);
	a = json_number_value(age);
	if (!isfinite(r) || r < 0 || !isfinite(a) || a < 0 || a > 1e15)
		return;
	s->capacity = r;
	s->capacity_age_ms = (int64_t)a;
}

double
peer_service_capacity(const struct peer_service *s, uint64_t max_age_ms)
{
	if (isnan(s->capacity) || s->capacity_age_ms < 0 ||
	    (uint64_t)s->capacity_age_ms > max_age_ms)
		return NAN;
	return s->capacity;
}

int
peer_view_answer_parse(const char *body, size_t len, struct peer_answer *a,
    const char **why)
{
	json_error_t	 err;
	json_t		*root, *svcs = NULL, *o;
	size_t		 i;

	memset(a, 0, sizeof(*a));
	if (len > PEERS_ANSWER_MAX) {
		*why = "answer too large";
		return -1;
	}
	if ((root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &err)) == NULL) {
		*why = "not JSON";
		return -1;
	}
	*why = NULL;
	a->incarnation = -1;
	if (json_is_object(root) &&
	    json_is_integer(json_object_get(root, "incarnation")) &&
	    json_integer_value(json_object_get(root, "incarnation")) >= 0)
		a->incarnation = (int64_t)json_integer_value(
		    json_object_get(root, "incarnation"));
	if (!json_is_object(root))
		*why = "not a status document";
	else if (copy_name(a->node_id, json_object_get(root, "node_id"),
	    false) == -1)
		*why = "no valid node_id";
	else if (!json_is_array(svcs = json_object_get(root, "services")) ||
	    json_array_size(svcs) == 0 ||
	    json_array_size(svcs) > PEER_SERVICES_MAX)
		*why = "no services";
	else if ((a->svc = calloc(json_array_size(svcs),
	    sizeof(*a->svc))) == NULL)
		*why = "out of memory";
	if (*why != NULL) {
		json_decref(root);
		peer_view_answer_free(a);
		return -1;
	}
	json_array_foreach(svcs, i, o) {
		struct peer_service	*s = &a->svc[i];
		json_t			*server = json_object_get(o, "server");

		if (!json_is_object(o) ||
		    copy_name(s->name, json_object_get(o, "name"), true) == -1 ||
		    !json_is_boolean(json_object_get(o, "serving")) ||
		    (server != NULL && copy_name(s->server, server, false) == -1)) {
			*why = "a service without a valid name, serving or "
			    "server";
			json_decref(root);
			peer_view_answer_free(a);
			return -1;
		}
		s->serving = json_is_true(json_object_get(o, "serving"));
		/* Shown only (the fleet view): absent or odd is not given. */
		copy_word(s->state, sizeof(s->state),
		    json_object_get(o, "state"));
		copy_word(s->automation, sizeof(s->automation),
		    json_object_get(o, "automation"));
		s->weight = json_is_integer(json_object_get(o, "weight")) &&
		    json_integer_value(json_object_get(o, "weight")) >= 0 &&
		    json_integer_value(json_object_get(o, "weight")) <= 256 ?
		    (long)json_integer_value(json_object_get(o, "weight")) : -1;
		parse_capacity(s, json_object_get(o, "capacity"));
	}
	a->nsvc = json_array_size(svcs);
	json_decref(root);
	return 0;
}

static const struct peer_service *
answer_service(const struct peer_answer *a, const char *name)
{
	size_t	i;

	for (i = 0; i < a->nsvc; i++)
		if (strcmp(a->svc[i].name, name) == 0)
			return &a->svc[i];
	return NULL;
}

bool
peer_view_peer_ok(const struct peer_source *p)
{
	return p->answered && p->ans.svc != NULL;
}

bool
peer_view_lb_ok(const struct lb_source *lb)
{
	return lb->answered && lb->table != NULL;
}

const char *
peer_view_peer_text(const struct peer_source *p)
{
	return p->text;
}

int64_t
peer_view_peer_seen_ms(const struct peer_source *p)
{
	return p->seen_ms;
}

const char *
peer_view_peer_node_id(const struct peer_source *p)
{
	return peer_view_peer_ok(p) ? p->ans.node_id : p->pinned;
}

const char *
peer_view_peer_error(const struct peer_source *p)
{
	return p->error[0] ? p->error : "no answer yet";
}

const char *
peer_view_lb_text(const struct lb_source *lb)
{
	return lb->text;
}

int64_t
peer_view_lb_seen_ms(const struct lb_source *lb)
{
	return lb->seen_ms;
}

const char *
peer_view_lb_error(const struct lb_source *lb)
{
	return lb->error[0] ? lb->error : "no answer yet";
}

/* An answer later than the service allows counts as none. */
static bool
in_time(bool answered, int64_t took_ms, uint64_t timeout_ms)
{
	return answered && took_ms <= (int64_t)timeout_ms;
}

void
peer_view_judge(const struct peer_source *p, const struct lb_source *lbs,
    size_t nlbs, const char *service, const char *backend, const char *my_id,
    uint64_t timeout_ms, struct peer_verdict *v)
{
	const struct peer_service	*s;
	const char			*server, *why;
	struct hastats_row		 row;
	size_t				 i, answered = 0;
	int				 found;

	memset(v, 0, sizeof(*v));
	if (!peer_view_peer_ok(p)) {
		snprintf(v->why, sizeof(v->why), "%s", peer_view_peer_error(p));
		return;
	}
	snprintf(v->node_id, sizeof(v->node_id), "%s", p->ans.node_id);
	if (strcmp(p->ans.node_id, my_id) == 0) {
		v->self = true;
		snprintf(v->why, sizeof(v->why), "this node");
		return;
	}
	if (!in_time(true, p->took_ms, timeout_ms)) {
		snprintf(v->why, sizeof(v->why), "timeout");
		return;
	}
	if (p->pinned[0] != '\0' && strcmp(p->pinned, p->ans.node_id) != 0) {
		snprintf(v->why, sizeof(v->why), "answered as %s, not %s (the "
		    "node first seen there; a reload accepts it)",
		    p->ans.node_id, p->pinned);
		return;
	}
	if ((s = answer_service(&p->ans, service)) == NULL) {
		snprintf(v->why, sizeof(v->why), "has no service '%s'", service);
		return;
	}
	if (!s->serving) {
		snprintf(v->why, sizeof(v->why), "not serving");
		return;
	}
	server = s->server[0] != '\0' ? s->server : p->ans.node_id;
	for (i = 0; i < nlbs; i++) {
		const struct lb_source *lb = &lbs[i];

		if (!in_time(peer_view_lb_ok(lb), lb->took_ms, timeout_ms))
			continue;
		answered++;
		found = hastats_table_find(lb->table, backend, server, &row,
		    &why);
		if (found == -1) {
			snprintf(v->why, sizeof(v->why), "%s: %s", lb->text,
			    why);
			return;
		}
		if (found == 0) {
			snprintf(v->why, sizeof(v->why), "no server %s/%s on %s",
			    backend, server, lb->text);
			return;
		}
		if (!hastats_serving(&row)) {
			if (row.status[0] != '\0' && strncmp(row.status, "UP",
			    2) != 0 && strcmp(row.status, "no check") != 0)
				snprintf(v->why, sizeof(v->why), "%s on %s",
				    row.status, lb->text);
			else
				snprintf(v->why, sizeof(v->why), "weight %ld on "
				    "%s", row.weight, lb->text);
			return;
		}
	}
	if (nlbs > 0 && answered == 0) {
		snprintf(v->why, sizeof(v->why), "no load balancer answered");
		return;
	}
	v->serving = true;
}

static void
lb_warn(struct lb_view *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
lb_warn(struct lb_view *v, const char *fmt, ...)
{
	va_list	ap;

	if (v->nwarnings == LB_WARNINGS_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(v->warnings[v->nwarnings++], sizeof(v->warnings[0]), fmt, ap);
	va_end(ap);
}

struct count {
	const char	*self;
	long		 n;
};

static int
count_serving(void *arg, const char *server, const struct hastats_row *r)
{
	struct count	*c = arg;

	if (strcmp(server, c->self) != 0 && hastats_serving(r))
		c->n++;
	return 0;
}

/* The other servers of backend that lb sends new traffic; -1: malformed. */
static long
count_others(const struct lb_source *lb, const char *backend,
    const char *server, const char **why)
{
	struct count	 c = { server, 0 };

	if (hastats_table_each(lb->table, backend, count_serving, &c,
	    why) == -1)
		return -1;
	return c.n;
}

void
peer_view_lb(const struct lb_source *lb, const char *backend,
    const char *server, const struct decision *told, struct lb_view *v)
{
	const char	*why, *admin;
	int		 found;
	long		 iw;

	memset(v, 0, sizeof(*v));
	v->others_serving = -1;
	if (!peer_view_lb_ok(lb)) {
		snprintf(v->error, sizeof(v->error), "%s",
		    peer_view_lb_error(lb));
		return;
	}
	found = hastats_table_find(lb->table, backend, server, &v->row,
	    &why);
	if (found != 1) {
		if (found == -1)
			snprintf(v->error, sizeof(v->error), "%s", why);
		else
			snprintf(v->error, sizeof(v->error), "no server %s/%s",
			    backend, server);
		return;
	}
	v->found = true;
	v->others_serving = count_others(lb, backend, server, &why);
	/*
	 * The configured weight: from the servers state where the source
	 * gives it; 2.6's CSV has only the current one (an agent's
	 * percentage applied), so otherwise it is not known.
	 */
	iw = hastats_table_initial_weight(lb->table, backend, server);
	v->row.initial_weight = iw;
	if (iw >= 0 && iw < 10)
		lb_warn(v, "initial weight %ld is below 10: percentages truncate "
		    "(50%% gives %ld%s)", iw, iw / 2, iw == 1 ?
		    ", every percentage below 100% gives 0" : "");
	admin = hastats_admin(&v->row);
	if (admin != NULL && !(strcmp(admin, "MAINT") == 0 &&
	    told->state == NODE_MAINT) && !(strcmp(admin, "DRAIN") == 0 &&
	    told->state == NODE_DRAIN))
		lb_warn(v, "shows %s, which lbagent did not ask for (an "
		    "operator's hand? lbagent leaves it as it is)",
		    v->row.status);
}

/* Appends "; text" (or text, first) to buf; cut when it is full. */
static void
append(char *buf, size_t size, const char *sep, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
append(char *buf, size_t size, const char *sep, const char *fmt, ...)
{
	size_t	len = strlen(buf);
	va_list	ap;

	if (len > 0 && len + strlen(sep) < size) {
		memcpy(buf + len, sep, strlen(sep) + 1);
		len += strlen(sep);
	}
	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

/*
 * The other servers of a backend that one load balancer sends new
 * traffic, sorted: each CSV is read once, and a server is then looked up
 * in the others', so a round costs in proportion to the fleet.
 */
struct serving_set {
	char		(*names)[HASTATS_NAME_MAX];
	size_t		 n, cap;
	const char	*self;		/* this node's server: not counted */
	bool		 failed;	/* out of memory */
};

static int
add_serving(void *arg, const char *server, const struct hastats_row *r)
{
	struct serving_set	*set = arg;
	char			(*grown)[HASTATS_NAME_MAX];

	if (strcmp(server, set->self) == 0 || !hastats_serving(r))
		return 0;
	if (set->n == set->cap) {
		set->cap = set->cap ? set->cap * 2 : 16;
		if ((grown = realloc(set->names, set->cap *
		    sizeof(*grown))) == NULL) {
			set->failed = true;
			return 1;
		}
		set->names = grown;
	}
	snprintf(set->names[set->n++], HASTATS_NAME_MAX, "%s", server);
	return 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/*
 * Without peers: another server of this node's backend serves when every
 * load balancer that answered in time (at least one) shows it UP with a
 * weight above 0. One answer per load balancer, whatever the fleet.
 */
static void
lbs_alone(const struct lb_source *lbs, size_t nlbs,
    const struct transition_conf *tc, const char *my_id, struct peer_view *v)
{
	struct serving_set	 sets[CONFIG_PEERS_MAX];
	const char		*self = tc->server[0] != '\0' ? tc->server :
				    my_id, *why;
	size_t			 i, j, k, nsets = 0, wholen = 0, count = 0;
	int			 n;

	for (i = 0; i < nlbs && i < CONFIG_PEERS_MAX; i++) {
		struct serving_set *set = &sets[nsets];

		if (!peer_view_lb_ok(&lbs[i])) {
			append(v->why, sizeof(v->why), "; ", "%s: %s",
			    lbs[i].text, peer_view_lb_error(&lbs[i]));
			continue;
		}
		if (!in_time(true, lbs[i].took_ms, tc->peer_timeout_ms)) {
			append(v->why, sizeof(v->why), "; ", "%s: timeout",
			    lbs[i].text);
			continue;
		}
		memset(set, 0, sizeof(*set));
		set->self = self;
		if (hastats_table_each(lbs[i].table, tc->backend,
		    add_serving, set, &why) == -1 || set->failed) {
			append(v->why, sizeof(v->why), "; ", "%s: %s",
			    lbs[i].text, set->failed ? "out of memory" : why);
			free(set->names);
			continue;
		}
		if (set->n > 1)
			qsort(set->names, set->n, sizeof(set->names[0]),
			    name_cmp);
		nsets++;
	}
	if (nsets == 0) {
		append(v->why, sizeof(v->why), "; ", "no load balancer "
		    "answered");
		return;
	}
	for (j = 0; j < sets[0].n; j++) {
		/* An empty set has no array at all: bsearch may not see it. */
		for (k = 1; k < nsets; k++)
			if (sets[k].n == 0 || bsearch(sets[0].names[j],
			    sets[k].names, sets[k].n, sizeof(sets[k].names[0]),
			    name_cmp) == NULL)
				break;
		/* A name twice in one CSV is one server. */
		if (k < nsets || (j > 0 && strcmp(sets[0].names[j],
		    sets[0].names[j - 1]) == 0))
			continue;
		count++;
		n = snprintf(v->who + wholen, sizeof(v->who) - wholen, "%s%s",
		    wholen ? ", " : "", sets[0].names[j]);
		if (n > 0 && (size_t)n < sizeof(v->who) - wholen)
			wholen += (size_t)n;
	}
	for (k = 0; k < nsets; k++)
		free(sets[k].names);
	if (count > 0)
		v->other_serving = true;
	else
		append(v->why, sizeof(v->why), "; ", "no other server of %s UP "
		    "with a weight above 0 on every load balancer that "
		    "answered", tc->backend);
}

void
peer_view_aggregate(const struct peer_source *peers, size_t npeers,
    const struct lb_source *lbs, size_t nlbs, const char *service,
    const struct transition_conf *tc, const char *my_id, int64_t round_ms,
    struct peer_verdict *verdicts, struct peer_view *v)
{
	size_t	wholen = 0, whylen = 0, j;
	int	n;

	v->round_ms = round_ms;
	v->other_serving = false;
	v->who[0] = v->why[0] = '\0';
	for (j = 0; j < npeers; j++) {
		struct peer_verdict	*pv = &verdicts[j];
		const char		*id;

		peer_view_judge(&peers[j], lbs, nlbs, service, tc->backend,
		    my_id, tc->peer_timeout_ms, pv);
		if (pv->self)
			continue;
		id = pv->node_id[0] ? pv->node_id : peers[j].text;
		if (pv->serving) {
			v->other_serving = true;
			n = snprintf(v->who + wholen, sizeof(v->who) - wholen,
			    "%s%s", wholen ? ", " : "", id);
			if (n > 0 && (size_t)n < sizeof(v->who) - wholen)
				wholen += (size_t)n;
		} else {
			n = snprintf(v->why + whylen, sizeof(v->why) - whylen,
			    "%s%s: %s", whylen ? "; " : "", id, pv->why);
			if (n > 0 && (size_t)n < sizeof(v->why) - whylen)
				whylen += (size_t)n;
		}
	}
	if (npeers == 0 && nlbs > 0)
		lbs_alone(lbs, nlbs, tc, my_id, v);
	if (v->other_serving)
		v->served_ms = round_ms;
	if (v->why[0] == '\0')
		snprintf(v->why, sizeof(v->why), "no other node listed");
}

void
peer_liveness_init(struct peer_liveness *l)
{
	memset(l, 0, sizeof(*l));
	l->incarnation = -1;
}

void
peer_liveness_round(struct peer_liveness *l, bool good, int64_t incarnation)
{
	l->rounds++;
	if (!good) {
		l->missed++;
		return;
	}
	l->missed = 0;
	l->ever = true;
	l->restarted = incarnation >= 0 && l->incarnation >= 0 &&
	    incarnation > l->incarnation;
	if (l->restarted)
		l->restarts++;
	if (incarnation >= 0)
		l->incarnation = incarnation;
}

enum peer_alive
peer_liveness_verdict(const struct peer_liveness *l, uint64_t suspect_after,
    uint64_t dead_after)
{
	if (l->missed >= dead_after)
		return PEER_DEAD;
	/* Never heard from is not alive, whatever the rounds so far. */
	if (l->missed >= suspect_after || !l->ever)
		return PEER_SUSPECT;
	return PEER_ALIVE;
}

const char *
peer_alive_name(enum peer_alive a)
{
	switch (a) {
	case PEER_ALIVE:
		return "alive";
	case PEER_SUSPECT:
		return "suspect";
	case PEER_DEAD:
		return "dead";
	}
	return "alive";
}
