/* The state file: load, validate, save atomically. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lbagent/core/history.h"
#include "lbagent/sys/atomic_file.h"
#include "lbagent/sys/clock.h"
#include "lbagent/sys/log.h"
#include "lbagent/daemon/state.h"

/* A state file is small; anything larger is not ours. */
#define STATE_MAX_BYTES	(4 * 1024 * 1024)

static int
state_path(char *buf, size_t size, const char *dir, const char *suffix)
{
	return snprintf(buf, size, "%s/%s%s", dir, STATE_FILE, suffix) <
	    (int)size ? 0 : -1;
}

/* Why a decision object is refused, by the key it is under. */
static const char *const decision_why[] = {
	"decision lacks state, weight or reason", "unknown state in decision",
	"weight out of range in decision",
};
static const char *const held_why[] = {
	"held lacks state, weight or reason", "unknown state in held",
	"weight out of range in held",
};

static int
decision_from_json(const json_t *o, struct decision *d,
    const char *const whys[3], const char **why)
{
	const char	*state, *reason;
	json_int_t	 weight;
	int		 failing = 0, ramping = 0, off = 0, shadow = 0;

	if (json_unpack((json_t *)o, "{s:s, s:I, s:s, s?b, s?b, s?b, s?b}",
	    "state", &state, "weight", &weight, "reason", &reason, "failing",
	    &failing, "ramping", &ramping, "automation_off", &off, "shadow",
	    &shadow) != 0) {
		*why = whys[0];
		return -1;
	}
	memset(d, 0, sizeof(*d));
	d->failing = failing;
	d->ramping = ramping;
	d->automation_off = off;
	d->shadow = off && shadow;
	if (decision_state_parse(state, &d->state) == -1) {
		*why = whys[1];
		return -1;
	}
	if (weight < 0 || weight > DECISION_WEIGHT_MAX) {
		*why = whys[2];
		return -1;
	}
	d->weight = (unsigned)weight;
	text_reason(d->reason, reason, strlen(reason));
	return 0;
}

static json_t *
decision_to_json(const struct decision *d)
{
	return json_pack("{s:s, s:i, s:s, s:b, s:b, s:b, s:b}", "state",
	    decision_state_name(d->state), "weight", (int)d->weight, "reason",
	    d->reason, "failing", d->failing, "ramping", d->ramping,
	    "automation_off", d->automation_off, "shadow", d->shadow);
}

void
state_service_of(struct state_service *ss, struct service *s)
{
	memset(ss, 0, sizeof(*ss));
	ss->name = s->name;
	ss->has_decision = s->has_decision;
	ss->decision = s->decision;
	ss->has_held = s->has_held;
	ss->held = s->held;
	ss->held_since_ms = s->held_since_ms;
	ss->since_wall_ms = s->since_wall_ms;
	ss->keys = s->keys;
	ss->tr = s->tr;
	ss->history = &s->history;
}

void
state_service_resume(struct service *s, const struct state_service *ss)
{
	if (ss->has_decision)
		service_resume(s, &ss->decision, ss->since_wall_ms);
	if (ss->has_held)
		service_resume_held(s, &ss->held, ss->held_since_ms);
}

