// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ridr.c - RCU-readable radix-tree id map and id allocator.
 *
 * Contracts per function are in ridr.h.  The tree: 64-slot nodes, a
 * node's @shift says which 6 bits of the id index its slots (0 for a
 * leaf, whose slots hold entries; internal slots hold child nodes).  The
 * root's shift gives the height: the tree covers ids up to
 * 64 << root->shift, minus one.
 *
 * Ordering and lifetime guarantees:
 *
 * 1. A node's @shift is written before the node is published and never
 *    changes; readers may read it without ordering beyond (2).
 * 2. Every pointer readers follow (map->root, internal slots) and every
 *    entry in a leaf slot is published with rk_rcu_assign_pointer()
 *    (release), after the node or object behind it is fully initialised;
 *    readers load them with rk_rcu_dereference() (dependency/acquire).
 *    The pair guarantees a reader that reaches a node or entry sees its
 *    initialisation.
 * 3. Pointers are cleared with rk_rcu_init_pointer() (no ordering
 *    needed: NULL carries no data).  A reader concurrent with the clear
 *    sees the old pointer or NULL, both valid answers for that id.
 * 4. A node leaves the tree (its parent slot or map->root is switched
 *    away from it) before it is handed to rk_call_rcu(); it is freed only
 *    after every reader that could have reached it has left its read-side
 *    section.  A retired node's own slots are left intact, so a reader
 *    still walking it finds what it found before, or NULL.
 * 5. When the tree grows, the new root is published with slot 0 already
 *    pointing to the old root; when it shrinks, map->root is switched to
 *    the old root's slot-0 child.  Either way a reader holding the old or
 *    the new root reaches the same entries.
 * 6. Writer-only fields (@parent, @offset, @count, @free, map->next,
 *    map->count, map->nodes, map->height) are protected by the writers'
 *    serialization; the map counters are written with rk_write_once() so
 *    ridr_count()/ridr_memory()/ridr_preload() may read a snapshot.
 * 7. Readers never store to shared memory and never use a writer-only
 *    field: ridr_find()/ridr_get_next() are wait-free.
 *
 * Free bitmaps: for a leaf, bit i set means id (base + i) is not
 * allocated.  For an internal node, bit i set means slot i has a free id
 * below it: the child is absent, or its own bitmap is non-zero.  Bits for
 * slots beyond RIDR_MAX_ID (the top level of a full-height tree) are never
 * set.  So the lowest free id >= min is found by one descent, with at
 * most one step back per level: O(height).
 */
#include "ridr/ridr.h"

#include "compat/compat.h"

#define RIDR_MASK (RIDR_SLOTS - 1)
#define RIDR_ID_BITS RK_BITS_PER_LONG

/*
 * Readers touch @shift and @slots only.  The writer-only fields, updated
 * on every allocation and removal, come after the slots, so those updates
 * do not invalidate the cache lines readers load (only the slot being
 * changed does).
 */
struct ridr_node {
	unsigned char shift;	/* immutable once published */
	void *slots[RIDR_SLOTS];	/* RCU-protected */
	uint64_t free;		/* writer only, see top of file */
	struct ridr_node *parent;	/* writer only */
	unsigned char offset;	/* slot in parent (writer) */
	unsigned char count;	/* used slots: children or allocated ids */
	struct rk_rcu_head rcu;
};

RK_BUILD_BUG_ON(RIDR_SLOTS != 64);	/* free bitmaps are 64-bit */

/* Every node comes from one cache of node-sized objects. */
RK_DEFINE_CACHE(ridr_node_cache, struct ridr_node);

/* Mask of the low @bits bits (all ones from RIDR_ID_BITS on). */
static inline unsigned long ridr_low_mask(unsigned int bits)
{
	return bits >= RIDR_ID_BITS ? ~0UL : (1UL << bits) - 1;
}

/* Highest id the subtree of a node with @shift covers, relative to its
 * base (ids are base .. base + span).
 */
static inline unsigned long ridr_span(unsigned int shift)
{
	return ridr_low_mask(shift + RIDR_SHIFT);
}

/* Slots that hold ids <= RIDR_MAX_ID: 64, except at the top level of a
 * full-height tree (16 with 64-bit longs).
 */
