/*
 * Fuzz target: the http probe's json_field (core/json_path.c parses
 * the dotted path, follows it and folds what "*" matches; src/probes/
 * http_judge.c's json_text and json_judge judge it). Those are static, so
 * this file includes http_judge.c and the library's copy of it is left out
 * of the link. The input's first line is the path, its second the expected
 * value or, when it starts with '<' or '>', a warn threshold with crit
 * ten above (or below) and, for a path with "*", the aggregate named by
 * the letter after the number (x max, n min, s sum, c count; none: the
 * default); the rest is the body. The verdict's reason must fit.
 */
#include "../../src/probes/http_judge.c"

#include "fuzzutil.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_init();
	return 0;
}

/*
 * The next line of the input, NUL-terminated in place of its newline;
 * NULL when it holds a NUL, which no config line can.
 */
static char *
line(char **p, char *end)
{
	char	*s = *p, *nl = memchr(s, '\n', (size_t)(end - s));

	if (nl == NULL)
		nl = end;
	*nl = '\0';
	*p = nl < end ? nl + 1 : end;
	return strlen(s) == (size_t)(nl - s) ? s : NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char			*copy = fz_str(data, size), *p = copy;
	char			*end = copy + size, *path, *expect, num[32];
	struct http_conf	*c = http_conf_new();
	struct curl_probe	 cp;
	struct verdict		 v;
	const char		*why = NULL;
	char			*agg;
	double			 w;

	FZ_ASSERT(c != NULL);
	path = line(&p, end);
	expect = line(&p, end);
	if (path == NULL || expect == NULL)
		goto out;
	if (http_conf_set(c, "url", "http://127.0.0.1/", &why) != 0)
		abort();
	if (http_conf_set(c, "json_field", path, &why) != 0) {
		FZ_ASSERT(why != NULL);
		goto out;
	}
	FZ_ASSERT(c->json.nsegs >= 1 && c->json.nsegs <= JSON_PATH_SEGS_MAX);
	if ((expect[0] == '<' || expect[0] == '>') && (agg = strpbrk(expect,
	    "xnsc")) != NULL && json_path_wild(&c->json)) {
		if (http_conf_set(c, "json_aggregate", *agg == 'x' ? "max" :
		    *agg == 'n' ? "min" : *agg == 's' ? "sum" : "count",
		    &why) != 0)
			abort();
		*agg = '\0';
	}
	if ((expect[0] == '<' || expect[0] == '>') &&
	    units_double(expect + 1, &w, &why) == 0) {
		snprintf(num, sizeof(num), "%.17g", w);
		if (http_conf_set(c, "warn", num, &why) != 0)
			goto out;
		snprintf(num, sizeof(num), "%.17g",
		    expect[0] == '<' ? w - 10 : w + 10);
		(void)http_conf_set(c, "crit", num, &why);
	} else if (http_conf_set(c, "expect_value", expect, &why) != 0)
		goto out;
	if (http_conf_check(c, &why) != 0)
		goto out;
	memset(&cp, 0, sizeof(cp));
	cp.body = p;
	cp.len = (size_t)(end - p);
	memset(&v, 0, sizeof(v));
	json_judge(c, cp.body, cp.len, &v);
	/* Unknown only for max/min of nothing, and then as the check's. */
	FZ_ASSERT(v.result == PROBE_OK || v.result == PROBE_WARN ||
	    v.result == PROBE_CRIT || (v.result == PROBE_UNKNOWN &&
	    v.from_check && json_path_wild(&c->json)));
	FZ_ASSERT(memchr(v.reason, '\0', sizeof(v.reason)) != NULL);
out:
	http_conf_free(c);
	free(copy);
	return 0;
}
