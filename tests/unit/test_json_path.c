/* json_field's paths: parsing, "*" over arrays and objects, aggregates. */
#include <math.h>
#include <string.h>

#include "lbagent/core/json_path.h"
#include "testutil.h"

/* RabbitMQ's /api/queues/VHOST, cut down: "fresh" has no stats yet. */
static const char queues[] =
    "[{\"name\":\"orders\",\"messages_ready\":12000,\"consumers\":2},"
    "{\"name\":\"mail\",\"messages_ready\":3,\"consumers\":0},"
    "{\"name\":\"fresh\",\"consumers\":1},"
    "{\"messages_ready\":40}]";

static json_t *
load(const char *text)
{
	json_error_t	 err;
	json_t		*j = json_loads(text, JSON_DECODE_ANY, &err);

	ck_assert_msg(j != NULL, "%s: %s", text, err.text);
	return j;
}

static struct json_fold
fold(const char *doc, const char *path, enum json_agg agg)
{
	struct json_path	 p = { 0 };
	struct json_fold	 out;
	const char		*why = NULL;
	json_t			*j = load(doc);

	ck_assert_msg(json_path_parse(&p, path, &why) == 0, "%s: %s", path,
	    why);
	json_path_fold(&p, agg, j, &out);
	json_path_free(&p);
	json_decref(j);
	return out;
}

START_TEST(parse)
{
	static const struct {
		const char	*text;
		const char	*why;	/* NULL: accepted */
		size_t		 nsegs, first_wild;
	} cases[] = {
		{ "status", NULL, 1, 1 },
		{ "0.messages_ready", NULL, 2, 2 },
		{ "*.messages_ready", NULL, 2, 0 },
		{ "queues.*.consumers", NULL, 3, 1 },
		{ "*.*", NULL, 2, 0 },
		{ "*", NULL, 1, 0 },
		{ "", "expected a dotted path such as status, "
		    "0.messages_ready or *.messages_ready", 0, 0 },
		{ ".a", "expected a dotted path such as status, "
		    "0.messages_ready or *.messages_ready", 0, 0 },
		{ "a.", "expected a dotted path such as status, "
		    "0.messages_ready or *.messages_ready", 0, 0 },
		{ "a..b", "expected a dotted path such as status, "
		    "0.messages_ready or *.messages_ready", 0, 0 },
		{ "a*.b", "* stands alone between dots, e.g. "
		    "*.messages_ready", 0, 0 },
		{ "a.**", "* stands alone between dots, e.g. "
		    "*.messages_ready", 0, 0 },
		{ "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.0.1.2."
		    "3.4.5.6", "a path has at most 32 segments", 0, 0 },
	};
	struct json_path	 p = { 0 };
	const char		*why;
	size_t			 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why = NULL;
		if (cases[i].why == NULL) {
			ck_assert_msg(json_path_parse(&p, cases[i].text,
			    &why) == 0, "%s: %s", cases[i].text, why);
			ck_assert_str_eq(p.text, cases[i].text);
			ck_assert_uint_eq(p.nsegs, cases[i].nsegs);
			ck_assert_uint_eq(p.first_wild, cases[i].first_wild);
			ck_assert(json_path_wild(&p) ==
			    (cases[i].first_wild < cases[i].nsegs));
		} else {
			ck_assert_int_eq(json_path_parse(&p, cases[i].text,
			    &why), -1);
			ck_assert_str_eq(why, cases[i].why);
		}
	}
	/* 32 segments is the bound, not past it. */
	ck_assert_int_eq(json_path_parse(&p, "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o."
	    "p.q.r.s.t.u.v.w.x.y.z.0.1.2.3.4.5", &why), 0);
	ck_assert_uint_eq(p.nsegs, 32);
	json_path_free(&p);
}
END_TEST

