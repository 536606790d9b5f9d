/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef RK_RIDR_H
#define RK_RIDR_H

/**
 * DOC: ridr - an RCU-readable radix-tree id map and id allocator
 *
 * Maps integer ids (unsigned long) to pointers and hands out free ids.
 *
 * Shape: a radix tree of two object kinds.  Full nodes have 64 slots,
 * indexed directly by 6 bits of the id; where ids are dense the tree is
 * made of them only.  Buckets hold a small sorted array of (id, entry)
 * records for whatever part of the id space a slot (or the whole map)
 * covers; where ids are sparse a bucket replaces the subtree below a
 * slot, so a lone id costs one 40-byte record instead of a path of
 * nodes.  A bucket that grows past 32 ids bursts into a full node; a
 * full node whose subtree falls to a few ids collapses back into a bucket.
 *
 * Readers: ridr_find(), ridr_get_next(), ridr_for_each() run inside the
 * caller's RCU read-side critical section (rcu_read_lock() of the map's
 * flavor).  They take no lock, perform no atomic read-modify-write and
 * store nothing to shared memory; they are wait-free.  Through full nodes
 * a lookup makes one dependent load per level: the root word carries the
 * root's level, every lower level's shift is derived, and no node field
 * but the slot is read.  A bucket costs an acquire load of its record
 * count, a scan of at most 32 keys and the load of the entry, all in the
 * same object.  A reader concurrent with a writer sees, for every id,
 * either the entry before or the entry after the writer's change.
 *
 * Writers: ridr_alloc(), ridr_alloc_cyclic(), ridr_replace() and
 * ridr_remove() take the map's spinlock.  The __ridr_*() variants leave
 * serialization to the caller: either ridr_lock()/ridr_unlock() around
 * them, or a lock of the caller's that serializes every writer of this
 * map (the kernel's ipc code uses its ids rwsem).  Writers publish an
 * object only after it is fully initialised (release ordering, pairing
 * with the readers' dependent loads), and free an object that leaves the
 * tree only after a grace period (call_rcu), also in ridr_destroy().  In
 * userspace a writer thread must be registered with the map's liburcu
 * flavor (bp registers itself).
 *
 * Entries: any pointer; NULL stored by ridr_alloc() reserves the id:
 * ridr_find() reports it absent (NULL) until ridr_replace() fills it, and
 * no allocation hands it out again until ridr_remove().  The map never
 * frees or dereferences entries: their lifetime is the caller's.  The
 * pattern: ridr_remove() the id, mark the object dead (lockref), free it
 * after a grace period; lookups do ridr_find() + lockref_get_not_dead()
 * inside one read-side section.
 *
 * Memory: removing ids does not free the objects the next allocation is
 * likely to use: the last object emptied stays (empty) until another one
 * empties, and a root bucket stays when the map empties.  So an idle map
 * holds at most its root, one emptied object with the full nodes above
 * it, and the spare nodes of ridr_preload(): ridr_memory() reports all of
 * it, ridr_destroy() frees it.
 *
 * Undefined: calling a reader outside a read-side critical section (the
 * objects it walks may be freed under it); calling __ridr_*() without
 * serializing writers; using a map after ridr_destroy() without
 * ridr_init(); destroying a map while writers run.
 */

#include "compat/compat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bits of the id per tree level, and slots per full node. */
#define RIDR_SHIFT 6
#define RIDR_SLOTS (1u << RIDR_SHIFT)
/* Highest id: every unsigned long is a valid id. */
#define RIDR_MAX_ID ULONG_MAX
/* Levels of a tree that holds RIDR_MAX_ID (11 with 64-bit longs). */
#define RIDR_MAX_LEVELS \
	((unsigned int)((RK_BITS_PER_LONG + RIDR_SHIFT - 1) / RIDR_SHIFT))
/*
 * Objects one insertion may need: a full node per level (growing the
 * tree, or bursting buckets down a chain of levels) and one bucket.
 */
#define RIDR_PRELOAD_MAX (RIDR_MAX_LEVELS + 1)

/* Low bits of a slot or of the root word: what the pointer points to. */
#define RIDR_KIND_MASK 3UL
#define RIDR_KIND_FULL 0UL	/* a full node (also: NULL, an entry) */
/* The root word also carries the root full node's level here. */
#define RIDR_ROOT_LEVEL_SHIFT 2
#define RIDR_ROOT_LEVEL_MASK (15UL << RIDR_ROOT_LEVEL_SHIFT)
/* Full nodes are aligned to this, so the root word has 6 tag bits. */
#define RIDR_NODE_ALIGN 64

