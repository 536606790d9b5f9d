// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * compat_free_test.c - the userspace compat layer's frees from RCU
 * callbacks (compat/user.c): made on liburcu's worker thread they are
 * handed to the next rk_zalloc*(), rk_call_rcu() or rk_rcu_barrier(),
 * which free()s them; every other free is immediate; an allocator hook
 * sees every free at once; and concurrent writers, callbacks and takers
 * keep each object's last use before its free (TSan checks the
 * ordering).
 */
#include <criterion/criterion.h>
#include <malloc.h>
#include <time.h>

#include "compat/compat.h"
#include "tests/lib/testutil.h"

#define CANARY 0x5eedf00dUL

struct obj {
	struct rk_rcu_head rcu;
	unsigned long canary;
	char pad[232];
};

static unsigned long ran, bad;

/* RCU callback: the object's last use, then rk_free(). */
static void obj_free_cb(struct rk_rcu_head *h)
{
	struct obj *o = rk_container_of(h, struct obj, rcu);

	if (o->canary != CANARY)
		__atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
	o->canary = 0;
	rk_free(o, sizeof(*o));
	__atomic_add_fetch(&ran, 1, __ATOMIC_RELEASE);
}

/* Allocate @n objects, then queue them all inside one read-side
 * section: no callback runs before the last is queued (an allocation or
 * an rk_call_rcu() in between would take the frees made so far). */
static void queue_objs_flavor(const rk_rcu_flavor_t *fl, unsigned long n)
{
	struct obj **o = calloc(n, sizeof(*o));

	cr_assert_not_null(o);
	for (unsigned long i = 0; i < n; i++) {
		o[i] = rk_zalloc(sizeof(*o[i]), RK_GFP_KERNEL);
		cr_assert_not_null(o[i]);
		o[i]->canary = CANARY;
	}
	rk_rcu_read_lock_flavor(fl);
	for (unsigned long i = 0; i < n; i++)
		rk_call_rcu(fl, &o[i]->rcu, obj_free_cb);
	rk_rcu_read_unlock_flavor(fl);
	free(o);
}

static void queue_objs(unsigned long n)
{
	queue_objs_flavor(RK_RCU_DEFAULT_FLAVOR, n);
}

/* Wait (at most ~20 s) until @n callbacks have run, without allocating;
 * a quiescent state each round lets a qsbr grace period end. */
static void wait_ran_flavor(const rk_rcu_flavor_t *fl, unsigned long n)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 20000; i++) {
		if (__atomic_load_n(&ran, __ATOMIC_ACQUIRE) >= n)
			return;
		rk_rcu_quiescent_state(fl);
		nanosleep(&ms, NULL);
	}
	cr_assert_fail("%lu of %lu callbacks ran", ran, n);
}

static void wait_ran(unsigned long n)
{
	wait_ran_flavor(RK_RCU_DEFAULT_FLAVOR, n);
}

#if !RK_TSAN && !defined(__SANITIZE_ADDRESS__)
#define HEAP_COUNTED 1	/* mallinfo2() sees glibc's own heap */
static long heap_bytes(void)
{
	return (long)mallinfo2().uordblks;
}
#else
#define HEAP_COUNTED 0
#endif

/* Register with @fl, let @n callbacks free their objects and check that
 * they are waiting; the heap then (0 where it is not counted). */
static long callbacks_freed_flavor(const rk_rcu_flavor_t *fl, unsigned long n)
{
	long held = 0;

	rk_rcu_register_thread(fl);
	rk_rcu_barrier(fl);
	ran = bad = 0;
	cr_assert(!rk_frees_pending());
	queue_objs_flavor(fl, n);
	wait_ran_flavor(fl, n);
	/* Every callback has run and freed its object: nothing free()d yet. */
	cr_assert(rk_frees_pending());
#if HEAP_COUNTED
	held = heap_bytes();
#endif
	return held;
}

static long callbacks_freed(unsigned long n)
{
	return callbacks_freed_flavor(RK_RCU_DEFAULT_FLAVOR, n);
}

/* Nothing waits any more, and the heap dropped by the @n objects. */
static void check_freed(long held, unsigned long n)
{
	cr_assert(!rk_frees_pending());
#if HEAP_COUNTED
	cr_assert_geq(held - heap_bytes(), (long)(n * sizeof(struct obj)),
		      "heap %ld -> %ld", held, heap_bytes());
#endif
	(void)held;
	(void)n;
}

