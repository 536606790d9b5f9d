// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ridr API: every function, every error path, allocation-failure
 * injection at every allocation point (map unchanged, nothing leaked),
 * and memory returning to the empty map's footprint.
 */
#include <limits.h>
#include <string.h>

#include "tests/lib/ridr_fixture.h"

#define T(name, ...) Test(ridr_api, name, .init = fx_setup, .fini = fx_teardown, ##__VA_ARGS__)

T(new_map_is_empty)
{
	struct ridr m;
	unsigned long id = 7;

	ridr_init(&m);
	cr_expect(ridr_is_empty(&m));
	cr_expect_eq(ridr_count(&m), 0);
	cr_expect_eq(ridr_memory(&m), 0);
	rk_rcu_read_lock();
	cr_expect_null(ridr_find(&m, 0));
	cr_expect_null(ridr_find(&m, ULONG_MAX));
	cr_expect_null(ridr_get_next(&m, &id));
	rk_rcu_read_unlock();
	cr_expect_eq(id, 7, "get_next on an empty map changed *idp");
	ridr_destroy(&m);
}

T(static_initializer_gives_a_working_map)
{
	DEFINE_RIDR(m);
	unsigned long id;

	cr_expect(ridr_is_empty(&m));
	id = must_alloc(&m, P(1), 0, 10);
	cr_expect_eq(id, 0);
	rk_rcu_read_lock();
	cr_expect_eq(ridr_find(&m, 0), P(1));
	rk_rcu_read_unlock();
	ridr_destroy(&m);
}

T(alloc_returns_lowest_free_id)
{
	struct ridr m;

	ridr_init(&m);
	for (unsigned long i = 0; i < 200; i++)
		cr_expect_eq(must_alloc(&m, P(i), 0, ULONG_MAX), i);
	cr_assert_eq(ridr_remove(&m, 130, NULL), 0);
	cr_assert_eq(ridr_remove(&m, 5, NULL), 0);
	cr_expect_eq(must_alloc(&m, P(1), 0, ULONG_MAX), 5);
	cr_expect_eq(must_alloc(&m, P(1), 0, ULONG_MAX), 130);
	cr_expect_eq(must_alloc(&m, P(1), 0, ULONG_MAX), 200);
	cr_expect_eq(must_alloc(&m, P(1), 6, ULONG_MAX), 201,
		     "min is a lower bound, not a hint");
	cr_expect_eq(ridr_count(&m), 202);
	ridr_destroy(&m);
}

T(alloc_honours_min_and_max)
{
	struct ridr m;
	unsigned long id;

	ridr_init(&m);
	cr_expect_eq(must_alloc(&m, P(1), 100, 200), 100);
	cr_expect_eq(must_alloc(&m, P(2), 100, 200), 101);
	cr_expect_eq(must_alloc(&m, P(3), 50, 200), 50);
	cr_expect_eq(must_alloc(&m, P(4), 7, 7), 7);
	cr_expect_eq(ridr_alloc(&m, P(5), 7, 7, &id), -ENOSPC);
	cr_expect_eq(must_alloc(&m, P(6), 1000000, 1000000), 1000000);
	ridr_destroy(&m);
}

