/*
 * jansson's allocations counted per thread. The counting functions are
 * malloc and free for every caller (json_dumps' text is still freed with
 * free()); only while json_body_parse runs on a thread do that thread's
 * allocations count, by their usable size, against the bound.
 */
#include <malloc.h>
#include <stdbool.h>
#include <stdlib.h>

#include "json_body.h"

struct json_budget {
	size_t	used;
	bool	over;
};

static _Thread_local struct json_budget	*budget;
static bool				 installed;

static void *
budget_malloc(size_t n)
{
	struct json_budget	*b = budget;
	void			*p;

	if (b != NULL && (b->over || n > JSON_BODY_MEM_MAX - b->used)) {
		b->over = true;
		return NULL;
	}
	if ((p = malloc(n)) == NULL || b == NULL)
		return p;
	b->used += malloc_usable_size(p);
	if (b->used > JSON_BODY_MEM_MAX) {
		b->over = true;
		b->used -= malloc_usable_size(p);
		free(p);
		return NULL;
	}
	return p;
}

static void
budget_free(void *p)
{
	struct json_budget	*b = budget;
	size_t			 n;

	if (p != NULL && b != NULL) {
		n = malloc_usable_size(p);
		b->used = b->used > n ? b->used - n : 0;
	}
	free(p);
}

void
json_body_init(void)
{
	if (installed)
		return;
	json_set_alloc_funcs(budget_malloc, budget_free);
	installed = true;
}

json_t *
json_body_parse(const char *buf, size_t len, size_t flags,
    enum json_body_status *status)
{
	struct json_budget	 b = { 0, false };
	json_error_t		 err;
	json_t			*root;

	budget = &b;
	root = json_loadb(buf != NULL ? buf : "", len, flags, &err);
	budget = NULL;
	if (root != NULL)
		*status = JSON_BODY_OK;
	else
		*status = b.over ? JSON_BODY_TOO_BIG : JSON_BODY_NOT_JSON;
	return root;
}
