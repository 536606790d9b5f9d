/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * internal.h - what the parts of ridr share: object kinds and their
 * layout, tagged words, and the functions one part calls in another.
 *
 *   read.c    readers: the slow part of ridr_find(), ridr_get_next()
 *   mem.c     objects: full nodes and buckets, their sizes, spares and
 *             preloads, deferred frees, ridr_destroy()
 *   bucket.c  bucket records: search, gap search, building copies
 *   write.c   writers: free-id search, insertion (with bursts and
 *             growth), removal (with collapses), replace, cursor
 *
 * The ordering argument for every writer transition is at the top of
 * write.c; the reader side of it at the top of read.c.
 */
#ifndef RK_RIDR_INTERNAL_H
#define RK_RIDR_INTERNAL_H

#include "ridr/ridr.h"

#include "compat/compat.h"

#define RIDR_MASK (RIDR_SLOTS - 1)
#define RIDR_ID_BITS RK_BITS_PER_LONG
/* Highest level of a full node (10 with 64-bit longs). */
#define RIDR_TOP_LEVEL (RIDR_MAX_LEVELS - 1)

/*
 * Bucket kinds in bits 1-2 of a slot (internal levels) or the root word,
 * bit 0 clear (bit 0 set: a full node, see RIDR_TAG_FULL in ridr.h).
 * Buckets are named by the width of their keys.  Every object is at
 * least 8-byte aligned (kmalloc, malloc, full nodes 64), so the three
 * low bits of its address are free.
 */
#define RIDR_KIND_B16 __RIDR_KIND_B16
#define RIDR_KIND_B32 __RIDR_KIND_B32
#define RIDR_KIND_B64 6UL
/* The root word's shift field holds every level's shift; a shift never
 * sets the FULL tag; the tags fit below a node's alignment.
 */
RK_BUILD_BUG_ON(RIDR_TOP_LEVEL * RIDR_SHIFT > RIDR_ROOT_SHIFT_MASK);
RK_BUILD_BUG_ON(RIDR_SHIFT % 2 != 0);
RK_BUILD_BUG_ON((RIDR_ROOT_SHIFT_MASK | RIDR_KIND_MASK) >= RIDR_NODE_ALIGN);

/*
 * Writer-private bits of map->flags, beside the public RIDR_ACCOUNT and
 * RIDR_ATOMIC.  RIDR_F_WRAPPED: the cyclic cursor went past RIDR_MAX_ID
 * to 0 (so the next cyclic allocation reports a wrap even though its id
 * is not below the cursor).
 */
#define RIDR_FLAGS_PUBLIC (RIDR_ACCOUNT | RIDR_ATOMIC)
#define RIDR_F_WRAPPED (1u << 31)

/*
 * Writer-side load of an RCU word of @map: writers are serialized by the
 * map's lock (the locked calls) or by the caller's (the __ridr_*() calls:
 * the lock named by ridr_set_external_lock(), in the kernel with lockdep
 * checked by rcu_dereference_protected(), as is the map's own).  Every
 * writer load goes through it, bucket records (bucket.c, and
 * ridr_bucket_gap() below) included: their helpers take the map for it.
 */
#if RK_HAVE_FLAVORS
#define ridr_writer_held(map) ((void)(map), 1)
#else
#define ridr_writer_held(map)                     \
	(rk_lockdep_held(&(map)->lock) ||         \
	 rk_lockdep_map_held((map)->external_lock))
#endif
#define ridr_protected(map, p) \
	rk_rcu_dereference_protected(p, ridr_writer_held(map))

/* The allocation flags of @map for an allocation of kind @gfp. */
static inline rk_gfp_t ridr_gfp(const struct ridr *map, rk_gfp_t gfp)
{
	/* Also read outside the map's lock (ridr_preload()): a snapshot. */
	return (rk_read_once(map->flags) & RIDR_ACCOUNT) ? gfp | RK_GFP_ACCOUNT :
							    gfp;
}

/* A bucket bursts into a full node rather than hold more ids. */
#define RIDR_BUCKET_MAX 32
/* A bucket whose ids all lie in one block of 64 becomes a full leaf
 * rather than hold more than this many.
 */
#define RIDR_LEAF_BURST 16
/* A full leaf with this many ids or fewer collapses into a bucket, and
 * so does a full internal node with no full child and at most
 * RIDR_MERGE_MAX ids below it (hysteresis: far from RIDR_BUCKET_MAX).
 */
#define RIDR_COLLAPSE_MAX 4
#define RIDR_MERGE_MAX 8

