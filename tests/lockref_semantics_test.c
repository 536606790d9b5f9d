// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lockref semantics at the boundaries, single-threaded, plus the
 * lock-held paths with a second thread.  Built twice: with the cmpxchg
 * fast path and with RK_LOCKREF_NO_CMPXCHG (lock only); expectations that
 * differ between the two (lockref_put_return) test RK_USE_CMPXCHG_LOCKREF.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "lockref/lockref.h"
#include "tests/lib/testutil.h"

static struct lockref make(int count)
{
	struct lockref l;

	lockref_init(&l, count);
	return l;
}

#define EXPECT_COUNT(l, want)                                                \
	cr_expect_eq((l).count, (want), "count is %d, expected %d",          \
		     (l).count, (want))
#define EXPECT_UNLOCKED(l)                                                   \
	cr_expect(!rk_spin_is_locked(&(l).lock),                             \
		  "lock is held after an operation that must release it")

Test(lockref_semantics, layout_is_one_64bit_word_with_cmpxchg)
{
#if RK_USE_CMPXCHG_LOCKREF
	cr_expect_eq(sizeof(struct lockref), 8);
	cr_expect_eq(_Alignof(struct lockref), 8);
#else
	cr_expect_eq(sizeof(struct lockref), 8,
		     "lock + int still fit 8 bytes without cmpxchg");
#endif
}

Test(lockref_semantics, init_and_static_init_agree)
{
	struct lockref a = make(3);
	struct lockref b = LOCKREF_INIT(3);

	EXPECT_COUNT(a, 3);
	EXPECT_COUNT(b, 3);
	EXPECT_UNLOCKED(a);
	EXPECT_UNLOCKED(b);
}

Test(lockref_semantics, get_increments_unconditionally)
{
	struct lockref l = make(1);

	lockref_get(&l);
	EXPECT_COUNT(l, 2);
	EXPECT_UNLOCKED(l);
	l = make(0);
	lockref_get(&l);
	EXPECT_COUNT(l, 1);
}

Test(lockref_semantics, get_not_zero_refuses_zero_and_dead)
{
	struct lockref l = make(1);

	cr_expect_eq(lockref_get_not_zero(&l), 1);
	EXPECT_COUNT(l, 2);
	l = make(0);
	cr_expect_eq(lockref_get_not_zero(&l), 0, "count 0 must not revive");
	EXPECT_COUNT(l, 0);
	l = make(-1);
	cr_expect_eq(lockref_get_not_zero(&l), 0);
	EXPECT_COUNT(l, -1);
	EXPECT_UNLOCKED(l);
}

Test(lockref_semantics, put_not_zero_refuses_to_reach_zero)
{
	struct lockref l = make(2);

	cr_expect_eq(lockref_put_not_zero(&l), 1);
	EXPECT_COUNT(l, 1);
	cr_expect_eq(lockref_put_not_zero(&l), 0, "1 -> 0 must be refused");
	EXPECT_COUNT(l, 1);
	l = make(0);
	cr_expect_eq(lockref_put_not_zero(&l), 0);
	EXPECT_COUNT(l, 0);
	l = make(-128);
	cr_expect_eq(lockref_put_not_zero(&l), 0);
	EXPECT_COUNT(l, -128);
	EXPECT_UNLOCKED(l);
}

Test(lockref_semantics, put_return_is_lockless_only)
{
	struct lockref l = make(2);

#if RK_USE_CMPXCHG_LOCKREF
	cr_expect_eq(lockref_put_return(&l), 1);
	EXPECT_COUNT(l, 1);
	cr_expect_eq(lockref_put_return(&l), 0, "1 -> 0 returns the new count");
	EXPECT_COUNT(l, 0);
#else
	cr_expect_eq(lockref_put_return(&l), -1,
		     "without cmpxchg put_return always fails, as the kernel");
	EXPECT_COUNT(l, 2);
	l = make(0);
#endif
	cr_expect_eq(lockref_put_return(&l), -1, "count 0 cannot go negative");
	EXPECT_COUNT(l, 0);
	l = make(-128);
	cr_expect_eq(lockref_put_return(&l), -1);
	EXPECT_COUNT(l, -128);
	EXPECT_UNLOCKED(l);
}

