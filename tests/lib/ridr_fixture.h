/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ridr_fixture.h - per-test fixture for ridr suites: registers the test
 * thread with the default RCU flavor, routes every ridr allocation through
 * the counting allocator, and at the end waits for all deferred frees and
 * checks that no node leaked (every test destroys or empties its maps).
 */
#ifndef RK_RIDR_FIXTURE_H
#define RK_RIDR_FIXTURE_H

#include <criterion/criterion.h>
#include <string.h>

#include "ridr/ridr.h"
#include "tests/lib/testutil.h"

static struct rk_counting_alloc fx_alloc;

static inline void fx_setup(void)
{
	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	rk_counting_alloc_install(&fx_alloc);
}

/* Wait for every queued node free, then return live node objects. */
static inline long fx_live_after_grace(void)
{
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	return rk_counting_alloc_live_objects(&fx_alloc);
}

static inline void fx_teardown(void)
{
	long live = fx_live_after_grace();

	rk_counting_alloc_remove(&fx_alloc);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	cr_expect_eq(live, 0, "%ld ridr allocations still live at the end of "
		     "the test (leak)", live);
}

/* What an emptied map may keep (ridr.h, "Memory"): its root, one emptied
 * object with the full nodes above it, and its spares. */
#define IDLE_BOUND                                                   \
	((RIDR_MAX_LEVELS + 1 + RIDR_PRELOAD_MAX) * RIDR_NODE_BYTES)

/* Entries are never dereferenced by ridr: tag small integers as pointers. */
#define P(n) ((void *)(uintptr_t)(0x1000 + (n) * 8))

static inline unsigned long must_alloc(struct ridr *m, void *p, unsigned long min,
				unsigned long max)
{
	unsigned long id = 0xdead;
	int ret = ridr_alloc(m, p, min, max, &id);

	cr_assert_eq(ret, 0, "ridr_alloc(%lu, %lu) failed: %d", min, max, ret);
	return id;
}

/* A full description of the map as seen by a reader: used to prove that
 * a failed call left everything unchanged. */
struct snap {
	unsigned long count, cursor, n;
	size_t memory;
	unsigned long ids[128];
	void *ptrs[128];
};

static inline void take_snap(struct ridr *m, struct snap *s)
{
	unsigned long id;
	void *e;

	memset(s, 0, sizeof(*s));
	s->count = ridr_count(m);
	s->cursor = ridr_get_cursor(m);
	s->memory = ridr_memory(m);
	rk_rcu_read_lock();
	ridr_for_each(m, e, id) {
		cr_assert_lt(s->n, 128);
		s->ids[s->n] = id;
		s->ptrs[s->n++] = e;
	}
	rk_rcu_read_unlock();
}

static inline void expect_same(struct ridr *m, const struct snap *before,
			const char *what)
{
	struct snap after;

	take_snap(m, &after);
	cr_expect_eq(after.count, before->count, "%s changed the count", what);
	cr_expect_eq(after.cursor, before->cursor, "%s moved the cursor", what);
	cr_expect_eq(after.memory, before->memory, "%s changed node memory",
		     what);
	cr_expect_eq(after.n, before->n, "%s changed the entries", what);
	for (unsigned long i = 0; i < after.n && i < before->n; i++) {
		cr_expect_eq(after.ids[i], before->ids[i], "%s changed ids", what);
		cr_expect_eq(after.ptrs[i], before->ptrs[i], "%s changed entries",
			     what);
	}
}

#endif /* RK_RIDR_FIXTURE_H */
