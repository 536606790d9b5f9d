// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Conformance cases modelled on the behaviours Linux checks in
 * tools/testing/radix-tree/idr-test.c, written for ridr's API (our @max
 * is inclusive where the IDR's @end is exclusive, and ids are unsigned
 * long).  Each test names the kernel case it mirrors.
 */
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include "tests/lib/ridr_fixture.h"

#define T(name, ...) Test(ridr_conformance, name, .init = fx_setup, .fini = fx_teardown, ##__VA_ARGS__)

static long alloc_id(struct ridr *m, void *p, unsigned long min,
		     unsigned long max)
{
	unsigned long id;
	int ret = ridr_alloc(m, p, min, max, &id);

	return ret < 0 ? ret : (long)id;
}

static long alloc_cyclic_id(struct ridr *m, void *p, unsigned long min,
			    unsigned long max)
{
	unsigned long id;
	int ret = ridr_alloc_cyclic(m, p, min, max, &id);

	return ret < 0 ? ret : (long)id;
}

static void *find(struct ridr *m, unsigned long id)
{
	void *e;

	rk_rcu_read_lock();
	e = ridr_find(m, id);
	rk_rcu_read_unlock();
	return e;
}

/* idr_alloc_test: cyclic allocation wraps from the top of the range back
 * to min, skipping ids still in use. */
T(cyclic_wraps_at_top_of_range)
{
	DEFINE_RIDR(m);

	cr_expect_eq(alloc_cyclic_id(&m, P(0), 0, 0x3fff), 0);
	cr_expect_eq(alloc_cyclic_id(&m, P(1), 0x3ffd, 0x3fff), 0x3ffd);
	cr_assert_eq(ridr_remove(&m, 0x3ffd, NULL), 0);
	cr_assert_eq(ridr_remove(&m, 0, NULL), 0);
	for (unsigned long i = 0x3ffe; i < 0x4003; i++) {
		unsigned long want = i < 0x4000 ? i : i - 0x3fff;

		cr_expect_eq(alloc_cyclic_id(&m, P(i), 1, 0x3fff), (long)want,
			     "step %#lx", i);
	}
	ridr_destroy(&m);
}

/* idr_alloc2_test: a range that excludes every free id is -ENOSPC. */
T(range_without_free_ids_is_enospc)
{
	DEFINE_RIDR(m);

	cr_expect_eq(alloc_id(&m, P(1), 1, 1), 1);
	cr_expect_eq(alloc_id(&m, P(1), 1, 1), -ENOSPC);
	cr_expect_eq(alloc_id(&m, P(1), 0, 0), 0);
	cr_expect_eq(alloc_id(&m, P(1), 0, 1), -ENOSPC);
	ridr_destroy(&m);
}

/* idr_replace_test */
T(replace_of_allocated_id)
{
	DEFINE_RIDR(m);
	void *old;

	cr_expect_eq(alloc_id(&m, (void *)-1, 10, 10), 10);
	cr_expect_eq(ridr_replace(&m, &m, 10, &old), 0);
	cr_expect_eq(old, (void *)-1);
	cr_expect_eq(find(&m, 10), &m);
	ridr_destroy(&m);
}

/* idr_null_test: NULL entries are allocated ids that find() reports as
 * absent; emptiness counts them. */
