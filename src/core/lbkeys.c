/*
 * Load-balancer keys and the restore words owed to them: the bounded
 * table, the claims seen and released, the words each check carries, the
 * notes about them. Their form in the state file is lbkeys_json.c's.
 * Pure.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/text.h"
#include "lbkeys_impl.h"


struct lbkeys *
lbkeys_new(int64_t forget_after_ms)
{
	struct lbkeys	*lbk;

	if ((lbk = calloc(1, sizeof(*lbk))) == NULL)
		return NULL;
	lbk->forget_after_ms = forget_after_ms;
	lbk->crowded_warned_ms = INT64_MIN;
	lbk->unknown_since_ms = INT64_MIN;
	return lbk;
}

void
lbkeys_free(struct lbkeys *lbk)
{
	if (lbk == NULL)
		return;
	free(lbk->keys);
	free(lbk);
}

void
lbkeys_reset(struct lbkeys *lbk)
{
	lbk->count = 0;
	lbk->last = NULL;
}

static void	vnote(struct lbkeys_note *, enum lbkeys_level, const char *,
		    va_list) __attribute__((format(printf, 3, 0)));
static void	note(struct lbkeys_notes *, enum lbkeys_level, const char *,
		    ...) __attribute__((format(printf, 3, 4)));
static void	note1(struct lbkeys_note *, enum lbkeys_level, const char *,
		    ...) __attribute__((format(printf, 3, 4)));

static void
vnote(struct lbkeys_note *n, enum lbkeys_level level, const char *fmt,
    va_list ap)
{
	n->level = level;
	vsnprintf(n->text, sizeof(n->text), fmt, ap);
}

/* One more line for the caller's log; none when notes is NULL or full. */
static void
note(struct lbkeys_notes *notes, enum lbkeys_level level, const char *fmt,
    ...)
{
	va_list	ap;

	if (notes == NULL || notes->count == LBKEYS_NOTES_MAX)
		return;
	va_start(ap, fmt);
	vnote(&notes->n[notes->count++], level, fmt, ap);
	va_end(ap);
}

/* The one line of a call that has one; none when n is NULL. */
static void
note1(struct lbkeys_note *n, enum lbkeys_level level, const char *fmt, ...)
{
	va_list	ap;

	if (n == NULL)
		return;
	va_start(ap, fmt);
	vnote(n, level, fmt, ap);
	va_end(ap);
}

/* "127.0.0.2 \"web\"" for logs. */
static const char *
key_label(const struct lbkey *k, char buf[LBKEY_ADDR_MAX + 4 * LBKEY_TEXT_MAX + 4])
{
	size_t	n = strlen(k->addr);

	memcpy(buf, k->addr, n);
	buf[n++] = ' ';
	buf[n++] = '"';
	n += text_escape(buf + n, k->text, k->textlen);
	buf[n++] = '"';
	buf[n] = '\0';
	return buf;
}

struct lbkey *
lbkeys_find(const struct lbkeys *lbk, const char *addr, const char *text,
    size_t len)
{
	size_t	i;

	for (i = 0; i < lbk->count; i++) {
		struct lbkey *k = &lbk->keys[i];

		if (k->textlen == len && strcmp(k->addr, addr) == 0 &&
		    memcmp(k->text, text, len) == 0)
			return k;
	}
	return NULL;
}

void
lbkeys_remove_at(struct lbkeys *lbk, size_t i)
{
	lbk->last = NULL;
	lbk->keys[i] = lbk->keys[--lbk->count];
}

/*
 * A key that saw a claim, or is owed a restore word, is what ownership rests
 * on: it is never dropped to make room for a newcomer.
 */
static bool
protected_key(const struct lbkey *k)
{
	return k->saw != 0 || k->owes != 0;
}

