// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ridr under concurrency, once per liburcu flavor (memb, mb, qsbr, bp).
 *
 * Writers allocate ids (lowest-free, cyclic with and without the wrap
 * report, and ridr_insert at chosen ids; dense and sparse so the tree
 * grows and shrinks under the readers), publish objects (ridr_replace,
 * ridr_cmpxchg, ridr_store), replace them (ridr_replace, or
 * ridr_find_locked + ridr_cmpxchg) and remove them (ridr_remove, or
 * lookup + ridr_remove_if), and free removed objects after a grace
 * period (poisoned first, so a reader touching one fails the magic check;
 * ASan and TSan builds catch it even when the poison is not seen).
 * Readers look ids up (one by one and in batches with ridr_find_bulk())
 * and walk ranges with ridr_get_next() and ridr_for_each_range() under
 * ridr_read_lock() (the map's own flavor), checking inside every object
 * they reach that it is alive and carries the id they looked up, and
 * take and drop a lockref reference (the last put frees after a grace
 * period).  At the end every object created has
 * been freed exactly once and the map holds no memory.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lockref/lockref.h"
#include "tests/lib/ridr_fixture.h"

#define WRITERS 2
#define READERS 2
#define WRITER_OPS RK_STRESS(500000L)
#define DENSE 2048UL
#define OWN_MAX 4096

#define MAGIC_ALIVE 0x0b1ec7a11feUL
#define MAGIC_FREED 0xf4eedf4eedUL

struct obj {
	unsigned long magic;
	unsigned long id;
	struct lockref ref;
	struct rk_rcu_head rcu;
};

/* Ids writers allocated recently, for readers to look up: sparse ids are
 * otherwise never hit, and they are where buckets copy, burst, unshare
 * and collapse. */
#define HOT 64
/* Ids per ridr_find_bulk() of a reader: two groups, the second partial. */
#define BULK 24

struct stress {
	struct ridr map;
	unsigned long hot[HOT];
	const rk_rcu_flavor_t *fl;
	bool qsbr;
	int stop;
	long created, freed;
	long found, walked;
	struct rk_start start;
};

static struct stress st;

static void obj_free_rcu(struct rk_rcu_head *head)
{
	struct obj *o = rk_container_of(head, struct obj, rcu);

	cr_assert_eq(o->magic, MAGIC_ALIVE, "object %lu freed twice", o->id);
	o->magic = MAGIC_FREED;
	free(o);
	__atomic_add_fetch(&st.freed, 1, __ATOMIC_RELAXED);
}

/* Drop a reference (the map holds one while the id maps to the object);
 * whoever drops the last one kills the object and frees it after a grace
 * period, so readers that found it under RCU stay safe. */
static void obj_put(struct obj *o)
{
	if (lockref_put_or_lock(&o->ref))
		return;
	lockref_mark_dead(&o->ref);
	lockref_unlock(&o->ref);
	rk_call_rcu(st.fl, &o->rcu, obj_free_rcu);
}

static struct obj *obj_new(void)
{
	struct obj *o = malloc(sizeof(*o));

	cr_assert(o);
	o->magic = MAGIC_ALIVE;
	o->id = ULONG_MAX;
	lockref_init(&o->ref, 1);
	__atomic_add_fetch(&st.created, 1, __ATOMIC_RELAXED);
	return o;
}

static void quiesce(long n)
{
	if (st.qsbr && (n & 63) == 0)
		rk_rcu_quiescent_state(st.fl);
}

static void check_obj(const struct obj *o, unsigned long id)
{
	cr_assert_eq(o->magic, MAGIC_ALIVE, "reader reached a freed object "
		     "at id %lu (magic %#lx)", id, o->magic);
	cr_assert_eq(o->id, id, "id %lu maps to the object of id %lu", id,
		     o->id);
}

static void *writer(void *arg)
{
	long w = (long)(intptr_t)arg;
	unsigned long *own = calloc(OWN_MAX, sizeof(*own));
	struct rk_prng r;
	long n = 0;

	cr_assert(own);
	rk_prng_seed(&r, 1000 + (uint64_t)w);
	rk_rcu_register_thread(st.fl);
	rk_start_wait(&st.start, WRITERS + READERS);
	for (long op = 0; op < WRITER_OPS; op++) {
		uint64_t k = rk_prng_below(&r, 100);

		if ((k < 45 && n < OWN_MAX) || n == 0) {
			struct obj *o = obj_new();
			unsigned long min = 0, max = ULONG_MAX, id;
			int ret;

			if (rk_prng_below(&r, 10) == 0)	/* sparse, tall tree */
				min = rk_prng_next(&r) >> rk_prng_below(&r, 40);
			else if (w == 1 && rk_prng_below(&r, 4) == 0)
				/* a cluster: buckets burst and collapse */
				min = (1UL << 33) + rk_prng_below(&r, 3000);
			/* Reserve, fill in the id, then publish: readers
			 * never see an object without its id. */
			if (w == 0 && rk_prng_below(&r, 2)) {
				ret = ridr_alloc_cyclic_wrap(&st.map, NULL, min,
							     max, &id);
				ret = ret == 1 ? 0 : ret;
			} else if (w == 0) {
				ret = ridr_alloc_cyclic(&st.map, NULL, min, max,
							&id);
			} else if (rk_prng_below(&r, 4) == 0) {
				/* insert at a chosen id: retried if taken */
				do {
					id = min + rk_prng_below(&r, 4096);
					ret = ridr_insert(&st.map, id, NULL);
				} while (ret == -EBUSY);
			} else {
				ret = ridr_alloc(&st.map, NULL, min, max, &id);
			}
			cr_assert_eq(ret, 0, "alloc failed: %d", ret);
			o->id = id;
			/* Fill the reservation: replace, cmpxchg or store. */
			switch (rk_prng_below(&r, 3)) {
			case 0:
				ret = ridr_replace(&st.map, o, id, NULL);
				break;
			case 1:
				ret = ridr_cmpxchg(&st.map, id, NULL, o, NULL);
				break;
			default:
				ret = ridr_store(&st.map, id, o, NULL);
				break;
			}
			cr_assert_eq(ret, 0, "filling id %lu failed: %d", id,
				     ret);
			own[n++] = id;
			rk_write_once(st.hot[rk_prng_below(&r, HOT)], id);
		} else if (k < 80) {
			long i = (long)rk_prng_below(&r, (uint64_t)n);
			void *old;

			if (rk_prng_below(&r, 2)) {
				cr_assert_eq(ridr_remove(&st.map, own[i], &old),
					     0);
			} else {
				/* The lookup-then-delete pattern. */
				ridr_read_lock(&st.map);
				old = ridr_find(&st.map, own[i]);
				ridr_read_unlock(&st.map);
				cr_assert_eq(ridr_remove_if(&st.map, own[i],
							    P(7)), -EBUSY);
				cr_assert_eq(ridr_remove_if(&st.map, own[i],
							    old), 0);
			}
			cr_assert_not_null(old);
			cr_assert_eq(((struct obj *)old)->id, own[i]);
			obj_put(old);
			own[i] = own[--n];
		} else {
			long i = (long)rk_prng_below(&r, (uint64_t)n);
			struct obj *o = obj_new();
			void *old;

			o->id = own[i];
			if (rk_prng_below(&r, 2)) {
				cr_assert_eq(ridr_replace(&st.map, o, own[i],
							  &old), 0);
			} else {
				void *cur;

				ridr_lock(&st.map);
				old = ridr_find_locked(&st.map, own[i]);
				ridr_unlock(&st.map);
				cr_assert_eq(ridr_cmpxchg(&st.map, own[i], P(7),
							  o, &cur), -EBUSY);
				cr_assert_eq(cur, old);
				cr_assert_eq(ridr_cmpxchg(&st.map, own[i], old,
							  o, NULL), 0);
			}
			cr_assert_eq(((struct obj *)old)->id, own[i]);
			obj_put(old);
		}
		quiesce(op);
	}
	while (n) {
		void *old;

		cr_assert_eq(ridr_remove(&st.map, own[--n], &old), 0);
		obj_put(old);
	}
	free(own);
	rk_rcu_unregister_thread(st.fl);
	return NULL;
}

static void *reader(void *arg)
{
	struct rk_prng r;
	long found = 0, walked = 0;

	rk_prng_seed(&r, 2000 + (uint64_t)(intptr_t)arg);
	rk_rcu_register_thread(st.fl);
	rk_start_wait(&st.start, WRITERS + READERS);
	for (long n = 0; !__atomic_load_n(&st.stop, __ATOMIC_ACQUIRE); n++) {
		uint64_t pick = rk_prng_below(&r, 8);
		unsigned long id = pick < 4 ? rk_prng_below(&r, DENSE) :
				   pick < 7 ? rk_read_once(st.hot[
						rk_prng_below(&r, HOT)]) :
				   rk_prng_next(&r);
		unsigned long prev;
		struct obj *o;

		ridr_read_lock(&st.map);
		o = ridr_find(&st.map, id);
		if (o) {
			check_obj(o, id);
			found++;
			/* The lookup pattern: a reference only if alive. */
			if (lockref_get_not_dead(&o->ref)) {
				check_obj(o, id);
				obj_put(o);
			}
		}
		/* A batch (more than one group of ridr_find_bulk()): every
		 * entry found is alive and carries the id it was found at.
		 */
		{
			unsigned long ids[BULK];
			void *out[BULK];
			int got, seen = 0;

			for (int i = 0; i < BULK; i++) {
				pick = rk_prng_below(&r, 8);
				ids[i] = pick < 4 ? rk_prng_below(&r, DENSE) :
					 pick < 7 ? rk_read_once(st.hot[
						rk_prng_below(&r, HOT)]) :
					 rk_prng_next(&r);
			}
			got = ridr_find_bulk(&st.map, ids, BULK, out);
			for (int i = 0; i < BULK; i++) {
				if (!out[i])
					continue;
				check_obj(out[i], ids[i]);
				seen++;
			}
			cr_assert_eq(got, seen, "ridr_find_bulk returned %d, "
				     "%d entries found", got, seen);
			found += seen;
		}
		/* A short ordered walk from a random point. */
		prev = id;
		for (int i = 0; i < 8; i++) {
			unsigned long next = prev;

			o = ridr_get_next(&st.map, &next);
			if (!o)
				break;
			cr_assert_geq(next, prev, "get_next went backwards");
			check_obj(o, next);
			walked++;
			if (next == ULONG_MAX)
				break;
			prev = next + 1;
		}
		/* A bounded walk: ids in range, increasing, alive. */
		{
			unsigned long rid, lim = id + 5000, last = 0;
			bool any = false;

			if (lim < id)
				lim = ULONG_MAX;
			ridr_for_each_range(&st.map, o, rid, id, lim) {
				cr_assert(rid >= id && rid <= lim &&
					  (!any || rid > last),
					  "range walk out of order or range");
				check_obj(o, rid);
				any = true;
				last = rid;
				walked++;
			}
		}
		ridr_read_unlock(&st.map);
		quiesce(n);
	}
	__atomic_add_fetch(&st.found, found, __ATOMIC_RELAXED);
	__atomic_add_fetch(&st.walked, walked, __ATOMIC_RELAXED);
	rk_rcu_unregister_thread(st.fl);
	return NULL;
}

static void run(const rk_rcu_flavor_t *fl, bool qsbr)
{
	pthread_t w[WRITERS], rd[READERS];

	memset(&st, 0, sizeof(st));
	st.fl = fl;
	st.qsbr = qsbr;
	ridr_init_flavor(&st.map, fl);
	rk_rcu_register_thread(fl);
	for (long i = 0; i < READERS; i++)
		pthread_create(&rd[i], NULL, reader, (void *)(intptr_t)i);
	for (long i = 0; i < WRITERS; i++)
		pthread_create(&w[i], NULL, writer, (void *)(intptr_t)i);
	/* qsbr: a thread that only waits must not hold up grace periods. */
	if (qsbr)
		rk_rcu_thread_offline(fl);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(w[i], NULL);
	__atomic_store_n(&st.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < READERS; i++)
		pthread_join(rd[i], NULL);
	if (qsbr)
		rk_rcu_thread_online(fl);
	cr_expect(ridr_is_empty(&st.map), "writers removed every id");
	cr_expect_leq(ridr_memory(&st.map), IDLE_BOUND,
		      "an emptied map holds more than its idle bound (%zu)",
		      ridr_memory(&st.map));
	ridr_destroy(&st.map);
	if (qsbr)
		rk_rcu_thread_offline(fl);
	rk_rcu_barrier(fl);
	if (qsbr)
		rk_rcu_thread_online(fl);
	cr_expect_eq(st.freed, st.created, "%ld objects created, %ld freed",
		     st.created, st.freed);
	cr_expect_gt(st.found + st.walked, 0, "readers never found anything");
	rk_rcu_unregister_thread(fl);
	cr_expect_eq(rk_counting_alloc_live_objects(&fx_alloc), 0,
		     "ridr nodes still allocated after rcu_barrier");
}

/* The fixture registers with memb; these tests manage their own flavor. */
static void setup(void)
{
	rk_counting_alloc_install(&fx_alloc);
}

static void teardown(void)
{
	rk_counting_alloc_remove(&fx_alloc);
}

#define T(name) Test(ridr_stress, name, .init = setup, .fini = teardown, .timeout = 600)

T(readers_see_old_or_new_memb)
{
	run(RK_RCU_FLAVOR_MEMB, false);
}

T(readers_see_old_or_new_mb)
{
	run(RK_RCU_FLAVOR_MB, false);
}

T(readers_see_old_or_new_qsbr)
{
	run(RK_RCU_FLAVOR_QSBR, true);
}

T(readers_see_old_or_new_bp)
{
	run(RK_RCU_FLAVOR_BP, false);
}
