/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kernel.h - the Linux kernel side of the compat vocabulary, and the one
 * definition of how each word of it maps onto the kernel.
 *
 * Included only through compat/compat.h (when __KERNEL__ is defined), to
 * compile the portable core unchanged inside a kernel tree.  It is not
 * installed into a tree: kernel-backport/translate.py reads the #defines
 * below and kernel-backport/backport.py writes lib/ridr.c,
 * include/linux/ridr.h and lib/lockref.c with the kernel's own names
 * (rcu_dereference(), spin_lock(), kmem_cache_zalloc(), READ_ONCE(), u64,
 * ...), so what lands in the tree is plain kernel C.  How the generator
 * reads a definition:
 *  - a function-like macro whose body is one expression: the expression,
 *    with the arguments substituted (a pure rename when the body is a
 *    call with the parameters in order); a parameter the body does not
 *    use is dropped (the liburcu flavor of rk_call_rcu());
 *  - "do { (void)(p); stmt; } while (0)": @p is dropped, the result is
 *    stmt (the size argument of rk_free());
 *  - an object-like macro: its body;
 *  - anything else (RK_DEFINE_CACHE_SIZE, RK_DEFINE_CACHE,
 *    RK_BUILD_BUG_ON) has a translation written out in translate.py's
 *    SPECIAL table, which must produce what the macro here produces;
 *  - a word of the core that no definition here covers stops the
 *    generator; so does any rk_/RK_ word left in its output.
 * kernel-backport/verify.sh compiles the core both ways in the patched
 * tree (through this header, and the generated files) and requires the
 * same machine code, so the two cannot drift apart.
 *
 * Every word is a 1:1 alias of a kernel primitive (the same table as at the
 * top of compat/user.h).  Rules:
 *  - a word may drop a check the kernel cannot express here (the userspace
 *    flavor argument of call_rcu, the size argument of kfree), never an
 *    ordering: each RCU/atomic word below maps to a kernel primitive with
 *    the same or a stronger guarantee, commented where it matters, with
 *    one documented exception that keeps the kernel's own orderings:
 *    lockref's release and fully ordered cmpxchg (see "64-bit cmpxchg");
 *  - function-like macros, not inline wrappers, wherever the kernel's own
 *    primitive is a macro that records its call site (kzalloc() with
 *    memory allocation profiling, spin_lock_init() with its lockdep class
 *    key, BUG_ON()/WARN_ON_ONCE() with their bug table entry), so the
 *    kernel's debugging reports point at the core's line, not at this file.
 *
 * Checked against Linux 6.1 and 6.12 (kernel-backport/verify.sh).
 */
#ifndef RK_COMPAT_KERNEL_H
#define RK_COMPAT_KERNEL_H

#include <linux/bitops.h>
#include <linux/bits.h>
#include <linux/bug.h>
#include <linux/build_bug.h>
#include <linux/cache.h>
#include <linux/compiler.h>
#include <linux/container_of.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/gfp.h>
#include <linux/init.h>
#include <linux/limits.h>
#include <linux/lockdep.h>
#include <linux/prefetch.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/stddef.h>
#include <linux/types.h>

/* ------------------------------------------------------------------ */
/* C library words the portable core expects from <limits.h>           */

/*
 * Bits in an unsigned long; ridr.h sizes its tree with it.  Not CHAR_BIT:
 * the kernel has no <limits.h>, and a CHAR_BIT defined here would clash
 * with kernel files that define their own without #ifndef (atomisp's
 * type_support.h) once <linux/ridr.h> is included by a header as common
 * as <linux/sched/signal.h>.
 */
#define RK_BITS_PER_LONG BITS_PER_LONG

/* ------------------------------------------------------------------ */
/* Compiler hints and checks                                           */

/* likely()/unlikely() come from <linux/compiler.h> unchanged. */

/*
 * static_assert() (C11 _Static_assert), not BUILD_BUG_ON(): the core uses
 * it at file scope as well as inside blocks, and BUILD_BUG_ON() is only
 * valid inside a function.
 */
#define RK_BUILD_BUG_ON(cond) static_assert(!(cond), #cond)

#define rk_container_of(ptr, type, member) container_of(ptr, type, member)

#define rk_warn_on_once(cond) WARN_ON_ONCE(cond)

