// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ridr's porting API (issue 12): conditional updates (ridr_cmpxchg,
 * ridr_remove_if), insertion and store at a chosen id (ridr_insert,
 * ridr_store), bounded and callback iteration (ridr_get_next_range,
 * ridr_for_each_range, ridr_for_each_fn), the wrap report of cyclic
 * allocation (ridr_alloc_cyclic_wrap), allocation flags
 * (ridr_set_flags), the writer's lookup (ridr_find_locked) and the
 * map's own read-side lock (ridr_read_lock).  Every error path leaves
 * the map as it was.
 */
#include <limits.h>

#include "tests/lib/ridr_fixture.h"

#define T(name, ...) Test(ridr_update, name, .init = fx_setup, .fini = fx_teardown, ##__VA_ARGS__)

static void *find(struct ridr *m, unsigned long id)
{
	void *e;

	ridr_read_lock(m);
	e = ridr_find(m, id);
	ridr_read_unlock(m);
	return e;
}

/* ---- conditional updates ---- */

T(cmpxchg_replaces_only_the_expected_entry)
{
	struct ridr m;
	unsigned long id;
	void *cur = P(77);

	ridr_init(&m);
	id = must_alloc(&m, P(1), 0, 100);
	cr_expect_eq(ridr_cmpxchg(&m, id, P(2), P(3), &cur), -EBUSY,
		     "cmpxchg with a stale old entry must fail");
	cr_expect_eq(cur, P(1), "-EBUSY reports the current entry");
	cr_expect_eq(find(&m, id), P(1), "-EBUSY changed the entry");
	cr_expect_eq(ridr_cmpxchg(&m, id, P(1), P(3), &cur), 0);
	cr_expect_eq(cur, P(1), "success reports the old entry");
	cr_expect_eq(find(&m, id), P(3));
	/* NULL new: the id becomes a reservation, still allocated. */
	cr_expect_eq(ridr_cmpxchg(&m, id, P(3), NULL, NULL), 0);
	cr_expect_null(find(&m, id));
	cr_expect_eq(ridr_count(&m), 1, "a reservation stays allocated");
	cr_expect_eq(ridr_alloc(&m, P(9), id, id, &id), -ENOSPC,
		     "a reservation made by cmpxchg is not handed out");
	/* NULL old matches the reservation. */
	cr_expect_eq(ridr_cmpxchg(&m, id, NULL, P(4), &cur), 0);
	cr_expect_null(cur);
	cr_expect_eq(find(&m, id), P(4));
	/* Free ids are never inserted by cmpxchg. */
	cur = P(77);
	cr_expect_eq(ridr_cmpxchg(&m, 5000, NULL, P(5), &cur), -ENOENT);
	cr_expect_null(cur, "-ENOENT reports NULL");
	cr_expect_null(find(&m, 5000));
	cr_expect_eq(ridr_count(&m), 1);
	cr_expect_eq(ridr_cmpxchg(NULL, id, P(4), P(5), &cur), -EINVAL);
	ridr_destroy(&m);
}

T(cmpxchg_works_in_leaves_and_buckets)
{
	struct ridr m;

	ridr_init(&m);
	/* 0..99 fill full leaves; 2^40 + i sit in buckets. */
	for (unsigned long i = 0; i < 100; i++) {
		cr_assert_eq(ridr_insert(&m, i, P(i)), 0);
		cr_assert_eq(ridr_insert(&m, (1UL << 40) + i * 1000, P(i)), 0);
	}
	for (unsigned long i = 0; i < 100; i++) {
		unsigned long far = (1UL << 40) + i * 1000;

		cr_expect_eq(ridr_cmpxchg(&m, i, P(i), P(i + 500), NULL), 0);
		cr_expect_eq(ridr_cmpxchg(&m, far, P(i + 1), P(1), NULL),
			     -EBUSY);
		cr_expect_eq(ridr_cmpxchg(&m, far, P(i), P(i + 500), NULL), 0);
		cr_expect_eq(find(&m, i), P(i + 500));
		cr_expect_eq(find(&m, far), P(i + 500));
	}
	ridr_lock(&m);
	cr_expect_eq(__ridr_cmpxchg(&m, 3, P(503), P(3), NULL), 0);
	ridr_unlock(&m);
	cr_expect_eq(find(&m, 3), P(3));
	ridr_destroy(&m);
}

