// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ridr's IDA (ids without entries): lowest-free and cyclic allocation,
 * free, the RCU reader ridr_ida_test(), chunk boundaries (a full chunk is
 * skipped, a freed id in it comes back), allocation-failure injection at
 * every allocation point (IDA unchanged), the memory per id (bits, not
 * slots), and readers testing ids while writers allocate and free them.
 * The randomized differential run is in ridr_random_test.c.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/lib/ridr_fixture.h"

#define T(name, ...) Test(ridr_ida, name, .init = fx_setup, .fini = fx_teardown, ##__VA_ARGS__)

static bool test_id(struct ridr_ida *ida, unsigned long id)
{
	bool r;

	ridr_read_lock(&ida->map);
	r = ridr_ida_test(ida, id);
	ridr_read_unlock(&ida->map);
	return r;
}

static unsigned long must_ida(struct ridr_ida *ida, unsigned long min,
			      unsigned long max)
{
	unsigned long id = 0xdead;
	int ret = ridr_ida_alloc(ida, min, max, &id);

	cr_assert_eq(ret, 0, "ridr_ida_alloc(%lu, %lu) failed: %d", min, max,
		     ret);
	return id;
}

T(alloc_returns_lowest_free_id_and_free_returns_it)
{
	struct ridr_ida ida;
	unsigned long id = 77;

	ridr_ida_init(&ida);
	cr_expect_not(test_id(&ida, 0));
	for (unsigned long i = 0; i < 100; i++)
		cr_expect_eq(must_ida(&ida, 0, ULONG_MAX), i);
	cr_expect_eq(ridr_ida_count(&ida), 100);
	cr_expect(test_id(&ida, 99));
	cr_expect_not(test_id(&ida, 100));
	cr_expect_eq(ridr_ida_free(&ida, 42), 0);
	cr_expect_eq(ridr_ida_free(&ida, 42), -ENOENT, "freed twice");
	cr_expect_eq(ridr_ida_free(&ida, 1000), -ENOENT);
	cr_expect_not(test_id(&ida, 42));
	cr_expect_eq(must_ida(&ida, 0, ULONG_MAX), 42);
	cr_expect_eq(must_ida(&ida, 50, ULONG_MAX), 100);
	cr_expect_eq(must_ida(&ida, 5000, 5000), 5000);
	cr_expect_eq(ridr_ida_alloc(&ida, 5000, 5000, &id), -ENOSPC);
	cr_expect_eq(ridr_ida_alloc(&ida, 10, 9, &id), -EINVAL);
	cr_expect_eq(ridr_ida_alloc(&ida, 0, 9, NULL), -EINVAL);
	cr_expect_eq(ridr_ida_alloc(NULL, 0, 9, &id), -EINVAL);
	cr_expect_eq(ridr_ida_free(NULL, 1), -EINVAL);
	cr_expect_eq(id, 77, "a failed alloc wrote *idp");
	cr_expect_eq(ridr_ida_count(&ida), 102);
	ridr_ida_destroy(&ida);
	cr_expect_eq(ridr_ida_count(&ida), 0);
	cr_expect_eq(ridr_ida_memory(&ida), 0);
}

T(a_full_chunk_is_skipped_and_a_freed_id_in_it_comes_back)
{
	struct ridr_ida ida;
	unsigned long n = 3 * RIDR_IDA_BITS + 5;

	ridr_ida_init(&ida);
	for (unsigned long i = 0; i < n; i++)
		cr_assert_eq(must_ida(&ida, 0, ULONG_MAX), i);
	cr_expect_eq(must_ida(&ida, 10, ULONG_MAX), n,
		     "three full chunks skipped");
	cr_expect_eq(ridr_ida_free(&ida, RIDR_IDA_BITS + 17), 0);
	cr_expect_eq(ridr_ida_free(&ida, 2 * RIDR_IDA_BITS - 1), 0);
	cr_expect_eq(must_ida(&ida, 0, ULONG_MAX), RIDR_IDA_BITS + 17);
	cr_expect_eq(must_ida(&ida, RIDR_IDA_BITS + 18, ULONG_MAX),
		     2 * RIDR_IDA_BITS - 1);
	cr_expect_eq(must_ida(&ida, 0, ULONG_MAX), n + 1);
	/* Empty a chunk completely: its bitmap goes. */
	for (unsigned long i = RIDR_IDA_BITS; i < 2 * RIDR_IDA_BITS; i++)
		cr_assert_eq(ridr_ida_free(&ida, i), 0);
	cr_expect_not(test_id(&ida, RIDR_IDA_BITS));
	cr_expect(test_id(&ida, RIDR_IDA_BITS - 1));
	cr_expect(test_id(&ida, 2 * RIDR_IDA_BITS));
	cr_expect_eq(must_ida(&ida, 0, ULONG_MAX), RIDR_IDA_BITS);
	cr_expect_eq(ridr_ida_count(&ida), n + 2 - RIDR_IDA_BITS + 1);
	ridr_ida_destroy(&ida);
}