void
state_boot_id(char buf[BOOT_ID_MAX])
{
	FILE	*fp;

	buf[0] = '\0';
	if ((fp = fopen("/proc/sys/kernel/random/boot_id", "re")) == NULL)
		return;
	if (fgets(buf, BOOT_ID_MAX, fp) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(fp);
}

void
state_clock_now(struct state_clock *c, const char *boot_id)
{
	c->now_ms = clock_now_ms();
	c->wall_ms = clock_wall_ms();
	c->boot_ms = clock_boot_ms();
	snprintf(c->boot_id, sizeof(c->boot_id), "%s", boot_id);
}

struct state_resume
state_gap(int64_t saved_wall_ms, int64_t saved_boot_ms,
    const char *saved_boot_id, const struct state_clock *now)
{
	struct state_resume	r = { 0, false };

	if (saved_boot_id != NULL && saved_boot_id[0] != '\0' &&
	    strcmp(saved_boot_id, now->boot_id) == 0 && saved_boot_ms >= 0 &&
	    saved_boot_ms <= now->boot_ms) {
		r.same_boot = true;
		r.gap_ms = now->boot_ms - saved_boot_ms;
	} else if (now->wall_ms > saved_wall_ms)
		r.gap_ms = now->wall_ms - saved_wall_ms;
	return r;
}

/*
 * What HAProxy holds, with since (wall time) as the monotonic clock now
 * reads it: a since in the future (the wall clock went back) is now.
 */
static int
held_from_json(const json_t *o, struct state_service *svc, int64_t now_ms,
    int64_t wall_ms, const char **why)
{
	json_int_t	since;

	if (json_unpack((json_t *)o, "{s:I}", "since", &since) != 0) {
		*why = "held lacks since";
		return -1;
	}
	if (decision_from_json(o, &svc->held, held_why, why) == -1)
		return -1;
	svc->has_held = true;
	svc->held_since_ms = since >= wall_ms ? now_ms :
	    now_ms - (wall_ms - since);
	return 0;
}

/*
 * Since when the decision was replied (wall ms): as saved; from a file
 * older than that, the newest transition of the history; else 0 (now).
 */
static int64_t
since_of(const json_t *since, const struct history *h)
{
	size_t	n;

	if (json_is_integer(since))
		return json_integer_value(since);
	if (h != NULL && (n = history_count(h)) > 0)
		return history_get(h, n - 1)->wall_ms;
	return 0;
}

/* One service's decision, keys, transitions and history from its object. */
static int
parse_service(const json_t *o, struct state_service *svc,
    const struct state_clock *c, const struct state_resume *r,
    const char **why)
{
	json_t		*decision = NULL, *lbs, *tr = NULL, *hist = NULL;
	json_t		*claims = NULL, *held = NULL, *since = NULL;
	int64_t		 now_ms = c->now_ms, wall_ms = c->wall_ms;
	unsigned	 bits;

	if (json_unpack((json_t *)o, "{s?o, s:o, s?o, s?o, s?o, s?o, s?o}",
	    "decision", &decision, "load_balancers", &lbs, "transition", &tr,
	    "history", &hist, "claims", &claims, "held", &held, "since",
	    &since) != 0) {
		*why = "a service lacks load_balancers";
		return -1;
	}
	if (since != NULL && !json_is_null(since) &&
	    (!json_is_integer(since) || json_integer_value(since) <= 0)) {
		*why = "since is not a time";
		return -1;
	}
	if (held != NULL && !json_is_null(held) &&
	    held_from_json(held, svc, now_ms, wall_ms, why) == -1)
		return -1;
	if (tr != NULL && svc->tr != NULL && transition_from_json(svc->tr, tr,
	    now_ms, r->gap_ms, r->same_boot, why) == -1)
		return -1;
	if (hist != NULL && svc->history != NULL &&
	    history_from_json(svc->history, hist, why) == -1)
		return -1;
	if (decision != NULL && !json_is_null(decision)) {
		if (decision_from_json(decision, &svc->decision,
		    decision_why, why) == -1)
			return -1;
		svc->has_decision = true;
		svc->since_wall_ms = since_of(since, svc->history);
		/*
		 * Claims first, so that loaded debts are not taken for renewals.
		 * They are saved as they were: with automation off, a weight
		 * lbagent set earlier stays claimed though no reply carries it.
		 */
		bits = reply_claims(&svc->decision);
		if (claims != NULL && lbkeys_bits_from_json(claims, &bits) == -1) {
			*why = "claims is not a list of claims";
			return -1;
		}
		lbkeys_claim(svc->keys, bits);
	}
	return lbkeys_from_json(svc->keys, lbs, now_ms, wall_ms, why);
}

static struct state_service *
find_service(struct state_service *svcs, size_t n, const char *name)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (strcmp(svcs[i].name, name) == 0)
			return &svcs[i];
	return NULL;
}

