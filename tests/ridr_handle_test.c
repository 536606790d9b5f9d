// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ridr's generation-checked handles: alloc/find/remove, a stale handle
 * after its id was reused, removal with the wrong generation, retirement
 * of an id whose generation would wrap, bad arguments, another RCU flavor
 * (mb), allocation-failure injection at every allocation point (handle
 * map unchanged), the memory of the generation store per id, and a
 * fixed-seed differential run against a reference model.  Readers under
 * writers: in ridr_handle_stress_test.c.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/lib/ridr_fixture.h"

#define T(name, ...) Test(ridr_handle, name, .init = fx_setup, .fini = fx_teardown, ##__VA_ARGS__)

static void *find(struct ridr_handles *hs, uint64_t h)
{
	void *p;

	ridr_read_lock(&hs->map);
	p = ridr_handle_find(hs, h);
	ridr_read_unlock(&hs->map);
	return p;
}

static uint64_t must_handle(struct ridr_handles *hs, void *p)
{
	uint64_t h = 0xdead;
	int ret = ridr_handle_alloc(hs, p, &h);

	cr_assert_eq(ret, 0, "ridr_handle_alloc failed: %d", ret);
	return h;
}

static uint64_t mk(unsigned int gen_bits, uint64_t gen, uint64_t id)
{
	return (gen << (64 - gen_bits)) | id;
}

T(alloc_find_remove)
{
	struct ridr_handles hs;
	uint64_t h[3];
	void *old = NULL;

	cr_assert_eq(ridr_handles_init(&hs, 16), 0);
	for (int i = 0; i < 3; i++) {
		h[i] = must_handle(&hs, P(i));
		cr_expect_eq(h[i], mk(16, 0, (uint64_t)i),
			     "first handles: generation 0, lowest ids");
		cr_expect_eq(ridr_handle_id(&hs, h[i]), (unsigned long)i);
		cr_expect_eq(ridr_handle_gen(&hs, h[i]), 0);
	}
	for (int i = 0; i < 3; i++)
		cr_expect_eq(find(&hs, h[i]), P(i));
	cr_expect_eq(ridr_handles_count(&hs), 3);
	cr_expect_eq(ridr_handle_remove(&hs, h[1], &old), 0);
	cr_expect_eq(old, P(1));
	cr_expect_null(find(&hs, h[1]), "a removed handle still finds");
	cr_expect_eq(ridr_handle_remove(&hs, h[1], NULL), -ENOENT,
		     "removed twice");
	cr_expect_eq(find(&hs, h[0]), P(0));
	cr_expect_eq(find(&hs, h[2]), P(2));
	cr_expect_eq(ridr_handles_count(&hs), 2);
	ridr_handles_destroy(&hs);
	cr_expect_eq(ridr_handles_count(&hs), 0);
	cr_expect_eq(ridr_handles_memory(&hs), 0);
}

T(stale_handle_after_reuse_of_the_same_id_finds_nothing)
{
	struct ridr_handles hs;
	uint64_t h1, h2;
	void *old = P(99);

	cr_assert_eq(ridr_handles_init(&hs, 8), 0);
	h1 = must_handle(&hs, P(1));
	cr_expect_eq(ridr_handle_remove(&hs, h1, NULL), 0);
	/* The same object again, at the same id: only the generation
	 * tells the handles apart.
	 */
	h2 = must_handle(&hs, P(1));
	cr_expect_eq(ridr_handle_id(&hs, h2), ridr_handle_id(&hs, h1),
		     "lowest-free allocation reuses the id");
	cr_expect_eq(ridr_handle_gen(&hs, h2), 1);
	cr_expect_null(find(&hs, h1), "stale handle found the reused id");
	cr_expect_eq(find(&hs, h2), P(1));
	cr_expect_eq(ridr_handle_remove(&hs, h1, &old), -ENOENT,
		     "a stale handle removed the live entry");
	cr_expect_eq(old, P(99), "a failed remove wrote *oldp");
	cr_expect_eq(find(&hs, h2), P(1), "the live entry is intact");
	cr_expect_eq(ridr_handles_count(&hs), 1);
	ridr_handles_destroy(&hs);
}

