// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * handle.c - generation-checked handles: (generation, id) in 64 bits, so
 * a stale handle finds nothing even after its id was handed out again.
 * Contracts per function are in ridr.h.
 *
 * Layout.  Two ridr maps under one lock (@map's):
 *
 *   @map   id -> entry, as any ridr map.  An id whose generation is
 *          spent stays reserved (NULL entry) for ever: retired.
 *   @gens  k -> the generation counters of ids [64k, 64k + 64): a chunk
 *          of 64 counters of 1, 2 or 4 bytes (by @gen_bits), allocated
 *          on the first allocation of an id of the chunk, kept (counters
 *          must survive their ids' frees) until ridr_handles_destroy().
 *
 * A handle is (gen << id_bits) | id, id_bits = 64 - gen_bits.  An id's
 * counter holds the generation of its current (or next) entry; it
 * changes only when the entry is removed.
 *
 * Memory per id of a chunk in use: a 16-byte rcu head plus 64 counters,
 * 80 / 144 / 272 bytes per 64 ids (1.25 / 2.25 / 4.25 B/id for gen_bits
 * <= 8 / <= 16 / <= 32), plus the @gens map: one 576-byte full leaf per
 * 4096 ids where ids are dense, plus the nodes above and spares: about
 * 0.16 B/id.
 *
 * Ordering (H1-H4; the map's own are W1-W13 and R1-R5):
 *
 * H1. A chunk is zeroed before @gens publishes it (W1), and published
 *     before any id of it is allocated in @map (program order under the
 *     lock, then the release of the entry's publication): a reader that
 *     found an entry and then (H3) looks up the chunk finds it.
 * H2. ridr_handle_remove() stores the id's next generation
 *     (rk_write_once()) before removing the id (W3/W8).  The next
 *     allocation of the id runs later under the same lock and publishes
 *     its entry with release (W1): the generation store happens before
 *     that publication.  No barrier of its own is needed: the lock and
 *     the release order it (the store need not be visible before the
 *     removal, since a reader that finds the id free returns NULL
 *     anyway).
 * H3. ridr_handle_find() loads the entry (ridr_find(), R1), then
 *     rk_smp_rmb(), then the chunk and the counter.  Pairs with H2: if
 *     the entry loaded is one published after a removal, the counter
 *     load sees that removal's generation store (or a later one), so a
 *     handle of an earlier generation never matches: a stale handle
 *     cannot return an entry of a reused id.  If the entry is the
 *     handle's own, the counter is its generation (the handle is live)
 *     or a later one (a concurrent removal: NULL, as if after it).
 *     Under ThreadSanitizer ridr_find()'s loads are acquire loads, which
 *     order the counter load as well.
 * H4. Counters never wrap: a removal that would take a counter past the
 *     largest generation retires the id instead (__ridr_replace() with
 *     NULL: a reservation nothing allocates again).  So no two entries
 *     of one id ever share a generation, whatever the history: handles
 *     are ABA-proof within the id space, at the cost of one id per
 *     2^gen_bits allocations of it.
 *
 * Allocation without partial failure: an allocation into a chunk that
 * exists makes one insertion (@map; its failure changes nothing).  One
 * that needs a new chunk makes two (@gens, then @map), so it is done
 * only with a fresh chunk and a preload of each map in hand, which make
 * both insertions certain; without them it fails with nothing changed
 * and the locked caller gets them outside the lock and retries.
 */
#include "ridr/internal.h"

#include "compat/compat.h"

#define RIDR_GEN_CHUNK_SHIFT 6
#define RIDR_GEN_CHUNK (1UL << RIDR_GEN_CHUNK_SHIFT)

/*
 * struct ridr_gen_chunk - generation counters of 64 consecutive ids.
 * @rcu: deferred free (ridr_handles_destroy()).
 * @data: 64 counters of 1, 2 or 4 bytes; readers load one with
 *        rk_read_once(), the writer stores one with rk_write_once().
 */
struct ridr_gen_chunk {
	struct rk_rcu_head rcu;
	uint64_t data[];
};

/* Bytes of one counter for @gen_bits-bit generations. */
static inline unsigned int ridr_gen_bytes(unsigned int gen_bits)
{
	return gen_bits <= 8 ? 1 : gen_bits <= 16 ? 2 : 4;
}

static inline size_t ridr_gen_chunk_size(const struct ridr_handles *hs)
{
	return sizeof(struct ridr_gen_chunk) +
	       RIDR_GEN_CHUNK * ridr_gen_bytes(hs->gen_bits);
}

static inline unsigned int ridr_id_bits(const struct ridr_handles *hs)
{
	return 64 - hs->gen_bits;
}

/* Largest id a handle can carry. */
static inline unsigned long ridr_handles_id_max(const struct ridr_handles *hs)
{
	unsigned int bits = ridr_id_bits(hs);

	return bits >= RK_BITS_PER_LONG ? ~0UL : (1UL << bits) - 1;
}

static inline uint32_t ridr_gen_max(const struct ridr_handles *hs)
{
	return (uint32_t)((1ULL << hs->gen_bits) - 1);
}

static uint32_t ridr_gen_load(const struct ridr_handles *hs,
			      const struct ridr_gen_chunk *c, unsigned int i)
{
	const void *d = c->data;

	switch (ridr_gen_bytes(hs->gen_bits)) {
	case 1:
		return rk_read_once(((const uint8_t *)d)[i]);
	case 2:
		return rk_read_once(((const uint16_t *)d)[i]);
	default:
		return rk_read_once(((const uint32_t *)d)[i]);
	}
}

static void ridr_gen_store(const struct ridr_handles *hs,
			   struct ridr_gen_chunk *c, unsigned int i,
			   uint32_t gen)
{
	void *d = c->data;

	switch (ridr_gen_bytes(hs->gen_bits)) {
	case 1:
		rk_write_once(((uint8_t *)d)[i], (uint8_t)gen);
		break;
	case 2:
		rk_write_once(((uint16_t *)d)[i], (uint16_t)gen);
		break;
	default:
		rk_write_once(((uint32_t *)d)[i], gen);
		break;
	}
}

static inline uint64_t ridr_handle_make(const struct ridr_handles *hs,
					uint32_t gen, unsigned long id)
{
	return ((uint64_t)gen << ridr_id_bits(hs)) | id;
}

/* The id and generation of @h; false if the id is beyond the map. */
static inline bool ridr_handle_split(const struct ridr_handles *hs,
				     uint64_t h, unsigned long *idp,
				     uint32_t *genp)
{
	unsigned int bits = ridr_id_bits(hs);
	uint64_t id = h & ((1ULL << bits) - 1);

	*genp = (uint32_t)(h >> bits);
	*idp = (unsigned long)id;
	return id <= ridr_handles_id_max(hs);
}

/* ---- chunks ---------------------------------------------------------- */

static void ridr_gen_free1(struct rk_rcu_head *head)
{
	rk_free(rk_container_of(head, struct ridr_gen_chunk, rcu),
		sizeof(struct ridr_gen_chunk) + RIDR_GEN_CHUNK);
}

static void ridr_gen_free2(struct rk_rcu_head *head)
{
	rk_free(rk_container_of(head, struct ridr_gen_chunk, rcu),
		sizeof(struct ridr_gen_chunk) + RIDR_GEN_CHUNK * 2);
}

static void ridr_gen_free4(struct rk_rcu_head *head)
{
	rk_free(rk_container_of(head, struct ridr_gen_chunk, rcu),
		sizeof(struct ridr_gen_chunk) + RIDR_GEN_CHUNK * 4);
}

/* @c has left @gens (destroy): free it after a grace period. */
static void ridr_gen_chunk_retire(struct ridr_handles *hs,
				  struct ridr_gen_chunk *c)
{
	unsigned int bytes = ridr_gen_bytes(hs->gen_bits);

	ridr_bytes_add(&hs->gens, -(long)ridr_gen_chunk_size(hs));
	rk_call_rcu(ridr_flavor(&hs->gens), &c->rcu,
		    bytes == 1 ? ridr_gen_free1 :
		    bytes == 2 ? ridr_gen_free2 : ridr_gen_free4);
}

/* ---- allocation ------------------------------------------------------ */

/*
 * One allocation under the map's lock.  *@spare: a fresh chunk the
 * caller allocated outside the lock (taken if used).  @plm, @plg:
 * preloads of @map and @gens (empty on the first try).
 */
static int ridr_handle_do_alloc(struct ridr_handles *hs, void *ptr,
				uint64_t *hp, struct ridr_preload *plm,
				struct ridr_preload *plg,
				struct ridr_gen_chunk **spare)
{
	struct ridr_gen_chunk *c;
	unsigned long id, k;
	bool fresh = false;
	uint32_t gen;
	int ret;

	if (ridr_first_free(&hs->map, 0, &id) ||
	    id > ridr_handles_id_max(hs))
		return -ENOSPC;
	k = id >> RIDR_GEN_CHUNK_SHIFT;
	c = ridr_find_locked(&hs->gens, k);
	if (!c) {
		/* Two insertions: only when both are certain. */
		if (!*spare || !plm->nr || !plg->nr)
			return -ENOMEM;
		c = *spare;
		ret = __ridr_insert(&hs->gens, k, c, plg);	/* H1 */
		if (ret)
			return ret;
		*spare = NULL;
		fresh = true;
		ridr_bytes_add(&hs->gens, (long)ridr_gen_chunk_size(hs));
	}
	ret = __ridr_insert(&hs->map, id, ptr, plm);	/* W1; H2 */
	if (ret) {
		/* After a new chunk: impossible (preloaded).  Otherwise
		 * nothing changed.
		 */
		rk_warn_on_once(fresh);
		return ret;
	}
	gen = ridr_gen_load(hs, c, (unsigned int)(id & (RIDR_GEN_CHUNK - 1)));
	*hp = ridr_handle_make(hs, gen, id);
	rk_write_once(hs->count, hs->count + 1);
	return 0;
}

int ridr_handle_alloc(struct ridr_handles *hs, void *ptr, uint64_t *hp)
{
	struct ridr_preload plm, plg;	/* only .nr and .map need setting */
	struct ridr_gen_chunk *spare = NULL;
	unsigned int sm = 0, sg = 0;
	struct ridr *map;
	rk_gfp_t gfp;
	int ret, tries;

	if (!hs || !ptr || !hp)
		return -EINVAL;
	map = &hs->map;
	gfp = (rk_read_once(map->flags) & RIDR_ATOMIC) ? RK_GFP_ATOMIC :
							  RK_GFP_KERNEL;
	plm.nr = 0;
	plm.map = NULL;
	plg.nr = 0;
	plg.map = NULL;
	for (tries = 0;; tries++) {
		ridr_lock(map);
		ret = ridr_handle_do_alloc(hs, ptr, hp, &plm, &plg, &spare);
		ridr_unlock(map);
		if (ret != -ENOMEM || tries == 2)
			break;
		if (!tries) {
			sm = ridr_spares(map);
			sg = ridr_spares(&hs->gens);
		}
		if (!spare)
			spare = rk_zalloc(ridr_gen_chunk_size(hs),
					  ridr_gfp(map, gfp));
		if (!spare)
			break;
		if (ridr_preload(&plm, map, ridr_handles_id_max(hs), gfp))
			break;
		if (ridr_preload(&plg, &hs->gens,
				 ridr_handles_id_max(hs) >> RIDR_GEN_CHUNK_SHIFT,
				 gfp))
			break;
	}
	rk_free(spare, ridr_gen_chunk_size(hs));	/* NULL: nothing */
	ridr_preload_finish(&plm, ret, sm);
	ridr_preload_finish(&plg, ret, sg);
	return ret;
}
rk_export_symbol(ridr_handle_alloc);

/* ---- lookup and removal ---------------------------------------------- */

void *ridr_handle_find(const struct ridr_handles *hs, uint64_t h)
{
	const struct ridr_gen_chunk *c;
	unsigned long id;
	uint32_t gen;
	void *p;

	if (!ridr_handle_split(hs, h, &id, &gen))
		return NULL;
	p = ridr_find(&hs->map, id);	/* R1 */
	if (!p)
		return NULL;
	/* H3: the entry before its generation; pairs with H2. */
	rk_smp_rmb();
	c = ridr_find(&hs->gens, id >> RIDR_GEN_CHUNK_SHIFT);	/* H1 */
	if (unlikely(!c))
		return NULL;
	if (ridr_gen_load(hs, c, (unsigned int)(id & (RIDR_GEN_CHUNK - 1))) !=
	    gen)
		return NULL;
	return p;
}
rk_export_symbol(ridr_handle_find);

int ridr_handle_remove(struct ridr_handles *hs, uint64_t h, void **oldp)
{
	struct ridr_gen_chunk *c;
	unsigned long id;
	unsigned int i;
	uint32_t gen;
	void *p;
	int ret = -ENOENT;

	if (!hs)
		return -EINVAL;
	if (!ridr_handle_split(hs, h, &id, &gen))
		return -ENOENT;
	i = (unsigned int)(id & (RIDR_GEN_CHUNK - 1));
	ridr_lock(&hs->map);
	/* NULL for a free id and for a retired (reserved) one. */
	p = ridr_find_locked(&hs->map, id);
	c = ridr_find_locked(&hs->gens, id >> RIDR_GEN_CHUNK_SHIFT);
	if (p && c && ridr_gen_load(hs, c, i) == gen) {
		if (gen == ridr_gen_max(hs)) {
			/* H4: spent; the id stays reserved for ever. */
			__ridr_replace(&hs->map, NULL, id, NULL);
			rk_write_once(hs->retired, hs->retired + 1);
		} else {
			ridr_gen_store(hs, c, i, gen + 1);	/* H2 */
			__ridr_remove(&hs->map, id, NULL);
		}
		rk_write_once(hs->count, hs->count - 1);
		if (oldp)
			*oldp = p;
		ret = 0;
	}
	ridr_unlock(&hs->map);
	return ret;
}
rk_export_symbol(ridr_handle_remove);

/* ---- init, destroy, statistics ---------------------------------------- */

static int ridr_handles_setup(struct ridr_handles *hs, unsigned int gen_bits)
{
	if (!hs || gen_bits < RIDR_HANDLE_GEN_BITS_MIN ||
	    gen_bits > RIDR_HANDLE_GEN_BITS_MAX)
		return -EINVAL;
	hs->gen_bits = gen_bits;
	hs->count = 0;
	hs->retired = 0;
	return 0;
}

#if RK_HAVE_FLAVORS
int ridr_handles_init_flavor(struct ridr_handles *hs, unsigned int gen_bits,
			     const rk_rcu_flavor_t *flavor)
{
	int ret = ridr_handles_setup(hs, gen_bits);

	if (ret)
		return ret;
	ridr_init_flavor(&hs->map, flavor);
	ridr_init_flavor(&hs->gens, flavor);
	return 0;
}
rk_export_symbol(ridr_handles_init_flavor);
#endif

int ridr_handles_init(struct ridr_handles *hs, unsigned int gen_bits)
{
	int ret = ridr_handles_setup(hs, gen_bits);

	if (ret)
		return ret;
	ridr_init(&hs->map);
	ridr_init(&hs->gens);
	/* @gens is written under @map's lock (H1): lockdep checks that. */
	ridr_set_external_lock(&hs->gens, &hs->map.lock);
	return 0;
}
rk_export_symbol(ridr_handles_init);

void ridr_handles_destroy(struct ridr_handles *hs)
{
	struct ridr_gen_chunk *c;
	unsigned long k = 0;

	/* The chunks are the only entries of @gens.  A walk is a reader:
	 * in a read-side section of the map's own kind.
	 */
	ridr_read_lock(&hs->gens);
	for (c = ridr_get_next(&hs->gens, &k); c;
	     c = __ridr_iter_next(&hs->gens, &k))
		ridr_gen_chunk_retire(hs, c);
	ridr_read_unlock(&hs->gens);
	ridr_destroy(&hs->map);
	ridr_destroy(&hs->gens);
	rk_write_once(hs->count, 0);
	rk_write_once(hs->retired, 0);
}
rk_export_symbol(ridr_handles_destroy);

unsigned long ridr_handles_count(const struct ridr_handles *hs)
{
	return rk_read_once(hs->count);
}
rk_export_symbol(ridr_handles_count);

unsigned long ridr_handles_retired(const struct ridr_handles *hs)
{
	return rk_read_once(hs->retired);
}
rk_export_symbol(ridr_handles_retired);

size_t ridr_handles_memory(const struct ridr_handles *hs)
{
	return ridr_memory(&hs->map) + ridr_memory(&hs->gens);
}
rk_export_symbol(ridr_handles_memory);