/*
 * struct ridr_ida_chunk - the bitmap of RIDR_IDA_BITS ids of an IDA
 * (ida.c), the entry of map id 2k for chunk k.
 * @full: writer only: bit w set if @bits[w] is all ones.
 * @used: writer only: bit w set if @bits[w] is not zero.
 * @rcu: deferred free; overlays the writer-only words (I3 in ida.c).
 * @bits: the ids, bit i of word w for id k * RIDR_IDA_BITS + 64 w + i;
 *        readers load a word with rk_read_once().
 */
struct ridr_ida_chunk {
	union {
		struct {
			uint64_t full;
			uint64_t used;
		} w;
		struct rk_rcu_head rcu;
	} u;
	uint64_t bits[RIDR_IDA_BITS / 64];
};

/* The entry of a reserved id in a bucket: readers return NULL for it. */
#define RIDR_RESERVED ((void *)&__ridr_reserved)

/* The records start right after the head, 8-byte aligned. */
RK_BUILD_BUG_ON(sizeof(struct ridr_bucket) % 8 != 0);
/* ...and the readers' word view of them starts there too. */
RK_BUILD_BUG_ON(__builtin_offsetof(struct __ridr_bucket_recs, r) !=
		sizeof(struct ridr_bucket));

/* Layout checks: what readers load never shares a line with what
 * writers update in a full node.
 */
RK_BUILD_BUG_ON(RIDR_SLOTS != 64); /* free bitmaps are 64-bit */
RK_BUILD_BUG_ON(sizeof(void *) * RIDR_SLOTS % RIDR_NODE_ALIGN != 0);
RK_BUILD_BUG_ON(__builtin_offsetof(struct ridr_node, free) !=
		sizeof(void *) * RIDR_SLOTS);
RK_BUILD_BUG_ON(sizeof(struct ridr_node) !=
		sizeof(void *) * RIDR_SLOTS + RIDR_NODE_ALIGN);
RK_BUILD_BUG_ON(__builtin_offsetof(struct ridr, lock) < RIDR_WRITER_GAP);

/* RIDR_NODE_BYTES (ridr.h) ends inside the last line of the node. */
RK_BUILD_BUG_ON(sizeof(struct ridr_node) < RIDR_NODE_BYTES);
RK_BUILD_BUG_ON(sizeof(struct ridr_node) - RIDR_NODE_ALIGN >= RIDR_NODE_BYTES);
RK_BUILD_BUG_ON(RIDR_BUCKET_MAX >= RIDR_SLOTS); /* a bucket is never full */

/* ---- ids and levels ---------------------------------------------- */

/* Mask of the low @bits bits (all ones from RIDR_ID_BITS on). */
static inline unsigned long ridr_low_mask(unsigned int bits)
{
	return bits >= RIDR_ID_BITS ? ~0UL : (1UL << bits) - 1;
}

/* Ids a full node at @level covers, relative to its base, minus one. */
static inline unsigned long ridr_span(unsigned int level)
{
	return ridr_low_mask((level + 1) * RIDR_SHIFT);
}

/* Ids a slot of a node at @level covers, minus one. */
static inline unsigned long ridr_slot_span(unsigned int level)
{
	return ridr_low_mask(level * RIDR_SHIFT);
}

static inline unsigned int ridr_digit(unsigned long id, unsigned int level)
{
	return (unsigned int)(id >> (level * RIDR_SHIFT)) & RIDR_MASK;
}

/* Slots that hold ids <= RIDR_MAX_ID: all 64, but 16 at the top level
 * with 64-bit longs.
 */
static inline uint64_t ridr_valid_slots(unsigned int level)
{
	unsigned int shift = level * RIDR_SHIFT;

	if (shift + RIDR_SHIFT <= RIDR_ID_BITS)
		return ~0ULL;
	return (1ULL << (1u << (RIDR_ID_BITS - shift))) - 1;
}

/* Levels needed to hold @id (1 for 0..63). */
static inline unsigned int ridr_levels_for(unsigned long id)
{
	unsigned int levels = 1;

	while (levels < RIDR_MAX_LEVELS && (id >> (levels * RIDR_SHIFT)) != 0)
		levels++;
	return levels;
}

/* First id of the slot @d of a node at @level that covers @id. */
static inline unsigned long ridr_slot_base(unsigned long id, unsigned int level,
					   unsigned int d)
{
	return (id & ~ridr_span(level)) |
	       ((unsigned long)d << (level * RIDR_SHIFT));
}

/* ---- tagged words ---------------------------------------------- */

