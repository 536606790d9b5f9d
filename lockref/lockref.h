/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef RK_LOCKREF_H
#define RK_LOCKREF_H

/**
 * DOC: lockref - a spinlock and a reference count in one 64-bit word
 *
 * Same API, semantics and return conventions as Linux 6.1's
 * include/linux/lockref.h and lib/lockref.c, which this code replaces in
 * the kernel build: int 1/0 results, -1 from lockref_put_return().  It is
 * the one part of ridr-kit that does not return negative errnos.
 *
 * Fast path: while the lock half of the word reads unlocked, one 64-bit
 * compare-and-swap updates the count without taking the lock, retried at
 * most 100 times and with no pause between attempts (a pause there made
 * contended cmpxchg loops 2-5x slower: Linux 2023, up to +423% on
 * will-it-scale fstat2 at 96 threads once removed).  Slow path: take the
 * spinlock and update the count under it.  The fast path therefore never
 * changes a count while the lock is held: a lock holder sees a stable
 * count.  A build without 64-bit cmpxchg (RK_USE_CMPXCHG_LOCKREF == 0)
 * takes the lock for every operation, and lockref_put_return() always
 * fails there, exactly as in the kernel.  In userspace the first attempt
 * is inlined into the caller (see "Userspace: inline fast paths" below).
 *
 * Memory ordering (stronger than Linux 6.1, which uses relaxed cmpxchg
 * everywhere; identical machine code on x86):
 *  - increments (get, get_not_zero, get_not_dead) are relaxed: the caller
 *    already owns a reference or is inside an RCU read-side section, so
 *    the object cannot go away and nothing needs publishing;
 *  - decrements (put_not_zero, put_or_lock) are release: the caller's
 *    accesses to the object happen before the count drops, so whoever
 *    later sees the count reach zero under the lock (acquire) and frees
 *    the object cannot race with them (as refcount_dec());
 *  - lockref_put_return() is fully ordered, because its caller may act on
 *    a returned 0 without taking the lock.
 *  - The slow path orders through the lock (acquire/release).
 *
 * Count range: the count is a signed int.  Negative means dead
 * (lockref_mark_dead() stores -128).  Like the kernel, nothing checks for
 * overflow: one increment past INT_MAX wraps to INT_MIN, after which the
 * lockref reads as dead (lockref_get_not_dead() fails).  Callers must not
 * hold 2^31 - 1 references.
 *
 * Typical lifetime pattern with ridr (see docs/lockref.md):
 *
 *	rcu_read_lock();
 *	obj = ridr_find(&map, id);
 *	if (obj && !lockref_get_not_dead(&obj->ref))
 *		obj = NULL;
 *	rcu_read_unlock();
 *	...use obj...
 *	if (!lockref_put_or_lock(&obj->ref)) {
 *		(last reference, lock held) lockref_mark_dead(&obj->ref);
 *		spin_unlock(&obj->ref.lock); remove the id; free obj after a
 *		grace period.
 *	}
 */

#include "compat/compat.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The lock and count first in the union, so that a positional
 * initializer (C++ before C++20, below) initializes them.  __extension__:
 * anonymous structs are C11 but a GNU extension in C++ (-pedantic).
 */
struct lockref {
	union {
		__extension__ struct {
			rk_spinlock_t lock;
			int count;
		};
#if RK_USE_CMPXCHG_LOCKREF
		rk_aligned_u64 lock_count;
#endif
	};
};

/* Static initializer: unlocked, count @cnt.  C++ before C++20 has no
 * designated initializers: positional there (same value). */
#if defined(__cplusplus) && __cplusplus < 202002L
#define LOCKREF_INIT(cnt) { { { RK_SPINLOCK_INIT, (cnt) } } }
#else
#define LOCKREF_INIT(cnt) { .lock = RK_SPINLOCK_INIT, .count = (cnt) }
#endif

/**
 * lockref_init() - Initialise a lockref: unlocked, count @count.
 * @lockref: the lockref.
 * @count: initial reference count (usually 1, the creator's reference).
 *
 * Context: Any; the lockref must not be in use.
 */
void lockref_init(struct lockref *lockref, int count);

/**
 * lockref_lock() - Take the lockref's spinlock.
 * @lockref: the lockref.
 *
 * While it is held, no operation changes the count except the holder
 * (fast paths see the lock and fall back to it).
 *
 * Context: Any; spins (userspace: spins, then yields).
 */
void lockref_lock(struct lockref *lockref) rk_acquires(&lockref->lock);

/**
 * lockref_unlock() - Release the lockref's spinlock.
 * @lockref: the lockref, locked by the caller.
 *
 * Context: Caller holds @lockref->lock.
 */
void lockref_unlock(struct lockref *lockref) rk_releases(&lockref->lock);

/**
 * lockref_get() - Increment the count unconditionally.
 * @lockref: the lockref.
 *
 * Only valid when the caller already holds a reference, so the count
 * cannot be zero or dead.
 *
 * Context: Any; caller does not hold @lockref->lock.  Never leaves it held.
 */
void lockref_get(struct lockref *lockref);

