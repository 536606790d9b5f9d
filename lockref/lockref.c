// SPDX-License-Identifier: GPL-2.0-only
/*
 * lockref.c - spinlock + reference count in one 64-bit word.
 *
 * Ordering guarantees:
 *
 * 1. The fast path only succeeds while the lock half of the word reads
 *    unlocked, and its cmpxchg covers lock and count together: a count
 *    never changes under a lock holder's feet except by the holder.  A
 *    failed cmpxchg orders nothing: it only reloads the word.
 * 2. Increments use the relaxed cmpxchg: the caller already pins the
 *    object.  Decrements and lockref_put_return() use the orderings the
 *    platform's lockref has always had (lockref.h; compat/kernel.h keeps
 *    the kernel's relaxed ones).
 * 3. The slow path runs entirely under the spinlock; the count is read
 *    and written with rk_read_once()/rk_write_once() there.  The value is
 *    stable (fast paths see the lock and back off), but a relaxed
 *    fast-path cmpxchg that completed just before we took the lock is not
 *    ordered before our lock acquisition, so a plain access would be a
 *    data race in C11 terms (ThreadSanitizer reports it).  Single-copy
 *    atomic accesses cost nothing extra.
 */
#define RK_LOCKREF_IMPL	/* the out-of-line functions, not lockref.h's inline ones */
#include "lockref/lockref.h"

#include "compat/compat.h"

/* Wrapping increment/decrement: defined behaviour at INT_MAX/INT_MIN
 * (the kernel relies on -fno-strict-overflow for the same effect).
 */
static inline int lockref_inc(int count)
{
	return (int)((unsigned int)count + 1u);
}

static inline int lockref_dec(int count)
{
	return (int)((unsigned int)count - 1u);
}

#if RK_USE_CMPXCHG_LOCKREF

/*
 * Try CODE on a private copy of the word and install it with CMPXCHG
 * (a 64-bit try_cmpxchg of the operation's ordering) while the lock
 * reads unlocked.
 * On failure the cmpxchg reloads @old and we retry, at most 100 times.
 * No cpu_relax() between attempts: under contention the pause only lets
 * the cache line move away again before the next attempt.  CODE may
 * return (a result that needs no update) or break (fall back to the
 * lock).
 */
#define CMPXCHG_LOOP(CMPXCHG, CODE, SUCCESS)                                 \
	do {                                                                 \
		int retry = 100;                                             \
		struct lockref old;                                          \
		RK_BUILD_BUG_ON(sizeof(old) != 8);                           \
		old.lock_count = rk_read_once(lockref->lock_count);          \
		while (likely(rk_spin_value_unlocked(old.lock))) {           \
			struct lockref new = old;                            \
			CODE                                                 \
			if (likely(CMPXCHG(&lockref->lock_count,             \
					   &old.lock_count,                  \
					   new.lock_count))) {               \
				SUCCESS;                                     \
			}                                                    \
			if (!--retry)                                        \
				break;                                       \
		}                                                            \
	} while (0)

#else

#define CMPXCHG_LOOP(CMPXCHG, CODE, SUCCESS) do { } while (0)

#endif

/**
 * lockref_get - Increments reference count unconditionally
 * @lockref: pointer to lockref structure
 *
 * This operation is only valid if you already hold a reference
 * to the object, so you know the count cannot be zero.
 */
void lockref_get(struct lockref *lockref)
{
	CMPXCHG_LOOP(rk_try_cmpxchg64_relaxed,
		new.count = lockref_inc(new.count);
	,
		return;
	);

	rk_spin_lock(&lockref->lock);
	rk_write_once(lockref->count, lockref_inc(rk_read_once(lockref->count)));
	rk_spin_unlock(&lockref->lock);
}
rk_export_symbol(lockref_get);

/**
 * lockref_get_not_zero - Increments count unless the count is 0 or dead
 * @lockref: pointer to lockref structure
 * Return: 1 if count updated successfully or 0 if count was zero
 */
int lockref_get_not_zero(struct lockref *lockref)
{
	int retval;

	CMPXCHG_LOOP(rk_try_cmpxchg64_relaxed,
		new.count = lockref_inc(new.count);
		if (old.count <= 0)
			return 0;
	,
		return 1;
	);

	rk_spin_lock(&lockref->lock);
	retval = 0;
	if (rk_read_once(lockref->count) > 0) {
		rk_write_once(lockref->count, lockref_inc(rk_read_once(lockref->count)));
		retval = 1;
	}
	rk_spin_unlock(&lockref->lock);
	return retval;
}
rk_export_symbol(lockref_get_not_zero);