Test(lockref_semantics, put_return_fails_while_locked)
{
	struct lockref l = make(5);

	lockref_lock(&l);
	cr_expect_eq(lockref_put_return(&l), -1,
		     "put_return must not change a locked lockref");
	EXPECT_COUNT(l, 5);
	lockref_unlock(&l);
}

Test(lockref_semantics, put_or_lock_decrements_above_one)
{
	struct lockref l = make(3);

	cr_expect_eq(lockref_put_or_lock(&l), 1);
	EXPECT_COUNT(l, 2);
	EXPECT_UNLOCKED(l);
}

Test(lockref_semantics, put_or_lock_returns_locked_at_one_or_less)
{
	int counts[] = { 1, 0, -128 };

	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		struct lockref l = make(counts[i]);

		cr_expect_eq(lockref_put_or_lock(&l), 0,
			     "count %d: must return 0", counts[i]);
		cr_expect(rk_spin_is_locked(&l.lock),
			  "count %d: lock must be held on return 0", counts[i]);
		EXPECT_COUNT(l, counts[i]);
		lockref_unlock(&l);
	}
}

/*
 * In userspace the header inlines each operation's first attempt
 * (RK_LOCKREF_INLINE); the library still exports the out-of-line
 * functions, which a function pointer (or a program built with older
 * headers) reaches.  Both must give the same result, count and lock
 * state from every starting count, including the ones that send the
 * inline path to its slow path (dead, zero, one).
 */
typedef int (*lockref_op)(struct lockref *);

static int do_get(struct lockref *l)
{
	lockref_get(l);
	return 0;
}

static void (*volatile ool_get)(struct lockref *) = lockref_get;
static int ool_do_get(struct lockref *l)
{
	ool_get(l);
	return 0;
}

static int op_get_not_zero(struct lockref *l) { return lockref_get_not_zero(l); }
static int op_put_not_zero(struct lockref *l) { return lockref_put_not_zero(l); }
static int op_put_return(struct lockref *l) { return lockref_put_return(l); }
static int op_put_or_lock(struct lockref *l) { return lockref_put_or_lock(l); }
static int op_get_not_dead(struct lockref *l) { return lockref_get_not_dead(l); }

Test(lockref_semantics, inline_and_out_of_line_functions_agree)
{
	static const struct {
		const char *name;
		lockref_op inl;
		lockref_op ool;	/* the exported function, through a pointer */
	} ops[] = {
		{ "get", do_get, ool_do_get },
		{ "get_not_zero", op_get_not_zero, lockref_get_not_zero },
		{ "put_not_zero", op_put_not_zero, lockref_put_not_zero },
		{ "put_return", op_put_return, lockref_put_return },
		{ "put_or_lock", op_put_or_lock, lockref_put_or_lock },
		{ "get_not_dead", op_get_not_dead, lockref_get_not_dead },
	};
	static const int counts[] = { -128, -1, 0, 1, 2, 7, INT_MAX };

	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
			lockref_op volatile ool = ops[o].ool;
			struct lockref a = make(counts[c]);
			struct lockref b = make(counts[c]);
			int ra, rb;

			if (!strcmp(ops[o].name, "get") && counts[c] <= 0)
				continue;	/* get needs a reference */
			ra = ops[o].inl(&a);
			rb = ool(&b);
			cr_expect_eq(ra, rb, "%s from %d: inline returned %d, "
				     "out of line %d", ops[o].name, counts[c],
				     ra, rb);
			cr_expect_eq(a.count, b.count, "%s from %d: inline left "
				     "%d, out of line %d", ops[o].name,
				     counts[c], a.count, b.count);
			cr_expect_eq(rk_spin_is_locked(&a.lock),
				     rk_spin_is_locked(&b.lock),
				     "%s from %d: lock state differs",
				     ops[o].name, counts[c]);
		}
	}
}

Test(lockref_semantics, mark_dead_blocks_every_conditional_get)
{
	struct lockref l = make(1);

	lockref_lock(&l);
	lockref_mark_dead(&l);
	cr_expect(__lockref_is_dead(&l));
	lockref_unlock(&l);
	EXPECT_COUNT(l, -128);
	cr_expect_eq(lockref_get_not_dead(&l), 0);
	cr_expect_eq(lockref_get_not_zero(&l), 0);
	cr_expect_eq(lockref_put_not_zero(&l), 0);
	cr_expect_eq(lockref_put_return(&l), -1);
	EXPECT_COUNT(l, -128);
}

