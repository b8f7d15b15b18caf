/*
 * Fuzz target: HAProxy's statistics read in pieces
 * (src/core/hastats_reader.c). The first byte picks the size of the
 * pieces (1 to 256 bytes), the second small limits or the defaults; the
 * rest is a load balancer's answer. Properties: the pieces give the same
 * table (or the same failure) as the answer in one piece; rows found are
 * those hastats_find finds in the whole answer, field for field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/hastats.h"
#include "lbagent/core/hastats_reader.h"
#include "fuzzutil.h"

static const char *const backends[] = { "be", "web" };
static const char *const servers[] = { "s1", "n1", "BACKEND", "srv", "" };
#define NSERVERS	(sizeof(servers) / sizeof(servers[0]))

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_init();
	return 0;
}

/*
 * The answer in pieces of cut bytes, each an exact-size copy; a failure's
 * reason copied to whybuf (the reader's own text goes with it).
 */
static struct hastats_table *
read_in(const uint8_t *data, size_t size, size_t cut,
    const struct hastats_limits *lim, char whybuf[128])
{
	const char		*why[1] = { "" };
	struct hastats_reader	*r = hastats_reader_new(backends, 2, lim);
	struct hastats_table	*t = NULL;
	size_t			 off, n;
	char			*piece;

	FZ_ASSERT(r != NULL);
	for (off = 0; off < size; off += n) {
		n = size - off < cut ? size - off : cut;
		FZ_ASSERT((piece = malloc(n)) != NULL);
		memcpy(piece, data + off, n);
		if (hastats_reader_feed(r, piece, n, why) == -1) {
			free(piece);
			FZ_ASSERT(hastats_reader_finish(r, why) == NULL);
			goto done;
		}
		free(piece);
	}
	t = hastats_reader_finish(r, why);
done:
	snprintf(whybuf, 128, "%s", t == NULL ? why[0] : "");
	hastats_reader_free(r);
	return t;
}

struct seen {
	size_t	n;
	char	last[HASTATS_NAME_MAX];
};

static int
count(void *arg, const char *server, const struct hastats_row *r)
{
	struct seen	*s = arg;

	FZ_ASSERT(strlen(server) < HASTATS_NAME_MAX);
	FZ_ASSERT(memchr(r->status, '\0', sizeof(r->status)) != NULL);
	memcpy(s->last, server, strlen(server) + 1);
	s->n++;
	return 0;
}

/* Two tables say the same, and what they find is what hastats_find does. */
static void
compare(const struct hastats_table *a, const struct hastats_table *b,
    const char *csv, size_t csv_len, bool whole_ok)
{
	struct hastats_row	 ra, rb, rw;
	struct seen		 sa, sb;
	const char		*wa = NULL, *wb = NULL, *ww;
	size_t			 i, j;
	int			 fa, fb, fw;

	FZ_ASSERT(hastats_table_rows(a) == hastats_table_rows(b));
	for (i = 0; i < 2; i++) {
		memset(&sa, 0, sizeof(sa));
		memset(&sb, 0, sizeof(sb));
		fa = hastats_table_each(a, backends[i], count, &sa, &wa);
		fb = hastats_table_each(b, backends[i], count, &sb, &wb);
		FZ_ASSERT(fa == fb && sa.n == sb.n &&
		    strcmp(sa.last, sb.last) == 0);
		if (fa == -1)
			FZ_ASSERT(strcmp(wa, wb) == 0);
		for (j = 0; j < NSERVERS; j++) {
			memset(&ra, 0, sizeof(ra));
			memset(&rb, 0, sizeof(rb));
			fa = hastats_table_find(a, backends[i], servers[j], &ra,
			    &wa);
			fb = hastats_table_find(b, backends[i], servers[j], &rb,
			    &wb);
			FZ_ASSERT(fa == fb);
			FZ_ASSERT(fa != 1 || memcmp(&ra, &rb, sizeof(ra)) == 0);
			FZ_ASSERT(fa != -1 || strcmp(wa, wb) == 0);
			FZ_ASSERT(hastats_table_initial_weight(a, backends[i],
			    servers[j]) == hastats_table_initial_weight(b,
			    backends[i], servers[j]));
			if (!whole_ok)
				continue;
			/* The whole parser read up to the row, or all of it,
			 * without fault: so did the reader. */
			memset(&rw, 0, sizeof(rw));
			fw = hastats_find(csv, csv_len, backends[i], servers[j],
			    &rw, &ww);
			if (fw == 1 && fa != -1)
				FZ_ASSERT(fa == 1 &&
				    memcmp(&ra, &rw, sizeof(ra)) == 0);
			if (fw == 0)
				FZ_ASSERT(fa == 0);
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hastats_limits	 small = { 4096, 256, 16 }, *lim;
	struct hastats_table	*whole, *pieces;
	const char		*state;
	char			 wa[128], wb[128];
	size_t			 cut, csv_len, state_len;
	char			*copy;

	if (size < 2)
		return 0;
	cut = (size_t)data[0] + 1;
	lim = data[1] & 1 ? &small : NULL;
	data += 2;
	size -= 2;
	whole = read_in(data, size, size > 0 ? size : 1, lim, wa);
	pieces = read_in(data, size, cut, lim, wb);
	FZ_ASSERT((whole == NULL) == (pieces == NULL));
	if (whole == NULL) {
		FZ_ASSERT(strcmp(wa, wb) == 0);
		return 0;
	}
	FZ_ASSERT((copy = malloc(size > 0 ? size : 1)) != NULL);
	memcpy(copy, data, size);
	csv_len = hastats_split(copy, size, &state, &state_len);
	compare(whole, pieces, copy, csv_len, state == NULL);
	free(copy);
	hastats_table_free(whole);
	hastats_table_free(pieces);
	return 0;
}
