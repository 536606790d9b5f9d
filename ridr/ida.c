// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ida.c - an id allocator without entries (the kernel's IDA), built on a
 * ridr map of bitmaps.  Contracts per function are in ridr.h.
 *
 * Layout.  Ids are grouped in chunks of RIDR_IDA_BITS; chunk k covers
 * [k * RIDR_IDA_BITS, (k + 1) * RIDR_IDA_BITS).  The ridr map holds two
 * ids per chunk:
 *
 *   2k      the chunk's bitmap (struct ridr_ida_chunk), present while
 *           some id of the chunk is allocated;
 *   2k + 1  a reservation, present while every id of the chunk is.
 *
 * So "lowest free id >= x" is ridr's own free-id search (the @free
 * bitmaps of its full nodes, gaps of its buckets) started at 2 * chunk(x):
 * the first free ridr id is 2k for a chunk k with no bitmap (all its ids
 * free) or 2k + 1 for a chunk that has room; full chunks are skipped
 * in O(height), never scanned.  Inside a chunk a summary word says which
 * of its 64 words are full.
 *
 * Memory (64-bit): a chunk is 16 + 512 bytes for 4096 ids; the map's full
 * leaves hold 32 chunks each (two slots per chunk): dense ids cost
 * 528 / 4096 + 576 / 131072 = 0.133 bytes per id (the kernel's IDA:
 * 128 / 1024 + 576 / 65536 = 0.134).  A lone id costs one chunk and a
 * bucket record: about 570 bytes.
 *
 * Ordering (I1-I4; the map's own are W1-W13 and R1-R5):
 *
 * I1. A chunk is written completely (its first bit set) before the map
 *     publishes it at 2k (W1): a reader that finds it through
 *     ridr_find() sees that bit (R1).
 * I2. A bit of a published chunk changes with one rk_write_once() of its
 *     word; ridr_ida_test() loads the word with rk_read_once(): it sees
 *     the word before or after each change (single-copy atomicity), so
 *     the answer for an id is its state at some point of the call.
 *     No ordering with other memory: an IDA publishes no object.
 * I3. A chunk whose last bit is cleared is removed from the map (W3/W8,
 *     then W11-W12 for the map's objects) and freed after a grace period
 *     (rk_call_rcu()), so a reader that found it reads its (cleared)
 *     words, never freed memory.  Its header (writer-only summary) is
 *     overwritten by the rcu head then; readers never load the header.
 * I4. The reservation at 2k + 1 is writer-only information; readers
 *     never look at odd ids.
 *
 * Allocation without partial failure: an allocation makes at most one
 * insertion into the map (2k with a new chunk, or 2k + 1 when the chunk
 * fills up), done before the bit is set in a published chunk; a failed
 * insertion leaves the map as it was (write.c) and the bit unset.  Freeing
 * only removes from the map, which never allocates.
 */
#include "ridr/internal.h"

#include "compat/compat.h"

RK_DEFINE_CACHE(ridr_ida_cache, struct ridr_ida_chunk);

#define RIDR_IDA_WORDS (RIDR_IDA_BITS / 64)
RK_BUILD_BUG_ON(RIDR_IDA_WORDS != 64);	/* one summary bit per word */

/* The map ids of chunk @k: its bitmap and its full marker. */
static inline unsigned long ridr_ida_slot(unsigned long k)
{
	return 2 * k;
}

/* ---- chunks (writer side: under the map's lock) ----------------------- */

/* First clear bit of @c at or after @off, or RIDR_IDA_BITS. */
static unsigned int ridr_ida_chunk_next(const struct ridr_ida_chunk *c,
					unsigned int off)
{
	unsigned int w = off / 64;
	uint64_t free = ~c->bits[w] & (~0ULL << (off % 64));
	uint64_t words;

	if (free)
		return w * 64 + rk_ffs64(free);
	if (w == RIDR_IDA_WORDS - 1)
		return RIDR_IDA_BITS;
	words = ~c->u.w.full & (~0ULL << (w + 1));
	if (!words)
		return RIDR_IDA_BITS;
	w = rk_ffs64(words);
	return w * 64 + rk_ffs64(~c->bits[w]);
}

static void ridr_ida_chunk_set(struct ridr_ida_chunk *c, unsigned int bit)
{
	unsigned int w = bit / 64;
	uint64_t v = c->bits[w] | (1ULL << (bit % 64));

	rk_write_once(c->bits[w], v);	/* I2 */
	c->u.w.used |= 1ULL << w;
	if (v == ~0ULL)
		c->u.w.full |= 1ULL << w;
}

static void ridr_ida_chunk_clear(struct ridr_ida_chunk *c, unsigned int bit)
{
	unsigned int w = bit / 64;
	uint64_t v = c->bits[w] & ~(1ULL << (bit % 64));

	rk_write_once(c->bits[w], v);	/* I2 */
	c->u.w.full &= ~(1ULL << w);
	if (!v)
		c->u.w.used &= ~(1ULL << w);
}

static bool ridr_ida_chunk_test(const struct ridr_ida_chunk *c,
				unsigned int bit)
{
	return (rk_read_once(c->bits[bit / 64]) >> (bit % 64)) & 1;
}

static void ridr_ida_chunk_free_rcu(struct rk_rcu_head *head)
{
	rk_cache_free(&ridr_ida_cache,
		      rk_container_of(head, struct ridr_ida_chunk, u.rcu));
}

/* I3: @c has left the map; free it after a grace period. */
static void ridr_ida_chunk_retire(struct ridr_ida *ida,
				  struct ridr_ida_chunk *c)
{
	ridr_bytes_add(&ida->map, -(long)sizeof(*c));
	rk_call_rcu(ridr_flavor(&ida->map), &c->u.rcu,
		    ridr_ida_chunk_free_rcu);
}

/* ---- search and allocation -------------------------------------------- */

/*
 * Lowest free id >= @start: its chunk in *@cp (NULL if the chunk has no
 * bitmap yet).  -ENOSPC if every id from @start on is allocated.
 */
static int ridr_ida_next_free(struct ridr_ida *ida, unsigned long start,
			      unsigned long *out, struct ridr_ida_chunk **cp)
{
	unsigned long k = start / RIDR_IDA_BITS;
	unsigned int off = (unsigned int)(start % RIDR_IDA_BITS);

	for (;;) {
		struct ridr_ida_chunk *c = NULL;
		unsigned long rid, kk;
		unsigned int bit = 0;

		/* The first chunk >= k without a full marker (odd id
		 * free) or without a bitmap (even id free).
		 */
		if (ridr_first_free(&ida->map, ridr_ida_slot(k), &rid))
			return -ENOSPC;
		kk = rid / 2;
		if (kk > RIDR_MAX_ID / RIDR_IDA_BITS)
			return -ENOSPC;	/* past the last chunk */
		if (kk != k)
			off = 0;
		if (rid & 1) {
			c = ridr_find_locked(&ida->map, ridr_ida_slot(kk));
			bit = ridr_ida_chunk_next(c, off);
		} else {
			bit = off;
		}
		if (bit < RIDR_IDA_BITS) {
			*out = kk * RIDR_IDA_BITS + bit;
			*cp = c;
			return 0;
		}
		/* Only chunk(start) can have room below @start alone. */
		if (kk == RIDR_MAX_ID / RIDR_IDA_BITS)
			return -ENOSPC;
		k = kk + 1;
		off = 0;
	}
}

/* The id an allocation takes (as ridr_pick()). */
static int ridr_ida_pick(struct ridr_ida *ida, unsigned long min,
			 unsigned long max, bool cyclic, unsigned long *idp,
			 struct ridr_ida_chunk **cp)
{
	unsigned long start = min, id;
	int ret;

	if (cyclic) {
		start = rk_read_once(ida->map.next);
		if (start < min || start > max)
			start = min;
	}
	ret = ridr_ida_next_free(ida, start, &id, cp);
	if (!ret && id > max)
		ret = -ENOSPC;
	if (ret == -ENOSPC && start > min) {
		ret = ridr_ida_next_free(ida, min, &id, cp);
		if (!ret && id >= start)
			ret = -ENOSPC;
	}
	if (!ret)
		*idp = id;
	return ret;
}

/*
 * One allocation under the map's lock.  *@spare: a fresh chunk the
 * caller allocated outside the lock (taken if used).  @pl: nodes for the
 * one map insertion.
 */
static int ridr_ida_do_alloc(struct ridr_ida *ida, unsigned long min,
			     unsigned long max, bool cyclic,
			     unsigned long *idp, struct ridr_preload *pl,
			     struct ridr_ida_chunk **spare)
{
	struct ridr_ida_chunk *c;
	unsigned long id, k;
	unsigned int bit;
	int ret;

	ret = ridr_ida_pick(ida, min, max, cyclic, &id, &c);
	if (ret)
		return ret;
	k = id / RIDR_IDA_BITS;
	bit = (unsigned int)(id % RIDR_IDA_BITS);
	if (!c) {
		c = *spare;
		if (c)
			*spare = NULL;
		else
			c = rk_cache_zalloc(&ridr_ida_cache,
					    ridr_gfp(&ida->map, RK_GFP_NOWAIT));
		if (!c)
			return -ENOMEM;
		ridr_ida_chunk_set(c, bit);	/* I1: unpublished */
		ret = __ridr_insert(&ida->map, ridr_ida_slot(k), c, pl);
		if (ret) {
			/* Never published: back to the caller's spare. */
			ridr_ida_chunk_clear(c, bit);
			if (!*spare)
				*spare = c;
			else
				rk_cache_free(&ridr_ida_cache, c);
			return ret;
		}
		ridr_bytes_add(&ida->map, (long)sizeof(*c));
	} else {
		unsigned int w = bit / 64;
		uint64_t full = c->u.w.full;

		if ((c->bits[w] | (1ULL << (bit % 64))) == ~0ULL)
			full |= 1ULL << w;
		/* The chunk fills up: mark it first, so a failure changes
		 * nothing.
		 */
		if (full == ~0ULL) {
			ret = __ridr_insert(&ida->map, ridr_ida_slot(k) + 1,
					    NULL, pl);
			if (ret)
				return ret;
		}
		ridr_ida_chunk_set(c, bit);
	}
	rk_write_once(ida->count, ida->count + 1);
	if (cyclic)	/* wraps to 0 past RIDR_MAX_ID, then restarts at min */
		rk_write_once(ida->map.next, id + 1);
	*idp = id;
	return 0;
}

/*
 * The locked allocation: as ridr_locked() in write.c, plus a chunk
 * allocated outside the lock when the one without sleeping failed.
 */
static int ridr_ida_alloc_locked(struct ridr_ida *ida, unsigned long min,
				 unsigned long max, unsigned long *idp,
				 bool cyclic)
{
	struct ridr *map;
	struct ridr_preload pl;	/* only .nr and .map need initialising */
	struct ridr_ida_chunk *spare = NULL;
	unsigned int spares = 0;
	rk_gfp_t gfp;
	int ret, tries;

	if (!ida || !idp || min > max)
		return -EINVAL;
	map = &ida->map;
	gfp = (rk_read_once(map->flags) & RIDR_ATOMIC) ? RK_GFP_ATOMIC :
							  RK_GFP_KERNEL;
	pl.nr = 0;
	pl.map = NULL;
	for (tries = 0;; tries++) {
		ridr_lock(map);
		ret = ridr_ida_do_alloc(ida, min, max, cyclic, idp, &pl, &spare);
		ridr_unlock(map);
		if (ret != -ENOMEM || tries == 2)
			break;
		if (!tries)
			spares = ridr_spares(map);
		if (!spare)
			spare = rk_cache_zalloc(&ridr_ida_cache,
						ridr_gfp(map, gfp));
		if (!spare)
			break;
		/* The one insertion: 2k + 1 for the largest chunk. */
		if (ridr_preload(&pl, map,
				 ridr_ida_slot(max / RIDR_IDA_BITS) + 1, gfp))
			break;
	}
	if (spare)
		rk_cache_free(&ridr_ida_cache, spare);
	ridr_preload_finish(&pl, ret, spares);
	return ret;
}

/* ---- API ------------------------------------------------------------- */

#if RK_HAVE_FLAVORS
void ridr_ida_init_flavor(struct ridr_ida *ida, const rk_rcu_flavor_t *flavor)
{
	ridr_init_flavor(&ida->map, flavor);
	ida->count = 0;
}
rk_export_symbol(ridr_ida_init_flavor);
#endif

void ridr_ida_init(struct ridr_ida *ida)
{
	ridr_init(&ida->map);
	ida->count = 0;
}
rk_export_symbol(ridr_ida_init);

int ridr_ida_alloc(struct ridr_ida *ida, unsigned long min, unsigned long max,
		   unsigned long *idp)
{
	return ridr_ida_alloc_locked(ida, min, max, idp, false);
}
rk_export_symbol(ridr_ida_alloc);

int ridr_ida_alloc_cyclic(struct ridr_ida *ida, unsigned long min,
			  unsigned long max, unsigned long *idp)
{
	return ridr_ida_alloc_locked(ida, min, max, idp, true);
}
rk_export_symbol(ridr_ida_alloc_cyclic);

int ridr_ida_free(struct ridr_ida *ida, unsigned long id)
{
	unsigned long k = id / RIDR_IDA_BITS;
	unsigned int bit = (unsigned int)(id % RIDR_IDA_BITS);
	struct ridr_ida_chunk *c;
	int ret = -ENOENT;

	if (!ida)
		return -EINVAL;
	ridr_lock(&ida->map);
	c = ridr_find_locked(&ida->map, ridr_ida_slot(k));
	if (c && (c->bits[bit / 64] >> (bit % 64)) & 1) {
		if (c->u.w.full == ~0ULL)	/* no longer full: I4 */
			__ridr_remove(&ida->map, ridr_ida_slot(k) + 1, NULL);
		ridr_ida_chunk_clear(c, bit);
		if (!c->u.w.used) {	/* I3 */
			__ridr_remove(&ida->map, ridr_ida_slot(k), NULL);
			ridr_ida_chunk_retire(ida, c);
		}
		rk_write_once(ida->count, ida->count - 1);
		ret = 0;
	}
	ridr_unlock(&ida->map);
	return ret;
}
rk_export_symbol(ridr_ida_free);

bool ridr_ida_test(const struct ridr_ida *ida, unsigned long id)
{
	const struct ridr_ida_chunk *c;

	/* R1 and I1: the words are reached through the dependent load. */
	c = ridr_find(&ida->map, ridr_ida_slot(id / RIDR_IDA_BITS));
	return c && ridr_ida_chunk_test(c, (unsigned int)(id % RIDR_IDA_BITS));
}
rk_export_symbol(ridr_ida_test);

unsigned long ridr_ida_count(const struct ridr_ida *ida)
{
	return rk_read_once(ida->count);
}
rk_export_symbol(ridr_ida_count);

size_t ridr_ida_memory(const struct ridr_ida *ida)
{
	return ridr_memory(&ida->map);
}
rk_export_symbol(ridr_ida_memory);

void ridr_ida_destroy(struct ridr_ida *ida)
{
	unsigned long rid = 0;
	struct ridr_ida_chunk *c;

	/* The chunks are the map's only entries (its odd ids are
	 * reservations, which the walk skips).  A walk is a reader: in a
	 * read-side section of the map's own kind.
	 */
	ridr_read_lock(&ida->map);
	for (c = ridr_get_next(&ida->map, &rid); c;
	     c = __ridr_iter_next(&ida->map, &rid))
		ridr_ida_chunk_retire(ida, c);
	ridr_read_unlock(&ida->map);
	ridr_destroy(&ida->map);
	rk_write_once(ida->count, 0);
}
rk_export_symbol(ridr_ida_destroy);