static int
parse(const json_t *root, uint64_t *incarnation, struct state_service *svcs,
    size_t n, const struct state_clock *c, struct state_resume *r,
    const char **why)
{
	struct state_service	*svc;
	json_t			*services = NULL, *o;
	json_int_t		 version, inc, saved_at = 0, uptime = -1;
	const char		*name, *boot_id = NULL;

	if (json_unpack((json_t *)root, "{s:I, s:I, s?o, s?I, s?I, s?s}",
	    "version", &version, "incarnation", &inc, "services", &services,
	    "saved_at", &saved_at, "uptime_ms", &uptime, "boot_id",
	    &boot_id) != 0) {
		*why = "missing version or incarnation";
		return -1;
	}
	*r = state_gap(saved_at, uptime, boot_id, c);
	if (version != STATE_VERSION) {
		*why = "unknown version";
		return -1;
	}
	if (inc < 0) {
		*why = "negative incarnation";
		return -1;
	}
	*incarnation = (uint64_t)inc;
	/* The default service lives at the top, as before services existed. */
	if ((svc = find_service(svcs, n, "")) != NULL &&
	    parse_service(root, svc, c, r, why) == -1)
		return -1;
	if (services == NULL)
		return 0;
	if (!json_is_object(services)) {
		*why = "services is not an object";
		return -1;
	}
	json_object_foreach(services, name, o) {
		if (name[0] == '\0') {
			*why = "a service with an empty name";
			return -1;
		}
		if ((svc = find_service(svcs, n, name)) == NULL) {
			log_notice("state: service %s is no longer configured; "
			    "forgetting what it owed", name);
			continue;
		}
		if (parse_service(o, svc, c, r, why) == -1)
			return -1;
	}
	return 0;
}

/* Leaves every service as if nothing had been loaded. */
static void
reset(struct state_service *svcs, size_t n, int64_t now_ms)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		svcs[i].has_decision = false;
		memset(&svcs[i].decision, 0, sizeof(svcs[i].decision));
		svcs[i].has_held = false;
		memset(&svcs[i].held, 0, sizeof(svcs[i].held));
		lbkeys_reset(svcs[i].keys);
		lbkeys_claim(svcs[i].keys, 0);
		if (svcs[i].tr != NULL)
			transition_reset(svcs[i].tr, now_ms);
		if (svcs[i].history != NULL)
			memset(svcs[i].history, 0, sizeof(*svcs[i].history));
	}
}

/* Moves a bad file aside so that an operator can look at it later. */
static void
move_aside(const char *dir, const char *path, const char *why)
{
	char	aside[PATH_MAX];

	if (state_path(aside, sizeof(aside), dir, ".corrupt") == 0 &&
	    rename(path, aside) == 0)
		log_errx("%s: %s; moved aside to %s, starting fresh", path, why,
		    aside);
	else
		log_errx("%s: %s; could not move it aside (%s), starting fresh",
		    path, why, strerror(errno));
}

enum state_load_result
state_load(const char *dir, uint64_t *incarnation, struct state_service *svcs,
    size_t n, const struct state_clock *c, struct state_resume *r)
{
	char		 path[PATH_MAX], reason[256];
	const char	*why = NULL;
	json_error_t	 jerr;
	json_t		*root;
	struct stat	 sb;
	int		 fd;

	*incarnation = 0;
	r->gap_ms = 0;
	r->same_boot = false;
	if (state_path(path, sizeof(path), dir, "") == -1)
		return STATE_NONE;
	/*
	 * O_NOFOLLOW: a link's target is not ours to read (the parse error
	 * would quote its text in the log); the link goes aside.
	 */
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
	    O_NOFOLLOW)) == -1) {
		if (errno == ENOENT)
			return STATE_NONE;
		if (errno == ELOOP && lstat(path, &sb) == 0 &&
		    S_ISLNK(sb.st_mode))
			snprintf(reason, sizeof(reason), "a symbolic link, not "
			    "read");
		else
			snprintf(reason, sizeof(reason), "cannot open: %s",
			    strerror(errno));
		move_aside(dir, path, reason);
		return STATE_CORRUPT;
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
	    sb.st_size > STATE_MAX_BYTES) {
		close(fd);
		move_aside(dir, path, "not a regular file of sane size");
		return STATE_CORRUPT;
	}
	root = json_loadfd(fd, JSON_REJECT_DUPLICATES, &jerr);
	close(fd);
	if (root == NULL) {
		snprintf(reason, sizeof(reason), "not valid JSON (line %d: %s)",
		    jerr.line, jerr.text);
		move_aside(dir, path, reason);
		return STATE_CORRUPT;
	}
	if (parse(root, incarnation, svcs, n, c, r, &why) == -1) {
		json_decref(root);
		*incarnation = 0;
		r->gap_ms = 0;
		r->same_boot = false;
		reset(svcs, n, c->now_ms);
		move_aside(dir, path, why);
		return STATE_CORRUPT;
	}
	json_decref(root);
	return STATE_LOADED;
}