/**
 * lockref_put_not_zero - Decrements count unless count <= 1 before decrement
 * @lockref: pointer to lockref structure
 * Return: 1 if count updated successfully or 0 if count would become zero
 */
int lockref_put_not_zero(struct lockref *lockref)
{
	int retval;

	CMPXCHG_LOOP(rk_try_cmpxchg64_release,
		new.count = lockref_dec(new.count);
		if (old.count <= 1)
			return 0;
	,
		return 1;
	);

	rk_spin_lock(&lockref->lock);
	retval = 0;
	if (rk_read_once(lockref->count) > 1) {
		rk_write_once(lockref->count, lockref_dec(rk_read_once(lockref->count)));
		retval = 1;
	}
	rk_spin_unlock(&lockref->lock);
	return retval;
}
rk_export_symbol(lockref_put_not_zero);

/**
 * lockref_put_return - Decrement reference count if possible
 * @lockref: pointer to lockref structure
 *
 * Decrement the reference count and return the new value.
 * If the lockref was dead or locked, return an error.
 */
int lockref_put_return(struct lockref *lockref)
{
	CMPXCHG_LOOP(rk_try_cmpxchg64,
		new.count = lockref_dec(new.count);
		if (old.count <= 0)
			return -1;
	,
		return new.count;
	);
	return -1;
}
rk_export_symbol(lockref_put_return);

/**
 * lockref_put_or_lock - decrements count unless count <= 1 before decrement
 * @lockref: pointer to lockref structure
 * Return: 1 if count updated successfully or 0 if count <= 1 and lock taken
 */
int lockref_put_or_lock(struct lockref *lockref)
{
	CMPXCHG_LOOP(rk_try_cmpxchg64_release,
		new.count = lockref_dec(new.count);
		if (old.count <= 1)
			break;
	,
		return 1;
	);

	rk_spin_lock(&lockref->lock);
	if (rk_read_once(lockref->count) <= 1)
		return 0;	/* lock stays held: the caller decides */
	rk_write_once(lockref->count, lockref_dec(rk_read_once(lockref->count)));
	rk_spin_unlock(&lockref->lock);
	return 1;
}
rk_export_symbol(lockref_put_or_lock);

/**
 * lockref_mark_dead - mark lockref dead
 * @lockref: pointer to lockref structure
 */
void lockref_mark_dead(struct lockref *lockref)
{
	rk_assert_spin_locked(&lockref->lock);
	/* Plain relaxed store under the lock: fast paths cannot succeed while
	 * the lock is held, and the unlock (release) publishes it.
	 */
	rk_write_once(lockref->count, -128);
}
rk_export_symbol(lockref_mark_dead);

/**
 * lockref_get_not_dead - Increments count unless the ref is dead
 * @lockref: pointer to lockref structure
 * Return: 1 if count updated successfully or 0 if lockref was dead
 */
int lockref_get_not_dead(struct lockref *lockref)
{
	int retval;

	CMPXCHG_LOOP(rk_try_cmpxchg64_relaxed,
		new.count = lockref_inc(new.count);
		if (old.count < 0)
			return 0;
	,
		return 1;
	);

	rk_spin_lock(&lockref->lock);
	retval = 0;
	if (rk_read_once(lockref->count) >= 0) {
		rk_write_once(lockref->count, lockref_inc(rk_read_once(lockref->count)));
		retval = 1;
	}
	rk_spin_unlock(&lockref->lock);
	return retval;
}
rk_export_symbol(lockref_get_not_dead);

#ifdef RK_LOCKREF_INLINE
/*
 * Userspace helpers (the kernel generator drops this block: kernel callers
 * use the spinlock directly, and mainline has its own inline
 * lockref_init()).
 */
void lockref_init(struct lockref *lockref, int count)
{
	rk_spin_lock_init(&lockref->lock);
	rk_write_once(lockref->count, count);
}
rk_export_symbol(lockref_init);

void lockref_lock(struct lockref *lockref)
	rk_acquires(&lockref->lock)
{
	rk_spin_lock(&lockref->lock);
}
rk_export_symbol(lockref_lock);

void lockref_unlock(struct lockref *lockref)
	rk_releases(&lockref->lock)
{
	rk_spin_unlock(&lockref->lock);
}
rk_export_symbol(lockref_unlock);

