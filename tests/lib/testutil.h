/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * testutil.h - helpers shared by the Criterion suites: thread groups with a
 * start barrier, a seeded PRNG, stress sizes scaled for sanitizers, and a
 * counting / failure-injecting allocator hook for rk_zalloc().
 */
#ifndef RK_TESTUTIL_H
#define RK_TESTUTIL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compat/compat.h"

/* Iteration counts: full size normally, divided under ThreadSanitizer
 * (about 10-20x slower) so the suite stays inside CI's budget. */
#if RK_TSAN
#define RK_STRESS_DIV 10
#else
#define RK_STRESS_DIV 1
#endif
#define RK_STRESS(n) ((n) / RK_STRESS_DIV)

/* xorshift64*: fixed seeds give reproducible sequences. */
struct rk_prng {
	uint64_t s;
};

static inline void rk_prng_seed(struct rk_prng *r, uint64_t seed)
{
	r->s = seed ? seed : 0x9e3779b97f4a7c15ull;
}

static inline uint64_t rk_prng_next(struct rk_prng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 2685821657736338717ull;
}

/* Uniform in [0, n) (n > 0); the tiny modulo bias is irrelevant here. */
static inline uint64_t rk_prng_below(struct rk_prng *r, uint64_t n)
{
	return rk_prng_next(r) % n;
}

/* Run @fn(@arg + i * @stride) on @n threads released together. */
struct rk_threads {
	int n;
	pthread_t tid[64];
};

void rk_threads_start(struct rk_threads *t, int n, void *(*fn)(void *),
		      void *args, size_t stride);
void rk_threads_join(struct rk_threads *t);

/* Spin until every participant arrived (reusable once). */
struct rk_start {
	int waiting;
};
void rk_start_wait(struct rk_start *s, int participants);

/*
 * Counting allocator: live bytes and objects, and failure injection.
 * fail_at = k > 0 makes the k-th allocation from now fail (once);
 * fail_from = k > 0 makes the k-th allocation from now and every later
 * one fail; fail_all makes every allocation fail; fail_above = k > 0
 * makes every allocation of more than k bytes fail.
 */
struct rk_counting_alloc {
	long live_bytes;
	long live_objects;
	long total_allocs;
	long fail_at;
	long fail_from;
	/* Allocations of exactly watch_size bytes are also counted here. */
	size_t watch_size;
	long watch_allocs;
	size_t fail_above;
	bool fail_all;
	struct rk_allocator hook;
};

void rk_counting_alloc_install(struct rk_counting_alloc *c);
void rk_counting_alloc_remove(struct rk_counting_alloc *c);
long rk_counting_alloc_live_bytes(struct rk_counting_alloc *c);
long rk_counting_alloc_live_objects(struct rk_counting_alloc *c);

#endif /* RK_TESTUTIL_H */