static inline unsigned int ridr_nslots(unsigned int shift)
{
	if (shift + RIDR_SHIFT <= RIDR_ID_BITS)
		return RIDR_SLOTS;
	return 1u << (RIDR_ID_BITS - shift);
}

static inline uint64_t ridr_valid_slots(unsigned int shift)
{
	unsigned int n = ridr_nslots(shift);

	return n == 64 ? ~0ULL : (1ULL << n) - 1;
}

static inline unsigned int ridr_offset(unsigned long id, unsigned int shift)
{
	return (unsigned int)(id >> shift) & RIDR_MASK;
}

/* Levels needed to hold @id (1 for 0..63). */
static inline unsigned int ridr_levels_for(unsigned long id)
{
	unsigned int levels = 1;

	while (levels * RIDR_SHIFT < RIDR_ID_BITS &&
	       (id >> (levels * RIDR_SHIFT)) != 0)
		levels++;
	return levels;
}

static inline unsigned int ridr_height(const struct ridr_node *root)
{
	return root ? root->shift / RIDR_SHIFT + 1 : 0;
}

/* Writer-side load of an RCU pointer: writers are serialized. */
#define ridr_protected(p) rk_rcu_dereference_protected(p, 1)

/* ------------------------------------------------------------------ */
/* Node allocation, preload, deferred free                             */

static struct ridr_node *ridr_node_new(rk_gfp_t gfp)
{
	return rk_cache_zalloc(&ridr_node_cache, gfp);
}

static void ridr_node_free(struct ridr_node *node)
{
	rk_cache_free(&ridr_node_cache, node);
}

int ridr_preload(struct ridr_preload *pl, const struct ridr *map,
		 unsigned long max, rk_gfp_t gfp)
{
	unsigned int top, h, want;

	if (!pl || !map)
		return -EINVAL;
	/* Worst case for an id <= max: grow from height h to top, then
	 * build the path below the new top; or, if no growth, the path
	 * below the existing root.
	 */
	top = ridr_levels_for(max);
	h = rk_read_once(map->height);
	if (h == 0)
		want = top;
	else if (top > h)
		want = (top - h) + (top - 1);
	else
		want = h - 1;
	if (want > RIDR_PRELOAD_MAX)
		want = RIDR_PRELOAD_MAX;
	while (pl->nr < want) {
		struct ridr_node *node = ridr_node_new(gfp);

		if (!node)
			return -ENOMEM;
		pl->nodes[pl->nr++] = node;
	}
	return 0;
}
rk_export_symbol(ridr_preload);

void ridr_preload_end(struct ridr_preload *pl)
{
	if (!pl)
		return;
	/* Never published: no reader can hold them, free at once. */
	while (pl->nr)
		ridr_node_free(pl->nodes[--pl->nr]);
}
rk_export_symbol(ridr_preload_end);

/* Make sure @pl holds @need nodes; allocate the rest without sleeping.
 * On failure the map is untouched and the nodes stay in @pl.
 */
static int ridr_reserve(struct ridr_preload *pl, unsigned int need,
			bool may_alloc)
{
	while (pl->nr < need) {
		struct ridr_node *node;

		if (!may_alloc)
			return -EAGAIN;
		node = ridr_node_new(RK_GFP_NOWAIT);
		if (!node)
			return -ENOMEM;
		pl->nodes[pl->nr++] = node;
	}
	return 0;
}

/* Take a reserved node and initialise it as an empty node at @shift.
 * Not yet reachable by readers: plain initialisation.
 */
static struct ridr_node *ridr_node_take(struct ridr *map,
					struct ridr_preload *pl,
					unsigned int shift,
					struct ridr_node *parent,
					unsigned int offset)
{
	struct ridr_node *node = pl->nodes[--pl->nr];

	rk_bug_on(!node);
	__builtin_memset(node, 0, sizeof(*node));
	node->shift = (unsigned char)shift;
	node->offset = (unsigned char)offset;
	node->parent = parent;
	node->free = ridr_valid_slots(shift);
	rk_write_once(map->nodes, map->nodes + 1);
	return node;
}

static void ridr_node_free_rcu(struct rk_rcu_head *head)
{
	ridr_node_free(rk_container_of(head, struct ridr_node, rcu));
}

/* @node is no longer reachable from map->root (guarantee 4). */
static void ridr_node_retire(struct ridr *map, struct ridr_node *node)
{
	rk_write_once(map->nodes, map->nodes - 1);
	rk_call_rcu(map->flavor, &node->rcu, ridr_node_free_rcu);
}