/*
 * Userspace: the slow paths of lockref.h's inline fast paths (the kernel
 * generator drops this block; the kernel has no inline fast path).  Each
 * continues the function it is named after from the word @old the inline
 * attempt last saw: at most 99 more cmpxchg attempts (the inline one was
 * the first of the 100), then the same locked path as above, with the
 * same orderings (guarantees 1-3 at the top of this file).  If the inline
 * attempt saw the lock held, or its count test sent it to the lock, @old
 * still shows that, so no further attempt is made, as in the loop above.
 */
#if RK_USE_CMPXCHG_LOCKREF
#define CMPXCHG_LOOP_FROM(CMPXCHG, CODE, SUCCESS)                            \
	do {                                                                 \
		int retry = 99;                                              \
		while (likely(rk_spin_value_unlocked(old.lock))) {           \
			struct lockref new = old;                            \
			CODE                                                 \
			if (likely(CMPXCHG(&lockref->lock_count,             \
					   &old.lock_count,                  \
					   new.lock_count))) {               \
				SUCCESS;                                     \
			}                                                    \
			if (!--retry)                                        \
				break;                                       \
		}                                                            \
	} while (0)
#else
#define CMPXCHG_LOOP_FROM(CMPXCHG, CODE, SUCCESS) do { (void)old; } while (0)
#endif

void lockref_get_slowpath(struct lockref *lockref, struct lockref old)
{
	CMPXCHG_LOOP_FROM(rk_try_cmpxchg64_relaxed,
		new.count = lockref_inc(new.count);
	,
		return;
	);

	rk_spin_lock(&lockref->lock);
	rk_write_once(lockref->count, lockref_inc(rk_read_once(lockref->count)));
	rk_spin_unlock(&lockref->lock);
}

int lockref_get_not_zero_slowpath(struct lockref *lockref, struct lockref old)
{
	int retval;

	CMPXCHG_LOOP_FROM(rk_try_cmpxchg64_relaxed,
		new.count = lockref_inc(new.count);
		if (old.count <= 0)
			return 0;
	,
		return 1;
	);

	rk_spin_lock(&lockref->lock);
	retval = 0;
	if (rk_read_once(lockref->count) > 0) {
		rk_write_once(lockref->count, lockref_inc(rk_read_once(lockref->count)));
		retval = 1;
	}
	rk_spin_unlock(&lockref->lock);
	return retval;
}

int lockref_put_not_zero_slowpath(struct lockref *lockref, struct lockref old)
{
	int retval;

	CMPXCHG_LOOP_FROM(rk_try_cmpxchg64_release,
		new.count = lockref_dec(new.count);
		if (old.count <= 1)
			return 0;
	,
		return 1;
	);

	rk_spin_lock(&lockref->lock);
	retval = 0;
	if (rk_read_once(lockref->count) > 1) {
		rk_write_once(lockref->count, lockref_dec(rk_read_once(lockref->count)));
		retval = 1;
	}
	rk_spin_unlock(&lockref->lock);
	return retval;
}

int lockref_put_return_slowpath(struct lockref *lockref, struct lockref old)
{
	CMPXCHG_LOOP_FROM(rk_try_cmpxchg64,
		new.count = lockref_dec(new.count);
		if (old.count <= 0)
			return -1;
	,
		return new.count;
	);
	return -1;
}

int lockref_put_or_lock_slowpath(struct lockref *lockref, struct lockref old)
{
	CMPXCHG_LOOP_FROM(rk_try_cmpxchg64_release,
		new.count = lockref_dec(new.count);
		if (old.count <= 1)
			break;
	,
		return 1;
	);

	rk_spin_lock(&lockref->lock);
	if (rk_read_once(lockref->count) <= 1)
		return 0;	/* lock stays held: the caller decides */
	rk_write_once(lockref->count, lockref_dec(rk_read_once(lockref->count)));
	rk_spin_unlock(&lockref->lock);
	return 1;
}

int lockref_get_not_dead_slowpath(struct lockref *lockref, struct lockref old)
{
	int retval;

	CMPXCHG_LOOP_FROM(rk_try_cmpxchg64_relaxed,
		new.count = lockref_inc(new.count);
		if (old.count < 0)
			return 0;
	,
		return 1;
	);

	rk_spin_lock(&lockref->lock);
	retval = 0;
	if (rk_read_once(lockref->count) >= 0) {
		rk_write_once(lockref->count, lockref_inc(rk_read_once(lockref->count)));
		retval = 1;
	}
	rk_spin_unlock(&lockref->lock);
	return retval;
}
#endif /* RK_LOCKREF_INLINE */