T(null_entries)
{
	DEFINE_RIDR(m);
	void *old;
	int i;

	cr_expect(ridr_is_empty(&m));
	cr_expect_eq(alloc_id(&m, NULL, 0, ULONG_MAX), 0);
	cr_expect(!ridr_is_empty(&m));
	cr_expect_eq(ridr_remove(&m, 0, NULL), 0);
	cr_expect(ridr_is_empty(&m));
	cr_expect_eq(alloc_id(&m, NULL, 0, ULONG_MAX), 0);
	ridr_destroy(&m);
	cr_expect(ridr_is_empty(&m));

	for (i = 0; i < 10; i++)
		cr_expect_eq(alloc_id(&m, NULL, 0, ULONG_MAX), i);
	cr_expect_eq(ridr_replace(&m, P(1), 3, &old), 0);
	cr_expect_null(old);
	cr_expect_eq(ridr_replace(&m, P(1), 4, &old), 0);
	cr_expect_null(old);
	cr_expect_eq(ridr_replace(&m, NULL, 4, &old), 0);
	cr_expect_eq(old, P(1));
	cr_expect_eq(ridr_replace(&m, P(1), 11, &old), -ENOENT);
	cr_expect_eq(ridr_remove(&m, 5, NULL), 0);
	cr_expect_eq(alloc_id(&m, NULL, 0, ULONG_MAX), 5);
	cr_expect_eq(ridr_remove(&m, 5, NULL), 0);
	for (i = 0; i < 9; i++) {
		int ret = ridr_remove(&m, (unsigned long)i, NULL);

		cr_expect_eq(ret, i == 5 ? -ENOENT : 0);
		cr_expect(!ridr_is_empty(&m));
	}
	cr_expect_eq(ridr_remove(&m, 8, NULL), -ENOENT);
	cr_expect(!ridr_is_empty(&m));
	cr_expect_eq(ridr_remove(&m, 9, NULL), 0);
	cr_expect(ridr_is_empty(&m));

	cr_expect_eq(alloc_id(&m, NULL, 0, ULONG_MAX), 0);
	cr_expect_eq(ridr_replace(&m, P(1), 3, &old), -ENOENT);
	cr_expect_eq(ridr_replace(&m, P(1), 0, &old), 0);
	cr_expect_null(old);
	cr_expect_eq(ridr_replace(&m, NULL, 0, &old), 0);
	cr_expect_eq(old, P(1));
	ridr_destroy(&m);
	cr_expect(ridr_is_empty(&m));
	for (i = 1; i < 10; i++)
		cr_expect_eq(alloc_id(&m, NULL, 1, ULONG_MAX), i);
	ridr_destroy(&m);
}

/* idr_nowait_test: preload, then allocate without allocating. */
T(preloaded_allocations)
{
	DEFINE_RIDR(m);
	struct ridr_preload pl = RIDR_PRELOAD_INIT;
	unsigned long id;

	cr_assert_eq(ridr_preload(&pl, &m, 3, RK_GFP_KERNEL), 0);
	fx_alloc.fail_all = true;
	ridr_lock(&m);
	for (unsigned long i = 0; i < 3; i++) {
		cr_expect_eq(__ridr_alloc(&m, P(i), i, i, &id, &pl), 0);
		cr_expect_eq(id, i);
	}
	ridr_unlock(&m);
	fx_alloc.fail_all = false;
	ridr_preload_end(&pl);
	ridr_destroy(&m);
}

/* idr_get_next_test */
T(get_next_visits_sparse_ids)
{
	static const unsigned long idx[] = { 4, 7, 9, 15, 65, 128, 1000,
					     99999 };
	DEFINE_RIDR(m);
	unsigned long next = 0;

	for (int i = 0; i < 8; i++)
		cr_assert_eq(alloc_id(&m, P(idx[i]), idx[i], idx[i]),
			     (long)idx[i]);
	rk_rcu_read_lock();
	for (int i = 0; i < 8; i++) {
		cr_expect_eq(ridr_get_next(&m, &next), P(idx[i]));
		cr_expect_eq(next, idx[i]);
		next++;
	}
	cr_expect_null(ridr_get_next(&m, &next));
	rk_rcu_read_unlock();
	ridr_destroy(&m);
}