T(alloc_rejects_bad_arguments_and_changes_nothing)
{
	struct ridr m;
	struct snap s;
	unsigned long id = 99;

	ridr_init(&m);
	must_alloc(&m, P(1), 0, 10);
	take_snap(&m, &s);
	cr_expect_eq(ridr_alloc(&m, P(2), 10, 9, &id), -EINVAL,
		     "min > max must be -EINVAL");
	cr_expect_eq(ridr_alloc_cyclic(&m, P(2), 10, 9, &id), -EINVAL);
	cr_expect_eq(__ridr_alloc(&m, P(2), 10, 9, &id, NULL), -EINVAL);
	cr_expect_eq(__ridr_alloc_cyclic(&m, P(2), 10, 9, &id, NULL), -EINVAL);
	cr_expect_eq(ridr_alloc(&m, P(2), 0, 9, NULL), -EINVAL);
	cr_expect_eq(ridr_alloc(NULL, P(2), 0, 9, &id), -EINVAL);
	cr_expect_eq(ridr_alloc_cyclic(NULL, P(2), 0, 9, &id), -EINVAL);
	cr_expect_eq(ridr_replace(NULL, P(2), 0, NULL), -EINVAL);
	cr_expect_eq(ridr_remove(NULL, 0, NULL), -EINVAL);
	cr_expect_eq(id, 99, "failed alloc wrote *idp");
	expect_same(&m, &s, "bad arguments");
	ridr_destroy(&m);
}

T(alloc_reports_enospc_when_range_full)
{
	struct ridr m;
	struct snap s;
	unsigned long id;

	ridr_init(&m);
	for (int i = 0; i < 3; i++)
		must_alloc(&m, P(i), 5, 7);
	take_snap(&m, &s);
	cr_expect_eq(ridr_alloc(&m, P(9), 5, 7, &id), -ENOSPC);
	cr_expect_eq(ridr_alloc_cyclic(&m, P(9), 5, 7, &id), -ENOSPC);
	expect_same(&m, &s, "-ENOSPC");
	cr_expect_eq(must_alloc(&m, P(9), 5, 8), 8);
	ridr_destroy(&m);
}

T(null_entry_reserves_id_until_replaced)
{
	struct ridr m;
	unsigned long id, r, next = 0;
	void *old = P(77);

	ridr_init(&m);
	r = must_alloc(&m, NULL, 0, 100);
	cr_expect_eq(r, 0);
	cr_expect(!ridr_is_empty(&m), "a reservation is an allocated id");
	cr_expect_eq(ridr_count(&m), 1);
	rk_rcu_read_lock();
	cr_expect_null(ridr_find(&m, r), "a reserved id reads as absent");
	cr_expect_null(ridr_get_next(&m, &next), "get_next skips reservations");
	rk_rcu_read_unlock();
	id = must_alloc(&m, P(1), 0, 100);
	cr_expect_eq(id, 1, "the reserved id must not be handed out again");
	cr_expect_eq(ridr_replace(&m, P(2), r, &old), 0);
	cr_expect_null(old, "the old entry of a reservation is NULL");
	rk_rcu_read_lock();
	cr_expect_eq(ridr_find(&m, r), P(2));
	rk_rcu_read_unlock();
	cr_expect_eq(ridr_replace(&m, NULL, r, &old), 0,
		     "replace with NULL turns it back into a reservation");
	cr_expect_eq(old, P(2));
	cr_expect_eq(ridr_remove(&m, r, &old), 0);
	cr_expect_null(old);
	cr_expect_eq(ridr_remove(&m, id, NULL), 0);
	cr_expect(ridr_is_empty(&m));
	ridr_destroy(&m);
}

T(replace_returns_old_entry_or_enoent)
{
	struct ridr m;
	struct snap s;
	void *old = NULL;
	unsigned long id;

	ridr_init(&m);
	id = must_alloc(&m, P(1), 0, 100);
	cr_expect_eq(ridr_replace(&m, P(2), id, &old), 0);
	cr_expect_eq(old, P(1));
	cr_expect_eq(ridr_replace(&m, P(3), id, NULL), 0, "oldp may be NULL");
	take_snap(&m, &s);
	old = P(55);
	cr_expect_eq(ridr_replace(&m, P(4), id + 1, &old), -ENOENT,
		     "replace of a free id in an existing leaf");
	cr_expect_eq(ridr_replace(&m, P(4), 1UL << 40, &old), -ENOENT,
		     "replace of an id beyond the tree");
	cr_expect_eq(old, P(55), "failed replace wrote *oldp");
	expect_same(&m, &s, "failed replace");
	rk_rcu_read_lock();
	cr_expect_eq(ridr_find(&m, id), P(3));
	rk_rcu_read_unlock();
	ridr_destroy(&m);
}