T(ids_at_the_top_of_the_range)
{
	struct ridr_ida ida;
	unsigned long id;

	ridr_ida_init(&ida);
	cr_expect_eq(must_ida(&ida, ULONG_MAX, ULONG_MAX), ULONG_MAX);
	cr_expect_eq(must_ida(&ida, ULONG_MAX - 1, ULONG_MAX), ULONG_MAX - 1);
	cr_expect_eq(ridr_ida_alloc(&ida, ULONG_MAX - 1, ULONG_MAX, &id),
		     -ENOSPC);
	/* Fill the last chunk: then nothing from its start on is free. */
	for (unsigned long i = 2; i < RIDR_IDA_BITS; i++)
		must_ida(&ida, ULONG_MAX - RIDR_IDA_BITS + 1, ULONG_MAX);
	cr_expect_eq(ridr_ida_alloc(&ida, ULONG_MAX - RIDR_IDA_BITS + 1,
				    ULONG_MAX, &id), -ENOSPC);
	cr_expect(test_id(&ida, ULONG_MAX - RIDR_IDA_BITS + 1));
	cr_expect_eq(ridr_ida_free(&ida, ULONG_MAX), 0);
	cr_expect_eq(must_ida(&ida, ULONG_MAX - 100, ULONG_MAX), ULONG_MAX);
	cr_expect_eq(must_ida(&ida, 1UL << 63, ULONG_MAX), 1UL << 63);
	ridr_ida_destroy(&ida);
}

T(cyclic_moves_past_freed_ids_then_wraps)
{
	struct ridr_ida ida;
	unsigned long id;

	ridr_ida_init(&ida);
	for (unsigned long i = 0; i < 5; i++) {
		cr_assert_eq(ridr_ida_alloc_cyclic(&ida, 0, 7, &id), 0);
		cr_expect_eq(id, i);
	}
	cr_expect_eq(ridr_ida_free(&ida, 1), 0);
	cr_expect_eq(ridr_ida_alloc_cyclic(&ida, 0, 7, &id), 0);
	cr_expect_eq(id, 5, "a freed id is not reused before the wrap");
	cr_expect_eq(ridr_ida_alloc_cyclic(&ida, 0, 7, &id), 0);
	cr_expect_eq(ridr_ida_alloc_cyclic(&ida, 0, 7, &id), 0);
	cr_expect_eq(id, 7);
	cr_expect_eq(ridr_ida_alloc_cyclic(&ida, 0, 7, &id), 0);
	cr_expect_eq(id, 1, "wrapped to the freed id");
	cr_expect_eq(ridr_ida_alloc_cyclic(&ida, 0, 7, &id), -ENOSPC);
	ridr_ida_destroy(&ida);
}

/* ---- failures ---- */

struct ida_snap {
	unsigned long count, cursor;
	size_t memory;
	bool bits[64];
};

static void ida_snap(struct ridr_ida *ida, struct ida_snap *s,
		     unsigned long base)
{
	s->count = ridr_ida_count(ida);
	s->cursor = ridr_get_cursor(&ida->map);
	s->memory = ridr_ida_memory(ida);
	for (unsigned long i = 0; i < 64; i++)
		s->bits[i] = test_id(ida, base + i);
}

/*
 * Make the k-th allocation fail (and every later one) for k = 1, 2, ...:
 * -ENOMEM leaves the IDA as it was.  Two operations: an id in a new chunk
 * far away (a bitmap, map nodes), and the id that fills a chunk (the
 * full marker's insertion).
 */
