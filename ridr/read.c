// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * read.c - ridr's readers: the out-of-line part of ridr_find() (buckets),
 * ridr_get_next() and the snapshot getters.
 *
 * What a reader relies on (the writer's side is argued at the top of
 * write.c, guarantees W1-W12):
 *
 * R1. Every word a reader follows (map->root, a full node's slot, a
 *     bucket's entry) is loaded with rk_rcu_dereference(), and every
 *     address computed from it (a node, a bucket, its keys and entries)
 *     depends on that load: the writer's release store that published
 *     the word orders the pointee's initialisation before it.  Masking
 *     the tag bits off, or subtracting the FULL tag, keeps the
 *     dependency (an address computed from the loaded value).
 * R2. The shift of the root full node's digit travels in the root word
 *     (RIDR_ROOT_SHIFT_MASK), and bit 0 of every word says whether it is
 *     a full node to descend into (RIDR_TAG_FULL in ridr.h); a child
 *     is one level below its parent.  No reader loads a node's
 *     writer-only fields, so a full node costs exactly one load, the
 *     slot, per level.
 * R3. A bucket's @cap, @kshift and @eoff never change after publication; @n
 *     grows in place (an append) and is loaded with acquire: the records
 *     below the count loaded are initialised (pairs with W4).  The
 *     inline root-bucket path of ridr_find() (__ridr_root_probe()
 *     in ridr.h; struct ridr_bucket is in ridr.h for it) orders its
 *     loads as __ridr_find_slow() below does: the count with acquire,
 *     then keys, then the entry of the record found.  Its one load of a
 *     key at or above the count (key 0 of an empty bucket) is a marked
 *     load whose value is never used; the keys it reads below the count
 *     are plain loads (R4: nothing stores to them while the bucket is
 *     reachable).
 * R4. A record's key never changes while the bucket is reachable; its
 *     entry does (remove: NULL, re-allocation of the same id, replace),
 *     each store a whole pointer: the reader sees the old or the new one.
 * R5. Objects that leave the tree stay intact until a grace period after
 *     they were unlinked, so a reader that reached one still finds in it
 *     what it found before (the old state of every id).
 */
#include "ridr/internal.h"

#include "compat/compat.h"

/* The reserved marker: its address is the entry of a reserved id in a
 * bucket.  Never dereferenced.
 */
const char __ridr_reserved;
rk_export_symbol(__ridr_reserved);

void *__ridr_find_slow(const void *word, unsigned long id, bool root)
{
	const struct ridr_bucket *b;
	unsigned int n, ks;
	int i;
	void *e;

	if (!word)
		return NULL;
	b = ridr_to_bucket(word);
	/* R3: acquire, pairs with the release in ridr_bucket_append(). */
	n = rk_load_acquire(b->n);
	ks = b->kshift;
	/* The root bucket covers [0, 2^kshift); below a slot the path has
	 * already fixed the bits above kshift.
	 */
	if (root && ks < RIDR_ID_BITS && (id >> ks))
		return NULL;
	i = ridr_key_index(b, n, id & ridr_low_mask(ks));
	if (i < 0)
		return NULL;
	e = rk_rcu_dereference(ridr_entries(b)[i]);
	return e == RIDR_RESERVED ? NULL : e;
}
rk_export_symbol(__ridr_find_slow);

void *ridr_find_noinline(const struct ridr *map, unsigned long id)
{
	return ridr_find(map, id);
}
rk_export_symbol(ridr_find_noinline);

/*
 * ridr_find_bulk(): RIDR_BULK_GROUP ids at a time, in two passes.  The
 * first walks each id down as ridr_find() does, as far as the object
 * that ends its walk (a leaf, or a bucket), and prefetches that object
 * instead of reading it; the second reads the entries.  The objects at
 * the end of the walks are where a large tree misses the caches (the
 * leaves of a dense tree: its upper levels are few and stay cached; the
 * buckets of a sparse one), so their misses overlap, up to a group's
 * worth, instead of following one another; the walks above them are
 * branch-predictable steps whose loads the core overlaps by itself.  32
 * keeps that many misses in flight (DPDK's rte_hash bulk lookup works in
 * the same way) with a 256-byte array of state.
 */
#define RIDR_BULK_GROUP 32

/*
 * One step of a bulk walk: from the full node *@t (a word tagged FULL)
 * to its slot for @id at @shift, into *@t.  False if that word is not a
 * full node (a bucket, or NULL): the walk ends there.
 */
static rk_always_inline bool ridr_bulk_step(const void **t, unsigned long id,
					    unsigned int shift)
{
	*t = __ridr_slot(__ridr_slot_node(*t), id, shift);
	return likely(__ridr_is_node(*t));
}

/*
 * The first pass of a bulk walk for one id, from the root node's word
 * @t (tagged FULL) whose digit is at @shift, @id within the root's
 * range: what ridr_find() loads on the way down, the same helpers, one
 * dependent load per level.  With @shift a constant (ridr_find_group()'s
 * switch) the levels are unrolled, each step a shift, a mask, the load
 * and a test; a tree of ids above 2^36 takes its top levels in a loop.
 *
 * Returns what ends the walk, without reading it: a leaf's slot for
 * @id, as the address of that slot (8-byte aligned, so its three low
 * bits are clear), prefetched; or the word of a bucket (a kind in bits
 * 1-2), its first 64 bytes prefetched; or NULL.
 */
static rk_always_inline const void *ridr_bulk_walk(const void *t,
						   unsigned long id,
						   unsigned int shift)
{
	const void *slot;

	for (; shift > 5 * RIDR_SHIFT; shift -= RIDR_SHIFT)
		if (!ridr_bulk_step(&t, id, shift))
			goto stop;
	/* Shifts are multiples of RIDR_SHIFT: each test is "this level is
	 * below the root", decided at compile time with a constant @shift.
	 * Not a loop: gcc 12 -O2 leaves "for (; shift; shift -= RIDR_SHIFT)"
	 * rolled even with @shift constant (a shift by %cl, a counter and a
	 * branch per level; checked with objdump).
	 */
	if (shift >= 5 * RIDR_SHIFT && !ridr_bulk_step(&t, id, 5 * RIDR_SHIFT))
		goto stop;
	if (shift >= 4 * RIDR_SHIFT && !ridr_bulk_step(&t, id, 4 * RIDR_SHIFT))
		goto stop;
	if (shift >= 3 * RIDR_SHIFT && !ridr_bulk_step(&t, id, 3 * RIDR_SHIFT))
		goto stop;
	if (shift >= 2 * RIDR_SHIFT && !ridr_bulk_step(&t, id, 2 * RIDR_SHIFT))
		goto stop;
	if (shift >= RIDR_SHIFT && !ridr_bulk_step(&t, id, RIDR_SHIFT))
		goto stop;
	/* A leaf: its slot for @id holds the entry. */
	slot = &__ridr_slot_node(t)->slots[id & (RIDR_SLOTS - 1)];
	rk_prefetch(slot);
	return slot;
stop:
	if (t) {
		/* A bucket: header, keys and (if small) entries in its
		 * first 64 bytes.
		 */
		rk_prefetch(ridr_to_bucket(t));
		rk_prefetch((const char *)ridr_to_bucket(t) + 63);
	}
	return t;
}

/*
 * One group of at most RIDR_BULK_GROUP ids below the root full node
 * whose word, as a slot would hold it (tagged FULL), is @t and whose
 * digit is at @shift (a constant in each call of ridr_find_group()).
 *
 * Ordering: every load is the one ridr_find() makes for that id, through
 * the same helpers (ridr.h): map->root once for the group (each id is
 * looked up as a ridr_find() that loaded this root word), then per level
 * one __ridr_slot(), an rk_rcu_dereference() of a slot in the node the
 * previous load returned (R1, R2); the last load, of the leaf's slot, or
 * __ridr_find_slow() on the bucket word loaded from a slot (R3, R4),
 * comes in the second pass.  Between the two a walk only parks in end[]
 * the address of that leaf slot, or the bucket's word: a local copy,
 * like a register spill in ridr_find(), computed from the loaded value,
 * which keeps the address dependency.  rk_prefetch() is a hint: it
 * orders nothing and loads no value the walk uses, so it needs no
 * pairing.  The second pass may run long after the first, but inside
 * the caller's read-side section: every object a walk reached stays
 * intact until it ends (R5).
 */
static rk_always_inline unsigned int
ridr_find_group_at(const void *t, unsigned int shift, const unsigned long *ids,
		   unsigned int n, void **out)
{
	/* Per id: the end of its walk (ridr_bulk_walk()), NULL for an id
	 * beyond the root.
	 */
	const void *end[RIDR_BULK_GROUP];
	unsigned int i, found = 0;

	for (i = 0; i < n; i++) {
		unsigned long id = ids[i];

		end[i] = __ridr_beyond_root(id, shift) ?
				 NULL :
				 ridr_bulk_walk(t, id, shift);
	}
	for (i = 0; i < n; i++) {
		const void *e = end[i];
		void *entry;

		if (likely(!((unsigned long)e & RIDR_KIND_MASK)))
			/* A leaf's slot (prefetched by now), or NULL. */
			entry = e ? rk_rcu_dereference(
					    *(void __rk_rcu *const *)e) :
				    NULL;
		else	/* a bucket, prefetched by now */
			entry = __ridr_find_slow(e, ids[i], false);
		out[i] = entry;
		found += !!entry;
	}
	return found;
}

/*
 * One group of at most RIDR_BULK_GROUP ids below the root word @w: a
 * root bucket or an empty map is one object for every id; a root full
 * node goes to ridr_find_group_at() with its digit's shift as a
 * constant for the heights of trees up to 36 bits (the others share one
 * copy, their top levels in a loop).
 */
static unsigned int ridr_find_group(unsigned long w, const unsigned long *ids,
				    unsigned int n, void **out)
{
	/* The root node as a slot would hold it (ridr_find()). */
	const void *t = (const void *)(w & ~RIDR_ROOT_SHIFT_MASK);
	unsigned int i, found = 0;

	if (!__ridr_is_node((const void *)w)) {
		for (i = 0; i < n; i++) {
			out[i] = __ridr_find_slow((const void *)w, ids[i],
						  true);
			found += !!out[i];
		}
		return found;
	}
	switch (__ridr_root_shift(w)) {
	case 0:
		return ridr_find_group_at(t, 0, ids, n, out);
	case RIDR_SHIFT:
		return ridr_find_group_at(t, RIDR_SHIFT, ids, n, out);
	case 2 * RIDR_SHIFT:
		return ridr_find_group_at(t, 2 * RIDR_SHIFT, ids, n, out);
	case 3 * RIDR_SHIFT:
		return ridr_find_group_at(t, 3 * RIDR_SHIFT, ids, n, out);
	case 4 * RIDR_SHIFT:
		return ridr_find_group_at(t, 4 * RIDR_SHIFT, ids, n, out);
	case 5 * RIDR_SHIFT:
		return ridr_find_group_at(t, 5 * RIDR_SHIFT, ids, n, out);
	default:
		return ridr_find_group_at(t, __ridr_root_shift(w), ids, n,
					  out);
	}
}

int ridr_find_bulk(const struct ridr *map, const unsigned long *ids,
		   unsigned int n, void **out)
{
	unsigned int done, found = 0;

	if (!map || !ids || !out || n > INT_MAX)
		return -EINVAL;
	for (done = 0; done < n; done += RIDR_BULK_GROUP) {
		unsigned int g = n - done < RIDR_BULK_GROUP ? n - done :
							      RIDR_BULK_GROUP;
		/* A fresh root per group: R1, as in ridr_find(). */
		unsigned long w = (unsigned long)rk_rcu_dereference(map->root);

		found += ridr_find_group(w, ids + done, g, out + done);
	}
	return (int)found;
}
rk_export_symbol(ridr_find_bulk);

/*
 * First entry of @b with an id in [@lo, @hi] (ids are @lo's bits above
 * kshift | key; @hi may end early, inside the same 2^kshift range);
 * *@idp gets its id.  NULL if none.
 *
 * The keys are sorted and never change while the bucket is reachable
 * (R4), and every key read is below the @n loaded with acquire (R3): a
 * binary search finds the first record at or after @lo's key, then the
 * records from there are read in order, the tombstones and reservations
 * among them skipped, until one lies beyond @hi.  A cyclic bucket holds
 * up to RIDR_BUCKET_MAX - 1 tombstones below its newest key (W3): the
 * search skips those below @lo without reading their entries.
 */
static void *ridr_bucket_next(const struct ridr_bucket *b, unsigned long lo,
			      unsigned long hi, unsigned long *idp)
{
	unsigned int n = rk_load_acquire(b->n), a = 0, z = n, i;	/* R3 */
	unsigned long mask = ridr_low_mask(b->kshift);
	unsigned long klo = lo & mask, khi = hi & mask;

	while (a < z) {
		unsigned int m = a + (z - a) / 2;

		if (ridr_key(b, m) < klo)
			a = m + 1;
		else
			z = m;
	}
	for (i = a; i < n; i++) {
		unsigned long key = ridr_key(b, i);
		void *e;

		if (key > khi)
			break;
		e = rk_rcu_dereference(ridr_entries(b)[i]);
		if (e && e != RIDR_RESERVED) {
			*idp = (lo & ~mask) | key;
			return e;
		}
	}
	return NULL;
}

/*
 * Depth-first walk from *@idp to @last (inclusive).  @lo is the lowest id
 * still wanted; on the way down it stays *@idp's own digits until the
 * walk moves past one, then the lower levels start at their first slot
 * (slot_base).  path[] holds the nodes above the current one.  The walk
 * stops at the first slot that starts beyond @last.
 */
static void *ridr_next(const struct ridr *map, unsigned long *idp,
		       unsigned long last)
{
	/* __rk_uninitialized: no compiler zeroing in the kernel (an 88-byte
	 * rep stos per call, 11 TCG blocks: ipc_rmid() calls this once per
	 * bit of the index); path[level] is written before the walk goes
	 * down from @level and read only on the way back up to it.
	 */
	const struct ridr_node *path[RIDR_MAX_LEVELS] __rk_uninitialized;
	void *w = rk_rcu_dereference(map->root);
	const struct ridr_node *node;
	unsigned long lo = *idp, found;
	unsigned int level, top;
	void *e;

	/* An empty map answers without a walk: the buckets of a small map
	 * that churns (SysV ipc's cyclic ids, a process's timers) keep the
	 * records of removed ids as tombstones (W3), which the walk would
	 * read one by one.  ridr_is_empty() reads the writer's @count as a
	 * snapshot, as ridr_count() does: every allocation and removal
	 * stores it in the same lock hold that publishes or unpublishes the
	 * id, so an id whose allocation happens before this load is counted
	 * in the value it returns (coherence of @count), and while that id
	 * stays allocated no later store makes the count 0: no id allocated
	 * throughout the walk is missed.  One load of the writer's line, in
	 * the iteration only (ridr_find() does not read it).
	 */
	if (!w || lo > last || ridr_is_empty(map))
		return NULL;
	if (ridr_kind(w)) {
		const struct ridr_bucket *b = ridr_to_bucket(w);
		unsigned int ks = b->kshift;
		unsigned long hi = ridr_low_mask(ks);

		if (ks < RIDR_ID_BITS && (lo >> ks))
			return NULL;
		e = ridr_bucket_next(b, lo, hi < last ? hi : last, &found);
		if (e)
			*idp = found;
		return e;
	}
	top = ridr_root_level(w);
	if (lo > ridr_span(top))
		return NULL;
	node = ridr_to_node(w);
	level = top;
	for (;;) {
		uint64_t valid = ridr_valid_slots(level);
		unsigned int d = ridr_digit(lo, level);
		bool down = false;

		for (; d < RIDR_SLOTS && (valid >> d & 1); d++) {
			unsigned long slo = d == ridr_digit(lo, level) ? lo :
					    ridr_slot_base(lo, level, d);
			unsigned long shi = slo | ridr_slot_span(level);
			void *s;

			if (slo > last)
				return NULL;	/* every later slot too */
			s = rk_rcu_dereference(node->slots[d]);
			if (!s)
				continue;
			if (!level) {
				*idp = slo;
				return s;
			}
			if (ridr_kind(s)) {
				e = ridr_bucket_next(ridr_to_bucket(s), slo,
						     shi < last ? shi : last,
						     &found);
				if (e) {
					*idp = found;
					return e;
				}
				continue;
			}
			path[level] = node;
			node = ridr_to_node(s);
			level--;
			lo = slo;
			down = true;
			break;
		}
		if (down)
			continue;
		/* Nothing left in this node: resume in the parent after it,
		 * going further up while it was the parent's last slot.
		 */
		for (;;) {
			unsigned long end = lo | ridr_span(level);

			if (level == top || end >= last)
				return NULL;
			level++;
			node = path[level];
			if (((end + 1) & ~ridr_span(level)) ==
			    (lo & ~ridr_span(level))) {
				lo = end + 1;
				break;
			}
		}
	}
}

void *ridr_get_next(const struct ridr *map, unsigned long *idp)
{
	return ridr_next(map, idp, RIDR_MAX_ID);
}
rk_export_symbol(ridr_get_next);

void *ridr_get_next_range(const struct ridr *map, unsigned long *idp,
			  unsigned long last)
{
	return ridr_next(map, idp, last);
}
rk_export_symbol(ridr_get_next_range);

void *__ridr_iter_next_range(const struct ridr *map, unsigned long *idp,
			     unsigned long last)
{
	unsigned long id = *idp;
	void *entry;

	if (id >= last)
		return NULL;
	id++;
	entry = ridr_next(map, &id, last);
	if (entry)
		*idp = id;
	return entry;
}
rk_export_symbol(__ridr_iter_next_range);

void *__ridr_iter_next(const struct ridr *map, unsigned long *idp)
{
	return __ridr_iter_next_range(map, idp, RIDR_MAX_ID);
}
rk_export_symbol(__ridr_iter_next);

int ridr_walk(const struct ridr *map,
	      int (*fn)(unsigned long id, void *entry, void *data),
	      void *data)
{
	unsigned long id = 0;
	void *entry;
	int ret;

	if (!map || !fn)
		return -EINVAL;
	for (entry = ridr_next(map, &id, RIDR_MAX_ID); entry;
	     entry = __ridr_iter_next_range(map, &id, RIDR_MAX_ID)) {
		ret = fn(id, entry, data);
		if (ret)
			return ret;
	}
	return 0;
}
rk_export_symbol(ridr_walk);

bool ridr_is_empty(const struct ridr *map)
{
	return rk_read_once(map->count) == 0;
}
rk_export_symbol(ridr_is_empty);

unsigned long ridr_count(const struct ridr *map)
{
	return rk_read_once(map->count);
}
rk_export_symbol(ridr_count);

size_t ridr_memory(const struct ridr *map)
{
	/* Two snapshots: @bytes (the writer's) and @nspare (the spare
	 * lock's); a node moving between them may be counted in both or
	 * neither for an instant.
	 */
	return rk_read_once(map->bytes) +
	       (size_t)rk_read_once(map->nspare) * RIDR_NODE_BYTES;
}
rk_export_symbol(ridr_memory);
