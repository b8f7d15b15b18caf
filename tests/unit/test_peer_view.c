/*
 * A peer's public /status parsed (core/peer_view.c): each service's
 * capacity estimate, {"estimate": R, "age_ms": A} or null, kept only when
 * both are finite numbers at or above 0, and judged fresh against a bound.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lbagent/core/peer_view.h"
#include "testutil.h"

/* One service "" whose "capacity" is the given JSON text (NULL: none). */
static void
parse_one(const char *capacity, struct peer_answer *a)
{
	char		 doc[512];
	const char	*why = NULL;

	if (capacity != NULL)
		snprintf(doc, sizeof(doc), "{\"node_id\": \"n2\", \"services\": "
		    "[{\"name\": \"\", \"serving\": true, \"capacity\": %s}]}",
		    capacity);
	else
		snprintf(doc, sizeof(doc), "{\"node_id\": \"n2\", \"services\": "
		    "[{\"name\": \"\", \"serving\": true}]}");
	ck_assert_msg(peer_view_answer_parse(doc, strlen(doc), a, &why) == 0,
	    "%s: %s", doc, why);
	ck_assert_uint_eq(a->nsvc, 1);
}

START_TEST(capacity_given)
{
	struct peer_answer	a;

	parse_one("{\"estimate\": 412.5, \"age_ms\": 1500}", &a);
	ck_assert_double_eq(a.svc[0].capacity, 412.5);
	ck_assert_int_eq(a.svc[0].capacity_age_ms, 1500);
	ck_assert_double_eq(peer_service_capacity(&a.svc[0], 30000), 412.5);
	/* At the bound still fresh; beyond it, not. */
	ck_assert_double_eq(peer_service_capacity(&a.svc[0], 1500), 412.5);
	ck_assert(isnan(peer_service_capacity(&a.svc[0], 1499)));
	peer_view_answer_free(&a);
	/* Integers, and 0 (a node that can serve nothing now). */
	parse_one("{\"estimate\": 0, \"age_ms\": 0}", &a);
	ck_assert_double_eq(a.svc[0].capacity, 0);
	ck_assert_double_eq(peer_service_capacity(&a.svc[0], 0), 0);
	peer_view_answer_free(&a);
	parse_one("{\"estimate\": 90, \"age_ms\": 2.9, \"extra\": [1]}", &a);
	ck_assert_double_eq(a.svc[0].capacity, 90);
	ck_assert_int_eq(a.svc[0].capacity_age_ms, 2);
	peer_view_answer_free(&a);
}
END_TEST

/* What is not an estimate is none; the answer itself still reads. */
START_TEST(capacity_none)
{
	static const char *const none[] = {
		NULL, "null", "12", "\"412\"", "[412, 10]", "{}",
		"{\"estimate\": null, \"age_ms\": 10}",
		"{\"estimate\": 412}",
		"{\"age_ms\": 10}",
		"{\"estimate\": -1, \"age_ms\": 10}",
		"{\"estimate\": -0.001, \"age_ms\": 10}",
		"{\"estimate\": 412, \"age_ms\": -1}",
		"{\"estimate\": 412, \"age_ms\": null}",
		"{\"estimate\": 412, \"age_ms\": \"10\"}",
		"{\"estimate\": \"412\", \"age_ms\": 10}",
		"{\"estimate\": true, \"age_ms\": 10}",
		"{\"estimate\": 412, \"age_ms\": 1e300}",
	};
	struct peer_answer	a;
	size_t			i;

	for (i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		parse_one(none[i], &a);
		ck_assert_msg(isnan(a.svc[0].capacity), "%s: capacity %g",
		    none[i] ? none[i] : "(absent)", a.svc[0].capacity);
		ck_assert_int_eq(a.svc[0].capacity_age_ms, -1);
		ck_assert(isnan(peer_service_capacity(&a.svc[0], UINT64_MAX)));
		ck_assert(a.svc[0].serving);
		peer_view_answer_free(&a);
	}
}
END_TEST

/* Each service its own; a number too big for JSON is not JSON at all. */
START_TEST(capacity_per_service)
{
	static const char doc[] = "{\"node_id\": \"n2\", \"services\": ["
	    "{\"name\": \"\", \"serving\": true, \"capacity\": null},"
	    "{\"name\": \"web\", \"serving\": true, \"capacity\": "
	    "{\"estimate\": 7.25, \"age_ms\": 100}}]}";
	static const char inf[] = "{\"node_id\": \"n2\", \"services\": ["
	    "{\"name\": \"\", \"serving\": true, \"capacity\": "
	    "{\"estimate\": 1e999, \"age_ms\": 1}}]}";
	struct peer_answer	a;
	const char		*why;

	ck_assert_int_eq(peer_view_answer_parse(doc, strlen(doc), &a, &why), 0);
	ck_assert_uint_eq(a.nsvc, 2);
	ck_assert(isnan(a.svc[0].capacity));
	ck_assert_double_eq(a.svc[1].capacity, 7.25);
	ck_assert_int_eq(a.svc[1].capacity_age_ms, 100);
	peer_view_answer_free(&a);
	ck_assert_int_eq(peer_view_answer_parse(inf, strlen(inf), &a, &why),
	    -1);
	ck_assert_str_eq(why, "not JSON");
	peer_view_answer_free(&a);
}
END_TEST

static Suite *
peer_view_suite(void)
{
	Suite	*s = suite_create("peer_view");
	TCase	*tc = tcase_create("capacity");

	tcase_add_test(tc, capacity_given);
	tcase_add_test(tc, capacity_none);
	tcase_add_test(tc, capacity_per_service);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(peer_view_suite());
}
