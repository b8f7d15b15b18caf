/*
 * A dotted path into a JSON document, as the http kind's json_field is
 * written: object keys and array indexes ("queues.2.name"), and "*" for
 * every element of an array or every member of an object
 * ("*.messages_ready"). A path with "*" matches many values; an aggregate
 * folds them into one number.
 */
#ifndef LBAGENT_JSON_PATH_H
#define LBAGENT_JSON_PATH_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#define JSON_PATH_SEGS_MAX	32	/* segments; also the walk's depth */
#define JSON_PATH_WHICH_MAX	64	/* of an element's label */
#define JSON_PATH_WHERE_MAX	128	/* of a concrete path */

struct json_path {
	char	*text;		/* as written */
	char	*segs;		/* the same, '.' made '\0' */
	size_t	 nsegs;
	size_t	 first_wild;	/* index of the first "*"; nsegs: none */
};

enum json_agg {
	JSON_AGG_MAX,
	JSON_AGG_MIN,
	JSON_AGG_SUM,
	JSON_AGG_COUNT,
};

enum json_fold_status {
	/* value set, or NAN: max/min matched nothing */
	JSON_FOLD_OK,
	/* the part before the first "*" is missing */
	JSON_FOLD_NO_FIELD,
	/* the first "*" met a scalar: where, type */
	JSON_FOLD_NOT_CONTAINER,
	/* a matched value is not a number (max, min, sum): where, type */
	JSON_FOLD_NOT_NUMBER,
};

struct json_fold {
	enum json_fold_status	 status;
	size_t			 matched;	/* values the path ends at */
	double			 value;		/* NAN: no value */
	/* The element max/min came from: a member's name, an array element's
	 * "name" member or its index; one label per "*", joined by '.'. */
	char			 which[JSON_PATH_WHICH_MAX];
	char			 where[JSON_PATH_WHERE_MAX]; /* concrete */
	const char		*type;	/* "a string", "null", ... */
};

/*
 * Parses text into p (zeroed or freed before). No empty segment, at most
 * JSON_PATH_SEGS_MAX of them. -1 with *why on error, p untouched.
 */
int		 json_path_parse(struct json_path *p, const char *text,
		    const char **why);
void		 json_path_free(struct json_path *p);
static inline bool
json_path_wild(const struct json_path *p)
{
	return p->first_wild < p->nsegs;
}
/* The path's name in reasons: without leading array indexes. */
const char	*json_path_name(const struct json_path *p);
/* The one value a path without "*" leads to in root; NULL when none. */
json_t		*json_path_get(const struct json_path *p, json_t *root);

/* "max", "min", "sum", "count"; -1 with *why listing them. */
int		 json_agg_parse(const char *s, enum json_agg *agg,
		    const char **why);
const char	*json_agg_name(enum json_agg agg);

/*
 * Folds every value p matches in root with agg. Elements under a "*" that
 * lack the rest of the path are skipped. max, min and sum need numbers
 * (the first other value stops the fold: NOT_NUMBER); count counts any
 * value. Matching nothing: sum and count are 0, max and min NAN. The walk
 * goes at most nsegs deep.
 */
void		 json_path_fold(const struct json_path *p, enum json_agg agg,
		    json_t *root, struct json_fold *out);

/* "a string", "a number", "an object", "an array", "a boolean", "null". */
const char	*json_type_name(const json_t *node);

#endif