/* The bucket kind of a word, or 0 for a full node (or NULL). */
static inline unsigned long ridr_kind(const void *w)
{
	unsigned long v = (unsigned long)w;

	return (v & RIDR_TAG_FULL) ? 0 : v & RIDR_KIND_MASK;
}

/* A full node as a slot's word: tagged FULL. */
static inline void *ridr_node_word(const struct ridr_node *node)
{
	return (void *)((unsigned long)node | RIDR_TAG_FULL);
}

/* The level of the root full node, from its root word. */
static inline unsigned int ridr_root_level(const void *w)
{
	return (unsigned int)((unsigned long)w & RIDR_ROOT_SHIFT_MASK) /
	       RIDR_SHIFT;
}

static inline struct ridr_node *ridr_to_node(const void *w)
{
	return (struct ridr_node *)((unsigned long)w &
				    ~(unsigned long)(RIDR_NODE_ALIGN - 1));
}

static inline struct ridr_bucket *ridr_to_bucket(const void *w)
{
	return (struct ridr_bucket *)((unsigned long)w & ~RIDR_KIND_MASK);
}

/* Key width in bytes for a bucket whose keys have @kshift bits. */
static inline unsigned int ridr_key_bytes(unsigned int kshift)
{
	return kshift <= 16 ? 2 : kshift <= 32 ? 4 : 8;
}

static inline unsigned long ridr_bucket_kind(unsigned int kshift)
{
	return kshift <= 16   ? RIDR_KIND_B16
	       : kshift <= 32 ? RIDR_KIND_B32
			      : RIDR_KIND_B64;
}

static inline void *ridr_bucket_word(const struct ridr_bucket *b)
{
	return (void *)((unsigned long)b | ridr_bucket_kind(b->kshift));
}

static inline void *ridr_root_word(const struct ridr_node *node,
				   unsigned int level)
{
	return (void *)((unsigned long)node |
			(unsigned long)level * RIDR_SHIFT | RIDR_TAG_FULL);
}

/* Bytes of a bucket of @cap records with @kshift-bit keys. */
static inline size_t ridr_bucket_size(unsigned int kshift, unsigned int cap)
{
	size_t keys = ((size_t)ridr_key_bytes(kshift) * cap + 7) & ~(size_t)7;

	return sizeof(struct ridr_bucket) + keys + sizeof(void *) * cap;
}

/* Give a fresh (unpublished) bucket its immutable shape. */
static inline void ridr_bucket_shape(struct ridr_bucket *b,
				     unsigned int kshift, unsigned int cap)
{
	b->cap = (uint8_t)cap;
	b->kshift = (uint8_t)kshift;
	b->eoff = (uint8_t)((ridr_key_bytes(kshift) * cap + 7) / 8);
}

static inline void __rk_rcu **ridr_entries(const struct ridr_bucket *b)
{
	return (void __rk_rcu **)(unsigned long)(__ridr_bucket_data(b) + b->eoff);
}

/* Key of record @i: a single-copy load (the array is written in place
 * only beyond @n, before @n is published; see read.c).
 */
static inline unsigned long ridr_key(const struct ridr_bucket *b,
				     unsigned int i)
{
	const void *k = __ridr_bucket_data(b);

	switch (ridr_key_bytes(b->kshift)) {
	case 2:
		return rk_read_once(((const uint16_t *)k)[i]);
	case 4:
		return rk_read_once(((const uint32_t *)k)[i]);
	default:
		return (unsigned long)rk_read_once(((const uint64_t *)k)[i]);
	}
}

/*
 * Functions shared between the parts: RK_HIDDEN keeps them out of a
 * shared library's dynamic symbols (userspace), where the version script
 * would otherwise export every ridr_* name.
 */

/* ---- mem.c ---------------------------------------------------------- */

/*
 * What one insertion needs, counted by the planning pass of write.c:
 * @nodes full nodes and, if @bucket_cap, one bucket of that many records
 * with @bucket_kshift-bit keys.  The objects themselves, once reserved.
 */
struct ridr_need {
	unsigned int nodes;
	unsigned int bucket_cap;
	unsigned int bucket_kshift;
};

struct ridr_stock {
	unsigned int nr;
	struct ridr_node *nodes[RIDR_PRELOAD_MAX];
	struct ridr_bucket *bucket;
};

/* Bucket capacity for @n records: the smallest class that holds them. */
RK_HIDDEN unsigned int ridr_bucket_cap_for(unsigned int n);
/* A bucket with one node's memory holds this many records. */
RK_HIDDEN unsigned int ridr_block_cap(unsigned int kshift);

