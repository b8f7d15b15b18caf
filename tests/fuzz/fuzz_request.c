/*
 * Fuzz target: what the agent port does with a check's request text
 * (src/core/lbkeys.c, as src/daemon/listener.c and src/daemon/agent.c drive it). The input
 * is a script of checks from fuzzed addresses with fuzzed text (up to
 * LISTENER_REQUEST_MAX bytes, cut at the first line as the listener
 * does), late text after an early reply, claims that start and end,
 * expiry, and a save/load of the keys (lbkeys_to_json, lbkeys_from_json)
 * that must give back the same document; and which service the text
 * picks (agent_select, on fuzzagent.c's agent: services web and api).
 * The clock is the script's, so runs are deterministic.
 *
 * Each step: op byte, then its operands, read while bytes last.
 */
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/lbkeys.h"
#include "lbagent/daemon/agent.h"
#include "lbagent/daemon/listener.h"
#include "fuzzagent.h"
#include "fuzzutil.h"

struct script {
	const uint8_t	*p, *end;
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_init();
	(void)fz_agent();
	return 0;
}

static unsigned
byte(struct script *s)
{
	return s->p < s->end ? *s->p++ : 0;
}

/*
 * An address as inet_ntop writes one: a few known ones, or any text of
 * the bytes such addresses hold, never empty (src/daemon/listener.c's
 * format_addr).
 */
static void
addr(struct script *s, char buf[LBKEY_ADDR_MAX])
{
	static const char	*known[] = { "127.0.0.1", "10.0.0.2", "::1",
				    "unknown" };
	unsigned		 b = byte(s), n, i;

	if (b < 192) {
		snprintf(buf, LBKEY_ADDR_MAX, "%s", known[b % 4]);
		return;
	}
	/* Never empty: the listener writes "unknown" then. */
	n = 1 + (b - 192) % (LBKEY_ADDR_MAX - 1);
	for (i = 0; i < n; i++)
		buf[i] = "0123456789abcdef.:"[byte(s) % 18];
	buf[i] = '\0';
}

/*
 * The request's first line, as the listener takes it: a length byte (255:
 * as much as the listener reads), then the bytes.
 */
static size_t
text(struct script *s, char buf[LISTENER_REQUEST_MAX])
{
	size_t		 n = byte(s), avail;
	const char	*nl;

	if (n == 255)
		n = LISTENER_REQUEST_MAX;
	avail = (size_t)(s->end - s->p);
	if (n > avail)
		n = avail;
	memcpy(buf, s->p, n);
	s->p += n;
	if ((nl = memchr(buf, '\n', n)) != NULL)
		n = (size_t)(nl - buf);
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	return n;
}

/* Keys loaded from j, checked against what was saved; the caller frees. */
static struct lbkeys *
load(const struct lbkeys *k, const json_t *j, int64_t now_ms, int64_t wall_ms)
{
	struct lbkeys	*back = lbkeys_new(60000);
	const char	*why = NULL;

	FZ_ASSERT(back != NULL);
	lbkeys_claim(back, lbkeys_claims(k));
	if (lbkeys_from_json(back, j, now_ms, wall_ms, &why) != 0) {
		char	*dump = json_dumps(j, JSON_COMPACT);

		fz_note(why, strlen(why));
		fz_note(dump, strlen(dump));
		free(dump);
		FZ_ASSERT(!"saved keys load back");
	}
	FZ_ASSERT(lbkeys_count(back) == lbkeys_count(k));
	FZ_ASSERT(lbkeys_owed(back) == lbkeys_owed(k));
	return back;
}

/*
 * Saved and loaded, the keys count as seen now; saved and loaded once
 * more, nothing changes.
 */
static void
round_trip(const struct lbkeys *k, int64_t now_ms, int64_t wall_ms)
{
	struct lbkeys	*back, *again;
	json_t		*j, *j2, *j3;
	char		*s2, *s3;

	FZ_ASSERT((j = lbkeys_to_json(k, now_ms, wall_ms)) != NULL);
	back = load(k, j, now_ms, wall_ms);
	FZ_ASSERT((j2 = lbkeys_to_json(back, now_ms, wall_ms)) != NULL);
	again = load(back, j2, now_ms, wall_ms);
	FZ_ASSERT((j3 = lbkeys_to_json(again, now_ms, wall_ms)) != NULL);
	s2 = json_dumps(j2, JSON_SORT_KEYS | JSON_COMPACT);
	s3 = json_dumps(j3, JSON_SORT_KEYS | JSON_COMPACT);
	FZ_ASSERT(s2 != NULL && s3 != NULL);
	if (strcmp(s2, s3) != 0) {
		fz_note(s2, strlen(s2));
		fz_note(s3, strlen(s3));
		FZ_ASSERT(!"keys save back the same");
	}
	free(s2);
	free(s3);
	json_decref(j);
	json_decref(j2);
	json_decref(j3);
	lbkeys_free(back);
	lbkeys_free(again);
}

