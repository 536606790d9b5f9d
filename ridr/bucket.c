// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bucket.c - the writer's view of bucket records: find, gap search,
 * counting, and building the records of a copy that is not yet
 * published (so plain stores: nobody else can see it).
 *
 * Records are sorted by key.  A bucket some slots share (after a burst)
 * also holds records of ids other slots cover, and, once a slot got a
 * bucket of its own, stale records of that slot; callers therefore pass
 * the id range [@lo, @hi] of the slot they came through, and only
 * records inside it count.
 */
#include "ridr/internal.h"

#include "compat/compat.h"

/*
 * The loops below run once per key width, on a typed array: @b's keys
 * are @type, the record count is @n.  RIDR_KEYS_SWITCH(b, BODY) expands
 * BODY for the width of @b with `keys` bound to the array.
 */
#define RIDR_KEYS_SWITCH(b, BODY)                                           \
	do {                                                                \
		switch (ridr_key_bytes((b)->kshift)) {                      \
		case 2: {                                                   \
			const uint16_t *keys = (const void *)__ridr_bucket_data(b);    \
			BODY;                                               \
			break;                                              \
		}                                                           \
		case 4: {                                                   \
			const uint32_t *keys = (const void *)__ridr_bucket_data(b);    \
			BODY;                                               \
			break;                                              \
		}                                                           \
		default: {                                                  \
			const uint64_t *keys = (const void *)__ridr_bucket_data(b);    \
			BODY;                                               \
			break;                                              \
		}                                                           \
		}                                                           \
	} while (0)

int ridr_bucket_index(const struct ridr_bucket *b, unsigned long id)
{
	unsigned long key = id & ridr_low_mask(b->kshift);
	unsigned int n = b->n;
	unsigned long last;

	/* Past the last key (an append, cyclic allocation): no record,
	 * and no scan of them all; the last key itself (cyclic churn
	 * removes the id it allocated last): that record.
	 */
	if (!n)
		return -1;
	last = ridr_key(b, n - 1);
	if (key >= last)
		return key == last ? (int)n - 1 : -1;
	/* The readers' search (read.c): the probes, then a scan. */
	return ridr_key_index(b, n, key);
}

/* Whether record @i holds an allocated id (an entry or a reservation).
 * Writers only: @map's writer serialization is held, which
 * ridr_protected() checks with lockdep in the kernel.
 */
static inline bool ridr_record_used(const struct ridr *map,
				    const struct ridr_bucket *b,
				    unsigned int i)
{
	return !!ridr_protected(map, ridr_entries(b)[i]);
}

/*
 * Keys are the low kshift bits of the ids, and [@lo, @hi] lies inside
 * one range of 2^kshift ids (the slot's), so comparing keys is comparing
 * ids: search among keys, with @lo and @hi reduced to keys.
 */
bool ridr_bucket_gap_scan(const struct ridr *map, const struct ridr_bucket *b,
			  unsigned long lo, unsigned long hi,
			  unsigned long *out, int *tomb)
{
	unsigned long mask = ridr_low_mask(b->kshift);
	unsigned long cand = lo & mask, khi = hi & mask;
	unsigned int n = b->n, i;
	int t = -1;

	/* ridr_bucket_gap() has handled @lo past the last key. */
	RIDR_KEYS_SWITCH(b, {
		for (i = 0; i < n; i++) {
			unsigned long k = keys[i];

			if (k < cand)
				continue;
			if (k > cand)
				break;
			if (!ridr_record_used(map, b, i)) {
				t = (int)i;	/* a tombstone of cand */
				break;
			}
			if (cand == khi)
				return false;	/* taken up to hi */
			cand++;
		}
	});
	if (cand > khi)
		return false;
	*out = (lo & ~mask) | cand;
	*tomb = t;
	return true;
}

unsigned int ridr_bucket_count(const struct ridr *map,
			       const struct ridr_bucket *b,
			       unsigned long lo, unsigned long hi)
{
	unsigned int i, n = 0;

	for (i = 0; i < b->n; i++) {
		unsigned long id = ridr_bucket_id(b, i, lo);

		if (id >= lo && id <= hi && ridr_record_used(map, b, i))
			n++;
	}
	return n;
}

/* Append (@id, @ptr) to the unpublished @dst, whose entries are @de. */
static inline void ridr_bucket_put(struct ridr_bucket *dst,
				   void __rk_rcu **de, unsigned long id,
				   void *ptr)
{
	unsigned long key = id & ridr_low_mask(dst->kshift);
	unsigned int i = dst->n;
	void *k = __ridr_bucket_data(dst);

	rk_warn_on_once(i >= dst->cap);
	switch (ridr_key_bytes(dst->kshift)) {
	case 2:
		((uint16_t *)k)[i] = (uint16_t)key;
		break;
	case 4:
		((uint32_t *)k)[i] = (uint32_t)key;
		break;
	default:
		((uint64_t *)k)[i] = key;
		break;
	}
	/* @dst is not reachable yet: no ordering needed. */
	rk_rcu_init_pointer(de[i], ptr);
	dst->n = (uint8_t)(i + 1);
}

void ridr_bucket_push(struct ridr_bucket *dst, unsigned long id, void *ptr)
{
	ridr_bucket_put(dst, ridr_entries(dst), id, ptr);
}

void ridr_bucket_copy(const struct ridr *map, struct ridr_bucket *dst,
		      const struct ridr_bucket *src, unsigned long lo,
		      unsigned long hi, bool add, unsigned long id, void *ptr)
{
	void __rk_rcu **se = ridr_entries(src), **de = ridr_entries(dst);
	unsigned long base = lo & ~ridr_low_mask(src->kshift);
	unsigned int i, n = src->n;

	/* Tombstones are dropped: a record's key is read only if its entry
	 * is used, so a cyclic bucket, mostly tombstones, costs one load a
	 * record.  @id goes before the first kept record above it.
	 */
	for (i = 0; i < n; i++) {
		void *e = ridr_protected(map, se[i]);
		unsigned long rid;

		if (!e)
			continue;
		rid = base | ridr_key(src, i);
		if (rid < lo || rid > hi)
			continue;
		if (add && rid > id) {
			ridr_bucket_put(dst, de, id, ptr);
			add = false;
		}
		ridr_bucket_put(dst, de, rid, e);
	}
	if (add)
		ridr_bucket_put(dst, de, id, ptr);
}
