// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mem.c - ridr's objects: full nodes (one cache of 64-aligned objects
 * of RIDR_NODE_BYTES, 544) and buckets (kmalloc-style allocations in a
 * few size classes), the map's spare nodes, preloads, deferred frees
 * and ridr_destroy().
 *
 * Memory rules:
 *  - Every object handed to an insertion is fresh from the allocator:
 *    zeroed once, by the allocation, and written before it is published
 *    (the copy of a full root bucket is not zeroed: its writer writes
 *    every record below the count it publishes, its header here).
 *    Spares and preloaded nodes are such fresh nodes, never a node that
 *    was in the tree (that one may still be read: it goes through a
 *    grace period and back to the allocator).
 *  - map->bytes counts what the map holds: objects in the tree and
 *    spares, at their allocated sizes; not objects waiting for a grace
 *    period, not nodes in a caller's preload.
 *  - A bucket may live in a full node's memory (a preloaded or spare
 *    node used because a bucket allocation failed); @block says so and it
 *    is freed back to the node cache.
 */
#include "ridr/internal.h"

#include "compat/compat.h"

RK_DEFINE_CACHE_SIZE(ridr_node_cache, RIDR_NODE_BYTES, RIDR_NODE_ALIGN);

/* Record capacities of the bucket size classes. */
static const uint8_t ridr_caps[] = { 1, 2, 3, 4, 6, 8, 11, 14, 19, 24, 32 };

unsigned int ridr_bucket_cap_for(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < sizeof(ridr_caps) - 1 && ridr_caps[i] < n; i++)
		;
	return ridr_caps[i];
}

unsigned int ridr_block_cap(unsigned int kshift)
{
	unsigned int cap = RIDR_BUCKET_MAX;

	while (ridr_bucket_size(kshift, cap + 1) <= RIDR_NODE_BYTES &&
	       cap < 255)
		cap++;
	return cap;
}

/* A block bucket holds at least RIDR_BUCKET_MAX records. */
RK_BUILD_BUG_ON(sizeof(struct ridr_bucket) + 8 * RIDR_BUCKET_MAX +
		sizeof(void *) * RIDR_BUCKET_MAX > RIDR_NODE_BYTES);

#if RK_HAVE_FLAVORS
const rk_rcu_flavor_t *ridr_flavor(const struct ridr *map)
{
	return map->flavor;
}
#endif

static size_t ridr_bucket_bytes(const struct ridr_bucket *b)
{
	return b->block ? RIDR_NODE_BYTES :
			  ridr_bucket_size(b->kshift, b->cap);
}

void ridr_bytes_add(struct ridr *map, long delta)
{
	rk_write_once(map->bytes, map->bytes + (unsigned long)delta);
}

/* ---- spares (map->spare_lock) ------------------------------------- */

/* Spares are fresh nodes linked through slot 0 (a plain pointer: they
 * are never published as such); the link is cleared when one is taken,
 * so a node handed out is all zero but for what ridr_stock_node() sets.
 */
static void ridr_spare_lock(struct ridr *map)
	rk_acquires(&map->spare_lock)
{
	rk_spin_lock(&map->spare_lock);
}

static void ridr_spare_unlock(struct ridr *map)
	rk_releases(&map->spare_lock)
{
	rk_spin_unlock(&map->spare_lock);
}

/* The spare lock is held (lockdep-checked in the kernel), or @alone:
 * ridr_destroy(), when nobody else uses the map and the lock is not
 * taken (see there).
 */
#if RK_HAVE_FLAVORS
#define ridr_spare_held(map, alone) ((void)(map), (void)(alone), 1)
#else
#define ridr_spare_held(map, alone) \
	((alone) || rk_lockdep_held(&(map)->spare_lock))
#endif

static struct ridr_node *ridr_spare_take(struct ridr *map, bool alone)
{
	struct ridr_node *node = map->spare;

	if (node) {
		void *s;

		s = rk_rcu_dereference_protected(node->slots[0],
						 ridr_spare_held(map, alone));
		map->spare = s;
		rk_rcu_init_pointer(node->slots[0], NULL);
		/* Not ridr_bytes_add(): @bytes belongs to the writer, and
		 * ridr_preload() runs beside it under the spare lock alone.
		 * Spares are counted by @nspare instead (ridr_memory()).
		 */
		rk_write_once(map->nspare, map->nspare - 1);
	}
	return node;
}

