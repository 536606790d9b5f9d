// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ridr's object kinds and the transitions between them (ridr/write.c,
 * W4-W10), seen from outside: every id stays findable, in order, with its
 * entry or reservation, across each transition; the memory each kind
 * costs (ridr_memory(), checked against the allocator); and the
 * allocations (through the counting allocator hook) that steady churn
 * must not make.  Plus the preload guarantee when the tree shrinks
 * between ridr_preload() and the insertion.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/ridr_fixture.h"

#define T(name, ...) Test(ridr_transitions, name, .init = fx_setup, .fini = fx_teardown, ##__VA_ARGS__)

/* What a full node costs: its allocation (ridr_memory() counts it). */
#define NODE RIDR_NODE_BYTES

static void must(struct ridr *m, void *p, unsigned long min, unsigned long max,
		 unsigned long want)
{
	unsigned long id = 0xdead;
	int ret = ridr_alloc(m, p, min, max, &id);

	cr_assert_eq(ret, 0, "ridr_alloc(%#lx, %#lx) failed: %d", min, max, ret);
	cr_assert_eq(id, want, "ridr_alloc(%#lx, %#lx) gave %#lx, want %#lx",
		     min, max, id, want);
}

/* Every id of @ids[0..n) maps to P(i) (or NULL if @res says reserved),
 * nothing else is there, and iteration returns them in order. */
static void expect_exactly(struct ridr *m, const unsigned long *ids, long n,
			   const bool *res, const char *when)
{
	unsigned long id;
	long i = 0;
	void *e;

	cr_assert_eq(ridr_count(m), (unsigned long)n, "%s: count %lu, want %ld",
		     when, ridr_count(m), n);
	rk_rcu_read_lock();
	for (long k = 0; k < n; k++) {
		void *want = res && res[k] ? NULL : P(k);

		cr_assert_eq(ridr_find(m, ids[k]), want, "%s: id %#lx lost",
			     when, ids[k]);
	}
	ridr_for_each(m, e, id) {
		while (i < n && res && res[i])
			i++;
		cr_assert_lt(i, n, "%s: extra id %#lx", when, id);
		cr_assert_eq(id, ids[i], "%s: walk found %#lx, want %#lx", when,
			     id, ids[i]);
		cr_assert_eq(e, P(i), "%s: entry of %#lx", when, id);
		i++;
	}
	rk_rcu_read_unlock();
	while (i < n && res && res[i])
		i++;
	cr_assert_eq(i, n, "%s: the walk stopped early", when);
}

