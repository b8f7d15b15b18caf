/*
 * Load-balancer keys. Every HAProxy instance, and every backend in it that
 * names this node, checks on its own; lbagent tells them apart by source
 * address and request text (agent-send). For each key it remembers which
 * of its claims (reply.h) the key has seen, and after a claim ends, owes
 * that key the restore word for twice the longest gap between its checks,
 * and at least once. Pure logic over a caller-supplied clock (ms).
 *
 * The table is bounded: LBKEYS_PER_ADDR keys per source address and
 * LBKEYS_MAX in all. A newcomer takes the place of the key seen longest
 * ago (of its own address once that address has its share), but never of
 * a key that saw a claim or is owed a restore word: when only such keys
 * are left, the newcomer is answered and not remembered. So a flood of
 * texts, from one address or many, cannot make lbagent forget what it owes
 * a load balancer. Crowding is noted at most every LBKEYS_WARN_EVERY_MS.
 *
 * Nothing here logs: what is worth a log line comes back as notes, which
 * the caller logs as they are.
 */
#ifndef LBAGENT_LBKEYS_H
#define LBAGENT_LBKEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lbagent/core/reply.h"

#define LBKEY_ADDR_MAX		46	/* INET6_ADDRSTRLEN */
#define LBKEY_TEXT_MAX		256
#define LBKEY_GAPS		8	/* the gaps remembered per key */
#define LBKEY_DEFAULT_GAP_MS	2000	/* HAProxy's default agent-inter */
#define LBKEYS_MAX		1024
#define LBKEYS_PER_ADDR		128	/* keys from one source address */
#define LBKEYS_WARN_EVERY_MS	10000	/* about newcomers crowding */
#define LBKEYS_UNKNOWN_WARNS	8	/* per LBKEYS_WARN_EVERY_MS */

struct lbkey {
	char		addr[LBKEY_ADDR_MAX];
	char		text[LBKEY_TEXT_MAX];
	size_t		textlen;
	int64_t		last_seen_ms;
	uint64_t	checks;
	int64_t		gaps_ms[LBKEY_GAPS];
	unsigned	ngaps, gap_next;
	unsigned	saw;		/* CLAIM_* bits seen and not yet released */
	unsigned	owes;		/* CLAIM_* bits whose restore word is owed */
	bool		restore_started[CLAIM_COUNT];
	int64_t		restore_since_ms[CLAIM_COUNT];
	unsigned	restore_sent[CLAIM_COUNT];
	char		last_reply[REPLY_MAX];	/* for status; not persisted */
	bool		unknown_warned;	/* its unknown service logged; not
					   persisted */
};

/* A line for the log, and how loud. */
enum lbkeys_level {
	LBKEYS_INFO,
	LBKEYS_NOTICE,
	LBKEYS_WARNING,
};

#define LBKEYS_NOTE_MAX		1024	/* a log line's length */
#define LBKEYS_NOTES_MAX	(1 + CLAIM_COUNT)	/* of one check */

struct lbkeys_note {
	enum lbkeys_level	level;
	char			text[LBKEYS_NOTE_MAX];
};

/* What one call had to say, in order; a NULL notes drops it. */
struct lbkeys_notes {
	struct lbkeys_note	n[LBKEYS_NOTES_MAX];
	size_t			count;
};

struct lbkeys;

struct lbkeys	*lbkeys_new(int64_t forget_after_ms);
void		 lbkeys_free(struct lbkeys *);
/* Forgets every key (a state file found corrupt half-way). */
void		 lbkeys_reset(struct lbkeys *);

/*
 * Sets what the current decision claims (CLAIM_* bits). A claim that ends
 * makes every key that saw it owe the restore word; a claim that starts
 * again turns an unpaid debt back into "saw". Returns true when anything
 * worth persisting changed.
 */
bool		 lbkeys_claim(struct lbkeys *, unsigned claims);
unsigned	 lbkeys_claims(const struct lbkeys *);

