// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kbase.c - Linux 6.1's IDR and XArray behind benchmarks/lib/kbase.h.
 * Compiled against the tools/testing/radix-tree harness headers from the
 * tarball (third_party/linux_6_1/); the maple tree part lives in
 * kbase_maple.c because it needs lib/maple_tree.c's static functions.
 * See kbase.h for what each operation does and why.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <time.h>

#include <linux/idr.h>
#include <linux/maple_tree.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "benchmarks/lib/kbase.h"

/* tools/testing/radix-tree/linux.c and lib/radix-tree.c. */
extern struct kmem_cache *radix_tree_node_cachep;
void radix_tree_init(void);
void maple_tree_init(void);
unsigned long kmem_cache_get_alloc(struct kmem_cache *cachep);
unsigned long kmem_cache_nr_tallocated(struct kmem_cache *cachep);
void kmem_cache_set_non_kernel(struct kmem_cache *cachep, unsigned int val);

/* linux.c's kmem_cache_free() keeps a freed object unless 11 are kept. */
#define KB_FREELIST 11

/* kbase_maple.c */
struct kmem_cache *kb_maple_cache(void);
int kb_maple_alloc(struct maple_tree *mt, void *p, unsigned long min,
		   unsigned long max, unsigned long *idp);
int kb_maple_alloc_cyclic(struct maple_tree *mt, void *p, unsigned long min,
			  unsigned long max, unsigned long *next,
			  unsigned long *idp);

struct kb_map {
	enum kb_kind kind;
	union {
		struct {
			struct idr idr;
			spinlock_t lock;	/* the IDR user's lock */
		};
		struct {
			struct xarray xa;
			u32 xa_next;		/* xa_alloc_cyclic() cursor */
		};
		struct {
			struct maple_tree mt;
			unsigned long mt_next;	/* cyclic cursor */
		};
	};
};

void kb_allow_nowait(void)
{
	kmem_cache_set_non_kernel(radix_tree_node_cachep, UINT_MAX);
	kmem_cache_set_non_kernel(kb_maple_cache(), UINT_MAX);
}

void kb_init(void)
{
	radix_tree_init();
	maple_tree_init();
	kb_allow_nowait();
}

const char *kb_name(enum kb_kind kind)
{
	static const char *const names[] = { "idr", "xarray", "maple" };

	return kind < KB_NKINDS ? names[kind] : "?";
}

struct kb_map *kb_new(enum kb_kind kind)
{
	struct kb_map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->kind = kind;
	switch (kind) {
	case KB_IDR:
		idr_init(&m->idr);
		spin_lock_init(&m->lock);
		break;
	case KB_XA:
		xa_init_flags(&m->xa, XA_FLAGS_ALLOC);
		break;
	case KB_MAPLE:
		mt_init_flags(&m->mt, MT_FLAGS_ALLOC_RANGE | MT_FLAGS_USE_RCU);
		break;
	default:
		free(m);
		return NULL;
	}
	return m;
}

void kb_destroy(struct kb_map *m)
{
	switch (m->kind) {
	case KB_IDR:
		idr_destroy(&m->idr);
		break;
	case KB_XA:
		xa_destroy(&m->xa);
		break;
	case KB_MAPLE:
		mtree_destroy(&m->mt);
		break;
	default:
		break;
	}
	free(m);
}

/* idr_alloc*() take int bounds, end exclusive, 0 meaning INT_MAX + 1. */
static int idr_end(unsigned long max)
{
	return max >= INT_MAX ? 0 : (int)max + 1;
}

static int kb_idr_alloc(struct kb_map *m, void *p, unsigned long min,
			unsigned long max, unsigned long *idp, bool cyclic)
{
	int id;

	if (min > INT_MAX)
		return -ENOSPC;
	idr_preload(GFP_KERNEL);
	spin_lock(&m->lock);
	if (cyclic)
		id = idr_alloc_cyclic(&m->idr, p, (int)min, idr_end(max),
				      GFP_NOWAIT);
	else
		id = idr_alloc(&m->idr, p, (int)min, idr_end(max), GFP_NOWAIT);
	spin_unlock(&m->lock);
	idr_preload_end();
	if (id < 0)
		return id;
	*idp = (unsigned long)id;
	return 0;
}

int kb_alloc(struct kb_map *m, void *p, unsigned long min, unsigned long max,
	     unsigned long *idp)
{
	u32 id;
	int ret;

	switch (m->kind) {
	case KB_IDR:
		return kb_idr_alloc(m, p, min, max, idp, false);
	case KB_XA:
		if (min > UINT_MAX)
			return -ENOSPC;
		ret = xa_alloc(&m->xa, &id, p,
			       XA_LIMIT(min, max > UINT_MAX ? UINT_MAX : max),
			       GFP_KERNEL);
		if (ret == -EBUSY)
			ret = -ENOSPC;
		if (!ret)
			*idp = id;
		return ret;
	case KB_MAPLE:
		return kb_maple_alloc(&m->mt, p, min, max, idp);
	default:
		return -EINVAL;
	}
}