T(remove_with_wrong_generation_leaves_the_entry)
{
	struct ridr_handles hs;
	uint64_t h;

	cr_assert_eq(ridr_handles_init(&hs, 32), 0);
	for (int i = 0; i < 100; i++)
		must_handle(&hs, P(i));
	h = mk(32, 0, 70);
	cr_expect_eq(find(&hs, h), P(70));
	for (uint64_t g = 1; g < 4; g++) {
		cr_expect_eq(ridr_handle_remove(&hs, mk(32, g, 70), NULL),
			     -ENOENT, "generation %lu removed generation 0",
			     (unsigned long)g);
		cr_expect_null(find(&hs, mk(32, g, 70)));
	}
	cr_expect_eq(ridr_handle_remove(&hs, mk(32, 0xffffffff, 70), NULL),
		     -ENOENT);
	cr_expect_eq(find(&hs, h), P(70), "the entry is intact");
	cr_expect_eq(ridr_handles_count(&hs), 100);
	/* Never-issued ids: in a chunk that has counters, and far away. */
	cr_expect_null(find(&hs, mk(32, 0, 120)));
	cr_expect_null(find(&hs, mk(32, 0, 5000000)));
	cr_expect_eq(ridr_handle_remove(&hs, mk(32, 0, 120), NULL), -ENOENT);
	cr_expect_eq(ridr_handle_remove(&hs, mk(32, 0, 5000000), NULL),
		     -ENOENT);
	cr_expect_eq(ridr_handles_count(&hs), 100);
	ridr_handles_destroy(&hs);
}

T(an_id_whose_generation_would_wrap_is_retired)
{
	for (unsigned int bits = 1; bits <= 3; bits++) {
		struct ridr_handles hs;
		uint64_t h[8], last;
		unsigned int gens = 1u << bits;

		cr_assert_eq(ridr_handles_init(&hs, bits), 0);
		for (unsigned int g = 0; g < gens; g++) {
			h[g] = must_handle(&hs, P(g));
			cr_expect_eq(h[g], mk(bits, g, 0),
				     "gen_bits %u: use %u of id 0", bits, g);
			cr_expect_eq(ridr_handle_remove(&hs, h[g], NULL), 0);
		}
		cr_expect_eq(ridr_handles_retired(&hs), 1,
			     "gen_bits %u: id 0 not retired after %u uses",
			     bits, gens);
		last = must_handle(&hs, P(50));
		cr_expect_eq(last, mk(bits, 0, 1),
			     "gen_bits %u: a retired id was handed out again",
			     bits);
		for (unsigned int g = 0; g < gens; g++) {
			cr_expect_null(find(&hs, h[g]),
				       "gen_bits %u: handle of generation %u "
				       "of a retired id found", bits, g);
			cr_expect_eq(ridr_handle_remove(&hs, h[g], NULL),
				     -ENOENT);
		}
		cr_expect_eq(find(&hs, last), P(50));
		cr_expect_eq(ridr_handles_count(&hs), 1);
		ridr_handles_destroy(&hs);
	}
}

T(bad_arguments_change_nothing)
{
	struct ridr_handles hs;
	uint64_t h = 77;

	memset(&hs, 0x5a, sizeof(hs));
	cr_expect_eq(ridr_handles_init(&hs, 0), -EINVAL);
	cr_expect_eq(ridr_handles_init(&hs, 33), -EINVAL);
	cr_expect_eq(ridr_handles_init(&hs, UINT_MAX), -EINVAL);
	cr_expect_eq(ridr_handles_init(NULL, 8), -EINVAL);
	cr_expect_eq(hs.gen_bits, 0x5a5a5a5au, "a failed init wrote @hs");
	cr_assert_eq(ridr_handles_init(&hs, 8), 0);
	cr_expect_eq(ridr_handle_alloc(&hs, NULL, &h), -EINVAL);
	cr_expect_eq(ridr_handle_alloc(&hs, P(1), NULL), -EINVAL);
	cr_expect_eq(ridr_handle_alloc(NULL, P(1), &h), -EINVAL);
	cr_expect_eq(h, 77, "a failed alloc wrote *hp");
	cr_expect_eq(ridr_handle_remove(NULL, 0, NULL), -EINVAL);
	cr_expect_eq(ridr_handles_count(&hs), 0);
	cr_expect_eq(ridr_handles_memory(&hs), 0);
	cr_expect_null(find(&hs, 0));
	cr_expect_null(find(&hs, ~0ULL));
	ridr_handles_destroy(&hs);
}

T(a_handle_map_with_another_rcu_flavor)
{
	const rk_rcu_flavor_t *fl = RK_RCU_FLAVOR_MB;
	struct ridr_handles hs;
	uint64_t h1, h2;
	void *p;

	rk_rcu_register_thread(fl);
	cr_expect_eq(ridr_handles_init_flavor(&hs, 40, fl), -EINVAL);
	cr_assert_eq(ridr_handles_init_flavor(&hs, 4, fl), 0);
	for (int i = 0; i < 200; i++)
		h1 = must_handle(&hs, P(i));
	cr_expect_eq(ridr_handle_remove(&hs, h1, NULL), 0);
	h2 = must_handle(&hs, P(7));
	ridr_read_lock(&hs.map);	/* the mb read side */
	p = ridr_handle_find(&hs, h1);
	cr_expect_null(p, "stale handle found under the mb flavor");
	cr_expect_eq(ridr_handle_find(&hs, h2), P(7));
	ridr_read_unlock(&hs.map);
	ridr_handles_destroy(&hs);
	rk_rcu_barrier(fl);
	rk_rcu_unregister_thread(fl);
}