T(remove_returns_entry_then_enoent)
{
	struct ridr m;
	struct snap s;
	void *old = NULL;
	unsigned long a, b;

	ridr_init(&m);
	a = must_alloc(&m, P(1), 0, 100);
	b = must_alloc(&m, P(2), 0, 100);
	cr_expect_eq(ridr_remove(&m, a, &old), 0);
	cr_expect_eq(old, P(1));
	take_snap(&m, &s);
	cr_expect_eq(ridr_remove(&m, a, &old), -ENOENT, "double remove");
	cr_expect_eq(ridr_remove(&m, 63, &old), -ENOENT);
	cr_expect_eq(ridr_remove(&m, ULONG_MAX, &old), -ENOENT);
	expect_same(&m, &s, "failed remove");
	rk_rcu_read_lock();
	cr_expect_null(ridr_find(&m, a));
	cr_expect_eq(ridr_find(&m, b), P(2));
	rk_rcu_read_unlock();
	cr_expect_eq(ridr_remove(&m, b, NULL), 0);
	cr_expect(ridr_is_empty(&m));
	cr_expect_leq(ridr_memory(&m), RIDR_NODE_BYTES,
		      "an emptied map of two ids keeps one object");
	ridr_destroy(&m);
}

T(get_next_walks_in_id_order)
{
	static const unsigned long ids[] = { 0, 1, 63, 64, 65, 4095, 4096,
					     1UL << 20, (1UL << 36) + 5,
					     ULONG_MAX - 1, ULONG_MAX };
	const int n = sizeof(ids) / sizeof(ids[0]);
	struct ridr m;
	unsigned long id;
	void *e;
	int i;

	ridr_init(&m);
	for (i = n - 1; i >= 0; i--)
		cr_assert_eq(must_alloc(&m, P(i), ids[i], ids[i]), ids[i]);
	must_alloc(&m, NULL, 2, 2);	/* a reservation in between */
	rk_rcu_read_lock();
	i = 0;
	ridr_for_each(&m, e, id) {
		cr_assert_lt(i, n, "iteration went past the last entry");
		cr_expect_eq(id, ids[i], "entry %d: id %lu, expected %lu", i,
			     id, ids[i]);
		cr_expect_eq(e, P(i));
		i++;
	}
	cr_expect_eq(i, n, "visited %d of %d entries", i, n);
	for (i = 0; i < n; i++) {
		/* From just after each entry, the next one. */
		id = ids[i] + 1;
		e = ids[i] == ULONG_MAX ? NULL : ridr_get_next(&m, &id);
		if (i + 1 < n) {
			cr_expect_eq(e, P(i + 1));
			cr_expect_eq(id, ids[i + 1]);
		} else {
			cr_expect_null(e);
		}
	}
	id = 66;
	cr_expect_eq(ridr_get_next(&m, &id), P(5));
	cr_expect_eq(id, 4095);
	rk_rcu_read_unlock();
	ridr_destroy(&m);
}

/*
 * SysV ipc's pattern: cyclic ids below 64, created and removed, so that
 * the map is a root bucket whose records are mostly tombstones (removed
 * ids kept until the next copy).  ridr_get_next() from every start must
 * find the first live id at or after it (a model: live[]), skipping the
 * tombstones on both sides of the start; an emptied map answers NULL
 * with *idp unchanged, and finds the next id allocated after that.
 */