Test(lockref_semantics, mark_dead_without_lock_is_a_bug, .signal = SIGABRT)
{
	struct lockref l = make(1);

	lockref_mark_dead(&l);
}

Test(lockref_semantics, get_not_dead_accepts_zero)
{
	struct lockref l = make(0);

	cr_expect_eq(lockref_get_not_dead(&l), 1, "0 is not dead");
	EXPECT_COUNT(l, 1);
	l = make(-1);
	cr_expect_eq(lockref_get_not_dead(&l), 0, "any negative count is dead");
	EXPECT_COUNT(l, -1);
}

Test(lockref_semantics, increment_past_int_max_wraps_to_dead)
{
	struct lockref l = make(INT_MAX);

	lockref_get(&l);
	EXPECT_COUNT(l, INT_MIN);
	cr_expect(__lockref_is_dead(&l),
		  "documented: wrapping past INT_MAX reads as dead");
	cr_expect_eq(lockref_get_not_dead(&l), 0);
	l = make(INT_MAX);
	cr_expect_eq(lockref_get_not_zero(&l), 1,
		     "INT_MAX > 0, so get_not_zero increments (and wraps)");
	EXPECT_COUNT(l, INT_MIN);
	l = make(INT_MAX);
	cr_expect_eq(lockref_get_not_dead(&l), 1);
	EXPECT_COUNT(l, INT_MIN);
}

/* ---- lock held by another thread: callers must wait, then see the
 * holder's update (the fast path must not bypass the lock) ---- */

struct waiter {
	struct lockref *l;
	int op;
	int ret;
	int done;
};

enum { OP_GET, OP_GET_NOT_ZERO, OP_GET_NOT_DEAD, OP_PUT_NOT_ZERO,
       OP_PUT_OR_LOCK };

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;

	switch (w->op) {
	case OP_GET:
		lockref_get(w->l);
		w->ret = 1;
		break;
	case OP_GET_NOT_ZERO:
		w->ret = lockref_get_not_zero(w->l);
		break;
	case OP_GET_NOT_DEAD:
		w->ret = lockref_get_not_dead(w->l);
		break;
	case OP_PUT_NOT_ZERO:
		w->ret = lockref_put_not_zero(w->l);
		break;
	case OP_PUT_OR_LOCK:
		w->ret = lockref_put_or_lock(w->l);
		if (!w->ret)
			lockref_unlock(w->l);
		break;
	}
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Lock, start @op in a thread, let it spin, change the count under the
 * lock to @set, unlock: the op must see @set, not the pre-lock count. */
static void run_while_locked(int initial, int op, int set, int want_ret,
			     int want_count)
{
	struct lockref l = make(initial);
	struct waiter w = { .l = &l, .op = op };
	pthread_t t;

	lockref_lock(&l);
	pthread_create(&t, NULL, waiter_fn, &w);
	usleep(20000);
	cr_expect_eq(__atomic_load_n(&w.done, __ATOMIC_ACQUIRE), 0,
		     "op %d completed while another thread held the lock", op);
	rk_write_once(l.count, set);
	lockref_unlock(&l);
	pthread_join(t, NULL);
	cr_expect_eq(w.ret, want_ret, "op %d returned %d, expected %d", op,
		     w.ret, want_ret);
	cr_expect_eq(l.count, want_count, "op %d left count %d, expected %d",
		     op, l.count, want_count);
	EXPECT_UNLOCKED(l);
}

Test(lockref_locked, get_waits_for_holder)
{
	run_while_locked(1, OP_GET, 7, 1, 8);
}

Test(lockref_locked, get_not_zero_sees_holders_zero)
{
	run_while_locked(5, OP_GET_NOT_ZERO, 0, 0, 0);
}

Test(lockref_locked, get_not_dead_sees_holders_mark_dead)
{
	run_while_locked(5, OP_GET_NOT_DEAD, -128, 0, -128);
}

Test(lockref_locked, put_not_zero_sees_holders_one)
{
	run_while_locked(5, OP_PUT_NOT_ZERO, 1, 0, 1);
}

Test(lockref_locked, put_or_lock_sees_holders_count)
{
	run_while_locked(1, OP_PUT_OR_LOCK, 4, 1, 3);
}