/*
 * Compiling the core through this header exports every function, as
 * EXPORT_SYMBOL (what lib/lockref.c always used, so existing modules keep
 * linking).  The generator decides per file instead: lib/lockref.c keeps
 * EXPORT_SYMBOL; lib/ridr.c exports, with EXPORT_SYMBOL_GPL, only what a
 * modular in-tree user calls (ipc and POSIX timers are built in;
 * lib/ridr_kunit.c, the KUnit suite, may be a module).
 */
#ifndef rk_export_symbol	/* verify.sh passes the generated files' own */
#define rk_export_symbol(sym) EXPORT_SYMBOL(sym)
#endif

/* Shared between the core's files only (userspace: hidden visibility). */
#define RK_HIDDEN

#define rk_always_inline __always_inline
#define rk_noinline noinline
#define rk_hide_var(v) OPTIMIZER_HIDE_VAR(v)

/* ------------------------------------------------------------------ */
/* Bits                                                                */

/* Index of the lowest set bit; @x must not be 0. */
#define rk_ffs64(x) __ffs64(x)
/* Number of set bits. */
#define rk_popcount64(x) hweight64(x)

/* ------------------------------------------------------------------ */
/* Single-copy atomic accesses and 64-bit cmpxchg                      */

/* Untorn, not elided, not fused; no ordering with other memory. */
#define rk_read_once(x) READ_ONCE(x)
#define rk_write_once(x, v) WRITE_ONCE(x, v)

#define rk_aligned_u64 aligned_u64

#define RK_ALIGNED(n) __aligned(n)

/* Sparse's RCU address space. */
#define __rk_rcu __rcu

/*
 * An automatic variable that CONFIG_INIT_STACK_ALL_ZERO (the default with
 * gcc 12) must not zero: the writers' per-call state on the allocation
 * and removal paths (a path of up to 11 nodes, a stock of up to 12),
 * some 100 bytes each, which every path writes before it reads, field by
 * field (the userspace build never zeroes them).  Zeroing them took two
 * `rep stosq` of 14-15 words per allocation, more than the hash insert
 * the series replaces.
 */
#define __rk_uninitialized __uninitialized

/*
 * Acquire load / release store of a scalar: ridr publishes a bucket's
 * record count with the release, readers load it with the acquire.
 */
#define rk_load_acquire(x) smp_load_acquire(&(x))
#define rk_store_release(x, v) smp_store_release(&(x), (v))

/* Loads before it are ordered before loads after it. */
#define rk_smp_rmb() smp_rmb()

/* A hint: fetch the line at @p for reading; orders nothing. */
#define rk_prefetch(p) prefetch(p)

/*
 * lockref's fast path.  On failure *@oldp receives the current value (the
 * kernel's try_cmpxchg64 contract, as C11 compare_exchange in userspace);
 * a failed attempt orders nothing in either world.
 *
 * The release and fully ordered words are lockref's only (the generator
 * refuses them in any other file): its decrements and
 * lockref_put_return().  The userspace build gives them those orderings
 * (lockref/lockref.h, docs/lockref.md).  The kernel's lib/lockref.c has
 * always used try_cmpxchg64_relaxed() for every operation, every caller
 * (the dcache first) is written against that contract, and a change of it
 * would need a proof under the kernel's memory model.  So here both map
 * to the relaxed cmpxchg: the generated lib/lockref.c has exactly the
 * kernel's orderings.
 */
#define rk_try_cmpxchg64_relaxed(ptr, oldp, new) \
	try_cmpxchg64_relaxed(ptr, oldp, new)
#define rk_try_cmpxchg64_release(ptr, oldp, new) \
	try_cmpxchg64_relaxed(ptr, oldp, new)
#define rk_try_cmpxchg64(ptr, oldp, new) try_cmpxchg64_relaxed(ptr, oldp, new)

/*
 * Whether the lock+count cmpxchg is usable: the kernel's own test from
 * <linux/lockref.h> (ARCH_USE_CMPXCHG_LOCKREF, SMP, and a spinlock_t of at
 * most 4 bytes, so not with lockdep or DEBUG_SPINLOCK).  Expanded where
 * lockref.c tests it, after it included <linux/lockref.h>.
 */
#define RK_USE_CMPXCHG_LOCKREF USE_CMPXCHG_LOCKREF

