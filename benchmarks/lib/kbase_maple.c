// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kbase_maple.c - Linux 6.1's maple tree (lib/maple_tree.c from the
 * tarball, included here as the harness's own maple.c does, without its
 * test suite and without CONFIG_DEBUG_MAPLE_TREE), plus a correct
 * lowest-free allocation for benchmarks/lib/kbase.h.
 *
 * 6.1's mtree_alloc_range() is broken (on an empty tree it stores over
 * the whole window and returns an error; fixed upstream in 2023).  The
 * fix, used here: under the tree lock, find the lowest empty area with
 * mas_empty_area(), mas_insert() the entry there, and if mas_nomem() had
 * to drop the lock to allocate nodes, search again.
 */
#include "test.h"	/* the harness's prelude, as in its maple.c */

/* The 6.1 harness headers lack the kernel's fallthrough. */
#ifndef fallthrough
#define fallthrough __attribute__((__fallthrough__))
#endif

#include "lib/maple_tree.c"

struct kmem_cache *kb_maple_cache(void);
int kb_maple_alloc(struct maple_tree *mt, void *p, unsigned long min,
		   unsigned long max, unsigned long *idp);
int kb_maple_alloc_cyclic(struct maple_tree *mt, void *p, unsigned long min,
			  unsigned long max, unsigned long *next,
			  unsigned long *idp);

struct kmem_cache *kb_maple_cache(void)
{
	return maple_node_cache;
}

/* Caller holds mtree_lock(mt).  One free id in [min, max]. */
static int kb_maple_alloc_locked(struct maple_tree *mt, void *p,
				 unsigned long min, unsigned long max,
				 unsigned long *idp)
{
	MA_STATE(mas, mt, 0, 0);
	int ret;

retry:
	if (min == max) {	/* mas_empty_area() wants min < max */
		mas_set(&mas, min);	/* mas_insert() says -EEXIST if taken */
	} else {
		ret = mas_empty_area(&mas, min, max, 1);
		if (ret)
			return ret == -EBUSY ? -ENOSPC : ret;
	}
	mas_insert(&mas, p);
	/* mas_nomem() may drop the lock to allocate: the area found may be
	 * gone, so look again. */
	if (mas_nomem(&mas, GFP_KERNEL))
		goto retry;
	if (mas_is_err(&mas)) {
		ret = xa_err(mas.node);
		return ret == -EEXIST ? -ENOSPC : ret;
	}
	*idp = mas.index;
	return 0;
}

int kb_maple_alloc(struct maple_tree *mt, void *p, unsigned long min,
		   unsigned long max, unsigned long *idp)
{
	int ret;

	mtree_lock(mt);
	ret = kb_maple_alloc_locked(mt, p, min, max, idp);
	mtree_unlock(mt);
	return ret;
}

/* As upstream's later mas_alloc_cyclic(): from the cursor, then from
 * @min; the cursor moves past the id handed out. */
int kb_maple_alloc_cyclic(struct maple_tree *mt, void *p, unsigned long min,
			  unsigned long max, unsigned long *next,
			  unsigned long *idp)
{
	unsigned long from = *next < min || *next > max ? min : *next;
	int ret;

	mtree_lock(mt);
	ret = kb_maple_alloc_locked(mt, p, from, max, idp);
	if (ret == -ENOSPC && from > min)
		ret = kb_maple_alloc_locked(mt, p, min, max, idp);
	if (!ret)
		*next = *idp == max ? min : *idp + 1;
	mtree_unlock(mt);
	return ret;
}
