/*
 * Load-balancer keys in the state file: the keys and what each saw and is
 * owed, times out as wall-clock milliseconds and back as ages, and the
 * claims a file showed inherited by keys new since the load (lbkeys.h).
 * Pure.
 */
#include <string.h>

#include "lbagent/core/text.h"
#include "lbkeys_impl.h"

static const char *const claim_names[CLAIM_COUNT] = { "admin", "weight" };

json_t *
lbkeys_bits_to_json(unsigned bits)
{
	json_t		*a = json_array();
	unsigned	 b;

	for (b = 0; a != NULL && b < CLAIM_COUNT; b++)
		if (bits & (1u << b))
			json_array_append_new(a, json_string(claim_names[b]));
	return a;
}

json_t *
lbkeys_to_json(const struct lbkeys *lbk, int64_t now_ms, int64_t wall_ms)
{
	char		 text[4 * LBKEY_TEXT_MAX + 1];
	json_t		*arr, *o, *gaps, *owed;
	size_t		 i;
	unsigned	 b, g;

	if ((arr = json_array()) == NULL)
		return NULL;
	for (i = 0; i < lbk->count; i++) {
		const struct lbkey *k = &lbk->keys[i];

		text_escape(text, k->text, k->textlen);
		gaps = json_array();
		for (g = 0; g < k->ngaps; g++)
			json_array_append_new(gaps, json_integer(k->gaps_ms[g]));
		owed = json_array();
		for (b = 0; b < CLAIM_COUNT; b++) {
			if (!(k->owes & (1u << b)))
				continue;
			json_array_append_new(owed, json_pack("{s:s, s:o, s:i}",
			    "claim", claim_names[b],
			    "started", k->restore_started[b] ?
			    json_integer(wall_ms - (now_ms -
			    k->restore_since_ms[b])) : json_null(),
			    "sent", (int)k->restore_sent[b]));
		}
		o = json_pack("{s:s, s:s, s:I, s:I, s:o, s:o, s:o}",
		    "addr", k->addr, "send", text,
		    "last_seen", (json_int_t)(wall_ms - (now_ms - k->last_seen_ms)),
		    "checks", (json_int_t)k->checks,
		    "gaps_ms", gaps, "saw", lbkeys_bits_to_json(k->saw), "owes", owed);
		if (o == NULL || json_array_append_new(arr, o) == -1) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static int
claim_from_name(const char *name)
{
	int	b;

	for (b = 0; b < CLAIM_COUNT; b++)
		if (strcmp(name, claim_names[b]) == 0)
			return b;
	return -1;
}

int
lbkeys_bits_from_json(const json_t *a, unsigned *bits)
{
	size_t	 i;
	json_t	*v;
	int	 b;

	*bits = 0;
	if (!json_is_array(a))
		return -1;
	json_array_foreach(a, i, v) {
		if (!json_is_string(v) ||
		    (b = claim_from_name(json_string_value(v))) == -1)
			return -1;
		*bits |= 1u << b;
	}
	return 0;
}

/* One key from the state file; -1 on anything unexpected. */
static int
key_from_json(struct lbkeys *lbk, const json_t *o, int64_t now_ms,
    int64_t wall_ms)
{
	const char	*addr, *send;
	char		 text[LBKEY_TEXT_MAX];
	json_t		*gaps, *saw, *owes, *v, *started;
	json_int_t	 checks, last_seen, sent;
	struct lbkey	*k;
	long		 len;
	size_t		 i;
	int		 b;

	if (json_unpack((json_t *)o, "{s:s, s:s, s:I, s:I, s:o, s:o, s:o}",
	    "addr", &addr, "send", &send, "last_seen", &last_seen,
	    "checks", &checks, "gaps_ms", &gaps, "saw", &saw, "owes", &owes) != 0)
		return -1;
	(void)last_seen;
	if (strlen(addr) == 0 || strlen(addr) >= LBKEY_ADDR_MAX || checks < 0 ||
	    (len = text_unescape(text, sizeof(text), send)) < 0 ||
	    !json_is_array(gaps) || json_array_size(gaps) > LBKEY_GAPS ||
	    !json_is_array(owes) ||
	    lbkeys_find(lbk, addr, text, (size_t)len) != NULL)
		return -1;
	if (lbk->count == LBKEYS_MAX ||
	    (k = lbkeys_append(lbk, addr, text, (size_t)len, now_ms)) == NULL)
		return -1;
	k->checks = (uint64_t)checks;
	json_array_foreach(gaps, i, v) {
		if (!json_is_integer(v) || json_integer_value(v) <= 0 ||
		    json_integer_value(v) >= lbk->forget_after_ms)
			goto bad;
		k->gaps_ms[k->ngaps++] = json_integer_value(v);
	}
	k->gap_next = k->ngaps % LBKEY_GAPS;
	if (lbkeys_bits_from_json(saw, &k->saw) == -1)
		goto bad;
	json_array_foreach(owes, i, v) {
		const char *claim;

		if (json_unpack(v, "{s:s, s:o, s:I}", "claim", &claim,
		    "started", &started, "sent", &sent) != 0 ||
		    (b = claim_from_name(claim)) == -1 || sent < 0 ||
		    (k->owes & (1u << b)) ||
		    !(json_is_null(started) || json_is_integer(started)))
			goto bad;
		k->owes |= 1u << b;
		k->restore_sent[b] = (unsigned)(sent > 1000000 ? 1000000 : sent);
		if (json_is_integer(started)) {
			json_int_t age = wall_ms - json_integer_value(started);

			/* A clock that went backwards gives age 0, not < 0. */
			k->restore_started[b] = true;
			k->restore_since_ms[b] = now_ms - (age > 0 ? age : 0);
		}
	}
	if (k->saw & k->owes)
		goto bad;
	/*
	 * The file shows a claim: this key may have seen it in the last
	 * moments before lbagent died, its "saw" not yet saved. Err towards
	 * one restore word too many (lbkeys_check's inherit for keys that
	 * were not saved at all).
	 */
	k->saw |= lbk->claims & ~k->owes;
	return 0;
bad:
	lbkeys_remove_at(lbk, lbk->count - 1);
	return -1;
}

int
lbkeys_from_json(struct lbkeys *lbk, const json_t *arr, int64_t now_ms,
    int64_t wall_ms, const char **why)
{
	size_t	 i;
	json_t	*o;

	if (!json_is_array(arr)) {
		*why = "load_balancers is not an array";
		return -1;
	}
	json_array_foreach(arr, i, o) {
		if (key_from_json(lbk, o, now_ms, wall_ms) == -1) {
			*why = "a load-balancer entry is malformed";
			lbk->count = 0;
			return -1;
		}
	}
	/* New keys get the file's claims for one restore window (inherit). */
	lbk->inherit = lbk->claims;
	lbk->inherit_until_ms = now_ms + LBKEY_DEFAULT_GAP_MS * 2;
	for (i = 0; i < lbk->count; i++)
		if (now_ms + lbkeys_window_ms(&lbk->keys[i]) > lbk->inherit_until_ms)
			lbk->inherit_until_ms = now_ms +
			    lbkeys_window_ms(&lbk->keys[i]);
	return 0;
}