T(remove_if_removes_only_the_expected_entry)
{
	struct ridr m;
	struct snap s;
	unsigned long id;

	ridr_init(&m);
	for (unsigned long i = 0; i < 40; i++)
		must_alloc(&m, P(i), 0, ULONG_MAX);
	id = must_alloc(&m, NULL, 1UL << 33, ULONG_MAX);
	take_snap(&m, &s);
	cr_expect_eq(ridr_remove_if(&m, 7, P(8)), -EBUSY);
	cr_expect_eq(ridr_remove_if(&m, 7000, P(8)), -ENOENT);
	cr_expect_eq(ridr_remove_if(&m, id, P(8)), -EBUSY,
		     "a reservation holds NULL, not P(8)");
	cr_expect_eq(ridr_remove_if(NULL, 7, P(7)), -EINVAL);
	expect_same(&m, &s, "a failed remove_if");
	cr_expect_eq(ridr_remove_if(&m, 7, P(7)), 0);
	cr_expect_null(find(&m, 7));
	cr_expect_eq(ridr_remove_if(&m, 7, P(7)), -ENOENT, "removed once");
	cr_expect_eq(ridr_remove_if(&m, id, NULL), 0,
		     "NULL expected matches a reservation");
	cr_expect_eq(ridr_count(&m), 39);
	ridr_lock(&m);
	cr_expect_eq(__ridr_remove_if(&m, 8, P(8)), 0);
	ridr_unlock(&m);
	cr_expect_eq(must_alloc(&m, P(70), 0, ULONG_MAX), 7,
		     "the removed id is free again");
	for (unsigned long i = 0; i < 40; i++)
		ridr_remove(&m, i, NULL);
	cr_expect(ridr_is_empty(&m));
	ridr_destroy(&m);
}

/* ---- insert and store ---- */

T(insert_takes_the_given_id_or_reports_ebusy)
{
	struct ridr m;
	struct snap s;
	static const unsigned long ids[] = {
		0, 1, 63, 64, 4095, 4096, 1UL << 20, (1UL << 31) - 1,
		1UL << 40, ULONG_MAX - 1, ULONG_MAX,
	};
	unsigned long n = sizeof(ids) / sizeof(ids[0]);

	ridr_init(&m);
	for (unsigned long i = 0; i < n; i++)
		cr_expect_eq(ridr_insert(&m, ids[i], P(i)), 0,
			     "insert %lu", ids[i]);
	take_snap(&m, &s);
	for (unsigned long i = 0; i < n; i++)
		cr_expect_eq(ridr_insert(&m, ids[i], P(99)), -EBUSY,
			     "insert of the taken id %lu", ids[i]);
	cr_expect_eq(ridr_insert(NULL, 5, P(1)), -EINVAL);
	expect_same(&m, &s, "a refused insert");
	for (unsigned long i = 0; i < n; i++)
		cr_expect_eq(find(&m, ids[i]), P(i), "find %lu", ids[i]);
	/* NULL reserves: taken for insert and alloc, absent for find. */
	cr_expect_eq(ridr_insert(&m, 500, NULL), 0);
	cr_expect_eq(ridr_insert(&m, 500, P(1)), -EBUSY);
	cr_expect_null(find(&m, 500));
	cr_expect_eq(ridr_replace(&m, P(5), 500, NULL), 0);
	cr_expect_eq(find(&m, 500), P(5));
	ridr_lock(&m);
	cr_expect_eq(__ridr_insert(&m, 501, P(6), NULL), 0);
	cr_expect_eq(__ridr_insert(&m, 501, P(6), NULL), -EBUSY);
	ridr_unlock(&m);
	cr_expect_eq(ridr_count(&m), n + 2);
	ridr_destroy(&m);
}