/*
 * One check from (addr, text): returns the restore words (CLAIM_* bits) to
 * add to this reply and records that the key saw the current claims.
 * *created tells whether the key is new; *changed whether to persist;
 * *notes what to log (a restore word started or done, crowding).
 */
unsigned	 lbkeys_check(struct lbkeys *, const char *addr, const char *text,
		    size_t len, int64_t now_ms, bool *created, bool *changed,
		    struct lbkeys_notes *notes);

/*
 * The request text arrived after a reply was sent under (addr, ""): moves
 * what that reply claimed to (addr, text), dropping the provisional key if
 * that check created it.
 */
bool		 lbkeys_late_text(struct lbkeys *, const char *addr,
		    const char *text, size_t len, unsigned carried,
		    bool provisional_created, int64_t now_ms,
		    struct lbkeys_notes *notes);

/* Records the line the latest lbkeys_check's key was sent (for status). */
void		 lbkeys_note_reply(struct lbkeys *, const char *line, size_t len);

/*
 * The latest check's key (lbkeys_check, or lbkeys_late_text for the text
 * that came late) asked for a service that does not exist and was
 * answered as the default: counts the check and, the first time for that
 * key, gives the warning in *n (true). A key past LBKEYS_UNKNOWN_WARNS
 * warnings in LBKEYS_WARN_EVERY_MS is warned about at a later check, and
 * a key the table could not keep at none: a flood of names cannot flood
 * the log.
 */
bool		 lbkeys_unknown_service(struct lbkeys *, int64_t now_ms,
		    struct lbkeys_note *n);
/* The checks lbkeys_unknown_service counted. */
uint64_t	 lbkeys_unknown_checks(const struct lbkeys *);

/* True when any check from addr has sent text: worth waiting for it. */
bool		 lbkeys_addr_sends_text(const struct lbkeys *, const char *addr);
/* The keys addr has: LBKEYS_ADDR_NO_TEXT, LBKEYS_ADDR_TEXT, both or 0. */
#define LBKEYS_ADDR_NO_TEXT	0x1
#define LBKEYS_ADDR_TEXT	0x2
unsigned	 lbkeys_addr_texts(const struct lbkeys *, const char *addr);

/*
 * Forgets a key not seen for forget_after: true, with *gone (which may
 * be NULL) what to log, when there was one. Call until false.
 */
bool		 lbkeys_expire(struct lbkeys *, int64_t now_ms,
		    struct lbkeys_note *gone);

/* The restore window of a key: twice its longest recent gap. */
int64_t		 lbkeys_window_ms(const struct lbkey *);
/*
 * The restore words key k would get at a check at now_ms (what it is
 * owed, less those sent for their whole window), without settling any.
 */
unsigned	 lbkeys_next_restore(const struct lbkey *, int64_t now_ms);

size_t		 lbkeys_count(const struct lbkeys *);
const struct lbkey *lbkeys_get(const struct lbkeys *, size_t i);
size_t		 lbkeys_owing(const struct lbkeys *);
/* The restore words (CLAIM_* bits) any key is owed. */
unsigned	 lbkeys_owed(const struct lbkeys *);

/*
 * Persistence. Times go out as wall-clock milliseconds and come back as
 * ages, so a wall clock that jumped gives no negative age. On load every
 * key counts as seen now: while lbagent was stopped, silence proves
 * nothing. Key bookkeeping is saved at most once a second, so a file may
 * lack the last second's "saw": when it shows a claim (set with
 * lbkeys_claim before loading), every loaded key counts as having seen it,
 * and a key new within one restore window of the load is owed whatever of
 * it has been released by then. Erring towards one restore word too many
 * never strands a server in DRAIN.
 */
/* CLAIM_* bits as ["admin", "weight"], and back (-1: not such a list). */
json_t		*lbkeys_bits_to_json(unsigned bits);
int		 lbkeys_bits_from_json(const json_t *, unsigned *bits);

json_t		*lbkeys_to_json(const struct lbkeys *, int64_t now_ms,
		    int64_t wall_ms);
int		 lbkeys_from_json(struct lbkeys *, const json_t *,
		    int64_t now_ms, int64_t wall_ms, const char **why);

#endif
