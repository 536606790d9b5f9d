/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * compat.h - the one header the portable core (ridr/, lockref/) includes.
 *
 * It selects the world the core is compiled for.  Both sides define the
 * same vocabulary, prefixed rk_ so it never clashes with the kernel's own
 * compat_* names (32-bit syscall compatibility):
 *
 *   types      rk_spinlock_t, rk_gfp_t, struct rk_rcu_head, rk_rcu_flavor_t
 *   RCU        rk_rcu_dereference(), rk_rcu_dereference_protected(),
 *              rk_rcu_assign_pointer(), rk_rcu_init_pointer(),
 *              rk_call_rcu(), RK_RCU_DEFAULT_FLAVOR
 *   ordering   rk_read_once(), rk_write_once(), rk_load_acquire(),
 *              rk_store_release(), rk_smp_rmb(), rk_prefetch(),
 *              rk_try_cmpxchg64_relaxed() / _release() / () (full),
 *              RK_USE_CMPXCHG_LOCKREF
 *   locking    rk_spin_lock_init(), rk_spin_lock(), rk_spin_unlock(),
 *              rk_spin_value_unlocked(), rk_assert_spin_locked(),
 *              RK_SPINLOCK_INIT, rk_acquires(), rk_releases() (sparse)
 *   memory     rk_zalloc(size, gfp), rk_alloc(size, gfp) (not zeroed),
 *              rk_free(p, size), RK_GFP_KERNEL,
 *              RK_GFP_NOWAIT, RK_GFP_ATOMIC, RK_GFP_ACCOUNT
 *   misc       likely(), unlikely(), rk_warn_on_once(),
 *              rk_ffs64(), rk_popcount64(), RK_BUILD_BUG_ON()
 *
 * Every word maps 1:1 onto a kernel primitive (see compat/kernel.h when it
 * exists, and docs/design.md).  A shim may drop a check (lockdep), never an
 * ordering.  If the core needs a new word, add it to both sides here.
 */
#ifndef RK_COMPAT_H
#define RK_COMPAT_H

#ifdef __KERNEL__
#include "kernel.h"
#else
#include "user.h"
#endif

#endif /* RK_COMPAT_H */