/* ------------------------------------------------------------------ */
/* Init, destroy, locking                                              */

void ridr_init_flavor(struct ridr *map, const rk_rcu_flavor_t *flavor)
{
	rk_rcu_init_pointer(map->root, NULL);
	map->next = 0;
	map->count = 0;
	map->nodes = 0;
	map->height = 0;
	map->flavor = flavor;
	rk_spin_lock_init(&map->lock);
}
rk_export_symbol(ridr_init_flavor);

void ridr_init(struct ridr *map)
{
	ridr_init_flavor(map, RK_RCU_DEFAULT_FLAVOR);
}
rk_export_symbol(ridr_init);

void ridr_destroy(struct ridr *map)
{
	struct ridr_node *node = ridr_protected(map->root);

	/* Unpublish first (guarantee 4), then retire every node.  The walk
	 * is iterative: go down to a leftmost child, retire nodes with no
	 * children left, clearing their slot in the parent (the parent is
	 * already unreachable, so the clear needs no ordering).
	 */
	rk_rcu_init_pointer(map->root, NULL);
	/* Readers that started before the unpublish may see the slots we
	 * clear below turn NULL: "absent" is a correct answer once the map
	 * is being destroyed.
	 */
	while (node) {
		struct ridr_node *parent;
		unsigned int i;

		if (node->shift) {
			for (i = 0; i < RIDR_SLOTS; i++) {
				struct ridr_node *child =
					ridr_protected(node->slots[i]);

				if (child) {
					node = child;
					break;
				}
			}
			if (i < RIDR_SLOTS)
				continue;
		}
		parent = node->parent;
		if (parent)
			rk_rcu_init_pointer(parent->slots[node->offset], NULL);
		ridr_node_retire(map, node);
		node = parent;
	}
	rk_write_once(map->next, 0);
	rk_write_once(map->count, 0);
	rk_write_once(map->height, 0);
}
rk_export_symbol(ridr_destroy);

void ridr_lock(struct ridr *map)
{
	rk_spin_lock(&map->lock);
}
rk_export_symbol(ridr_lock);

void ridr_unlock(struct ridr *map)
{
	rk_spin_unlock(&map->lock);
}
rk_export_symbol(ridr_unlock);

/* ------------------------------------------------------------------ */
/* Readers                                                             */

void *ridr_find(const struct ridr *map, unsigned long id)
{
	const struct ridr_node *node = rk_rcu_dereference(map->root);
	void *entry;

	if (!node)
		return NULL;
	/* id > ridr_span(shift), without the mask's branch: shift <= 60,
	 * so neither shift count reaches the width of the type.
	 */
	if ((id >> node->shift) >> RIDR_SHIFT)
		return NULL;
	for (;;) {
		entry = rk_rcu_dereference(
			node->slots[ridr_offset(id, node->shift)]);
		if (!node->shift || !entry)
			return entry;
		node = entry;
	}
}
rk_export_symbol(ridr_find);

/*
 * Depth-first scan for the first non-NULL leaf entry at or after *@idp.
 * path[]/off[] record the way down; the id found is the sum of the slot
 * offsets along it.  While "exact", the walk follows *@idp's own digits;
 * once it moved past one, every lower level starts at slot 0.
 */
void *ridr_get_next(const struct ridr *map, unsigned long *idp)
{
	const struct ridr_node *path[RIDR_MAX_LEVELS];
	unsigned int off_at[RIDR_MAX_LEVELS];
	const struct ridr_node *node = rk_rcu_dereference(map->root);
	unsigned long start = *idp;
	unsigned int depth = 0, off;
	bool exact = true;

	if (!node || start > ridr_span(node->shift))
		return NULL;
	off = ridr_offset(start, node->shift);
	for (;;) {
		unsigned int n = ridr_nslots(node->shift);
		void *entry = NULL;

		for (; off < n; off++) {
			entry = rk_rcu_dereference(node->slots[off]);
			if (entry)
				break;
		}
		if (off == n) {
			/* Nothing left below this node: next sibling. */
			if (!depth)
				return NULL;
			depth--;
			node = path[depth];
			off = off_at[depth] + 1;
			exact = false;
			continue;
		}
		if (!node->shift) {
			unsigned long id = off;

			for (unsigned int i = 0; i < depth; i++)
				id |= (unsigned long)off_at[i] << path[i]->shift;
			*idp = id;
			return entry;
		}
		exact = exact && off == ridr_offset(start, node->shift);
		path[depth] = node;
		off_at[depth] = off;
		depth++;
		node = entry;
		off = exact ? ridr_offset(start, node->shift) : 0;
	}
}
rk_export_symbol(ridr_get_next);