T(get_next_in_a_bucket_of_tombstones)
{
	bool live[64] = { false };
	struct ridr m;
	unsigned long id, lo;
	int round;
	void *e;

	ridr_init(&m);
	for (round = 0; round < 200; round++) {
		/* Every seventh id allocated stays live to the end. */
		cr_assert_eq(ridr_alloc_cyclic(&m, P(round), 0, 63, &id), 0);
		live[id] = true;
		if (round % 7) {
			cr_assert_eq(ridr_remove(&m, id, NULL), 0);
			live[id] = false;
		}
		rk_rcu_read_lock();
		for (lo = 0; lo <= 64; lo++) {
			unsigned long want = lo, got = lo;

			while (want < 64 && !live[want])
				want++;
			e = ridr_get_next(&m, &got);
			if (want == 64) {
				cr_assert_null(e, "round %d: from %lu found %lu",
					       round, lo, got);
				cr_assert_eq(got, lo);
			} else {
				cr_assert_not_null(e, "round %d: from %lu "
						   "missed %lu", round, lo,
						   want);
				cr_assert_eq(got, want, "round %d: from %lu "
					     "found %lu, expected %lu", round,
					     lo, got, want);
			}
		}
		rk_rcu_read_unlock();
	}
	for (id = 0; id < 64; id++)
		if (live[id])
			cr_assert_eq(ridr_remove(&m, id, NULL), 0);
	cr_expect(ridr_is_empty(&m));
	id = 0;
	rk_rcu_read_lock();
	cr_expect_null(ridr_get_next(&m, &id), "an emptied map has no entry");
	rk_rcu_read_unlock();
	cr_expect_eq(id, 0);
	cr_assert_eq(ridr_alloc_cyclic(&m, P(1), 0, 63, &lo), 0);
	rk_rcu_read_lock();
	cr_expect_eq(ridr_get_next(&m, &id), P(1));
	rk_rcu_read_unlock();
	cr_expect_eq(id, lo);
	ridr_destroy(&m);
}

T(ids_at_the_top_of_the_range)
{
	struct ridr m;
	unsigned long id;
	void *old;

	ridr_init(&m);
	cr_expect_eq(must_alloc(&m, P(1), ULONG_MAX - 2, ULONG_MAX),
		     ULONG_MAX - 2);
	cr_expect_eq(must_alloc(&m, P(2), ULONG_MAX - 2, ULONG_MAX),
		     ULONG_MAX - 1);
	cr_expect_eq(must_alloc(&m, P(3), ULONG_MAX - 2, ULONG_MAX), ULONG_MAX);
	cr_expect_eq(ridr_alloc(&m, P(4), ULONG_MAX - 2, ULONG_MAX, &id),
		     -ENOSPC);
	cr_expect_eq(must_alloc(&m, P(5), 0, ULONG_MAX), 0);
	rk_rcu_read_lock();
	cr_expect_eq(ridr_find(&m, ULONG_MAX), P(3));
	cr_expect_null(ridr_find(&m, ULONG_MAX - 3));
	id = ULONG_MAX;
	cr_expect_eq(ridr_get_next(&m, &id), P(3));
	rk_rcu_read_unlock();
	cr_expect_eq(ridr_remove(&m, ULONG_MAX, &old), 0);
	cr_expect_eq(old, P(3));
	cr_expect_eq(must_alloc(&m, P(6), ULONG_MAX - 2, ULONG_MAX),
		     ULONG_MAX, "the freed top id is handed out again");
	cr_expect_eq(must_alloc(&m, P(7), 1, ULONG_MAX), 1);
	ridr_destroy(&m);
}