static void inject(bool fill, bool cyclic)
{
	for (long k = 1;; k++) {
		struct ridr_ida ida;
		struct ida_snap a, b;
		unsigned long id = 5, want, base;
		long live;
		int ret;

		ridr_ida_init(&ida);
		for (unsigned long i = 0; i < (fill ? RIDR_IDA_BITS - 1 : 70);
		     i++)
			must_ida(&ida, 0, ULONG_MAX);
		want = fill ? RIDR_IDA_BITS - 1 : (1UL << 40) + 3;
		base = want & ~63UL;
		if (cyclic) {
			ridr_lock(&ida.map);
			__ridr_set_cursor(&ida.map, want);
			ridr_unlock(&ida.map);
		}
		ida_snap(&ida, &a, base);
		live = fx_live_after_grace();
		fx_alloc.fail_from = k;
		ret = cyclic ? ridr_ida_alloc_cyclic(&ida, 0, ULONG_MAX, &id) :
			       ridr_ida_alloc(&ida, want, ULONG_MAX, &id);
		fx_alloc.fail_from = 0;
		fx_alloc.fail_all = false;
		if (ret == 0) {
			cr_expect_eq(id, want);
			cr_expect_gt(k, 1, "the operation never allocated?");
			cr_expect(test_id(&ida, want));
			ridr_ida_destroy(&ida);
			break;
		}
		cr_expect_eq(ret, -ENOMEM, "failure %ld: got %d", k, ret);
		cr_expect_eq(id, 5, "a failed alloc wrote *idp");
		ida_snap(&ida, &b, base);
		cr_expect_eq(b.count, a.count, "failure %ld changed the count",
			     k);
		cr_expect_eq(b.cursor, a.cursor, "failure %ld moved the cursor",
			     k);
		cr_expect_eq(b.memory, a.memory, "failure %ld changed memory",
			     k);
		for (int i = 0; i < 64; i++)
			cr_expect_eq(b.bits[i], a.bits[i],
				     "failure %ld changed id %lu", k, base + i);
		cr_expect_eq(fx_live_after_grace(), live,
			     "failure %ld leaked or freed objects", k);
		/* The IDA still works after the failure. */
		cr_expect_eq(must_ida(&ida, want, ULONG_MAX), want);
		ridr_ida_destroy(&ida);
		cr_assert_lt(k, 100, "operation keeps failing");
	}
}

T(alloc_failure_in_a_new_chunk_leaves_the_ida_unchanged)
{
	inject(false, false);
}

T(alloc_failure_filling_a_chunk_leaves_the_ida_unchanged)
{
	inject(true, false);
}

T(cyclic_alloc_failure_leaves_the_ida_unchanged)
{
	inject(false, true);
}

/* ---- memory ---- */

T(dense_ids_cost_bits_not_slots, .timeout = 120)
{
	struct ridr_ida ida;
	const unsigned long n = 1000000;
	double per_id, bound;

	ridr_ida_init(&ida);
	for (unsigned long i = 0; i < n; i++)
		must_ida(&ida, 0, ULONG_MAX);
	per_id = (double)ridr_ida_memory(&ida) / n;
	fprintf(stderr, "IDA, %lu dense ids: %zu bytes, %.4f bytes per id "
		    "(kernel IDA: 0.134)\n", n, ridr_ida_memory(&ida), per_id);
	/* 245 chunks of 528 bytes, one full leaf per 32 chunks and the
	 * nodes above: 0.133 + what the last, partial chunk adds.  A chunk's
	 * 16-byte header shares a union with its rcu head, which is larger
	 * in the ThreadSanitizer build (24 bytes): add the difference.
	 */
	bound = 0.135 + (double)(sizeof(struct rk_rcu_head) > 16 ?
				 sizeof(struct rk_rcu_head) - 16 : 0) *
			(n / RIDR_IDA_BITS + 1) / (double)n;
	cr_expect_leq(per_id, bound, "%.4f bytes per dense id", per_id);
	cr_expect_eq(ridr_ida_count(&ida), n);
	/* Free every other id: still bits (a chunk stays). */
	for (unsigned long i = 0; i < n; i += 2)
		cr_assert_eq(ridr_ida_free(&ida, i), 0);
	cr_expect_leq((double)ridr_ida_memory(&ida) / (n / 2), 2 * bound);
	for (unsigned long i = 1; i < n; i += 2)
		cr_assert_eq(ridr_ida_free(&ida, i), 0);
	cr_expect_leq(ridr_ida_memory(&ida), IDLE_BOUND,
		      "an emptied IDA holds its map's idle bound at most");
	ridr_ida_destroy(&ida);
}

