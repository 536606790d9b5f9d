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
	((RIDR_MAX_LEVELS + 1 + RIDR_PRELOAD_MAX) * sizeof(struct ridr_node))

/* Entries are never dereferenced by ridr: tag small integers as pointers. */
#define P(n) ((void *)(uintptr_t)(0x1000 + (n) * 8))

#endif /* RK_RIDR_FIXTURE_H */