/* The keys of addr, and the one of them seen longest ago that may go. */
static size_t
addr_keys(const struct lbkeys *lbk, const char *addr, ssize_t *oldest)
{
	size_t	i, n = 0;

	*oldest = -1;
	for (i = 0; i < lbk->count; i++) {
		const struct lbkey *k = &lbk->keys[i];

		if (strcmp(k->addr, addr) != 0)
			continue;
		n++;
		if (!protected_key(k) && (*oldest == -1 ||
		    k->last_seen_ms < lbk->keys[*oldest].last_seen_ms))
			*oldest = (ssize_t)i;
	}
	return n;
}

/* Of all keys, the one seen longest ago that may go; -1: none may. */
static ssize_t
oldest_unprotected(const struct lbkeys *lbk)
{
	ssize_t	oldest = -1;
	size_t	i;

	for (i = 0; i < lbk->count; i++)
		if (!protected_key(&lbk->keys[i]) && (oldest == -1 ||
		    lbk->keys[i].last_seen_ms < lbk->keys[oldest].last_seen_ms))
			oldest = (ssize_t)i;
	return oldest;
}

/* At most one warning per LBKEYS_WARN_EVERY_MS about newcomers crowding. */
static void
note_crowded(struct lbkeys *lbk, const char *addr, const char *what,
    int64_t now_ms, struct lbkeys_notes *notes)
{
	lbk->crowded++;
	if (lbk->crowded_warned_ms != INT64_MIN &&
	    now_ms - lbk->crowded_warned_ms < LBKEYS_WARN_EVERY_MS)
		return;
	note(notes, LBKEYS_WARNING, "load-balancer keys: %s (latest from %s; "
	    "%u such in the last %d s); keys that saw a claim or are owed a "
	    "restore word are kept", what, addr, lbk->crowded,
	    LBKEYS_WARN_EVERY_MS / 1000);
	lbk->crowded = 0;
	lbk->crowded_warned_ms = now_ms;
}

/*
 * Makes room for a new key from addr: at most LBKEYS_PER_ADDR per address
 * and LBKEYS_MAX in all, dropping the unprotected key seen longest ago (of
 * addr, when addr has its share already). False when there is no room:
 * every key that could go is protected.
 */
static bool
make_room(struct lbkeys *lbk, const char *addr, int64_t now_ms,
    struct lbkeys_notes *notes)
{
	ssize_t	victim;

	if (addr_keys(lbk, addr, &victim) < LBKEYS_PER_ADDR) {
		if (lbk->count < LBKEYS_MAX)
			return true;
		if ((victim = oldest_unprotected(lbk)) == -1) {
			note_crowded(lbk, addr, "every key matters: a new key "
			    "is not remembered", now_ms, notes);
			return false;
		}
		note_crowded(lbk, addr, "full: forgetting the key seen "
		    "longest ago", now_ms, notes);
	} else if (victim == -1) {
		note_crowded(lbk, addr, "every key of one address matters: a "
		    "new key from it is not remembered", now_ms, notes);
		return false;
	} else
		note_crowded(lbk, addr, "an address has its share: forgetting "
		    "its key seen longest ago", now_ms, notes);
	lbkeys_remove_at(lbk, (size_t)victim);
	return true;
}

struct lbkey *
lbkeys_append(struct lbkeys *lbk, const char *addr, const char *text,
    size_t len, int64_t now_ms)
{
	struct lbkey	*k;
	size_t		 cap;

	if (lbk->count == lbk->cap) {
		cap = lbk->cap ? lbk->cap * 2 : 8;
		if ((k = realloc(lbk->keys, cap * sizeof(*k))) == NULL)
			return NULL;
		lbk->keys = k;
		lbk->last = NULL;
		lbk->cap = cap;
	}
	k = &lbk->keys[lbk->count++];
	memset(k, 0, sizeof(*k));
	snprintf(k->addr, sizeof(k->addr), "%s", addr);
	if (len > LBKEY_TEXT_MAX)
		len = LBKEY_TEXT_MAX;
	memcpy(k->text, text, len);
	k->textlen = len;
	k->last_seen_ms = now_ms;
	return k;
}