/* The stress writers' pattern on one thread: no id is handed out twice. */
T(churn_never_hands_out_an_allocated_id, .timeout = 120)
{
	struct ridr_ida ida;
	static unsigned long held[2 * 512];
	struct rk_prng r;

	ridr_ida_init(&ida);
	rk_prng_seed(&r, 5);
	for (int i = 0; i < 2 * 512; i++)
		held[i] = ULONG_MAX;
	for (long op = 0; op < 400000; op++) {
		int i = (int)rk_prng_below(&r, 2 * 512);
		unsigned long id = held[i];

		if (id != ULONG_MAX) {
			held[i] = ULONG_MAX;
			cr_assert_eq(ridr_ida_free(&ida, id), 0, "op %ld: free "
				     "%lu", op, id);
		} else {
			unsigned long min = rk_prng_below(&r, 4) ?
				rk_prng_below(&r, 3 * RIDR_IDA_BITS) :
				rk_prng_next(&r) >> 2;
			bool cyc = !rk_prng_below(&r, 3);
			int ret = cyc ? ridr_ida_alloc_cyclic(&ida, min,
							      ULONG_MAX - 1, &id) :
					ridr_ida_alloc(&ida, min, ULONG_MAX - 1,
						       &id);

			cr_assert_eq(ret, 0);
			for (int j = 0; j < 2 * 512; j++)
				cr_assert_neq(held[j], id, "op %ld: %s(%lu) "
					      "handed out %lu, held in %d", op,
					      cyc ? "cyclic" : "alloc", min, id,
					      j);
			held[i] = id;
		}
	}
	ridr_ida_destroy(&ida);
}

/* ---- readers under writers ---- */

#define IDA_WRITERS 2
#define IDA_READERS 2
#define OWN 512

struct ida_stress {
	struct ridr_ida ida;
	/* Ids a writer holds: a reader that sees one here, unchanged
	 * (same even sequence number) before and after its test, must find
	 * it allocated (published after the alloc, withdrawn before the
	 * free; the sequence number tells a re-allocation of the same id
	 * from no change at all). */
	unsigned long held[IDA_WRITERS][OWN];
	unsigned long seq[IDA_WRITERS][OWN];
	int stop;
	long tested;
	struct rk_start start;
};

static struct ida_stress is;

/* A full barrier between a thread's own accesses (as smp_mb()): an RMW,
 * not a C11 fence, which ThreadSanitizer does not model (GCC's -Wtsan).
 * Orders the held[] store and the free (writer), and the test and the
 * held[] reload (reader).
 */
static int barrier_word;
static inline void full_barrier(void)
{
	__atomic_fetch_add(&barrier_word, 0, __ATOMIC_SEQ_CST);
}