static bool ridr_spare_give(struct ridr *map, struct ridr_node *node)
{
	if (map->nspare >= RIDR_PRELOAD_MAX)
		return false;
	rk_rcu_init_pointer(node->slots[0], map->spare);
	map->spare = node;
	rk_write_once(map->nspare, map->nspare + 1);
	return true;
}

static unsigned int ridr_spare_count(const struct ridr *map)
{
	return map->nspare;
}

/* ---- stock: what one insertion reserved ------------------------------ */

int ridr_stock_fill(struct ridr *map, struct ridr_stock *st,
		    const struct ridr_need *need, struct ridr_preload *pl,
		    bool may_alloc)
{
	unsigned int want = need->nodes, from_pl, from_spare;

	st->nr = 0;
	st->bucket = NULL;
	if (need->bucket_cap && may_alloc) {
		st->bucket = rk_zalloc(ridr_bucket_size(need->bucket_kshift,
							need->bucket_cap),
				       ridr_gfp(map, RK_GFP_NOWAIT));
		if (st->bucket)
			ridr_bucket_shape(st->bucket, need->bucket_kshift,
					  need->bucket_cap);
	}
	if (need->bucket_cap && !st->bucket)
		want++;		/* the bucket will live in a node's memory */
	while (may_alloc && st->nr < want) {
		struct ridr_node *node = rk_cache_zalloc(
			&ridr_node_cache, ridr_gfp(map, RK_GFP_NOWAIT));

		if (!node)
			break;
		st->nodes[st->nr++] = node;
	}
	/* Then preloaded nodes, then the map's spares; take nothing unless
	 * everything is there, so a failure leaves @pl and the map as they
	 * were.
	 */
	from_pl = want - st->nr;
	if (!pl || from_pl > pl->nr)
		from_pl = pl ? pl->nr : 0;
	from_spare = want - st->nr - from_pl;
	if (from_spare) {
		ridr_spare_lock(map);
		if (from_spare > ridr_spare_count(map)) {
			ridr_spare_unlock(map);
			ridr_stock_drain(NULL, st);
			return -ENOMEM;
		}
		while (from_spare--)
			st->nodes[st->nr++] = ridr_spare_take(map, false);
		ridr_spare_unlock(map);
	}
	while (from_pl--) {
		/* Checked before the decrement: pl->nr > 0 here. */
		st->nodes[st->nr++] = pl->nodes[--pl->nr];
	}
	return 0;
}

void ridr_stock_drain(struct ridr *map, struct ridr_stock *st)
{
	struct ridr_bucket *b = st->bucket;

	/* A NULL bucket frees nothing. */
	rk_free(b, b ? ridr_bucket_size(b->kshift, b->cap) : 0);
	st->bucket = NULL;
	if (!map) {
		while (st->nr)
			rk_cache_free(&ridr_node_cache, st->nodes[--st->nr]);
		return;
	}
	if (!st->nr)
		return;
	/* One lock section, taken unconditionally (sparse's context check
	 * follows no lock taken under a condition).
	 */
	ridr_spare_lock(map);
	while (st->nr) {
		struct ridr_node *node = st->nodes[--st->nr];

		if (!ridr_spare_give(map, node))
			rk_cache_free(&ridr_node_cache, node);
	}
	ridr_spare_unlock(map);
}

struct ridr_node *ridr_stock_node(struct ridr *map, struct ridr_stock *st,
				  unsigned int level)
{
	struct ridr_node *node;

	(void)level;
	if (rk_warn_on_once(st->nr == 0))
		return NULL;
	node = st->nodes[--st->nr];
	/* Fresh from the allocator: all zero.  A full node starts with no
	 * slot used and every slot free.
	 */
	node->free = ridr_valid_slots(level);
	ridr_bytes_add(map, (long)RIDR_NODE_BYTES);
	return node;
}

struct ridr_bucket *ridr_stock_bucket(struct ridr *map,
				      struct ridr_stock *st,
				      unsigned int kshift)
{
	struct ridr_bucket *b = st->bucket;

	if (b) {
		st->bucket = NULL;
	} else {
		if (rk_warn_on_once(st->nr == 0))
			return NULL;
		b = (struct ridr_bucket *)st->nodes[--st->nr];
		b->block = 1;
		ridr_bucket_shape(b, kshift, ridr_block_cap(kshift));
	}
	if (b->kshift != kshift)	/* never: the plan was exact */
		ridr_bucket_shape(b, kshift, b->cap);
	b->u.w.refs = 1;
	ridr_bytes_add(map, (long)ridr_bucket_bytes(b));
	return b;
}