T(full_height_tree_allocates_past_every_level)
{
	struct ridr m;
	unsigned long id;

	ridr_init(&m);
	/* One id per level boundary: each forces the tree to grow. */
	for (unsigned int bits = 0; bits < 64; bits += 6) {
		unsigned long want = 1UL << bits;

		cr_expect_eq(must_alloc(&m, P(bits), want, ULONG_MAX), want,
			     "first free id >= 2^%u", bits);
	}
	rk_rcu_read_lock();
	for (unsigned int bits = 0; bits < 64; bits += 6)
		cr_expect_eq(ridr_find(&m, 1UL << bits), P(bits));
	rk_rcu_read_unlock();
	cr_expect_eq(ridr_count(&m), 11);
	/* Remove in an order that shrinks the tree level by level. */
	for (int bits = 60; bits >= 0; bits -= 6) {
		cr_expect_eq(ridr_remove(&m, 1UL << bits, NULL), 0);
		id = 0;
		rk_rcu_read_lock();
		if (bits)
			cr_expect_eq(ridr_get_next(&m, &id), P(0));
		rk_rcu_read_unlock();
	}
	cr_expect(ridr_is_empty(&m));
	cr_expect_leq(ridr_memory(&m), IDLE_BOUND,
		      "an emptied map keeps at most one path (%zu bytes)",
		      ridr_memory(&m));
	ridr_destroy(&m);
	cr_expect_eq(ridr_memory(&m), 0);
}

T(cyclic_moves_past_freed_ids_then_wraps)
{
	struct ridr m;
	unsigned long id;

	ridr_init(&m);
	for (unsigned long i = 0; i < 3; i++) {
		cr_assert_eq(ridr_alloc_cyclic(&m, P(i), 0, 3, &id), 0);
		cr_expect_eq(id, i);
	}
	cr_assert_eq(ridr_remove(&m, 0, NULL), 0);
	cr_assert_eq(ridr_alloc_cyclic(&m, P(3), 0, 3, &id), 0);
	cr_expect_eq(id, 3, "cyclic must not reuse 0 before wrapping");
	cr_assert_eq(ridr_alloc_cyclic(&m, P(4), 0, 3, &id), 0);
	cr_expect_eq(id, 0, "after 3 the cursor wraps to min");
	cr_expect_eq(ridr_alloc_cyclic(&m, P(5), 0, 3, &id), -ENOSPC);
	cr_expect_eq(ridr_get_cursor(&m), 1, "cursor is past the last id");
	ridr_lock(&m);
	__ridr_set_cursor(&m, 2);
	ridr_unlock(&m);
	cr_assert_eq(ridr_remove(&m, 1, NULL), 0);
	cr_assert_eq(ridr_alloc_cyclic(&m, P(6), 0, 3, &id), 0);
	cr_expect_eq(id, 1, "from cursor 2 the search wraps to the free 1");
	ridr_destroy(&m);
}

T(cyclic_wraps_at_ulong_max)
{
	struct ridr m;
	unsigned long id;

	ridr_init(&m);
	ridr_lock(&m);
	__ridr_set_cursor(&m, ULONG_MAX);
	ridr_unlock(&m);
	cr_assert_eq(ridr_alloc_cyclic(&m, P(1), 10, ULONG_MAX, &id), 0);
	cr_expect_eq(id, ULONG_MAX);
	cr_expect_eq(ridr_get_cursor(&m), 0, "cursor wraps to 0");
	cr_assert_eq(ridr_alloc_cyclic(&m, P(2), 10, ULONG_MAX, &id), 0);
	cr_expect_eq(id, 10, "cursor below min restarts at min");
	ridr_destroy(&m);
}

T(destroy_frees_every_node_after_a_grace_period)
{
	struct ridr m;
	unsigned long id;

	ridr_init(&m);
	for (unsigned long i = 0; i < 5000; i++)
		must_alloc(&m, P(i), 0, ULONG_MAX);
	must_alloc(&m, P(1), 1UL << 50, ULONG_MAX);
	cr_expect_gt(ridr_memory(&m), 0);
	ridr_destroy(&m);
	cr_expect(ridr_is_empty(&m));
	cr_expect_eq(ridr_count(&m), 0);
	cr_expect_eq(ridr_memory(&m), 0);
	cr_expect_eq(fx_live_after_grace(), 0, "destroy leaked nodes");
	/* Reusable after destroy. */
	cr_assert_eq(ridr_alloc(&m, P(1), 0, 5, &id), 0);
	cr_expect_eq(id, 0);
	ridr_destroy(&m);
}