/* What HAProxy holds, with since as wall time; json null without it. */
static json_t *
held_to_json(const struct state_service *svc, int64_t now_ms, int64_t wall_ms)
{
	json_t	*held;

	if (!svc->has_held)
		return json_null();
	if ((held = decision_to_json(&svc->held)) != NULL &&
	    json_object_set_new(held, "since", json_integer(wall_ms -
	    (now_ms - svc->held_since_ms))) == -1) {
		json_decref(held);
		return NULL;
	}
	return held;
}

/*
 * Adds a service's decision, what HAProxy holds, load balancers,
 * transitions and history to o. A value set is o's even when setting it
 * fails (jansson's _new), so nothing is left to free on the way out.
 */
static int
service_to_json(json_t *o, const struct state_service *svc, int64_t now_ms,
    int64_t wall_ms)
{
	if (svc->tr != NULL && json_object_set_new(o, "transition",
	    transition_to_json(svc->tr, now_ms)) == -1)
		return -1;
	if (svc->history != NULL && json_object_set_new(o, "history",
	    history_to_json(svc->history)) == -1)
		return -1;
	if (json_object_set_new(o, "claims",
	    lbkeys_bits_to_json(lbkeys_claims(svc->keys))) == -1 ||
	    json_object_set_new(o, "decision", svc->has_decision ?
	    decision_to_json(&svc->decision) : json_null()) == -1 ||
	    json_object_set_new(o, "since", svc->has_decision &&
	    svc->since_wall_ms > 0 ? json_integer(svc->since_wall_ms) :
	    json_null()) == -1 ||
	    json_object_set_new(o, "held", held_to_json(svc, now_ms,
	    wall_ms)) == -1 ||
	    json_object_set_new(o, "load_balancers",
	    lbkeys_to_json(svc->keys, now_ms, wall_ms)) == -1)
		return -1;
	return 0;
}

static json_t *
state_to_json(uint64_t incarnation, const struct state_service *svcs,
    size_t n, const struct state_clock *c)
{
	json_t	*root, *services = NULL, *o;
	int64_t	 now_ms = c->now_ms, wall_ms = c->wall_ms;
	size_t	 i;

	root = json_pack("{s:i, s:I, s:I, s:I, s:s}", "version", STATE_VERSION,
	    "incarnation", (json_int_t)incarnation, "saved_at",
	    (json_int_t)wall_ms, "uptime_ms", (json_int_t)c->boot_ms, "boot_id",
	    c->boot_id);
	if (root == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (svcs[i].name[0] == '\0') {
			if (service_to_json(root, &svcs[i], now_ms, wall_ms) == -1)
				goto fail;
			continue;
		}
		if (services == NULL && (services = json_object()) == NULL)
			goto fail;
		if ((o = json_object()) == NULL ||
		    json_object_set_new(services, svcs[i].name, o) == -1 ||
		    service_to_json(o, &svcs[i], now_ms, wall_ms) == -1)
			goto fail;
	}
	if (services != NULL &&
	    json_object_set_new(root, "services", services) == -1) {
		services = NULL;
		goto fail;
	}
	return root;
fail:
	json_decref(services);
	json_decref(root);
	return NULL;
}

int
state_save(const char *dir, uint64_t incarnation,
    const struct state_service *svcs, size_t n, const struct state_clock *c)
{
	struct atomic_file_error	 e;
	char				 path[PATH_MAX], tmp[PATH_MAX], *text;
	json_t				*root;
	int				 rc;

	if (state_path(path, sizeof(path), dir, "") == -1 ||
	    state_path(tmp, sizeof(tmp), dir, ".tmp") == -1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	root = state_to_json(incarnation, svcs, n, c);
	if (root == NULL || (text = json_dumps(root, JSON_INDENT(1))) == NULL) {
		json_decref(root);
		errno = ENOMEM;
		return -1;
	}
	json_decref(root);
	/*
	 * state.json.tmp is lbagent's own name (no service may take it); one
	 * that comes back while being written fails the save (O_EXCL), which
	 * is retried. Once renamed the file is saved, synced directory or not.
	 */
	rc = atomic_file_write(dir, path, tmp, 0, text, 0644, &e);
	if (rc == -1 && (e.step == ATOMIC_FILE_DIR_OPEN ||
	    e.step == ATOMIC_FILE_DIR_SYNC))
		rc = 0;
	free(text);
	if (rc == -1)
		errno = e.error;
	return rc;
}