/* Reserve what @need says, from new allocations without sleeping (if
 * @may_alloc), then @pl, then the map's spares.  On failure nothing is
 * taken: 0 or -ENOMEM.
 */
RK_HIDDEN int ridr_stock_fill(struct ridr *map, struct ridr_stock *st,
			      const struct ridr_need *need,
			      struct ridr_preload *pl, bool may_alloc);
/* Give back whatever @st still holds (to @map's spares, or freed). */
RK_HIDDEN void ridr_stock_drain(struct ridr *map, struct ridr_stock *st);

/* Take an initialised empty full node at @level / a bucket. */
RK_HIDDEN struct ridr_node *
ridr_stock_node(struct ridr *map, struct ridr_stock *st, unsigned int level);
RK_HIDDEN struct ridr_bucket *
ridr_stock_bucket(struct ridr *map, struct ridr_stock *st, unsigned int kshift);
/* Allocate a bucket outside a stock (collapses; never sleeps). */
RK_HIDDEN struct ridr_bucket *
ridr_bucket_new(struct ridr *map, unsigned int kshift, unsigned int cap);
/* The same, its records not zeroed: for a writer that writes every record
 * below the count it publishes (ridr_cyclic_compact()).
 */
RK_HIDDEN struct ridr_bucket *
ridr_bucket_new_unzeroed(struct ridr *map, unsigned int kshift,
			 unsigned int cap);

/* @obj has been unpublished: free it after a grace period. */
RK_HIDDEN void ridr_retire_node(struct ridr *map, struct ridr_node *node);
RK_HIDDEN void ridr_retire_bucket(struct ridr *map, struct ridr_bucket *b);

#if RK_HAVE_FLAVORS
RK_HIDDEN const rk_rcu_flavor_t *ridr_flavor(const struct ridr *map);
#endif
/* map->bytes += @delta (objects the map holds beyond its tree: the
 * IDA's chunks).
 */
RK_HIDDEN void ridr_bytes_add(struct ridr *map, long delta);

/* Spare nodes the map holds (takes the spare lock). */
RK_HIDDEN unsigned int ridr_spares(struct ridr *map);
/* End a preload giving back only as many nodes as make the map hold
 * @spares spares again; free the rest.
 */
RK_HIDDEN void ridr_preload_return(struct ridr_preload *pl,
				   unsigned int spares);
/* End the preload a locked call made for itself: if the call failed
 * (@ret < 0) the map is as it was, so only its own @spares go back
 * (ridr_preload_return()); else ridr_preload_end().  Nothing to do for a
 * preload that holds no node.
 */
static inline void ridr_preload_finish(struct ridr_preload *pl, int ret,
				       unsigned int spares)
{
	if (!pl->nr)
		return;
	if (ret < 0)
		ridr_preload_return(pl, spares);
	else
		ridr_preload_end(pl);
}

/* ---- write.c -------------------------------------------------------- */

/* Lowest free id >= @start (ridr_alloc()'s search, nothing changed):
 * 0, or -ENOSPC if every id from @start on is allocated.
 */
RK_HIDDEN int ridr_first_free(const struct ridr *map, unsigned long start,
			      unsigned long *out);

/* ---- key search (readers and writers) ---------------------------- */

/*
 * Index of @key among the first @n keys (sorted) of a bucket, or -1:
 * one function per key width, so each loop reads a typed array.
 * Readers (read.c) and writers (bucket.c) search alike; inline in both.
 *
 * First two probes: the keys are sorted and distinct, so @key can sit at
 * index @key - k[0] at the most, and sits exactly there when the keys
 * from k[0] up to it are consecutive, as ids handed out in order are
 * (timers, ipc objects, a dense small map): then the lookup costs two
 * key loads instead of a scan.  Likewise it sits at n - 1 - (k[n-1] -
 * @key) when the keys from it up to the last are consecutive: cyclic
 * churn above a long-lived id (a process's one armed timer, then
 * create/delete: keys L, c, c + 1, ..., the ids after L's gap).  Every
 * key read is below @n, so initialised (R3 in read.c), and never
 * changes while the bucket is reachable (R4): a probe can only find the
 * one record that holds @key.
 */