T(memory_of_an_emptied_map_is_bounded)
{
	struct ridr m;
	struct rk_prng r;

	ridr_init(&m);
	rk_prng_seed(&r, 42);
	for (unsigned long i = 0; i < 20000; i++)
		must_alloc(&m, P(i), 0, ULONG_MAX);
	for (int i = 0; i < 2000; i++) {
		unsigned long want = rk_prng_below(&r, 1UL << 31);
		unsigned long id;

		cr_assert_eq(ridr_alloc(&m, P(i), want, ULONG_MAX, &id), 0);
	}
	cr_expect_gt(fx_live_after_grace(), 0);
	cr_expect_eq(rk_counting_alloc_live_bytes(&fx_alloc),
		     (long)ridr_memory(&m),
		     "ridr_memory() must match what the allocator saw");
	while (!ridr_is_empty(&m)) {
		unsigned long id = 0;
		void *e;

		rk_rcu_read_lock();
		e = ridr_get_next(&m, &id);
		rk_rcu_read_unlock();
		cr_assert_not_null(e);
		cr_assert_eq(ridr_remove(&m, id, NULL), 0);
	}
	cr_expect_leq(ridr_memory(&m), IDLE_BOUND,
		      "an emptied map keeps at most its root, one emptied "
		      "object with the nodes above it and its spares (%zu)",
		      ridr_memory(&m));
	fx_live_after_grace();
	cr_expect_eq(rk_counting_alloc_live_bytes(&fx_alloc),
		     (long)ridr_memory(&m),
		     "ridr_memory() must match what the allocator saw");
	ridr_destroy(&m);
	cr_expect_eq(fx_live_after_grace(), 0, "destroy freed everything");
}

T(preload_lets_a_spinlocked_caller_allocate_without_allocating)
{
	struct ridr m;
	struct ridr_preload pl = RIDR_PRELOAD_INIT;
	unsigned long id;
	long nodes_before;

	ridr_init(&m);
	cr_expect_eq(ridr_preload(NULL, &m, 10, RK_GFP_KERNEL), -EINVAL);
	cr_assert_eq(ridr_preload(&pl, &m, 1UL << 40, RK_GFP_KERNEL), 0);
	cr_expect_geq(pl.nr, 7, "an empty map needs 7 nodes for id 2^40");
	nodes_before = rk_counting_alloc_live_objects(&fx_alloc);
	fx_alloc.fail_all = true;	/* from now on nothing can allocate */
	ridr_lock(&m);
	cr_expect_eq(__ridr_alloc(&m, P(1), 1UL << 40, ULONG_MAX, &id, &pl),
		     0, "preloaded nodes must be enough");
	cr_expect_eq(id, 1UL << 40);
	ridr_unlock(&m);
	{
		/* Without a preload or spares, nothing can be inserted. */
		struct ridr other;
		unsigned long oid = 7;

		ridr_init(&other);
		ridr_lock(&other);
		cr_expect_eq(__ridr_alloc(&other, P(2), 5, 9, &oid, NULL),
			     -ENOMEM, "no preload, no allocation: must fail");
		ridr_unlock(&other);
		cr_expect_eq(oid, 7, "a failed allocation wrote *idp");
		cr_expect_eq(ridr_memory(&other), 0);
		ridr_destroy(&other);
	}
	fx_alloc.fail_all = false;
	cr_expect_eq(rk_counting_alloc_live_objects(&fx_alloc), nodes_before,
		     "no allocation happened under the lock");
	ridr_preload_end(&pl);
	cr_expect_eq(pl.nr, 0);
	cr_expect_eq(ridr_remove(&m, 1UL << 40, NULL), 0);
	ridr_destroy(&m);
}

/* ---- allocation failure injection ---- */