/* idr_u32_test: ids around INT_MAX and UINT_MAX (and, for us, past). */
T(ids_around_int_max_and_uint_max)
{
	static const unsigned long handles[] = {
		10, 0x7fffffff, 0x80000000, 0x80000001, 0xffe00000,
		0xffffffff, 0x100000000, 0xffffffffffffffff,
	};
	DEFINE_RIDR(m);

	for (unsigned int i = 0; i < sizeof(handles) / sizeof(handles[0]); i++) {
		unsigned long h = handles[i], next = 0, id;
		void *old;

		cr_expect_eq(ridr_alloc(&m, P(1), h, h, &id), 0);
		cr_expect_eq(id, h);
		cr_expect_eq(ridr_alloc(&m, P(1), h, h, &id), -ENOSPC);
		rk_rcu_read_lock();
		cr_expect_eq(ridr_get_next(&m, &next), P(1));
		cr_expect_eq(next, h, "get_next found %#lx, expected %#lx",
			     next, h);
		rk_rcu_read_unlock();
		cr_expect_eq(ridr_remove(&m, h, &old), 0);
		cr_expect_eq(old, P(1));
		cr_expect(ridr_is_empty(&m));
		cr_expect_leq(ridr_memory(&m), RIDR_NODE_BYTES,
			      "an emptied map of one id keeps one object");
	}
	ridr_destroy(&m);
}

/* idr_align_test: entries with any pointer alignment round-trip. */
T(unaligned_entries_round_trip)
{
	char name[] = "Motorola 68000";
	DEFINE_RIDR(m);
	unsigned long id;
	void *e;

	for (int base = 0; base < 4; base++) {
		for (int i = base; i < base + 9; i++)
			cr_expect_eq(alloc_id(&m, &name[i], 0, ULONG_MAX),
				     i - base);
		rk_rcu_read_lock();
		ridr_for_each(&m, e, id)
			cr_expect_eq(e, &name[id + (unsigned long)base]);
		rk_rcu_read_unlock();
		ridr_destroy(&m);
	}
	for (int i = 0; i < 8; i++) {
		cr_expect_eq(alloc_id(&m, &name[i], 0, ULONG_MAX), 0);
		cr_expect_eq(alloc_id(&m, NULL, 0, ULONG_MAX), 1);
		cr_expect_eq(ridr_remove(&m, 1, NULL), 0);
		cr_expect_eq(ridr_replace(&m, &name[i + 1], 0, NULL), 0);
		cr_expect_eq(find(&m, 0), &name[i + 1]);
		cr_expect_eq(ridr_remove(&m, 0, NULL), 0);
		cr_expect(ridr_is_empty(&m));
	}
	ridr_destroy(&m);
}

/* idr_checks: bulk allocation, removal, ranges at INT_MAX, cursor. */
T(bulk_and_int_max_checks)
{
	DEFINE_RIDR(m);
	unsigned long i;

	for (i = 0; i < 10000; i++)
		cr_assert_eq(alloc_id(&m, P(i), 0, 19999), (long)i);
	cr_expect_eq(alloc_id(&m, P(1), 5, 29), -ENOSPC);
	for (i = 0; i < 5000; i++)
		cr_assert_eq(ridr_remove(&m, i, NULL), 0);
	cr_expect_eq(ridr_remove(&m, 3, NULL), -ENOENT);
	cr_expect_eq(ridr_count(&m), 5000);
	ridr_destroy(&m);
	cr_expect(ridr_is_empty(&m));
	cr_expect_eq(ridr_remove(&m, 3, NULL), -ENOENT);

	cr_expect_eq(alloc_id(&m, P(1), 0, ULONG_MAX), 0);
	cr_expect_eq(ridr_remove(&m, 1, NULL), -ENOENT);
	for (i = 1; i < RIDR_SLOTS; i++)
		cr_expect_eq(alloc_id(&m, P(1), 0, ULONG_MAX), (long)i);
	cr_expect_eq(ridr_remove(&m, 1UL << 30, NULL), -ENOENT);
	ridr_destroy(&m);

	for (i = INT_MAX - 3UL; i < INT_MAX + 1UL; i++)
		cr_expect_eq(alloc_id(&m, P(i), i, i + 9), (long)i);
	cr_expect_eq(alloc_id(&m, P(1), i - 2, i - 1), -ENOSPC);
	cr_expect_eq(alloc_id(&m, P(1), i - 2, INT_MAX), -ENOSPC);
	cr_expect_eq(alloc_id(&m, P(1), i - 2, i + 9), (long)i,
		     "unsigned long ids go past INT_MAX");
	ridr_destroy(&m);
	ridr_destroy(&m);	/* destroying an empty map is fine */
	cr_expect(ridr_is_empty(&m));

	/* Cyclic over [0, INT_MAX] from the cursor INT_MAX - 3 wraps to 0,
	 * as POSIX timers and SysV ipc need. */
	ridr_lock(&m);
	__ridr_set_cursor(&m, INT_MAX - 3UL);
	ridr_unlock(&m);
	for (i = INT_MAX - 3UL; i < INT_MAX + 3UL; i++) {
		unsigned long want = i <= INT_MAX ? i : i - INT_MAX - 1;

		cr_expect_eq(alloc_cyclic_id(&m, P(i), 0, INT_MAX), (long)want);
	}
	ridr_destroy(&m);

	for (i = 1; i < 10000; i++)
		cr_assert_eq(alloc_id(&m, P(i), 1, 19999), (long)i);
	ridr_destroy(&m);
}

