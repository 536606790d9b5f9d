/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef RK_RIDR_H
#define RK_RIDR_H

/**
 * DOC: ridr - an RCU-readable radix-tree id map and id allocator
 *
 * Maps non-negative integer ids (unsigned long) to pointers and hands out
 * free ids.  A radix tree of 64-slot nodes (6 bits of the id per level);
 * each node keeps a bitmap of the slots that still have a free id below
 * them, so allocation is O(height), never a scan.
 *
 * Readers: ridr_find(), ridr_get_next(), ridr_for_each() and
 * ridr_is_empty() run inside the caller's RCU read-side critical section
 * (rcu_read_lock() of the map's flavor).  They take no lock, perform no
 * atomic read-modify-write and store nothing to shared memory: one
 * dependent load per level.  They are wait-free with respect to writers.
 * A reader concurrent with a writer sees, for every id, either the entry
 * before or the entry after the writer's change, never anything else.
 *
 * Writers: ridr_alloc(), ridr_alloc_cyclic(), ridr_replace() and
 * ridr_remove() take the map's spinlock.  The __ridr_*() variants leave
 * serialization to the caller: either ridr_lock()/ridr_unlock() around
 * them, or a lock of the caller's that serializes every writer of this map
 * (the kernel's ipc code uses its ids rwsem).  Writers publish a node only
 * after it is fully initialised (release ordering, pairing with the
 * readers' rcu_dereference()), and free a node that leaves the tree only
 * after a grace period (call_rcu), also when the tree shrinks and in
 * ridr_destroy().  In userspace a writer thread must be registered with
 * the map's liburcu flavor (bp registers itself).
 *
 * Entries: any pointer; NULL stored by ridr_alloc() reserves the id:
 * ridr_find() reports it absent (NULL) until ridr_replace() fills it, and
 * no allocation hands it out again until ridr_remove().  The map never
 * frees or dereferences entries: their lifetime is the caller's.  The
 * pattern: ridr_remove() the id, mark the object dead (lockref), free it
 * after a grace period; lookups do ridr_find() + lockref_get_not_dead()
 * inside one read-side section.
 *
 * Memory: 64-slot nodes; empty nodes are freed and the tree shrinks back
 * when the top node only uses slot 0, so a map whose ids were all removed
 * holds no node at all.
 *
 * Undefined: calling a reader outside a read-side critical section (the
 * nodes it walks may be freed under it); calling __ridr_*() without
 * serializing writers; using a map after ridr_destroy() without
 * ridr_init(); destroying a map while writers run.
 */

#include "compat/compat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bits of the id per tree level, and slots per node. */
#define RIDR_SHIFT 6
#define RIDR_SLOTS (1u << RIDR_SHIFT)
/* Highest id: every unsigned long is a valid id. */
#define RIDR_MAX_ID ULONG_MAX
/* Levels of a tree that holds RIDR_MAX_ID (11 with 64-bit longs). */
#define RIDR_MAX_LEVELS \
	((unsigned int)((RK_BITS_PER_LONG + RIDR_SHIFT - 1) / RIDR_SHIFT))
/* Nodes one insertion may need: grow from height 1 to the top and build
 * the new path below the top.
 */
#define RIDR_PRELOAD_MAX (2 * RIDR_MAX_LEVELS - 1)

struct ridr_node;

/* Bytes between struct ridr's @root and its writer-side fields. */
#define RIDR_WRITER_GAP 64

/**
 * struct ridr - an id map.
 * @root: top node, RCU-protected; NULL when no id is allocated.
 * @flavor: liburcu flavor for deferred frees (unused in the kernel).
 * @lock: serializes the locked writer functions.
 * @next: cyclic allocation cursor (writer lock).
 * @count: allocated ids, reservations included (writer lock; readable
 *         with a single-copy load).
 * @nodes: nodes in the tree (writer lock; single-copy readable).
 * @height: levels of the tree, 0 when empty (writer lock; single-copy
 *          readable, used to size preloads).
 *
 * Readers load only @root.  Everything writers store to on every
 * operation starts at least RIDR_WRITER_GAP bytes after @root, so it is
 * on another cache line whatever the map's own alignment (no alignment
 * beyond a pointer's is required: a malloc'ed map is fine), and a writer
 * does not keep invalidating the line every lookup begins with.
 */
struct ridr {
	struct ridr_node *root;
	const rk_rcu_flavor_t *flavor;
	/* private: keeps the writer fields off @root's cache line */
	char reader_pad[RIDR_WRITER_GAP - 2 * sizeof(void *)];
	/* public: */
	rk_spinlock_t lock;
	unsigned long next;
	unsigned long count;
	unsigned long nodes;
	unsigned int height;
};

/* Static initializer (default flavor). */
#define RIDR_INIT                                                        \
	{ .root = NULL, .next = 0, .count = 0, .nodes = 0, .height = 0,  \
	  .flavor = RK_RCU_DEFAULT_FLAVOR, .lock = RK_SPINLOCK_INIT }