/*
 * On the shared port (-1) or a service's own (0-2, 3 one older than a
 * reload): a service that is there, the one named if any.
 */
static void
select_service(struct script *s)
{
	const struct agent	*a = fz_agent()->agent;
	char			 t[LISTENER_REQUEST_MAX + 1];
	int			 port = (int)(byte(s) % 5) - 1, i;
	size_t			 n = text(s, t);

	i = agent_select(a, port, t, n);
	FZ_ASSERT(i >= 0 && (size_t)i < agent_nservices(a));
	(void)agent_wants_name(a, port);
	t[n] = '\0';
	if (port == AGENT_SHARED_PORT && strlen(t) == n && n > 0 &&
	    agent_find_service(a, t) > 0)
		FZ_ASSERT(i == agent_find_service(a, t));
	else if (port == AGENT_SHARED_PORT)
		FZ_ASSERT(i == 0);
}

/* A line for the log: a known level, a NUL-terminated text. */
static void
note_ok(const struct lbkeys_note *n)
{
	FZ_ASSERT(n->level == LBKEYS_INFO || n->level == LBKEYS_NOTICE ||
	    n->level == LBKEYS_WARNING);
	FZ_ASSERT(memchr(n->text, '\0', sizeof(n->text)) != NULL);
	FZ_ASSERT(n->text[0] != '\0');
}

static void
notes_ok(const struct lbkeys_notes *ns)
{
	size_t	i;

	FZ_ASSERT(ns->count <= LBKEYS_NOTES_MAX);
	for (i = 0; i < ns->count; i++)
		note_ok(&ns->n[i]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct script		 s = { data, data + size };
	struct lbkeys		*k = lbkeys_new(60000);
	struct lbkeys_notes	 notes;
	struct lbkeys_note	 gone;
	char			 a[LBKEY_ADDR_MAX], t[LISTENER_REQUEST_MAX];
	char			 line[REPLY_MAX];
	int64_t			 now_ms = 1000, wall_ms = 1700000000000;
	unsigned		 restore, carried;
	size_t			 n, i;
	bool			 created, changed;

	FZ_ASSERT(k != NULL);
	while (s.p < s.end) {
		switch (byte(&s) % 9) {
		case 0:		/* a check with its text */
			addr(&s, a);
			n = text(&s, t);
			restore = lbkeys_check(k, a, t, n, now_ms, &created,
			    &changed, &notes);
			notes_ok(&notes);
			FZ_ASSERT((restore & ~CLAIM_ALL) == 0);
			snprintf(line, sizeof(line), "up %.*s\n", (int)(n % 40),
			    t);
			lbkeys_note_reply(k, line, strlen(line));
			break;
		case 1:		/* an early reply, then the text comes late */
			addr(&s, a);
			carried = lbkeys_claims(k);
			(void)lbkeys_check(k, a, "", 0, now_ms, &created,
			    &changed, &notes);
			notes_ok(&notes);
			n = text(&s, t);
			now_ms += byte(&s);
			(void)lbkeys_late_text(k, a, t, n, carried, created,
			    now_ms, &notes);
			notes_ok(&notes);
			break;
		case 2:
			(void)lbkeys_claim(k, byte(&s) & CLAIM_ALL);
			break;
		case 3:
			now_ms += (int64_t)byte(&s) * 1000;
			while (lbkeys_expire(k, now_ms, &gone))
				note_ok(&gone);
			break;
		case 4:
			now_ms += (int64_t)byte(&s) * 100;
			wall_ms += (int64_t)byte(&s) * 100;
			break;
		case 5:
			round_trip(k, now_ms, wall_ms);
			break;
		case 6:
			addr(&s, a);
			(void)lbkeys_addr_sends_text(k, a);
			break;
		case 7:
			now_ms += byte(&s);
			break;
		case 8:		/* the service a check is for */
			select_service(&s);
			break;
		}
		FZ_ASSERT(lbkeys_count(k) <= LBKEYS_MAX);
		FZ_ASSERT(lbkeys_owing(k) <= lbkeys_count(k));
		for (i = 0; i < lbkeys_count(k); i++) {
			const struct lbkey *key = lbkeys_get(k, i);

			FZ_ASSERT(key->textlen <= LBKEY_TEXT_MAX);
			FZ_ASSERT(lbkeys_window_ms(key) >= 0);
		}
	}
	round_trip(k, now_ms, wall_ms);
	lbkeys_free(k);
	return 0;
}