void *__ridr_iter_next(const struct ridr *map, unsigned long *idp)
{
	unsigned long id = *idp;
	void *entry;

	if (id == RIDR_MAX_ID)
		return NULL;
	id++;
	entry = ridr_get_next(map, &id);
	if (entry)
		*idp = id;
	return entry;
}
rk_export_symbol(__ridr_iter_next);

bool ridr_is_empty(const struct ridr *map)
{
	/* Not dereferenced: a single-copy load is enough. */
	return rk_read_once(map->root) == NULL;
}
rk_export_symbol(ridr_is_empty);

unsigned long ridr_count(const struct ridr *map)
{
	return rk_read_once(map->count);
}
rk_export_symbol(ridr_count);

size_t ridr_memory(const struct ridr *map)
{
	return rk_read_once(map->nodes) * sizeof(struct ridr_node);
}
rk_export_symbol(ridr_memory);

/* ------------------------------------------------------------------ */
/* Writers: search                                                     */

/* Lowest free id >= @id in @node's subtree (@id inside its range).
 * *@leafp gets the leaf that holds it, or NULL if nodes are missing on
 * the way (the insertion must build them).
 */
static bool ridr_subtree_free(struct ridr_node *node, unsigned long id,
			      unsigned long *out, struct ridr_node **leafp)
{
	unsigned int shift = node->shift, first = ridr_offset(id, shift);
	uint64_t bits = node->free & (~0ULL << first);

	while (bits) {
		unsigned int i = rk_ffs64(bits);
		unsigned long start = i == first ? id :
			(id & ~ridr_span(shift)) | ((unsigned long)i << shift);
		struct ridr_node *child;

		if (!shift) {
			*out = start;
			*leafp = node;
			return true;
		}
		child = ridr_protected(node->slots[i]);
		if (!child) {
			*out = start;
			*leafp = NULL;
			return true;
		}
		/* A set bit promises a free id somewhere in the child, but
		 * only below start when i == first: then look further.
		 */
		if (ridr_subtree_free(child, start, out, leafp))
			return true;
		bits &= bits - 1;
	}
	return false;
}

/*
 * The common case of ridr_subtree_free() without recursion: take the
 * first free slot at or after @id's digit on every level.  Only a level
 * where that slot is @id's own digit can lead into a child whose free ids
 * all lie below @id; then give up (false) and let ridr_subtree_free()
 * search with backtracking.  With @id == 0, or any id whose lower digits
 * are all zero, it never gives up.
 */
static bool ridr_greedy_free(struct ridr_node *node, unsigned long id,
			     unsigned long *out, struct ridr_node **leafp)
{
	for (;;) {
		unsigned int shift = node->shift, first = ridr_offset(id, shift);
		uint64_t bits = node->free & (~0ULL << first);
		unsigned int i;
		struct ridr_node *child;

		if (!bits)
			return false;
		i = rk_ffs64(bits);
		if (i != first)
			id = (id & ~ridr_span(shift)) | ((unsigned long)i << shift);
		if (!shift) {
			*out = id;
			*leafp = node;
			return true;
		}
		child = ridr_protected(node->slots[i]);
		if (!child) {
			*out = id;
			*leafp = NULL;
			return true;
		}
		node = child;
	}
}

/* Lowest free id in [@min, @max], or -ENOSPC; *@leafp as above. */
static int ridr_find_free(const struct ridr *map, unsigned long min,
			  unsigned long max, unsigned long *out,
			  struct ridr_node **leafp)
{
	struct ridr_node *root = ridr_protected(map->root);
	unsigned long id;

	*leafp = NULL;
	if (!root || min > ridr_span(root->shift)) {
		id = min;	/* beyond the tree: nothing allocated there */
	} else if (!ridr_greedy_free(root, min, &id, leafp) &&
		   !ridr_subtree_free(root, min, &id, leafp)) {
		if (ridr_span(root->shift) == RIDR_MAX_ID)
			return -ENOSPC;
		id = ridr_span(root->shift) + 1;
	}
	if (id > max)
		return -ENOSPC;
	*out = id;
	return 0;
}