/* ------------------------------------------------------------------ */
/* Spinlock                                                            */

#define rk_spinlock_t spinlock_t
/*
 * Static initializer.  A statically allocated lock is its own lockdep
 * class key, so the name is only what lockdep prints.  The kernel's one
 * static initializer of the core is RIDR_INIT (init_signals'
 * posix_timer_ids), hence the name.
 */
#define RK_SPINLOCK_INIT __SPIN_LOCK_UNLOCKED(ridr.lock)

/* Macro so each call site gets its own lockdep class, as spin_lock_init(). */
#define rk_spin_lock_init(lock) spin_lock_init(lock)
#define rk_spin_lock(lock) spin_lock(lock)
#define rk_spin_trylock(lock) spin_trylock(lock)
#define rk_spin_unlock(lock) spin_unlock(lock)
/*
 * sparse's lock-context annotations for a function that returns with
 * @lock held (rk_acquires) or that releases it (rk_releases), as the
 * kernel's __acquires()/__releases(); nothing for the compiler.
 */
#define rk_acquires(lock) __acquires(lock)
#define rk_releases(lock) __releases(lock)
#define rk_cpu_relax() cpu_relax()

/*
 * Tests a copy of a spinlock_t taken inside lockref's 64-bit word, as
 * lib/lockref.c does.  Only compiled when USE_CMPXCHG_LOCKREF holds, i.e.
 * when spinlock_t is a bare arch_spinlock_t (no PREEMPT_RT, no lockdep).
 */
#define rk_spin_value_unlocked(lock) \
	arch_spin_value_unlocked((lock).rlock.raw_lock)

/* lockdep/DEBUG_SPINLOCK check; compiles to nothing otherwise. */
#define rk_assert_spin_locked(lock) assert_spin_locked(lock)

/* ------------------------------------------------------------------ */
/* Memory                                                              */

#define rk_gfp_t gfp_t
#define RK_GFP_KERNEL GFP_KERNEL
/*
 * The core allocates with RK_GFP_NOWAIT only where it may be in atomic
 * context (under a caller's spinlock) and handles failure (-ENOMEM, map
 * unchanged), so a failure is not worth a warning splat.
 */
#define RK_GFP_NOWAIT (GFP_NOWAIT | __GFP_NOWARN)
/*
 * For the locked calls of a map that must never sleep (RIDR_ATOMIC): the
 * retry after a failed RK_GFP_NOWAIT attempt may dip into the reserves.
 * Failure is still handled (-ENOMEM, map unchanged): no warning splat.
 */
#define RK_GFP_ATOMIC (GFP_ATOMIC | __GFP_NOWARN)
/* Or-ed into the above for a map created with RIDR_ACCOUNT: the objects
 * are charged to the allocating task's memory cgroup (the per-call form
 * of SLAB_ACCOUNT, which would charge every map's nodes).
 */
#define RK_GFP_ACCOUNT __GFP_ACCOUNT

/*
 * Zeroed allocation, allocation whose contents are undefined, free.
 * kfree() finds the size itself: @size is only used by userspace
 * accounting hooks, and is evaluated for side effects (it never has any
 * in the core).
 */
#define rk_zalloc(size, gfp) kzalloc(size, gfp)
#define rk_alloc(size, gfp) kmalloc(size, gfp)
#define rk_free(p, size)                                                   \
	do {                                                               \
		(void)(size);                                              \
		kfree(p);                                                  \
	} while (0)

/*
 * A cache of same-size objects: a kmem_cache created by a core_initcall,
 * so ridr's nodes (544 bytes used, 64-byte aligned: a 576-byte stride)
 * pack 7 to a page instead of each taking a kmalloc-1k slot.  SLAB_PANIC
 * because the core has no way to run without it; it is created at boot,
 * before any user of the core can allocate (ipc and POSIX timers
 * initialise later).  RK_DEFINE_CACHE_SIZE() for objects that use fewer
 * bytes than the sizeof of their aligned type.  The core passes &cache to
 * the allocation words; the generator writes the kernel's plain
 * "kmem_cache_zalloc(cache, gfp)" (SPECIAL for the definition itself).
 */
