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

int ridr_bucket_index(const struct ridr_bucket *b, unsigned long id)
{
	unsigned long key = id & ridr_low_mask(b->kshift);
	unsigned int n = b->n, i;

	for (i = 0; i < n; i++) {
		unsigned long k = ridr_key(b, i);

		if (k == key)
			return (int)i;
		if (k > key)
			break;
	}
	return -1;
}

/* Whether record @i holds an allocated id (an entry or a reservation). */
static inline bool ridr_record_used(const struct ridr_bucket *b,
				    unsigned int i)
{
	return rk_rcu_dereference_protected(ridr_entries(b)[i], 1) != NULL;
}

bool ridr_bucket_gap(const struct ridr_bucket *b, unsigned long base,
		     unsigned long lo, unsigned long hi, unsigned long *out)
{
	unsigned long cand = lo;
	unsigned int i;

	for (i = 0; i < b->n; i++) {
		unsigned long id = ridr_bucket_id(b, i, base);

		if (id < cand || !ridr_record_used(b, i))
			continue;
		if (id > cand)
			break;
		if (cand == hi)
			return false;	/* [lo, hi] is taken up to hi */
		cand++;
	}
	if (cand > hi)
		return false;
	*out = cand;
	return true;
}

unsigned int ridr_bucket_count(const struct ridr_bucket *b,
			       unsigned long lo, unsigned long hi)
{
	unsigned int i, n = 0;

	for (i = 0; i < b->n; i++) {
		unsigned long id = ridr_bucket_id(b, i, lo);

		if (id >= lo && id <= hi && ridr_record_used(b, i))
			n++;
	}
	return n;
}

void ridr_bucket_push(struct ridr_bucket *dst, unsigned long id, void *ptr)
{
	unsigned long key = id & ridr_low_mask(dst->kshift);
	unsigned int i = dst->n;
	void *k = dst->data;

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
	rk_rcu_init_pointer(ridr_entries(dst)[i], ptr);
	dst->n = (uint8_t)(i + 1);
}

void ridr_bucket_copy(struct ridr_bucket *dst, const struct ridr_bucket *src,
		      unsigned long lo, unsigned long hi, bool add,
		      unsigned long id, void *ptr)
{
	unsigned int i;

	for (i = 0; i < src->n; i++) {
		unsigned long rid = ridr_bucket_id(src, i, lo);
		void *e;

		if (rid < lo || rid > hi)
			continue;
		if (add && rid > id) {
			ridr_bucket_push(dst, id, ptr);
			add = false;
		}
		e = rk_rcu_dereference_protected(ridr_entries(src)[i], 1);
		if (e)	/* tombstones are dropped */
			ridr_bucket_push(dst, rid, e);
	}
	if (add)
		ridr_bucket_push(dst, id, ptr);
}