/**
 * struct ridr_node - a full node: 64 directly indexed slots.
 * @slots: RCU-protected; in a leaf (level 0) the entries, elsewhere
 *         child pointers tagged with their kind.  The only field readers
 *         load: 8 cache lines of their own.
 * @free: writer only: bit i set if slot i has a free id below it.
 * @count: writer only: used slots (children, or allocated ids in a leaf).
 * @nfull: writer only: children that are full nodes.
 * @rcu: deferred free.
 *
 * The writer-only fields sit in a ninth cache line that no lookup
 * touches (checked by a static assertion in ridr/internal.h).
 */
struct ridr_node {
	void __rk_rcu *slots[RIDR_SLOTS];
	uint64_t free;
	unsigned int count;
	unsigned int nfull;
	struct rk_rcu_head rcu;
} RK_ALIGNED(RIDR_NODE_ALIGN);

/* Bytes between struct ridr's @root and its writer-side fields. */
#define RIDR_WRITER_GAP 64

/**
 * struct ridr - an id map.
 * @root: RCU-protected root word: the top object, tagged with its kind
 *        (and, for a full node, its level); NULL when nothing was ever
 *        allocated.
 * @flavor: liburcu flavor for deferred frees (userspace only).
 * @lock: serializes the locked writer functions.
 * @spare_lock: protects @spare and @nspare (innermost: taken under the
 *              map's lock or a caller's, and by ridr_preload()).
 * @next: cyclic allocation cursor (writer).
 * @count: allocated ids, reservations included (writer; readable with a
 *         single-copy load).
 * @bytes: bytes of the objects the map holds, spares included (writer;
 *         single-copy readable).
 * @keep_level: the last emptied object, kept for reuse (writer): its
 *        level (a bucket counts one below the node whose slot holds
 *        it), or -1 for none.
 * @keep_id: an id the kept object covers (writer).
 * @spare: unpublished full nodes kept for the next insertions, linked
 *         through their slot 0, at most RIDR_PRELOAD_MAX.
 * @nspare: how many.
 *
 * Readers load only @root.  Everything writers store to starts at least
 * RIDR_WRITER_GAP bytes after @root, so on another cache line whatever
 * the map's own alignment.
 */
struct ridr {
	void __rk_rcu *root;
#if RK_HAVE_FLAVORS
	const rk_rcu_flavor_t *flavor;
#endif
	/* private: keeps the writer fields off @root's cache line */
	char reader_pad[RIDR_WRITER_GAP - (1 + RK_HAVE_FLAVORS) * sizeof(void *)];
	/* public: */
	rk_spinlock_t lock;
	rk_spinlock_t spare_lock;
	int keep_level;
	unsigned long next;
	unsigned long count;
	unsigned long bytes;
	unsigned long keep_id;
	struct ridr_node *spare;
	unsigned int nspare;
};

/*
 * Static initializer (default flavor).  Every member, in declaration
 * order: C++20 requires the order, and g++ -Wextra wants every member.
 */
#if RK_HAVE_FLAVORS
#define RIDR_INIT_FLAVOR_ .flavor = RK_RCU_DEFAULT_FLAVOR,
#else
#define RIDR_INIT_FLAVOR_
#endif
#define RIDR_INIT                                                         \
	{ .root = NULL, RIDR_INIT_FLAVOR_ .reader_pad = { 0 },            \
	  .lock = RK_SPINLOCK_INIT, .spare_lock = RK_SPINLOCK_INIT,       \
	  .keep_level = -1, .next = 0, .count = 0, .bytes = 0,            \
	  .keep_id = 0, .spare = NULL, .nspare = 0 }
#define DEFINE_RIDR(name) struct ridr name = RIDR_INIT

/**
 * struct ridr_preload - full nodes allocated ahead of a writer's lock.
 * @nr: nodes held.
 * @map: the map whose spares they came from (set by ridr_preload()).
 * @nodes: the nodes (never published; any of them can also become a
 *         bucket).
 *
 * Callers that must not allocate inside their own lock (a spinlock)
 * preload before taking it, then pass the preload to __ridr_alloc().
 * Start from RIDR_PRELOAD_INIT; end with ridr_preload_end().
 */
struct ridr_preload {
	unsigned int nr;
	struct ridr *map;
	struct ridr_node *nodes[RIDR_PRELOAD_MAX];
};
#define RIDR_PRELOAD_INIT { .nr = 0, .map = NULL, .nodes = { NULL } }

/**
 * ridr_init() - Initialise an empty map using the default RCU flavor.
 * @map: the map.
 *
 * Context: Any; @map not in use.
 */
void ridr_init(struct ridr *map);