/* Nodes an insertion of @id needs (guarantee: nothing changes here). */
static unsigned int ridr_nodes_needed(const struct ridr *map,
				      unsigned long id)
{
	const struct ridr_node *node = ridr_protected(map->root);
	unsigned int top = ridr_levels_for(id), h = ridr_height(node);

	if (!node)
		return top;
	if (top > h)	/* new roots, then a whole new path below the top */
		return (top - h) + (top - 1);
	while (node->shift) {
		const struct ridr_node *child =
			ridr_protected(node->slots[ridr_offset(id, node->shift)]);

		if (!child)
			return node->shift / RIDR_SHIFT;
		node = child;
	}
	return 0;
}

/* Publish @ptr in @slot: a release store for an object (guarantee 2), an
 * unordered store for NULL, a reservation (guarantee 3).
 */
static inline void ridr_publish(void **slot, void *ptr)
{
	if (ptr)
		rk_rcu_assign_pointer(*slot, ptr);
	else
		rk_rcu_init_pointer(*slot, NULL);
}

/* The leaf holding @id, or NULL if no leaf covers it. */
static struct ridr_node *ridr_leaf(const struct ridr *map, unsigned long id)
{
	struct ridr_node *node = ridr_protected(map->root);

	if (!node || id > ridr_span(node->shift))
		return NULL;
	while (node && node->shift)
		node = ridr_protected(node->slots[ridr_offset(id, node->shift)]);
	return node;
}

/* ------------------------------------------------------------------ */
/* Writers: insert                                                     */

/* Store @ptr at free id @id of existing leaf @leaf. */
static void ridr_leaf_store(struct ridr *map, struct ridr_node *leaf,
			    void *ptr, unsigned long id)
{
	struct ridr_node *node = leaf;
	unsigned int off = ridr_offset(id, 0);

	rk_bug_on(!(leaf->free & (1ULL << off)));
	ridr_publish(&leaf->slots[off], ptr);
	leaf->free &= ~(1ULL << off);
	leaf->count++;
	/* A node that became full clears its bit in the parent, and so on
	 * up while parents become full too.
	 */
	while (!node->free && node->parent) {
		node->parent->free &= ~(1ULL << node->offset);
		node = node->parent;
	}
	rk_write_once(map->count, map->count + 1);
}

/* Store @ptr at free id @id.  The nodes needed are reserved in @pl. */
static void ridr_insert(struct ridr *map, void *ptr, unsigned long id,
			struct ridr_preload *pl)
{
	struct ridr_node *root = ridr_protected(map->root);
	struct ridr_node *node;
	unsigned int off;

	if (!root) {
		root = ridr_node_take(map, pl,
				      (ridr_levels_for(id) - 1) * RIDR_SHIFT,
				      NULL, 0);
		/* Guarantee 2: initialised before it becomes reachable. */
		rk_rcu_assign_pointer(map->root, root);
	}
	while (id > ridr_span(root->shift)) {
		struct ridr_node *top = ridr_node_take(map, pl,
						       root->shift + RIDR_SHIFT,
						       NULL, 0);

		/* Guarantee 5: slot 0 is set before the new root is
		 * published.  @top is unreachable, so a plain store.
		 */
		rk_rcu_init_pointer(top->slots[0], root);
		top->count = 1;
		if (!root->free)
			top->free &= ~1ULL;
		root->parent = top;
		root->offset = 0;
		rk_rcu_assign_pointer(map->root, top);
		root = top;
	}
	rk_write_once(map->height, ridr_height(root));

	node = root;
	while (node->shift) {
		struct ridr_node *child;

		off = ridr_offset(id, node->shift);
		child = ridr_protected(node->slots[off]);
		if (!child) {
			child = ridr_node_take(map, pl,
					       node->shift - RIDR_SHIFT, node,
					       off);
			node->count++;
			/* Guarantee 2; the absent child's free bit was set
			 * and the new child is all free: it stays set.
			 */
			rk_rcu_assign_pointer(node->slots[off], child);
		}
		node = child;
	}
	ridr_leaf_store(map, node, ptr, id);
}

/* On -EAGAIN (!@may_alloc and @pl short), *@want says how many nodes the
 * insertion needs.
 */
