// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * user.c - out-of-line parts of the userspace compat layer: allocation
 * hook, deferred free through liburcu, and the ThreadSanitizer model of
 * grace periods.
 */
#include "compat.h"

#include <stdio.h>
#include <stdlib.h>

/* The other flavors' call_rcu accessors (urcu-memb.h, included by
 * compat.h, declares memb's; the flavor headers map the same generic
 * names, so one file includes one of them).  Weak: libridr needs only
 * liburcu-memb; a program that uses another flavor links its library,
 * which then defines these. */
struct call_rcu_data *urcu_mb_get_thread_call_rcu_data(void)
	__attribute__((weak));
struct call_rcu_data *urcu_qsbr_get_thread_call_rcu_data(void)
	__attribute__((weak));
struct call_rcu_data *urcu_bp_get_thread_call_rcu_data(void)
	__attribute__((weak));

#if RK_TSAN
/* Released by every read-side unlock, acquired after every grace period:
 * TSan then orders a reader's accesses before whatever a grace period
 * lets run (the free of what the reader saw). */
char rk_tsan_gp_token;
/* Released after every callback, acquired by rk_rcu_barrier(): whatever
 * a callback did happens before rcu_barrier() returns. */
static char rk_tsan_barrier_token;
#endif

void rk_bug(const char *file, int line, const char *cond)
{
	fprintf(stderr, "ridr-kit BUG at %s:%d: %s\n", file, line, cond);
	abort();
}

void rk_warn(const char *file, int line, const char *cond)
{
	fprintf(stderr, "ridr-kit WARNING at %s:%d: %s\n", file, line, cond);
}

/* Installed hook or NULL.  Release/acquire so a hook's ctx, set up before
 * rk_set_allocator(), is visible to the threads that call through it. */
static const struct rk_allocator *rk_allocator;

void rk_set_allocator(const struct rk_allocator *a)
{
	__atomic_store_n(&rk_allocator, a, __ATOMIC_RELEASE);
}

/*
 * Frees made by RCU callbacks, handed to the allocating threads.
 *
 * liburcu runs call_rcu() callbacks on its own worker thread, so without
 * this every object a grace period releases would be free()d there and
 * allocated again by a writer thread: glibc returns each such chunk to
 * its arena under the arena's lock, which the writer takes for every
 * allocation it cannot serve from its own thread cache.  A writer that
 * retires objects as fast as it allocates them (cyclic allocation in a
 * small map compacts its root bucket every ~31 ids) then spends most of
 * its time waiting for that lock: ~10^4 futex calls a second in each
 * thread, cyclic remove+alloc pairs 1.5x slower.  The kernel has no such
 * cost (a slab frees to a per-CPU list), so this lives here, not in the
 * portable core.
 *
 * So rk_free() on a call_rcu worker thread of any flavor does not call
 * free(): it pushes the object on rk_deferred (a lock-free stack linked
 * through the objects' first word: the object is dead, its grace period
 * has elapsed), and the next rk_zalloc*()/rk_alloc() or rk_call_rcu()
 * of any thread, or rk_rcu_barrier(), takes the whole stack and frees
 * it.  What stays unfreed is bounded by what the callbacks freed since
 * the last of those calls; a writer that only removes (retiring
 * objects, allocating none) still frees at each retirement.
 *
 * Ordering: the push is a release CAS, the take an acquire exchange, so
 * the callback's accesses to an object (and, through the callback's own
 * grace period, every reader's) happen before its free(); an object
 * pushed earlier is covered too, because every later push is a
 * read-modify-write of the same word and so continues the earlier push's
 * release sequence, which the exchange's acquire reads.  A stack that
 * is only pushed one object at a time and emptied whole has no ABA
 * problem: the take never reads a node's link before owning it.
 *
 * A thread is a worker if liburcu gave it call_rcu data of its own
 * (every worker sets it before its first callback; an application thread
 * only if it called set_thread_call_rcu_data(), whose frees are then
 * deferred too, harmlessly).  Checked once per thread and cached.
 * Objects freed through an installed rk_allocator hook go to the hook at
 * once, as before: tests count them.
 */
static void *rk_deferred;
static __thread signed char rk_worker_thread = -1;	/* -1: not checked */