#if RK_HAVE_FLAVORS
/**
 * ridr_init_flavor() - Initialise an empty map with an RCU flavor.
 * @map: the map.
 * @flavor: liburcu flavor whose grace periods protect readers
 *          (RK_RCU_FLAVOR_MEMB, _MB, _QSBR, _BP); readers must use the
 *          read-side primitives of the same flavor.
 *
 * Context: Any; @map not in use.
 */
void ridr_init_flavor(struct ridr *map, const rk_rcu_flavor_t *flavor);
#endif

/**
 * ridr_destroy() - Free every object of the map; entries are untouched.
 * @map: the map.
 *
 * Objects are freed after a grace period, so readers still inside a
 * read-side section stay safe; the map is empty (and reusable) on return.
 * The entries may still be seen by such readers: if the map owned them,
 * ridr_destroy() first, then free each entry after a grace period
 * (call_rcu, or one synchronize_rcu() for all).  Code that queued frees
 * through the map must wait for them (rcu_barrier()) before it is
 * unloaded.
 *
 * Context: No concurrent writer or preload.  Takes no lock and never
 * sleeps: may run in an RCU callback (the kernel's free_signal_struct()).
 * Userspace: the thread is registered with the map's flavor.
 */
void ridr_destroy(struct ridr *map);

/**
 * ridr_lock() - Take the map's writer lock (for the __ridr_*() functions).
 * @map: the map.
 *
 * Context: May spin (userspace: spins, then yields).  Do not hold it
 * across a grace-period wait.
 */
void ridr_lock(struct ridr *map);

/**
 * ridr_unlock() - Release the map's writer lock.
 * @map: the map.
 *
 * Context: Caller holds the lock.
 */
void ridr_unlock(struct ridr *map);

/**
 * ridr_preload() - Get the objects one insertion into @map may need.
 * @pl: preload, RIDR_PRELOAD_INIT or left over from an earlier call.
 * @map: the map the next __ridr_alloc*() call will use.
 * @max: the largest id that call may allocate.
 * @gfp: allocation flags (RK_GFP_KERNEL may sleep in the kernel).
 *
 * After it returns 0, one __ridr_alloc*() into @map with ids <= @max
 * cannot fail for lack of memory, whatever other writers did to the map
 * in between: @pl holds one full node per level an id <= @max needs, plus
 * one, the most a single insertion can use.  It takes them from the map's
 * spares first (ridr_preload_end() gives back what was not used), so a
 * caller that preloads for every insertion allocates only when the map's
 * spares run out.
 *
 * Context: Outside the caller's spinlocks; takes the map's spare lock.
 * Return: 0, -ENOMEM (@pl and the map's spares as they were), or
 * -EINVAL (also for a preload already used for another map).
 */
int ridr_preload(struct ridr_preload *pl, struct ridr *map,
		 unsigned long max, rk_gfp_t gfp);

/**
 * ridr_preload_end() - Give back the nodes a preload did not use.
 * @pl: the preload; empty afterwards.
 *
 * They go back to the spares of the map ridr_preload() was called for
 * (at most RIDR_PRELOAD_MAX are kept); the rest are freed at once (they
 * were never published).
 *
 * Context: Any but NMI; takes that map's spare lock.
 */
void ridr_preload_end(struct ridr_preload *pl);

/**
 * ridr_alloc() - Allocate the lowest free id in [@min, @max] for @ptr.
 * @map: the map.
 * @ptr: entry to publish (NULL reserves the id).
 * @min: lowest acceptable id (inclusive).
 * @max: highest acceptable id (inclusive).
 * @idp: on success, receives the id.
 *
 * Ordering: publishes @ptr with release semantics; a reader that finds it
 * through ridr_find() sees every store to *@ptr made before the call.
 *
 * Context: Writer; takes and releases the map's lock.  Allocates without
 * sleeping under it; if that fails, drops the lock and allocates with
 * RK_GFP_KERNEL: in the kernel it may sleep.
 * Return: 0, -EINVAL (@min > @max, NULL @map or @idp), -ENOMEM (map
 * unchanged) or -ENOSPC if [@min, @max] is full.
 */
int ridr_alloc(struct ridr *map, void *ptr, unsigned long min,
	       unsigned long max, unsigned long *idp);

/**
 * ridr_alloc_cyclic() - Allocate the next free id after the last one.
 * @map: the map.
 * @ptr: entry to publish (NULL reserves the id).
 * @min: lowest acceptable id (inclusive).
 * @max: highest acceptable id (inclusive).
 * @idp: on success, receives the id.
 *
 * Searches [cursor, @max], then wraps to [@min, cursor); the cursor then
 * moves just past the id handed out, so recently freed ids are not reused
 * until the range wraps (what SysV IPC and POSIX timers rely on).  The
 * cursor is per map; a cursor outside [@min, @max] restarts at @min.
 *
 * Ordering: as ridr_alloc().
 * Context: as ridr_alloc() (may sleep in the kernel).
 * Return: 0, -EINVAL, -ENOMEM (map and cursor unchanged) or -ENOSPC.
 */