/* A key for a newcomer, if there is room for it (make_room). */
static struct lbkey *
add(struct lbkeys *lbk, const char *addr, const char *text, size_t len,
    int64_t now_ms, struct lbkeys_notes *notes)
{
	if (!make_room(lbk, addr, now_ms, notes))
		return NULL;
	return lbkeys_append(lbk, addr, text, len, now_ms);
}

int64_t
lbkeys_window_ms(const struct lbkey *k)
{
	int64_t		longest = 0;
	unsigned	i;

	for (i = 0; i < k->ngaps; i++)
		if (k->gaps_ms[i] > longest)
			longest = k->gaps_ms[i];
	return 2 * (longest > 0 ? longest : LBKEY_DEFAULT_GAP_MS);
}

bool
lbkeys_claim(struct lbkeys *lbk, unsigned claims)
{
	unsigned	released = lbk->claims & ~claims;
	unsigned	renewed = claims & ~lbk->claims;
	bool		changed = lbk->claims != claims;
	unsigned	b;
	size_t		i;

	for (i = 0; i < lbk->count; i++) {
		struct lbkey *k = &lbk->keys[i];

		for (b = 0; b < CLAIM_COUNT; b++) {
			unsigned bit = 1u << b;

			if ((released & bit) && (k->saw & bit)) {
				k->saw &= ~bit;
				k->owes |= bit;
				k->restore_started[b] = false;
				k->restore_sent[b] = 0;
				changed = true;
			}
			/*
			 * Claimed again before the debt was settled: whether
			 * or not the restore word got through, the key may
			 * hold the claim, so it is owed again at the next
			 * release. Erring this way never strands a server.
			 */
			if ((renewed & bit) && (k->owes & bit)) {
				k->owes &= ~bit;
				k->saw |= bit;
				changed = true;
			}
		}
	}
	lbk->claims = claims;
	return changed;
}

unsigned
lbkeys_claims(const struct lbkeys *lbk)
{
	return lbk->claims;
}

/* Whether key k's restore word b has been sent for its whole window. */
static bool
restore_done(const struct lbkey *k, unsigned b, int64_t now_ms)
{
	return k->restore_started[b] &&
	    now_ms - k->restore_since_ms[b] >= lbkeys_window_ms(k);
}

unsigned
lbkeys_next_restore(const struct lbkey *k, int64_t now_ms)
{
	unsigned	b, restore = 0;

	for (b = 0; b < CLAIM_COUNT; b++)
		if ((k->owes & (1u << b)) && !restore_done(k, b, now_ms))
			restore |= 1u << b;
	return restore;
}

/* The restore words this check carries; settles debts whose window ended. */
static unsigned
collect_restore(struct lbkey *k, int64_t now_ms, bool *changed,
    struct lbkeys_notes *notes)
{
	char		label[LBKEY_ADDR_MAX + 4 * LBKEY_TEXT_MAX + 4];
	unsigned	restore = 0, b;

	for (b = 0; b < CLAIM_COUNT; b++) {
		unsigned bit = 1u << b;

		if (!(k->owes & bit))
			continue;
		if (restore_done(k, b, now_ms)) {
			k->owes &= ~bit;
			*changed = true;
			note(notes, LBKEYS_INFO, "%s: restore word '%s' "
			    "delivered %u times in %lld ms; done",
			    key_label(k, label),
			    reply_restore_word(bit), k->restore_sent[b],
			    (long long)(now_ms - k->restore_since_ms[b]));
			continue;
		}
		if (!k->restore_started[b]) {
			k->restore_started[b] = true;
			k->restore_since_ms[b] = now_ms;
			*changed = true;
			note(notes, LBKEYS_NOTICE, "%s: sending '%s' for "
			    "%lld ms", key_label(k, label),
			    reply_restore_word(bit),
			    (long long)lbkeys_window_ms(k));
		}
		k->restore_sent[b]++;
		restore |= bit;
	}
	return restore;
}

