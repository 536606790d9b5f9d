/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Replaces tools/include/linux/spinlock.h for the kernel baselines (put
 * ahead of it on the include path): the harness maps spinlock_t to a
 * pthread mutex, whose lock and unlock are each a locked read-modify-
 * write.  A kernel spin_unlock() is a plain release store, and the flat
 * array baseline (compat's rk_spinlock_t) is a test-and-set lock like
 * this one; so the IDR's, XArray's and maple tree's locks here cost what
 * theirs cost, not a mutex.  Like rk_spinlock_t, a waiter yields now and
 * then (a preempted holder in userspace); the benchmarks that use these
 * locks run one thread.  Nothing the baselines compile uses the
 * harness's arch_spin_*(), so they are left out.
 */
#ifndef __LINUX_SPINLOCK_H_
#define __LINUX_SPINLOCK_H_

#include <sched.h>
#include <stdbool.h>

typedef struct {
	int locked;
} spinlock_t;

#define __SPIN_LOCK_UNLOCKED(x)	{ 0 }
#define DEFINE_SPINLOCK(x)	spinlock_t x = __SPIN_LOCK_UNLOCKED(x)
#define spin_lock_init(x)	__atomic_store_n(&(x)->locked, 0, __ATOMIC_RELAXED)

static inline void spin_lock(spinlock_t *l)
{
	unsigned int spins = 0;

	/* Acquire: the critical section stays after the lock is taken;
	 * pairs with the release store in spin_unlock(). */
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED)) {
			if (++spins % 1024 == 0)
				sched_yield();
#if defined(__x86_64__) || defined(__i386__)
			else
				__builtin_ia32_pause();
#endif
		}
	}
}

static inline void spin_unlock(spinlock_t *l)
{
	/* Release: the critical section's stores before the unlock. */
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

#define spin_lock_bh(x)			spin_lock(x)
#define spin_unlock_bh(x)		spin_unlock(x)
#define spin_lock_irq(x)		spin_lock(x)
#define spin_unlock_irq(x)		spin_unlock(x)
#define spin_lock_irqsave(x, f)		((void)(f), spin_lock(x))
#define spin_unlock_irqrestore(x, f)	((void)(f), spin_unlock(x))

#endif
