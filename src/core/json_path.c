/*
 * Dotted paths into JSON with "*", and the fold of what they match. The
 * walk recurses once per segment, so its depth is the path's, at most
 * JSON_PATH_SEGS_MAX; the values it visits are bounded by the document.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/json_path.h"
#include "lbagent/core/units.h"

static const char *const agg_names[] = {
	[JSON_AGG_MAX] = "max",
	[JSON_AGG_MIN] = "min",
	[JSON_AGG_SUM] = "sum",
	[JSON_AGG_COUNT] = "count",
};

int
json_path_parse(struct json_path *p, const char *text, const char **why)
{
	size_t	 len = strlen(text), i, n = 1, first_wild;
	char	*copy, *segs, *seg;

	if (len == 0 || text[0] == '.' || text[len - 1] == '.' ||
	    strstr(text, "..") != NULL) {
		*why = "expected a dotted path such as status, "
		    "0.messages_ready or *.messages_ready";
		return -1;
	}
	for (i = 0; i < len; i++)
		if (text[i] == '.')
			n++;
	if (n > JSON_PATH_SEGS_MAX) {
		*why = "a path has at most 32 segments";
		return -1;
	}
	if ((copy = strdup(text)) == NULL || (segs = strdup(text)) == NULL) {
		free(copy);
		*why = "out of memory";
		return -1;
	}
	for (i = 0; i < len; i++)
		if (segs[i] == '.')
			segs[i] = '\0';
	first_wild = n;
	for (i = 0, seg = segs; i < n; i++, seg += strlen(seg) + 1) {
		if (strcmp(seg, "*") == 0) {
			if (first_wild == n)
				first_wild = i;
		} else if (strchr(seg, '*') != NULL) {
			free(copy);
			free(segs);
			*why = "* stands alone between dots, e.g. "
			    "*.messages_ready";
			return -1;
		}
	}
	json_path_free(p);
	p->text = copy;
	p->segs = segs;
	p->nsegs = n;
	p->first_wild = first_wild;
	return 0;
}

void
json_path_free(struct json_path *p)
{
	free(p->text);
	free(p->segs);
	memset(p, 0, sizeof(*p));
}

const char *
json_path_name(const struct json_path *p)
{
	const char	*s = p->text;
	size_t		 n;

	while ((n = strspn(s, "0123456789")) > 0 && s[n] == '.')
		s += n + 1;
	return s;
}

/* One step down by a key or an index; NULL when there is none. */
static json_t *
step(json_t *node, const char *seg)
{
	const char	*why;
	uint64_t	 idx;

	if (json_is_object(node))
		return json_object_get(node, seg);
	if (json_is_array(node) && units_uint(seg, &idx, &why) == 0 &&
	    idx < SIZE_MAX)
		return json_array_get(node, (size_t)idx);
	return NULL;
}

json_t *
json_path_get(const struct json_path *p, json_t *root)
{
	const char	*seg = p->segs;
	size_t		 i;

	for (i = 0; i < p->nsegs && root != NULL; i++) {
		root = step(root, seg);
		seg += strlen(seg) + 1;
	}
	return root;
}

int
json_agg_parse(const char *s, enum json_agg *agg, const char **why)
{
	size_t	i;

	for (i = 0; i < sizeof(agg_names) / sizeof(agg_names[0]); i++)
		if (strcmp(s, agg_names[i]) == 0) {
			*agg = (enum json_agg)i;
			return 0;
		}
	*why = "expected max, min, sum or count";
	return -1;
}

const char *
json_agg_name(enum json_agg agg)
{
	return agg_names[agg];
}

