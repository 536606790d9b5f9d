// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * will-it-scale fstat2 / open3 analogs for lockref (Linux 2023: removing
 * cpu_relax() from lockref's cmpxchg loop gave +18% .. +423%, fstat2 at 96
 * threads being the largest).
 *
 *   fstat2: N threads take and drop a reference on ONE shared lockref
 *           (fstat() on one file: dget/dput on the same dentry).
 *   open3:  the same plus a short section under the lockref's lock per
 *           operation (open()/close() touching the dentry under d_lock),
 *           which forces the fast path to meet a held lock.
 *
 * Variants, side by side in one run:
 *   spinlock_int   spinlock + int, every operation locked (pre-2013 dcache)
 *   lockref_pause  lockref with cpu_relax() in the cmpxchg loop (2013-2023)
 *   lockref        ours: no pause, bounded retries (lockref/lockref.c)
 *   atomic_faa     fetch_add/fetch_sub on one counter: the physical limit
 *                  of one contended cache line (no lock semantics at all)
 *   cas_count      a load and a cmpxchg loop per get and per put on one
 *                  counter: lockref's fast path without its tests (the
 *                  floor of any lock-free lockref at one thread)
 *
 * Usage: lockref_fstat2_bench {fstat2|open3} [bench options]
 */
#include <stdio.h>
#include <string.h>

#include "benchmarks/lib/bench.h"
#include "compat/compat.h"
#include "lockref/lockref.h"

/* One shared object per run, alone on its cache line. */
static struct {
	struct lockref ref;
	int field;
} __attribute__((aligned(64))) shared;

static struct {
	rk_spinlock_t lock;
	int count;
	int field;
} __attribute__((aligned(64))) locked;

static uint64_t faa_count __attribute__((aligned(64)));
static uint64_t cas_count __attribute__((aligned(64)));

static bool open3;	/* add the lock-held section */

static void reset(int nthreads)
{
	(void)nthreads;
	lockref_init(&shared.ref, 1);
	shared.field = 0;
	rk_spin_lock_init(&locked.lock);
	locked.count = 1;
	locked.field = 0;
	__atomic_store_n(&faa_count, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&cas_count, 1, __ATOMIC_RELAXED);
}

static inline void short_section_lockref(void)
{
	lockref_lock(&shared.ref);
	shared.field++;
	lockref_unlock(&shared.ref);
}

/* ---- spinlock + int ---- */
static uint64_t run_spinlock_int(int tid, int n, const int *stop)
{
	uint64_t ops = 0;

	while (!bench_stopped(stop)) {
		rk_spin_lock(&locked.lock);
		locked.count++;
		rk_spin_unlock(&locked.lock);
		if (open3) {
			rk_spin_lock(&locked.lock);
			locked.field++;
			rk_spin_unlock(&locked.lock);
		}
		rk_spin_lock(&locked.lock);
		locked.count--;
		rk_spin_unlock(&locked.lock);
		ops++;
	}
	return ops;
}

/* ---- lockref with a pause in the loop: Linux 3.12 .. 6.5 ---- */
#if RK_USE_CMPXCHG_LOCKREF
#define PAUSE_LOOP(CODE, SUCCESS)                                            \
	do {                                                                 \
		int retry = 100;                                             \
		struct lockref old, new;                                     \
		old.lock_count = rk_read_once(l->lock_count);                \
		while (rk_spin_value_unlocked(old.lock)) {                   \
			new = old;                                           \
			CODE;                                                \
			if (rk_try_cmpxchg64_relaxed(&l->lock_count,         \
						     &old.lock_count,        \
						     new.lock_count))        \
				SUCCESS;                                     \
			if (!--retry)                                        \
				break;                                       \
			rk_cpu_relax();	/* the 2023 fix removed this */      \
		}                                                            \
	} while (0)
#else
#define PAUSE_LOOP(CODE, SUCCESS) do { } while (0)
#endif

static int pause_get_not_dead(struct lockref *l)
{
	int ret;

	PAUSE_LOOP(if (old.count < 0) return 0; new.count++, return 1);
	lockref_lock(l);
	ret = rk_read_once(l->count) >= 0;
	if (ret)
		rk_write_once(l->count, rk_read_once(l->count) + 1);
	lockref_unlock(l);
	return ret;
}

static void pause_put(struct lockref *l)
{
	PAUSE_LOOP(if (old.count <= 1) break; new.count--, return);
	lockref_lock(l);
	rk_write_once(l->count, rk_read_once(l->count) - 1);
	lockref_unlock(l);
}