#define DEFINE_RIDR(name) struct ridr name = RIDR_INIT

/**
 * struct ridr_preload - nodes allocated ahead of a writer's lock.
 * @nr: nodes held.
 * @nodes: the nodes (never published).
 *
 * Callers that must not allocate inside their own lock (a spinlock)
 * preload before taking it, then pass the preload to __ridr_alloc().
 * Start from RIDR_PRELOAD_INIT; end with ridr_preload_end().
 */
struct ridr_preload {
	unsigned int nr;
	struct ridr_node *nodes[RIDR_PRELOAD_MAX];
};
#define RIDR_PRELOAD_INIT { .nr = 0 }

/**
 * ridr_init() - Initialise an empty map using the default RCU flavor.
 * @map: the map.
 *
 * Context: Any; @map not in use.
 */
void ridr_init(struct ridr *map);

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

/**
 * ridr_destroy() - Free every node of the map; entries are untouched.
 * @map: the map.
 *
 * Nodes are freed after a grace period, so readers still inside a
 * read-side section stay safe.  The map is empty (and reusable) on return.
 * Free the entries first if the map owned them (ridr_for_each()).
 *
 * Context: No concurrent writer.  Userspace: the thread is registered
 * with the map's flavor.
 */
void ridr_destroy(struct ridr *map);

/**
 * ridr_lock() - Take the map's writer lock (for the __ridr_*() functions).
 * @map: the map.
 *
 * Context: May spin (userspace: spins, then yields).  Do not hold it
 * across rk_synchronize_rcu().
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
 * ridr_preload() - Allocate the nodes one insertion into @map may need.
 * @pl: preload, RIDR_PRELOAD_INIT or left over from an earlier call.
 * @map: the map the next __ridr_alloc*() call will use.
 * @max: the largest id that call may allocate.
 * @gfp: allocation flags (RK_GFP_KERNEL may sleep in the kernel).
 *
 * Sizes the preload for the tree's current height; if the tree grows
 * before the insertion, __ridr_alloc() allocates the difference itself
 * with RK_GFP_NOWAIT.
 *
 * Context: Outside the caller's spinlocks.  No map lock needed.
 * Return: 0, or -ENOMEM (nodes allocated so far stay in @pl), or -EINVAL.
 */
int ridr_preload(struct ridr_preload *pl, const struct ridr *map,
		 unsigned long max, rk_gfp_t gfp);

/**
 * ridr_preload_end() - Free the nodes a preload did not use.
 * @pl: the preload; empty afterwards.
 *
 * Context: Any.  The nodes were never published: freed at once.
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
 * Context: Writer; takes and releases the map's lock.  Allocates nodes
 * outside it.
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
 * Context: Writer; takes and releases the map's lock.
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
 * @pl: nodes preloaded by ridr_preload(), or NULL.
 *
 * Takes nodes from @pl first, then allocates with RK_GFP_NOWAIT.
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
 * @pl: nodes preloaded by ridr_preload(), or NULL.
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
 * the object after one (call_rcu), not at once.  Nodes left empty are
 * freed after a grace period and the tree shrinks.
 *
 * Context: Writer; takes and releases the map's lock.  Userspace: the
 * thread is registered with the map's flavor.
 * Return: 0, -ENOENT if @id is not allocated (map unchanged), -EINVAL.
 */
int ridr_remove(struct ridr *map, unsigned long id, void **oldp);

/**
 * __ridr_remove() - ridr_remove() for serialized writers.
 * @map: the map.
 * @id: the id.
 * @oldp: if not NULL, receives the entry.
 *
 * Context: Writers serialized by the caller.
 * Return: as ridr_remove().
 */
int __ridr_remove(struct ridr *map, unsigned long id, void **oldp);

/**
 * ridr_find() - Look up the entry of @id.
 * @map: the map.
 * @id: the id.
 *
 * Context: Caller holds the RCU read lock (or serializes with writers);
 * the result is valid until rcu_read_unlock() unless a reference is
 * taken.  Wait-free; stores nothing.
 * Return: the entry, or NULL if @id is free or reserved.
 */
void *ridr_find(const struct ridr *map, unsigned long id);

/**
 * ridr_get_next() - Find the first entry at or after *@idp.
 * @map: the map.
 * @idp: in: first id to consider; out: the id of the entry found.
 *
 * Reservations (NULL entries) are skipped.  Under concurrent writers each
 * id is seen in its old or new state; ids are returned in increasing
 * order.
 *
 * Context: Caller holds the RCU read lock (or serializes with writers).
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
 * when the caller is the (serialized) writer.
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
 * ridr_memory() - Bytes held by the map's nodes.
 * @map: the map.
 *
 * Context: Any; a snapshot unless writers are serialized.  Nodes waiting
 * for a grace period are no longer counted.
 * Return: bytes.
 */
size_t ridr_memory(const struct ridr *map);

#ifdef __cplusplus
}
#endif

#endif /* RK_RIDR_H */