int ridr_alloc_cyclic(struct ridr *map, void *ptr, unsigned long min,
		      unsigned long max, unsigned long *idp);

/**
 * __ridr_alloc() - ridr_alloc() for a caller that serializes writers.
 * @map: the map.
 * @ptr: entry to publish (NULL reserves the id).
 * @min: lowest acceptable id (inclusive).
 * @max: highest acceptable id (inclusive).
 * @idp: on success, receives the id.
 * @pl: objects preloaded by ridr_preload(), or NULL.
 *
 * Allocates with RK_GFP_NOWAIT, falling back to the map's spares and then
 * to @pl: never sleeps.
 *
 * Context: Writers serialized by the caller; may be atomic context.
 * Return: as ridr_alloc().
 */
int __ridr_alloc(struct ridr *map, void *ptr, unsigned long min,
		 unsigned long max, unsigned long *idp,
		 struct ridr_preload *pl);

/**
 * __ridr_alloc_cyclic() - ridr_alloc_cyclic() for serialized writers.
 * @map: the map.
 * @ptr: entry to publish (NULL reserves the id).
 * @min: lowest acceptable id (inclusive).
 * @max: highest acceptable id (inclusive).
 * @idp: on success, receives the id.
 * @pl: objects preloaded by ridr_preload(), or NULL.
 *
 * Context: Writers serialized by the caller; may be atomic context.
 * Return: as ridr_alloc_cyclic().
 */
int __ridr_alloc_cyclic(struct ridr *map, void *ptr, unsigned long min,
			unsigned long max, unsigned long *idp,
			struct ridr_preload *pl);

/**
 * ridr_get_cursor() - The id ridr_alloc_cyclic() tries first.
 * @map: the map.
 *
 * Context: Writer lock, or a snapshot.
 * Return: the cursor.
 */
unsigned long ridr_get_cursor(const struct ridr *map);

/**
 * __ridr_set_cursor() - Set the id ridr_alloc_cyclic() tries first.
 * @map: the map.
 * @next: the id to try first (kernel: the ipc next_id sysctls restore
 *        ids this way).
 *
 * Context: Writers serialized (lock held or caller's serialization).
 */
void __ridr_set_cursor(struct ridr *map, unsigned long next);

/**
 * ridr_replace() - Replace the entry of an allocated id.
 * @map: the map.
 * @ptr: new entry (NULL turns the id back into a reservation).
 * @id: the id.
 * @oldp: if not NULL, receives the previous entry.
 *
 * Ordering: publishes @ptr with release semantics (as ridr_alloc()).  The
 * old entry may still be seen by readers until a grace period passes.
 *
 * Context: Writer; takes and releases the map's lock.
 * Return: 0, -ENOENT if @id is not allocated (map unchanged), -EINVAL.
 */
int ridr_replace(struct ridr *map, void *ptr, unsigned long id,
		 void **oldp);

/**
 * __ridr_replace() - ridr_replace() for serialized writers.
 * @map: the map.
 * @ptr: new entry.
 * @id: the id.
 * @oldp: if not NULL, receives the previous entry.
 *
 * Context: Writers serialized by the caller.
 * Return: as ridr_replace().
 */
int __ridr_replace(struct ridr *map, void *ptr, unsigned long id,
		   void **oldp);

/**
 * ridr_remove() - Free an id and return its entry.
 * @map: the map.
 * @id: the id.
 * @oldp: if not NULL, receives the entry (NULL for a reservation).
 *
 * Readers may still find the entry until a grace period has passed: free
 * the object after one (call_rcu), not at once.  Objects that leave the
 * tree are freed after a grace period.
 *
 * Context: Writer; takes and releases the map's lock.  Never sleeps.
 * Userspace: the thread is registered with the map's flavor.
 * Return: 0, -ENOENT if @id is not allocated (map unchanged), -EINVAL.
 */
int ridr_remove(struct ridr *map, unsigned long id, void **oldp);

/**
 * __ridr_remove() - ridr_remove() for serialized writers.
 * @map: the map.
 * @id: the id.
 * @oldp: if not NULL, receives the entry.
 *
 * Context: Writers serialized by the caller; may be atomic context.
 * Return: as ridr_remove().
 */