START_TEST(get_and_name)
{
	struct json_path	 p = { 0 };
	const char		*why;
	json_t			*j = load("{\"queues\":[{\"name\":\"a\"},"
	    "{\"name\":\"b\"}],\"7\":\"seven\",\"n\":1}");

	ck_assert_int_eq(json_path_parse(&p, "queues.1.name", &why), 0);
	ck_assert_str_eq(json_string_value(json_path_get(&p, j)), "b");
	ck_assert_str_eq(json_path_name(&p), "queues.1.name");
	ck_assert_int_eq(json_path_parse(&p, "7", &why), 0);
	ck_assert_str_eq(json_string_value(json_path_get(&p, j)), "seven");
	ck_assert_int_eq(json_path_parse(&p, "queues.9.name", &why), 0);
	ck_assert_ptr_null(json_path_get(&p, j));
	ck_assert_int_eq(json_path_parse(&p, "n.x", &why), 0);
	ck_assert_ptr_null(json_path_get(&p, j));
	ck_assert_int_eq(json_path_parse(&p, "0.1.messages_ready", &why), 0);
	ck_assert_str_eq(json_path_name(&p), "messages_ready");
	json_path_free(&p);
	json_decref(j);
}
END_TEST

START_TEST(aggregates)
{
	struct json_fold	o;
	enum json_agg		a;
	const char		*why;

	o = fold(queues, "*.messages_ready", JSON_AGG_MAX);
	ck_assert_int_eq(o.status, JSON_FOLD_OK);
	ck_assert_uint_eq(o.matched, 3);	/* "fresh" skipped */
	ck_assert_double_eq(o.value, 12000);
	ck_assert_str_eq(o.which, "orders");
	o = fold(queues, "*.messages_ready", JSON_AGG_MIN);
	ck_assert_double_eq(o.value, 3);
	ck_assert_str_eq(o.which, "mail");
	o = fold(queues, "*.messages_ready", JSON_AGG_SUM);
	ck_assert_double_eq(o.value, 12043);
	o = fold(queues, "*.messages_ready", JSON_AGG_COUNT);
	ck_assert_double_eq(o.value, 3);
	/* An element without a name is labelled by its index. */
	o = fold("[{\"x\":1},{\"x\":5,\"name\":\"\"},{\"x\":2}]", "*.x",
	    JSON_AGG_MAX);
	ck_assert_str_eq(o.which, "1");
	/* The first of equal values is the one named. */
	o = fold("[{\"name\":\"a\",\"x\":5},{\"name\":\"b\",\"x\":5}]", "*.x",
	    JSON_AGG_MAX);
	ck_assert_str_eq(o.which, "a");
	o = fold("[1.5,-2,7]", "*", JSON_AGG_MIN);
	ck_assert_double_eq(o.value, -2);
	ck_assert_str_eq(o.which, "1");

	ck_assert_int_eq(json_agg_parse("sum", &a, &why), 0);
	ck_assert_int_eq(a, JSON_AGG_SUM);
	ck_assert_str_eq(json_agg_name(a), "sum");
	ck_assert_int_eq(json_agg_parse("avg", &a, &why), -1);
	ck_assert_str_eq(why, "expected max, min, sum or count");
	ck_assert_int_eq(json_agg_parse("MAX", &a, &why), -1);
}
END_TEST

START_TEST(objects_and_nesting)
{
	static const char doc[] = "{\"queues\":{\"orders\":{\"consumers\":0},"
	    "\"mail\":{\"consumers\":4}},\"vhosts\":[{\"name\":\"/\","
	    "\"queues\":[{\"name\":\"q1\",\"n\":3},{\"name\":\"q2\",\"n\":9}]},"
	    "{\"name\":\"prod\",\"queues\":[{\"name\":\"q3\",\"n\":5}]},"
	    "{\"name\":\"empty\"},{\"name\":\"odd\",\"queues\":7}]}";
	struct json_fold	o;

	o = fold(doc, "queues.*.consumers", JSON_AGG_MAX);
	ck_assert_double_eq(o.value, 4);
	ck_assert_str_eq(o.which, "mail");
	o = fold(doc, "queues.*.consumers", JSON_AGG_MIN);
	ck_assert_str_eq(o.which, "orders");
	/* Nested "*": one label per level; "empty" and "odd" skipped. */
	o = fold(doc, "vhosts.*.queues.*.n", JSON_AGG_MAX);
	ck_assert_int_eq(o.status, JSON_FOLD_OK);
	ck_assert_uint_eq(o.matched, 3);
	ck_assert_double_eq(o.value, 9);
	ck_assert_str_eq(o.which, "/.q2");
	o = fold(doc, "vhosts.*.queues.*.n", JSON_AGG_SUM);
	ck_assert_double_eq(o.value, 17);
	/* count counts any value, not only numbers. */
	o = fold(doc, "vhosts.*.name", JSON_AGG_COUNT);
	ck_assert_double_eq(o.value, 4);
	o = fold(doc, "*", JSON_AGG_COUNT);
	ck_assert_double_eq(o.value, 2);
	o = fold(doc, "vhosts.1.queues.*.n", JSON_AGG_MAX);
	ck_assert_double_eq(o.value, 5);
	ck_assert_str_eq(o.which, "q3");
}
END_TEST