static bool rk_on_call_rcu_worker(void)
{
	if (rk_worker_thread < 0)
		rk_worker_thread =
			urcu_memb_get_thread_call_rcu_data() ||
			(urcu_mb_get_thread_call_rcu_data &&
			 urcu_mb_get_thread_call_rcu_data()) ||
			(urcu_qsbr_get_thread_call_rcu_data &&
			 urcu_qsbr_get_thread_call_rcu_data()) ||
			(urcu_bp_get_thread_call_rcu_data &&
			 urcu_bp_get_thread_call_rcu_data());
	return rk_worker_thread;
}

static void rk_defer_free(void *p)
{
	void *old = __atomic_load_n(&rk_deferred, __ATOMIC_RELAXED);

	do {
		*(void **)p = old;
	} while (!__atomic_compare_exchange_n(&rk_deferred, &old, p, true,
					      __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

/* Free what the callbacks handed over (a relaxed load when nothing is
 * pending: the common case costs one load of a line the workers write
 * once per push). */
static void rk_free_deferred(void)
{
	void *p;

	if (!__atomic_load_n(&rk_deferred, __ATOMIC_RELAXED))
		return;
	p = __atomic_exchange_n(&rk_deferred, NULL, __ATOMIC_ACQUIRE);
	while (p) {
		void *next = *(void **)p;

		free(p);
		p = next;
	}
}

bool rk_frees_pending(void)
{
	return __atomic_load_n(&rk_deferred, __ATOMIC_ACQUIRE) != NULL;
}

static void *rk_alloc_common(size_t size, size_t align, bool zero)
{
	const struct rk_allocator *a =
		__atomic_load_n(&rk_allocator, __ATOMIC_ACQUIRE);
	void *p;

	rk_free_deferred();
	if (a) {
		p = a->alloc(size, align, a->ctx);
	} else if (align <= 16) {
		return zero ? calloc(1, size) : malloc(size);
	} else if (posix_memalign(&p, align, size)) {
		return NULL;
	}
	if (p && zero)
		__builtin_memset(p, 0, size);
	return p;
}

void *rk_zalloc_aligned(size_t size, size_t align, rk_gfp_t gfp)
{
	(void)gfp;
	return rk_alloc_common(size, align, true);
}

void *rk_alloc(size_t size, rk_gfp_t gfp)
{
	(void)gfp;
	return rk_alloc_common(size, 16, false);
}

void *rk_zalloc(size_t size, rk_gfp_t gfp)
{
	return rk_zalloc_aligned(size, 16, gfp);
}

void rk_free(void *p, size_t size)
{
	const struct rk_allocator *a =
		__atomic_load_n(&rk_allocator, __ATOMIC_ACQUIRE);

	if (!p)
		return;
	if (a)
		a->free(p, size, a->ctx);
	else if (rk_on_call_rcu_worker())
		rk_defer_free(p);
	else
		free(p);
}

#if RK_TSAN
/* liburcu calls this after a grace period; it calls the rk_ callback. */
static void rk_call_rcu_trampoline(struct rcu_head *head)
{
	struct rk_rcu_head *rk = rk_container_of(head, struct rk_rcu_head, head);

	/* TSan model: the grace period has elapsed (every reader that could
	 * see the object has unlocked), and the caller of rk_call_rcu()
	 * handed @rk over. */
	rk_tsan_acquire(&rk_tsan_gp_token);
	rk_tsan_acquire(rk);
	rk->func(rk);
	rk_tsan_release(&rk_tsan_barrier_token);
}

void rk_call_rcu(const rk_rcu_flavor_t *flavor, struct rk_rcu_head *head,
		 void (*func)(struct rk_rcu_head *head))
{
	rk_free_deferred();
	head->func = func;
	/* The writer's stores before call_rcu happen before the callback. */
	rk_tsan_release(head);
	flavor->update_call_rcu(&head->head, rk_call_rcu_trampoline);
}
#else
void rk_call_rcu(const rk_rcu_flavor_t *flavor, struct rk_rcu_head *head,
		 void (*func)(struct rk_rcu_head *head))
{
	/* struct rk_rcu_head is liburcu's own head: no trampoline. */
	rk_free_deferred();
	flavor->update_call_rcu(head, func);
}
#endif

void rk_synchronize_rcu(const rk_rcu_flavor_t *flavor)
{
	flavor->update_synchronize_rcu();
	rk_tsan_acquire(&rk_tsan_gp_token);
}

void rk_rcu_barrier(const rk_rcu_flavor_t *flavor)
{
	flavor->barrier();
	rk_tsan_acquire(&rk_tsan_gp_token);
	rk_tsan_acquire(&rk_tsan_barrier_token);
	/* Every callback has run: what they freed is freed now. */
	rk_free_deferred();
}