/**
 * lockref_get_not_zero() - Increment the count unless it is zero or dead.
 * @lockref: the lockref.
 *
 * Context: Any; caller does not hold @lockref->lock.
 * Return: 1 if the count was > 0 and was incremented, 0 otherwise (count
 * 0 or negative/dead); lock not held on return either way.
 */
int lockref_get_not_zero(struct lockref *lockref);

/**
 * lockref_put_not_zero() - Decrement the count unless it would reach 0.
 * @lockref: the lockref.
 *
 * Context: Any; caller does not hold @lockref->lock.
 * Return: 1 if the count was > 1 and was decremented, 0 otherwise (count
 * <= 1 or dead; nothing changed); lock not held on return either way.
 */
int lockref_put_not_zero(struct lockref *lockref);

/**
 * lockref_put_return() - Decrement the count on the lockless path only.
 * @lockref: the lockref.
 *
 * Never takes the lock.  Fails when the count is <= 0 (zero or dead),
 * when the lock is held, when 100 cmpxchg attempts lose races, and always
 * in a build without 64-bit cmpxchg; the caller then falls back to the
 * locked path (lockref_put_or_lock() or the lock).
 *
 * Context: Any; caller does not hold @lockref->lock.
 * Return: the new count (>= 0) on success, -1 on failure (nothing
 * changed).
 */
int lockref_put_return(struct lockref *lockref);

/**
 * lockref_put_or_lock() - Decrement the count, or lock if it is <= 1.
 * @lockref: the lockref.
 *
 * Context: Any; caller does not hold @lockref->lock.
 * Return: 1 if the count was > 1 and was decremented (lock not held); 0
 * if the count was <= 1: nothing changed and the lock IS HELD on return,
 * so the caller can decide the object's fate (typically drop the last
 * reference, lockref_mark_dead(), unlock, free after a grace period).
 */
int lockref_put_or_lock(struct lockref *lockref);

/**
 * lockref_mark_dead() - Mark the lockref dead (count = -128).
 * @lockref: the lockref.
 *
 * Afterwards lockref_get_not_dead(), lockref_get_not_zero(),
 * lockref_put_not_zero() and lockref_put_return() fail.  Objects found
 * under RCU may still be dead; free them only after a grace period.
 *
 * Context: Caller holds @lockref->lock (checked: BUG otherwise).
 */
void lockref_mark_dead(struct lockref *lockref);

/**
 * lockref_get_not_dead() - Increment the count unless the lockref is dead.
 * @lockref: the lockref.
 *
 * The lookup half of the RCU pattern: an object found under
 * rcu_read_lock() may be dying; this takes a reference only if not.
 *
 * Context: Any; caller does not hold @lockref->lock.
 * Return: 1 if the count was >= 0 and was incremented, 0 if dead.
 */
int lockref_get_not_dead(struct lockref *lockref);

/*
 * Userspace: inline fast paths.
 *
 * compat/user.h defines RK_LOCKREF_INLINE (compat/kernel.h does not: the
 * kernel build keeps lib/lockref.c's out-of-line functions, and its own
 * <linux/lockref.h>).  There, when the lockref has a 64-bit cmpxchg, each
 * operation above is also defined here as a GNU inline function: one
 * relaxed load of the word and, if the lock half reads unlocked, one
 * cmpxchg, inlined into the caller (always_inline: at -O0 too, so the
 * tests exercise these paths in every configuration).  Every other case
 * (lock seen held, the count test failing into the lock, a lost race)
 * continues out of line in lockref_*_slowpath() with the word the fast
 * path last saw, which retries at most 99 more times and then takes the
 * lock: the same 100 attempts, the same results, as the out-of-line
 * function.  gnu_inline: the definition is only for inlining; the
 * exported functions of the same name stay the library's (ABI, function
 * pointers, programs built with older headers).  lockref.c defines
 * RK_LOCKREF_IMPL: it defines the out-of-line functions themselves.
 *
 * Ordering: exactly the out-of-line functions' (see the DOC block):
 * relaxed cmpxchg for increments, release for put_not_zero and
 * put_or_lock, fully ordered for put_return; the initial load is relaxed
 * because the cmpxchg revalidates the whole word, and a failed cmpxchg
 * orders nothing.
 */
#if defined(RK_LOCKREF_INLINE) && !defined(RK_LOCKREF_IMPL) && \
	RK_USE_CMPXCHG_LOCKREF
#define RK_LOCKREF_FASTPATH_INLINE 1
#else
#define RK_LOCKREF_FASTPATH_INLINE 0
#endif

#ifdef RK_LOCKREF_INLINE
/*
 * lockref_*_slowpath() - The rest of lockref_*() after the inline attempt.
 * @lockref: the lockref.
 * @old: the word the inline fast path last read (after a failed cmpxchg,
 *       the value that cmpxchg loaded).
 *
 * For the inline fast paths only (userspace); exported because consumers
 * inline the callers.  Context and Return: those of the function named.
 */
