// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lockref under contention: exact final counts with mixed fast-path,
 * slow-path and lock-holding threads, and the mark_dead race with RCU
 * (no lockref_get_not_dead() succeeds on a dead object, objects freed
 * after a grace period are never touched: ASan/TSan builds check that).
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "lockref/lockref.h"
#include "tests/lib/testutil.h"

#define THREADS 4
#define PAIRS RK_STRESS(1000000)

struct counter_arg {
	struct lockref *l;
	struct rk_start *start;
	int id;
	long ops;
};

/* Every get is matched by exactly one put; the variant changes per
 * iteration so fast and slow paths of every function interleave. */
static void *get_put_worker(void *p)
{
	struct counter_arg *a = p;

	rk_start_wait(a->start, THREADS + 1);
	for (long i = 0; i < PAIRS; i++) {
		switch ((i + a->id) % 4) {
		case 0:
			lockref_get(a->l);
			break;
		case 1:
			cr_assert(lockref_get_not_zero(a->l),
				  "count dropped to 0 while references held");
			break;
		default:
			cr_assert(lockref_get_not_dead(a->l),
				  "lockref died while references held");
			break;
		}
		switch ((i + a->id) % 3) {
		case 0:
			cr_assert(lockref_put_not_zero(a->l),
				  "our reference plus the base one: > 1");
			break;
		case 1:
			if (lockref_put_return(a->l) < 0) {
				/* fast path refused (lock held, contention,
				 * no cmpxchg): the locked fallback */
				cr_assert(lockref_put_or_lock(a->l) == 1,
					  "put_or_lock locked with count > 1");
			}
			break;
		default:
			cr_assert(lockref_put_or_lock(a->l) == 1,
				  "put_or_lock locked with count > 1");
			break;
		}
		a->ops++;
	}
	return NULL;
}

/* Holds the lock briefly and often so other threads take slow paths;
 * under the lock, the count must not move. */
static void *lock_holder(void *p)
{
	struct counter_arg *a = p;

	rk_start_wait(a->start, THREADS + 1);
	for (long i = 0; i < PAIRS / 100; i++) {
		lockref_lock(a->l);
		int before = rk_read_once(a->l->count);
		for (int k = 0; k < 50; k++)
			rk_cpu_relax();
		cr_assert_eq(rk_read_once(a->l->count), before,
			     "count changed while the lock was held");
		rk_write_once(a->l->count, before + 1);
		rk_write_once(a->l->count, before);
		lockref_unlock(a->l);
		a->ops++;
	}
	return NULL;
}

Test(lockref_stress, get_put_pairs_leave_exact_count, .timeout = 300)
{
	struct lockref l;
	struct rk_start start = { 0 };
	struct counter_arg args[THREADS + 1];
	struct rk_threads t;
	pthread_t holder;

	lockref_init(&l, 1);
	for (int i = 0; i <= THREADS; i++)
		args[i] = (struct counter_arg){ .l = &l, .start = &start,
						.id = i };
	rk_threads_start(&t, THREADS, get_put_worker, args, sizeof(args[0]));
	pthread_create(&holder, NULL, lock_holder, &args[THREADS]);
	rk_threads_join(&t);
	pthread_join(holder, NULL);
	cr_expect_eq(l.count, 1, "after %d x %d get/put pairs count is %d, "
		     "expected the base reference 1", THREADS, PAIRS, l.count);
	cr_expect(!rk_spin_is_locked(&l.lock));
}

/* ---- mark_dead race ---- */

#define OBJ_ALIVE 0xa11fe5a1u
#define OBJ_FREED 0xdeadbeefu
#define GENERATIONS RK_STRESS(20000)
#define MIN_HITS RK_STRESS(20000)

struct obj {
	struct lockref ref;
	unsigned int magic;
	int dead;	/* set under the lock right after mark_dead */
	struct rk_rcu_head rcu;
};

struct race {
	struct obj *current;	/* RCU-protected */
	int stop;
	long created;
	long freed;
	long reader_hits;
	struct rk_start start;
};

static struct race race;

static void obj_free_rcu(struct rk_rcu_head *head)
{
	struct obj *o = rk_container_of(head, struct obj, rcu);

	cr_assert_eq(o->magic, OBJ_ALIVE, "object freed twice");
	o->magic = OBJ_FREED;
	free(o);
	__atomic_add_fetch(&race.freed, 1, __ATOMIC_RELAXED);
}

/* Drop a reference; the last one kills the object and frees it after a
 * grace period (the dcache pattern). */
static void obj_put(struct obj *o)
{
	if (lockref_put_or_lock(&o->ref))
		return;
	/* Lock held, count <= 1: ours is the last reference. */
	cr_assert_eq(rk_read_once(o->ref.count), 1,
		     "last put found count %d", rk_read_once(o->ref.count));
	lockref_mark_dead(&o->ref);
	rk_write_once(o->dead, 1);
	lockref_unlock(&o->ref);
	rk_call_rcu(RK_RCU_DEFAULT_FLAVOR, &o->rcu, obj_free_rcu);
}

static struct obj *obj_new(void)
{
	struct obj *o = calloc(1, sizeof(*o));

	cr_assert(o);
	lockref_init(&o->ref, 1);	/* the publisher's reference */
	o->magic = OBJ_ALIVE;
	__atomic_add_fetch(&race.created, 1, __ATOMIC_RELAXED);
	return o;
}

static void *race_reader(void *unused)
{
	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	rk_start_wait(&race.start, 3);
	while (!__atomic_load_n(&race.stop, __ATOMIC_ACQUIRE)) {
		struct obj *o;

		rk_rcu_read_lock();
		o = rk_rcu_dereference(race.current);
		cr_assert_eq(o->magic, OBJ_ALIVE,
			     "reader reached an object freed before a grace "
			     "period (magic %#x)", o->magic);
		if (!lockref_get_not_dead(&o->ref)) {
			rk_rcu_read_unlock();
			continue;
		}
		rk_rcu_read_unlock();
		/* We hold a reference: nobody can have killed it. */
		cr_assert_eq(rk_read_once(o->dead), 0,
			     "get_not_dead succeeded on a dead object");
		cr_assert_eq(o->magic, OBJ_ALIVE);
		__atomic_add_fetch(&race.reader_hits, 1, __ATOMIC_RELAXED);
		obj_put(o);
	}
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	return NULL;
}

Test(lockref_stress, mark_dead_race_never_revives_or_touches_freed,
     .timeout = 300)
{
	pthread_t r[2];

	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	race.current = obj_new();
	for (int i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, race_reader, NULL);
	rk_start_wait(&race.start, 3);
	/* At least GENERATIONS replacements, and keep going until the readers
	 * have really raced with them. */
	for (long g = 0; g < GENERATIONS ||
	     __atomic_load_n(&race.reader_hits, __ATOMIC_RELAXED) < MIN_HITS;
	     g++) {
		struct obj *old = race.current;

		rk_rcu_assign_pointer(race.current, obj_new());
		obj_put(old);	/* drop the publisher's reference */
	}
	__atomic_store_n(&race.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	obj_put(race.current);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	cr_expect_eq(race.freed, race.created,
		     "%ld objects created, %ld freed", race.created,
		     race.freed);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
}