static uint64_t run_lockref_pause(int tid, int n, const int *stop)
{
	uint64_t ops = 0;

	while (!bench_stopped(stop)) {
		pause_get_not_dead(&shared.ref);
		if (open3)
			short_section_lockref();
		pause_put(&shared.ref);
		ops++;
	}
	return ops;
}

/* ---- ours ---- */
static uint64_t run_lockref(int tid, int n, const int *stop)
{
	uint64_t ops = 0;

	while (!bench_stopped(stop)) {
		lockref_get_not_dead(&shared.ref);
		if (open3)
			short_section_lockref();
		/* dput()'s shape: lockless put, locked fallback. */
		if (lockref_put_return(&shared.ref) < 0 &&
		    !lockref_put_or_lock(&shared.ref)) {
			/* never reached: our reference + the base one */
			rk_write_once(shared.ref.count, 0);
			lockref_unlock(&shared.ref);
		}
		ops++;
	}
	return ops;
}

/*
 * ---- load + cmpxchg: lockref's own floor ----
 * What a lockref get or put is once its tests are taken away: one load of
 * the word, one cmpxchg of the new value (retried with the value a failed
 * one loaded), with lockref's orderings (relaxed get, fully ordered put
 * as lockref_put_return()).  Against spinlock_int at one thread it shows
 * what the lock-free shape itself costs on this CPU: each load reads the
 * word the previous operation's locked cmpxchg just wrote, and waits for
 * it, where the spinlock's load of its lock word reads the plain release
 * store of the unlock (docs/lockref.md, "One thread").
 */
static uint64_t run_cas_count(int tid, int n, const int *stop)
{
	uint64_t ops = 0;

	while (!bench_stopped(stop)) {
		uint64_t old = rk_read_once(cas_count);

		while (!rk_try_cmpxchg64_relaxed(&cas_count, &old, old + 1))
			;
		if (open3)
			short_section_lockref();
		old = rk_read_once(cas_count);
		while (!rk_try_cmpxchg64(&cas_count, &old, old - 1))
			;
		ops++;
	}
	return ops;
}

/* ---- atomic fetch_add: the limit ---- */
static uint64_t run_atomic_faa(int tid, int n, const int *stop)
{
	uint64_t ops = 0;

	while (!bench_stopped(stop)) {
		__atomic_fetch_add(&faa_count, 1, __ATOMIC_RELAXED);
		if (open3)
			short_section_lockref();
		__atomic_fetch_sub(&faa_count, 1, __ATOMIC_RELEASE);
		ops++;
	}
	return ops;
}

static void check(void)
{
	/* Every variant returns the count to its start: a cheap sanity
	 * check that the figures came from correct code. */
	if (shared.ref.count != 1 || locked.count != 1 ||
	    __atomic_load_n(&faa_count, __ATOMIC_RELAXED) != 1 ||
	    __atomic_load_n(&cas_count, __ATOMIC_RELAXED) != 1) {
		fprintf(stderr,
			"lockref bench: count mismatch (%d %d %lu %lu)\n",
			shared.ref.count, locked.count,
			(unsigned long)faa_count, (unsigned long)cas_count);
		__builtin_trap();
	}
}

static const struct bench_variant variants[] = {
	{ "spinlock_int", "spinlock + int, every op locked", reset, check,
	  run_spinlock_int, NULL },
	{ "lockref_pause", "lockref, cpu_relax() in the cmpxchg loop", reset,
	  check, run_lockref_pause, NULL },
	{ "lockref", "ours: no pause, 100 retries", reset, check, run_lockref, NULL },
	{ "atomic_faa", "fetch_add/sub on one line (limit)", reset, check,
	  run_atomic_faa, NULL },
	{ "cas_count", "load + cmpxchg on one word (lockref's floor)", reset,
	  check, run_cas_count, NULL },
};

int main(int argc, char **argv)
{
	struct bench_config cfg = {
		.variants = variants,
		.nvariants = 5,
		.baseline = 0,
		.ours = 2,
		.mirrors = "Linux 2023 lockref: no cpu_relax() in the cmpxchg "
			   "loop, will-it-scale fstat2 +18%..+423%",
	};

	if (argc < 2 || (strcmp(argv[1], "fstat2") && strcmp(argv[1], "open3"))) {
		fprintf(stderr, "usage: %s {fstat2|open3} [options]\n", argv[0]);
		return 2;
	}
	open3 = !strcmp(argv[1], "open3");
	cfg.name = open3 ? "lockref_open3" : "lockref_fstat2";
	cfg.title = open3 ? "get + short lock-held section + put on one "
			    "lockref (ops/s)"
			  : "get/put on one shared lockref (ops/s)";
	bench_parse_args(&cfg, argc - 1, argv + 1);
	return bench_run(&cfg);
}