/*
 * A key new since the state file was loaded, while the file's claims may
 * still be unsettled: it may be a load balancer that saw them in the last
 * moments before lbagent died, before its "saw" was saved. A claim
 * released since is owed to it: one 'ready' too many, to a load balancer
 * that asked just now, is the price of never stranding a server in DRAIN.
 */
static void
inherit(struct lbkeys *lbk, struct lbkey *k, int64_t now_ms)
{
	if (lbk->inherit == 0)
		return;
	if (now_ms >= lbk->inherit_until_ms) {
		lbk->inherit = 0;
		return;
	}
	k->owes |= lbk->inherit & ~lbk->claims;
}

static void
note_gap(struct lbkeys *lbk, struct lbkey *k, int64_t now_ms)
{
	int64_t	gap = now_ms - k->last_seen_ms;

	/* A gap as long as the forget time is a pause, not a check interval. */
	if (gap <= 0 || gap >= lbk->forget_after_ms)
		return;
	k->gaps_ms[k->gap_next] = gap;
	k->gap_next = (k->gap_next + 1) % LBKEY_GAPS;
	if (k->ngaps < LBKEY_GAPS)
		k->ngaps++;
}

unsigned
lbkeys_check(struct lbkeys *lbk, const char *addr, const char *text,
    size_t len, int64_t now_ms, bool *created, bool *changed,
    struct lbkeys_notes *notes)
{
	struct lbkey	*k;
	unsigned	 restore;

	*created = false;
	*changed = false;
	if (notes != NULL)
		notes->count = 0;
	if (len > LBKEY_TEXT_MAX)
		len = LBKEY_TEXT_MAX;
	if ((k = lbkeys_find(lbk, addr, text, len)) == NULL) {
		if ((k = add(lbk, addr, text, len, now_ms, notes)) == NULL) {
			lbk->last = NULL;
			return 0;
		}
		*created = true;
		*changed = true;
		inherit(lbk, k, now_ms);
	} else
		note_gap(lbk, k, now_ms);
	k->last_seen_ms = now_ms;
	k->checks++;
	lbk->last = k;
	restore = collect_restore(k, now_ms, changed, notes);
	if (lbk->claims & ~k->saw) {
		k->saw |= lbk->claims;
		*changed = true;
	}
	return restore;
}

bool
lbkeys_late_text(struct lbkeys *lbk, const char *addr, const char *text,
    size_t len, unsigned carried, bool provisional_created, int64_t now_ms,
    struct lbkeys_notes *notes)
{
	struct lbkey	*k;
	bool		 changed = false;

	if (notes != NULL)
		notes->count = 0;
	if (len > LBKEY_TEXT_MAX)
		len = LBKEY_TEXT_MAX;
	if (provisional_created &&
	    (k = lbkeys_find(lbk, addr, "", 0)) != NULL &&
	    k->checks == 1 && k->owes == 0) {
		lbkeys_remove_at(lbk, (size_t)(k - lbk->keys));
		changed = true;
	}
	if ((k = lbkeys_find(lbk, addr, text, len)) == NULL) {
		if ((k = add(lbk, addr, text, len, now_ms, notes)) == NULL) {
			lbk->last = NULL;
			return changed;
		}
		k->checks = 1;
		changed = true;
	}
	lbk->last = k;
	carried &= lbk->claims;
	if (carried & ~k->saw) {
		k->saw |= carried;
		changed = true;
	}
	return changed;
}

bool
lbkeys_unknown_service(struct lbkeys *lbk, int64_t now_ms,
    struct lbkeys_note *n)
{
	char		 label[LBKEY_ADDR_MAX + 4 * LBKEY_TEXT_MAX + 4];
	char		 text[4 * LBKEY_TEXT_MAX + 1];
	struct lbkey	*k = lbk->last;