#define RK_DEFINE_CACHE_SIZE(cname, bytes, alignment)                     \
	static struct kmem_cache *cname __ro_after_init;                   \
	static int __init cname##_create(void)                             \
	{                                                                  \
		cname = kmem_cache_create(#cname, bytes, alignment,        \
					  SLAB_PANIC, NULL);               \
		return 0;                                                  \
	}                                                                  \
	core_initcall(cname##_create)
#define RK_DEFINE_CACHE(cname, type) \
	RK_DEFINE_CACHE_SIZE(cname, sizeof(type), __alignof__(type))
#define rk_cache_zalloc(c, gfp) kmem_cache_zalloc(*(c), gfp)
#define rk_cache_free(c, p) kmem_cache_free(*(c), p)

/* ------------------------------------------------------------------ */
/* RCU                                                                 */

/*
 * The kernel has one RCU for this purpose; the userspace liburcu flavor
 * the core carries around is an opaque pointer that stays NULL here and is
 * never dereferenced.
 */
#define RK_HAVE_FLAVORS 0
struct rk_rcu_flavor;
typedef struct rk_rcu_flavor rk_rcu_flavor_t;
#define RK_RCU_DEFAULT_FLAVOR NULL

/*
 * Readers: rcu_dereference() keeps its PROVE_RCU check that the caller is
 * inside rcu_read_lock() (the core's contract for ridr_find() and
 * ridr_get_next()).  It is a READ_ONCE() whose address dependency orders
 * the loads through the pointer after the load of the pointer (plus the
 * barrier Alpha needs), pairing with the release in rcu_assign_pointer().
 */
#define rk_rcu_dereference(p) rcu_dereference(p)
/* Writers, serialized (@c is the lockdep condition; kept). */
#define rk_rcu_dereference_protected(p, c) rcu_dereference_protected(p, c)

/*
 * Lockdep conditions for the writers' rcu_dereference_protected():
 * rk_lockdep_held(lock) is lockdep_is_held() of a spinlock;
 * rk_lockdep_map_t is what a lock's dep_map is, rk_lockdep_map_of(lock)
 * the dep_map of any lock (a spinlock, mutex or rw_semaphore), and
 * rk_lockdep_map_held(m) whether the lock of map @m is held (no for
 * NULL).  Without lockdep the maps do not exist: of() is NULL and held()
 * is true, as lockdep_is_held() is then.
 */
#define rk_lockdep_held(lock) lockdep_is_held(lock)
/* A lockdep class key, and giving a lock that class (ridr_init()). */
#define rk_lock_class_key_t struct lock_class_key
#define rk_lockdep_set_class(lock, key) lockdep_set_class(lock, key)
#define rk_lockdep_map_t struct lockdep_map
#ifdef CONFIG_DEBUG_LOCK_ALLOC
#define rk_lockdep_map_of(lock) (&(lock)->dep_map)
#define rk_lockdep_map_held(m) ((m) && lock_is_held(m))
#else
#define rk_lockdep_map_of(lock) ((void)(lock), NULL)
#define rk_lockdep_map_held(m) ((void)(m), 1)
#endif
/* Publish: smp_store_release(), so the pointee is initialised first. */
#define rk_rcu_assign_pointer(p, v) rcu_assign_pointer(p, v)
/* No ordering: NULL, or a pointer readers cannot reach yet. */
#define rk_rcu_init_pointer(p, v) RCU_INIT_POINTER(p, v)

/* struct rk_rcu_head is struct rcu_head, so callbacks type-check. */
#define rk_rcu_head rcu_head

/*
 * Run @func(@head) after a grace period: every reader that could have
 * reached the object has left its read-side critical section.  @flavor is
 * userspace-only and not evaluated (the core passes ridr_flavor(map),
 * which exists only in #if RK_HAVE_FLAVORS code).
 */
#define rk_call_rcu(flavor, head, func) call_rcu(head, func)
#define rk_synchronize_rcu(flavor)                                         \
	do {                                                               \
		(void)(flavor);                                            \
		synchronize_rcu();                                         \
	} while (0)
#define rk_rcu_barrier(flavor)                                             \
	do {                                                               \
		(void)(flavor);                                            \
		rcu_barrier();                                             \
	} while (0)
#define rk_rcu_read_lock() rcu_read_lock()
#define rk_rcu_read_unlock() rcu_read_unlock()

#endif /* RK_COMPAT_KERNEL_H */