#define RIDR_DEFINE_SCAN(name, type)                                        \
	static inline int name(const type *k, unsigned int n,               \
			       unsigned long key)                           \
	{                                                                   \
		unsigned int i;                                             \
		unsigned long k0, kl, d;                                    \
									    \
		if (!n)                                                     \
			return -1;                                          \
		k0 = rk_read_once(k[0]);                                    \
		d = (unsigned long)(type)key - k0;                          \
		if ((type)key >= k0 && d < n &&                             \
		    rk_read_once(k[d]) == (type)key)                        \
			return (int)d;                                      \
		kl = rk_read_once(k[n - 1]);                                \
		d = kl - (unsigned long)(type)key;                          \
		if ((type)key <= kl && d < n &&                             \
		    rk_read_once(k[n - 1 - d]) == (type)key)                \
			return (int)(n - 1 - d);                            \
		for (i = 0; i < n; i++) {                                   \
			type ki = rk_read_once(k[i]);                       \
									    \
			if (ki >= (type)key)                                \
				return ki == (type)key ? (int)i : -1;       \
		}                                                           \
		return -1;                                                  \
	}
RIDR_DEFINE_SCAN(ridr_scan16, uint16_t)
RIDR_DEFINE_SCAN(ridr_scan32, uint32_t)
RIDR_DEFINE_SCAN(ridr_scan64, uint64_t)

static inline int ridr_key_index(const struct ridr_bucket *b,
				 unsigned int n, unsigned long key)
{
	const void *keys = __ridr_bucket_data(b);

	switch (ridr_key_bytes(b->kshift)) {
	case 2:
		return ridr_scan16(keys, n, key);
	case 4:
		return ridr_scan32(keys, n, key);
	default:
		return ridr_scan64(keys, n, key);
	}
}

/* ---- bucket.c ------------------------------------------------------- */

/* Index of the record whose key is @id's (live, reserved or a
 * tombstone), or -1.
 */
RK_HIDDEN int ridr_bucket_index(const struct ridr_bucket *b, unsigned long id);
/* Lowest id in [@lo, @hi] (inside one 2^kshift range) that has no
 * live or reserved record in @b: false if none; *@tomb gets the index
 * of the id's tombstone record, or -1 if it has none.
 */
RK_HIDDEN bool ridr_bucket_gap_scan(const struct ridr *map,
				    const struct ridr_bucket *b,
				    unsigned long lo, unsigned long hi,
				    unsigned long *out, int *tomb);

static inline bool ridr_bucket_gap(const struct ridr *map,
				   const struct ridr_bucket *b,
				   unsigned long lo, unsigned long hi,
				   unsigned long *out, int *tomb)
{
	unsigned long key = lo & ridr_low_mask(b->kshift), last;
	unsigned int n = b->n;

	/* Inline, no call, for the common cases: @lo past the last key
	 * (cyclic allocation, an empty bucket): @lo is free, no record; @lo
	 * the last key, a tombstone (the id removed last): @lo is free,
	 * that record.  Writers only (@map's writer serialization held:
	 * ridr_protected() checks it with lockdep in the kernel).
	 */
	last = n ? ridr_key(b, n - 1) : 0;
	if (!n || key > last) {
		*out = lo;
		*tomb = -1;
		return true;
	}
	if (key == last &&
	    !ridr_protected(map, ridr_entries(b)[n - 1])) {
		*out = lo;
		*tomb = (int)n - 1;
		return true;
	}
	return ridr_bucket_gap_scan(map, b, lo, hi, out, tomb);
}

/* Records of @b in [@lo, @hi] with a non-NULL entry. */
RK_HIDDEN unsigned int ridr_bucket_count(const struct ridr *map,
					 const struct ridr_bucket *b,
					 unsigned long lo, unsigned long hi);
/* Append to @dst (unpublished, keys >= every key in it) the records of
 * @src in [@lo, @hi] with non-NULL entries, plus (@id, @ptr) in its
 * place if @add.  Keys are re-based to @dst's kshift.  @src belongs to
 * @map, whose writer serialization is held (as for the search and count
 * above: @map is there for the lockdep condition of the entries' loads).
 */
RK_HIDDEN void ridr_bucket_copy(const struct ridr *map,
				struct ridr_bucket *dst,
				const struct ridr_bucket *src, unsigned long lo,
				unsigned long hi, bool add, unsigned long id,
				void *ptr);
/* Append one record to an unpublished bucket. */
RK_HIDDEN void ridr_bucket_push(struct ridr_bucket *dst, unsigned long id,
				void *ptr);
/* Record's id (@base supplies the bits above kshift). */
static inline unsigned long ridr_bucket_id(const struct ridr_bucket *b,
					   unsigned int i, unsigned long base)
{
	return (base & ~ridr_low_mask(b->kshift)) | ridr_key(b, i);
}

#endif /* RK_RIDR_INTERNAL_H */