/* Shrinking: a tall tree collapses back as its high ids go.  The path to
 * the last emptied id stays (the next allocation may want it) until
 * another object empties. */
T(tree_shrinks_when_high_ids_go)
{
	DEFINE_RIDR(m);
	size_t small;
	unsigned long i;

	for (i = 0; i < 100; i++)
		cr_assert_eq(alloc_id(&m, P(i), 0, ULONG_MAX), (long)i);
	small = ridr_memory(&m);
	cr_expect_eq(alloc_id(&m, P(1), 1UL << 45, 1UL << 45), 1L << 45);
	cr_expect_gt(ridr_memory(&m), small);
	cr_expect_eq(ridr_remove(&m, 1UL << 45, NULL), 0);
	cr_expect_eq(alloc_id(&m, P(1), 1UL << 45, ULONG_MAX), 1L << 45,
		     "the kept path takes the id back");
	cr_expect_eq(ridr_remove(&m, 1UL << 45, NULL), 0);
	for (i = 64; i < 100; i++)	/* empties another object */
		cr_assert_eq(ridr_remove(&m, i, NULL), 0);
	cr_expect_leq(ridr_memory(&m), small,
		      "once another object emptied, the tall path is gone");
	cr_expect_eq(find(&m, 0), P(0));
	ridr_destroy(&m);
}

/* idr_find_test: while one thread adds and removes a "throbber" id, a
 * reader always finds the anchor or the throbber, never anything else. */
static DEFINE_RIDR(find_map);
static int find_stop;

static void *throbber(void *arg)
{
	unsigned long id = *(unsigned long *)arg, got;

	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	while (!__atomic_load_n(&find_stop, __ATOMIC_ACQUIRE)) {
		cr_assert_eq(ridr_alloc(&find_map, P(id), id, id, &got), 0);
		cr_assert_eq(ridr_remove(&find_map, id, NULL), 0);
	}
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	return NULL;
}

static void find_test_1(unsigned long anchor, unsigned long throb)
{
	pthread_t t;
	unsigned long got;

	cr_assert_eq(ridr_alloc(&find_map, P(anchor), anchor, anchor, &got), 0);
	find_stop = 0;
	pthread_create(&t, NULL, throbber, &throb);
	for (long n = 0; n < RK_STRESS(300000); n++) {
		unsigned long id = 0;
		void *e;

		rk_rcu_read_lock();
		e = ridr_get_next(&find_map, &id);
		rk_rcu_read_unlock();
		cr_assert((id == anchor || id == throb) && e == P(id),
			  "get_next found %p at %lu (anchor %lu, throbber %lu)",
			  e, id, anchor, throb);
	}
	__atomic_store_n(&find_stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	cr_assert_eq(ridr_remove(&find_map, anchor, NULL), 0);
	cr_expect(ridr_is_empty(&find_map));
}

T(reader_sees_anchor_or_throbber, .timeout = 120)
{
	find_test_1(100000, 0);
	find_test_1(0, 100000);
	ridr_destroy(&find_map);
}