T(insert_into_a_full_leaf_slot_allocates_nothing)
{
	struct ridr m;
	long before;

	ridr_init(&m);
	for (unsigned long i = 0; i < 64; i++)
		cr_assert_eq(ridr_insert(&m, i, P(i)), 0);
	cr_assert_eq(ridr_remove(&m, 10, NULL), 0);
	before = fx_alloc.total_allocs;
	cr_expect_eq(ridr_insert(&m, 10, P(10)), 0);
	cr_expect_eq(fx_alloc.total_allocs, before,
		     "a free slot of a full leaf needs no object");
	ridr_destroy(&m);
}

T(insert_with_a_preload_cannot_fail)
{
	struct ridr m;
	struct ridr_preload pl = RIDR_PRELOAD_INIT;

	ridr_init(&m);
	for (unsigned long i = 0; i < 70; i++)
		must_alloc(&m, P(i), 0, ULONG_MAX);
	cr_assert_eq(ridr_preload(&pl, &m, ULONG_MAX - 5, RK_GFP_KERNEL), 0);
	fx_alloc.fail_all = true;
	ridr_lock(&m);
	cr_expect_eq(__ridr_insert(&m, ULONG_MAX - 5, P(1), &pl), 0);
	ridr_unlock(&m);
	fx_alloc.fail_all = false;
	ridr_preload_end(&pl);
	cr_expect_eq(find(&m, ULONG_MAX - 5), P(1));
	ridr_destroy(&m);
}

T(store_inserts_or_overwrites)
{
	struct ridr m;
	void *old = P(1234);

	ridr_init(&m);
	cr_expect_eq(ridr_store(&m, 77, P(1), &old), 0);
	cr_expect_null(old, "a free id had no entry");
	cr_expect_eq(find(&m, 77), P(1));
	cr_expect_eq(ridr_store(&m, 77, P(2), &old), 0);
	cr_expect_eq(old, P(1), "store returns the overwritten entry");
	cr_expect_eq(find(&m, 77), P(2));
	cr_expect_eq(ridr_count(&m), 1, "an overwrite allocates no id");
	cr_expect_eq(ridr_store(&m, 77, NULL, &old), 0);
	cr_expect_eq(old, P(2));
	cr_expect_null(find(&m, 77));
	cr_expect_eq(ridr_count(&m), 1, "store NULL keeps a reservation");
	cr_expect_eq(ridr_store(&m, 77, P(3), &old), 0);
	cr_expect_null(old, "a reservation had no entry");
	cr_expect_eq(ridr_store(&m, 1UL << 50, P(4), NULL), 0);
	cr_expect_eq(ridr_store(&m, 1UL << 50, P(5), NULL), 0);
	cr_expect_eq(find(&m, 1UL << 50), P(5));
	ridr_lock(&m);
	cr_expect_eq(__ridr_store(&m, 1UL << 50, P(6), &old, NULL), 0);
	ridr_unlock(&m);
	cr_expect_eq(old, P(5));
	cr_expect_eq(ridr_store(NULL, 1, P(1), &old), -EINVAL);
	cr_expect_eq(ridr_count(&m), 2);
	ridr_destroy(&m);
}

/* ---- cyclic wrap report ---- */