static int ridr_do_alloc(struct ridr *map, void *ptr, unsigned long min,
			 unsigned long max, unsigned long *idp,
			 struct ridr_preload *pl, bool cyclic, bool may_alloc,
			 unsigned int *want)
{
	unsigned long id, start = min;
	struct ridr_node *leaf;
	unsigned int need;
	int ret;

	if (!map || !idp || min > max)
		return -EINVAL;
	if (cyclic) {
		start = rk_read_once(map->next);
		if (start < min || start > max)
			start = min;
	}
	ret = ridr_find_free(map, start, max, &id, &leaf);
	if (ret == -ENOSPC && start > min)
		ret = ridr_find_free(map, min, start - 1, &id, &leaf);
	if (ret)
		return ret;
	if (likely(leaf)) {
		/* Common case: the search ended in an existing leaf. */
		ridr_leaf_store(map, leaf, ptr, id);
	} else {
		need = ridr_nodes_needed(map, id);
		ret = ridr_reserve(pl, need, may_alloc);
		if (ret) {
			*want = need;
			return ret;	/* map unchanged */
		}
		ridr_insert(map, ptr, id, pl);
	}
	if (cyclic)	/* wraps to 0 past RIDR_MAX_ID, then restarts at min */
		rk_write_once(map->next, id + 1);
	*idp = id;
	return 0;
}

static int ridr_alloc_common(struct ridr *map, void *ptr, unsigned long min,
			     unsigned long max, unsigned long *idp,
			     struct ridr_preload *pl, bool cyclic)
{
	struct ridr_preload local;	/* only .nr needs initialising */
	unsigned int want;
	int ret;

	local.nr = 0;
	ret = ridr_do_alloc(map, ptr, min, max, idp, pl ? pl : &local, cyclic,
			    true, &want);
	ridr_preload_end(&local);
	return ret;
}

int __ridr_alloc(struct ridr *map, void *ptr, unsigned long min,
		 unsigned long max, unsigned long *idp,
		 struct ridr_preload *pl)
{
	return ridr_alloc_common(map, ptr, min, max, idp, pl, false);
}
rk_export_symbol(__ridr_alloc);

int __ridr_alloc_cyclic(struct ridr *map, void *ptr, unsigned long min,
			unsigned long max, unsigned long *idp,
			struct ridr_preload *pl)
{
	return ridr_alloc_common(map, ptr, min, max, idp, pl, true);
}
rk_export_symbol(__ridr_alloc_cyclic);

/*
 * Locked allocation that never allocates under the map's lock: try with
 * the nodes at hand; if the insertion needs more, drop the lock, allocate
 * what it said it needs (everything an insertion can need, from the
 * second retry on, in case other writers changed the tree meanwhile) and
 * retry.  With RIDR_PRELOAD_MAX nodes no insertion runs short, so this
 * loops at most three times.
 */
static int ridr_alloc_locked(struct ridr *map, void *ptr, unsigned long min,
			     unsigned long max, unsigned long *idp,
			     bool cyclic)
{
	struct ridr_preload pl;	/* only .nr needs initialising */
	unsigned int want = 0, tries = 0;
	int ret;

	pl.nr = 0;
	if (!map || !idp || min > max)
		return -EINVAL;
	for (;;) {
		ridr_lock(map);
		ret = ridr_do_alloc(map, ptr, min, max, idp, &pl, cyclic,
				    false, &want);
		ridr_unlock(map);
		if (ret != -EAGAIN)
			break;
		if (++tries > 1)
			want = RIDR_PRELOAD_MAX;
		ret = -ENOMEM;
		while (pl.nr < want) {
			struct ridr_node *node = ridr_node_new(RK_GFP_KERNEL);

			if (!node)
				break;
			pl.nodes[pl.nr++] = node;
		}
		if (pl.nr < want)
			break;	/* -ENOMEM, map unchanged */
	}
	ridr_preload_end(&pl);
	return ret;
}

int ridr_alloc(struct ridr *map, void *ptr, unsigned long min,
	       unsigned long max, unsigned long *idp)
{
	return ridr_alloc_locked(map, ptr, min, max, idp, false);
}
rk_export_symbol(ridr_alloc);

