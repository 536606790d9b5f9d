// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ridr_find_bulk: the argument checks (out[] untouched on -EINVAL), the
 * empty map, n = 0, and batches over every map shape (root bucket, dense
 * full nodes, sparse 31-bit ids in buckets, 64-bit ids in a tall tree)
 * with duplicates, ids beyond the root's range and reservations; every
 * result is compared with ridr_find() of the same id and with what the
 * test stored.  Batch sizes cross the group size (32) and its multiples.
 * The randomized differential check is in ridr_random_test.c, readers
 * under a writer in ridr_stress_test.c.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/ridr_fixture.h"

#define T(name, ...) Test(ridr_bulk, name, .init = fx_setup, .fini = fx_teardown, ##__VA_ARGS__)

#define MAXB 100
#define POISON ((void *)(uintptr_t)0x5a5a5a5a)

/* Look up @ids[0..@n) in one call and one by one; every entry must be
 * what ridr_find() says, the count the number of non-NULL ones.
 */
static void check_batch(struct ridr *m, const unsigned long *ids,
			unsigned int n, const char *what)
{
	void *out[MAXB + 1], *want[MAXB];
	int got, found = 0;

	cr_assert_leq(n, MAXB);
	for (unsigned int i = 0; i <= MAXB; i++)
		out[i] = POISON;
	ridr_read_lock(m);
	got = ridr_find_bulk(m, ids, n, out);
	for (unsigned int i = 0; i < n; i++)
		want[i] = ridr_find(m, ids[i]);
	ridr_read_unlock(m);
	for (unsigned int i = 0; i < n; i++) {
		cr_assert_eq(out[i], want[i], "%s: batch of %u, id %lu "
			     "(index %u): bulk %p, ridr_find %p", what, n,
			     ids[i], i, out[i], want[i]);
		found += want[i] != NULL;
	}
	cr_assert_eq(got, found, "%s: batch of %u returned %d, %d found",
		     what, n, got, found);
	cr_assert_eq(out[n], POISON, "%s: batch of %u wrote past out[n]",
		     what, n);
}

/* Every batch size from 1 to MAXB over @ids, sliding. */
static void check_sizes(struct ridr *m, const unsigned long *ids,
			unsigned int nids, const char *what)
{
	for (unsigned int n = 1; n <= MAXB && n <= nids; n++)
		for (unsigned int at = 0; at + n <= nids; at += n * 3 + 1)
			check_batch(m, ids + at, n, what);
}

T(bad_arguments_leave_out_untouched)
{
	struct ridr m;
	unsigned long ids[4] = { 0, 1, 2, 3 };
	void *out[4] = { POISON, POISON, POISON, POISON };

	ridr_init(&m);
	must_alloc(&m, P(0), 0, 0);
	ridr_read_lock(&m);
	cr_expect_eq(ridr_find_bulk(NULL, ids, 4, out), -EINVAL);
	cr_expect_eq(ridr_find_bulk(&m, NULL, 4, out), -EINVAL);
	cr_expect_eq(ridr_find_bulk(&m, ids, 4, NULL), -EINVAL);
	cr_expect_eq(ridr_find_bulk(&m, ids, (unsigned int)INT_MAX + 1, out),
		     -EINVAL, "n > INT_MAX does not fit the count");
	cr_expect_eq(ridr_find_bulk(&m, ids, UINT_MAX, out), -EINVAL);
	ridr_read_unlock(&m);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(out[i], POISON, "-EINVAL wrote out[%d]", i);
	ridr_destroy(&m);
}

T(zero_ids_return_zero_and_write_nothing)
{
	struct ridr m;
	unsigned long ids[1] = { 0 };
	void *out[1] = { POISON };

	ridr_init(&m);
	must_alloc(&m, P(0), 0, 0);
	ridr_read_lock(&m);
	cr_expect_eq(ridr_find_bulk(&m, ids, 0, out), 0);
	ridr_read_unlock(&m);
	cr_expect_eq(out[0], POISON, "n = 0 wrote out[0]");
	ridr_destroy(&m);
}

T(empty_map_finds_nothing)
{
	struct ridr m;
	unsigned long ids[40];

	for (int i = 0; i < 40; i++)
		ids[i] = i < 20 ? (unsigned long)i : ULONG_MAX >> (i - 20);
	ridr_init(&m);
	check_sizes(&m, ids, 40, "never used map");
	/* Emptied: the root bucket stays. */
	must_alloc(&m, P(1), 5, 5);
	cr_assert_eq(ridr_remove(&m, 5, NULL), 0);
	check_sizes(&m, ids, 40, "emptied map");
	ridr_destroy(&m);
}