T(cyclic_wrap_reports_one_when_the_cursor_wraps)
{
	struct ridr m;
	unsigned long id;

	ridr_init(&m);
	cr_expect_eq(ridr_alloc_cyclic_wrap(&m, P(1), 0, 3, &id), 0);
	cr_expect_eq(id, 0);
	cr_expect_eq(ridr_alloc_cyclic_wrap(&m, P(1), 0, 3, &id), 0);
	cr_expect_eq(ridr_alloc_cyclic_wrap(&m, P(1), 0, 3, &id), 0);
	cr_expect_eq(id, 2);
	cr_expect_eq(ridr_remove(&m, 0, NULL), 0);
	cr_expect_eq(ridr_alloc_cyclic_wrap(&m, P(1), 0, 3, &id), 0);
	cr_expect_eq(id, 3, "no wrap while [cursor, max] has room");
	cr_expect_eq(ridr_alloc_cyclic_wrap(&m, P(1), 0, 3, &id), 1,
		     "the cursor passed max: the next id is a wrap");
	cr_expect_eq(id, 0);
	cr_expect_eq(ridr_remove(&m, 2, NULL), 0);
	cr_expect_eq(ridr_alloc_cyclic_wrap(&m, P(1), 0, 3, &id), 0,
		     "2 is after the cursor (1): no wrap");
	cr_expect_eq(id, 2);
	cr_expect_eq(ridr_remove(&m, 1, NULL), 0);
	cr_expect_eq(ridr_alloc_cyclic_wrap(&m, P(1), 0, 3, &id), 1,
		     "[3, 3] full: wraps to 1");
	cr_expect_eq(id, 1);
	cr_expect_eq(ridr_alloc_cyclic_wrap(&m, P(1), 0, 3, &id), -ENOSPC);
	/* The old call reports 0 for the same wraps. */
	cr_expect_eq(ridr_remove(&m, 1, NULL), 0);
	cr_expect_eq(ridr_alloc_cyclic(&m, P(1), 0, 3, &id), 0);
	cr_expect_eq(id, 1);
	/* A cursor below min is a restart, not a wrap. */
	ridr_lock(&m);
	__ridr_set_cursor(&m, 0);
	ridr_unlock(&m);
	cr_expect_eq(ridr_alloc_cyclic_wrap(&m, P(1), 100, 200, &id), 0);
	cr_expect_eq(id, 100);
	ridr_destroy(&m);
}

T(cyclic_wrap_reports_the_wrap_past_ulong_max)
{
	struct ridr m;
	unsigned long id;

	ridr_init(&m);
	ridr_lock(&m);
	__ridr_set_cursor(&m, ULONG_MAX);
	cr_expect_eq(__ridr_alloc_cyclic_wrap(&m, P(1), 0, ULONG_MAX, &id,
					      NULL), 0);
	cr_expect_eq(id, ULONG_MAX);
	cr_expect_eq(ridr_get_cursor(&m), 0, "the cursor went round to 0");
	cr_expect_eq(__ridr_alloc_cyclic_wrap(&m, P(1), 0, ULONG_MAX, &id,
					      NULL), 1,
		     "0 after ULONG_MAX is a wrap");
	cr_expect_eq(id, 0);
	cr_expect_eq(__ridr_alloc_cyclic_wrap(&m, P(1), 0, ULONG_MAX, &id,
					      NULL), 0, "reported once");
	cr_expect_eq(id, 1);
	/* set_cursor forgets a pending wrap */
	__ridr_set_cursor(&m, ULONG_MAX - 1);
	cr_expect_eq(__ridr_alloc_cyclic_wrap(&m, P(1), 0, ULONG_MAX, &id,
					      NULL), 0);
	cr_expect_eq(id, ULONG_MAX - 1);
	__ridr_set_cursor(&m, 5);
	cr_expect_eq(__ridr_alloc_cyclic_wrap(&m, P(1), 0, ULONG_MAX, &id,
					      NULL), 0);
	cr_expect_eq(id, 5);
	ridr_unlock(&m);
	ridr_destroy(&m);
}

/* ---- flags ---- */

