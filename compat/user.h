/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * user.h - the userspace side of the compat vocabulary: liburcu 0.13,
 * C11/GCC atomics, malloc.  Included only through compat/compat.h.
 *
 * Mapping to the kernel (compat/kernel.h defines the same words):
 *
 *   rk_rcu_dereference(p)      rcu_dereference(p)
 *   rk_rcu_dereference_protected(p, c)  rcu_dereference_protected(p, c)
 *   rk_rcu_assign_pointer(p,v) rcu_assign_pointer(p, v)
 *   rk_rcu_init_pointer(p, v)  RCU_INIT_POINTER(p, v)
 *   rk_call_rcu(fl, h, fn)     call_rcu(h, fn)          (no flavors there)
 *   rk_read_once/rk_write_once READ_ONCE/WRITE_ONCE
 *   rk_try_cmpxchg64_relaxed   try_cmpxchg64_relaxed
 *   rk_try_cmpxchg64_release   try_cmpxchg64_release
 *   rk_try_cmpxchg64           try_cmpxchg64 (fully ordered)
 *   rk_spinlock_t              spinlock_t
 *   rk_spin_value_unlocked(l)  arch_spin_value_unlocked(l.rlock.raw_lock)
 *   rk_zalloc/rk_alloc/rk_free kzalloc/kmalloc/kfree
 *   RK_DEFINE_CACHE, rk_cache_zalloc/rk_cache_free
 *                              kmem_cache_create (initcall),
 *                              kmem_cache_zalloc/kmem_cache_free
 *   rk_warn_on_once            WARN_ON_ONCE
 *   rk_ffs64/rk_popcount64     __ffs64/hweight64
 *   rk_smp_rmb()               smp_rmb()
 *   rk_prefetch(p)             prefetch(p)
 *   rk_always_inline           __always_inline
 *   rk_noinline                noinline
 *   rk_hide_var(v)             OPTIMIZER_HIDE_VAR(v)
 *   __rk_uninitialized         __uninitialized
 *   RK_GFP_ATOMIC, RK_GFP_ACCOUNT  GFP_ATOMIC, __GFP_ACCOUNT
 *
 * Ordering notes:
 *  - READ_ONCE/WRITE_ONCE become relaxed C11 atomics: the compiler may
 *    neither tear, fuse nor invent the access, exactly the kernel's
 *    guarantee, and ThreadSanitizer understands them.
 *  - Publication is a C11 release store.  Outside ThreadSanitizer builds
 *    the dereference is liburcu's own (a volatile load plus
 *    read_barrier_depends).  TSan does not understand that, so under
 *    __SANITIZE_THREAD__ it becomes an acquire load, and grace
 *    periods are modelled with __tsan_release()/__tsan_acquire() on one
 *    token: every read-side unlock releases it, everything that runs after
 *    a grace period acquires it.  See docs/build.md and
 *    ../shared/tsan-liburcu-notes.md.  Same orderings or stronger, never
 *    weaker.
 */
#ifndef RK_COMPAT_USER_H
#define RK_COMPAT_USER_H

#if !defined(_LGPL_SOURCE) && !defined(__SANITIZE_THREAD__) && \
    !defined(RK_NO_URCU_INLINE)
/* Inline liburcu's read-side fast paths (for the headers included here
 * only: undefined again below, so a consumer's own later liburcu
 * includes compile as the consumer chose).  Not under ThreadSanitizer:
 * inlined, liburcu's own reader/grace-period handshake (plain volatile
 * accesses to urcu_memb_gp) would be instrumented as if it were our
 * code; called out of line, it stays in the uninstrumented library and
 * our annotations model it instead.  A program that must not inline
 * liburcu's LGPL code (a proprietary one) defines RK_NO_URCU_INLINE
 * before including our headers: the read side is then called out of
 * line, as liburcu's own headers do without _LGPL_SOURCE. */