static int cmp_ul(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/* Allocate @ids (sorted, distinct) one at a time at their exact ids,
 * checking everything after each insertion. */
static void insert_all(struct ridr *m, unsigned long *ids, long n,
		       const char *what)
{
	for (long k = 0; k < n; k++) {
		must(m, P(k), ids[k], ids[k], ids[k]);
	}
	expect_exactly(m, ids, n, NULL, what);
}

T(a_lone_id_costs_one_small_object)
{
	struct ridr m;

	ridr_init(&m);
	must(&m, P(0), 1UL << 40, ULONG_MAX, 1UL << 40);
	cr_expect_leq(ridr_memory(&m), 64, "one far id took %zu bytes",
		      ridr_memory(&m));
	must(&m, P(1), 7, 7, 7);
	cr_expect_leq(ridr_memory(&m), 64, "two ids took %zu bytes",
		      ridr_memory(&m));
	rk_rcu_read_lock();
	cr_expect_eq(ridr_find(&m, 1UL << 40), P(0));
	cr_expect_eq(ridr_find(&m, 7), P(1));
	cr_expect_null(ridr_find(&m, (1UL << 40) + 7));
	cr_expect_null(ridr_find(&m, 7 + (1UL << 32)), "a key must name one id");
	rk_rcu_read_unlock();
	ridr_destroy(&m);
}

T(sparse_random_ids_cost_buckets_not_paths)
{
	enum { N = 2048 };
	static unsigned long ids[N + 64];
	struct ridr m;
	struct rk_prng r;
	long n = 1;

	ridr_init(&m);
	rk_prng_seed(&r, 2048);
	for (long k = 0; k < N + 64; k++)
		ids[k] = rk_prng_below(&r, 1UL << 31);
	qsort(ids, N + 64, sizeof(ids[0]), cmp_ul);
	for (long k = 1; k < N + 64 && n < N; k++)	/* distinct, sorted */
		if (ids[k] != ids[n - 1])
			ids[n++] = ids[k];
	cr_assert_eq(n, N);
	/* Insert in random order, not sorted: shuffle a copy. */
	{
		static unsigned long order[N];

		memcpy(order, ids, sizeof(order));
		for (long k = N - 1; k > 0; k--) {
			long j = (long)rk_prng_below(&r, (uint64_t)k + 1);
			unsigned long t = order[k];

			order[k] = order[j];
			order[j] = t;
		}
		for (long k = 0; k < N; k++) {
			unsigned long *at = bsearch(&order[k], ids, N,
						    sizeof(ids[0]), cmp_ul);

			must(&m, P(at - ids), order[k], order[k], order[k]);
		}
	}
	expect_exactly(&m, ids, N, NULL, "2048 sparse ids");
	cr_expect_leq(ridr_memory(&m), 64 * 1024,
		      "2048 random 31-bit ids took %zu bytes (target 64 KiB)",
		      ridr_memory(&m));
	fx_live_after_grace();
	cr_expect_eq(rk_counting_alloc_live_bytes(&fx_alloc),
		     (long)ridr_memory(&m), "ridr_memory() vs the allocator");
	ridr_destroy(&m);
}

T(appending_into_a_bucket_allocates_nothing)
{
	struct ridr m;
	unsigned long id;
	long before = 0;

	ridr_init(&m);
	/* Ids 1000, 1001, ... go after every key of the bucket: a copy
	 * with room to spare when it is full (1, 2, 4, 8, 19 records),
	 * appended in place in between. */
	must(&m, P(0), 0, 0, 0);
	for (int i = 0; i < 10; i++)
		cr_assert_eq(ridr_alloc_cyclic(&m, P(1), 1000, INT_MAX, &id), 0);
	before = fx_alloc.total_allocs;
	for (int i = 0; i < 5; i++)
		cr_assert_eq(ridr_alloc_cyclic(&m, P(1), 1000, INT_MAX, &id), 0);
	cr_expect_eq(fx_alloc.total_allocs - before, 0,
		     "appends into a bucket with room copied it");
	cr_expect_eq(id, 1014);
	ridr_destroy(&m);
}

/* The root word of @m is a bucket of 16-bit keys (the kind ridr_find()
 * reads inline). */
/* The kind of the root bucket (2: 16-bit keys, 4: 32-bit), 0 if the root
 * is not a bucket. */
static unsigned long root_bucket_kind(struct ridr *m)
{
	unsigned long w = (unsigned long)rk_rcu_dereference(m->root);

	return w && !(w & 1) ? w & RIDR_KIND_MASK : 0;
}

/* ridr_find() (inline; through the root bucket's probe where it hits)
 * against ridr_find_locked() (the writer's walk) and @want. */
static void find_both(struct ridr *m, unsigned long id, void *want)
{
	rk_rcu_read_lock();
	cr_assert_eq(ridr_find(m, id), want, "ridr_find(%#lx)", id);
	rk_rcu_read_unlock();
	cr_assert_eq(ridr_find_locked(m, id), want, "ridr_find_locked(%#lx)",
		     id);
}

/* ridr_find()'s inline probes of a root bucket with keys of @kind (2, 4)
 * covering ids up to @top, ids from @base. */
static void root_bucket_probes(unsigned long base, unsigned long top,
			       unsigned long kind)
{
	struct ridr m;
	unsigned long id;

	ridr_init(&m);
	/* Ids base..base+9 in order: key[i] = base + i, every first probe
	 * hits. */
	for (long k = 0; k < 10; k++)
		must(&m, P(k), base, top, base + (unsigned long)k);
	cr_assert_eq(root_bucket_kind(&m), kind);
	for (long k = 0; k < 10; k++)
		find_both(&m, base + (unsigned long)k, P(k));
	/* Below the first key, past the last, between. */
	find_both(&m, 0, NULL);
	find_both(&m, base - 1, NULL);
	find_both(&m, base + 10, NULL);
	find_both(&m, top, NULL);
	/* Ids whose low bits are a key: beyond the root bucket. */
	find_both(&m, top + 1 + base, NULL);
	find_both(&m, ((top + 1) << 4) + base + 5, NULL);
	find_both(&m, (ULONG_MAX & ~top) | (base + 1), NULL);
	/* A tombstone at the probed index: absent. */
	cr_assert_eq(ridr_remove(&m, base + 3, NULL), 0);
	find_both(&m, base + 3, NULL);
	find_both(&m, base + 4, P(4));
	/* A reservation the probe hits (id base+10 at index 10): absent. */
	cr_assert_eq(ridr_alloc(&m, NULL, base + 10, base + 10, &id), 0);
	cr_assert_eq(root_bucket_kind(&m), kind);
	find_both(&m, base + 10, NULL);
	/* Out of order (a gap before base+100): the first probe misses;
	 * the second (from the last key) finds base+100, the out-of-line
	 * search base+50. */
	must(&m, P(20), base + 100, base + 100, base + 100);
	must(&m, P(21), base + 50, base + 50, base + 50);
	cr_assert_eq(root_bucket_kind(&m), kind);
	find_both(&m, base + 100, P(20));
	find_both(&m, base + 50, P(21));
	find_both(&m, base + 51, NULL);
	/* The second probe's index holds base+50, not base+99. */
	find_both(&m, base + 99, NULL);
	find_both(&m, base + 101, NULL);
	find_both(&m, base + 9, P(9));
	/* Keys L.., c, c+1, c+2 (ids handed out in order behind long-lived
	 * ones): the second probe hits each of the last. */
	must(&m, P(30), base + 101, top, base + 101);
	must(&m, P(31), base + 101, top, base + 102);
	find_both(&m, base + 101, P(30));
	find_both(&m, base + 102, P(31));
	find_both(&m, base + 103, NULL);
	cr_assert_eq(ridr_remove(&m, base + 101, NULL), 0);
	find_both(&m, base + 101, NULL);
	find_both(&m, base + 100, P(20));
	cr_assert_eq(ridr_replace(&m, P(22), base + 10, NULL), 0);
	find_both(&m, base + 10, P(22));
	ridr_destroy(&m);
}

T(a_root_bucket_is_read_inline_hit_or_miss)
{
	root_bucket_probes(100, 65535, 2);
	/* Ids past 2^16 (a process that has churned timers): 32-bit keys. */
	root_bucket_probes(70000, 0xffffffffUL, 4);
}

/* ridr_remove() of @id with the entry @want (NULL: a reservation) from
 * the root bucket of kind @kind: 0, the entry back through @oldp (NULL
 * for a reservation), one id fewer, the id gone for both lookups, the
 * root still a bucket (W3: a tombstone). */
static void remove_from_root(struct ridr *m, unsigned long id, void *want,
			     unsigned long kind)
{
	unsigned long before = ridr_count(m);
	void *old = P(99);

	cr_assert_eq(ridr_remove(m, id, &old), 0, "remove %#lx", id);
	cr_assert_eq(old, want, "remove %#lx: old", id);
	cr_assert_eq(ridr_count(m), before - 1);
	cr_assert_eq(root_bucket_kind(m), kind);
	find_both(m, id, NULL);
	old = P(98);
	cr_assert_eq(ridr_remove(m, id, &old), -ENOENT, "again %#lx", id);
	cr_assert_eq(old, P(98), "a failed removal writes nothing");
}

/* ridr_remove()'s probes of a root bucket with keys of @kind, ids from
 * @base up to @top: each way a probe hits or misses, with and without
 * @oldp. */
static void root_bucket_removals(unsigned long base, unsigned long top,
				 unsigned long kind)
{
	struct ridr m;
	unsigned long id;

	ridr_init(&m);
	for (long k = 0; k < 10; k++)
		must(&m, P(k), base, top, base + (unsigned long)k);
	/* Keys L.., c, c+1, c+2 behind a gap: base+100.. */
	for (long k = 0; k < 3; k++)
		must(&m, P(20 + k), base + 100, top,
		     base + 100 + (unsigned long)k);
	/* base+50 after them: neither probe finds it (the general path). */
	must(&m, P(30), base + 50, base + 50, base + 50);
	cr_assert_eq(root_bucket_kind(&m), kind);
	/* Misses, nothing changed: absent ids, beyond the root's range. */
	cr_assert_eq(ridr_remove(&m, base + 10, NULL), -ENOENT);
	cr_assert_eq(ridr_remove(&m, base - 1, NULL), -ENOENT);
	cr_assert_eq(ridr_remove(&m, base + 103, NULL), -ENOENT);
	if (top != ULONG_MAX)
		cr_assert_eq(ridr_remove(&m, top + 1 + base, NULL), -ENOENT);
	cr_assert_eq(ridr_count(&m), 14);
	/* The first probe (from key 0). */
	remove_from_root(&m, base + 4, P(4), kind);
	remove_from_root(&m, base, P(0), kind);
	/* The second probe (back from the last key). */
	remove_from_root(&m, base + 102, P(22), kind);
	remove_from_root(&m, base + 101, P(21), kind);
	/* Neither: found by the out-of-line search. */
	remove_from_root(&m, base + 50, P(30), kind);
	/* Without @oldp. */
	cr_assert_eq(ridr_remove(&m, base + 9, NULL), 0);
	find_both(&m, base + 9, NULL);
	/* A reservation: removed, no entry. */
	cr_assert_eq(ridr_alloc(&m, NULL, base + 200, base + 200, &id), 0);
	remove_from_root(&m, base + 200, NULL, kind);
	/* The rest is intact. */
	for (long k = 1; k < 9; k++)
		if (k != 4)
			find_both(&m, base + (unsigned long)k, P(k));
	find_both(&m, base + 100, P(20));
	cr_assert_eq(ridr_count(&m), 8);
	ridr_destroy(&m);
}

T(a_root_bucket_removal_probes_hit_or_miss)
{
	root_bucket_removals(100, 65535, 2);
	root_bucket_removals(70000, 0xffffffffUL, 4);
	/* Ids past 2^32: 64-bit keys (kind 6, RIDR_KIND_B64). */
	root_bucket_removals(0x100000000UL + 5, ULONG_MAX, 6);
}

/* The root bucket, or NULL if the root is not a bucket. */
static const struct ridr_bucket *root_bucket(struct ridr *m)
{
	unsigned long w = (unsigned long)rk_rcu_dereference(m->root);

	return w && !(w & 1) ? (const struct ridr_bucket *)(w & ~RIDR_KIND_MASK)
			     : NULL;
}

/* ridr_memory() counts what the allocator holds for @m once the retired
 * objects are freed. */
static void memory_is_what_is_allocated(struct ridr *m)
{
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	cr_assert_eq(ridr_memory(m),
		     (size_t)rk_counting_alloc_live_bytes(&fx_alloc));
}

/* Cyclic churn behind a long-lived id fills the root bucket with the
 * records of removed ids; the append that finds it full copies it
 * (ridr_cyclic_compact() in write.c): the live ids and the new one, room
 * for more, the old bucket retired.  A failed allocation there changes
 * nothing. */
T(cyclic_churn_copies_a_full_root_bucket)
{
	struct ridr m;
	struct snap before;
	unsigned long id, want = 1001;
	unsigned int cap;
	int copies = 0;

	ridr_init(&m);
	ridr_lock(&m);
	__ridr_set_cursor(&m, 1000);
	ridr_unlock(&m);
	cr_assert_eq(ridr_alloc_cyclic(&m, P(0), 0, INT_MAX, &id), 0);
	cr_assert_eq(id, 1000);
	for (int k = 1; k <= 300; k++, want++) {
		const struct ridr_bucket *b = root_bucket(&m);
		bool full;

		cr_assert(b);
		full = b->n == b->cap;
		cap = b->cap;	/* b may be freed once it is replaced */
		cr_assert_eq(ridr_alloc_cyclic(&m, P(k), 0, INT_MAX, &id), 0);
		cr_assert_eq(id, want);
		if (full) {
			/* A new bucket: the two live ids, and room for twice
			 * as many appends, up to RIDR_BUCKET_MAX (32). */
			copies++;
			cr_assert_neq(root_bucket(&m), b);
			cr_assert_eq(root_bucket(&m)->n, 2);
			cr_assert_geq(root_bucket(&m)->cap,
				      2 * cap < 32 ? 2 * cap : 32);
		}
		find_both(&m, 1000, P(0));
		find_both(&m, id, P(k));
		if (k > 1)
			find_both(&m, id - 1, NULL);
		cr_assert_eq(ridr_count(&m), 2);
		if (full)
			memory_is_what_is_allocated(&m);
		cr_assert_eq(ridr_remove(&m, id, NULL), 0);
	}
	cr_expect_geq(copies, 300 / 32, "only %d copies", copies);
	/* Fill the bucket up, then fail the copy's allocation: -ENOMEM and
	 * the map as it was (the locked call retries with a preload, which
	 * fails too). */
	while (root_bucket(&m)->n < root_bucket(&m)->cap) {
		cr_assert_eq(ridr_alloc_cyclic(&m, P(1), 0, INT_MAX, &id), 0);
		cr_assert_eq(ridr_remove(&m, id, NULL), 0);
	}
	take_snap(&m, &before);
	fx_alloc.fail_all = true;
	cr_assert_eq(ridr_alloc_cyclic(&m, P(2), 0, INT_MAX, &id), -ENOMEM);
	fx_alloc.fail_all = false;
	expect_same(&m, &before, "a failed copy of a full root bucket");
	/* The first allocation fails (the copy), the general path's own
	 * then succeeds. */
	fx_alloc.fail_at = 1;
	cr_assert_eq(ridr_alloc_cyclic(&m, P(3), 0, INT_MAX, &id), 0);
	cr_assert_eq(id, before.cursor);
	find_both(&m, id, P(3));
	find_both(&m, 1000, P(0));
	memory_is_what_is_allocated(&m);
	ridr_destroy(&m);
}

/* The root-bucket fast paths (ridr_cyclic_append(), ridr_remove_root()
 * in write.c; ridr_find()'s probe) take the key width from the root
 * word's kind tag: cyclic churn behind a long-lived id, with a
 * reservation among the churned ids, in a root bucket of each width
 * (kind 2, 4, 6: 16-, 32-, 64-bit keys), through several copies of the
 * full bucket.  Each id is checked as it is allocated, while it lives
 * and after it is removed, and the cursor, count and kind each round. */
static void cyclic_churn_at_width(unsigned long base, unsigned long kind)
{
	struct ridr m;
	unsigned long id, want = base + 1;

	ridr_init(&m);
	ridr_lock(&m);
	__ridr_set_cursor(&m, base);
	ridr_unlock(&m);
	cr_assert_eq(ridr_alloc_cyclic(&m, P(0), 0, ULONG_MAX - 1, &id), 0);
	cr_assert_eq(id, base);
	for (long k = 1; k <= 100; k++, want++) {
		void *p = k % 7 ? P(k) : NULL;	/* every 7th a reservation */
		void *old = P(999);

		cr_assert_eq(ridr_alloc_cyclic(&m, p, 0, ULONG_MAX - 1, &id),
			     0);
		cr_assert_eq(id, want, "width kind %lu: got %#lx", kind, id);
		cr_assert_eq(root_bucket_kind(&m), kind, "round %ld", k);
		cr_assert_eq(ridr_get_cursor(&m), want + 1);
		cr_assert_eq(ridr_count(&m), 2);
		find_both(&m, base, P(0));
		find_both(&m, id, p);
		find_both(&m, id - 1, k > 1 ? NULL : P(0));
		find_both(&m, id + 1, NULL);
		cr_assert_eq(ridr_remove(&m, id, &old), 0);
		cr_assert_eq(old, p, "round %ld: the removed entry", k);
		cr_assert_eq(ridr_remove(&m, id, NULL), -ENOENT);
		find_both(&m, id, NULL);
		cr_assert_eq(ridr_count(&m), 1);
	}
	find_both(&m, base, P(0));
	cr_assert_eq(ridr_remove(&m, base, NULL), 0);
	cr_assert(ridr_is_empty(&m));
	ridr_destroy(&m);
}

T(cyclic_churn_in_a_root_bucket_of_each_key_width)
{
	cyclic_churn_at_width(1000, 2);
	cyclic_churn_at_width(70000, 4);
#if ULONG_MAX > 0xffffffffUL
	cyclic_churn_at_width(1UL << 40, 6);
#endif
}

/* The copy of a full root bucket (ridr_cyclic_compact()) stops after the
 * last live record: with live records spread through the bucket (every
 * 5th id kept, some of them removed later, so live ones sit between
 * tombstones and the last one anywhere), each copy holds exactly the
 * live ids and the new one, and every id is found or not as the model
 * says, in root buckets of 16- and 32-bit keys. */
static void cyclic_copy_keeps_spread_live_ids(unsigned long base)
{
	enum { N = 400 };
	static bool live[N];
	struct ridr m;
	unsigned long id;
	int copies = 0, nlive = 0;

	memset(live, 0, sizeof(live));
	ridr_init(&m);
	ridr_lock(&m);
	__ridr_set_cursor(&m, base);
	ridr_unlock(&m);
	for (int k = 0; k < N; k++) {
		const struct ridr_bucket *b = root_bucket(&m);
		bool full = b && b->n == b->cap;

		cr_assert_eq(ridr_alloc_cyclic(&m, P(k), 0, INT_MAX, &id), 0);
		cr_assert_eq(id, base + (unsigned long)k);
		live[k] = true;
		nlive++;
		if (full) {
			copies++;
			cr_assert_neq(root_bucket(&m), b);
			cr_assert_eq(root_bucket(&m)->n, nlive,
				     "copy %d holds %u records, %d live", copies,
				     root_bucket(&m)->n, nlive);
		}
		if (k % 5) {		/* churned at once */
			cr_assert_eq(ridr_remove(&m, id, NULL), 0);
			live[k] = false;
			nlive--;
		} else if (k % 15 == 10) {	/* an older kept one goes */
			cr_assert_eq(ridr_remove(&m, base + (unsigned long)k - 5,
					     NULL),
				     0);
			live[k - 5] = false;
			nlive--;
		}
		if (nlive > 24) {	/* stay below RIDR_BUCKET_MAX records */
			for (int j = 0; j <= k; j++) {
				if (live[j] && j % 3 == 0) {
					cr_assert_eq(ridr_remove(&m,
						base + (unsigned long)j, NULL), 0);
					live[j] = false;
					nlive--;
				}
			}
		}
		cr_assert_eq(ridr_count(&m), (unsigned long)nlive);
	}
	for (int k = 0; k < N; k++)
		find_both(&m, base + (unsigned long)k, live[k] ? P(k) : NULL);
	cr_expect_geq(copies, 5, "only %d copies", copies);
	memory_is_what_is_allocated(&m);
	ridr_destroy(&m);
}

T(cyclic_copy_of_a_full_root_bucket_with_live_ids_spread)
{
	cyclic_copy_keeps_spread_live_ids(1000);
	cyclic_copy_keeps_spread_live_ids(70000);
}

/* Cyclic allocation up to RIDR_MAX_ID in a root bucket: the id
 * RIDR_MAX_ID itself is allocated without a wrap, the cursor then wraps
 * to 0, and the next allocation reports the wrap (1).  The root
 * bucket's fast path must leave RIDR_MAX_ID to the general path, which
 * records the pending wrap. */
T(cyclic_allocation_at_the_top_of_the_id_space_reports_the_wrap)
{
	struct ridr m;
	unsigned long id;

	ridr_init(&m);
	ridr_lock(&m);
	__ridr_set_cursor(&m, RIDR_MAX_ID - 3);
	ridr_unlock(&m);
	for (unsigned long k = 3; k > 0; k--) {
		cr_assert_eq(ridr_alloc_cyclic_wrap(&m, P(k), 0, RIDR_MAX_ID,
						    &id), 0);
		cr_assert_eq(id, RIDR_MAX_ID - k);
	}
	cr_assert_neq(root_bucket_kind(&m), 0, "ids at the top: a root bucket");
	cr_assert_eq(ridr_alloc_cyclic_wrap(&m, P(0), 0, RIDR_MAX_ID, &id), 0,
		     "RIDR_MAX_ID itself is not a wrap");
	cr_assert_eq(id, RIDR_MAX_ID);
	cr_assert_eq(ridr_get_cursor(&m), 0);
	cr_assert_eq(ridr_alloc_cyclic_wrap(&m, P(9), 0, RIDR_MAX_ID, &id), 1,
		     "the allocation after RIDR_MAX_ID wrapped");
	cr_assert_eq(id, 0);
	find_both(&m, 0, P(9));
	find_both(&m, RIDR_MAX_ID, P(0));
	cr_assert_eq(ridr_count(&m), 5);
	ridr_destroy(&m);
}

/* Cyclic allocation into a root bucket takes a short path when the
 * cursor's id is past every key (ridr_cyclic_append() in write.c); every
 * case next to it must take the general one. */
T(cyclic_appends_to_a_root_bucket_and_the_cases_next_to_it)
{
	static const unsigned long want[] = { 0, 1, 2, 7, 8, 9, 65537 };
	struct ridr m;
	unsigned long id;

	ridr_init(&m);
	must(&m, P(0), 0, 0, 0);
	cr_assert_eq(ridr_alloc_cyclic(&m, P(1), 0, 1000, &id), 0);
	cr_assert_eq(id, 1);
	/* The cursor's id taken by a plain allocation: it is the last key,
	 * not past it. */
	must(&m, P(2), 2, 2, 2);
	cr_assert_eq(ridr_get_cursor(&m), 2);
	cr_assert_eq(ridr_alloc_cyclic(&m, P(3), 0, 1000, &id), 0);
	cr_assert_eq(id, 3, "the cursor's id was taken: got %lu", id);
	cr_assert_eq(ridr_remove(&m, 3, NULL), 0);
	/* The cursor outside [min, max]: from min. */
	cr_assert_eq(ridr_alloc_cyclic(&m, P(3), 7, 9, &id), 0);
	cr_assert_eq(id, 7);
	cr_assert_eq(ridr_alloc_cyclic(&m, P(4), 7, 9, &id), 0);
	cr_assert_eq(id, 8);
	/* The cursor at max: still the cursor's id. */
	cr_assert_eq(ridr_alloc_cyclic(&m, P(5), 7, 9, &id), 0);
	cr_assert_eq(id, 9);
	/* Past the root bucket's 16-bit keys: the bucket widens. */
	__ridr_set_cursor(&m, 65537);
	cr_assert_eq(root_bucket_kind(&m), 2);
	cr_assert_eq(ridr_alloc_cyclic(&m, P(6), 0, ULONG_MAX, &id), 0);
	cr_assert_eq(id, 65537);
	cr_assert_eq(root_bucket_kind(&m), 4);
	cr_assert_eq(ridr_get_cursor(&m), 65538);
	expect_exactly(&m, want, 7, NULL, "after the cyclic appends");
	ridr_destroy(&m);
}

T(dense_ids_burst_into_a_full_leaf)
{
	static unsigned long ids[64];
	struct ridr m;

	ridr_init(&m);
	for (long k = 0; k < 64; k++)
		ids[k] = (unsigned long)k;
	for (long k = 0; k < 64; k++) {
		must(&m, P(k), 0, ULONG_MAX, ids[k]);
		expect_exactly(&m, ids, k + 1, NULL, "filling a leaf");
	}
	cr_expect_eq(ridr_memory(&m), NODE, "64 dense ids are one full leaf");
	ridr_destroy(&m);
}

/* The tree grows above a root leaf: the block right after it gets a full
 * leaf (dense growth), as every later block of a dense map does, and a
 * remove+alloc pair at that boundary then allocates nothing.
 */
T(growing_past_a_root_leaf_starts_the_next_leaf)
{
	static unsigned long ids[66];
	struct ridr m;
	void *old;

	ridr_init(&m);
	for (long k = 0; k < 66; k++)
		ids[k] = (unsigned long)k;
	for (long k = 0; k < 66; k++)
		must(&m, P(k), 0, ULONG_MAX, ids[k]);
	expect_exactly(&m, ids, 66, NULL, "past the root leaf");
	cr_expect_eq(ridr_memory(&m), 3 * NODE,
		     "ids 0-65: a root node and two full leaves, got %zu bytes",
		     ridr_memory(&m));
	/* Not dense: a far id past a root leaf still gets a bucket. */
	cr_assert_eq(ridr_insert(&m, 1000, P(1000)), 0);
	cr_expect_lt(ridr_memory(&m), 4 * NODE, "id 1000 took a node");
	cr_assert_eq(ridr_remove(&m, 1000, &old), 0);
	cr_expect_eq(old, P(1000));
	fx_alloc.watch_size = NODE;
	fx_alloc.watch_allocs = 0;
	for (int k = 0; k < 100; k++) {
		cr_assert_eq(ridr_remove(&m, 65, NULL), 0);
		cr_assert_eq(ridr_remove(&m, 64, NULL), 0);
		must(&m, P(64), 0, ULONG_MAX, 64);
		must(&m, P(65), 0, ULONG_MAX, 65);
	}
	cr_expect_eq(fx_alloc.watch_allocs, 0, "boundary churn allocated nodes");
	expect_exactly(&m, ids, 66, NULL, "after the churn");
	ridr_destroy(&m);
}

/*
 * Dense churn takes the fast paths (ridr/write.c: ridr_alloc_lowest(),
 * ridr_remove_leaf()); each case they hand over to the general path must
 * come out as before: a free id below @min in the leaf of @min's digit
 * (the search steps back), a free id past @max (-ENOSPC, nothing
 * changed), a reservation, a free id (-ENOENT), a lower bound inside a
 * later leaf, and a leaf emptied down to a collapse.
 */
T(the_dense_fast_paths_hand_over_what_they_do_not_handle)
{
	static unsigned long ids[4096];
	struct ridr m;
	size_t mem;
	void *old;

	ridr_init(&m);
	for (long k = 0; k < 4096; k++) {
		ids[k] = (unsigned long)k;
		must(&m, P(k), 0, ULONG_MAX, ids[k]);
	}
	mem = ridr_memory(&m);
	cr_assert_eq(mem, 65 * NODE, "0..4095: a root and 64 full leaves");
	cr_assert_eq(ridr_remove(&m, 3, &old), 0);
	cr_expect_eq(old, P(3));
	cr_expect_eq(ridr_remove(&m, 3, NULL), -ENOENT, "a free id");
	/* 3 is free, but below 10: past every id of the root's range. */
	must(&m, P(4096), 10, ULONG_MAX, 4096);
	cr_assert_eq(ridr_remove(&m, 4096, NULL), 0);
	/* 3 is past @max: nothing changes. */
	{
		unsigned long id = 0xdead;

		cr_expect_eq(ridr_alloc(&m, P(3), 0, 2, &id), -ENOSPC);
		cr_expect_eq(id, 0xdead, "id written on failure");
		cr_expect_eq(ridr_count(&m), 4095);
	}
	/* A lower bound inside a later leaf: its own digit first. */
	cr_assert_eq(ridr_remove(&m, 130, NULL), 0);
	cr_assert_eq(ridr_remove(&m, 135, NULL), 0);
	must(&m, P(135), 131, ULONG_MAX, 135);
	must(&m, P(130), 100, ULONG_MAX, 130);
	must(&m, P(3), 0, ULONG_MAX, 3);
	expect_exactly(&m, ids, 4096, NULL, "after the hand-overs");
	/* A reservation through the fast path, then removed by it. */
	cr_assert_eq(ridr_remove(&m, 70, NULL), 0);
	must(&m, NULL, 0, ULONG_MAX, 70);
	rk_rcu_read_lock();
	cr_expect_null(ridr_find(&m, 70), "a reservation reads NULL");
	rk_rcu_read_unlock();
	cr_expect_eq(ridr_count(&m), 4096);
	cr_assert_eq(ridr_remove(&m, 70, &old), 0);
	cr_expect_null(old, "a reservation's entry");
	must(&m, P(70), 0, ULONG_MAX, 70);
	/* Emptying the leaf 64..127: the last removals collapse it. */
	for (unsigned long id = 64; id < 128; id++)
		cr_assert_eq(ridr_remove(&m, id, NULL), 0, "remove %lu", id);
	cr_expect_lt(ridr_memory(&m), mem, "the emptied leaf is still there");
	for (long k = 64; k < 128; k++)
		must(&m, P(k), 0, ULONG_MAX, ids[k]);
	expect_exactly(&m, ids, 4096, NULL, "after the leaf came back");
	cr_expect_eq(ridr_memory(&m), mem);
	ridr_destroy(&m);
}

/*
 * The dense fast paths are compiled once per small height (a root full
 * leaf, a root over leaves) and once for any height: churn at heights
 * 0-3, each checked against a bitmap of the window: every allocation is
 * the lowest free id in [min, max] or -ENOSPC with nothing changed,
 * every removal of a free id -ENOENT, the entries and the count exact.
 */
T(dense_churn_at_every_height_takes_the_lowest_free_id)
{
	static const struct {
		unsigned long n;	/* ids 0..n-1 live at the start */
		unsigned long far;	/* and this one, if not 0 */
		size_t nodes;		/* full nodes at the start */
	} h[] = {
		{ 48, 0, 1 },		/* height 0: one full leaf */
		{ 1000, 0, 17 },	/* height 1: a root, 16 leaves */
		{ 4200, 0, 69 },	/* height 2: 1 + 2 + 66 */
		{ 300, 300000, 0 },	/* height 3: the far id on top */
	};
	static bool live[4200];

	for (size_t k = 0; k < sizeof(h) / sizeof(h[0]); k++) {
		unsigned long n = h[k].n, nlive = n, id;
		struct rk_prng r;
		struct ridr m;
		void *old;

		rk_prng_seed(&r, 0x5eed + k);
		ridr_init(&m);
		for (id = 0; id < n; id++) {
			must(&m, P(id), 0, n - 1, id);
			live[id] = true;
		}
		if (h[k].far)
			cr_assert_eq(ridr_insert(&m, h[k].far, P(h[k].far)), 0);
		if (h[k].nodes)
			cr_assert_eq(ridr_memory(&m), h[k].nodes * NODE,
				     "height %zu: %zu full nodes", k,
				     h[k].nodes);
		for (int op = 0; op < 4000; op++) {
			unsigned long min = rk_prng_below(&r, n), max, want;
			bool rm = nlive + 12 > n ? rk_prng_below(&r, 3) != 0
						  : rk_prng_below(&r, 4) == 0;

			if (rm) {
				id = min;
				cr_assert_eq(ridr_remove(&m, id, &old),
					     live[id] ? 0 : -ENOENT,
					     "height %zu: remove %lu", k, id);
				if (live[id])
					cr_assert_eq(old, P(id));
				nlive -= live[id];
				live[id] = false;
				continue;
			}
			max = rk_prng_below(&r, 2) ? n - 1 :
			      min + rk_prng_below(&r, n - min);
			for (want = min; want <= max && live[want]; want++)
				;
			id = 0xdead;
			if (want > max) {
				cr_assert_eq(ridr_alloc(&m, P(0), min, max,
							&id), -ENOSPC,
					     "height %zu: [%lu, %lu] is full",
					     k, min, max);
				cr_assert_eq(id, 0xdead);
			} else {
				must(&m, P(want), min, max, want);
				live[want] = true;
				nlive++;
			}
			cr_assert_eq(ridr_count(&m), nlive + (h[k].far != 0));
		}
		rk_rcu_read_lock();
		for (id = 0; id < n; id++)
			cr_assert_eq(ridr_find(&m, id), live[id] ? P(id) : NULL,
				     "height %zu: id %lu", k, id);
		if (h[k].far)
			cr_assert_eq(ridr_find(&m, h[k].far), P(h[k].far));
		rk_rcu_read_unlock();
		ridr_destroy(&m);
	}
}

/*
 * The lowest-id fast path in a root bucket (ridr_alloc_lowest()): a
 * tombstone taken back, an append; and what it hands over: a free id
 * between keys (a copy), one past @max, one past the bucket's range.
 */
T(the_root_bucket_fast_path_hands_over_what_it_does_not_handle)
{
	static unsigned long ids[] = { 0, 1, 2, 3, 4, 5, 6 };
	struct ridr m;
	unsigned long id = 0xdead;
	void *old;

	ridr_init(&m);
	for (long k = 0; k < 3; k++)
		must(&m, P(k), 0, ULONG_MAX, ids[k]);
	cr_assert_eq(ridr_insert(&m, 5, P(5)), 0);
	cr_assert_lt(ridr_memory(&m), NODE, "ids 0-2 and 5: a root bucket");
	/* A tombstone taken back, as an entry and as a reservation. */
	cr_assert_eq(ridr_remove(&m, 1, &old), 0);
	cr_expect_eq(old, P(1));
	must(&m, NULL, 0, ULONG_MAX, 1);
	rk_rcu_read_lock();
	cr_expect_null(ridr_find(&m, 1), "a reservation reads NULL");
	cr_expect_eq(ridr_find(&m, 5), P(5));
	rk_rcu_read_unlock();
	cr_assert_eq(ridr_remove(&m, 1, &old), 0);
	cr_expect_null(old, "a reservation's entry");
	must(&m, P(1), 0, ULONG_MAX, 1);
	/* Free ids only past @max: nothing changes. */
	cr_expect_eq(ridr_alloc(&m, P(3), 0, 2, &id), -ENOSPC);
	cr_expect_eq(id, 0xdead, "id written on failure");
	cr_expect_eq(ridr_count(&m), 4);
	/* Between keys 2 and 5 (a copy), then past the last key. */
	must(&m, P(3), 0, ULONG_MAX, 3);
	must(&m, P(4), 0, ULONG_MAX, 4);
	must(&m, P(6), 0, ULONG_MAX, 6);
	expect_exactly(&m, ids, 7, NULL, "after the root bucket's cases");
	/* Past the root bucket's range: the tree grows. */
	must(&m, P(7), 1UL << 40, ULONG_MAX, 1UL << 40);
	rk_rcu_read_lock();
	cr_expect_eq(ridr_find(&m, 1UL << 40), P(7));
	rk_rcu_read_unlock();
	cr_assert_eq(ridr_remove(&m, 1UL << 40, NULL), 0);
	expect_exactly(&m, ids, 7, NULL, "after the growth");
	ridr_destroy(&m);
}

T(a_full_bucket_bursts_into_a_shared_node_then_unshares)
{
	/* 40 ids in one 2^24 range, then more: the bucket bursts into a
	 * node whose slots share it, and each slot gets its own bucket as
	 * it takes a new id. */
	static unsigned long ids[80];
	struct ridr m;
	long n = 0;

	ridr_init(&m);
	must(&m, P(999), 0, 0, 0);	/* keeps the root a full node later */
	for (long k = 0; k < 80; k++)
		ids[k] = (5UL << 24) + (unsigned long)k * 0x31337UL;
	for (long k = 0; k < 80; k++) {
		must(&m, P(k), ids[k], ids[k], ids[k]);
		n++;
		rk_rcu_read_lock();
		for (long j = 0; j <= k; j++)
			cr_assert_eq(ridr_find(&m, ids[j]), P(j),
				     "id %#lx lost after inserting %ld", ids[j],
				     k);
		cr_assert_eq(ridr_find(&m, 0), P(999));
		rk_rcu_read_unlock();
	}
	/* A path of full nodes down to the 2^24 range, then buckets: far
	 * below one leaf per id (80 x 576). */
	cr_expect_lt(ridr_memory(&m), 8 * NODE,
		     "80 sparse ids took %zu bytes", ridr_memory(&m));
	for (long k = 0; k < 80; k += 2)
		cr_assert_eq(ridr_remove(&m, ids[k], NULL), 0);
	rk_rcu_read_lock();
	for (long k = 0; k < 80; k++)
		cr_assert_eq(ridr_find(&m, ids[k]), k & 1 ? P(k) : NULL);
	rk_rcu_read_unlock();
	ridr_destroy(&m);
}

T(a_leaf_left_with_few_ids_collapses_into_a_bucket)
{
	static unsigned long ids[3] = { 100, 120, 127 };
	struct ridr m;

	ridr_init(&m);
	for (unsigned long i = 0; i < 200; i++)
		must(&m, i == 100 ? P(0) : i == 120 ? P(1) : i == 127 ? P(2) :
		     P(9), 0, ULONG_MAX, i);
	for (unsigned long i = 0; i < 200; i++)
		if (i != 100 && i != 120 && i != 127)
			cr_assert_eq(ridr_remove(&m, i, NULL), 0);
	expect_exactly(&m, ids, 3, NULL, "after the collapse");
	cr_expect_lt(ridr_memory(&m), 2 * NODE,
		     "3 ids kept %zu bytes: nothing collapsed",
		     ridr_memory(&m));
	ridr_destroy(&m);
}

T(a_node_with_few_ids_below_merges_into_a_bucket)
{
	static unsigned long ids[40];
	struct ridr m;

	ridr_init(&m);
	for (long k = 0; k < 40; k++)
		ids[k] = (unsigned long)k * 64;	/* one id per leaf range */
	insert_all(&m, ids, 40, "40 ids one leaf range apart");
	for (long k = 39; k >= 6; k--) {
		cr_assert_eq(ridr_remove(&m, ids[k], NULL), 0);
		expect_exactly(&m, ids, k, NULL, "removing");
	}
	cr_expect_lt(ridr_memory(&m), NODE,
		     "6 ids kept %zu bytes: the node did not merge",
		     ridr_memory(&m));
	ridr_destroy(&m);
}

/*
 * W9 at the root: a root node whose children have collapsed into buckets
 * merges into one root bucket, whose keys must be as wide as its top id
 * (ids above 2^16 here: 32-bit keys), or an id would be read as its low
 * 16 bits.
 */
T(a_root_node_merges_into_a_bucket_with_keys_for_its_top_id)
{
	static unsigned long ids[4] = { 70000, 70001, 100000, 131000 };
	struct ridr m;

	ridr_init(&m);
	for (unsigned long i = 0; i <= 140000; i++)
		must(&m, P(i % 7), 0, ULONG_MAX, i);
	for (unsigned long i = 0; i <= 140000; i++)
		if (i != ids[0] && i != ids[1] && i != ids[2] && i != ids[3])
			cr_assert_eq(ridr_remove(&m, i, NULL), 0);
	cr_assert_eq(root_bucket_kind(&m), 4,
		     "root word %p: not a bucket of 32-bit keys",
		     rk_rcu_dereference(m.root));
	for (int k = 0; k < 4; k++) {
		find_both(&m, ids[k], P(ids[k] % 7));
		find_both(&m, ids[k] & 0xffff, NULL);
	}
	ridr_destroy(&m);
}

/*
 * W14: the long-lived ids of cyclic allocation (every 1000th id of a
 * dense run whose other ids are removed in order, as ridr_kernel_bench
 * memory (c) does) are left about four per 4096-id slot of the root;
 * each 4096-id node's collapse joins its left neighbour's bucket, so the
 * root's slots share one bucket per RIDR_BUCKET_MAX ids instead of
 * holding one each.
 */
/* ridr/internal.h's RIDR_BUCKET_MAX: the most ids a bucket holds. */
#define BUCKET_MAX 32
#define SPARSE_SLOTS 12UL	/* 4096-id slots of the root (level 2) */
#define SPARSE_N (SPARSE_SLOTS * 4096)

/* Distinct buckets in the root's slots, and slots holding a bucket. */
static unsigned int root_slot_buckets(struct ridr *m, unsigned int *slots)
{
	unsigned long seen[RIDR_SLOTS], w;
	const struct ridr_node *root;
	unsigned int n = 0;

	*slots = 0;
	rk_rcu_read_lock();
	w = (unsigned long)rk_rcu_dereference(m->root);
	cr_assert(w & 1, "the root is not a full node");
	root = (const struct ridr_node *)(w & ~(unsigned long)(RIDR_NODE_ALIGN - 1));
	for (unsigned int e = 0; e < RIDR_SLOTS; e++) {
		unsigned long s = (unsigned long)rk_rcu_dereference(root->slots[e]);
		unsigned int k;

		if (!s || (s & 1))
			continue;
		(*slots)++;
		for (k = 0; k < n && seen[k] != s; k++)
			;
		if (k == n)
			seen[n++] = s;
	}
	rk_rcu_read_unlock();
	return n;
}

/* Build ids 0..SPARSE_N-1, then remove all but every 1000th in order;
 * @fail: while removing, allocations of more than 100 bytes fail: the
 * joins' buckets (4-byte keys, 8 ids and more: 120 bytes and more with
 * 64-bit pointers), not the plain collapses' here (2-byte keys, at most
 * 5 ids: 88 bytes).  Returns the number of ids kept, in @ids.
 */
static long sparse_tail(struct ridr *m, unsigned long *ids, bool fail)
{
	long n = 0;

	ridr_init(m);
	for (unsigned long i = 0; i < SPARSE_N; i++)
		must(m, P(i % 1000 == 999 ? (unsigned long)n++ : 9999), 0,
		     ULONG_MAX, i);
	fx_alloc.fail_above = fail ? 100 : 0;
	for (unsigned long i = 0; i < SPARSE_N; i++) {
		if (i % 1000 == 999)
			continue;
		cr_assert_eq(ridr_remove(m, i, NULL), 0);
	}
	fx_alloc.fail_above = 0;
	n = 0;
	for (unsigned long i = 999; i < SPARSE_N; i += 1000)
		ids[n++] = i;
	expect_exactly(m, ids, n, NULL, "after the removals");
	memory_is_what_is_allocated(m);
	return n;
}

T(sparse_collapses_join_their_neighbours_bucket)
{
	static unsigned long ids[SPARSE_N / 1000 + 2];
	unsigned int shared, solo_n, slots, solo_slots;
	size_t solo_bytes;
	struct ridr m;
	long n;

	/* Without the join (each join's allocation fails, the collapse
	 * falls back to a bucket of its own): one bucket per slot.
	 */
	sparse_tail(&m, ids, true);
	solo_n = root_slot_buckets(&m, &solo_slots);
	solo_bytes = ridr_memory(&m);
	ridr_destroy(&m);
	cr_assert_eq(solo_n, solo_slots, "a join happened though its "
		     "allocation failed: %u buckets in %u slots", solo_n,
		     solo_slots);
	cr_assert_geq(solo_slots, SPARSE_SLOTS - 1);

	n = sparse_tail(&m, ids, false);
	shared = root_slot_buckets(&m, &slots);
	cr_assert_eq(slots, solo_slots);
	cr_assert_leq(shared, (unsigned int)(n + BUCKET_MAX - 1) / BUCKET_MAX + 1,
		      "%ld ids in %u slots kept %u buckets: no join", n, slots,
		      shared);
	/* Each bucket saved its 24-byte header at least. */
	cr_expect_leq(ridr_memory(&m) + (solo_n - shared) * 24, solo_bytes,
		      "shared %zu bytes, one each %zu", ridr_memory(&m),
		      solo_bytes);

	/* A new id in a shared slot's range unshares that slot (W5). */
	for (long k = n; k > 5; k--)
		ids[k] = ids[k - 1];
	ids[5] = ids[4] + 7;	/* 4006: slot 0, shared */
	must(&m, P(5), ids[5], ids[5], ids[5]);
	for (long k = 6; k <= n; k++)
		cr_assert_eq(ridr_replace(&m, P(k), ids[k], NULL), 0);
	n++;
	expect_exactly(&m, ids, n, NULL, "after a new id in a shared slot");
	memory_is_what_is_allocated(&m);

	/* Removing every id of one shared slot unlinks it; removing the
	 * rest empties the map down to its idle bound.
	 */
	while (n > 0) {
		cr_assert_eq(ridr_remove(&m, ids[n - 1], NULL), 0);
		n--;
		expect_exactly(&m, ids, n, NULL, "removing from the top");
	}
	cr_expect_leq(ridr_memory(&m), IDLE_BOUND);
	memory_is_what_is_allocated(&m);
	ridr_destroy(&m);
}

T(reservations_survive_every_transition)
{
	static unsigned long ids[100];
	static bool res[100];
	struct ridr m;
	unsigned long id;

	ridr_init(&m);
	for (long k = 0; k < 100; k++) {
		ids[k] = (unsigned long)k * 3;
		res[k] = k % 3 == 0;
		cr_assert_eq(ridr_alloc(&m, res[k] ? NULL : P(k), ids[k], ids[k],
					&id), 0);
		expect_exactly(&m, ids, k + 1, res, "growing with reservations");
	}
	/* Reserved ids are not handed out again. */
	cr_assert_eq(ridr_alloc(&m, P(1), 0, 0, &id), -ENOSPC);
	for (long k = 99; k >= 3; k--) {
		cr_assert_eq(ridr_remove(&m, ids[k], NULL), 0);
		expect_exactly(&m, ids, k, res, "shrinking with reservations");
	}
	cr_assert_eq(ridr_replace(&m, P(0), 0, NULL), 0);
	res[0] = false;
	expect_exactly(&m, ids, 3, res, "a reservation filled");
	ridr_destroy(&m);
}

T(a_root_bucket_widens_then_the_tree_grows_to_the_top)
{
	static unsigned long ids[] = { 3, 70000, 1UL << 33, 1UL << 50,
				       ULONG_MAX - 1, ULONG_MAX };
	struct ridr m;

	ridr_init(&m);
	insert_all(&m, ids, 6, "ids of every key width");
	for (unsigned long i = 0; i < 40; i++)	/* burst the root */
		must(&m, P(100), 100 + i, 100 + i, 100 + i);
	rk_rcu_read_lock();
	for (long k = 0; k < 6; k++)
		cr_expect_eq(ridr_find(&m, ids[k]), P(k));
	cr_expect_null(ridr_find(&m, ULONG_MAX - 2));
	rk_rcu_read_unlock();
	ridr_destroy(&m);
}

/* ---- steady churn: no allocation per pair ---- */

enum pattern { IN_LEAF, EMPTYING, BOUNDARY, LONE_FAR, CYCLIC_ONE };

static long churn_allocs(enum pattern p, long pairs)
{
	const unsigned long far = (1UL << 30) + 12345;
	struct ridr m;
	struct rk_prng r;
	unsigned long id, prev = 0;
	long before = 0;

	ridr_init(&m);
	rk_prng_seed(&r, 5);
	switch (p) {
	case IN_LEAF:
		for (unsigned long i = 0; i < 32; i++)
			must(&m, P(i), 0, ULONG_MAX, i);
		break;
	case EMPTYING:
		must(&m, P(0), 0, ULONG_MAX, 0);
		break;
	case BOUNDARY:
		for (unsigned long i = 0; i <= 64; i++)
			must(&m, P(i), 0, ULONG_MAX, i);
		break;
	case LONE_FAR:
		must(&m, P(0), far, far, far);
		break;
	case CYCLIC_ONE:
		cr_assert_eq(ridr_alloc_cyclic(&m, P(0), 0, INT_MAX, &prev), 0);
		break;
	}
	/* Warm up (the first pairs may build what churn then reuses). */
	for (long k = -100; k < pairs; k++) {
		if (!k)
			before = fx_alloc.total_allocs;
		switch (p) {
		case IN_LEAF:
			id = rk_prng_below(&r, 32);
			cr_assert_eq(ridr_remove(&m, id, NULL), 0);
			must(&m, P(1), 0, INT_MAX, id);
			break;
		case EMPTYING:
			cr_assert_eq(ridr_remove(&m, 0, NULL), 0);
			must(&m, P(1), 0, INT_MAX, 0);
			break;
		case BOUNDARY:
			cr_assert_eq(ridr_remove(&m, 64, NULL), 0);
			must(&m, P(1), 0, INT_MAX, 64);
			break;
		case LONE_FAR:
			cr_assert_eq(ridr_remove(&m, far, NULL), 0);
			must(&m, P(1), far, INT_MAX, far);
			break;
		case CYCLIC_ONE:
			cr_assert_eq(ridr_alloc_cyclic(&m, P(1), 0, INT_MAX, &id),
				     0);
			cr_assert_eq(ridr_remove(&m, prev, NULL), 0);
			prev = id;
			break;
		}
	}
	before = fx_alloc.total_allocs - before;
	ridr_destroy(&m);
	return before;
}

T(steady_churn_allocates_no_node)
{
	static const char *const name[] = { "within a leaf", "map emptying",
					    "leaf boundary", "lone far id" };

	for (int p = IN_LEAF; p <= LONE_FAR; p++)
		cr_expect_eq(churn_allocs(p, 10000), 0,
			     "%s: remove+alloc pairs allocated", name[p]);
	/* Cyclic: the bucket's tombstones are dropped by a copy once its
	 * room runs out: one allocation per 23 pairs at most. */
	cr_expect_leq(churn_allocs(CYCLIC_ONE, 10000), 10000 / 23 + 1,
		      "cyclic churn with one live id allocated too often");
}

/* ---- preload ---- */

T(a_preload_holds_even_if_the_tree_shrinks_before_the_insertion)
{
	struct ridr m;
	struct ridr_preload pl = RIDR_PRELOAD_INIT;
	unsigned long id;

	ridr_init(&m);
	for (unsigned long i = 0; i < 100; i++)
		must(&m, P(i), 0, ULONG_MAX, i);
	must(&m, P(1), 1UL << 45, 1UL << 45, 1UL << 45);
	cr_assert_eq(ridr_preload(&pl, &m, 1UL << 50, RK_GFP_KERNEL), 0);
	/* Another writer empties objects: the tall path goes, the tree
	 * shrinks back to two levels. */
	cr_assert_eq(ridr_remove(&m, 1UL << 45, NULL), 0);
	for (unsigned long i = 64; i < 100; i++)
		cr_assert_eq(ridr_remove(&m, i, NULL), 0);
	fx_alloc.fail_all = true;	/* nothing can be allocated now */
	ridr_lock(&m);
	cr_expect_eq(__ridr_alloc(&m, P(2), 1UL << 50, 1UL << 50, &id, &pl), 0,
		     "a preload must cover any insertion up to its max");
	ridr_unlock(&m);
	fx_alloc.fail_all = false;
	ridr_preload_end(&pl);
	rk_rcu_read_lock();
	cr_expect_eq(ridr_find(&m, 1UL << 50), P(2));
	rk_rcu_read_unlock();
	ridr_destroy(&m);
}

T(repeated_preloads_reuse_the_maps_spares)
{
	struct ridr m;
	long before = 0;

	ridr_init(&m);
	fx_alloc.watch_size = NODE;	/* count full-node allocations */
	for (int k = 0; k < 10; k++) {
		struct ridr_preload pl = RIDR_PRELOAD_INIT;
		unsigned long id;

		if (k == 1)
			before = fx_alloc.watch_allocs;
		cr_assert_eq(ridr_preload(&pl, &m, INT_MAX, RK_GFP_KERNEL), 0);
		ridr_lock(&m);
		cr_assert_eq(__ridr_alloc(&m, P(k), 0, INT_MAX, &id, &pl), 0);
		ridr_unlock(&m);
		ridr_preload_end(&pl);
	}
	cr_expect_eq(fx_alloc.watch_allocs - before, 0,
		     "each preload allocated nodes again instead of reusing "
		     "the map's spares");
	cr_expect_eq(ridr_memory(&m) % NODE != 0 || ridr_memory(&m) >= 7 * NODE,
		     true, "the spares are counted in ridr_memory()");
	ridr_destroy(&m);
}