START_TEST(nothing_and_errors)
{
	struct json_fold	o;

	/* Zero matches: sum and count 0, max and min no value. */
	o = fold("[]", "*.messages_ready", JSON_AGG_SUM);
	ck_assert_int_eq(o.status, JSON_FOLD_OK);
	ck_assert_double_eq(o.value, 0);
	o = fold("[{\"name\":\"fresh\"}]", "*.messages_ready", JSON_AGG_COUNT);
	ck_assert_double_eq(o.value, 0);
	o = fold("{}", "*.messages_ready", JSON_AGG_MAX);
	ck_assert_int_eq(o.status, JSON_FOLD_OK);
	ck_assert_uint_eq(o.matched, 0);
	ck_assert(isnan(o.value));
	o = fold("[{\"a\":1}]", "*.messages_ready", JSON_AGG_MIN);
	ck_assert(isnan(o.value));

	/* A value that is not a number names its concrete path. */
	o = fold("[{\"m\":1},{\"m\":2},{\"m\":3},{\"m\":\"x\"}]", "*.m",
	    JSON_AGG_MAX);
	ck_assert_int_eq(o.status, JSON_FOLD_NOT_NUMBER);
	ck_assert_str_eq(o.where, "3.m");
	ck_assert_str_eq(o.type, "a string");
	o = fold("{\"q\":{\"a\":{\"m\":null}}}", "q.*.m", JSON_AGG_SUM);
	ck_assert_int_eq(o.status, JSON_FOLD_NOT_NUMBER);
	ck_assert_str_eq(o.where, "q.a.m");
	ck_assert_str_eq(o.type, "null");
	o = fold("[{\"m\":{}}]", "*.m", JSON_AGG_MIN);
	ck_assert_str_eq(o.type, "an object");
	o = fold("[{\"m\":true}]", "*.m", JSON_AGG_MIN);
	ck_assert_str_eq(o.type, "a boolean");
	o = fold("[{\"m\":\"x\"},{\"m\":[]},{\"m\":null}]", "*.m",
	    JSON_AGG_COUNT);
	ck_assert_int_eq(o.status, JSON_FOLD_OK);
	ck_assert_double_eq(o.value, 3);

	/* Before the first "*" the path must exist and lead to a container. */
	o = fold("{\"a\":1}", "queues.*.n", JSON_AGG_MAX);
	ck_assert_int_eq(o.status, JSON_FOLD_NO_FIELD);
	o = fold("{\"queues\":\"none\"}", "queues.*.n", JSON_AGG_SUM);
	ck_assert_int_eq(o.status, JSON_FOLD_NOT_CONTAINER);
	ck_assert_str_eq(o.where, "queues");
	ck_assert_str_eq(o.type, "a string");
	o = fold("42", "*", JSON_AGG_COUNT);
	ck_assert_int_eq(o.status, JSON_FOLD_NOT_CONTAINER);
	ck_assert_str_eq(o.where, "");
	ck_assert_str_eq(o.type, "a number");
}
END_TEST

/* The walk goes as deep as the path, whatever the document's depth. */
START_TEST(deep_document)
{
	struct json_fold	o;

	o = fold("[[1,[2]],[3]]", "*.*", JSON_AGG_COUNT);
	ck_assert_double_eq(o.value, 3);
	o = fold("[[[[[[[[[[1]]]]]]]]]]", "*.*.*.*.*.*.*.*.*.*", JSON_AGG_MAX);
	ck_assert_double_eq(o.value, 1);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("json_path");
	TCase	*tc = tcase_create("json_path");

	tcase_add_test(tc, parse);
	tcase_add_test(tc, get_and_name);
	tcase_add_test(tc, aggregates);
	tcase_add_test(tc, objects_and_nesting);
	tcase_add_test(tc, nothing_and_errors);
	tcase_add_test(tc, deep_document);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