/*
 * A bucket from the allocator, zeroed or not, its header written here
 * field by field either way.  Readers and writers read a bucket's
 * records below its count only (and key 0 of an empty bucket, whose
 * value is not used), so a bucket that is published with a count >= 1
 * and every record below it written needs no zeroing.  The cyclic churn
 * of a small map copies its root bucket every ~30 allocations
 * (ridr_cyclic_compact()); zeroing that copy's ~400 bytes was a large
 * part of the copy's cost in the kernel (memset's rep stos).
 */
static struct ridr_bucket *ridr_bucket_alloc(struct ridr *map,
					     unsigned int kshift,
					     unsigned int cap, bool zero)
{
	size_t size = ridr_bucket_size(kshift, cap);
	rk_gfp_t gfp = ridr_gfp(map, RK_GFP_NOWAIT);
	struct ridr_bucket *b = zero ? rk_zalloc(size, gfp) :
				       rk_alloc(size, gfp);

	if (!b)
		return NULL;
	b->n = 0;
	b->block = 0;
	ridr_bucket_shape(b, kshift, cap);
	b->u.w.live = 0;
	b->u.w.refs = 1;
	ridr_bytes_add(map, (long)ridr_bucket_bytes(b));
	return b;
}

struct ridr_bucket *ridr_bucket_new(struct ridr *map, unsigned int kshift,
				    unsigned int cap)
{
	return ridr_bucket_alloc(map, kshift, cap, true);
}

struct ridr_bucket *ridr_bucket_new_unzeroed(struct ridr *map,
					     unsigned int kshift,
					     unsigned int cap)
{
	return ridr_bucket_alloc(map, kshift, cap, false);
}

/* ---- deferred frees ------------------------------------------------- */

static void ridr_node_free_rcu(struct rk_rcu_head *head)
{
	rk_cache_free(&ridr_node_cache,
		      rk_container_of(head, struct ridr_node, rcu));
}

static void ridr_bucket_free_rcu(struct rk_rcu_head *head)
{
	struct ridr_bucket *b = rk_container_of(head, struct ridr_bucket,
						u.rcu);

	/* The header's reader fields are intact: only the writer-only
	 * union was overwritten by the rcu head.
	 */
	if (b->block)
		rk_cache_free(&ridr_node_cache, (struct ridr_node *)(void *)b);
	else
		rk_free(b, ridr_bucket_size(b->kshift, b->cap));
}

void ridr_retire_node(struct ridr *map, struct ridr_node *node)
{
	ridr_bytes_add(map, -(long)RIDR_NODE_BYTES);
	rk_call_rcu(ridr_flavor(map), &node->rcu, ridr_node_free_rcu);
}

void ridr_retire_bucket(struct ridr *map, struct ridr_bucket *b)
{
	ridr_bytes_add(map, -(long)ridr_bucket_bytes(b));
	rk_call_rcu(ridr_flavor(map), &b->u.rcu, ridr_bucket_free_rcu);
}

/* ---- preload -------------------------------------------------------- */

int ridr_preload(struct ridr_preload *pl, struct ridr *map,
		 unsigned long max, rk_gfp_t gfp)
{
	unsigned int want, had, taken = 0;

	if (!pl || !map || (pl->map && pl->map != map))
		return -EINVAL;	/* one preload serves one map */
	/* A full node per level an id <= max needs (growth, or bursts
	 * down a chain), plus one for the bucket or leaf at the end.
	 */
	want = ridr_levels_for(max) + 1;
	had = pl->nr;
	if (pl->nr < want) {
		ridr_spare_lock(map);
		while (pl->nr < want && ridr_spare_count(map)) {
			pl->nodes[pl->nr++] = ridr_spare_take(map, false);
			taken++;
		}
		ridr_spare_unlock(map);
	}
	while (pl->nr < want) {
		struct ridr_node *node = rk_cache_zalloc(&ridr_node_cache,
							 ridr_gfp(map, gfp));

		if (!node) {
			/* Back to how it was: the spares taken return, what
			 * this call allocated is freed.
			 */
			while (pl->nr > had + taken)
				rk_cache_free(&ridr_node_cache,
					      pl->nodes[--pl->nr]);
			ridr_spare_lock(map);
			while (pl->nr > had)
				ridr_spare_give(map, pl->nodes[--pl->nr]);
			ridr_spare_unlock(map);
			return -ENOMEM;
		}
		pl->nodes[pl->nr++] = node;
	}
	pl->map = map;
	return 0;
}
rk_export_symbol(ridr_preload);

