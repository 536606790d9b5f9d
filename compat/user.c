// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * user.c - out-of-line parts of the userspace compat layer: allocation
 * hook, deferred free through liburcu, and the ThreadSanitizer model of
 * grace periods.
 */
#include "compat.h"

#include <stdio.h>
#include <stdlib.h>

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

void *rk_zalloc_aligned(size_t size, size_t align, rk_gfp_t gfp)
{
	const struct rk_allocator *a =
		__atomic_load_n(&rk_allocator, __ATOMIC_ACQUIRE);
	void *p;

	(void)gfp;
	if (a) {
		p = a->alloc(size, align, a->ctx);
	} else if (align <= 16) {
		return calloc(1, size);
	} else if (posix_memalign(&p, align, size)) {
		return NULL;
	}
	if (p)
		__builtin_memset(p, 0, size);
	return p;
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
}