int __ridr_remove(struct ridr *map, unsigned long id, void **oldp);

/* Out-of-line part of ridr_find(): a bucket, or an empty map. */
void *__ridr_find_slow(const void *word, unsigned long id, bool root);

/**
 * ridr_find() - Look up the entry of @id.
 * @map: the map.
 * @id: the id.
 *
 * Inline: through full nodes, one dependent load per level and no call.
 *
 * Context: Caller holds the RCU read lock; the result is valid until
 * rcu_read_unlock() unless a reference is taken.  Wait-free; stores
 * nothing.
 * Return: the entry, or NULL if @id is free or reserved.
 */
static inline void *ridr_find(const struct ridr *map, unsigned long id)
{
	/*
	 * Dependency-ordered loads all the way down: each address is
	 * computed from the value loaded before it (masking the tag bits
	 * keeps the dependency), pairing with the writers' release stores.
	 */
	unsigned long w = (unsigned long)rk_rcu_dereference(map->root);
	const struct ridr_node *node;
	unsigned int shift;

	if (unlikely(!w || (w & RIDR_KIND_MASK)))
		return __ridr_find_slow((const void *)w, id, true);
	shift = (unsigned int)((w & RIDR_ROOT_LEVEL_MASK) >>
			       RIDR_ROOT_LEVEL_SHIFT) * RIDR_SHIFT;
	/* id beyond the root's range; shift <= 60, so no shift overflows */
	if ((id >> shift) >> RIDR_SHIFT)
		return NULL;
	node = (const struct ridr_node *)(w & ~(unsigned long)(RIDR_NODE_ALIGN - 1));
	while (shift) {
		void *s = rk_rcu_dereference(
			node->slots[(id >> shift) & (RIDR_SLOTS - 1)]);

		if (unlikely(((unsigned long)s & RIDR_KIND_MASK) || !s))
			return s ? __ridr_find_slow(s, id, false) : NULL;
		node = (const struct ridr_node *)s;
		shift -= RIDR_SHIFT;
	}
	/* A leaf slot holds the entry. */
	return rk_rcu_dereference(node->slots[id & (RIDR_SLOTS - 1)]);
}

/* The same lookup as an out-of-line function (ABI, function pointers). */
void *ridr_find_noinline(const struct ridr *map, unsigned long id);

/**
 * ridr_get_next() - Find the first entry at or after *@idp.
 * @map: the map.
 * @idp: in: first id to consider; out: the id of the entry found.
 *
 * Reservations (NULL entries) are skipped.  Under concurrent writers each
 * id is seen in its old or new state, ids are returned in increasing
 * order, and no id allocated throughout the walk is missed.  Cost:
 * O(height) full nodes and buckets visited per entry returned, plus the
 * empty slots skipped (at most 63 a level).
 *
 * Context: Caller holds the RCU read lock.
 * Return: the entry, or NULL (and *@idp unchanged) if there is none.
 */
void *ridr_get_next(const struct ridr *map, unsigned long *idp);

/* Internal step of ridr_for_each(): the next entry after *@idp. */
void *__ridr_iter_next(const struct ridr *map, unsigned long *idp);

/**
 * ridr_for_each() - Iterate over every entry in increasing id order.
 * @map: the map.
 * @entry: loop cursor, the entry (void * or a pointer type).
 * @id: loop cursor, unsigned long id.
 *
 * Context: as ridr_get_next().  Entries may be removed by the loop body
 * when the caller is the (serialized) writer and also holds the RCU read
 * lock.
 */
#define ridr_for_each(map, entry, id)                                        \
	for ((id) = 0, (entry) = ridr_get_next((map), &(id)); (entry);       \
	     (entry) = __ridr_iter_next((map), &(id)))

/**
 * ridr_is_empty() - Whether no id (reservations included) is allocated.
 * @map: the map.
 *
 * Context: Any; a snapshot unless writers are serialized.
 * Return: true if empty.
 */
bool ridr_is_empty(const struct ridr *map);

/**
 * ridr_count() - Allocated ids, reservations included.
 * @map: the map.
 *
 * Context: Any; a snapshot unless writers are serialized.
 * Return: the count.
 */
unsigned long ridr_count(const struct ridr *map);

/**
 * ridr_memory() - Bytes held by the map's objects.
 * @map: the map.
 *
 * Counts full nodes, buckets and spare nodes at their allocated sizes.
 *
 * Context: Any; a snapshot unless writers are serialized.  Objects
 * waiting for a grace period are no longer counted.
 * Return: bytes.
 */
size_t ridr_memory(const struct ridr *map);

#ifdef __cplusplus
}
#endif

#endif /* RK_RIDR_H */