const char *
json_type_name(const json_t *node)
{
	switch (json_typeof(node)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

struct walk {
	const struct json_path	*p;
	enum json_agg		 agg;
	struct json_fold	*out;
	char			 where[JSON_PATH_WHERE_MAX];
	char			 which[JSON_PATH_WHICH_MAX];
	bool			 stop;
};

/* Appends '.' (unless empty) and s to buf, cut to fit; the old length. */
static size_t
push(char *buf, size_t size, const char *s)
{
	size_t	len = strlen(buf);

	snprintf(buf + len, size - len, "%s%s", len > 0 ? "." : "", s);
	return len;
}

/* An array element's label: its "name" member when a string, its index. */
static void
label(json_t *el, size_t idx, char *buf, size_t size)
{
	json_t	*name = json_is_object(el) ? json_object_get(el, "name") :
	    NULL;

	if (json_is_string(name) && json_string_length(name) > 0)
		snprintf(buf, size, "%s", json_string_value(name));
	else
		snprintf(buf, size, "%zu", idx);
}

static void
match(struct walk *w, json_t *node)
{
	struct json_fold	*o = w->out;
	double			 x;

	if (w->agg == JSON_AGG_COUNT) {
		o->value = (double)++o->matched;
		return;
	}
	if (!json_is_number(node)) {
		o->status = JSON_FOLD_NOT_NUMBER;
		o->type = json_type_name(node);
		snprintf(o->where, sizeof(o->where), "%s", w->where);
		w->stop = true;
		return;
	}
	x = json_number_value(node);
	o->matched++;
	if (w->agg == JSON_AGG_SUM)
		o->value += x;
	else if (o->matched == 1 || (w->agg == JSON_AGG_MAX ? x > o->value :
	    x < o->value)) {
		o->value = x;
		snprintf(o->which, sizeof(o->which), "%s", w->which);
	}
}

static void walk(struct walk *, json_t *, size_t, const char *);

/* Down into child, named seg in the concrete path and lab among labels. */
static void
descend(struct walk *w, json_t *child, size_t i, const char *seg,
    const char *lab, const char *next)
{
	size_t	wlen, llen = 0;

	wlen = push(w->where, sizeof(w->where), seg);
	if (lab != NULL)
		llen = push(w->which, sizeof(w->which), lab);
	walk(w, child, i + 1, next);
	w->where[wlen] = '\0';
	if (lab != NULL)
		w->which[llen] = '\0';
}

static void
walk(struct walk *w, json_t *node, size_t i, const char *seg)
{
	const char	*next, *key;
	char		 idx[24], lab[JSON_PATH_WHICH_MAX];
	json_t		*child;
	size_t		 n;

	if (w->stop)
		return;
	if (i == w->p->nsegs) {
		match(w, node);
		return;
	}
	next = seg + strlen(seg) + 1;
	if (strcmp(seg, "*") == 0) {
		if (json_is_array(node)) {
			json_array_foreach(node, n, child) {
				snprintf(idx, sizeof(idx), "%zu", n);
				label(child, n, lab, sizeof(lab));
				descend(w, child, i, idx, lab, next);
				if (w->stop)
					return;
			}
		} else if (json_is_object(node)) {
			json_object_foreach(node, key, child) {
				descend(w, child, i, key, key, next);
				if (w->stop)
					return;
			}
		} else if (i == w->p->first_wild) {
			w->out->status = JSON_FOLD_NOT_CONTAINER;
			w->out->type = json_type_name(node);
			snprintf(w->out->where, sizeof(w->out->where), "%s",
			    w->where);
			w->stop = true;
		}
		/* Else a scalar under an earlier "*": skipped. */
		return;
	}
	if ((child = step(node, seg)) != NULL)
		descend(w, child, i, seg, NULL, next);
	else if (i < w->p->first_wild) {
		w->out->status = JSON_FOLD_NO_FIELD;
		w->stop = true;
	}
	/* Else this element lacks the rest of the path: skipped. */
}

void
json_path_fold(const struct json_path *p, enum json_agg agg, json_t *root,
    struct json_fold *out)
{
	struct walk	w = { .p = p, .agg = agg, .out = out };

	memset(out, 0, sizeof(*out));
	out->status = JSON_FOLD_OK;
	out->value = agg == JSON_AGG_SUM || agg == JSON_AGG_COUNT ? 0 : NAN;
	walk(&w, root, 0, p->segs);
}