int kb_alloc_cyclic(struct kb_map *m, void *p, unsigned long min,
		    unsigned long max, unsigned long *idp)
{
	u32 id;
	int ret;

	switch (m->kind) {
	case KB_IDR:
		return kb_idr_alloc(m, p, min, max, idp, true);
	case KB_XA:
		if (min > UINT_MAX)
			return -ENOSPC;
		ret = xa_alloc_cyclic(&m->xa, &id, p,
				      XA_LIMIT(min, max > UINT_MAX ? UINT_MAX
								   : max),
				      &m->xa_next, GFP_KERNEL);
		if (ret == -EBUSY)
			ret = -ENOSPC;
		if (ret < 0)
			return ret;
		*idp = id;
		return 0;	/* 1 means "wrapped": still a success */
	case KB_MAPLE:
		return kb_maple_alloc_cyclic(&m->mt, p, min, max, &m->mt_next,
					     idp);
	default:
		return -EINVAL;
	}
}

int kb_insert(struct kb_map *m, unsigned long id, void *p)
{
	unsigned long got;
	int ret;

	switch (m->kind) {
	case KB_IDR:
		ret = kb_idr_alloc(m, p, id, id, &got, false);
		return ret == -ENOSPC ? -EBUSY : ret;
	case KB_XA:
		return xa_insert(&m->xa, id, p, GFP_KERNEL);
	case KB_MAPLE:
		ret = mtree_insert(&m->mt, id, p, GFP_KERNEL);
		return ret == -EEXIST ? -EBUSY : ret;
	default:
		return -EINVAL;
	}
}

void *kb_remove(struct kb_map *m, unsigned long id)
{
	void *old;

	switch (m->kind) {
	case KB_IDR:
		spin_lock(&m->lock);
		old = idr_remove(&m->idr, id);
		spin_unlock(&m->lock);
		return old;
	case KB_XA:
		return xa_erase(&m->xa, id);
	case KB_MAPLE:
		return mtree_erase(&m->mt, id);
	default:
		return NULL;
	}
}

void *kb_find(struct kb_map *m, unsigned long id)
{
	void *p;

	switch (m->kind) {
	case KB_IDR:
		rcu_read_lock();
		p = idr_find(&m->idr, id);
		rcu_read_unlock();
		return p;
	case KB_XA:
		return xa_load(&m->xa, id);
	case KB_MAPLE:
		return mtree_load(&m->mt, id);
	default:
		return NULL;
	}
}

size_t kb_find_loop(struct kb_map *m, const unsigned long *ids, size_t n,
		    const void *expect)
{
	size_t miss = 0;

	switch (m->kind) {
	case KB_IDR:
		for (size_t i = 0; i < n; i++) {
			void *p;

			rcu_read_lock();
			p = idr_find(&m->idr, ids[i]);
			rcu_read_unlock();
			miss += p != expect;
		}
		break;
	case KB_XA:
		for (size_t i = 0; i < n; i++)
			miss += xa_load(&m->xa, ids[i]) != expect;
		break;
	case KB_MAPLE:
		for (size_t i = 0; i < n; i++)
			miss += mtree_load(&m->mt, ids[i]) != expect;
		break;
	default:
		miss = n;
	}
	return miss;
}

size_t kb_slab_bytes(enum kb_kind kind)
{
	if (kind == KB_MAPLE)
		return kmem_cache_get_alloc(kb_maple_cache());
	return kmem_cache_get_alloc(radix_tree_node_cachep) -
	       radix_tree_preloads.nr * sizeof(struct radix_tree_node);
}

void kb_settle(void)
{
	void *n[KB_FREELIST];

	rcu_barrier();
	idr_preload(GFP_KERNEL);
	idr_preload_end();
	for (int i = 0; i < KB_FREELIST; i++)
		n[i] = kmem_cache_alloc(radix_tree_node_cachep, GFP_KERNEL);
	for (int i = 0; i < KB_FREELIST; i++)
		kmem_cache_free(radix_tree_node_cachep, n[i]);
}

unsigned long kb_node_allocs(void)
{
	return kmem_cache_nr_tallocated(radix_tree_node_cachep) +
	       kmem_cache_nr_tallocated(kb_maple_cache());
}

double kb_slab_pair_ns(long pairs)
{
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < pairs; i++) {
		void *n = kmem_cache_alloc(radix_tree_node_cachep, GFP_KERNEL);

		__asm__ volatile("" : : "r"(n) : "memory");
		kmem_cache_free(radix_tree_node_cachep, n);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return ((double)(t1.tv_sec - t0.tv_sec) * 1e9 +
		(double)(t1.tv_nsec - t0.tv_nsec)) / (double)pairs;
}