static void *ida_writer(void *arg)
{
	long w = (long)(intptr_t)arg;
	struct rk_prng r;

	rk_prng_seed(&r, 77 + (uint64_t)w);
	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	for (int i = 0; i < OWN; i++)
		rk_write_once(is.held[w][i], ULONG_MAX);
	rk_start_wait(&is.start, IDA_WRITERS + IDA_READERS);
	for (long op = 0; op < RK_STRESS(200000L); op++) {
		int i = (int)rk_prng_below(&r, OWN);
		unsigned long id = rk_read_once(is.held[w][i]);

		if (id != ULONG_MAX) {
			__atomic_add_fetch(&is.seq[w][i], 1, __ATOMIC_SEQ_CST);
			rk_write_once(is.held[w][i], ULONG_MAX);
			full_barrier();
			cr_assert_eq(ridr_ida_free(&is.ida, id), 0);
			__atomic_add_fetch(&is.seq[w][i], 1, __ATOMIC_SEQ_CST);
		} else {
			unsigned long min = rk_prng_below(&r, 4) ?
				rk_prng_below(&r, 3 * RIDR_IDA_BITS) :
				rk_prng_next(&r) >> 2;
			bool cyc = !rk_prng_below(&r, 3);
			int ret = !cyc ?
				ridr_ida_alloc(&is.ida, min, ULONG_MAX - 1,
					       &id) :
				ridr_ida_alloc_cyclic(&is.ida, min,
						      ULONG_MAX - 1, &id);

			cr_assert_eq(ret, 0, "ida alloc failed: %d", ret);
			__atomic_add_fetch(&is.seq[w][i], 1, __ATOMIC_SEQ_CST);
			__atomic_store_n(&is.held[w][i], id, __ATOMIC_RELEASE);
			__atomic_add_fetch(&is.seq[w][i], 1, __ATOMIC_SEQ_CST);
		}
	}
	for (int i = 0; i < OWN; i++) {
		unsigned long id = is.held[w][i];

		if (id == ULONG_MAX)
			continue;
		/* Withdrawn first, as in the loop: readers still run. */
		__atomic_add_fetch(&is.seq[w][i], 1, __ATOMIC_SEQ_CST);
		rk_write_once(is.held[w][i], ULONG_MAX);
		full_barrier();
		cr_assert_eq(ridr_ida_free(&is.ida, id), 0);
		__atomic_add_fetch(&is.seq[w][i], 1, __ATOMIC_SEQ_CST);
	}
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	return NULL;
}

static void *ida_reader(void *arg)
{
	struct rk_prng r;
	long tested = 0;

	rk_prng_seed(&r, 99 + (uint64_t)(intptr_t)arg);
	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	rk_start_wait(&is.start, IDA_WRITERS + IDA_READERS);
	while (!__atomic_load_n(&is.stop, __ATOMIC_ACQUIRE)) {
		int w = (int)rk_prng_below(&r, IDA_WRITERS);
		int i = (int)rk_prng_below(&r, OWN);
		unsigned long s1 = __atomic_load_n(&is.seq[w][i],
						   __ATOMIC_SEQ_CST);
		unsigned long id = __atomic_load_n(&is.held[w][i],
						   __ATOMIC_ACQUIRE);
		bool set;

		ridr_read_lock(&is.ida.map);
		set = ridr_ida_test(&is.ida, id);
		/* Random ids too: any answer, but no crash or race. */
		(void)ridr_ida_test(&is.ida, rk_prng_below(&r,
							   4 * RIDR_IDA_BITS));
		ridr_read_unlock(&is.ida.map);
		full_barrier();
		/* Held, unchanged, throughout the test: allocated. */
		if (id != ULONG_MAX && !(s1 & 1) &&
		    __atomic_load_n(&is.seq[w][i], __ATOMIC_SEQ_CST) == s1)
			cr_assert(set, "held id %lu tested free", id);
		tested++;
	}
	__atomic_add_fetch(&is.tested, tested, __ATOMIC_RELAXED);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	return NULL;
}

Test(ridr_ida, readers_see_held_ids_while_writers_churn, .timeout = 600)
{
	pthread_t w[IDA_WRITERS], rd[IDA_READERS];

	rk_counting_alloc_install(&fx_alloc);
	memset(&is, 0, sizeof(is));
	ridr_ida_init(&is.ida);
	for (long i = 0; i < IDA_READERS; i++)
		pthread_create(&rd[i], NULL, ida_reader, (void *)(intptr_t)i);
	for (long i = 0; i < IDA_WRITERS; i++)
		pthread_create(&w[i], NULL, ida_writer, (void *)(intptr_t)i);
	for (int i = 0; i < IDA_WRITERS; i++)
		pthread_join(w[i], NULL);
	__atomic_store_n(&is.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < IDA_READERS; i++)
		pthread_join(rd[i], NULL);
	cr_expect_eq(ridr_ida_count(&is.ida), 0);
	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	ridr_ida_destroy(&is.ida);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	cr_expect_gt(is.tested, 0);
	cr_expect_eq(rk_counting_alloc_live_objects(&fx_alloc), 0,
		     "IDA objects still allocated after rcu_barrier");
	rk_counting_alloc_remove(&fx_alloc);
}
