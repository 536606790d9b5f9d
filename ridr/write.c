// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * write.c - ridr's writers: init and locking, the free-id search,
 * insertion, removal, replace and the cyclic cursor.  Contracts per
 * function are in ridr.h; objects and their memory in mem.c.
 *
 * Writers are serialized (the map's lock or the caller's); everything
 * below runs under that serialization.  Every change readers can see is
 * one of the following steps, each of which leaves every id other than
 * the one being changed in the same state for a reader that sees the
 * word before the step as for one that sees it after (R1-R5 in read.c
 * are the readers' side):
 *
 * W1. Publication.  A new object (full node or bucket) is written
 *     completely (slots, records, header) while unreachable, with plain
 *     or unordered stores, and then made reachable by one
 *     rk_rcu_assign_pointer() (release) of the root word or of a slot.
 *     A reader whose dependent load returns the new word sees the
 *     initialisation (R1).
 * W2. Entries.  A new entry is published with rk_rcu_assign_pointer():
 *     the caller's initialisation of the object happens before.  NULL
 *     (removal) is stored with rk_rcu_init_pointer(): it carries no data.
 * W3. Tombstones.  Removing an id from a bucket stores NULL into its
 *     record's entry and leaves the key; the id can only come back into
 *     that record (W2), never another id: a record's key never changes
 *     while readers can reach it, so a reader that matched the key and
 *     then loaded the entry got the old or the new entry of that id
 *     (R4).  Tombstones are dropped when the bucket is copied (W5).
 * W4. Append.  A bucket that only this slot reaches and that has room
 *     takes a key greater than all of its keys in place: the key and the
 *     entry are written beyond @n (no reader looks there), then @n is
 *     increased with rk_store_release(), pairing with the readers'
 *     rk_load_acquire() (R3).  The order of the keys is kept.
 * W5. Copy on write.  Any other insertion into a bucket builds a new
 *     bucket with the live records of the slot's range plus the new one,
 *     publishes it in the slot (W1), and retires the old one (W12) unless
 *     other slots still reach it.  Before: the id absent; after: present;
 *     every other id the same in both.
 * W6. Burst.  A bucket that would exceed RIDR_BUCKET_MAX records turns
 *     into a full node one level down (or a full root for a root
 *     bucket) whose slots all point to the same old bucket, for the
 *     digits it has ids in.  Published in place of the bucket (W1).  A
 *     reader through the node reaches the same bucket and the same
 *     records, since a bucket's keys are the low @kshift bits of the ids
 *     and every slot pointing to it covers a range whose bits above
 *     @kshift are fixed (R2, R4).  Then the insertion goes on in the
 *     slot of the id: a shared bucket is never written in place but for
 *     tombstones and replace (W3); each slot gets a bucket of its own by
 *     W5 when it gets a new id ("unsharing").  A bucket at level 1
 *     bursts into a full leaf (W1) directly.
 * W7. Growth.  An id beyond the root's range: new full nodes are built
 *     above the old root (slot 0 of each points to the one below), the
 *     new id's object (a bucket, or a full leaf right after a root leaf)
 *     goes into the top one while it is unreachable, and the top one is
 *     published as the root (W1) with its level in the root word.  A
 *     reader with the old root word and one with the new see the same
 *     ids (the old root covers exactly slot 0's range).  A root bucket
 *     instead becomes a wider root bucket (W5) while it has room.
 * W8. Leaf store / removal.  A full leaf's slot gets the entry (W2) or
 *     NULL; the leaf's writer-only bitmaps and counts change, which
 *     readers never read (R2).
 * W9. Collapse.  A full leaf left with at most RIDR_COLLAPSE_MAX ids, or
 *     a full node with no full child and at most RIDR_MERGE_MAX ids
 *     below it, is replaced by one bucket holding exactly those ids (W1),
 *     and retired with the buckets below it (W12).
 * W10. Shrink.  A full root that uses only slot 0 is replaced by that
 *     child (its level in the root word, or a root bucket whose range is
 *     that slot's), with one release store; the old root is retired.
 * W11. Unlink.  An empty object's slot (or the root) is set to NULL
 *     (rk_rcu_init_pointer) before the object is retired; the object
 *     itself is not changed, so a reader inside it still finds its old
 *     answers (R5).
 * W12. Lifetime.  An object leaves the tree before rk_call_rcu(): it is
 *     freed after every reader that could have reached it has left its
 *     read-side critical section.  A bucket several slots point to is
 *     retired when the last of them stops pointing to it.
 * W14. Join.  A collapse (W9) below a full node whose slot left of it
 *     holds a bucket builds one new bucket with the parent's key width:
 *     the ids of every slot reaching that bucket (all left of the
 *     collapsing node's, else no join), then the node's ids; publishes
 *     it in each of those slots and in the node's (W1), then retires the
 *     old bucket and the node (W12).  Each slot's range has the same
 *     records in the old object and in the new one, and each slot's
 *     bits above the new @kshift are fixed by the path, as after a
 *     burst (W6): a reader through any of the slots, before or after
 *     its store, sees the same ids.  The shared bucket then behaves as
 *     a burst's: unshared by W5, tombstones by W3, a slot unlinked when
 *     its range empties.
 * W13. Conditional updates.  ridr_cmpxchg() and ridr_remove_if() compare
 *     the entry and store (W2, W8) or remove (W3, W8) under the writers'
 *     serialization: no other writer changes the entry in between, and
 *     readers see the change as any replace or removal.  ridr_store() is
 *     a replace if the id is allocated, else an insertion; ridr_insert()
 *     an allocation of [id, id].  None needs a new ordering.
 *
 * Allocation: an insertion first runs as a plan (ridr_insert_id() with no
 * stock: nothing is changed, the objects it needs are counted), then the
 * objects are reserved (mem.c: allocation without sleeping, preload,
 * spares), and only then does it run for real, taking exactly what the
 * plan counted.  So a failed allocation changes nothing.  Removal never
 * needs memory; collapses are skipped if their bucket cannot be had.
 *
 * Writer-only state: map->count, ->next, ->bytes, ->flags, ->keep_*, a
 * full node's @free, @count, @nfull and a bucket's @live and @refs.  The
 * map counters and flags are written with rk_write_once() so the getters
 * (and the locked calls, which read the flags before taking the lock)
 * may read a snapshot.
 */
#include "ridr/internal.h"

#include "compat/compat.h"

/* Key bits of a root bucket that must hold ids up to @id. */
static unsigned int ridr_root_kshift(unsigned long id)
{
	if (!(id >> 16))
		return 16;
	if (RIDR_ID_BITS > 32 && !((id >> 16) >> 16))
		return 32;
	return RIDR_ID_BITS;
}

/* ------------------------------------------------------------------ */
/* Init, locking, cursor                                               */

#if RK_HAVE_FLAVORS
void ridr_init_flavor(struct ridr *map, const rk_rcu_flavor_t *flavor)
{
	map->flavor = flavor;
	rk_rcu_init_pointer(map->root, NULL);
	map->keep_level = -1;
	map->flags = 0;
	map->keep_id = 0;
	map->next = 0;
	map->count = 0;
	map->bytes = 0;
	map->spare = NULL;
	map->nspare = 0;
	rk_spin_lock_init(&map->lock);
	rk_spin_lock_init(&map->spare_lock);
}
rk_export_symbol(ridr_init_flavor);

void ridr_init(struct ridr *map)
{
	ridr_init_flavor(map, RK_RCU_DEFAULT_FLAVOR);
}
rk_export_symbol(ridr_init);
#else
void __ridr_init(struct ridr *map, rk_lock_class_key_t *key)
{
	rk_rcu_init_pointer(map->root, NULL);
	map->external_lock = NULL;
	map->keep_level = -1;
	map->flags = 0;
	map->keep_id = 0;
	map->next = 0;
	map->count = 0;
	map->bytes = 0;
	map->spare = NULL;
	map->nspare = 0;
	rk_spin_lock_init(&map->lock);
	/* ridr_init() passes a key of its call site's own: each user's
	 * maps get a lockdep class of their own, as with spin_lock_init().
	 */
	rk_lockdep_set_class(&map->lock, key);
	rk_spin_lock_init(&map->spare_lock);
}
rk_export_symbol(__ridr_init);
#endif

void ridr_lock(struct ridr *map)
	rk_acquires(&map->lock)
{
	rk_spin_lock(&map->lock);
}
rk_export_symbol(ridr_lock);

void ridr_unlock(struct ridr *map)
	rk_releases(&map->lock)
{
	rk_spin_unlock(&map->lock);
}
rk_export_symbol(ridr_unlock);

unsigned long ridr_get_cursor(const struct ridr *map)
{
	return rk_read_once(map->next);
}
rk_export_symbol(ridr_get_cursor);

void __ridr_set_cursor(struct ridr *map, unsigned long next)
{
	rk_write_once(map->next, next);
	rk_write_once(map->flags, map->flags & ~RIDR_F_WRAPPED);
}
rk_export_symbol(__ridr_set_cursor);

int ridr_set_flags(struct ridr *map, unsigned int flags)
{
	if (!map || (flags & ~RIDR_FLAGS_PUBLIC))
		return -EINVAL;
	rk_write_once(map->flags,
		      (map->flags & ~RIDR_FLAGS_PUBLIC) | flags);
	return 0;
}
rk_export_symbol(ridr_set_flags);

/* ------------------------------------------------------------------ */
/* Free-id search                                                      */

/*
 * Where ridr_next_free() found the free id, when it is in an existing
 * object: a full leaf (@leaf, with the full nodes above it in @path), or
 * a bucket (@b, with @tomb the id's tombstone record or -1, and @clean
 * if only this slot reaches it).  Lets an allocation store at once.
 * Declared __rk_uninitialized (no compiler zeroing in the kernel): each
 * path of ridr_next_free() writes what it sets before anyone reads it
 * (@leaf and @b first, @tomb and @clean with @b, @path with @leaf).
 */
struct ridr_hint {
	struct ridr_node *path[RIDR_MAX_LEVELS];
	unsigned int top;
	struct ridr_node *leaf;
	struct ridr_bucket *b;
	int tomb;
	bool clean;
};

/*
 * Lowest free id >= @start, or -ENOSPC if every id from @start to
 * RIDR_MAX_ID is taken.  Full nodes: the @free bitmaps lead down, with at
 * most one step back per level (a set bit at @start's own digit promises
 * a free id in that slot, not necessarily one >= @start).  A slot
 * holding a bucket always has free ids (RIDR_BUCKET_MAX < 64), searched
 * among its records.  Ids beyond the root's range are free.  Always
 * inline: one call frame less on every allocation (callgrind: ~20
 * instructions a remove+alloc pair, with ridr_locate()'s).
 */
static rk_always_inline int ridr_next_free(const struct ridr *map,
					   unsigned long start,
					   unsigned long *out,
					   struct ridr_hint *h)
{
	void *w = ridr_protected(map, map->root);
	unsigned long lo = start;
	unsigned int level, top;
	struct ridr_node *node;

	h->leaf = NULL;
	h->b = NULL;
	if (!w) {
		*out = start;
		return 0;
	}
	if (ridr_kind(w)) {
		struct ridr_bucket *b = ridr_to_bucket(w);
		unsigned int ks = b->kshift;

		if (ks < RIDR_ID_BITS && (start >> ks)) {
			*out = start;
			return 0;
		}
		if (ridr_bucket_gap(map, b, start, ridr_low_mask(ks), out,
				    &h->tomb)) {
			h->b = b;
			h->clean = true;
			return 0;
		}
		if (ks >= RIDR_ID_BITS)
			return -ENOSPC;
		*out = 1UL << ks;
		return 0;
	}
	top = ridr_root_level(w);
	h->top = top;
	if (start > ridr_span(top)) {
		*out = start;
		return 0;
	}
	node = ridr_to_node(w);
	level = top;
	for (;;) {
		uint64_t bits = node->free & ridr_valid_slots(level) &
				(~0ULL << ridr_digit(lo, level));
		bool down = false;

		if (!level && bits) {
			/* A full leaf: its lowest free slot at or after
			 * @lo's digit (@lo itself if that one is free).
			 */
			h->leaf = node;
			*out = (lo & ~(unsigned long)RIDR_MASK) | rk_ffs64(bits);
			return 0;
		}

		while (bits) {
			unsigned int d = rk_ffs64(bits);
			unsigned long slo = d == ridr_digit(lo, level) ? lo :
					    ridr_slot_base(lo, level, d);
			struct ridr_bucket *b;
			void *s;

			bits &= bits - 1;
			if (!level) {
				h->leaf = node;
				*out = slo;
				return 0;
			}
			s = ridr_protected(map, node->slots[d]);
			if (!s) {
				*out = slo;
				return 0;
			}
			if (!ridr_kind(s)) {
				h->path[level] = node;
				node = ridr_to_node(s);
				level--;
				lo = slo;
				down = true;
				break;
			}
			b = ridr_to_bucket(s);
			if (ridr_bucket_gap(map, b, slo, slo | ridr_slot_span(level),
					    out, &h->tomb)) {
				h->b = b;
				h->clean = b->u.w.refs == 1 &&
					   b->kshift == level * RIDR_SHIFT;
				return 0;
			}
		}
		if (down)
			continue;
		/* Nothing free at or after lo below this node: go on after
		 * it in its parent (further up if it was the last slot).
		 */
		for (;;) {
			unsigned long end = lo | ridr_span(level);

			if (end == RIDR_MAX_ID)
				return -ENOSPC;
			if (level == top) {
				*out = end + 1;	/* beyond the root's range */
				return 0;
			}
			level++;
			node = h->path[level];
			if (((end + 1) & ~ridr_span(level)) ==
			    (lo & ~ridr_span(level))) {
				lo = end + 1;
				break;
			}
		}
	}
}

int ridr_first_free(const struct ridr *map, unsigned long start,
		    unsigned long *out)
{
	struct ridr_hint h __rk_uninitialized;	/* see struct ridr_hint */

	return ridr_next_free(map, start, out, &h);
}

/* ------------------------------------------------------------------ */
/* Insertion                                                           */

/* Where a bucket hangs: the root, or slot @d of the full node @parent at
 * @level; the ids that reach it through there are [@lo, @hi].
 */
struct ridr_place {
	void __rk_rcu **slot;
	struct ridr_node *parent;
	unsigned int level;
	unsigned long lo, hi;
	bool root;
};

/* Largest id of a used record of @b in [@lo, @hi] (0 if none). */
static unsigned long ridr_bucket_max(const struct ridr *map,
				     const struct ridr_bucket *b,
				     unsigned long lo, unsigned long hi)
{
	unsigned long max = 0;
	unsigned int i;

	for (i = 0; i < b->n; i++) {
		unsigned long id = ridr_bucket_id(b, i, lo);

		if (id >= lo && id <= hi &&
		    ridr_protected(map, ridr_entries(b)[i]))
			max = id;
	}
	return max;
}

/* The slot at @pl no longer reaches @b, whose @m records in the slot's
 * range are now unreachable through it (W5, W12).
 */
static void ridr_bucket_unref(struct ridr *map, struct ridr_bucket *b,
			      unsigned int m)
{
	if (--b->u.w.refs == 0)
		ridr_retire_bucket(map, b);
	else
		b->u.w.live -= m;
}

/* Publish @w at @pl (W1): the root word or a slot. */
static void ridr_place_set(struct ridr *map, const struct ridr_place *pl,
			   void *w)
{
	if (pl->root)
		rk_rcu_assign_pointer(map->root, w);
	else
		rk_rcu_assign_pointer(*pl->slot, w);
}

/* A new bucket for id @id alone at slot @d of @node (level @level). */
static void ridr_new_bucket(struct ridr *map, struct ridr_stock *st,
			    struct ridr_need *need, struct ridr_node *node,
			    unsigned int level, unsigned long id, void *entry)
{
	struct ridr_bucket *b;

	if (!st) {
		need->bucket_cap = ridr_bucket_cap_for(1);
		need->bucket_kshift = level * RIDR_SHIFT;
		return;
	}
	b = ridr_stock_bucket(map, st, level * RIDR_SHIFT);
	ridr_bucket_push(b, id, entry);
	b->u.w.live = 1;
	rk_rcu_assign_pointer(node->slots[ridr_digit(id, level)],
			      ridr_bucket_word(b));
	node->count++;
}

/* A new full leaf for id @id alone (@ptr, NULL if reserved) at its slot
 * of the level-1 node @node.
 */
static void ridr_new_leaf(struct ridr *map, struct ridr_stock *st,
			  struct ridr_need *need, struct ridr_node *node,
			  unsigned long id, void *ptr)
{
	unsigned int d = ridr_digit(id, 0);
	struct ridr_node *leaf;

	if (!st) {
		need->nodes++;
		return;
	}
	leaf = ridr_stock_node(map, st, 0);
	/* Unreachable until the slot store below (W1). */
	rk_rcu_init_pointer(leaf->slots[d], ptr);
	leaf->free &= ~(1ULL << d);
	leaf->count = 1;
	rk_rcu_assign_pointer(node->slots[ridr_digit(id, 1)],
			      ridr_node_word(leaf));
	node->count++;
	node->nfull++;
}

/*
 * Build full nodes from level @from + 1 to @to above the root node
 * @root (level @from), and a bucket for @id in the top one (W7); or, if
 * @root is a full leaf and @id lies in the block of 64 right after it, a
 * full leaf (the dense growth of ridr_insert_id(): a map filled from 0
 * up gets a leaf for ids 64-127 as it does for every later block).
 */
static void ridr_grow(struct ridr *map, struct ridr_stock *st,
		      struct ridr_need *need, struct ridr_node *root,
		      unsigned int from, unsigned int to, unsigned long id,
		      void *entry)
{
	struct ridr_node *child = root, *top = NULL;
	bool leaf = !from && to == 1 && ridr_digit(id, 1) == 1;
	unsigned int level;

	if (!st) {
		need->nodes += to - from;
		if (leaf)
			ridr_new_leaf(map, NULL, need, NULL, id, NULL);
		else
			ridr_new_bucket(map, NULL, need, NULL, to, id, entry);
		return;
	}
	for (level = from + 1; level <= to; level++) {
		top = ridr_stock_node(map, st, level);
		/* Unreachable: plain stores (W1). */
		rk_rcu_init_pointer(top->slots[0], ridr_node_word(child));
		top->count = 1;
		top->nfull = 1;
		if (!child->free)
			top->free &= ~1ULL;
		child = top;
	}
	if (leaf)
		ridr_new_leaf(map, st, need, top, id,
			      entry == RIDR_RESERVED ? NULL : entry);
	else
		ridr_new_bucket(map, st, need, top, to, id, entry);
	rk_rcu_assign_pointer(map->root, ridr_root_word(top, to));
}

/* Record an allocation in a full leaf, and clear free bits upwards while
 * nodes fill up; @path[l] is the node at level l above the leaf.
 */
static rk_always_inline void ridr_leaf_take(struct ridr_node *leaf,
					    unsigned int d,
					    struct ridr_node **path,
					    unsigned int top, unsigned long id)
{
	struct ridr_node *node = leaf;
	unsigned int level;

	leaf->free &= ~(1ULL << d);
	leaf->count++;
	for (level = 1; level <= top && !node->free; level++) {
		node = path[level];
		node->free &= ~(1ULL << ridr_digit(id, level));
	}
}

/* The address of record @i's entry in bucket @b (ridr_entries(b) + @i),
 * indexed off the bucket (struct __ridr_bucket_recs), so that the access
 * is one instruction also where it is volatile.  A caller that loads and
 * then clears the entry computes it once (a store to the map's count in
 * between would otherwise make the compiler load @b's entry offset
 * again).
 */
static rk_always_inline void __rk_rcu **ridr_record_slot(struct ridr_bucket *b,
							 unsigned long i)
{
	return &((struct __ridr_bucket_recs *)b)->r.w[b->eoff + i];
}

/* Append (@key, @entry) to a bucket in place (W4); @kb is
 * ridr_key_bytes() of its kshift.
 */
static rk_always_inline void ridr_bucket_append_kb(struct ridr_bucket *b,
						   unsigned int kb,
						   unsigned long key,
						   void *entry)
{
	/* Indexed off the bucket (struct __ridr_bucket_recs): each store
	 * is one instruction, also where it is a volatile access.
	 */
	struct __ridr_bucket_recs *r = (struct __ridr_bucket_recs *)b;
	unsigned long n = b->n;

	if (kb == 2)
		rk_write_once(r->r.k16[n], (uint16_t)key);
	else if (kb == 4)
		rk_write_once(r->r.k32[n], (uint32_t)key);
	else
		rk_write_once(r->r.k64[n], (uint64_t)key);
	rk_rcu_init_pointer(*ridr_record_slot(b, n), entry);
	/* Pairs with rk_load_acquire() in readers (R3). */
	rk_store_release(b->n, (uint8_t)(n + 1));
	b->u.w.live++;
}

static void ridr_bucket_append(struct ridr_bucket *b, unsigned long key,
			       void *entry)
{
	ridr_bucket_append_kb(b, ridr_key_bytes(b->kshift), key, entry);
}

/*
 * The records a copy of the full bucket @b (@m used records) gets when
 * an append found it full (cyclic allocation): room for the next ones,
 * up to twice the old capacity.
 */
static unsigned int ridr_append_cap(const struct ridr_bucket *b,
				    unsigned int m)
{
	unsigned int cap = m + 1 > 2 * m ? m + 1 : 2 * m;
	unsigned int more = 2 * b->cap < RIDR_BUCKET_MAX ? 2 * b->cap :
							   RIDR_BUCKET_MAX;

	return cap > more ? cap : more;
}

/*
 * Insert @id (free) into the bucket @b at @pl.  Plan (@st NULL): count in
 * *@need what it takes, change nothing.  Run: take it from @st.  Both
 * follow the same steps (W3-W6).
 */
static void ridr_bucket_insert(struct ridr *map, struct ridr_place pl,
			       struct ridr_bucket *b, unsigned long id,
			       void *entry, void *ptr, struct ridr_stock *st,
			       struct ridr_need *need)
{
	bool planned_burst = false;

	for (;;) {
		bool clean = pl.root || (b->u.w.refs == 1 &&
					 b->kshift == pl.level * RIDR_SHIFT);
		/* Only a root bucket can be asked for an id beyond its
		 * range (it could not widen: it bursts, then grows).
		 */
		bool inside = id <= pl.hi;
		unsigned long key = id & ridr_low_mask(b->kshift);
		int i = inside ? ridr_bucket_index(b, id) : -1;
		unsigned int m, ks, q, d;
		struct ridr_node *f;
		bool dense;

		if (i >= 0) {	/* W3: a tombstone of this very id */
			if (st) {
				rk_rcu_assign_pointer(ridr_entries(b)[i], entry);
				b->u.w.live++;
			}
			return;
		}
		if (inside && clean && b->n < b->cap &&
		    b->n < RIDR_BUCKET_MAX &&
		    (!b->n || key > ridr_key(b, b->n - 1u))) {
			if (st)	/* W4 */
				ridr_bucket_append(b, key, entry);
			return;
		}
		/* The used records in the slot's range.  With one slot
		 * pointing here (@pl's) that is @live, every used record the
		 * bucket reaches (struct ridr_bucket); a shared one is
		 * counted, and so is one the plan has burst (@refs is not
		 * updated by a plan).
		 */
		m = b->u.w.refs == 1 && !planned_burst ?
			    b->u.w.live :
			    ridr_bucket_count(map, b, pl.lo, pl.hi);
		/* Ids in one block of 64 fill a full leaf early: direct
		 * indexing once a quarter of it would be used.
		 */
		dense = m + 1 > RIDR_LEAF_BURST &&
			(pl.root ? id < RIDR_SLOTS &&
				   ridr_bucket_max(map, b, pl.lo, pl.hi) < RIDR_SLOTS :
				   pl.level == 1);
		if (inside && !dense && m + 1 <= RIDR_BUCKET_MAX) {	/* W5 */
			struct ridr_bucket *nb;
			unsigned int cap = m + 1;

			ks = pl.root ? b->kshift : pl.level * RIDR_SHIFT;
			if (clean && b->n == b->cap &&
			    (!b->n || key > ridr_key(b, b->n - 1u)))
				cap = ridr_append_cap(b, m);
			if (!st) {
				need->bucket_cap = ridr_bucket_cap_for(cap);
				need->bucket_kshift = ks;
				return;
			}
			nb = ridr_stock_bucket(map, st, ks);
			ridr_bucket_copy(map, nb, b, pl.lo, pl.hi, true, id, entry);
			nb->u.w.live = m + 1;
			ridr_place_set(map, &pl, ridr_bucket_word(nb));
			ridr_bucket_unref(map, b, m);
			return;
		}
		/* W6: burst. */
		if (!st) {
			need->nodes++;
			planned_burst = true;
		}
		if (pl.root) {
			unsigned long max = ridr_bucket_max(map, b, pl.lo, pl.hi);

			if (inside && id > max)
				max = id;
			q = ridr_levels_for(max) - 1;
			if (!inside && !q)
				q = 1;	/* a leaf could not take @id */
		} else {
			q = pl.level - 1;
		}
		if (!q) {	/* into a full leaf */
			struct ridr_node *leaf;
			unsigned int j;

			if (!st)
				return;
			leaf = ridr_stock_node(map, st, 0);
			for (j = 0; j < b->n; j++) {
				unsigned long rid = ridr_bucket_id(b, j, pl.lo);
				void *e = ridr_protected(map, ridr_entries(b)[j]);

				if (rid < pl.lo || rid > pl.hi || !e)
					continue;
				d = ridr_digit(rid, 0);
				rk_rcu_init_pointer(leaf->slots[d],
						    e == RIDR_RESERVED ? NULL : e);
				leaf->free &= ~(1ULL << d);
				leaf->count++;
			}
			d = ridr_digit(id, 0);
			rk_rcu_init_pointer(leaf->slots[d], ptr);
			leaf->free &= ~(1ULL << d);
			leaf->count++;
			ridr_place_set(map, &pl, pl.root ?
				       ridr_root_word(leaf, 0) :
						 ridr_node_word(leaf));
			if (!pl.root)
				pl.parent->nfull++;
			ridr_bucket_unref(map, b, m);
			return;
		}
		d = ridr_digit(id, q);
		f = NULL;
		if (st) {
			uint64_t digits = 0;
			unsigned int j;

			f = ridr_stock_node(map, st, q);
			for (j = 0; j < b->n; j++) {
				unsigned long rid = ridr_bucket_id(b, j, pl.lo);

				if (rid >= pl.lo && rid <= pl.hi &&
				    ridr_protected(map, ridr_entries(b)[j]))
					digits |= 1ULL << ridr_digit(rid, q);
			}
			while (digits) {
				j = rk_ffs64(digits);
				digits &= digits - 1;
				rk_rcu_init_pointer(f->slots[j],
						    ridr_bucket_word(b));
				f->count++;
				b->u.w.refs++;
			}
			ridr_place_set(map, &pl, pl.root ?
				       ridr_root_word(f, q) :
						 ridr_node_word(f));
			if (!pl.root)
				pl.parent->nfull++;
			b->u.w.refs--;	/* @pl no longer points to @b */
		}
		if (pl.root && id > ridr_span(q)) {
			/* The root bucket could not widen (W7): grow above
			 * the new full root.
			 */
			ridr_grow(map, st, need, f, q, ridr_levels_for(id) - 1,
				  id, entry);
			return;
		}
		pl.root = false;
		pl.parent = f;
		pl.slot = f ? &f->slots[d] : NULL;
		pl.level = q;
		pl.lo = ridr_slot_base(id, q, d);
		pl.hi = pl.lo | ridr_slot_span(q);
		if (!ridr_bucket_count(map, b, pl.lo, pl.hi)) {
			ridr_new_bucket(map, st, need, f, q, id, entry);
			return;
		}
		/* The slot of @id reaches @b (shared): go on there. */
	}
}

/*
 * Insert free id @id with @ptr: plan (@st NULL, counts into *@need) or
 * run (takes from @st).
 */
static void ridr_insert_id(struct ridr *map, unsigned long id, void *ptr,
			   struct ridr_stock *st, struct ridr_need *need)
{
	struct ridr_node *path[RIDR_MAX_LEVELS];
	void *entry = ptr ? ptr : RIDR_RESERVED;	/* in buckets */
	void *w = ridr_protected(map, map->root);
	struct ridr_place pl;
	struct ridr_node *node;
	unsigned int level, top, d;

	if (!w) {
		unsigned int ks = ridr_root_kshift(id);
		struct ridr_bucket *b;

		if (!st) {
			need->bucket_cap = ridr_bucket_cap_for(1);
			need->bucket_kshift = ks;
			return;
		}
		b = ridr_stock_bucket(map, st, ks);
		ridr_bucket_push(b, id, entry);
		b->u.w.live = 1;
		rk_rcu_assign_pointer(map->root, ridr_bucket_word(b));
		return;
	}
	if (ridr_kind(w)) {
		struct ridr_bucket *b = ridr_to_bucket(w);
		unsigned int ks = b->kshift;

		pl.root = true;
		pl.slot = NULL;
		pl.parent = NULL;
		pl.level = 0;
		pl.lo = 0;
		pl.hi = ridr_low_mask(ks);
		if (ks < RIDR_ID_BITS && (id >> ks) &&
		    b->u.w.live + 1 <= RIDR_BUCKET_MAX) {
			/* W7 for a root bucket: a wider copy. */
			struct ridr_bucket *nb;

			ks = ridr_root_kshift(id);
			if (!st) {
				need->bucket_cap =
					ridr_bucket_cap_for(b->u.w.live + 1);
				need->bucket_kshift = ks;
				return;
			}
			nb = ridr_stock_bucket(map, st, ks);
			ridr_bucket_copy(map, nb, b, pl.lo, pl.hi, true, id, entry);
			nb->u.w.live = b->u.w.live + 1;
			rk_rcu_assign_pointer(map->root, ridr_bucket_word(nb));
			ridr_retire_bucket(map, b);
			return;
		}
		ridr_bucket_insert(map, pl, b, id, entry, ptr, st, need);
		return;
	}
	top = ridr_root_level(w);
	node = ridr_to_node(w);
	if (id > ridr_span(top)) {
		ridr_grow(map, st, need, node, top, ridr_levels_for(id) - 1,
			  id, entry);
		return;
	}
	for (level = top;; level--) {
		void *s;

		d = ridr_digit(id, level);
		if (!level) {	/* W8 */
			if (st) {
				if (ptr)
					rk_rcu_assign_pointer(node->slots[d], ptr);
				ridr_leaf_take(node, d, path, top, id);
			}
			return;
		}
		s = ridr_protected(map, node->slots[d]);
		if (!s) {
			void *prev = d ? ridr_protected(map, node->slots[d - 1]) :
					 NULL;

			if (level == 1 && prev && !ridr_kind(prev)) {
				/* Dense growth: the leaf on the left exists,
				 * so start a full leaf here too.
				 */
				ridr_new_leaf(map, st, need, node, id, ptr);
				return;
			}
			ridr_new_bucket(map, st, need, node, level, id, entry);
			return;
		}
		if (ridr_kind(s)) {
			pl.root = false;
			pl.slot = &node->slots[d];
			pl.parent = node;
			pl.level = level;
			pl.lo = ridr_slot_base(id, level, d);
			pl.hi = pl.lo | ridr_slot_span(level);
			ridr_bucket_insert(map, pl, ridr_to_bucket(s), id,
					   entry, ptr, st, need);
			return;
		}
		path[level] = node;
		node = ridr_to_node(s);
	}
}

/* ------------------------------------------------------------------ */
/* Allocation entry points                                             */

/*
 * The common insertions need no new object: the id's slot in a full
 * leaf (W8), its tombstone in a bucket (W3), or an append (W4).  Done
 * here from what the search found; false sends the insertion the long
 * way (plan, reserve, run).
 */
static bool ridr_store_fast(struct ridr_hint *h, unsigned long id, void *ptr)
{
	struct ridr_bucket *b = h->b;
	unsigned long key;

	if (h->leaf) {
		unsigned int d = ridr_digit(id, 0);

		if (ptr)
			rk_rcu_assign_pointer(h->leaf->slots[d], ptr);
		ridr_leaf_take(h->leaf, d, h->path, h->top, id);
		return true;
	}
	if (!b)
		return false;
	if (h->tomb >= 0) {
		rk_rcu_assign_pointer(ridr_entries(b)[h->tomb],
				      ptr ? ptr : RIDR_RESERVED);
		b->u.w.live++;
		return true;
	}
	key = id & ridr_low_mask(b->kshift);
	if (h->clean && b->n < b->cap && b->n < RIDR_BUCKET_MAX &&
	    (!b->n || key > ridr_key(b, b->n - 1u))) {
		ridr_bucket_append(b, key, ptr ? ptr : RIDR_RESERVED);
		return true;
	}
	return false;
}

/* Key @i of the unpublished key array @k, @kb bytes wide (a constant). */
static rk_always_inline void ridr_key_put(void *k, unsigned int kb,
					  unsigned int i, unsigned long key)
{
	if (kb == 2)
		((uint16_t *)k)[i] = (uint16_t)key;
	else if (kb == 4)
		((uint32_t *)k)[i] = (uint32_t)key;
	else
		((uint64_t *)k)[i] = (uint64_t)key;
}

/*
 * ridr_cyclic_compact()'s copy, for keys @kb bytes wide: the records of
 * @b (@n of them, every key below @id) whose entry is not a tombstone,
 * then (@id, @entry), into the new bucket @nb; its count is set, not
 * published.  What ridr_bucket_copy(map, ) does for a whole root bucket and
 * an id past its keys, without a branch per record (a full cyclic bucket
 * is mostly tombstones): each record is written at the next free index
 * @m, which moves on only past a live one.  So nothing is written beyond
 * the final @m, whose record (@id, @entry) overwrites, and @nb needs room
 * for the live records and the new one only.  The copy ends with the
 * last of the @live records that are not tombstones (@b's u.w.live):
 * the tombstones after it are not read.  A churn behind long-lived ids
 * (a process's timers: the churned id was deleted before the create
 * that fills the bucket) has its live records first, so the copy reads
 * those and stops, not the 32 records; @i < @n bounds it whatever
 * @live says.
 */
static rk_always_inline void ridr_compact_kb(const struct ridr *map,
					     struct ridr_bucket *nb,
					     const struct ridr_bucket *b,
					     unsigned int n, unsigned int live,
					     unsigned long id, void *entry,
					     unsigned int kb)
{
	void __rk_rcu **se = ridr_entries(b), **de = ridr_entries(nb);
	void *dk = __ridr_bucket_data(nb);
	unsigned int i, m = 0;

	for (i = 0; m < live && i < n; i++) {
		void *e = ridr_protected(map, se[i]);

		ridr_key_put(dk, kb, m, __ridr_root_key_below(b, kb, i));
		rk_rcu_init_pointer(de[m], e);
		m += !!e;
	}
	ridr_key_put(dk, kb, m, id);
	rk_rcu_init_pointer(de[m], entry);
	nb->n = (uint8_t)(m + 1);
}

/*
 * ridr_cyclic_append() found the root bucket @b full (@n == @cap; the
 * records of removed ids stay until a copy, W3): what
 * ridr_bucket_insert() does then for an id past every key, a W5 copy
 * with the live records and (@id, @entry) appended, published at the
 * root, the old bucket retired, with room for the next appends
 * (ridr_append_cap()).  Not for an id below RIDR_SLOTS (the general
 * path may turn a dense root into a full leaf), a bucket that another
 * slot reaches, or more than RIDR_BUCKET_MAX live records (a burst).
 * False, nothing changed, if it does not apply or the allocation
 * fails (the general path then tries, and may preload).
 */
static bool ridr_cyclic_compact(struct ridr *map, struct ridr_bucket *b,
				unsigned long id, void *entry)
{
	unsigned int m = b->u.w.live;
	struct ridr_bucket *nb;

	if (b->n != b->cap || id < RIDR_SLOTS || b->u.w.refs != 1 ||
	    m + 1 > RIDR_BUCKET_MAX)
		return false;
	/* Unzeroed: ridr_compact_kb() writes records 0 to @m, @nb's count
	 * is m + 1 >= 1.
	 */
	nb = ridr_bucket_new_unzeroed(map, b->kshift,
				      ridr_bucket_cap_for(ridr_append_cap(b, m)));
	if (!nb)
		return false;
	/* @entry is not NULL: an entry or RIDR_RESERVED. */
	if (b->kshift <= 16)
		ridr_compact_kb(map, nb, b, b->n, m, id, entry, 2);
	else if (b->kshift <= 32)
		ridr_compact_kb(map, nb, b, b->n, m, id, entry, 4);
	else
		ridr_compact_kb(map, nb, b, b->n, m, id, entry, 8);
	rk_warn_on_once(nb->n != m + 1);	/* @live counts the entries */
	nb->u.w.live = m + 1;
	rk_rcu_assign_pointer(map->root, ridr_bucket_word(nb));	/* W1 */
	ridr_retire_bucket(map, b);				/* W12 */
	return true;
}

/*
 * The root word @w is a bucket: bit 0 (RIDR_TAG_FULL) clear and a kind.
 * ridr_kind() != 0 without its branch, to be or-ed into a group of tests.
 */
static rk_always_inline bool ridr_root_is_bucket(const void *w)
{
	unsigned long v = (unsigned long)w;

	return ((v & RIDR_KIND_MASK) != 0) & ((v & RIDR_TAG_FULL) == 0);
}

/*
 * ridr_cyclic_append() for a root bucket @b whose keys are @kb bytes
 * wide (a constant in each call: the key loads and the store are then
 * one instruction each, and the key width is tested once, not at each).
 * A root bucket's keys are whole ids below 2^kshift: the cursor's @id
 * must be inside that range and past the last key of a bucket that is
 * not empty (an empty one takes the general path).  2- and 4-byte keys:
 * kshift <= 32 < RIDR_ID_BITS, a valid shift, and the range test also
 * refuses RIDR_MAX_ID (the cursor at it must take the general path,
 * which sets the wrap); 8-byte keys may cover every id: RIDR_MAX_ID is
 * refused by name.  Each test is a compare and a branch: fewer
 * instructions than the same tests or-ed into one flag (a setcc and an
 * or each), and as predictable.
 */
static rk_always_inline bool ridr_cyclic_append_kb(struct ridr *map,
						   struct ridr_bucket *b,
						   unsigned long id,
						   void *entry,
						   unsigned int kb,
						   bool compact)
{
	unsigned long n = b->n;
	unsigned int ks = b->kshift;

	if (!n)
		return false;
	if (id <= __ridr_root_key_below(b, kb, n - 1))
		return false;
	if (kb < 8) {
		if (id >> ks)
			return false;
	} else if ((ks < RIDR_ID_BITS && (id >> ks)) || id == RIDR_MAX_ID) {
		return false;
	}
	if (n < b->cap && n < RIDR_BUCKET_MAX)
		ridr_bucket_append_kb(b, kb, id, entry);
	else if (!compact || !ridr_cyclic_compact(map, b, id, entry))
		return false;
	return true;
}

/*
 * The steady state of cyclic allocation in a small map (a process's
 * timers, churning): the cursor's id is past every key of the root
 * bucket.  If the bucket has room this is what ridr_pick() +
 * ridr_store_fast() do in that case (the cursor's id is free, it becomes
 * the new last record, W4: an append published by the release of @n),
 * without the search's general steps; if it is full, what the general
 * path would do (ridr_cyclic_compact()); and what ridr_do_alloc() then
 * does to the count and the cursor, which cannot wrap here (the id is
 * the cursor, not RIDR_MAX_ID, and no wrap is pending).  False, nothing
 * changed, in every other case.  The in-VM profile of timer_churn
 * counted ~37 guest blocks per allocation in the general path.  A full
 * bucket is copied only if @compact (a constant): the inline fast path
 * of ridr_alloc_locked() makes no call (so it needs few registers and
 * no stack frame) and leaves that case to ridr_alloc_general().
 */
static rk_always_inline bool ridr_cyclic_append(struct ridr *map, void *ptr,
						unsigned long min,
						unsigned long max,
						unsigned long *idp,
						bool compact)
{
	unsigned long w = (unsigned long)ridr_protected(map, map->root), bw;
	unsigned long id = map->next;
	void *entry = ptr ? ptr : RIDR_RESERVED;
	bool done;

	/* First: the cursor is inside [@min, @max], no wrap is pending
	 * (RIDR_MAX_ID is refused with the key width, below).
	 */
	if (id < min || id > max || (map->flags & RIDR_F_WRAPPED))
		return false;
	/* Then the root is a bucket, and its key width: by its kind tag
	 * (__ridr_root_bucket_as(); ridr_bucket_word() tags a bucket with
	 * the kind of its @kshift), 32-bit keys first: a cyclic allocator's
	 * ids pass 2^16 early in a long churn.
	 */
	if (__ridr_root_bucket_as(w, RIDR_KIND_B32, &bw))
		done = ridr_cyclic_append_kb(map, (struct ridr_bucket *)bw, id,
					     entry, 4, compact);
	else if (__ridr_root_bucket_as(w, RIDR_KIND_B16, &bw))
		done = ridr_cyclic_append_kb(map, (struct ridr_bucket *)bw, id,
					     entry, 2, compact);
	else if (__ridr_root_bucket_as(w, RIDR_KIND_B64, &bw))
		done = ridr_cyclic_append_kb(map, (struct ridr_bucket *)bw, id,
					     entry, 8, compact);
	else
		return false;	/* NULL, or a full node */
	if (!done)
		return false;
	rk_write_once(map->count, map->count + 1);
	rk_write_once(map->next, id + 1);
	*idp = id;
	return true;
}

/* ridr_alloc_lowest() below a full root node @node at level @top:
 * inline, so that a constant @top makes each level's shifts and masks
 * constants and unrolls the walk.
 */
static rk_always_inline bool ridr_lowest_below(struct ridr *map, void *ptr,
					       unsigned long min,
					       unsigned long max,
					       unsigned long *idp,
					       struct ridr_node *node,
					       unsigned int top)
{
	struct ridr_node *path[RIDR_MAX_LEVELS] __rk_uninitialized;
	unsigned long id = min;
	unsigned int level, d;

	if (min > ridr_span(top))
		return false;
	for (level = top;; level--) {
		unsigned int digit = ridr_digit(id, level);
		uint64_t bits = node->free & ridr_valid_slots(level) &
				(~0ULL << digit);
		void *s;

		if (!bits)
			return false;
		d = rk_ffs64(bits);
		if (d != digit)
			id = ridr_slot_base(id, level, d);
		if (!level)
			break;
		s = ridr_protected(map, node->slots[d]);
		if (!s || ridr_kind(s))
			return false;
		path[level] = node;
		node = ridr_to_node(s);
	}
	if (id > max)
		return false;
	if (ptr)
		rk_rcu_assign_pointer(node->slots[d], ptr);
	ridr_leaf_take(node, d, path, top, id);
	rk_write_once(map->count, map->count + 1);
	*idp = id;
	return true;
}

/*
 * The steady state of allocating the lowest free id (churn: a removal
 * left a free id, the next allocation takes the lowest one), in the two
 * places where that is one store: a free slot of a full leaf reached
 * through full nodes (W8: the entry published by the release of its
 * slot, a reservation leaves the slot NULL; the free bits cleared
 * upwards while nodes fill), or a root bucket's tombstone (W3: the
 * record takes the entry back) or its end (W4: an append).  What
 * ridr_pick() + ridr_store_fast() do in those cases and what
 * ridr_do_alloc() then does to the count, without the general search's
 * hint, its other cases or its stack frame.
 *
 * Full nodes: each level takes the lowest free slot at or after @min's
 * digit there (past that digit, the slot's base: @min's lower digits no
 * longer matter), which is also the general search's first choice, so
 * the id is the same one: the lowest free id >= @min.  A root bucket:
 * ridr_bucket_gap(), as the general search calls it.
 *
 * False, nothing changed, wherever the general search does more: an
 * empty map, @min beyond the root's range, a level with no free slot at
 * or after the digit (a set bit at @min's own digit promises a free id
 * in that slot, not one >= @min: the general search steps back), an
 * empty slot (a new leaf to build) or a bucket on the way, a root
 * bucket with no free id left in its range or whose free id needs a
 * copy (a gap between keys, no room), an id past @max.
 */
static rk_always_inline bool ridr_alloc_lowest(struct ridr *map, void *ptr,
					       unsigned long min,
					       unsigned long max,
					       unsigned long *idp)
{
	void *w = ridr_protected(map, map->root);
	struct ridr_node *node;
	unsigned long id = min;
	unsigned int top;

	if (!w)
		return false;
	if (ridr_root_is_bucket(w)) {
		struct ridr_bucket *b = ridr_to_bucket(w);
		void *entry = ptr ? ptr : RIDR_RESERVED;
		unsigned int ks = b->kshift;
		unsigned long key;
		int tomb;

		if ((ks < RIDR_ID_BITS && (min >> ks)) ||
		    !ridr_bucket_gap(map, b, min, ridr_low_mask(ks), &id,
				     &tomb) ||
		    id > max)
			return false;
		if (tomb >= 0) {
			rk_rcu_assign_pointer(ridr_entries(b)[tomb], entry);
			b->u.w.live++;
			goto done;
		}
		key = id & ridr_low_mask(ks);
		if (b->n >= b->cap || b->n >= RIDR_BUCKET_MAX ||
		    (b->n && key <= ridr_key(b, b->n - 1u)))
			return false;
		ridr_bucket_append(b, key, entry);
		goto done;
	}
	/* Full nodes: a constant height for maps of up to 4096 ids, so
	 * that each level's shifts and masks are constants.
	 */
	top = ridr_root_level(w);
	node = ridr_to_node(w);
	if (top == 0)
		return ridr_lowest_below(map, ptr, min, max, idp, node, 0);
	if (top == 1)
		return ridr_lowest_below(map, ptr, min, max, idp, node, 1);
	return ridr_lowest_below(map, ptr, min, max, idp, node, top);
done:
	rk_write_once(map->count, map->count + 1);
	*idp = id;
	return true;
}

/* The id an allocation takes: lowest free in [@min, @max], or from the
 * cursor with wrap-around.
 */
static int ridr_pick(const struct ridr *map, unsigned long min,
		     unsigned long max, bool cyclic, unsigned long *idp,
		     struct ridr_hint *h)
{
	unsigned long start = min, id;
	int ret;

	if (cyclic) {
		start = rk_read_once(map->next);
		if (start < min || start > max)
			start = min;
	}
	ret = ridr_next_free(map, start, &id, h);
	if (!ret && id > max)
		ret = -ENOSPC;
	if (ret == -ENOSPC && start > min) {
		ret = ridr_next_free(map, min, &id, h);
		if (!ret && id >= start)
			ret = -ENOSPC;
	}
	if (!ret)
		*idp = id;
	return ret;
}

/*
 * Allocate an id for @ptr: 0, or 1 for a cyclic allocation that wrapped
 * (the id is below the cursor: the search went past @max, or the
 * cursor past RIDR_MAX_ID, and started again from @min), or -errno.
 */
static int ridr_do_alloc(struct ridr *map, void *ptr, unsigned long min,
			 unsigned long max, unsigned long *idp, bool cyclic,
			 struct ridr_preload *pl)
{
	struct ridr_need need __rk_uninitialized;
	struct ridr_stock st __rk_uninitialized;
	struct ridr_hint h __rk_uninitialized;
	unsigned long id;
	int ret, wrapped = 0;

	if (cyclic && ridr_cyclic_append(map, ptr, min, max, idp, true))
		return 0;
	ret = ridr_pick(map, min, max, cyclic, &id, &h);
	if (ret)
		return ret;
	if (ridr_store_fast(&h, id, ptr))
		goto done;
	need.nodes = 0;
	need.bucket_cap = 0;
	need.bucket_kshift = 0;
	ridr_insert_id(map, id, ptr, NULL, &need);
	st.nr = 0;
	st.bucket = NULL;
	if (need.nodes || need.bucket_cap) {
		ret = ridr_stock_fill(map, &st, &need, pl, true);
		if (ret)
			return ret;	/* nothing changed */
	}
	ridr_insert_id(map, id, ptr, &st, &need);
	rk_warn_on_once(st.nr || st.bucket);	/* the plan was exact */
	ridr_stock_drain(map, &st);
done:
	rk_write_once(map->count, map->count + 1);
	if (cyclic) {
		unsigned int flags = map->flags & ~RIDR_F_WRAPPED;

		wrapped = id < map->next || (map->flags & RIDR_F_WRAPPED);
		/* Wraps to 0 past RIDR_MAX_ID, then restarts at min. */
		rk_write_once(map->next, id + 1);
		if (id == RIDR_MAX_ID)
			flags |= RIDR_F_WRAPPED;
		if (flags != map->flags)
			rk_write_once(map->flags, flags);
	}
	*idp = id;
	return wrapped;
}

int __ridr_alloc(struct ridr *map, void *ptr, unsigned long min,
		 unsigned long max, unsigned long *idp,
		 struct ridr_preload *pl)
{
	if (!map || !idp || min > max)
		return -EINVAL;
	if (ridr_alloc_lowest(map, ptr, min, max, idp))
		return 0;
	return ridr_do_alloc(map, ptr, min, max, idp, false, pl);
}
rk_export_symbol(__ridr_alloc);

int __ridr_alloc_cyclic_wrap(struct ridr *map, void *ptr, unsigned long min,
			     unsigned long max, unsigned long *idp,
			     struct ridr_preload *pl)
{
	if (!map || !idp || min > max)
		return -EINVAL;
	return ridr_do_alloc(map, ptr, min, max, idp, true, pl);
}
rk_export_symbol(__ridr_alloc_cyclic_wrap);

int __ridr_alloc_cyclic(struct ridr *map, void *ptr, unsigned long min,
			unsigned long max, unsigned long *idp,
			struct ridr_preload *pl)
{
	int ret = __ridr_alloc_cyclic_wrap(map, ptr, min, max, idp, pl);

	return ret < 0 ? ret : 0;
}
rk_export_symbol(__ridr_alloc_cyclic);

/* ridr_insert(): -EBUSY, not -ENOSPC, when @id is taken. */
static int ridr_do_insert(struct ridr *map, unsigned long id, void *ptr,
			  struct ridr_preload *pl)
{
	unsigned long got;
	int ret = ridr_do_alloc(map, ptr, id, id, &got, false, pl);

	return ret == -ENOSPC ? -EBUSY : ret;
}

int __ridr_insert(struct ridr *map, unsigned long id, void *ptr,
		  struct ridr_preload *pl)
{
	if (!map)
		return -EINVAL;
	return ridr_do_insert(map, id, ptr, pl);
}
rk_export_symbol(__ridr_insert);

static int ridr_do_store(struct ridr *map, unsigned long id, void *ptr,
			 void **oldp, struct ridr_preload *pl);

int __ridr_store(struct ridr *map, unsigned long id, void *ptr, void **oldp,
		 struct ridr_preload *pl)
{
	if (!map)
		return -EINVAL;
	return ridr_do_store(map, id, ptr, oldp, pl);
}
rk_export_symbol(__ridr_store);

/* What a locked call does under the map's lock (ridr_locked()). */
enum ridr_op { RIDR_OP_ALLOC, RIDR_OP_CYCLIC, RIDR_OP_INSERT, RIDR_OP_STORE,
	       RIDR_OP_CYCLIC_NOWRAP };	/* cyclic, a wrap reported as 0 */

struct ridr_args {
	enum ridr_op op;
	void *ptr;
	unsigned long min, max;
	unsigned long *idp;
	void **oldp;
};

static int ridr_run(struct ridr *map, const struct ridr_args *a,
		    struct ridr_preload *pl)
{
	switch (a->op) {
	case RIDR_OP_ALLOC:
		return ridr_do_alloc(map, a->ptr, a->min, a->max, a->idp,
				     false, pl);
	case RIDR_OP_CYCLIC:
	case RIDR_OP_CYCLIC_NOWRAP:
		return ridr_do_alloc(map, a->ptr, a->min, a->max, a->idp,
				     true, pl);
	case RIDR_OP_INSERT:
		return ridr_do_insert(map, a->min, a->ptr, pl);
	default:
		return ridr_do_store(map, a->min, a->ptr, a->oldp, pl);
	}
}

/*
 * The locked insertions: allocate without sleeping under the map's lock
 * (the common case needs no retry); if that fails, drop the lock,
 * preload with RK_GFP_KERNEL (RK_GFP_ATOMIC for a RIDR_ATOMIC map) and
 * retry (the tree may have changed meanwhile: the preload covers any
 * insertion of an id <= @a->max).  What the retry did not use becomes
 * the map's spares.
 *
 * ridr_locked_retry(): the part after a first try that failed with
 * -ENOMEM, which took nothing, so the map's spares are its own.
 */
static int ridr_locked_retry(struct ridr *map, const struct ridr_args *a)
{
	struct ridr_preload pl;	/* only .nr and .map need initialising */
	rk_gfp_t gfp = (rk_read_once(map->flags) & RIDR_ATOMIC) ?
			       RK_GFP_ATOMIC : RK_GFP_KERNEL;
	unsigned int spares = ridr_spares(map);
	int ret = -ENOMEM, tries;

	pl.nr = 0;
	pl.map = NULL;
	for (tries = 1; tries <= 2; tries++) {
		if (ridr_preload(&pl, map, a->max, gfp))
			break;	/* -ENOMEM, map unchanged */
		ridr_lock(map);
		ret = ridr_run(map, a, &pl);
		ridr_unlock(map);
		if (ret != -ENOMEM)
			break;
	}
	ridr_preload_finish(&pl, ret, spares);
	return ret;
}

static int ridr_locked(struct ridr *map, const struct ridr_args *a)
{
	struct ridr_preload none __rk_uninitialized;	/* preloads nothing */
	int ret;

	none.nr = 0;
	none.map = NULL;
	ridr_lock(map);
	ret = ridr_run(map, a, &none);
	ridr_unlock(map);
	return ret == -ENOMEM ? ridr_locked_retry(map, a) : ret;
}

/* ridr_locked()'s retry for an allocation whose first try failed with
 * -ENOMEM (it took nothing).  Out of line: a rare case.
 */
static rk_noinline int ridr_alloc_retry(struct ridr *map, void *ptr,
					unsigned long min, unsigned long max,
					unsigned long *idp, enum ridr_op op)
{
	struct ridr_args a __rk_uninitialized;

	a.op = op;
	a.ptr = ptr;
	a.min = min;
	a.max = max;
	a.idp = idp;
	a.oldp = NULL;
	return ridr_locked_retry(map, &a);
}

/*
 * The general first try of a locked allocation whose inline fast path
 * did not apply (it changed nothing), with the map's lock held (taken
 * and released by ridr_alloc_locked(), so that each function balances
 * its own lock context, as sparse checks in the kernel): its cyclic path
 * also copies a full root bucket (ridr_cyclic_compact()).  Out of line:
 * see ridr_alloc_locked().
 */
static rk_noinline int ridr_alloc_general(struct ridr *map, void *ptr,
					  unsigned long min, unsigned long max,
					  unsigned long *idp, enum ridr_op op)
{
	struct ridr_preload none __rk_uninitialized;	/* preloads nothing */

	none.nr = 0;
	none.map = NULL;
	return ridr_do_alloc(map, ptr, min, max, idp, op != RIDR_OP_ALLOC,
			     &none);
}

/*
 * An allocation first tries its fast path under the lock, inline:
 * ridr_cyclic_append() for a cyclic one (the steady state of a small
 * map's churn), ridr_alloc_lowest() for the lowest free id (dense churn).
 * Neither makes a call, so what is live across the lock is the
 * arguments only, and a fast path that applied unlocks and returns 0 at
 * once.  One that does not changed nothing: ridr_alloc_general() starts
 * over under the same lock hold; after -ENOMEM, the retry.  A wrap is
 * reported as 0 for ridr_alloc_cyclic() (RIDR_OP_CYCLIC_NOWRAP).
 */
static rk_always_inline int ridr_alloc_locked(struct ridr *map, void *ptr,
					      unsigned long min,
					      unsigned long max,
					      unsigned long *idp,
					      enum ridr_op op)
{
	bool done;
	int ret;

	if (!map || !idp || min > max)
		return -EINVAL;
	ridr_lock(map);
	if (op != RIDR_OP_ALLOC)
		done = ridr_cyclic_append(map, ptr, min, max, idp, false);
	else
		done = ridr_alloc_lowest(map, ptr, min, max, idp);
	if (done) {
		ridr_unlock(map);
		return 0;
	}
	ret = ridr_alloc_general(map, ptr, min, max, idp, op);
	ridr_unlock(map);
	if (ret == -ENOMEM)
		ret = ridr_alloc_retry(map, ptr, min, max, idp, op);
	return op == RIDR_OP_CYCLIC_NOWRAP && ret > 0 ? 0 : ret;
}

int ridr_alloc(struct ridr *map, void *ptr, unsigned long min,
	       unsigned long max, unsigned long *idp)
{
	return ridr_alloc_locked(map, ptr, min, max, idp, RIDR_OP_ALLOC);
}
rk_export_symbol(ridr_alloc);

int ridr_alloc_cyclic_wrap(struct ridr *map, void *ptr, unsigned long min,
			   unsigned long max, unsigned long *idp)
{
	return ridr_alloc_locked(map, ptr, min, max, idp, RIDR_OP_CYCLIC);
}
rk_export_symbol(ridr_alloc_cyclic_wrap);

int ridr_alloc_cyclic(struct ridr *map, void *ptr, unsigned long min,
		      unsigned long max, unsigned long *idp)
{
	return ridr_alloc_locked(map, ptr, min, max, idp,
				 RIDR_OP_CYCLIC_NOWRAP);
}
rk_export_symbol(ridr_alloc_cyclic);

int ridr_insert(struct ridr *map, unsigned long id, void *ptr)
{
	struct ridr_args a = { .op = RIDR_OP_INSERT, .ptr = ptr, .min = id,
			       .max = id, .idp = NULL, .oldp = NULL };

	if (!map)
		return -EINVAL;
	return ridr_locked(map, &a);
}
rk_export_symbol(ridr_insert);

int ridr_store(struct ridr *map, unsigned long id, void *ptr, void **oldp)
{
	struct ridr_args a = { .op = RIDR_OP_STORE, .ptr = ptr, .min = id,
			       .max = id, .idp = NULL, .oldp = oldp };

	if (!map)
		return -EINVAL;
	return ridr_locked(map, &a);
}
rk_export_symbol(ridr_store);

/* ------------------------------------------------------------------ */
/* Lookup for writers                                                  */

/*
 * Where allocated id @id lives: a full leaf (*@leafp, slot digit) or a
 * bucket record (*@bp, index).  @path[l] gets the full node at level l
 * on the way (root included).  -ENOENT if @id is not allocated.
 * Always inline, as ridr_next_free().  Declared __rk_uninitialized, as
 * struct ridr_hint: ridr_locate() writes @leaf, @b and @root_bucket
 * first, the rest on the path that sets them.
 */
struct ridr_spot {
	struct ridr_node *path[RIDR_MAX_LEVELS];
	unsigned int top;	/* root level (full root) */
	bool root_bucket;
	struct ridr_node *leaf;
	struct ridr_bucket *b;
	unsigned int level;	/* level of the node whose slot holds @b */
	int i;
};

static rk_always_inline int ridr_locate(const struct ridr *map,
					unsigned long id, struct ridr_spot *sp)
{
	void *w = ridr_protected(map, map->root);
	struct ridr_node *node;
	unsigned int level;

	sp->leaf = NULL;
	sp->b = NULL;
	sp->root_bucket = false;
	if (!w)
		return -ENOENT;
	if (ridr_kind(w)) {
		struct ridr_bucket *b = ridr_to_bucket(w);

		if (b->kshift < RIDR_ID_BITS && (id >> b->kshift))
			return -ENOENT;
		sp->root_bucket = true;
		sp->b = b;
		goto bucket;
	}
	sp->top = ridr_root_level(w);
	if (id > ridr_span(sp->top))
		return -ENOENT;
	node = ridr_to_node(w);
	for (level = sp->top;; level--) {
		unsigned int d = ridr_digit(id, level);
		void *s;

		sp->path[level] = node;
		if (!level) {
			if (node->free & (1ULL << d))
				return -ENOENT;
			sp->leaf = node;
			return 0;
		}
		s = ridr_protected(map, node->slots[d]);
		if (!s)
			return -ENOENT;
		if (ridr_kind(s)) {
			sp->b = ridr_to_bucket(s);
			sp->level = level;
			goto bucket;
		}
		node = ridr_to_node(s);
	}
bucket:
	sp->i = ridr_bucket_index(sp->b, id);
	if (sp->i < 0 || !ridr_protected(map, ridr_entries(sp->b)[sp->i]))
		return -ENOENT;
	return 0;
}

/* The entry of the allocated id @id at @sp (NULL for a reservation). */
static void *ridr_spot_entry(const struct ridr *map,
			     const struct ridr_spot *sp, unsigned long id)
{
	void *e;

	if (sp->leaf)
		return ridr_protected(map, sp->leaf->slots[ridr_digit(id, 0)]);
	e = ridr_protected(map, ridr_entries(sp->b)[sp->i]);
	return e == RIDR_RESERVED ? NULL : e;
}

/* Make @ptr the entry of the allocated id @id at @sp (NULL: reserved). */
static void ridr_spot_set(const struct ridr_spot *sp, unsigned long id,
			  void *ptr)
{
	if (sp->leaf) {	/* W8 */
		unsigned int d = ridr_digit(id, 0);

		if (ptr)
			rk_rcu_assign_pointer(sp->leaf->slots[d], ptr);
		else
			rk_rcu_init_pointer(sp->leaf->slots[d], NULL);
	} else {
		/* W2; a reservation is the marker, never NULL (W3). */
		rk_rcu_assign_pointer(ridr_entries(sp->b)[sp->i],
				      ptr ? ptr : RIDR_RESERVED);
	}
}

void *ridr_find_locked(const struct ridr *map, unsigned long id)
{
	struct ridr_spot sp __rk_uninitialized;

	if (!map || ridr_locate(map, id, &sp))
		return NULL;
	return ridr_spot_entry(map, &sp, id);
}
rk_export_symbol(ridr_find_locked);

/* ridr_store() under the writers' serialization: W2/W8 if @id is
 * allocated, else an insertion.
 */
static int ridr_do_store(struct ridr *map, unsigned long id, void *ptr,
			 void **oldp, struct ridr_preload *pl)
{
	struct ridr_spot sp __rk_uninitialized;
	unsigned long got;
	void *old = NULL;
	int ret = 0;

	if (!ridr_locate(map, id, &sp)) {
		old = ridr_spot_entry(map, &sp, id);
		ridr_spot_set(&sp, id, ptr);
	} else {
		/* Free: the lowest free id >= @id is @id, never -ENOSPC. */
		ret = ridr_do_alloc(map, ptr, id, id, &got, false, pl);
	}
	if (!ret && oldp)
		*oldp = old;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Replace, compare-and-exchange                                       */

int __ridr_replace(struct ridr *map, void *ptr, unsigned long id,
		   void **oldp)
{
	struct ridr_spot sp __rk_uninitialized;
	void *old;

	if (!map)
		return -EINVAL;
	if (ridr_locate(map, id, &sp))
		return -ENOENT;
	old = ridr_spot_entry(map, &sp, id);
	ridr_spot_set(&sp, id, ptr);
	if (oldp)
		*oldp = old;
	return 0;
}
rk_export_symbol(__ridr_replace);

/*
 * W13 (conditional updates).  The comparison and the store happen under
 * the writers' serialization, so no other writer changes the entry in
 * between; readers see the store as any replace (W2, W8) or removal
 * (W3, W8).  No new ordering.
 */
int __ridr_cmpxchg(struct ridr *map, unsigned long id, void *old, void *entry,
		   void **curp)
{
	struct ridr_spot sp __rk_uninitialized;
	void *cur;

	if (!map)
		return -EINVAL;
	if (ridr_locate(map, id, &sp)) {
		if (curp)
			*curp = NULL;
		return -ENOENT;
	}
	cur = ridr_spot_entry(map, &sp, id);
	if (curp)
		*curp = cur;
	if (cur != old)
		return -EBUSY;
	ridr_spot_set(&sp, id, entry);
	return 0;
}
rk_export_symbol(__ridr_cmpxchg);

int ridr_cmpxchg(struct ridr *map, unsigned long id, void *old, void *entry,
		 void **curp)
{
	int ret;

	if (!map)
		return -EINVAL;
	ridr_lock(map);
	ret = __ridr_cmpxchg(map, id, old, entry, curp);
	ridr_unlock(map);
	return ret;
}
rk_export_symbol(ridr_cmpxchg);

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

/* ------------------------------------------------------------------ */
/* Removal and what it may collapse                                    */

/* The parent of the object at level @level on @id's path: the node at
 * level + 1, or NULL if that object is the root.
 */
static struct ridr_node *ridr_parent(const struct ridr *map,
				     unsigned long id, unsigned int level,
				     unsigned int *top)
{
	void *w = ridr_protected(map, map->root);
	struct ridr_node *node;
	unsigned int l;

	if (!w || ridr_kind(w))
		return NULL;
	*top = ridr_root_level(w);
	if (level >= *top || id > ridr_span(*top))
		return NULL;
	node = ridr_to_node(w);
	for (l = *top; l > level + 1; l--) {
		void *s = ridr_protected(map, node->slots[ridr_digit(id, l)]);

		if (!s || ridr_kind(s))
			return NULL;
		node = ridr_to_node(s);
	}
	return node;
}

/* Unlink slot @d of @parent (level @level) and retire what it held
 * (W11, W12); the slot is free again.
 */
static void ridr_unlink_slot(struct ridr *map, struct ridr_node *parent,
			     unsigned int level, unsigned int d)
{
	void *s = ridr_protected(map, parent->slots[d]);

	rk_rcu_init_pointer(parent->slots[d], NULL);
	parent->count--;
	parent->free |= 1ULL << d;
	(void)level;
	if (ridr_kind(s)) {
		ridr_bucket_unref(map, ridr_to_bucket(s), 0);
	} else {
		parent->nfull--;
		ridr_retire_node(map, ridr_to_node(s));
	}
}

/* Whether the object @s in a slot holds no id. */
static bool ridr_slot_empty(void *s)
{
	if (ridr_kind(s)) {
		struct ridr_bucket *b = ridr_to_bucket(s);

		return b->u.w.refs == 1 && b->u.w.live == 0;
	}
	return ridr_to_node(s)->count == 0;
}

/*
 * If the object in the slot of level @level that covers @id is empty,
 * unlink it, then every ancestor left empty but the root.  Free bits
 * are restored on the way up: an unlinked slot is free, and a node that
 * lost a child has a free slot.
 */
static void ridr_prune(struct ridr *map, unsigned long id, unsigned int level)
{
	unsigned int top;

	for (;;) {
		struct ridr_node *parent = ridr_parent(map, id, level, &top);
		unsigned int d;
		void *s;

		if (!parent)
			return;
		d = ridr_digit(id, level + 1);
		s = ridr_protected(map, parent->slots[d]);
		if (!s || !ridr_slot_empty(s))
			return;
		ridr_unlink_slot(map, parent, level + 1, d);
		/* The ancestors' free bits: every node above has a free id
		 * now (this slot).
		 */
		{
			unsigned int l, dl;
			void *w = ridr_protected(map, map->root);
			struct ridr_node *node = ridr_to_node(w);

			for (l = top; l > level + 1; l--) {
				dl = ridr_digit(id, l);
				node->free |= 1ULL << dl;
				w = ridr_protected(map, node->slots[dl]);
				node = ridr_to_node(w);
			}
		}
		if (parent->count || level + 1 >= top)
			return;
		level++;
	}
}

/*
 * The object at level @level covering @id has just become empty: keep
 * it for the next allocation, and let go of the one kept before (it is
 * unlinked if it is still empty).  At most one emptied object (with the
 * full nodes above it) stays: the idle bound of ridr.h.
 */
static inline bool ridr_kept(const struct ridr *map, unsigned long id,
			     unsigned int level)
{
	unsigned long span = ridr_span(level);

	return map->keep_level == (int)level &&
	       (map->keep_id & ~span) == (id & ~span);
}

static inline void ridr_keep(struct ridr *map, unsigned long id,
			     unsigned int level)
{
	if (map->keep_level >= 0) {
		if (ridr_kept(map, id, level))
			return;	/* the same object */
		ridr_prune(map, map->keep_id, (unsigned int)map->keep_level);
	}
	map->keep_id = id;
	map->keep_level = (int)level;
}

/* While the full root uses only slot 0, make that child the root (W10). */
static void ridr_shrink(struct ridr *map)
{
	for (;;) {
		void *w = ridr_protected(map, map->root), *s;
		struct ridr_node *root;
		unsigned int top;

		if (!w || ridr_kind(w))
			return;
		root = ridr_to_node(w);
		top = ridr_root_level(w);
		if (!top || root->count != 1)
			return;
		s = ridr_protected(map, root->slots[0]);
		if (!s)
			return;
		if (ridr_kind(s)) {
			struct ridr_bucket *b = ridr_to_bucket(s);

			if (b->u.w.refs != 1 || b->kshift != top * RIDR_SHIFT)
				return;
			rk_rcu_assign_pointer(map->root, s);
		} else {
			rk_rcu_assign_pointer(map->root,
					      ridr_root_word(ridr_to_node(s),
							     top - 1));
		}
		ridr_retire_node(map, root);
		if (map->keep_level >= (int)top)
			map->keep_level = -1;
	}
}

/* Whether ridr_collapse() may turn @node into a bucket: no full child,
 * and at least one but at most @limit ids below it.
 */
static inline bool ridr_collapsible(const struct ridr_node *node,
				    unsigned int limit)
{
	return !node->nfull && node->count && node->count <= limit;
}

/* Append the ids below @node (level @level, first id @base) to the
 * unpublished bucket @nb, in order.
 */
static void ridr_collapse_fill(const struct ridr *map, struct ridr_bucket *nb,
			       const struct ridr_node *node, unsigned int level,
			       unsigned long base)
{
	unsigned int e;

	for (e = 0; e < RIDR_SLOTS; e++) {
		unsigned long lo = ridr_slot_base(base, level, e);
		void *s = ridr_protected(map, node->slots[e]);

		if (level) {
			if (s)
				ridr_bucket_copy(map, nb, ridr_to_bucket(s), lo,
						 lo | ridr_slot_span(level), false,
						 0, NULL);
		} else if (!(node->free & (1ULL << e))) {
			ridr_bucket_push(nb, lo, s ? s : RIDR_RESERVED);
		}
	}
}

/* @node (level @level) has just been unlinked: retire it and drop its
 * slots' references to the buckets below it (W12).
 */
static void ridr_collapse_retire(struct ridr *map, struct ridr_node *node,
				 unsigned int level)
{
	unsigned int e;

	if (level) {
		for (e = 0; e < RIDR_SLOTS; e++) {
			void *s = ridr_protected(map, node->slots[e]);

			if (s)
				ridr_bucket_unref(map, ridr_to_bucket(s), 0);
		}
	}
	ridr_retire_node(map, node);
}

/*
 * W14: the collapse of @node (level @level, slot @d of @parent, @total
 * ids, first id @base) joins the bucket of its left neighbour: one new
 * bucket with the parent's key width holds the ids of every slot of
 * @parent that reaches that bucket and @node's ids, and all those slots
 * and slot @d point to it (a shared bucket, as after a burst, W6).
 * Skipped (false) if slot @d - 1 holds no bucket, if the bucket holds
 * no id for the slots reaching it, if a slot right of @d reaches it too
 * (the records would not stay in order), if the ids would not fit in
 * one bucket (RIDR_BUCKET_MAX), or if no bucket can be had.
 *
 * Why: a sparse range whose ids are left one or a few per slot (the
 * long-lived ids of cyclic allocation, one per 4096 in ridr_kernel_bench
 * memory (c)) would otherwise cost a bucket per slot, whose 24-byte
 * header and the allocator's 8-16 bytes cost as much as its ids' records
 * (10 bytes each); a shared bucket pays them once per up to
 * RIDR_BUCKET_MAX ids (4-byte keys there: 12 bytes a record).  Slots
 * are unshared again by W5 when one of them gets a new id, and unlinked
 * when their range empties (ridr_remove_spot_slow()), as after a burst.
 */
static bool ridr_collapse_join(struct ridr *map, struct ridr_node *node,
			       unsigned int level, struct ridr_node *parent,
			       unsigned int d, unsigned long base,
			       unsigned int total)
{
	unsigned int ks = (level + 2) * RIDR_SHIFT, e, add = 0;
	uint64_t on = 0;
	struct ridr_bucket *b, *nb;
	void *w;

	if (!d)
		return false;
	w = ridr_protected(map, parent->slots[d - 1]);
	if (!w || !ridr_kind(w))
		return false;
	b = ridr_to_bucket(w);
	for (e = 0; e < RIDR_SLOTS; e++) {
		unsigned long lo = ridr_slot_base(base, level + 1, e);

		if (ridr_protected(map, parent->slots[e]) != w)
			continue;
		if (e > d)
			return false;
		on |= 1ULL << e;
		add += ridr_bucket_count(map, b, lo,
					 lo | ridr_slot_span(level + 1));
	}
	if (!add || add + total > RIDR_BUCKET_MAX)
		return false;
	nb = ridr_bucket_new(map, ks < RIDR_ID_BITS ? ks : RIDR_ID_BITS,
			     ridr_bucket_cap_for(add + total));
	if (!nb)
		return false;
	/* Keys are re-based to the parent's width: the slots' ranges first,
	 * in slot order, then @node's, which lie above them all.
	 */
	for (e = 0; e < d; e++) {
		unsigned long lo = ridr_slot_base(base, level + 1, e);

		if (on & (1ULL << e))
			ridr_bucket_copy(map, nb, b, lo,
					 lo | ridr_slot_span(level + 1), false,
					 0, NULL);
	}
	ridr_collapse_fill(map, nb, node, level, base);
	nb->u.w.live = add + total;
	nb->u.w.refs = (uint32_t)rk_popcount64(on) + 1;
	/* Each slot's release store publishes @nb (W1); a reader through
	 * any of these slots finds the same records for its range in the
	 * old object and in @nb (R2, R4), whichever it loaded, so the order
	 * of the stores does not matter.
	 */
	rk_rcu_assign_pointer(parent->slots[d], ridr_bucket_word(nb));
	parent->nfull--;
	for (e = 0; e < d; e++) {
		if (!(on & (1ULL << e)))
			continue;
		rk_rcu_assign_pointer(parent->slots[e], ridr_bucket_word(nb));
		ridr_bucket_unref(map, b, 0);	/* the last one retires it */
	}
	ridr_collapse_retire(map, node, level);
	return true;
}

/*
 * W9: replace the full node @node (level @level; the root if @parent is
 * NULL, else slot @d of @parent) by one bucket with its ids, if it has
 * no full child and at most @limit ids: the bucket of its left
 * neighbour if it can join it (W14), else a new one.  Skipped (false)
 * if not, or if no bucket can be had without sleeping.
 */
static bool ridr_collapse(struct ridr *map, struct ridr_node *node,
			  unsigned int level, struct ridr_node *parent,
			  unsigned int d, unsigned long base,
			  unsigned int limit)
{
	unsigned int total = 0, e, ks;
	unsigned long max = 0;
	struct ridr_bucket *nb;

	if (!ridr_collapsible(node, limit))
		return false;
	for (e = 0; e < RIDR_SLOTS; e++) {
		unsigned long lo = ridr_slot_base(base, level, e);
		void *s = ridr_protected(map, node->slots[e]);

		if (level) {
			unsigned int c;

			if (!s)
				continue;
			c = ridr_bucket_count(map, ridr_to_bucket(s), lo,
					      lo | ridr_slot_span(level));
			/* Only a root bucket's key width needs the top id. */
			if (c && !parent)
				max = ridr_bucket_max(map, ridr_to_bucket(s), lo,
						      lo | ridr_slot_span(level));
			total += c;
		} else if (!(node->free & (1ULL << e))) {
			total++;
			max = lo;
		}
	}
	if (!total || total > limit)
		return false;
	if (parent &&
	    ridr_collapse_join(map, node, level, parent, d, base, total))
		return true;
	ks = parent ? (level + 1) * RIDR_SHIFT : ridr_root_kshift(max);
	nb = ridr_bucket_new(map, ks, ridr_bucket_cap_for(total));
	if (!nb)
		return false;
	ridr_collapse_fill(map, nb, node, level, base);
	nb->u.w.live = total;
	if (parent) {
		rk_rcu_assign_pointer(parent->slots[d], ridr_bucket_word(nb));
		parent->nfull--;
	} else {
		rk_rcu_assign_pointer(map->root, ridr_bucket_word(nb));
	}
	/* Unreachable now (W12): its buckets, then the node. */
	ridr_collapse_retire(map, node, level);
	return true;
}

/*
 * W5 for a removal: a bucket only this slot reaches, left at most half
 * full, is copied into the smallest class that holds its ids (dropping
 * its tombstones).  Not a root bucket: its records come and go with
 * cyclic allocation, which wants the room.  Skipped if no memory.
 */
static void ridr_bucket_shrink(struct ridr *map, struct ridr_node *parent,
			       unsigned int level, unsigned long id,
			       struct ridr_bucket *b)
{
	unsigned int d = ridr_digit(id, level), live = b->u.w.live;
	unsigned long lo = ridr_slot_base(id, level, d);
	struct ridr_bucket *nb;

	if (b->u.w.refs != 1 || b->kshift != level * RIDR_SHIFT ||
	    live * 2 > b->cap || ridr_bucket_cap_for(live) >= b->cap)
		return;
	nb = ridr_bucket_new(map, b->kshift, ridr_bucket_cap_for(live));
	if (!nb)
		return;
	ridr_bucket_copy(map, nb, b, lo, lo | ridr_slot_span(level), false, 0, NULL);
	nb->u.w.live = live;
	rk_rcu_assign_pointer(parent->slots[d], ridr_bucket_word(nb));
	ridr_retire_bucket(map, b);
}

/* After a removal on @id's path (@sp): collapse what fell small, from
 * the bottom up.
 */
static void ridr_tidy_run(struct ridr *map, unsigned long id,
			  const struct ridr_spot *sp, unsigned int level)
{
	unsigned int top = sp->top;

	for (; level <= top; level++) {
		struct ridr_node *node = sp->path[level];
		struct ridr_node *parent = level < top ? sp->path[level + 1] :
					   NULL;
		unsigned int d = parent ? ridr_digit(id, level + 1) : 0;
		unsigned int limit = level ? RIDR_MERGE_MAX : RIDR_COLLAPSE_MAX;

		if (!ridr_collapse(map, node, level, parent, d,
				   id & ~ridr_span(level), limit))
			return;
	}
}

/*
 * ridr_tidy(): ridr_collapse()'s first test of the node at @level,
 * inline, so that the common removal (a node with too many ids to
 * collapse) makes no call.
 */
static inline void ridr_tidy(struct ridr *map, unsigned long id,
			     const struct ridr_spot *sp, unsigned int level)
{
	const struct ridr_node *node;

	if (level > sp->top)
		return;
	node = sp->path[level];
	if (ridr_collapsible(node, level ? RIDR_MERGE_MAX : RIDR_COLLAPSE_MAX))
		ridr_tidy_run(map, id, sp, level);
}

/* W8: clear @id's slot in its full leaf @leaf, below the full nodes
 * @path[1..@top]; returns the entry.
 */
static rk_always_inline void *ridr_leaf_clear(struct ridr *map,
					      unsigned long id,
					      struct ridr_node *leaf,
					      struct ridr_node *const *path,
					      unsigned int top)
{
	unsigned int d = ridr_digit(id, 0), level;
	void *old = ridr_protected(map, leaf->slots[d]);

	rk_write_once(map->count, map->count - 1);
	rk_rcu_init_pointer(leaf->slots[d], NULL);
	leaf->free |= 1ULL << d;
	leaf->count--;
	/* The leaf has a free id now: set the bits above it up to the
	 * first that was already set.
	 */
	for (level = 1; level <= top; level++) {
		uint64_t bit = 1ULL << ridr_digit(id, level);

		if (path[level]->free & bit)
			break;
		path[level]->free |= bit;
	}
	return old;
}

/* W3: make the record of bucket @b whose entry is at @slot, not a
 * tombstone, a tombstone.
 */
static rk_always_inline void ridr_slot_clear(struct ridr *map,
					     struct ridr_bucket *b,
					     void __rk_rcu **slot)
{
	rk_write_once(map->count, map->count - 1);
	rk_rcu_init_pointer(*slot, NULL);
	b->u.w.live--;
}

/* W3: make record @i of bucket @b a tombstone; returns the entry. */
static inline void *ridr_record_clear(struct ridr *map, struct ridr_bucket *b,
				      unsigned int i)
{
	void __rk_rcu **slot = ridr_record_slot(b, i);
	void *old = ridr_protected(map, *slot);

	ridr_slot_clear(map, b, slot);
	return old == RIDR_RESERVED ? NULL : old;
}

/* Remove the allocated id @id at @sp; returns its entry. */
static void *ridr_remove_spot_slow(struct ridr *map, unsigned long id,
				   const struct ridr_spot *sp)
{
	void *old;

	if (sp->leaf) {	/* W8 */
		old = ridr_leaf_clear(map, id, sp->leaf, sp->path, sp->top);
		if (!sp->leaf->count && sp->top) {
			ridr_keep(map, id, 0);
			ridr_tidy(map, id, sp, 1);
		} else if (sp->leaf->count) {
			ridr_tidy(map, id, sp, 0);
		}
	} else {	/* W3 */
		struct ridr_bucket *b = sp->b;

		old = ridr_record_clear(map, b, (unsigned int)sp->i);
		if (!sp->root_bucket) {
			struct ridr_node *parent = sp->path[sp->level];

			if (!b->u.w.live && b->u.w.refs > 1) {
				/* A shared bucket with nothing left: unlink
				 * every slot that reaches it.
				 */
				unsigned int e;
				void *word = ridr_bucket_word(b);

				for (e = 0; e < RIDR_SLOTS; e++)
					if (ridr_protected(map, parent->slots[e]) ==
					    word)
						ridr_unlink_slot(map, parent,
								 sp->level, e);
				if (!parent->count && sp->level < sp->top)
					ridr_keep(map, id, sp->level);
			} else if (!b->u.w.live) {
				ridr_keep(map, id, sp->level - 1);
				ridr_tidy(map, id, sp, sp->level);
			} else if (b->u.w.refs > 1) {
				/* Shared: a slot with nothing left in it
				 * stops pointing to the bucket (W11).
				 */
				unsigned int d = ridr_digit(id, sp->level);
				unsigned long lo = ridr_slot_base(id, sp->level,
								  d);

				if (!ridr_bucket_count(map, b, lo, lo |
						       ridr_slot_span(sp->level)))
					ridr_unlink_slot(map, parent, sp->level,
							 d);
				ridr_tidy(map, id, sp, sp->level);
			} else {
				ridr_bucket_shrink(map, parent, sp->level, id, b);
				ridr_tidy(map, id, sp, sp->level);
			}
		}
	}
	ridr_shrink(map);
	return old;
}

/* Removing @id from the full leaf @leaf (root level @top) is only
 * ridr_leaf_clear(): see ridr_remove_spot().
 */
static rk_always_inline bool ridr_leaf_clear_only(const struct ridr *map,
						 const struct ridr_node *leaf,
						 unsigned int top,
						 unsigned long id)
{
	return leaf->count > RIDR_COLLAPSE_MAX + 1 ||
	       (leaf->count == 1 && top && ridr_kept(map, id, 0));
}

/*
 * The common removals, inline: from a full leaf left with more than
 * RIDR_COLLAPSE_MAX ids, or from a leaf below the root that empties and
 * is the object ridr_keep() already keeps (churn at a leaf boundary), or
 * from the root bucket (the slow path would only find that the root, a
 * bucket, cannot shrink).
 * Nothing else can change then.  The leaf stays linked: no slot above it
 * and no count of a full node above it changes.  It is not collapsible
 * (too many ids, or none), and its parent is not (a full child: @nfull
 * is not 0), so ridr_tidy() would do nothing; ridr_keep() would return
 * at once; ridr_shrink() would find the root as every earlier removal
 * left it (it runs at the end of each; an insertion never leaves a root
 * whose only child could replace it).
 */
static rk_always_inline void *ridr_remove_spot(struct ridr *map,
					       unsigned long id,
					       const struct ridr_spot *sp)
{
	if (sp->leaf && ridr_leaf_clear_only(map, sp->leaf, sp->top, id))
		return ridr_leaf_clear(map, id, sp->leaf, sp->path, sp->top);
	if (sp->root_bucket)	/* the root stays; nothing above it */
		return ridr_record_clear(map, sp->b, (unsigned int)sp->i);
	return ridr_remove_spot_slow(map, id, sp);
}

/* Every removal but the fast paths (ridr_remove_root(),
 * ridr_remove_leaf()): locate, then remove.  Out of line, so that its
 * stack frame and register saves are not paid by the fast paths next to
 * it.
 */
static rk_noinline int ridr_remove_located(struct ridr *map, unsigned long id,
					   void **oldp)
{
	struct ridr_spot sp __rk_uninitialized;
	void *old;

	if (ridr_locate(map, id, &sp))
		return -ENOENT;
	old = ridr_remove_spot(map, id, &sp);
	if (oldp)
		*oldp = old;
	return 0;
}

/*
 * ridr_remove_root() for a root bucket @b whose keys are @kb bytes wide
 * (a constant in each call, as in ridr_cyclic_append_kb()).  The two
 * probes of __ridr_root_index(), the one back from the last key first:
 * it finds the ids a churn removes, the one allocated last (a timer
 * deleted after its create) or just before it (the previous one, after
 * the next was allocated), with a range test and one key compare, and
 * the ids handed out in order behind a long-lived one.  Then the probe
 * from the first key.  An empty bucket (@n == 0) goes to the general
 * path; the keys read are then below @n (__ridr_root_key_below()).
 */
static rk_always_inline int ridr_remove_root_kb(struct ridr *map,
						struct ridr_bucket *b,
						unsigned long id, void **oldp,
						unsigned int kb)
{
	unsigned long n = b->n, d;
	void __rk_rcu **slot;
	void *e;

	if (unlikely(!n))
		return 1;
	d = __ridr_root_key_below(b, kb, n - 1) - id;
	if (likely(d < n) && __ridr_root_key_below(b, kb, n - 1 - d) == id) {
		d = n - 1 - d;
	} else {
		d = id - __ridr_root_key_below(b, kb, 0);
		if (d >= n || __ridr_root_key_below(b, kb, d) != id)
			return 1;
	}
	slot = ridr_record_slot(b, d);
	e = ridr_protected(map, *slot);
	if (!e)
		return 1;	/* a tombstone: the general path says -ENOENT */
	ridr_slot_clear(map, b, slot);
	if (oldp)
		*oldp = e == RIDR_RESERVED ? NULL : e;
	return 0;
}

/*
 * The removal of cyclic churn in a small map (a process's timers): an
 * id that a probe of the root bucket finds (__ridr_root_index(): the id
 * allocated last, or ids handed out in order), with an entry or a
 * reservation.  It does what ridr_locate() and ridr_remove_spot() do for
 * a record of the root bucket (W3: the record becomes a tombstone; the
 * root stays and nothing is above it), without building a ridr_spot.
 * 1 if it does not apply (nothing changed: an empty map, a full root, a
 * probe that misses, a tombstone), else 0 and the entry in *@oldp.
 */
static rk_always_inline int ridr_remove_root(struct ridr *map,
					     unsigned long id, void **oldp)
{
	unsigned long w = (unsigned long)ridr_protected(map, map->root), bw;

	if (w & RIDR_TAG_FULL)	/* a full node: one test for dense maps */
		return 1;
	/* By the root's kind tag, 32-bit keys first, as in the append. */
	if (__ridr_root_bucket_as(w, RIDR_KIND_B32, &bw))
		return ridr_remove_root_kb(map, (struct ridr_bucket *)bw, id,
					   oldp, 4);
	if (__ridr_root_bucket_as(w, RIDR_KIND_B16, &bw))
		return ridr_remove_root_kb(map, (struct ridr_bucket *)bw, id,
					   oldp, 2);
	if (__ridr_root_bucket_as(w, RIDR_KIND_B64, &bw))
		return ridr_remove_root_kb(map, (struct ridr_bucket *)bw, id,
					   oldp, 8);
	return 1;	/* an empty map */
}

/*
 * The removal of dense churn, inline: @id allocated in a full leaf
 * reached through full nodes from the root full node @node at level
 * @top, the leaf one that ridr_remove_spot() clears and leaves alone
 * (ridr_leaf_clear_only()).  It does what ridr_locate() and
 * ridr_remove_spot() do then (W8), without building a ridr_spot.  1 if
 * it does not apply (nothing changed: an id beyond the root's range, an
 * empty slot or a bucket on the way, a free id, a leaf that may collapse
 * or empty), else 0 and the entry in *@oldp.
 */
static rk_always_inline int ridr_remove_leaf_below(struct ridr *map,
						   unsigned long id,
						   void **oldp,
						   struct ridr_node *node,
						   unsigned int top)
{
	struct ridr_node *path[RIDR_MAX_LEVELS] __rk_uninitialized;
	unsigned int level;
	void *old;

	if (id > ridr_span(top))
		return 1;
	for (level = top; level; level--) {
		void *s = ridr_protected(map,
					 node->slots[ridr_digit(id, level)]);

		if (!s || ridr_kind(s))
			return 1;
		path[level] = node;
		node = ridr_to_node(s);
	}
	if ((node->free & (1ULL << ridr_digit(id, 0))) ||
	    !ridr_leaf_clear_only(map, node, top, id))
		return 1;
	old = ridr_leaf_clear(map, id, node, path, top);
	if (oldp)
		*oldp = old;
	return 0;
}

/* ridr_remove_leaf_below() for a root full node (1 for an empty map or a
 * root bucket), with a constant height for maps of up to 4096 ids, as
 * ridr_alloc_lowest().
 */
static rk_always_inline int ridr_remove_leaf(struct ridr *map,
					     unsigned long id, void **oldp)
{
	void *w = ridr_protected(map, map->root);
	struct ridr_node *node;
	unsigned int top;

	if (!w || ridr_root_is_bucket(w))
		return 1;
	top = ridr_root_level(w);
	node = ridr_to_node(w);
	if (top == 0)
		return ridr_remove_leaf_below(map, id, oldp, node, 0);
	if (top == 1)
		return ridr_remove_leaf_below(map, id, oldp, node, 1);
	return ridr_remove_leaf_below(map, id, oldp, node, top);
}

/* __ridr_remove() for a valid @map, inline in both removal calls: a
 * root bucket's fast path, then a full leaf's, then the general one.
 */
static rk_always_inline int ridr_do_remove(struct ridr *map, unsigned long id,
					   void **oldp)
{
	int ret = ridr_remove_root(map, id, oldp);

	if (ret > 0)
		ret = ridr_remove_leaf(map, id, oldp);
	return ret > 0 ? ridr_remove_located(map, id, oldp) : ret;
}

int __ridr_remove(struct ridr *map, unsigned long id, void **oldp)
{
	if (!map)
		return -EINVAL;
	return ridr_do_remove(map, id, oldp);
}
rk_export_symbol(__ridr_remove);

/* W13: compared and removed under the writers' serialization. */
int __ridr_remove_if(struct ridr *map, unsigned long id, void *expected)
{
	struct ridr_spot sp __rk_uninitialized;

	if (!map)
		return -EINVAL;
	if (ridr_locate(map, id, &sp))
		return -ENOENT;
	if (ridr_spot_entry(map, &sp, id) != expected)
		return -EBUSY;
	ridr_remove_spot(map, id, &sp);
	return 0;
}
rk_export_symbol(__ridr_remove_if);

int ridr_remove_if(struct ridr *map, unsigned long id, void *expected)
{
	int ret;

	if (!map)
		return -EINVAL;
	ridr_lock(map);
	ret = __ridr_remove_if(map, id, expected);
	ridr_unlock(map);
	return ret;
}
rk_export_symbol(ridr_remove_if);

int ridr_remove(struct ridr *map, unsigned long id, void **oldp)
{
	int ret;

	if (!map)
		return -EINVAL;
	ridr_lock(map);
	ret = ridr_do_remove(map, id, oldp);
	ridr_unlock(map);
	return ret;
}
rk_export_symbol(ridr_remove);
