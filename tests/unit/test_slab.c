/*
 * Slabs (daemon/slab.c): objects handed out distinct, aligned and
 * writable; a slab unmapped once empty but for the one spare, which trim
 * unmaps; a slab with one object left stays; freed slots reused.
 */
#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include "lbagent/sys/slab.h"
#include "testutil.h"

#define OBJ	1200
#define MANY	1000

START_TEST(burst_given_back)
{
	struct slab_pool	 p;
	static void		*objs[MANY];
	size_t			 i, peak;

	slab_pool_init(&p, OBJ);
	ck_assert_uint_gt(p.per_slab, 1);
	for (i = 0; i < MANY; i++) {
		ck_assert_ptr_nonnull(objs[i] = slab_alloc(&p));
		ck_assert_uint_eq((uintptr_t)objs[i] % alignof(max_align_t), 0);
		memset(objs[i], (int)(i & 0xff), OBJ);
	}
	peak = p.nslabs;
	ck_assert_uint_eq(peak, (MANY + p.per_slab - 1) / p.per_slab);
	ck_assert_uint_eq(p.live, MANY);
	for (i = 0; i < MANY; i++)
		ck_assert_uint_eq(((unsigned char *)objs[i])[OBJ - 1], i & 0xff);
	/* One object left pins its slab only. */
	for (i = 1; i < MANY; i++)
		slab_free(&p, objs[i]);
	ck_assert_uint_eq(p.live, 1);
	ck_assert_uint_le(p.nslabs, 2);
	slab_free(&p, objs[0]);
	ck_assert_uint_eq(p.nslabs, 1);		/* the spare */
	slab_pool_trim(&p);
	ck_assert_uint_eq(p.nslabs, 0);
	slab_pool_destroy(&p);
}
END_TEST

START_TEST(reuse_and_spare)
{
	struct slab_pool	 p;
	void			*a, *b, *c;

	slab_pool_init(&p, OBJ);
	a = slab_alloc(&p);
	b = slab_alloc(&p);
	ck_assert_ptr_ne(a, b);
	slab_free(&p, a);
	c = slab_alloc(&p);
	ck_assert_ptr_eq(c, a);			/* the freed slot first */
	slab_free(&p, b);
	slab_free(&p, c);
	ck_assert_uint_eq(p.nslabs, 1);
	/* The spare serves the next object: no new mapping. */
	ck_assert_ptr_nonnull(a = slab_alloc(&p));
	ck_assert_uint_eq(p.nslabs, 1);
	slab_pool_destroy(&p);			/* with a live object */
	ck_assert_uint_eq(p.nslabs, 0);
}
END_TEST

START_TEST(too_big)
{
	struct slab_pool	 p;

	slab_pool_init(&p, SLAB_BYTES);
	ck_assert_ptr_null(slab_alloc(&p));
	slab_pool_destroy(&p);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("slab");
	TCase	*tc = tcase_create("slab");

	tcase_add_test(tc, burst_given_back);
	tcase_add_test(tc, reuse_and_spare);
	tcase_add_test(tc, too_big);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