/* ---- failures ---- */

struct hsnap {
	unsigned long count, retired, mcount;
	size_t memory;
	void *found[200];
};

static void hsnap(struct ridr_handles *hs, struct hsnap *s, const uint64_t *h,
		  int n)
{
	s->count = ridr_handles_count(hs);
	s->retired = ridr_handles_retired(hs);
	s->mcount = ridr_count(&hs->map);
	s->memory = ridr_handles_memory(hs);
	for (int i = 0; i < n; i++)
		s->found[i] = find(hs, h[i]);
}

/*
 * Make the k-th allocation fail (and every later one) for k = 1, 2, ...:
 * -ENOMEM leaves the handle map as it was.  @pre ids first (@stale of them
 * removed again), then the allocation under test: a new chunk of
 * counters (pre = 0, 64, 4096: also new map nodes) or an existing one.
 */
static void inject(unsigned int gen_bits, int pre, int stale)
{
	for (long k = 1;; k++) {
		struct ridr_handles hs;
		struct hsnap a, b;
		static uint64_t h[200];
		uint64_t got = 5;
		long live;
		int ret, n = pre < 200 ? pre : 200;

		cr_assert_eq(ridr_handles_init(&hs, gen_bits), 0);
		for (int i = 0; i < pre; i++) {
			uint64_t x = must_handle(&hs, P(i));

			if (i < 200)
				h[i] = x;
		}
		for (int i = 0; i < stale; i++)
			cr_assert_eq(ridr_handle_remove(&hs, h[i], NULL), 0);
		hsnap(&hs, &a, h, n);
		live = fx_live_after_grace();
		fx_alloc.fail_from = k;
		ret = ridr_handle_alloc(&hs, P(1000), &got);
		fx_alloc.fail_from = 0;
		fx_alloc.fail_all = false;
		if (ret == 0) {
			cr_expect_eq(find(&hs, got), P(1000));
			if (stale)
				cr_expect_eq(got, mk(gen_bits, 1, 0),
					     "the stale id 0, generation 1");
			ridr_handles_destroy(&hs);
			break;
		}
		cr_expect_eq(ret, -ENOMEM, "failure %ld: got %d", k, ret);
		cr_expect_eq(got, 5, "failure %ld wrote *hp", k);
		hsnap(&hs, &b, h, n);
		cr_expect_eq(b.count, a.count, "failure %ld changed the count",
			     k);
		cr_expect_eq(b.retired, a.retired);
		cr_expect_eq(b.mcount, a.mcount,
			     "failure %ld changed the map's ids", k);
		cr_expect_eq(b.memory, a.memory, "failure %ld changed memory "
			     "(%zu -> %zu)", k, a.memory, b.memory);
		for (int i = 0; i < n; i++)
			cr_expect_eq(b.found[i], a.found[i],
				     "failure %ld changed handle %d", k, i);
		cr_expect_eq(fx_live_after_grace(), live,
			     "failure %ld leaked or freed objects", k);
		/* Still works after the failure. */
		got = must_handle(&hs, P(1000));
		cr_expect_eq(find(&hs, got), P(1000));
		ridr_handles_destroy(&hs);
		cr_assert_lt(k, 100, "operation keeps failing");
	}
}

T(alloc_failure_in_an_empty_map_leaves_it_unchanged)
{
	inject(16, 0, 0);
}

T(alloc_failure_in_a_new_chunk_leaves_the_map_unchanged)
{
	inject(8, 64, 0);
	inject(32, 4096, 0);
}

T(alloc_failure_in_an_existing_chunk_leaves_the_map_unchanged)
{
	inject(16, 40, 0);
	inject(16, 40, 1);	/* reuses id 0 at generation 1 */
}

/* ---- memory ---- */