T(set_flags_accepts_known_flags_only)
{
	struct ridr m;
	unsigned long id;

	ridr_init(&m);
	cr_expect_eq(ridr_set_flags(&m, RIDR_ACCOUNT | RIDR_ATOMIC), 0);
	cr_expect_eq(ridr_set_flags(&m, 0x80), -EINVAL);
	cr_expect_eq(ridr_set_flags(NULL, 0), -EINVAL);
	cr_expect_eq(m.flags, RIDR_ACCOUNT | RIDR_ATOMIC,
		     "a refused call changed the flags");
	/* An atomic, accounted map works like any other. */
	for (unsigned long i = 0; i < 300; i++)
		must_alloc(&m, P(i), i * 1000, ULONG_MAX);
	cr_expect_eq(ridr_alloc_cyclic(&m, P(1), 0, ULONG_MAX, &id), 0);
	fx_alloc.fail_from = 1;
	cr_expect_eq(ridr_insert(&m, 1UL << 60, P(1)), -ENOMEM,
		     "the atomic retry fails like the sleeping one here");
	fx_alloc.fail_from = 0;
	fx_alloc.fail_all = false;
	cr_expect_eq(ridr_insert(&m, 1UL << 60, P(1)), 0);
	ridr_destroy(&m);
}

/* Userspace has no lockdep: naming the writers' lock changes nothing
 * (the kernel's test_ridr checks the lockdep side). */
T(set_external_lock_is_a_no_op_here)
{
	static rk_spinlock_t caller_lock = RK_SPINLOCK_INIT;
	struct ridr m, before;
	unsigned long id;

	ridr_init(&m);
	before = m;
	ridr_set_external_lock(&m, &caller_lock);
	cr_expect_eq(memcmp(&m, &before, sizeof(m)), 0,
		     "ridr_set_external_lock() changed the map");
	rk_spin_lock(&caller_lock);
	cr_expect_eq(__ridr_alloc(&m, P(1), 0, 10, &id, NULL), 0);
	cr_expect_eq(__ridr_remove(&m, id, NULL), 0);
	rk_spin_unlock(&caller_lock);
	ridr_destroy(&m);
}

/* ---- writer lookup, read lock ---- */

T(find_locked_sees_what_find_sees)
{
	struct ridr m;

	ridr_init(&m);
	for (unsigned long i = 0; i < 200; i++)
		cr_assert_eq(ridr_insert(&m, i * 977, i % 5 ? P(i) : NULL), 0);
	ridr_lock(&m);
	for (unsigned long i = 0; i < 200 * 977; i += 13) {
		void *a = ridr_find_locked(&m, i);

		cr_expect_eq(a, find(&m, i), "find_locked(%lu)", i);
	}
	cr_expect_null(ridr_find_locked(&m, ULONG_MAX));
	cr_expect_null(ridr_find_locked(NULL, 1));
	ridr_unlock(&m);
	ridr_destroy(&m);
}

T(read_lock_uses_the_maps_flavor)
{
	static const rk_rcu_flavor_t *const fl[] = {
		RK_RCU_FLAVOR_MEMB, RK_RCU_FLAVOR_MB, RK_RCU_FLAVOR_QSBR,
		RK_RCU_FLAVOR_BP,
	};

	for (unsigned int f = 0; f < 4; f++) {
		struct ridr m;

		if (f)	/* the fixture registered with memb */
			rk_rcu_register_thread(fl[f]);
		ridr_init_flavor(&m, fl[f]);
		cr_assert_eq(ridr_insert(&m, 3, P(3)), 0);
		ridr_read_lock(&m);
		ridr_read_lock(&m);	/* nests */
		cr_expect_eq(ridr_find(&m, 3), P(3));
		ridr_read_unlock(&m);
		ridr_read_unlock(&m);
		ridr_destroy(&m);
		/* The map's frees go through its own flavor. */
		rk_rcu_barrier(fl[f]);
		if (f)
			rk_rcu_unregister_thread(fl[f]);
	}
}

/* ---- bounded and callback iteration ---- */