#define _LGPL_SOURCE
#define RK_DEFINED_LGPL_SOURCE
#endif

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <urcu/urcu-memb.h>
#include <urcu/static/pointer.h>

#ifdef RK_DEFINED_LGPL_SOURCE
#undef _LGPL_SOURCE
#undef RK_DEFINED_LGPL_SOURCE
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Sanitizer hooks                                                     */

#if defined(__SANITIZE_THREAD__)
#define RK_TSAN 1
#include <sanitizer/tsan_interface.h>
/* The grace-period token (compat/user.c). */
extern char rk_tsan_gp_token;
#define rk_tsan_release(addr) __tsan_release((void *)(addr))
#define rk_tsan_acquire(addr) __tsan_acquire((void *)(addr))
#else
#define RK_TSAN 0
#define rk_tsan_release(addr) do { } while (0)
#define rk_tsan_acquire(addr) do { } while (0)
#endif

/* C++ before C++20 has no designated initializers (a GNU extension
 * there, an error under -pedantic): the core's static initializers
 * (RIDR_INIT, RIDR_PRELOAD_INIT, RIDR_IDA_INIT) are then positional,
 * with the same values.  The kernel side never defines it. */
#if defined(__cplusplus) && __cplusplus < 202002L
#define RK_POSITIONAL_INIT 1
#endif

/* Bits in an unsigned long (the kernel side says why this is not
 * CHAR_BIT there). */
#define RK_BITS_PER_LONG (sizeof(unsigned long) * CHAR_BIT)

/* ------------------------------------------------------------------ */
/* Compiler hints and checks                                           */

#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

#define RK_BUILD_BUG_ON(cond) _Static_assert(!(cond), #cond)

/* Inline whatever the compiler's size estimate says (a hot writer step
 * called from a few places; kernel: __always_inline). */
#define rk_always_inline inline __attribute__((always_inline))
/* Keep out of line (a slow path whose register saves and stack frame
 * must not land on the inline fast path next to it; kernel: noinline). */
#define rk_noinline __attribute__((noinline))
/* The compiler forgets what it knows of @v's value (an empty asm that
 * "changes" it in a register): a flag or-ed from several tests is then
 * computed whole and tested by one branch, instead of the compiler
 * turning each test back into its own branch (kernel:
 * OPTIMIZER_HIDE_VAR). */
#define rk_hide_var(v) __asm__("" : "+r"(v))

#define rk_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* Reports the failed condition and aborts: rk_assert_spin_locked()'s
 * failure here (the kernel's assert_spin_locked() is a BUG_ON; the core
 * has no BUG_ON of its own). */
void rk_bug(const char *file, int line, const char *cond)
	__attribute__((noreturn, cold));
/* Reports once per call site (kernel: WARN_ON_ONCE()). */
void rk_warn(const char *file, int line, const char *cond)
	__attribute__((cold));

