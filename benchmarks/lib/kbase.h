/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kbase.h - the kernel's own id maps as benchmark baselines: Linux 6.1's
 * IDR, XArray and maple tree, compiled in userspace from Debian's
 * linux-source-6.1 tarball through the kernel's tools/testing/radix-tree
 * harness (third_party/linux_6_1/).  No kernel header leaks through this
 * file: the benchmarks include it next to ridr.h and compat.h.
 *
 * DOC: kbase
 *
 * One map per call to kb_new(); every map of a process shares the
 * harness's node caches (the IDR and the XArray both allocate
 * radix_tree_node, the maple tree maple_node).  Writers follow what kernel
 * users do:
 *
 *   KB_IDR    idr_preload(GFP_KERNEL); spin_lock(&lock);
 *             idr_alloc[_cyclic](..., GFP_NOWAIT); spin_unlock(&lock);
 *             idr_preload_end().  idr_remove() under the same spinlock.
 *   KB_XA     xa_alloc[_cyclic](..., GFP_KERNEL) and xa_erase() on an
 *             XA_FLAGS_ALLOC array (the xa_lock inside).
 *   KB_MAPLE  an MT_FLAGS_ALLOC_RANGE | MT_FLAGS_USE_RCU tree; lowest
 *             free = mas_empty_area() + mas_insert() under mtree_lock(),
 *             retried after mas_nomem() (upstream's 2023 fix of
 *             mtree_alloc_range(), which 6.1 gets wrong); cyclic = the
 *             same from the cursor, then from @min; mtree_erase().
 *
 * Readers (kb_find) run as each structure's RCU readers: idr_find()
 * inside rcu_read_lock(), xa_load() and mtree_load(), which take the RCU
 * read lock themselves.  The calling thread must be registered with
 * liburcu's default (memb) flavor, as for ridr.
 *
 * Ids are unsigned long here; the IDR and the XArray hold ids up to
 * INT_MAX and UINT_MAX: callers stay within [0, INT_MAX].
 */
#ifndef RK_KBASE_H
#define RK_KBASE_H

#include <stddef.h>
#include <stdint.h>

enum kb_kind { KB_IDR, KB_XA, KB_MAPLE, KB_NKINDS };

struct kb_map;

/* Creates the harness's caches; call once, from a registered thread. */
void kb_init(void);
/* Short names: "idr", "xarray", "maple". */
const char *kb_name(enum kb_kind kind);

struct kb_map *kb_new(enum kb_kind kind);
/* Removes every entry, frees the map (nodes after a grace period). */
void kb_destroy(struct kb_map *m);

/* Lowest free id in [min, max] for @p.  Return: 0 or -ENOSPC/-ENOMEM. */
int kb_alloc(struct kb_map *m, void *p, unsigned long min, unsigned long max,
	     unsigned long *idp);
/* Next free id at or after the map's cursor in [min, max], wrapping. */
int kb_alloc_cyclic(struct kb_map *m, void *p, unsigned long min,
		    unsigned long max, unsigned long *idp);
/* Stores @p at @id.  Return: 0, -EBUSY if taken, or -ENOMEM. */
int kb_insert(struct kb_map *m, unsigned long id, void *p);
/* Return: the entry that was at @id, or NULL. */
void *kb_remove(struct kb_map *m, unsigned long id);
/* The kind's RCU reader (see above). */
void *kb_find(struct kb_map *m, unsigned long id);

/* @n lookups of @ids[i] for i < n, each as kb_find() without the
 * dispatch; returns how many did not find @expect. */
size_t kb_find_loop(struct kb_map *m, const unsigned long *ids, size_t n,
		    const void *expect);

/* Bytes of live node objects of @kind's cache (object size x live
 * objects: what the kernel's slab would hand out, without its own
 * overhead), over every map of the process, leaving out the IDR's
 * preloaded nodes (a per-CPU reserve, not part of any map). */
size_t kb_slab_bytes(enum kb_kind kind);
/* Brings the harness to the same state before and after a heap
 * measurement: waits for a grace period (deferred node frees), fills the
 * IDR's preload reserve and refills the radix_tree_node cache's free list
 * (it keeps up to 11 freed nodes); so a heap difference counts the map's
 * nodes, not these. */
void kb_settle(void);
/* Node objects allocated from the caches since kb_init() (a counter that
 * never decreases: node allocations per operation are differences). */
unsigned long kb_node_allocs(void);
/* ns per kmem_cache_alloc() + kmem_cache_free() of one harness node,
 * for comparing the harness's allocator with malloc(). */
double kb_slab_pair_ns(long pairs);

/* Lets GFP_NOWAIT allocations succeed (the harness fails them unless a
 * budget allows, to test error paths); kb_init() calls it, long runs
 * call it again. */
void kb_allow_nowait(void);

#endif /* RK_KBASE_H */
