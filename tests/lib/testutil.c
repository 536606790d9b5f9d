// SPDX-License-Identifier: LGPL-2.1-or-later
#include "tests/lib/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rk_threads_start(struct rk_threads *t, int n, void *(*fn)(void *),
		      void *args, size_t stride)
{
	if (n > (int)(sizeof(t->tid) / sizeof(t->tid[0]))) {
		fprintf(stderr, "rk_threads_start: %d threads is too many\n", n);
		abort();
	}
	t->n = n;
	for (int i = 0; i < n; i++) {
		int err = pthread_create(&t->tid[i], NULL, fn,
					 (char *)args + (size_t)i * stride);
		if (err) {
			fprintf(stderr, "pthread_create: %s\n", strerror(err));
			abort();
		}
	}
}

void rk_threads_join(struct rk_threads *t)
{
	for (int i = 0; i < t->n; i++)
		pthread_join(t->tid[i], NULL);
}

void rk_start_wait(struct rk_start *s, int participants)
{
	__atomic_add_fetch(&s->waiting, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&s->waiting, __ATOMIC_ACQUIRE) < participants)
		sched_yield();
}

static void *counting_alloc(size_t size, size_t align, void *ctx)
{
	struct rk_counting_alloc *c = ctx;
	void *p;

	__atomic_add_fetch(&c->total_allocs, 1, __ATOMIC_RELAXED);
	if (size == c->watch_size)
		__atomic_add_fetch(&c->watch_allocs, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&c->fail_all, __ATOMIC_RELAXED))
		return NULL;
	if (c->fail_above && size > c->fail_above)
		return NULL;
	if (__atomic_load_n(&c->fail_from, __ATOMIC_RELAXED) > 0 &&
	    __atomic_sub_fetch(&c->fail_from, 1, __ATOMIC_RELAXED) == 0) {
		/* Stays at 0 with fail_all set from now on. */
		__atomic_store_n(&c->fail_all, true, __ATOMIC_RELAXED);
		return NULL;
	}
	if (__atomic_load_n(&c->fail_at, __ATOMIC_RELAXED) > 0 &&
	    __atomic_sub_fetch(&c->fail_at, 1, __ATOMIC_RELAXED) == 0)
		return NULL;
	if (posix_memalign(&p, align, size))
		p = NULL;
	if (p) {
		__atomic_add_fetch(&c->live_bytes, (long)size, __ATOMIC_RELAXED);
		__atomic_add_fetch(&c->live_objects, 1, __ATOMIC_RELAXED);
	}
	return p;
}

static void counting_free(void *p, size_t size, void *ctx)
{
	struct rk_counting_alloc *c = ctx;

	__atomic_sub_fetch(&c->live_bytes, (long)size, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&c->live_objects, 1, __ATOMIC_RELAXED);
	free(p);
}

void rk_counting_alloc_install(struct rk_counting_alloc *c)
{
	memset(c, 0, sizeof(*c));
	c->hook.alloc = counting_alloc;
	c->hook.free = counting_free;
	c->hook.ctx = c;
	rk_set_allocator(&c->hook);
}

void rk_counting_alloc_remove(struct rk_counting_alloc *c)
{
	(void)c;
	rk_set_allocator(NULL);
}

long rk_counting_alloc_live_bytes(struct rk_counting_alloc *c)
{
	return __atomic_load_n(&c->live_bytes, __ATOMIC_RELAXED);
}

long rk_counting_alloc_live_objects(struct rk_counting_alloc *c)
{
	return __atomic_load_n(&c->live_objects, __ATOMIC_RELAXED);
}