T(generation_store_costs_what_the_header_says, .timeout = 120)
{
	/* Counter bytes per id; a chunk of 64 also has an rcu head (16
	 * bytes, 24 under ThreadSanitizer), and @gens' nodes add about 0.16.
	 */
	static const struct {
		unsigned int bits, bytes;
	} w[] = { { 8, 1 }, { 16, 2 }, { 32, 4 } };
	const unsigned long n = 262144;

	for (unsigned int j = 0; j < sizeof(w) / sizeof(w[0]); j++) {
		struct ridr_handles hs;
		double gens, total, max = w[j].bytes +
			sizeof(struct rk_rcu_head) / 64.0 + 0.2;

		cr_assert_eq(ridr_handles_init(&hs, w[j].bits), 0);
		for (unsigned long i = 0; i < n; i++)
			must_handle(&hs, P(i));
		gens = (double)(ridr_handles_memory(&hs) -
				ridr_memory(&hs.map)) / n;
		total = (double)ridr_handles_memory(&hs) / n;
		fprintf(stderr, "handles, gen_bits %u, %lu dense ids: "
			"generations %.3f B/id, total %.3f B/id (map alone "
			"%.3f)\n", w[j].bits, n, gens, total,
			(double)ridr_memory(&hs.map) / n);
		cr_expect_leq(gens, max, "gen_bits %u: %.3f B/id, more than "
			      "%.3f", w[j].bits, gens, max);
		/* Counters stay when their ids are freed. */
		for (unsigned long i = 0; i < n; i++)
			cr_assert_eq(ridr_handle_remove(&hs, mk(w[j].bits, 0,
								i), NULL), 0);
		cr_expect_geq((double)(ridr_handles_memory(&hs) -
				       ridr_memory(&hs.map)) / n, gens - 0.01);
		ridr_handles_destroy(&hs);
	}
}

/* ---- differential ---- */

#define MODEL_IDS 65536

struct model {
	uint32_t gen[MODEL_IDS];
	bool live[MODEL_IDS], retired[MODEL_IDS];
	void *ptr[MODEL_IDS];
	unsigned long count, retired_n;
};

static void differential(unsigned int gen_bits, uint64_t seed, long ops)
{
	static struct model m;
	static uint64_t issued[4096];
	unsigned long low = 0;	/* no retired id below: the search's start */
	struct ridr_handles hs;
	struct rk_prng r;
	int nissued = 0;
	uint32_t gmax = (uint32_t)((1ULL << gen_bits) - 1);

	memset(&m, 0, sizeof(m));
	rk_prng_seed(&r, seed);
	cr_assert_eq(ridr_handles_init(&hs, gen_bits), 0);
	for (long op = 0; op < ops; op++) {
		unsigned int what = (unsigned int)rk_prng_below(&r, 10);

		if (what < 4 && m.count < 300) {
			unsigned long id = low;
			uint64_t h;

			while (m.live[id] || m.retired[id])
				id++;
			cr_assert_lt(id, MODEL_IDS);
			h = must_handle(&hs, P(op));
			cr_assert_eq(h, mk(gen_bits, m.gen[id], id),
				     "op %ld: alloc gave %#llx, model id %lu "
				     "gen %u", op, (unsigned long long)h, id,
				     m.gen[id]);
			m.live[id] = true;
			m.ptr[id] = P(op);
			m.count++;
			issued[nissued++ % 4096] = h;
		} else if (nissued) {
			uint64_t h = issued[rk_prng_below(&r, nissued < 4096 ?
							  (uint64_t)nissued : 4096)];
			unsigned long id = ridr_handle_id(&hs, h);
			uint32_t g = ridr_handle_gen(&hs, h);
			bool ok = m.live[id] && m.gen[id] == g;

			/* Sometimes a forged generation. */
			if (!rk_prng_below(&r, 8)) {
				g = (uint32_t)rk_prng_below(&r, gmax + 1ULL);
				h = mk(gen_bits, g, id);
				ok = m.live[id] && m.gen[id] == g;
			}
			if (what < 7) {
				void *old = NULL;
				int ret = ridr_handle_remove(&hs, h, &old);

				cr_assert_eq(ret, ok ? 0 : -ENOENT,
					     "op %ld: remove id %lu gen %u: "
					     "%d", op, id, g, ret);
				if (ok) {
					cr_assert_eq(old, m.ptr[id]);
					m.live[id] = false;
					m.count--;
					if (g == gmax) {
						m.retired[id] = true;
						m.retired_n++;
						while (m.retired[low])
							low++;
					} else {
						m.gen[id] = g + 1;
					}
				}
			} else {
				cr_assert_eq(find(&hs, h), ok ? m.ptr[id] : NULL,
					     "op %ld: find id %lu gen %u", op,
					     id, g);
			}
		}
		if (op % 1024 == 0) {
			cr_assert_eq(ridr_handles_count(&hs), m.count);
			cr_assert_eq(ridr_handles_retired(&hs), m.retired_n);
		}
	}
	if (gen_bits <= 4)
		cr_expect_gt(m.retired_n, 0, "gen_bits %u: no id retired",
			     gen_bits);
	fprintf(stderr, "gen_bits %u: %ld ops, %lu live, %lu retired\n",
		gen_bits, ops, m.count, m.retired_n);
	ridr_handles_destroy(&hs);
}

T(random_ops_match_a_reference_model, .timeout = 120)
{
	differential(2, 1, 100000);
	differential(4, 2, 200000);
	differential(16, 3, 100000);
}