enum op { OP_ALLOC, OP_CYCLIC, OP_RAW, OP_PRELOAD, OP_INSERT, OP_STORE,
	  OP_RAW_INSERT, OP_RAW_STORE, OP_CYCLIC_WRAP };

/* A map holding ids 0..69, and its snapshot in *@s. */
static void map_of_70(struct ridr *m, struct snap *s)
{
	ridr_init(m);
	for (unsigned long i = 0; i < 70; i++)
		must_alloc(m, P(i), 0, ULONG_MAX);
	take_snap(m, s);
}

/*
 * Operation @op on @m: each inserts 2^40 + 3 into a map holding small
 * ids, which needs new root levels and a new path: several allocation
 * points.  The cyclic ones first move the cursor there (and take *@s
 * again).  *@id gets the id (0 until one is allocated).
 */
static int run_op(struct ridr *m, enum op op, struct snap *s,
		  unsigned long *id)
{
	struct ridr_preload pl = RIDR_PRELOAD_INIT;
	int ret;

	*id = 0;
	switch (op) {
	case OP_ALLOC:
		ret = ridr_alloc(m, P(99), (1UL << 40) + 3, ULONG_MAX,
				 id);
		break;
	case OP_CYCLIC:
		ridr_lock(m);
		__ridr_set_cursor(m, (1UL << 40) + 3);
		ridr_unlock(m);
		take_snap(m, s);
		ret = ridr_alloc_cyclic(m, P(99), 100, ULONG_MAX, id);
		break;
	case OP_RAW:
		ridr_lock(m);
		ret = __ridr_alloc(m, P(99), (1UL << 40) + 3,
				   ULONG_MAX, id, NULL);
		ridr_unlock(m);
		break;
	case OP_INSERT:
		ret = ridr_insert(m, (1UL << 40) + 3, P(99));
		*id = (1UL << 40) + 3;
		break;
	case OP_STORE: {
		void *old = P(7);

		ret = ridr_store(m, (1UL << 40) + 3, P(99), &old);
		*id = (1UL << 40) + 3;
		cr_expect_eq(old, ret ? P(7) : NULL,
			     "store's *oldp: untouched on failure, "
			     "NULL for a free id");
		break;
	}
	case OP_RAW_INSERT:
		ridr_lock(m);
		ret = __ridr_insert(m, (1UL << 40) + 3, P(99), NULL);
		ridr_unlock(m);
		*id = (1UL << 40) + 3;
		break;
	case OP_RAW_STORE:
		ridr_lock(m);
		ret = __ridr_store(m, (1UL << 40) + 3, P(99), NULL,
				   NULL);
		ridr_unlock(m);
		*id = (1UL << 40) + 3;
		break;
	case OP_CYCLIC_WRAP:
		ridr_lock(m);
		__ridr_set_cursor(m, (1UL << 40) + 3);
		ridr_unlock(m);
		take_snap(m, s);
		ret = ridr_alloc_cyclic_wrap(m, P(99), 100, ULONG_MAX,
					     id);
		break;
	default:
		ret = ridr_preload(&pl, m, ULONG_MAX, RK_GFP_KERNEL);
		if (!ret) {
			fx_alloc.fail_all = true;
			ridr_lock(m);
			ret = __ridr_alloc(m, P(99), (1UL << 40) + 3,
					   ULONG_MAX, id, &pl);
			ridr_unlock(m);
			fx_alloc.fail_all = false;
			cr_assert_eq(ret, 0, "a full preload ran short");
		}
		ridr_preload_end(&pl);
		break;
	}
	return ret;
}

/*
 * Make the k-th allocation fail for k = 1, 2, ... until the operation
 * succeeds without hitting the failure; every failure must return
 * -ENOMEM and leave the map exactly as it was, with nothing leaked.
 */
