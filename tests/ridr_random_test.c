// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Randomized differential test: ridr against a simple reference model (a
 * sorted array of (id, entry) pairs), fixed seeds, 10^6 mixed operations
 * per seed (a tenth under ThreadSanitizer).  Every result is checked, and
 * every 4096 operations the full iteration order, the count and the
 * emptiness.  Id distributions (one per test): mostly a small dense
 * window (leaves fill, empty, collapse into buckets), sometimes anywhere
 * in the 64-bit range (the tree grows and shrinks through every height);
 * random 31-bit ids with clusters (buckets copy, burst into shared
 * nodes, unshare, merge back); and 64-bit ids near 2^63 and ULONG_MAX
 * (top-level slots, wide keys).  One test also makes allocations fail at
 * random: the call must return -ENOMEM and change nothing.
 *
 * Operations: ridr_alloc, ridr_alloc_cyclic and ridr_alloc_cyclic_wrap
 * (its wrap report against the model's cursor), ridr_insert,
 * ridr_store, ridr_remove, ridr_remove_if, ridr_replace, ridr_cmpxchg
 * (right and wrong expected entries), ridr_find under ridr_read_lock,
 * ridr_find_locked, ridr_get_next and ridr_get_next_range (random upper
 * bounds); ridr_for_each, ridr_for_each_fn and ridr_find_bulk (batches
 * of model, neighbouring, repeated and random ids, against ridr_find and
 * the model) in the full comparisons.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/ridr_fixture.h"

#define OPS RK_STRESS(1000000L)
#define WINDOW 3000UL	/* dense ids: [0, WINDOW) */
#define MAX_LIVE 4000	/* keeps the model's memmoves cheap */
/* Full comparison every 4096 ops (-DRANDOM_CHECK_MASK=0: every op). */
#ifndef RANDOM_CHECK_MASK
#define RANDOM_CHECK_MASK 4095
#endif

struct model {
	unsigned long *id;
	void **entry;
	long n;
	unsigned long cursor;
	bool wrapped;	/* the cursor went past ULONG_MAX */
};

/* Index of the first element >= id. */
static long lower_bound(const struct model *md, unsigned long id)
{
	long lo = 0, hi = md->n;

	while (lo < hi) {
		long mid = lo + (hi - lo) / 2;

		if (md->id[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool model_has(const struct model *md, unsigned long id, long *pos)
{
	*pos = lower_bound(md, id);
	return *pos < md->n && md->id[*pos] == id;
}

/* Lowest id in [min, max] not in the model, or -ENOSPC. */
static int model_free(const struct model *md, unsigned long min,
		      unsigned long max, unsigned long *out)
{
	long i = lower_bound(md, min);
	unsigned long cand = min;

	for (; i < md->n && md->id[i] == cand; i++) {
		if (cand == max)
			return -ENOSPC;
		cand++;
	}
	if (cand > max)
		return -ENOSPC;
	*out = cand;
	return 0;
}

static void model_insert(struct model *md, unsigned long id, void *e)
{
	long pos = lower_bound(md, id);

	memmove(&md->id[pos + 1], &md->id[pos],
		(size_t)(md->n - pos) * sizeof(md->id[0]));
	memmove(&md->entry[pos + 1], &md->entry[pos],
		(size_t)(md->n - pos) * sizeof(md->entry[0]));
	md->id[pos] = id;
	md->entry[pos] = e;
	md->n++;
}

static void model_delete(struct model *md, long pos)
{
	memmove(&md->id[pos], &md->id[pos + 1],
		(size_t)(md->n - pos - 1) * sizeof(md->id[0]));
	memmove(&md->entry[pos], &md->entry[pos + 1],
		(size_t)(md->n - pos - 1) * sizeof(md->entry[0]));
	md->n--;
}

enum idmode { DENSE_MIX, SPARSE31, FAR64 };

static unsigned long pick_id(struct rk_prng *r, const struct model *md,
			     enum idmode mode)
{
	uint64_t k = rk_prng_below(r, 100);

	if (mode == SPARSE31 && (k < 60 || md->n == 0)) {
		/* Clusters of 300 ids at 16 random places, or anywhere. */
		if (k < 30)
			return (rk_prng_below(r, 16) * 0x7654321UL) % 0x7fffffffUL +
			       rk_prng_below(r, 300);
		return rk_prng_below(r, 1UL << 31);
	}
	if (mode == FAR64 && (k < 60 || md->n == 0)) {
		if (k < 20)
			return ULONG_MAX - rk_prng_below(r, 5000);
		if (k < 40)
			return (1UL << 63) + rk_prng_below(r, 1UL << 20);
		return rk_prng_next(r);
	}
	if (k < 60 || md->n == 0)
		return rk_prng_below(r, WINDOW);
	if (k < 90)	/* an id that exists */
		return md->id[rk_prng_below(r, (uint64_t)md->n)];
	if (k < 95)
		return rk_prng_next(r) >> rk_prng_below(r, 64);
	return ULONG_MAX - rk_prng_below(r, 100);
}

static void *pick_entry(struct rk_prng *r)
{
	/* 10% reservations. */
	return rk_prng_below(r, 10) ? P(rk_prng_below(r, 1UL << 40)) : NULL;
}

static int count_fn(unsigned long id, void *entry, void *data)
{
	(void)id;
	(void)entry;
	++*(long *)data;
	return 0;
}

/*
 * ridr_find_bulk against ridr_find and the model: batches of 1 to 64 ids
 * (model ids, their neighbours, repeats, random and far ids), picked by a
 * PRNG of their own so each seed keeps its operation stream.
 */
static void check_bulk(struct ridr *m, const struct model *md, long op)
{
	unsigned long ids[64];
	void *out[65], *one[64];
	struct rk_prng r;

	rk_prng_seed(&r, 0xb01c ^ (uint64_t)op);
	for (int round = 0; round < 8; round++) {
		unsigned int n = 1 + (unsigned int)rk_prng_below(&r, 64);
		int got, found = 0;
		long pos;

		for (unsigned int i = 0; i < n; i++) {
			uint64_t k = rk_prng_below(&r, 6);
			unsigned long id = md->n ?
				md->id[rk_prng_below(&r, (uint64_t)md->n)] : 0;

			if (k == 2)
				id += rk_prng_below(&r, 3) - 1;
			else if (k == 3 && i)
				id = ids[rk_prng_below(&r, i)];
			else if (k == 4)
				id = rk_prng_next(&r) >> rk_prng_below(&r, 64);
			else if (k == 5)
				id = ULONG_MAX - rk_prng_below(&r, 100);
			ids[i] = id;
		}
		out[n] = P(77);
		ridr_read_lock(m);
		got = ridr_find_bulk(m, ids, n, out);
		for (unsigned int i = 0; i < n; i++)
			one[i] = ridr_find(m, ids[i]);
		ridr_read_unlock(m);
		for (unsigned int i = 0; i < n; i++) {
			void *want = model_has(md, ids[i], &pos) ?
				     md->entry[pos] : NULL;

			cr_assert_eq(out[i], one[i], "op %ld: bulk of %u, id "
				     "%lu (index %u): %p, ridr_find %p", op, n,
				     ids[i], i, out[i], one[i]);
			cr_assert_eq(out[i], want, "op %ld: bulk of %u, id %lu:"
				     " %p, model %p", op, n, ids[i], out[i],
				     want);
			found += want != NULL;
		}
		cr_assert_eq(got, found, "op %ld: bulk of %u returned %d, "
			     "model %d", op, n, got, found);
		cr_assert_eq(out[n], P(77), "op %ld: bulk of %u wrote out[n]",
			     op, n);
	}
}

static void check_all(struct ridr *m, const struct model *md, long op)
{
	unsigned long id;
	long i = 0, live = 0, seen = 0;
	void *e;

	for (long k = 0; k < md->n; k++)
		live += md->entry[k] != NULL;
	ridr_read_lock(m);
	cr_assert_eq(ridr_for_each_fn(m, count_fn, &seen), 0);
	ridr_read_unlock(m);
	cr_assert_eq(seen, live, "op %ld: for_each_fn saw %ld entries, "
		     "model %ld", op, seen, live);

	cr_assert_eq(ridr_count(m), (unsigned long)md->n,
		     "op %ld: count %lu, model %ld", op, ridr_count(m), md->n);
	cr_assert_eq(ridr_is_empty(m), md->n == 0, "op %ld: is_empty", op);
	rk_rcu_read_lock();
	ridr_for_each(m, e, id) {
		while (i < md->n && !md->entry[i])
			i++;	/* reservations are skipped */
		cr_assert_lt(i, md->n, "op %ld: extra entry at %lu", op, id);
		cr_assert_eq(id, md->id[i], "op %ld: iteration found %lu, "
			     "model has %lu", op, id, md->id[i]);
		cr_assert_eq(e, md->entry[i], "op %ld: entry of %lu", op, id);
		i++;
	}
	rk_rcu_read_unlock();
	while (i < md->n && !md->entry[i])
		i++;
	cr_assert_eq(i, md->n, "op %ld: iteration stopped early", op);
	check_bulk(m, md, op);
}

static void run(uint64_t seed, enum idmode mode, bool failures)
{
	struct model md = { 0 };
	struct rk_prng r;
	struct ridr m;

	md.id = calloc(MAX_LIVE + 1, sizeof(*md.id));
	md.entry = calloc(MAX_LIVE + 1, sizeof(*md.entry));
	cr_assert(md.id && md.entry);
	rk_prng_seed(&r, seed);
	ridr_init(&m);
	for (long op = 0; op < OPS; op++) {
		uint64_t kind = rk_prng_below(&r, 100);
		unsigned long id = pick_id(&r, &md, mode), min, max, got, want;
		bool inject = failures && rk_prng_below(&r, 20) == 0;
		void *e, *old, *mold;
		long pos;
		int ret, mret;

		if (kind < 35 && md.n < MAX_LIVE &&
		    rk_prng_below(&r, 6) == 0) {	/* insert, store */
			bool has = model_has(&md, id, &pos);
			bool store = rk_prng_below(&r, 2);

			e = pick_entry(&r);
			if (inject)
				fx_alloc.fail_from = 1 + (long)rk_prng_below(&r, 4);
			old = P(4321);
			ret = store ? ridr_store(&m, id, e, &old) :
				      ridr_insert(&m, id, e);
			fx_alloc.fail_from = 0;
			fx_alloc.fail_all = false;
			if (inject && ret == -ENOMEM && !has) {
				cr_assert_eq(old, P(4321), "op %ld: failed "
					     "store wrote *oldp", op);
				check_all(&m, &md, op);
				continue;
			}
			if (store) {
				cr_assert_eq(ret, 0, "op %ld: store %lu "
					     "returned %d", op, id, ret);
				cr_assert_eq(old, has ? md.entry[pos] : NULL,
					     "op %ld: store %lu's old entry",
					     op, id);
				if (has)
					md.entry[pos] = e;
				else
					model_insert(&md, id, e);
			} else {
				cr_assert_eq(ret, has ? -EBUSY : 0,
					     "op %ld: insert %lu returned %d",
					     op, id, ret);
				if (!has)
					model_insert(&md, id, e);
			}
		} else if (kind < 35 && md.n < MAX_LIVE) {	/* alloc */
			bool cyclic = rk_prng_below(&r, 4) == 0;
			bool wrap = cyclic && rk_prng_below(&r, 2);
			bool mwrap = false;

			min = id;
			switch (rk_prng_below(&r, 4)) {
			case 0: max = min; break;
			case 1: max = min + rk_prng_below(&r, 200); break;
			case 2: max = ULONG_MAX; break;
			default: max = min + WINDOW; break;
			}
			if (max < min)
				max = ULONG_MAX;
			if (rk_prng_below(&r, 50) == 0 && max > min) {
				/* swapped bounds: rejected, nothing changes */
				cr_assert_eq(ridr_alloc(&m, P(1), max, min, &got),
					     -EINVAL, "op %ld: min > max", op);
				continue;
			}
			e = pick_entry(&r);
			if (inject) {
				/* Every allocation from the k-th on fails (the
				 * locked calls retry once with a sleeping
				 * allocation); -ENOMEM must change nothing. */
				fx_alloc.fail_from = 1 + (long)rk_prng_below(&r, 4);
			}
			if (cyclic) {
				unsigned long start = md.cursor;

				if (start < min || start > max)
					start = min;
				mret = model_free(&md, start, max, &want);
				if (mret && start > min)
					mret = model_free(&md, min, start - 1,
							  &want);
				mwrap = !mret && (want < md.cursor ||
						  md.wrapped);
				ret = wrap ? ridr_alloc_cyclic_wrap(&m, e, min,
								    max, &got) :
					     ridr_alloc_cyclic(&m, e, min, max,
							       &got);
				if (wrap && ret >= 0) {
					cr_assert_eq(ret, mwrap, "op %ld: "
						     "cyclic_wrap [%lu, %lu] "
						     "from %lu gave %lu, wrap "
						     "%d, model %d", op, min,
						     max, md.cursor, got, ret,
						     mwrap);
					ret = 0;
				}
			} else {
				mret = model_free(&md, min, max, &want);
				ret = ridr_alloc(&m, e, min, max, &got);
			}
			fx_alloc.fail_from = 0;
			fx_alloc.fail_all = false;
			if (inject && ret == -ENOMEM && !mret) {
				check_all(&m, &md, op);
				continue;
			}
			cr_assert_eq(ret, mret, "op %ld: alloc%s [%lu, %lu] "
				     "returned %d, model %d", op,
				     cyclic ? "_cyclic" : "", min, max, ret,
				     mret);
			if (!ret) {
				cr_assert_eq(got, want, "op %ld: alloc%s [%lu, "
					     "%lu] gave %lu, model %lu", op,
					     cyclic ? "_cyclic" : "", min, max,
					     got, want);
				model_insert(&md, got, e);
				if (cyclic) {
					md.cursor = got + 1;
					md.wrapped = got == ULONG_MAX;
				}
			}
		} else if (kind < 60 && rk_prng_below(&r, 4) == 0) {
			/* remove_if: the expected entry, or another one */
			bool has = model_has(&md, id, &pos);
			bool right = rk_prng_below(&r, 3) != 0;
			void *want_e = has && right ? md.entry[pos] :
				       pick_entry(&r);
			int mr = !has ? -ENOENT :
				 md.entry[pos] == want_e ? 0 : -EBUSY;

			ret = ridr_remove_if(&m, id, want_e);
			cr_assert_eq(ret, mr, "op %ld: remove_if %lu returned "
				     "%d, model %d", op, id, ret, mr);
			if (!ret)
				model_delete(&md, pos);
		} else if (kind < 60) {			/* remove */
			bool has = model_has(&md, id, &pos);

			mold = has ? md.entry[pos] : NULL;
			old = P(12345);
			ret = ridr_remove(&m, id, &old);
			cr_assert_eq(ret, has ? 0 : -ENOENT,
				     "op %ld: remove %lu returned %d", op, id,
				     ret);
			if (has) {
				cr_assert_eq(old, mold, "op %ld: remove %lu "
					     "returned the wrong entry", op, id);
				model_delete(&md, pos);
			} else {
				cr_assert_eq(old, P(12345),
					     "op %ld: failed remove wrote *oldp",
					     op);
			}
		} else if (kind < 70 && rk_prng_below(&r, 3) == 0) {
			/* cmpxchg: the current entry, or another one */
			bool has = model_has(&md, id, &pos);
			void *cur = P(999), *o;
			int mr;

			e = pick_entry(&r);
			o = has && rk_prng_below(&r, 3) ? md.entry[pos] :
			    pick_entry(&r);
			mr = !has ? -ENOENT : md.entry[pos] == o ? 0 : -EBUSY;
			ret = ridr_cmpxchg(&m, id, o, e, &cur);
			cr_assert_eq(ret, mr, "op %ld: cmpxchg %lu returned "
				     "%d, model %d", op, id, ret, mr);
			cr_assert_eq(cur, has ? md.entry[pos] : NULL,
				     "op %ld: cmpxchg %lu's current entry",
				     op, id);
			if (!ret)
				md.entry[pos] = e;
		} else if (kind < 70) {			/* replace */
			bool has = model_has(&md, id, &pos);

			e = pick_entry(&r);
			ret = ridr_replace(&m, e, id, &old);
			cr_assert_eq(ret, has ? 0 : -ENOENT,
				     "op %ld: replace %lu returned %d", op, id,
				     ret);
			if (has) {
				cr_assert_eq(old, md.entry[pos]);
				md.entry[pos] = e;
			}
		} else if (kind < 90) {			/* find */
			bool has = model_has(&md, id, &pos);

			if (rk_prng_below(&r, 5) == 0) {
				ridr_lock(&m);
				e = ridr_find_locked(&m, id);
				ridr_unlock(&m);
			} else {
				ridr_read_lock(&m);
				e = ridr_find(&m, id);
				ridr_read_unlock(&m);
			}
			cr_assert_eq(e, has ? md.entry[pos] : NULL,
				     "op %ld: find %lu", op, id);
		} else {			/* get_next, get_next_range */
			unsigned long next = id, last = ULONG_MAX;
			bool range = rk_prng_below(&r, 2);

			if (range) {
				last = id + rk_prng_below(
					&r, 1UL << rk_prng_below(&r, 40));
				if (last < id)
					last = ULONG_MAX;
			}
			pos = lower_bound(&md, id);
			while (pos < md.n && !md.entry[pos])
				pos++;
			if (pos < md.n && md.id[pos] > last)
				pos = md.n;	/* beyond the range */
			ridr_read_lock(&m);
			e = range ? ridr_get_next_range(&m, &next, last) :
				    ridr_get_next(&m, &next);
			ridr_read_unlock(&m);
			if (pos < md.n) {
				cr_assert_eq(e, md.entry[pos],
					     "op %ld: get_next(%lu)", op, id);
				cr_assert_eq(next, md.id[pos],
					     "op %ld: get_next(%lu) -> %lu, "
					     "model %lu", op, id, next,
					     md.id[pos]);
			} else {
				cr_assert_null(e, "op %ld: get_next(%lu) found "
					       "%lu past the last entry", op,
					       id, next);
				cr_assert_eq(next, id);
			}
		}
		if ((op & RANDOM_CHECK_MASK) == 0)
			check_all(&m, &md, op);
	}
	check_all(&m, &md, OPS);
	ridr_destroy(&m);
	free(md.id);
	free(md.entry);
}

/*
 * The IDA against the same model (entries unused): ridr_ida_alloc and
 * ridr_ida_alloc_cyclic over random ranges (with allocation failures
 * injected: -ENOMEM changes nothing), ridr_ida_free, ridr_ida_test of
 * random and allocated ids, and the count; every 4096 operations every
 * model id must test allocated.
 */
static void check_ida(struct ridr_ida *ida, const struct model *md, long op)
{
	cr_assert_eq(ridr_ida_count(ida), (unsigned long)md->n,
		     "op %ld: ida count %lu, model %ld", op,
		     ridr_ida_count(ida), md->n);
	ridr_read_lock(&ida->map);
	for (long i = 0; i < md->n; i++)
		cr_assert(ridr_ida_test(ida, md->id[i]),
			  "op %ld: id %lu allocated but tests free", op,
			  md->id[i]);
	ridr_read_unlock(&ida->map);
}

static void run_ida(uint64_t seed, enum idmode mode, bool failures)
{
	struct model md = { 0 };
	struct rk_prng r;
	struct ridr_ida ida;

	md.id = calloc(MAX_LIVE + 1, sizeof(*md.id));
	md.entry = calloc(MAX_LIVE + 1, sizeof(*md.entry));
	cr_assert(md.id && md.entry);
	rk_prng_seed(&r, seed);
	ridr_ida_init(&ida);
	for (long op = 0; op < OPS; op++) {
		uint64_t kind = rk_prng_below(&r, 100);
		unsigned long id = pick_id(&r, &md, mode), min, max, got, want;
		bool inject = failures && rk_prng_below(&r, 20) == 0;
		long pos;
		int ret, mret;

		if (kind < 45 && md.n < MAX_LIVE) {
			bool cyclic = rk_prng_below(&r, 4) == 0;

			min = id;
			switch (rk_prng_below(&r, 4)) {
			case 0: max = min; break;
			case 1: max = min + rk_prng_below(&r, 200); break;
			case 2: max = ULONG_MAX; break;
			default: max = min + 3 * RIDR_IDA_BITS; break;
			}
			if (max < min)
				max = ULONG_MAX;
			if (cyclic) {
				unsigned long start = md.cursor;

				if (start < min || start > max)
					start = min;
				mret = model_free(&md, start, max, &want);
				if (mret && start > min)
					mret = model_free(&md, min, start - 1,
							  &want);
			} else {
				mret = model_free(&md, min, max, &want);
			}
			if (inject)
				fx_alloc.fail_from = 1 + (long)rk_prng_below(&r, 3);
			ret = cyclic ? ridr_ida_alloc_cyclic(&ida, min, max, &got) :
				       ridr_ida_alloc(&ida, min, max, &got);
			fx_alloc.fail_from = 0;
			fx_alloc.fail_all = false;
			if (inject && ret == -ENOMEM && !mret) {
				check_ida(&ida, &md, op);
				continue;
			}
			cr_assert_eq(ret, mret, "op %ld: ida alloc%s [%lu, %lu] "
				     "returned %d, model %d", op,
				     cyclic ? "_cyclic" : "", min, max, ret,
				     mret);
			if (!ret) {
				cr_assert_eq(got, want, "op %ld: ida alloc%s "
					     "[%lu, %lu] gave %lu, model %lu",
					     op, cyclic ? "_cyclic" : "", min,
					     max, got, want);
				model_insert(&md, got, P(1));
				if (cyclic)
					md.cursor = got + 1;
			}
		} else if (kind < 80) {
			bool has = model_has(&md, id, &pos);

			ret = ridr_ida_free(&ida, id);
			cr_assert_eq(ret, has ? 0 : -ENOENT, "op %ld: ida free "
				     "%lu returned %d", op, id, ret);
			if (has)
				model_delete(&md, pos);
		} else {
			bool has = model_has(&md, id, &pos), t;

			ridr_read_lock(&ida.map);
			t = ridr_ida_test(&ida, id);
			ridr_read_unlock(&ida.map);
			cr_assert_eq(t, has, "op %ld: ida test %lu", op, id);
		}
		if ((op & RANDOM_CHECK_MASK) == 0)
			check_ida(&ida, &md, op);
	}
	check_ida(&ida, &md, OPS);
	ridr_ida_destroy(&ida);
	free(md.id);
	free(md.entry);
}

#define T(name, ...) Test(ridr_random, name, .init = fx_setup, .fini = fx_teardown, .timeout = 600, ##__VA_ARGS__)

T(matches_model_seed_1)
{
	run(1, DENSE_MIX, false);
}

T(matches_model_seed_2)
{
	run(0x5eed2, DENSE_MIX, false);
}

T(matches_model_seed_3)
{
	run(0xdecafbad, DENSE_MIX, false);
}

T(matches_model_sparse_31_bit_ids)
{
	run(31, SPARSE31, false);
}

T(matches_model_far_64_bit_ids)
{
	run(64, FAR64, false);
}

T(failed_allocations_change_nothing)
{
	run(0xfa11, SPARSE31, true);
}

T(ida_matches_model_dense)
{
	run_ida(0x1da, DENSE_MIX, false);
}

T(ida_matches_model_sparse_31_bit_ids)
{
	run_ida(0x1da31, SPARSE31, false);
}

T(ida_matches_model_far_64_bit_ids)
{
	run_ida(0x1da64, FAR64, false);
}

T(ida_failed_allocations_change_nothing)
{
	run_ida(0x1dafa11, SPARSE31, true);
}