T(root_bucket_finds_its_ids_only)
{
	struct ridr m;
	unsigned long ids[] = { 3, 3, 100, 7, 1UL << 20, 4, ULONG_MAX, 0,
				1UL << 40, 99, 3, 7 };
	unsigned int n = sizeof(ids) / sizeof(ids[0]);

	ridr_init(&m);
	cr_assert_eq(ridr_insert(&m, 3, P(3)), 0);
	cr_assert_eq(ridr_insert(&m, 7, P(7)), 0);
	cr_assert_eq(ridr_insert(&m, 100, P(100)), 0);
	cr_assert_eq(ridr_insert(&m, 4, NULL), 0);	/* a reservation */
	check_sizes(&m, ids, n, "root bucket");
	{
		void *out[12];

		ridr_read_lock(&m);
		cr_expect_eq(ridr_find_bulk(&m, ids, n, out), 6,
			     "3 (three times), 7 (twice) and 100 found");
		ridr_read_unlock(&m);
		cr_expect_eq(out[0], P(3));
		cr_expect_null(out[5], "a reservation reads as NULL");
		cr_expect_null(out[6], "ULONG_MAX is beyond the bucket");
	}
	ridr_destroy(&m);
}

T(dense_ids_are_all_found)
{
	enum { N = 20000 };
	unsigned long *ids = malloc(sizeof(*ids) * (N + 200));
	struct ridr m;
	void *out[MAXB];

	cr_assert(ids);
	ridr_init(&m);
	for (unsigned long i = 0; i < N; i++)
		cr_assert_eq(must_alloc(&m, P(i), 0, ULONG_MAX), i);
	for (unsigned long i = 0; i < N + 200; i++)
		ids[i] = (i * 7919) % (N + 200);	/* some beyond N */
	check_sizes(&m, ids, N + 200, "dense");
	/* Ids in order, all present: the count is the batch size. */
	for (unsigned long i = 0; i < MAXB; i++)
		ids[i] = i * 150;
	ridr_read_lock(&m);
	cr_expect_eq(ridr_find_bulk(&m, ids, MAXB, out), MAXB);
	ridr_read_unlock(&m);
	for (unsigned long i = 0; i < MAXB; i++)
		cr_expect_eq(out[i], P(i * 150), "id %lu", i * 150);
	ridr_destroy(&m);
	free(ids);
}

T(sparse_31_bit_ids_are_found_in_buckets)
{
	enum { N = 5000 };
	unsigned long *ids = malloc(sizeof(*ids) * 2 * N);
	struct rk_prng r;
	struct ridr m;

	cr_assert(ids);
	rk_prng_seed(&r, 31);
	ridr_init(&m);
	for (unsigned int i = 0; i < N; i++) {
		unsigned long id;
		int ret;

		do {
			id = rk_prng_below(&r, 1UL << 31);
			ret = ridr_insert(&m, id, P(id));
		} while (ret == -EBUSY);
		cr_assert_eq(ret, 0);
		ids[2 * i] = id;		/* present */
		ids[2 * i + 1] = id ^ 1;	/* likely absent, same bucket */
	}
	check_sizes(&m, ids, 2 * N, "sparse 31-bit");
	ridr_destroy(&m);
	free(ids);
}

T(tall_tree_and_ids_beyond_the_root)
{
	unsigned long ids[64];
	struct ridr m;
	unsigned int n = 0;

	ridr_init(&m);
	/* Ids 0..299 (one level-1 root): anything from 4096 on is beyond. */
	for (unsigned long i = 0; i < 300; i++)
		must_alloc(&m, P(i), 0, ULONG_MAX);
	for (unsigned int i = 0; i < 32; i++)
		ids[n++] = i % 2 ? 4096UL << i : i * 9;
	ids[n++] = ULONG_MAX;
	ids[n++] = 4095;
	ids[n++] = 4096;
	check_sizes(&m, ids, n, "beyond a level-1 root");
	/* Now a full-height tree: 64-bit ids near the top and in between. */
	cr_assert_eq(ridr_insert(&m, ULONG_MAX, P(1)), 0);
	cr_assert_eq(ridr_insert(&m, 1UL << 63, P(2)), 0);
	for (unsigned long i = 0; i < 40; i++)
		cr_assert_eq(ridr_insert(&m, (1UL << 40) + i * 64, P(i)), 0);
	for (unsigned int i = 0; i < 20; i++)
		ids[n++] = (1UL << 40) + i * 64 + (i % 3);
	ids[n++] = (1UL << 63) + 1;
	ids[n++] = ULONG_MAX - 1;
	check_sizes(&m, ids, n, "full-height tree");
	ridr_destroy(&m);
}