	lbk->unknown_checks++;
	if (k == NULL || k->unknown_warned)
		return false;
	if (lbk->unknown_since_ms == INT64_MIN ||
	    now_ms - lbk->unknown_since_ms >= LBKEYS_WARN_EVERY_MS) {
		lbk->unknown_since_ms = now_ms;
		lbk->unknown_warns = 0;
	}
	if (lbk->unknown_warns == LBKEYS_UNKNOWN_WARNS)
		return false;
	lbk->unknown_warns++;
	k->unknown_warned = true;
	text_escape(text, k->text, k->textlen);
	note1(n, LBKEYS_WARNING, "%s: asks for service '%s', which does not "
	    "exist; answered as the default", key_label(k, label), text);
	return true;
}

uint64_t
lbkeys_unknown_checks(const struct lbkeys *lbk)
{
	return lbk->unknown_checks;
}

bool
lbkeys_addr_sends_text(const struct lbkeys *lbk, const char *addr)
{
	size_t	i;

	for (i = 0; i < lbk->count; i++)
		if (lbk->keys[i].textlen > 0 &&
		    strcmp(lbk->keys[i].addr, addr) == 0)
			return true;
	return false;
}

unsigned
lbkeys_addr_texts(const struct lbkeys *lbk, const char *addr)
{
	unsigned	have = 0;
	size_t		i;

	for (i = 0; i < lbk->count; i++)
		if (strcmp(lbk->keys[i].addr, addr) == 0)
			have |= lbk->keys[i].textlen > 0 ? LBKEYS_ADDR_TEXT :
			    LBKEYS_ADDR_NO_TEXT;
	return have;
}

/*
 * The first key in the table not seen for forget_after goes: called
 * until false, keys go in the order one pass over the table would take
 * them (a removal moves the last key into the gap, looked at next).
 */
bool
lbkeys_expire(struct lbkeys *lbk, int64_t now_ms, struct lbkeys_note *gone)
{
	char	label[LBKEY_ADDR_MAX + 4 * LBKEY_TEXT_MAX + 4];
	size_t	i;

	for (i = 0; i < lbk->count; i++) {
		struct lbkey *k = &lbk->keys[i];

		if (now_ms - k->last_seen_ms < lbk->forget_after_ms)
			continue;
		if (k->owes)
			note1(gone, LBKEYS_WARNING, "%s: not seen for %lld s; "
			    "forgetting it with a restore word still owed",
			    key_label(k, label),
			    (long long)((now_ms - k->last_seen_ms) / 1000));
		else
			note1(gone, LBKEYS_INFO, "%s: not seen for %lld s; "
			    "forgotten", key_label(k, label),
			    (long long)((now_ms - k->last_seen_ms) / 1000));
		lbkeys_remove_at(lbk, i);
		return true;
	}
	return false;
}

size_t
lbkeys_count(const struct lbkeys *lbk)
{
	return lbk->count;
}

const struct lbkey *
lbkeys_get(const struct lbkeys *lbk, size_t i)
{
	return i < lbk->count ? &lbk->keys[i] : NULL;
}

size_t
lbkeys_owing(const struct lbkeys *lbk)
{
	size_t	i, n = 0;

	for (i = 0; i < lbk->count; i++)
		if (lbk->keys[i].owes)
			n++;
	return n;
}

void
lbkeys_note_reply(struct lbkeys *lbk, const char *line, size_t len)
{
	if (lbk->last == NULL)
		return;
	if (len >= sizeof(lbk->last->last_reply))
		len = sizeof(lbk->last->last_reply) - 1;
	memcpy(lbk->last->last_reply, line, len);
	lbk->last->last_reply[len] = '\0';
}

unsigned
lbkeys_owed(const struct lbkeys *lbk)
{
	unsigned	bits = 0;
	size_t		i;

	for (i = 0; i < lbk->count; i++)
		bits |= lbk->keys[i].owes;
	return bits;
}