#define rk_warn_on_once(cond)                                        \
	({                                                           \
		static bool rk_warned_;                              \
		bool rk_c_ = !!(cond);                               \
		if (unlikely(rk_c_) &&                               \
		    !__atomic_exchange_n(&rk_warned_, true,          \
					 __ATOMIC_RELAXED))          \
			rk_warn(__FILE__, __LINE__, #cond);          \
		unlikely(rk_c_);                                     \
	})

/* A function or object shared between the core's files only: not a
 * dynamic symbol of a shared library (kernel: nothing). */
#define RK_HIDDEN __attribute__((visibility("hidden")))

/* Kernel symbol export; nothing to do in a shared object. */
#define rk_export_symbol(sym)

/* ------------------------------------------------------------------ */
/* Bits                                                                */

/* Index of the lowest set bit; @x must not be 0 (kernel: __ffs64). */
static inline unsigned int rk_ffs64(uint64_t x)
{
	return (unsigned int)__builtin_ctzll(x);
}

/* Number of set bits (kernel: hweight64). */
static inline unsigned int rk_popcount64(uint64_t x)
{
	return (unsigned int)__builtin_popcountll(x);
}

/* ------------------------------------------------------------------ */
/* Single-copy atomic accesses                                         */

/* READ_ONCE/WRITE_ONCE: one untorn access the compiler may not elide,
 * duplicate or reorder with other *_once accesses to the same object;
 * no ordering with other memory (relaxed). */
#define rk_read_once(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define rk_write_once(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

typedef uint64_t rk_aligned_u64 __attribute__((aligned(8)));

/* Alignment of a type or object (kernel: __aligned(n)). */
#define RK_ALIGNED(n) __attribute__((aligned(n)))

/* Sparse's RCU address space (kernel: __rcu); nothing here. */
#define __rk_rcu

/* Not zeroed by the compiler's automatic-variable initialisation
 * (kernel: __uninitialized, for CONFIG_INIT_STACK_ALL_ZERO); userspace
 * builds do not initialise automatic variables: nothing here.
 */
#define __rk_uninitialized

/*
 * Acquire load / release store of a scalar (kernel: smp_load_acquire,
 * smp_store_release).  ridr uses them for a bucket's record count: the
 * writer fills a record, then publishes the count with release; a reader
 * that loads the count with acquire sees the record.  On x86 both are
 * plain moves; on arm64 LDAR/STLR.
 */
#define rk_load_acquire(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define rk_store_release(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

/*
 * Read barrier (kernel: smp_rmb()): loads before it are ordered before
 * loads after it.  An acquire fence in C11 terms (LFENCE is not needed:
 * on x86 a compiler barrier; DMB ISHLD on arm64).  ThreadSanitizer does
 * not model fences (GCC warns, -Wtsan); there every load the fence
 * follows in ridr is an rk_rcu_dereference(), an acquire load in that
 * build, which orders the later loads just as well.
 */
#if defined(__SANITIZE_THREAD__)
#define rk_smp_rmb() __asm__ __volatile__("" ::: "memory")
#else
#define rk_smp_rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#endif

/* Prefetch the cache line at @p for reading (kernel: prefetch()).  A
 * hint: no ordering, no fault on a bad address. */
#define rk_prefetch(p) __builtin_prefetch((p), 0, 3)

/* 64-bit cmpxchg on lockref's lock+count word.  On failure *@oldp gets
 * the current value.  The failure order is always relaxed: a failed
 * attempt publishes and acquires nothing, as in the kernel. */
#define rk_try_cmpxchg64_relaxed(ptr, oldp, new)                     \
	__atomic_compare_exchange_n((ptr), (oldp), (new), false,     \
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED)
#define rk_try_cmpxchg64_release(ptr, oldp, new)                     \
	__atomic_compare_exchange_n((ptr), (oldp), (new), false,     \
				    __ATOMIC_RELEASE, __ATOMIC_RELAXED)
#define rk_try_cmpxchg64(ptr, oldp, new)                             \
	__atomic_compare_exchange_n((ptr), (oldp), (new), false,     \
				    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)

/* lockref's fast path needs a lock-free 64-bit cmpxchg.  Build with
 * -DRK_LOCKREF_NO_CMPXCHG to get the kernel's fallback (every operation
 * takes the spinlock), which the tests also cover. */
#if defined(RK_LOCKREF_NO_CMPXCHG) || !defined(__GCC_HAVE_SYNC_COMPARE_AND_SWAP_8)
#define RK_USE_CMPXCHG_LOCKREF 0
#else
#define RK_USE_CMPXCHG_LOCKREF 1
#endif

/* lockref/lockref.h: inline the fast paths of lockref's operations, with
 * out-of-line slow paths (kernel: the out-of-line lib/lockref.c). */
#define RK_LOCKREF_INLINE 1

/* ------------------------------------------------------------------ */
/* Spinlock                                                            */

/* Busy-wait hint for lock waiters (kernel: cpu_relax()). */
static inline void rk_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/*
 * A 32-bit test-and-test-and-set lock: 0 unlocked, 1 locked.  Being 32
 * bits with a known unlocked value is what lockref needs: the lock and a
 * 32-bit count share one 64-bit word, and rk_spin_value_unlocked() tests
 * a copy of the lock taken inside that word.
 *
 * Unlike a kernel spinlock its holder can be preempted, so a waiter spins
 * a bounded number of times and then yields the CPU: under
 * oversubscription a pure spinner would burn the holder's time slice.
 */
typedef struct {
	uint32_t val;
} rk_spinlock_t;

#define RK_SPINLOCK_INIT { 0 }
#define RK_SPIN_YIELD_AFTER 1024

static inline void rk_spin_lock_init(rk_spinlock_t *lock)
{
	rk_write_once(lock->val, 0);
}

static inline bool rk_spin_trylock(rk_spinlock_t *lock)
{
	uint32_t unlocked = 0;

	/* Acquire: the critical section cannot start before we own the
	 * lock; pairs with the release in rk_spin_unlock(). */
	return rk_read_once(lock->val) == 0 &&
	       __atomic_compare_exchange_n(&lock->val, &unlocked, 1, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* sparse's lock-context annotations (kernel: __acquires()/__releases());
 * nothing to check here. */
#define rk_acquires(lock)
#define rk_releases(lock)

static inline void rk_spin_lock(rk_spinlock_t *lock)
{
	unsigned int spins = 0;

	while (!rk_spin_trylock(lock)) {
		do {
			if (++spins < RK_SPIN_YIELD_AFTER) {
				rk_cpu_relax();
			} else {
				spins = 0;
				sched_yield();
			}
		} while (rk_read_once(lock->val) != 0);
	}
}

static inline void rk_spin_unlock(rk_spinlock_t *lock)
{
	/* Release: every access of the critical section is visible to the
	 * next owner; pairs with the acquire in rk_spin_trylock() and with
	 * lockref's cmpxchg, which reads the lock word inside its 64 bits. */
	__atomic_store_n(&lock->val, 0, __ATOMIC_RELEASE);
}

static inline bool rk_spin_is_locked(rk_spinlock_t *lock)
{
	return rk_read_once(lock->val) != 0;
}

/* Tests a copy of a lock (taken inside lockref's 64-bit word). */
#define rk_spin_value_unlocked(lock) ((lock).val == 0)

/* kernel: assert_spin_locked().  Cheap enough to keep in userspace. */
#define rk_assert_spin_locked(lock)                                  \
	do {                                                         \
		if (unlikely(!rk_spin_is_locked(lock)))              \
			rk_bug(__FILE__, __LINE__,                   \
			       "!rk_spin_is_locked(" #lock ")");     \
	} while (0)

/* ------------------------------------------------------------------ */
/* Memory                                                              */

/* GFP flags: userspace malloc neither sleeps for reclaim nor needs atomic
 * reserves, so both map to the same call; they are kept so the core says
 * what the kernel must do. */
typedef unsigned int rk_gfp_t;
#define RK_GFP_KERNEL 0u
#define RK_GFP_NOWAIT 1u
/* May use the emergency reserves, never sleeps (kernel: GFP_ATOMIC). */
#define RK_GFP_ATOMIC 2u
/* Charge the object to the caller's memory cgroup (kernel:
 * __GFP_ACCOUNT); or-ed into one of the above.  No cgroups here. */
#define RK_GFP_ACCOUNT 4u

/* Zeroed allocation (kernel: kzalloc(size, gfp)); NULL on failure.  At
 * least 16-byte aligned (malloc's guarantee on the 64-bit targets we
 * build for; ridr keeps 3 tag bits in the low bits of its pointers). */
void *rk_zalloc(size_t size, rk_gfp_t gfp);
/* Zeroed allocation aligned to @align (a power of two >= 16). */
void *rk_zalloc_aligned(size_t size, size_t align, rk_gfp_t gfp);
/* rk_zalloc() without the zeroing: the contents are undefined (kernel:
 * kmalloc(size, gfp)), for an object whose user writes every byte it
 * will read. */
void *rk_alloc(size_t size, rk_gfp_t gfp);
/* kernel: kfree(p); @size is the size passed to rk_zalloc().  Called by
 * an RCU callback (liburcu's worker thread), the free() is left to the
 * next rk_zalloc*()/rk_alloc() or rk_call_rcu() of any thread or to
 * rk_rcu_barrier(): user.c says why. */
void rk_free(void *p, size_t size);
/* Userspace only, for tests: whether frees made by RCU callbacks are
 * waiting for the next rk_zalloc*()/rk_alloc(), rk_call_rcu() or
 * rk_rcu_barrier(). */
bool rk_frees_pending(void);

/*
 * A cache of same-size objects (kernel: a kmem_cache, created at boot by
 * an initcall, so a ridr node does not occupy a 1 KiB kmalloc slot).
 * Userspace: plain rk_zalloc()/rk_free() of that size, so the allocator
 * hook below sees every cache allocation too.  RK_DEFINE_CACHE_SIZE()
 * for objects that use fewer bytes than the sizeof of their aligned type
 * (the kernel rounds the size up to the alignment for its stride).
 */
struct rk_cache {
	size_t size;
	size_t align;
};
#define RK_DEFINE_CACHE_SIZE(name, bytes, alignment) \
	static struct rk_cache name = { (bytes), (alignment) }
#define RK_DEFINE_CACHE(name, type) \
	RK_DEFINE_CACHE_SIZE(name, sizeof(type), _Alignof(type))

static inline void *rk_cache_zalloc(struct rk_cache *c, rk_gfp_t gfp)
{
	return c->align > 16 ? rk_zalloc_aligned(c->size, c->align, gfp)
			     : rk_zalloc(c->size, gfp);
}

static inline void rk_cache_free(struct rk_cache *c, void *p)
{
	rk_free(p, c->size);
}

/*
 * Test and accounting hook: route every rk_zalloc()/rk_free() through
 * @a (NULL restores calloc/free).  @alloc must return memory aligned to
 * @align (16 or more, a power of two); it need not zero it.  Install it
 * before other threads use the library; the pointer is read with an
 * acquire load.
 */
struct rk_allocator {
	void *(*alloc)(size_t size, size_t align, void *ctx);
	void (*free)(void *p, size_t size, void *ctx);
	void *ctx;
};
void rk_set_allocator(const struct rk_allocator *a);

/* ------------------------------------------------------------------ */
/* RCU                                                                 */

/* This world has liburcu flavors; the kernel side defines 0 and the
 * kernel generator drops "#if RK_HAVE_FLAVORS" blocks (userspace-only
 * API) from what it writes into a tree. */
#define RK_HAVE_FLAVORS 1

/* A liburcu flavor (memb, mb, qsbr, bp, signal); kernel: unused. */
typedef struct rcu_flavor_struct rk_rcu_flavor_t;
#define RK_RCU_DEFAULT_FLAVOR (&urcu_memb_flavor)
extern const struct rcu_flavor_struct urcu_mb_flavor;
extern const struct rcu_flavor_struct urcu_qsbr_flavor;
extern const struct rcu_flavor_struct urcu_bp_flavor;
#define RK_RCU_FLAVOR_MEMB (&urcu_memb_flavor)
#define RK_RCU_FLAVOR_MB (&urcu_mb_flavor)
#define RK_RCU_FLAVOR_QSBR (&urcu_qsbr_flavor)
#define RK_RCU_FLAVOR_BP (&urcu_bp_flavor)

/*
 * Publication is a C11 release store in every build: it orders the
 * initialisation of what @v points to before the store, which is exactly
 * what the readers' dependent loads need.  liburcu's
 * rcu_assign_pointer() issues cmm_wmb() instead, an "sfence" on x86 that
 * only matters for non-temporal stores; the release store is a plain mov
 * there (same guarantee, measured ~15% of a remove+alloc pair).
 */
#define rk_rcu_assign_pointer(p, v) \
	__atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
#if RK_TSAN
/* Acquire: TSan understands it (GCC promotes consume to acquire). */
#define rk_rcu_dereference(p) __atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#else
/* liburcu's: a volatile load, plus read_barrier_depends on Alpha. */
#define rk_rcu_dereference(p) _rcu_dereference(p)
#endif

/* Writer-side read of an RCU pointer, with the writer lock held (@c is
 * the lockdep condition in the kernel; userspace compiles it, as the
 * operand of a sizeof, and never evaluates it). */
#define rk_rcu_dereference_protected(p, c) ((void)sizeof(c), rk_read_once(p))
/* Store with no ordering: NULL, or a pointer readers cannot reach yet. */
#define rk_rcu_init_pointer(p, v) rk_write_once(p, v)

/*
 * Deferred-free head.  Normally liburcu's own struct rcu_head (16 bytes,
 * as the kernel's), so callbacks are called by liburcu directly.  Under
 * ThreadSanitizer a trampoline in user.c calls @func after annotating the
 * grace period, so the head carries @func as well.
 */
#if RK_TSAN
struct rk_rcu_head {
	struct rcu_head head;
	void (*func)(struct rk_rcu_head *head);
};
#else
#define rk_rcu_head rcu_head
#endif

/* Run @func(@head) after a grace period of @flavor (kernel: call_rcu).
 * Needs the calling thread registered with @flavor, except for bp. */
void rk_call_rcu(const rk_rcu_flavor_t *flavor, struct rk_rcu_head *head,
		 void (*func)(struct rk_rcu_head *head));
/* Wait for a grace period / for every queued callback; rk_rcu_barrier()
 * then also frees what the callbacks freed with rk_free(). */
void rk_synchronize_rcu(const rk_rcu_flavor_t *flavor);
void rk_rcu_barrier(const rk_rcu_flavor_t *flavor);

/* Read-side critical section of the default flavor (memb), inlined. */
static inline void rk_rcu_read_lock(void)
{
	urcu_memb_read_lock();
}

static inline void rk_rcu_read_unlock(void)
{
	/* TSan model: this reader's accesses happen before anything that
	 * runs after the next grace period. */
	rk_tsan_release(&rk_tsan_gp_token);
	urcu_memb_read_unlock();
}

/* Read-side critical section of any flavor (one indirect call). */
static inline void rk_rcu_read_lock_flavor(const rk_rcu_flavor_t *flavor)
{
	flavor->read_lock();
}

static inline void rk_rcu_read_unlock_flavor(const rk_rcu_flavor_t *flavor)
{
	rk_tsan_release(&rk_tsan_gp_token);
	flavor->read_unlock();
}

/* qsbr: announce a quiescent state (other flavors: no-op in effect). */
static inline void rk_rcu_quiescent_state(const rk_rcu_flavor_t *flavor)
{
	rk_tsan_release(&rk_tsan_gp_token);
	flavor->read_quiescent_state();
}

static inline void rk_rcu_register_thread(const rk_rcu_flavor_t *flavor)
{
	flavor->register_thread();
}

static inline void rk_rcu_unregister_thread(const rk_rcu_flavor_t *flavor)
{
	rk_tsan_release(&rk_tsan_gp_token);
	flavor->unregister_thread();
}

/* qsbr: an offline thread is never waited for (kernel: no equivalent). */
static inline void rk_rcu_thread_offline(const rk_rcu_flavor_t *flavor)
{
	rk_tsan_release(&rk_tsan_gp_token);
	flavor->thread_offline();
}

static inline void rk_rcu_thread_online(const rk_rcu_flavor_t *flavor)
{
	flavor->thread_online();
}

#ifdef __cplusplus
}
#endif

#endif /* RK_COMPAT_USER_H */