T(get_next_range_stops_at_last)
{
	struct ridr m;
	unsigned long id;

	ridr_init(&m);
	for (unsigned long i = 10; i < 20; i++)
		cr_assert_eq(ridr_insert(&m, i, P(i)), 0);
	cr_assert_eq(ridr_insert(&m, 1UL << 40, P(40)), 0);
	ridr_read_lock(&m);
	id = 0;
	cr_expect_eq(ridr_get_next_range(&m, &id, 12), P(10));
	cr_expect_eq(id, 10);
	id = 15;
	cr_expect_eq(ridr_get_next_range(&m, &id, 15), P(15));
	id = 20;
	cr_expect_null(ridr_get_next_range(&m, &id, (1UL << 40) - 1),
		       "nothing in [20, 2^40)");
	cr_expect_eq(id, 20, "*idp unchanged when nothing is found");
	cr_expect_eq(ridr_get_next_range(&m, &id, 1UL << 40), P(40));
	cr_expect_eq(id, 1UL << 40);
	id = 5;
	cr_expect_null(ridr_get_next_range(&m, &id, 4), "first > last");
	ridr_read_unlock(&m);
	ridr_destroy(&m);
}

T(for_each_range_visits_exactly_the_range)
{
	struct ridr m;
	unsigned long id, n = 0, last_seen = 0;
	void *e;

	ridr_init(&m);
	for (unsigned long i = 0; i < 5000; i += 3)
		cr_assert_eq(ridr_insert(&m, i, P(i)), 0);
	cr_assert_eq(ridr_insert(&m, ULONG_MAX, P(1)), 0);
	ridr_read_lock(&m);
	ridr_for_each_range(&m, e, id, 100, 200) {
		cr_expect_geq(id, 100);
		cr_expect_leq(id, 200);
		cr_expect_eq(e, P(id));
		cr_expect_eq(id % 3, 0);
		n++;
	}
	cr_expect_eq(n, 33, "ids 102..198 step 3");
	n = 0;
	ridr_for_each_range(&m, e, id, 4990, ULONG_MAX) {
		n++;
		last_seen = id;
	}
	cr_expect_eq(n, 4, "4992, 4995, 4998, ULONG_MAX");
	cr_expect_eq(last_seen, ULONG_MAX, "the loop ends at ULONG_MAX");
	n = 0;
	ridr_for_each_range(&m, e, id, ULONG_MAX, ULONG_MAX)
		n++;
	cr_expect_eq(n, 1);
	ridr_read_unlock(&m);
	ridr_destroy(&m);
}

struct visit {
	unsigned long n, sum, stop_at;
};

static int visit_fn(unsigned long id, void *entry, void *data)
{
	struct visit *v = data;

	cr_expect_eq(entry, P(id));
	v->n++;
	v->sum += id;
	return id == v->stop_at ? 42 : 0;
}

T(for_each_fn_visits_every_entry_and_stops_on_request)
{
	struct ridr m;
	struct visit v = { 0, 0, ULONG_MAX };

	ridr_init(&m);
	ridr_read_lock(&m);
	cr_expect_eq(ridr_for_each_fn(&m, visit_fn, &v), 0);
	ridr_read_unlock(&m);
	cr_expect_eq(v.n, 0);
	for (unsigned long i = 1; i <= 100; i++)
		cr_assert_eq(ridr_insert(&m, i * i, P(i * i)), 0);
	cr_assert_eq(ridr_insert(&m, 7, NULL), 0);	/* skipped */
	ridr_read_lock(&m);
	cr_expect_eq(ridr_for_each_fn(&m, visit_fn, &v), 0);
	cr_expect_eq(v.n, 100);
	cr_expect_eq(v.sum, 100UL * 101 * 201 / 6);
	v = (struct visit){ 0, 0, 25 };
	cr_expect_eq(ridr_for_each_fn(&m, visit_fn, &v), 42,
		     "the callback's non-zero return ends the walk");
	cr_expect_eq(v.n, 5);
	cr_expect_eq(ridr_for_each_fn(&m, NULL, &v), -EINVAL);
	ridr_read_unlock(&m);
	ridr_destroy(&m);
}