void lockref_get_slowpath(struct lockref *lockref, struct lockref old);
int lockref_get_not_zero_slowpath(struct lockref *lockref,
				  struct lockref old);
int lockref_put_not_zero_slowpath(struct lockref *lockref,
				  struct lockref old);
int lockref_put_return_slowpath(struct lockref *lockref, struct lockref old);
int lockref_put_or_lock_slowpath(struct lockref *lockref, struct lockref old);
int lockref_get_not_dead_slowpath(struct lockref *lockref,
				  struct lockref old);
#endif

#if RK_LOCKREF_FASTPATH_INLINE
#define RK_LOCKREF_FAST_ \
	extern inline __attribute__((gnu_inline, always_inline))

/* The fast-path attempt shared by the functions below: on a private copy
 * @upd of the word @old read while unlocked, STEP computes the new count
 * (it may return or jump to the slow path first); the cmpxchg installs
 * it; @cur_, the cmpxchg's expected value, is a scalar so that it stays
 * in a register (2 instructions a pair fewer than the struct), and @old
 * takes the value a failed cmpxchg loaded.  Wrapping arithmetic in
 * unsigned, as lockref.c's. */
#define RK_LOCKREF_TRY_(CMPXCHG, STEP, SUCCESS)                              \
	do {                                                                 \
		struct lockref upd;                                          \
		uint64_t cur_ = rk_read_once(lockref->lock_count);           \
		old.lock_count = cur_;                                       \
		if (likely(rk_spin_value_unlocked(old.lock))) {              \
			upd = old;                                           \
			STEP                                                 \
			if (likely(CMPXCHG(&lockref->lock_count, &cur_,      \
					   upd.lock_count)))                 \
				SUCCESS;                                     \
			old.lock_count = cur_;                               \
		}                                                            \
	} while (0)
#define RK_LOCKREF_INC_(c) ((int)((unsigned int)(c) + 1u))
#define RK_LOCKREF_DEC_(c) ((int)((unsigned int)(c) - 1u))

RK_LOCKREF_FAST_ void lockref_get(struct lockref *lockref)
{
	struct lockref old;

	RK_LOCKREF_TRY_(rk_try_cmpxchg64_relaxed,
		upd.count = RK_LOCKREF_INC_(upd.count);
	,
		return);
	lockref_get_slowpath(lockref, old);
}

RK_LOCKREF_FAST_ int lockref_get_not_zero(struct lockref *lockref)
{
	struct lockref old;

	RK_LOCKREF_TRY_(rk_try_cmpxchg64_relaxed,
		if (old.count <= 0)
			return 0;
		upd.count = RK_LOCKREF_INC_(upd.count);
	,
		return 1);
	return lockref_get_not_zero_slowpath(lockref, old);
}

RK_LOCKREF_FAST_ int lockref_put_not_zero(struct lockref *lockref)
{
	struct lockref old;

	RK_LOCKREF_TRY_(rk_try_cmpxchg64_release,
		if (old.count <= 1)
			return 0;
		upd.count = RK_LOCKREF_DEC_(upd.count);
	,
		return 1);
	return lockref_put_not_zero_slowpath(lockref, old);
}

RK_LOCKREF_FAST_ int lockref_put_return(struct lockref *lockref)
{
	struct lockref old;

	RK_LOCKREF_TRY_(rk_try_cmpxchg64,
		if (old.count <= 0)
			return -1;
		upd.count = RK_LOCKREF_DEC_(upd.count);
	,
		return upd.count);
	return lockref_put_return_slowpath(lockref, old);
}

RK_LOCKREF_FAST_ int lockref_put_or_lock(struct lockref *lockref)
{
	struct lockref old;

	/* count <= 1: the slow path sees the same word and takes the lock
	 * without a further attempt, as the out-of-line loop's break. */
	RK_LOCKREF_TRY_(rk_try_cmpxchg64_release,
		if (old.count <= 1)
			break;
		upd.count = RK_LOCKREF_DEC_(upd.count);
	,
		return 1);
	return lockref_put_or_lock_slowpath(lockref, old);
}

RK_LOCKREF_FAST_ int lockref_get_not_dead(struct lockref *lockref)
{
	struct lockref old;

	RK_LOCKREF_TRY_(rk_try_cmpxchg64_relaxed,
		if (old.count < 0)
			return 0;
		upd.count = RK_LOCKREF_INC_(upd.count);
	,
		return 1);
	return lockref_get_not_dead_slowpath(lockref, old);
}

#undef RK_LOCKREF_FAST_
#undef RK_LOCKREF_TRY_
#undef RK_LOCKREF_INC_
#undef RK_LOCKREF_DEC_
#endif /* RK_LOCKREF_FASTPATH_INLINE */

/**
 * __lockref_is_dead() - Whether the lockref is dead.
 * @l: the lockref.
 *
 * Context: Reliable only with @l->lock held (otherwise a snapshot).
 * Return: true if the count is negative.
 */
static inline bool __lockref_is_dead(const struct lockref *l)
{
	return rk_read_once(l->count) < 0;
}

#ifdef __cplusplus
}
#endif

#endif /* RK_LOCKREF_H */