/*
 * Every height of a tree of full nodes, 1 to RIDR_MAX_LEVELS levels
 * (each height is walked by its own unrolled copy, the tallest ones by
 * a loop): dense ids 0..199 below a root grown to the height by one
 * high id, so that the dense ids' walks pass every level through full
 * nodes.  Probes: live and free ids of the dense leaves, an empty slot
 * of the root, the high id and its neighbour, ids beyond the root.
 */
T(every_height_walks_like_ridr_find)
{
	unsigned long ids[MAXB];

	for (unsigned int h = 1; h <= RIDR_MAX_LEVELS; h++) {
		unsigned int shift = (h - 1) * RIDR_SHIFT, n = 0;
		unsigned long high = 1UL << shift, root;
		char what[32];
		struct ridr m;

		ridr_init(&m);
		for (unsigned long i = 0; i < (h == 1 ? 50 : 200); i++)
			must_alloc(&m, P(i), 0, ULONG_MAX);
		if (h >= 3)
			cr_assert_eq(ridr_insert(&m, high, P(7)), 0);
		root = (unsigned long)m.root;
		cr_assert(root & RIDR_TAG_FULL, "height %u: a full root", h);
		cr_assert_eq(root & RIDR_ROOT_SHIFT_MASK, shift,
			     "height %u: the root's digit at bit %lu", h,
			     root & RIDR_ROOT_SHIFT_MASK);
		for (unsigned long i = 0; i < 40; i++)
			ids[n++] = i * 7;	/* 0..273: live and free */
		ids[n++] = high;
		ids[n++] = high + 1;
		ids[n++] = high - 1;
		if (h < RIDR_MAX_LEVELS) {
			ids[n++] = high << RIDR_SHIFT;	/* beyond the root */
			ids[n++] = (high << RIDR_SHIFT) - 1;
			ids[n++] = (high << RIDR_SHIFT) + 5;
		}
		ids[n++] = ULONG_MAX;
		ids[n++] = 63;
		ids[n++] = 64;
		snprintf(what, sizeof(what), "height %u", h);
		check_sizes(&m, ids, n, what);
		ridr_destroy(&m);
	}
}

T(duplicates_get_the_same_entry)
{
	unsigned long ids[48];
	void *out[48];
	struct ridr m;

	ridr_init(&m);
	for (unsigned long i = 0; i < 100; i++)
		must_alloc(&m, P(i), 0, ULONG_MAX);
	cr_assert_eq(ridr_insert(&m, 1UL << 30, P(7)), 0);
	for (int i = 0; i < 48; i++)
		ids[i] = i % 3 == 0 ? 42 : i % 3 == 1 ? 1UL << 30 : 1000;
	ridr_read_lock(&m);
	cr_expect_eq(ridr_find_bulk(&m, ids, 48, out), 32);
	ridr_read_unlock(&m);
	for (int i = 0; i < 48; i++)
		cr_expect_eq(out[i], i % 3 == 0 ? P(42) : i % 3 == 1 ? P(7) :
			     NULL, "copy %d of id %lu", i, ids[i]);
	check_sizes(&m, ids, 48, "duplicates");
	ridr_destroy(&m);
}

T(reservations_read_as_null)
{
	unsigned long ids[80];
	void *out[80];
	struct ridr m;

	ridr_init(&m);
	/* Even ids reserved in a dense leaf, odd ones filled; the same in
	 * a sparse bucket far away.
	 */
	for (unsigned long i = 0; i < 40; i++) {
		must_alloc(&m, i % 2 ? P(i) : NULL, 0, ULONG_MAX);
		cr_assert_eq(ridr_insert(&m, (1UL << 35) + i * 1000,
					 i % 2 ? P(i) : NULL), 0);
		ids[2 * i] = i;
		ids[2 * i + 1] = (1UL << 35) + i * 1000;
	}
	ridr_read_lock(&m);
	cr_expect_eq(ridr_find_bulk(&m, ids, 80, out), 40,
		     "reservations are not counted");
	ridr_read_unlock(&m);
	for (int i = 0; i < 80; i++)
		cr_expect_eq(out[i], (i / 2) % 2 ? P(i / 2) : NULL, "id %lu",
			     ids[i]);
	check_sizes(&m, ids, 80, "reservations");
	ridr_destroy(&m);
}