int ridr_alloc_cyclic(struct ridr *map, void *ptr, unsigned long min,
		      unsigned long max, unsigned long *idp)
{
	return ridr_alloc_locked(map, ptr, min, max, idp, true);
}
rk_export_symbol(ridr_alloc_cyclic);

unsigned long ridr_get_cursor(const struct ridr *map)
{
	return rk_read_once(map->next);
}
rk_export_symbol(ridr_get_cursor);

void __ridr_set_cursor(struct ridr *map, unsigned long next)
{
	rk_write_once(map->next, next);
}
rk_export_symbol(__ridr_set_cursor);

/* ------------------------------------------------------------------ */
/* Writers: replace, remove                                            */

/* The leaf holding allocated id @id (its entry goes to *@oldp if
 * @oldp), or NULL if @id is not allocated.
 */
static struct ridr_node *ridr_allocated(const struct ridr *map,
					unsigned long id, void **oldp)
{
	struct ridr_node *leaf = ridr_leaf(map, id);
	unsigned int off = ridr_offset(id, 0);

	if (!leaf || (leaf->free & (1ULL << off)))
		return NULL;
	if (oldp)
		*oldp = ridr_protected(leaf->slots[off]);
	return leaf;
}

int __ridr_replace(struct ridr *map, void *ptr, unsigned long id,
		   void **oldp)
{
	struct ridr_node *leaf;

	if (!map)
		return -EINVAL;
	leaf = ridr_allocated(map, id, oldp);
	if (!leaf)
		return -ENOENT;
	ridr_publish(&leaf->slots[ridr_offset(id, 0)], ptr);
	return 0;
}
rk_export_symbol(__ridr_replace);

int ridr_replace(struct ridr *map, void *ptr, unsigned long id, void **oldp)
{
	int ret;

	if (!map)
		return -EINVAL;
	ridr_lock(map);
	ret = __ridr_replace(map, ptr, id, oldp);
	ridr_unlock(map);
	return ret;
}
rk_export_symbol(ridr_replace);

/* While the top node only uses slot 0, make that child the root. */
static void ridr_shrink(struct ridr *map)
{
	struct ridr_node *root = ridr_protected(map->root);

	while (root && root->shift && root->count == 1) {
		struct ridr_node *child = ridr_protected(root->slots[0]);

		if (!child)
			break;
		child->parent = NULL;
		/* Guarantee 5: the child is initialised and was reachable
		 * through the old root; the release orders everything this
		 * writer saw before readers that start from the new root.
		 */
		rk_rcu_assign_pointer(map->root, child);
		ridr_node_retire(map, root);
		root = child;
	}
	rk_write_once(map->height, ridr_height(root));
}

int __ridr_remove(struct ridr *map, unsigned long id, void **oldp)
{
	struct ridr_node *leaf, *node;
	unsigned int off = ridr_offset(id, 0);

	if (!map)
		return -EINVAL;
	leaf = ridr_allocated(map, id, oldp);
	if (!leaf)
		return -ENOENT;
	rk_rcu_init_pointer(leaf->slots[off], NULL);	/* guarantee 3 */
	leaf->free |= 1ULL << off;
	leaf->count--;
	rk_write_once(map->count, map->count - 1);

	/* The leaf has a free id now: set the bits up to the first parent
	 * that already had it set.
	 */
	for (node = leaf; node->parent; node = node->parent) {
		uint64_t bit = 1ULL << node->offset;

		if (node->parent->free & bit)
			break;
		node->parent->free |= bit;
	}

	/* Unlink and retire nodes left empty, bottom up (guarantee 4). */
	node = leaf;
	while (!node->count) {
		struct ridr_node *parent = node->parent;

		if (!parent) {
			rk_rcu_init_pointer(map->root, NULL);
			ridr_node_retire(map, node);
			break;
		}
		rk_rcu_init_pointer(parent->slots[node->offset], NULL);
		parent->free |= 1ULL << node->offset;	/* absent = free */
		parent->count--;
		ridr_node_retire(map, node);
		node = parent;
	}
	ridr_shrink(map);
	return 0;
}
rk_export_symbol(__ridr_remove);

int ridr_remove(struct ridr *map, unsigned long id, void **oldp)
{
	int ret;

	if (!map)
		return -EINVAL;
	ridr_lock(map);
	ret = __ridr_remove(map, id, oldp);
	ridr_unlock(map);
	return ret;
}
rk_export_symbol(ridr_remove);
