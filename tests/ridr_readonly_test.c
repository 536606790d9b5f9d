// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Readers store nothing to shared memory and perform no atomic
 * read-modify-write: the map and every node live in an arena that is
 * made read-only (mprotect) before ridr_find(), ridr_find_bulk(),
 * ridr_get_next(), ridr_for_each(), ridr_is_empty() and ridr_count() run
 * over every id.  Any store, or any atomic RMW (which needs write access
 * even when it fails), would fault and fail the test.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

#include "ridr/ridr.h"
#include "tests/lib/testutil.h"

#define ARENA (64UL << 20)

/* This test relies on the kernel's SIGSEGV: ask the sanitizers (when
 * present) not to turn it into their own report and exit code.  The
 * options given in the environment still apply; these only add a key. */
const char *__asan_default_options(void);
const char *__tsan_default_options(void);
const char *__asan_default_options(void)
{
	return "handle_segv=0";
}

const char *__tsan_default_options(void)
{
	return "handle_segv=0";
}

static char *arena;
static size_t used;

static void *arena_alloc(size_t size, size_t align, void *ctx)
{
	void *p;

	(void)ctx;
	(void)align;	/* every block is 64-byte aligned, the most ridr asks */
	size = (size + 63) & ~(size_t)63;
	if (used + size > ARENA)
		return NULL;
	p = arena + used;
	used += size;
	return p;
}

static void arena_free(void *p, size_t size, void *ctx)
{
	/* Bump allocator: nodes are simply abandoned with the arena. */
	(void)p;
	(void)size;
	(void)ctx;
}

static const struct rk_allocator arena_hook = {
	.alloc = arena_alloc,
	.free = arena_free,
};

Test(ridr_readonly, readers_never_write_shared_memory, .timeout = 60)
{
	struct ridr *m;
	unsigned long id, n = 0, want = 0;
	void *e;

	arena = mmap(NULL, ARENA, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(arena, MAP_FAILED);
	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	rk_set_allocator(&arena_hook);
	m = arena_alloc(sizeof(*m), 64, NULL);
	ridr_init(m);
	for (unsigned long i = 0; i < 10000; i++)
		cr_assert_eq(ridr_alloc(m, (void *)(i + 1), 0, ULONG_MAX, &id), 0);
	for (unsigned long i = 0; i < 100; i++) {
		unsigned long at = (i + 1) * 0x0123456789abcUL;

		cr_assert_eq(ridr_alloc(m, (void *)at, at, ULONG_MAX, &id), 0);
	}
	cr_assert_eq(ridr_alloc(m, NULL, 20000, 20000, &id), 0);	/* reserved */
	want = ridr_count(m) - 1;

	cr_assert_eq(mprotect(arena, ARENA, PROT_READ), 0);
	rk_rcu_read_lock();
	for (unsigned long i = 0; i < 10000; i++)
		cr_assert_eq(ridr_find(m, i), (void *)(i + 1));
	cr_assert_null(ridr_find(m, 20000));
	cr_assert_null(ridr_find(m, ULONG_MAX));
	/* In batches of 37 (groups of 16 and a partial one), the far ids
	 * (buckets) and the reservation among them; out[] is not shared.
	 */
	for (unsigned long i = 0; i < 10000; i += 37) {
		unsigned long ids[37];
		void *out[37];
		int found = 0;

		for (unsigned long k = 0; k < 37; k++)
			ids[k] = k == 5 ? (k + 1) * 0x0123456789abcUL :
				 k == 9 ? 20000 : (i + k) % 10000;
		cr_assert_eq(ridr_find_bulk(m, ids, 37, out), 36,
			     "all but the reservation found");
		for (unsigned long k = 0; k < 37; k++)
			found += out[k] == (k == 5 ? (void *)ids[5] :
					    k == 9 ? NULL :
					    (void *)(ids[k] + 1));
		cr_assert_eq(found, 37, "batch at %lu: wrong entries", i);
	}
	ridr_for_each(m, e, id)
		n++;
	id = 10000;
	cr_assert_not_null(ridr_get_next(m, &id));
	cr_assert_eq(id, 0x0123456789abcUL);
	cr_assert(!ridr_is_empty(m));
	cr_assert_eq(ridr_count(m), want + 1);
	rk_rcu_read_unlock();
	cr_assert_eq(mprotect(arena, ARENA, PROT_READ | PROT_WRITE), 0);

	cr_expect_eq(n, want, "iteration saw %lu entries, expected %lu", n,
		     want);
	ridr_destroy(m);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	rk_set_allocator(NULL);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	munmap(arena, ARENA);
}

/* The harness itself must catch a write: a store into the protected
 * arena dies with SIGSEGV. */
Test(ridr_readonly, a_store_into_the_arena_faults, .signal = SIGSEGV)
{
	arena = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(arena, MAP_FAILED);
	*(volatile char *)arena = 1;
}