Test(compat_free, callback_frees_wait_for_the_next_allocation)
{
	const unsigned long n = 1000;
	long held = callbacks_freed(n);
	void *p;

	p = rk_zalloc(64, RK_GFP_KERNEL);	/* takes and frees them all */
	cr_assert_not_null(p);
	check_freed(held, n);
	rk_free(p, 64);
	cr_assert(!rk_frees_pending(), "a free outside a callback is immediate");
	cr_assert_eq(bad, 0);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
}

static int marker_ran;

/* A callback that frees nothing (its object is the test's). */
static void marker_cb(struct rk_rcu_head *h)
{
	(void)h;
	__atomic_store_n(&marker_ran, 1, __ATOMIC_RELEASE);
}

/* A writer that only retires objects (removals) and allocates nothing
 * still frees what earlier callbacks handed over: at its next
 * rk_call_rcu(). */
Test(compat_free, the_next_retirement_frees_them_too)
{
	const unsigned long n = 1000;
	struct obj marker = { 0 };
	long held;

	marker_ran = 0;
	held = callbacks_freed(n);
	/* The marker's own callback frees nothing: nothing can be pending. */
	rk_call_rcu(RK_RCU_DEFAULT_FLAVOR, &marker.rcu, marker_cb);
	check_freed(held, n);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);	/* @marker is on the stack */
	cr_assert(marker_ran);
	cr_assert_eq(bad, 0);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
}

/* Each flavor has its own worker thread: theirs are recognized too. */
Test(compat_free, every_flavors_worker_defers)
{
	const rk_rcu_flavor_t *fls[] = { RK_RCU_FLAVOR_MB, RK_RCU_FLAVOR_QSBR,
					 RK_RCU_FLAVOR_BP };

	for (unsigned int f = 0; f < 3; f++) {
		const unsigned long n = 1000;
		long held = callbacks_freed_flavor(fls[f], n);
		void *p = rk_zalloc(64, RK_GFP_KERNEL);

		cr_assert_not_null(p);
		check_freed(held, n);
		rk_free(p, 64);
		cr_assert_eq(bad, 0);
		rk_rcu_unregister_thread(fls[f]);
	}
}

Test(compat_free, rcu_barrier_frees_them)
{
	const unsigned long n = 500;
	long before = 0;

	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	ran = bad = 0;
#if HEAP_COUNTED
	before = heap_bytes();
#endif
	queue_objs(n);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	cr_assert_eq(__atomic_load_n(&ran, __ATOMIC_ACQUIRE), n);
	cr_assert(!rk_frees_pending());
#if HEAP_COUNTED
	/* Back to where it was, but for what glibc's thread cache keeps (7
	 * chunks of a size): 500 objects held would be 125 KiB more. */
	cr_assert_leq(heap_bytes(), before + 32 * (long)sizeof(struct obj),
		      "heap %ld -> %ld", before, heap_bytes());
#endif
	(void)before;
	cr_assert_eq(bad, 0);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
}

Test(compat_free, a_hook_sees_callback_frees_at_once)
{
	const unsigned long n = 200;
	struct rk_counting_alloc c = { 0 };

	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	ran = bad = 0;
	rk_counting_alloc_install(&c);
	queue_objs(n);
	cr_assert_eq(c.total_allocs, (long)n);
	wait_ran(n);
	cr_assert_eq(rk_counting_alloc_live_objects(&c), 0);
	cr_assert(!rk_frees_pending());
	rk_counting_alloc_remove(&c);
	cr_assert_eq(bad, 0);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
}

/* Writers queue objects and allocate (taking the stack) while the worker
 * pushes onto it: each object's callback must see it intact, and its
 * free() must come after the callback (TSan: the push's release, the
 * take's acquire). */
static void *writer(void *arg)
{
	unsigned long n = *(unsigned long *)arg;

	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	for (unsigned long i = 0; i < n; i++) {
		struct obj *o = rk_zalloc(sizeof(*o), RK_GFP_KERNEL);

		if (!o)
			abort();
		o->canary = CANARY;
		rk_call_rcu(RK_RCU_DEFAULT_FLAVOR, &o->rcu, obj_free_cb);
	}
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	return NULL;
}

Test(compat_free, writers_callbacks_and_takers_race, .timeout = 120)
{
	unsigned long n = RK_STRESS(40000);
	struct rk_threads t;

	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	ran = bad = 0;
	rk_threads_start(&t, 2, writer, &n, 0);
	rk_threads_join(&t);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	cr_assert_eq(ran, 2 * n);
	cr_assert(!rk_frees_pending());
	cr_assert_eq(bad, 0);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
}