static void inject(enum op op)
{
	for (long k = 1;; k++) {
		struct ridr m;
		struct snap s;
		unsigned long id;
		long live;
		int ret;

		map_of_70(&m, &s);
		/* Earlier iterations' frees are deferred: settle them. */
		live = fx_live_after_grace();
		/* The calls fall back after a failed allocation (a bucket
		 * in a node's memory, a sleeping retry): every allocation
		 * from the k-th on fails.  A preload fails at the k-th. */
		if (op == OP_PRELOAD)
			fx_alloc.fail_at = k;
		else
			fx_alloc.fail_from = k;
		ret = run_op(&m, op, &s, &id);
		fx_alloc.fail_at = 0;
		fx_alloc.fail_from = 0;
		fx_alloc.fail_all = false;
		if (ret == 0) {
			cr_expect_eq(id, (1UL << 40) + 3);
			cr_expect_gt(k, 1, "the operation never allocated?");
			ridr_destroy(&m);
			break;
		}
		cr_expect_eq(ret, -ENOMEM, "failure %ld: got %d", k, ret);
		expect_same(&m, &s, "a failed allocation");
		cr_expect_eq(fx_live_after_grace(), live,
			     "failure %ld leaked or freed nodes", k);
		ridr_destroy(&m);
		cr_assert_lt(k, 100, "operation keeps failing");
	}
}

T(alloc_failure_leaves_map_unchanged)
{
	inject(OP_ALLOC);
}

T(alloc_cyclic_failure_leaves_map_unchanged)
{
	inject(OP_CYCLIC);
}

T(raw_alloc_failure_leaves_map_unchanged)
{
	inject(OP_RAW);
}

T(preload_failure_leaves_map_unchanged)
{
	inject(OP_PRELOAD);
}

T(insert_failure_leaves_map_unchanged)
{
	inject(OP_INSERT);
}

T(store_failure_leaves_map_unchanged)
{
	inject(OP_STORE);
}

T(raw_insert_failure_leaves_map_unchanged)
{
	inject(OP_RAW_INSERT);
}

T(raw_store_failure_leaves_map_unchanged)
{
	inject(OP_RAW_STORE);
}

T(alloc_cyclic_wrap_failure_leaves_map_unchanged)
{
	inject(OP_CYCLIC_WRAP);
}

/*
 * A locked insertion whose first try (RK_GFP_NOWAIT under the lock)
 * fails drops the lock, preloads and tries again: with every allocation
 * failing it asks the allocator for more than the caller-serialized
 * call, which has no retry, and still reports -ENOMEM with the map
 * unchanged.
 */
static long allocs_when_all_fail(struct ridr *m, enum op op,
				 struct snap *s, int *ret)
{
	long a0 = __atomic_load_n(&fx_alloc.total_allocs, __ATOMIC_RELAXED);
	unsigned long id;

	fx_alloc.fail_all = true;
	*ret = run_op(m, op, s, &id);
	fx_alloc.fail_all = false;
	return __atomic_load_n(&fx_alloc.total_allocs, __ATOMIC_RELAXED) - a0;
}

T(locked_insertions_retry_with_a_preload)
{
	static const enum op ops[] = { OP_ALLOC, OP_CYCLIC, OP_CYCLIC_WRAP,
				       OP_INSERT, OP_STORE };
	struct ridr m;
	struct snap s;
	long raw;
	int ret;

	map_of_70(&m, &s);
	raw = allocs_when_all_fail(&m, OP_RAW, &s, &ret);
	cr_assert_eq(ret, -ENOMEM);
	cr_assert_gt(raw, 0, "the raw call asked for nothing");
	for (unsigned int i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		long locked = allocs_when_all_fail(&m, ops[i], &s, &ret);

		cr_expect_eq(ret, -ENOMEM, "op %u: got %d", i, ret);
		cr_expect_gt(locked, raw,
			     "op %u asked for %ld allocations, the raw call "
			     "%ld: no retry with a preload", i, locked, raw);
		expect_same(&m, &s, "a locked insertion that failed");
	}
	ridr_destroy(&m);
}
