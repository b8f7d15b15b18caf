/*
 * The pieces of HAProxy's statistics CSV that hastats.c (a whole answer,
 * read in place) and hastats_reader.c (an answer read as it comes) share.
 * Private to src/core. Pure: no I/O.
 */
#ifndef LBAGENT_HASTATS_IMPL_H
#define LBAGENT_HASTATS_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lbagent/core/hastats.h"

#define HASTATS_COL_NONE	SIZE_MAX

/* The columns read, found by name in the header. */
enum hastats_col {
	HASTATS_COL_PXNAME,
	HASTATS_COL_SVNAME,
	HASTATS_COL_STATUS,
	HASTATS_COL_WEIGHT,
	HASTATS_COL_IWEIGHT,
	HASTATS_COL_UWEIGHT,
	HASTATS_COL_AGENT_STATUS,
	HASTATS_COL_AGENT_DESC,
	HASTATS_COL_SCUR,
	HASTATS_COL_QCUR,
	HASTATS_COL_STOT,
	HASTATS_COL_RTIME,
	HASTATS_COL_QTIME,
	HASTATS_COL_SID,
	HASTATS_COL_HRSP_1XX,	/* the six hrsp_ in their order */
	HASTATS_COL_HRSP_2XX,
	HASTATS_COL_HRSP_3XX,
	HASTATS_COL_HRSP_4XX,
	HASTATS_COL_HRSP_5XX,
	HASTATS_COL_HRSP_OTHER,
	HASTATS_COL_COUNT
};

/* A field as it stands in the text, its quotes included. */
struct hastats_field {
	const char	*p;
	size_t		 len;
	bool		 quoted;
};

/* How a field ended. */
enum hastats_end {
	HASTATS_END_BAD = -1,	/* malformed, *why set */
	HASTATS_END_COMMA,	/* another field follows */
	HASTATS_END_LINE,	/* the record is complete */
	HASTATS_END_DATA,	/* the data ran out: the record is cut */
};

struct hastats_scan {
	const char	*p, *end;
};

/* Reads one field at s->p and steps past it and its separator. */
enum hastats_end hastats_csv_field(struct hastats_scan *,
		    struct hastats_field *, const char **why);
/* Copies a field's text, quotes undone, cut at size - 1; its length. */
size_t		 hastats_csv_text(const struct hastats_field *, char *buf,
		    size_t size);
/* Whether a field's text, quotes undone, is s. */
bool		 hastats_csv_eq(const struct hastats_field *, const char *s);
/* Reads the header line: where each column read is (or COL_NONE). */
int		 hastats_csv_header(struct hastats_scan *,
		    size_t col[HASTATS_COL_COUNT], const char **why);
/*
 * Reads one record's fields, keeping in got (have set) those of the
 * columns read; how its last field ended (END_BAD with *why).
 */
enum hastats_end hastats_csv_record(struct hastats_scan *,
		    const size_t col[HASTATS_COL_COUNT],
		    struct hastats_field got[HASTATS_COL_COUNT],
		    bool have[HASTATS_COL_COUNT], const char **why);
/* Fills a row from the fields of a record; -1 with *why when malformed. */
int		 hastats_csv_row(struct hastats_field got[HASTATS_COL_COUNT],
		    const bool have[HASTATS_COL_COUNT],
		    const size_t col[HASTATS_COL_COUNT], struct hastats_row *,
		    const char **why);

#endif