void ridr_preload_end(struct ridr_preload *pl)
{
	struct ridr *map;

	if (!pl)
		return;
	map = pl->map;
	if (map && pl->nr) {
		ridr_spare_lock(map);
		while (pl->nr && ridr_spare_give(map, pl->nodes[pl->nr - 1]))
			pl->nr--;
		ridr_spare_unlock(map);
	}
	/* Never published: no reader can hold them, free at once. */
	while (pl->nr)
		rk_cache_free(&ridr_node_cache, pl->nodes[--pl->nr]);
	pl->map = NULL;
}
rk_export_symbol(ridr_preload_end);

unsigned int ridr_spares(struct ridr *map)
{
	unsigned int n;

	ridr_spare_lock(map);
	n = ridr_spare_count(map);
	ridr_spare_unlock(map);
	return n;
}

void ridr_preload_return(struct ridr_preload *pl, unsigned int spares)
{
	struct ridr *map = pl->map;

	if (map && pl->nr) {
		ridr_spare_lock(map);
		while (pl->nr && ridr_spare_count(map) < spares &&
		       ridr_spare_give(map, pl->nodes[pl->nr - 1]))
			pl->nr--;
		ridr_spare_unlock(map);
	}
	while (pl->nr)
		rk_cache_free(&ridr_node_cache, pl->nodes[--pl->nr]);
	pl->map = NULL;
}

/* ---- destroy -------------------------------------------------------- */

/* A slot or root reference to @w goes away. */
static void ridr_drop_ref(struct ridr *map, void *w)
{
	struct ridr_bucket *b = ridr_to_bucket(w);

	if (--b->u.w.refs == 0)
		ridr_retire_bucket(map, b);
}

void ridr_destroy(struct ridr *map)
{
	struct ridr_node *path[RIDR_MAX_LEVELS];
	unsigned int at[RIDR_MAX_LEVELS];
	/* Condition 1 here and in the walk below: the caller guarantees
	 * nobody else uses the map (no writer, no preload), and no lock is
	 * taken (see the spares at the end).
	 */
	void *w = rk_rcu_dereference_protected(map->root, 1);
	struct ridr_node *node;
	unsigned int level, top;

	/* Unpublish first (W11), then retire every object; readers that
	 * started before may still walk them until a grace period.
	 */
	rk_rcu_init_pointer(map->root, NULL);
	if (w && ridr_kind(w)) {
		ridr_drop_ref(map, w);
	} else if (w) {
		top = ridr_root_level(w);
		node = ridr_to_node(w);
		level = top;
		at[level] = 0;
		/* Iterative post-order walk; the objects are unreachable, so
		 * their slots are read but never changed.
		 */
		for (;;) {
			void *s = NULL;

			while (level && at[level] < RIDR_SLOTS) {
				s = rk_rcu_dereference_protected(
					node->slots[at[level]++], 1);
				if (!s)
					continue;
				if (ridr_kind(s)) {
					ridr_drop_ref(map, s);
					s = NULL;
					continue;
				}
				break;
			}
			if (s) {
				path[level] = node;
				node = ridr_to_node(s);
				level--;
				at[level] = 0;
				continue;
			}
			ridr_retire_node(map, node);
			if (level == top)
				break;
			level++;
			node = path[level];
		}
	}
	/* No lock: nobody else uses the map now (no writer, no preload),
	 * and ridr_destroy() may run in an RCU callback (softirq in the
	 * kernel: free_signal_struct()), where taking the spare lock, which
	 * process context takes with softirqs enabled, could deadlock.
	 */
	while (ridr_spare_count(map))
		rk_cache_free(&ridr_node_cache, ridr_spare_take(map, true));
	rk_write_once(map->next, 0);
	rk_write_once(map->count, 0);
	map->keep_level = -1;
}
rk_export_symbol(ridr_destroy);
