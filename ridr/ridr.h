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
 * Readers: ridr_find(), ridr_find_bulk(), ridr_get_next(),
 * ridr_get_next_range(), ridr_for_each(), ridr_for_each_range() and
 * ridr_for_each_fn() run inside the caller's RCU read-side critical section:
 * ridr_read_lock(), which picks the read-side lock that matches the map's
 * grace periods.  They take no lock, perform no atomic read-modify-write and
 * store nothing to shared memory; they are wait-free.  Through full nodes a
 * lookup makes one dependent load per level: the root word carries the shift
 * of the root's digit, every lower level's is derived, one bit of each word
 * says "full node, go on down", and no node field but the slot is read.  A
 * bucket costs an acquire load of its record count, a probe of one key
 * (exact when the ids are consecutive) or else a scan of at most 32 keys,
 * and the load of the entry, all in the same object.  A reader concurrent
 * with a writer sees, for every id, either the entry before or the entry
 * after the writer's change.
 *
 * Walks concurrent with writers (ridr_get_next*(), the ridr_for_each*()
 * loops, ridr_for_each_fn()), inside one read-side critical section:
 * each id is seen in its state before or after any change made during
 * the walk (never a torn or freed entry); ids come in strictly
 * increasing order, each at most once; an id allocated (with a non-NULL
 * entry) for the whole walk is never missed; an id allocated or removed
 * during the walk may or may not be seen.  The walk is not a snapshot:
 * it may see a later change to a high id and miss an earlier change to a
 * lower one.  A walk resumed in a new read-side section from the last id
 * + 1 keeps these guarantees for the ids it has not passed yet.
 *
 * Writers: ridr_alloc(), ridr_alloc_cyclic(), ridr_alloc_cyclic_wrap(),
 * ridr_insert(), ridr_store(), ridr_replace(), ridr_cmpxchg(), ridr_remove()
 * and ridr_remove_if() take the map's spinlock.  The __ridr_*() variants
 * leave serialization to the caller: either ridr_lock()/ridr_unlock() around
 * them, or a lock of the caller's that serializes every writer of this map
 * (the kernel's ipc code uses its ids rwsem).  Writers publish an object
 * only after it is fully initialised (release ordering, pairing with the
 * readers' dependent loads), and free an object that leaves the tree only
 * after a grace period (call_rcu), also in ridr_destroy().
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
 * Handles: struct ridr_handles (below) hands out 64-bit (generation, id)
 * handles over two ridr maps; ridr_handle_find() is a reader as above,
 * ridr_handle_alloc() and ridr_handle_remove() are writers under the
 * handle map's lock; a stale handle never finds a reused id's entry.
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

/*
 * Low bits of the root word and of an internal slot: what the word
 * points to.  Bit 0 set (RIDR_TAG_FULL): a full node.  In the root word
 * bits 1-5 then hold the shift of the root node's digit (RIDR_SHIFT x its
 * level: even, at most 60), so that a reader gets the node with one AND
 * and the shift with another; in a slot they are 0, and the node is the
 * word minus the tag.  Bit 0 clear: NULL, or a bucket, its key width in
 * bits 1-2 (buckets are at least 8-byte aligned).  One test of bit 0
 * tells a lookup to go on down.
 */
#define RIDR_KIND_MASK 7UL
#define RIDR_TAG_FULL 1UL
#define RIDR_ROOT_SHIFT_MASK 0x3eUL
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

/*
 * Bytes a full node uses and is allocated with: up to the end of @rcu,
 * without the tail padding its 64-byte alignment adds to sizeof (544 of
 * 576 with 64-bit pointers).  The kernel's cache of this size and
 * alignment has a 576-byte stride all the same; glibc's posix_memalign()
 * then takes a 576-byte chunk instead of 592.  A node is never copied
 * or assigned as a whole, so the padding is never touched.
 */
#define RIDR_NODE_BYTES                                    \
	(__builtin_offsetof(struct ridr_node, rcu) +       \
	 sizeof(((struct ridr_node *)0)->rcu))

/* Bytes between struct ridr's @root and its writer-side fields. */
#define RIDR_WRITER_GAP 64

/**
 * struct ridr - an id map.
 * @root: RCU-protected root word: the top object, tagged with its kind
 *        (and, for a full node, its digit's shift); NULL when the map
 *        has no object.
 * @flavor: liburcu flavor for deferred frees (userspace only).
 * @external_lock: kernel only: the lockdep map of the caller's lock that
 *                 serializes the __ridr_*() writers, or NULL
 *                 (ridr_set_external_lock()); set once, before the map
 *                 is shared, so it never dirties @root's line.
 * @lock: serializes the locked writer functions.
 * @spare_lock: protects @spare and @nspare (innermost: taken under the
 *              map's lock or a caller's, and by ridr_preload()).
 * @next: cyclic allocation cursor (writer).
 * @count: allocated ids, reservations included (writer; readable with a
 *         single-copy load).
 * @bytes: bytes of the objects the map holds, spares not included
 *         (writer; single-copy readable).
 * @keep_level: the last emptied object, kept for reuse (writer): its
 *        level (a bucket counts one below the node whose slot holds
 *        it), or -1 for none.
 * @flags: RIDR_ACCOUNT, RIDR_ATOMIC (ridr_set_flags()) and the writer's
 *         private state bits (writer).
 * @keep_id: an id the kept object covers (writer).
 * @spare: unpublished full nodes kept for the next insertions, linked
 *         through their slot 0, at most RIDR_PRELOAD_MAX.
 * @nspare: how many (spare lock; single-copy readable).
 *
 * Readers load only @root.  Everything writers store to starts at least
 * RIDR_WRITER_GAP bytes after @root, so on another cache line whatever
 * the map's own alignment.
 */
struct ridr {
	void __rk_rcu *root;
#if RK_HAVE_FLAVORS
	const rk_rcu_flavor_t *flavor;
#else
	const rk_lockdep_map_t *external_lock;
#endif
	/* private: keeps the writer fields off @root's cache line */
	char reader_pad[RIDR_WRITER_GAP - 2 * sizeof(void *)];
	/* public: */
	rk_spinlock_t lock;
	rk_spinlock_t spare_lock;	/* @spare, @nspare; innermost */
	int keep_level;
	unsigned int flags;
	unsigned long next;
	unsigned long count;
	unsigned long bytes;
	unsigned long keep_id;
	struct ridr_node *spare;
	unsigned int nspare;
};

/*
 * Static initializer.  Every member, in declaration
 * order: C++20 requires the order, and g++ -Wextra wants every member.
 */
#if RK_HAVE_FLAVORS
#define RIDR_INIT_WORD1_ .flavor = RK_RCU_DEFAULT_FLAVOR,
#else
#define RIDR_INIT_WORD1_ .external_lock = NULL,
#endif
#ifdef RK_POSITIONAL_INIT
/* C++ before C++20 (userspace only: compat/user.h, which has flavors):
 * no designators, the same values.  The kernel generator keeps only the
 * #else branches of these blocks. */
#define RIDR_INIT                                                         \
	{ NULL, RK_RCU_DEFAULT_FLAVOR, { 0 },                             \
	  RK_SPINLOCK_INIT, RK_SPINLOCK_INIT,                             \
	  -1, 0, 0, 0, 0,                                                 \
	  0, NULL, 0 }
#else
#define RIDR_INIT                                                         \
	{ .root = NULL, RIDR_INIT_WORD1_ .reader_pad = { 0 },            \
	  .lock = RK_SPINLOCK_INIT,                                       \
	  .spare_lock = RK_SPINLOCK_INIT,                                 \
	  .keep_level = -1, .flags = 0, .next = 0, .count = 0, .bytes = 0, \
	  .keep_id = 0, .spare = NULL, .nspare = 0 }
#endif
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

#ifdef RK_POSITIONAL_INIT
#define RIDR_PRELOAD_INIT { 0, NULL, { NULL } }
#else
#define RIDR_PRELOAD_INIT { .nr = 0, .map = NULL, .nodes = { NULL } }
#endif

/* Flags of ridr_set_flags(). */
/* Charge the map's objects to the memory cgroup of the task that
 * allocates them (__GFP_ACCOUNT in the kernel; no effect elsewhere).
 */
#define RIDR_ACCOUNT 0x1u
/* The locked calls never sleep: after a failed RK_GFP_NOWAIT attempt
 * they retry with RK_GFP_ATOMIC (kernel: GFP_ATOMIC) instead of
 * RK_GFP_KERNEL.
 */
#define RIDR_ATOMIC 0x2u

/**
 * ridr_init() - Initialise an empty map.
 * @map: the map.
 *
 * In the kernel a macro: each call site gives the map's lock a lockdep
 * class of its own (a static key, as spin_lock_init() does), so maps of
 * different users may nest their locks without a false report.
 *
 * Context: Any; @map not in use.
 */
#if RK_HAVE_FLAVORS
void ridr_init(struct ridr *map);
#else
#define ridr_init(map)                                          \
	do {                                                    \
		static rk_lock_class_key_t __ridr_key;          \
		__ridr_init(map, &__ridr_key);                  \
	} while (0)
void __ridr_init(struct ridr *map, rk_lock_class_key_t *key);
#endif

#if RK_HAVE_FLAVORS
/**
 * ridr_init_flavor() - Initialise an empty map with an RCU flavor.
 * @map: the map.
 * @flavor: liburcu flavor whose grace periods protect readers
 *          (RK_RCU_FLAVOR_MEMB, _MB, _QSBR, _BP); readers must use the
 *          read-side primitives of the same flavor.
 *
 * Writers, and ridr_destroy(), must run on threads registered with
 * @flavor (bp registers itself).
 *
 * Context: Any; @map not in use.
 */
void ridr_init_flavor(struct ridr *map, const rk_rcu_flavor_t *flavor);
#endif

/**
 * ridr_set_external_lock() - Name the lock that serializes @map's writers.
 * @map: the map, initialised.
 * @lock: the caller's lock (a spinlock, mutex or rw_semaphore) held
 *        around every __ridr_*() call on @map.
 *
 * Kernel with lockdep: every load the writer functions make of the map's
 * RCU words (rcu_dereference_protected()) then checks that @lock or the
 * map's own lock is held, as the maple tree's mt_set_external_lock();
 * without it only the map's own lock counts.  Without lockdep: no
 * effect.
 *
 * Context: Before the map is shared.
 */
#if RK_HAVE_FLAVORS
#define ridr_set_external_lock(map, lock) ((void)(map), (void)(lock))
#else
#define ridr_set_external_lock(map, lock) \
	((map)->external_lock = rk_lockdep_map_of(lock))
#endif

/**
 * ridr_set_flags() - Choose how the map allocates.
 * @map: the map, initialised.
 * @flags: 0, or RIDR_ACCOUNT and/or RIDR_ATOMIC.
 *
 * RIDR_ACCOUNT: every object the map allocates from now on (nodes,
 * buckets, preloaded nodes) is charged to the memory cgroup of the task
 * that allocates it (RK_GFP_ACCOUNT is or-ed into each allocation; no
 * effect without memory cgroups).  RIDR_ATOMIC: the
 * locked calls (ridr_alloc(), ridr_alloc_cyclic*(), ridr_insert(),
 * ridr_store()) never sleep; their retry outside the lock allocates with
 * RK_GFP_ATOMIC.
 * Without it they may sleep in the kernel (RK_GFP_KERNEL).  The
 * __ridr_*() functions never sleep whatever the flags.
 *
 * Context: Before the map is shared, or with writers serialized.
 * Return: 0, or -EINVAL for an unknown flag (map unchanged).
 */
int ridr_set_flags(struct ridr *map, unsigned int flags);

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
 */
void ridr_destroy(struct ridr *map);

/**
 * ridr_lock() - Take the map's writer lock (for the __ridr_*() functions).
 * @map: the map.
 *
 * Context: May spin.  Do not hold it across a grace-period wait.
 */
void ridr_lock(struct ridr *map) rk_acquires(&map->lock);

/**
 * ridr_unlock() - Release the map's writer lock.
 * @map: the map.
 *
 * Context: Caller holds the lock.
 */
void ridr_unlock(struct ridr *map) rk_releases(&map->lock);

/**
 * ridr_preload() - Get the objects one insertion into @map may need.
 * @pl: preload, RIDR_PRELOAD_INIT or left over from an earlier call.
 * @map: the map the next __ridr_alloc*() call will use.
 * @max: the largest id that call may allocate.
 * @gfp: allocation flags (RK_GFP_KERNEL may sleep in the kernel;
 *       RK_GFP_ACCOUNT is added for a map with RIDR_ACCOUNT).
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
 * sleeping under it (RK_GFP_NOWAIT); if that fails, drops the lock and
 * allocates with RK_GFP_KERNEL: in the kernel it may sleep, unless the
 * map has RIDR_ATOMIC (then RK_GFP_ATOMIC; never sleeps).  Objects are
 * charged to the caller's memory cgroup if the map has RIDR_ACCOUNT.
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
 * Context: as ridr_alloc() (may sleep in the kernel without RIDR_ATOMIC).
 * Return: 0, -EINVAL, -ENOMEM (map and cursor unchanged) or -ENOSPC.
 * Never 1: ridr_alloc_cyclic_wrap() reports wraps.
 */
int ridr_alloc_cyclic(struct ridr *map, void *ptr, unsigned long min,
		      unsigned long max, unsigned long *idp);

/**
 * ridr_alloc_cyclic_wrap() - ridr_alloc_cyclic() that reports a wrap.
 * @map: the map.
 * @ptr: entry to publish (NULL reserves the id).
 * @min: lowest acceptable id (inclusive).
 * @max: highest acceptable id (inclusive).
 * @idp: on success, receives the id.
 *
 * The same allocation as ridr_alloc_cyclic(), but returns 1 instead of 0
 * when the cursor wrapped: the id handed out is below the cursor (the
 * search found nothing in [cursor, @max] and started again from @min, or
 * the cursor was beyond @max), or the previous cyclic allocation handed
 * out RIDR_MAX_ID (the cursor went round to 0).  A cursor below @min is a
 * restart, not a wrap.  __ridr_set_cursor() forgets a pending wrap.  As
 * xa_alloc_cyclic(): callers that derive sequence numbers from wraps
 * (SysV ipc's seq) count them here.  Test for failure with < 0.
 *
 * Ordering: as ridr_alloc().
 * Context: as ridr_alloc_cyclic().
 * Return: 0, 1 (allocated after a wrap), -EINVAL, -ENOMEM (map and
 * cursor unchanged) or -ENOSPC.
 */
int ridr_alloc_cyclic_wrap(struct ridr *map, void *ptr, unsigned long min,
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
 * __ridr_alloc_cyclic_wrap() - ridr_alloc_cyclic_wrap(), serialized writers.
 * @map: the map.
 * @ptr: entry to publish (NULL reserves the id).
 * @min: lowest acceptable id (inclusive).
 * @max: highest acceptable id (inclusive).
 * @idp: on success, receives the id.
 * @pl: objects preloaded by ridr_preload(), or NULL.
 *
 * Context: Writers serialized by the caller; may be atomic context.
 * Return: as ridr_alloc_cyclic_wrap().
 */
int __ridr_alloc_cyclic_wrap(struct ridr *map, void *ptr, unsigned long min,
			     unsigned long max, unsigned long *idp,
			     struct ridr_preload *pl);

/**
 * ridr_insert() - Allocate the given id for @ptr.
 * @map: the map.
 * @id: the id.
 * @ptr: entry to publish (NULL reserves the id).
 *
 * For tables keyed by ids chosen elsewhere (restoring state, external
 * keys).  Allocates the path to @id as needed.  One walk when a free
 * slot, a tombstone or an append can take @id; otherwise a plan and a
 * run (as ridr_alloc()).
 *
 * Ordering: as ridr_alloc().
 * Context: as ridr_alloc() (may sleep in the kernel without RIDR_ATOMIC).
 * Return: 0, -EBUSY if @id is allocated (reserved included; map
 * unchanged), -ENOMEM (map unchanged) or -EINVAL (NULL @map).
 */
int ridr_insert(struct ridr *map, unsigned long id, void *ptr);

/**
 * __ridr_insert() - ridr_insert() for a caller that serializes writers.
 * @map: the map.
 * @id: the id.
 * @ptr: entry to publish (NULL reserves the id).
 * @pl: objects preloaded by ridr_preload(@pl, @map, @id, ...), or NULL.
 *
 * Allocates as __ridr_alloc(): never sleeps; cannot fail for lack of
 * memory after a successful ridr_preload() for @id.
 *
 * Context: Writers serialized by the caller; may be atomic context.
 * Return: as ridr_insert().
 */
int __ridr_insert(struct ridr *map, unsigned long id, void *ptr,
		  struct ridr_preload *pl);

/**
 * ridr_store() - Set the entry of @id, allocating @id if it is free.
 * @map: the map.
 * @id: the id.
 * @ptr: entry to publish (NULL: @id becomes, or stays, a reservation;
 *       ridr_remove() frees it).
 * @oldp: if not NULL, receives the previous entry (NULL if @id was free
 *        or reserved).
 *
 * ridr_replace() if @id is allocated, else ridr_insert().
 *
 * Ordering: publishes @ptr with release semantics (as ridr_alloc()); the
 * old entry may still be seen by readers until a grace period passes.
 * Context: as ridr_alloc() (may sleep in the kernel without RIDR_ATOMIC).
 * Return: 0, -ENOMEM (map unchanged; *@oldp untouched) or -EINVAL.
 */
int ridr_store(struct ridr *map, unsigned long id, void *ptr, void **oldp);

/**
 * __ridr_store() - ridr_store() for a caller that serializes writers.
 * @map: the map.
 * @id: the id.
 * @ptr: entry to publish (NULL reserves).
 * @oldp: if not NULL, receives the previous entry.
 * @pl: objects preloaded by ridr_preload(@pl, @map, @id, ...), or NULL.
 *
 * Context: Writers serialized by the caller; may be atomic context.
 * Return: as ridr_store().
 */
int __ridr_store(struct ridr *map, unsigned long id, void *ptr, void **oldp,
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
 * ridr_cmpxchg() - Replace the entry of @id only if it is still @old.
 * @map: the map.
 * @id: an allocated id.
 * @old: the entry expected (NULL: a reservation).
 * @entry: the entry to publish (NULL turns the id into a reservation).
 * @curp: if not NULL, receives the entry found (NULL for a reservation
 *        or a free id), whether or not it was replaced.
 *
 * The comparison and the store are atomic with respect to every other
 * writer of the map.  Never allocates: a free id is not inserted (use
 * ridr_insert(); xa_cmpxchg(xa, i, NULL, p) on a free index is that).
 *
 * Ordering: publishes @entry with release semantics (as ridr_replace()).
 * Context: Writer; takes and releases the map's lock.  Never sleeps.
 * Return: 0 (replaced), -EBUSY (the entry is not @old; map unchanged),
 * -ENOENT (@id not allocated) or -EINVAL.
 */
int ridr_cmpxchg(struct ridr *map, unsigned long id, void *old, void *entry,
		 void **curp);

/**
 * __ridr_cmpxchg() - ridr_cmpxchg() for serialized writers.
 * @map: the map.
 * @id: an allocated id.
 * @old: the entry expected.
 * @entry: the entry to publish.
 * @curp: if not NULL, receives the entry found.
 *
 * Context: Writers serialized by the caller; may be atomic context.
 * Return: as ridr_cmpxchg().
 */
int __ridr_cmpxchg(struct ridr *map, unsigned long id, void *old, void *entry,
		   void **curp);

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

/**
 * ridr_remove_if() - Free @id only if its entry is still @expected.
 * @map: the map.
 * @id: the id.
 * @expected: the entry it must hold (NULL: a reservation).
 *
 * For lookup-versus-delete races: a caller that found an object under
 * RCU and decided to delete it removes the id only if it still maps to
 * that object, not to a replacement installed meanwhile (as cds_lfht_del()
 * of a given node).  The comparison and the removal are atomic with
 * respect to every other writer.
 *
 * Context: as ridr_remove().
 * Return: 0 (removed), -EBUSY (another entry; map unchanged), -ENOENT
 * (@id not allocated) or -EINVAL.
 */
int ridr_remove_if(struct ridr *map, unsigned long id, void *expected);

/**
 * __ridr_remove_if() - ridr_remove_if() for serialized writers.
 * @map: the map.
 * @id: the id.
 * @expected: the entry it must hold.
 *
 * Context: Writers serialized by the caller; may be atomic context.
 * Return: as ridr_remove_if().
 */
int __ridr_remove_if(struct ridr *map, unsigned long id, void *expected);

/**
 * ridr_find_locked() - Look up @id as the writer.
 * @map: the map.
 * @id: the id.
 *
 * For code that holds the writers' serialization (ridr_lock() or the
 * caller's own lock) and wants the entry without entering an RCU
 * read-side section: in the kernel its loads are
 * rcu_dereference_protected(), so PROVE_RCU does not ask for
 * rcu_read_lock().  The entry stays valid while the serialization is
 * held (only writers remove).  Walks like a writer (a few more loads
 * than ridr_find()).
 *
 * Context: Writers serialized (the caller is, or excludes, the writer).
 * Return: the entry, or NULL if @id is free or reserved.
 */
void *ridr_find_locked(const struct ridr *map, unsigned long id);

/**
 * ridr_read_lock() - Enter a read-side critical section for @map.
 * @map: the map.
 *
 * The read-side lock that matches the grace periods @map waits for
 * (the one it was initialised with; in the kernel rcu_read_lock()).
 * Sections nest.  For the default (memb) the lock is inlined, for the
 * others it is one indirect call.
 *
 * Context: Any thread that may read the map (registered with its RCU
 * where that RCU needs it).
 */
#if RK_HAVE_FLAVORS
/* Userspace: the map's own liburcu flavor, so a reader of a qsbr (or
 * mb, bp) map cannot enter the memb read side by mistake.
 */
static inline void ridr_read_lock(const struct ridr *map)
{
	if (map->flavor == RK_RCU_FLAVOR_MEMB)
		rk_rcu_read_lock();
	else
		rk_rcu_read_lock_flavor(map->flavor);
}
#else
static inline void ridr_read_lock(const struct ridr *map)
{
	(void)map;
	rk_rcu_read_lock();
}
#endif

/**
 * ridr_read_unlock() - Leave the section ridr_read_lock() entered.
 * @map: the map.
 *
 * Context: Inside a section entered with ridr_read_lock(@map).
 */
#if RK_HAVE_FLAVORS
static inline void ridr_read_unlock(const struct ridr *map)
{
	if (map->flavor == RK_RCU_FLAVOR_MEMB)
		rk_rcu_read_unlock();
	else
		rk_rcu_read_unlock_flavor(map->flavor);
}
#else
static inline void ridr_read_unlock(const struct ridr *map)
{
	(void)map;
	rk_rcu_read_unlock();
}
#endif

/* Out-of-line part of ridr_find(): a bucket, or an empty map. */
void *__ridr_find_slow(const void *word, unsigned long id, bool root);

/*
 * The steps of ridr_find(), shared with ridr_find_bulk() so that both
 * walk with the same loads.  Dependency-ordered loads all the way down:
 * each address is computed from the value loaded before it (masking the
 * tag bits keeps the dependency), pairing with the writers' release
 * stores (R1 in ridr/read.c).
 */

/* Shift of the root full node's digit, from a root word tagged FULL. */
static inline unsigned int __ridr_root_shift(unsigned long w)
{
	return (unsigned int)(w & RIDR_ROOT_SHIFT_MASK);
}

/* @id is beyond the range of a root whose digit is at @shift (<= 60, so
 * no shift overflows).
 */
static inline bool __ridr_beyond_root(unsigned long id, unsigned int shift)
{
	return ((id >> shift) >> RIDR_SHIFT) != 0;
}

/* The full node a root word tagged FULL points to. */
static inline const struct ridr_node *__ridr_full_node(unsigned long w)
{
	return (const struct ridr_node *)(w & ~(unsigned long)
						  (RIDR_NODE_ALIGN - 1));
}

/* The full node a slot tagged FULL points to: the word minus the tag,
 * which the next load folds into its displacement (still an address
 * computed from the loaded value: the dependency holds).
 */
static inline const struct ridr_node *__ridr_slot_node(const void *s)
{
	return (const struct ridr_node *)((unsigned long)s - RIDR_TAG_FULL);
}

/* The slot of @id in @node, whose digit is at @shift: one dependent
 * load.  In a leaf (@shift 0) the entry.
 */
static inline void *__ridr_slot(const struct ridr_node *node, unsigned long id,
				unsigned int shift)
{
	return rk_rcu_dereference(node->slots[(id >> shift) &
					      (RIDR_SLOTS - 1)]);
}

/* A root or internal slot's word is a full node to descend into (not
 * NULL, not a bucket): bit 0.
 */
static inline bool __ridr_is_node(const void *s)
{
	return (unsigned long)s & RIDR_TAG_FULL;
}

/*
 * struct ridr_bucket - sorted (key, entry) records below one slot (or
 * the root).
 * @n: records in use, tombstones included; readers load it with acquire
 *     (it grows in place when a record is appended).
 * @cap: records the object has room for (immutable).
 * @kshift: keys are the low @kshift bits of the ids (immutable).  The
 *          slots that point here cover ranges of at most 2^@kshift ids
 *          whose bits above @kshift are fixed by the path, so a key
 *          names one id.
 * @block: 1 if the object is a full node's memory (from a preload or a
 *         spare), freed as such (immutable).
 * @eoff: the entries start at word @eoff of the records (immutable; set
 *        with @cap and @kshift by ridr_bucket_shape(), so that finding
 *        an entry is one load and an add, not a width computation).
 * @live: writer only: records with a non-NULL entry that some slot can
 *        reach.
 * @refs: writer only: slots (or the root) that point here.  More than
 *        one after a burst, until each of them gets a bucket of its own,
 *        and after a collapse joined its left neighbour's bucket (sparse
 *        ids left a few per slot share one bucket; ridr/write.c W14).
 * @rcu: deferred free; overlays the writer-only fields, which nobody
 *       reads once the bucket has left the tree.
 *
 * The records follow the header (24 bytes with 64-bit pointers): @cap
 * keys of 2, 4 or 8 bytes (by @kshift), padded to 8 bytes, then @cap
 * entries.  An entry is NULL in a tombstone (a removed id whose record
 * stays until the next copy: free), the address of __ridr_reserved for a
 * reservation, or the caller's pointer.
 *
 * Internal to ridr (ridr/internal.h and bucket.c have the code); it is
 * in this header for ridr_find()'s inline path: a small map is one
 * bucket at the root (the timers of a process, the ipc objects of a
 * namespace), which ridr_find() reads itself when its keys are 16- or
 * 32-bit (ids below 2^32) and the ids were handed out in order, so that
 * the record of an id sits at index id - key[0].
 */
struct ridr_bucket {
	uint8_t n;
	uint8_t cap;
	uint8_t kshift;
	uint8_t block;
	uint8_t eoff;
	uint8_t pad_[3];
	union {
		struct {
			uint32_t live;
			uint32_t refs;
		} w;
		struct rk_rcu_head rcu;
	} u;
};

/* Bucket kinds of 16- and 32-bit keys in a root word or slot (bits 1-2,
 * bit 0 clear; ridr/internal.h has the third).
 */
#define __RIDR_KIND_B16 2UL
#define __RIDR_KIND_B32 4UL
/* Its address is the entry of a reserved id in a bucket (never read). */
extern const char __ridr_reserved;

/*
 * A bucket seen as its header followed by its records, for the loads of
 * the root-bucket paths: key i of each width, and word @eoff + i, entry
 * i.  Array members, so that each load is indexed off the bucket's
 * address in one instruction even where it is a volatile access (the
 * kernel's READ_ONCE and rcu_dereference()), as a full node's slot is:
 * gcc does not fold a separate address computation into a volatile
 * load.  Only ever pointed at, never allocated: the arrays are declared
 * with room for every index (@cap, @n and @eoff are 8-bit) rather than
 * as flexible array members, which C++ lacks.
 */
struct __ridr_bucket_recs {
	struct ridr_bucket h;
	union {
		uint16_t k16[256];
		uint32_t k32[256];
		uint64_t k64[256];
		void __rk_rcu *w[2 * 256];
	} r;
};

/* The records of bucket @b: keys, padding, entries, after the header. */
static inline uint64_t *__ridr_bucket_data(const struct ridr_bucket *b)
{
	return (uint64_t *)(unsigned long)(b + 1);
}

/* Key @i of root bucket @b, whose keys are @kb (2, 4 or 8) bytes wide:
 * a single-copy load.
 */
static rk_always_inline unsigned long
__ridr_root_key(const struct ridr_bucket *b, unsigned int kb, unsigned long i)
{
	const struct __ridr_bucket_recs *r =
		(const struct __ridr_bucket_recs *)b;

	if (kb == 2)
		return rk_read_once(r->r.k16[i]);
	if (kb == 4)
		return rk_read_once(r->r.k32[i]);
	return (unsigned long)rk_read_once(r->r.k64[i]);
}

/* Key @i of bucket @b, @kb bytes wide, where @i is below a count loaded
 * with acquire (R3) or the caller holds the writers' serialization: such
 * a key never changes while the bucket is reachable (R4), so no load of
 * it races with a store and a plain load is enough.  Plain, so that the
 * compiler keeps its freedom: a volatile access (the kernel's READ_ONCE)
 * is never combined with the instructions around it.
 */
static rk_always_inline unsigned long
__ridr_root_key_below(const struct ridr_bucket *b, unsigned int kb,
		      unsigned long i)
{
	const struct __ridr_bucket_recs *r =
		(const struct __ridr_bucket_recs *)b;

	if (kb == 2)
		return r->r.k16[i];
	if (kb == 4)
		return r->r.k32[i];
	return (unsigned long)r->r.k64[i];
}

/*
 * The index of @id among the @n keys, @kb bytes wide, of root bucket
 * @b, found by two probes, or @n if neither hits: as if the ids from
 * the first key on had no gaps, then as if those up to the last key had
 * none (ids handed out in order behind a long-lived one: keys L, c,
 * c + 1, ...).  A probe compares the whole id with a key: a key is below
 * 2^kshift, the root bucket's range, so a match is an id inside it; an
 * id beyond it (whose low bits may be a key) does not match.  Readers
 * (ridr_find()) start with it; a removal from a root bucket
 * (ridr_remove_root_kb() in ridr/write.c) makes the same two probes,
 * the one from the last key first.
 *
 * An empty bucket (@n == 0) costs the hit path no test: key 0 exists in
 * every bucket (@cap >= 1) and is loaded, but no index is below 0, so
 * its value (being written by an append, for a reader) is never used.
 * So key 0 is read with a marked load (it may be racing with that
 * append) and every other key with a plain one: it is below @n
 * (__ridr_root_key_below()).
 */
static rk_always_inline unsigned long
__ridr_root_index(const struct ridr_bucket *b, unsigned int kb, unsigned int n,
		  unsigned long id)
{
	unsigned long d = id - __ridr_root_key(b, kb, 0);

	if (d < n && __ridr_root_key_below(b, kb, d) == id)
		return d;
	if (unlikely(!n))
		return 0;
	d = __ridr_root_key_below(b, kb, n - 1) - id;
	if (d < n && __ridr_root_key_below(b, kb, n - 1 - d) == id)
		return n - 1 - d;
	return n;
}

/*
 * The root bucket at address @bw (the root word minus its kind tag),
 * whose keys are @kb bytes wide.
 * The loads are those of __ridr_find_slow(), in the same order, and
 * pair with the same writer stores (R3, R4 in ridr/read.c): @n with
 * acquire, so the keys and entries below it are initialised (the
 * release of a bucket append, or the publication of the bucket itself);
 * a key below @n never changes while the bucket is reachable, so a key
 * equal to @id names its record; the entry is one dependent load.
 * Anything but a hit of a probe goes out of line, where the range is
 * checked and the keys searched.
 */
static rk_always_inline void *__ridr_root_probe(unsigned long bw,
						unsigned long w,
						unsigned long id,
						unsigned int kb)
{
	const struct ridr_bucket *b = (const struct ridr_bucket *)bw;
	/* R3: pairs with the release of @n by a bucket append. */
	unsigned int n = rk_load_acquire(b->n);
	unsigned long d = __ridr_root_index(b, kb, n, id);
	void *e;

	if (unlikely(d >= n))
		return __ridr_find_slow((const void *)w, id, true);
	e = rk_rcu_dereference(
		((const struct __ridr_bucket_recs *)b)->r.w[b->eoff + d]);
	return e == (const void *)&__ridr_reserved ? NULL : e;
}

/*
 * The root word @w is a bucket of kind @kind (__RIDR_KIND_B16, _B32, or
 * RIDR_KIND_B64 in ridr/internal.h): then true, and the bucket's address
 * in *@bwp.  The test is on @w minus the kind's tag, whose tag bits are
 * then clear (never for NULL, another kind, or a full node: bit 0 set):
 * the one subtraction is both the test and the untagging, and the
 * bucket's loads fold the rest into their displacements.  The address
 * is still computed from the loaded root word, so a reader's dependency
 * holds (R1).  rk_hide_var() keeps the compiler from turning the test
 * back into a mask and a compare, then a second mask for the address.
 * Readers (ridr_find()) and writers (the root-bucket fast paths of
 * ridr/write.c) both dispatch on it.
 */
static rk_always_inline bool __ridr_root_bucket_as(unsigned long w,
						   unsigned long kind,
						   unsigned long *bwp)
{
	unsigned long bw = w - kind;

	rk_hide_var(bw);
	*bwp = bw;
	return !(bw & RIDR_KIND_MASK);
}

/*
 * The root word @w is NULL or a bucket.  A bucket of 16- or 32-bit keys
 * (ids below 2^32: a process's timers after any amount of churn) is
 * probed inline; 64-bit keys go out of line.
 */
static inline void *__ridr_find_root_bucket(unsigned long w, unsigned long id)
{
	unsigned long bw;

	if (__ridr_root_bucket_as(w, __RIDR_KIND_B16, &bw))
		return __ridr_root_probe(bw, w, id, 2);
	if (__ridr_root_bucket_as(w, __RIDR_KIND_B32, &bw))
		return __ridr_root_probe(bw, w, id, 4);
	return w ? __ridr_find_slow((const void *)w, id, true) : NULL;
}

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
	unsigned long w = (unsigned long)rk_rcu_dereference(map->root);
	const void *t;	/* the current full node's word, tagged FULL */
	unsigned int shift;

	if (unlikely(!__ridr_is_node((const void *)w)))
		return __ridr_find_root_bucket(w, id);
	shift = __ridr_root_shift(w);
	if (__ridr_beyond_root(id, shift))
		return NULL;
	/* The root node as a slot would hold it: every level then loads
	 * through __ridr_slot_node(), the tag folded into the load.
	 */
	t = (const void *)(w & ~RIDR_ROOT_SHIFT_MASK);
	while (shift) {
		void *s = __ridr_slot(__ridr_slot_node(t), id, shift);

		if (unlikely(!__ridr_is_node(s)))
			return s ? __ridr_find_slow(s, id, false) : NULL;
		t = s;
		shift -= RIDR_SHIFT;
	}
	/* A leaf slot holds the entry. */
	return __ridr_slot(__ridr_slot_node(t), id, 0);
}

/* The same lookup as an out-of-line function (ABI, function pointers). */
void *ridr_find_noinline(const struct ridr *map, unsigned long id);

/**
 * ridr_find_bulk() - Look up the entries of @n ids in one call.
 * @map: the map.
 * @ids: the ids: any values, repeats allowed.
 * @n: how many.
 * @out: @out[i] receives the entry of @ids[i], NULL if it is free or
 *       reserved.  Must not overlap @ids.
 *
 * ridr_find() of every id, in groups of up to 32 ids and two passes: the
 * first walks each id down to the leaf or bucket that holds it and
 * prefetches that object's line instead of reading it, the second reads
 * the entries, so the cache misses at the bottom of different walks
 * overlap instead of following one another.  In a tree larger than the
 * caches (benchmarks/ridr_bulk_bench.c, 10^6 ids, batches of 16-32):
 * about 2.2-2.6x a loop of ridr_find() where lookups end in buckets
 * (sparse ids), 1.45-2.0x through dense full nodes, whose lookups the
 * core already overlaps in a loop.
 *
 * Ordering: each id is found as by its own ridr_find(), with the same
 * dependent loads: its entry before or after any concurrent change, and
 * a found entry's stores made before it was published are seen.  The
 * batch is not a snapshot: two ids (or two copies of one id) may show
 * different moments of a concurrent writer's changes.
 *
 * Context: Caller holds the RCU read lock, one read-side section for the
 * whole call; the entries are valid until rcu_read_unlock() unless a
 * reference is taken.  Wait-free; stores nothing but @out.
 * Return: the number of non-NULL entries stored (0 to @n), or -EINVAL if
 * @map, @ids or @out is NULL or @n > INT_MAX; on -EINVAL @out is not
 * written.
 */
int ridr_find_bulk(const struct ridr *map, const unsigned long *ids,
		   unsigned int n, void **out);

/**
 * ridr_get_next() - Find the first entry at or after *@idp.
 * @map: the map.
 * @idp: in: first id to consider; out: the id of the entry found.
 *
 * Reservations (NULL entries) are skipped.  Under concurrent writers each
 * id is seen in its old or new state, ids are returned in increasing
 * order, and no id allocated throughout the walk is missed.  Cost:
 * O(height) full nodes and buckets visited per entry returned, plus the
 * empty slots skipped (at most 63 a level) and, in a bucket, the records
 * of removed or reserved ids after the start (fewer than 32); an empty
 * map answers without a walk.
 *
 * Context: Caller holds the RCU read lock.
 * Return: the entry, or NULL (and *@idp unchanged) if there is none.
 */
void *ridr_get_next(const struct ridr *map, unsigned long *idp);

/**
 * ridr_get_next_range() - Find the first entry with an id in [*@idp, @last].
 * @map: the map.
 * @idp: in: first id to consider; out: the id of the entry found.
 * @last: last id to consider (inclusive).
 *
 * ridr_get_next() with an upper bound: the walk stops at the first slot
 * beyond @last instead of looking for the next entry further on.
 * Resumable: call again with *@idp + 1 (in the same or a new read-side
 * section).  Concurrent writers: as ridr_get_next().
 *
 * Context: Caller holds the RCU read lock.
 * Return: the entry, or NULL (and *@idp unchanged) if there is none in
 * range (also if *@idp > @last).
 */
void *ridr_get_next_range(const struct ridr *map, unsigned long *idp,
			  unsigned long last);

/* Internal step of ridr_for_each(): the next entry after *@idp. */
void *__ridr_iter_next(const struct ridr *map, unsigned long *idp);
/* Internal step of ridr_for_each_range(): the next one up to @last. */
void *__ridr_iter_next_range(const struct ridr *map, unsigned long *idp,
			     unsigned long last);

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
 * ridr_for_each_range() - Iterate over the entries with ids in [@first, @last].
 * @map: the map.
 * @entry: loop cursor, the entry (void * or a pointer type).
 * @id: loop cursor, unsigned long id.
 * @first: first id (inclusive).
 * @last: last id (inclusive).
 *
 * In increasing id order; reservations skipped.  After a break, @id is
 * where to resume (from @id + 1).
 *
 * Context: as ridr_for_each().
 */
#define ridr_for_each_range(map, entry, id, first, last)                     \
	for ((id) = (first),                                                 \
	    (entry) = ridr_get_next_range((map), &(id), (last));             \
	     (entry); (entry) = __ridr_iter_next_range((map), &(id), (last)))

/**
 * ridr_walk() - Call @fn for every entry in increasing id order.
 * @map: the map.
 * @fn: called with each id, its entry and @data; a non-zero return
 *      stops the walk.
 * @data: passed to @fn.
 *
 * idr_for_each() for ridr (also spelled ridr_for_each_fn()).  @fn runs
 * inside the caller's read-side section: it must not sleep or wait for a
 * grace period; it may remove ids if the caller is also the (serialized)
 * writer.  Concurrent writers: as ridr_get_next().
 *
 * Context: Caller holds the RCU read lock.
 * Return: 0 after the last entry, the first non-zero value @fn returned,
 * or -EINVAL (NULL @map or @fn).
 */
int ridr_walk(const struct ridr *map,
	      int (*fn)(unsigned long id, void *entry, void *data),
	      void *data);

/*
 * ridr_for_each_fn() - ridr_walk() under the name the porting table
 * uses.  A macro: checkpatch takes any function named *for_each<letters>
 * for a loop macro and refuses the brace of its definition.
 */
#define ridr_for_each_fn(map, fn, data) ridr_walk(map, fn, data)

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
 * Counts full nodes, buckets and spare nodes at their allocated sizes
 * (the bytes asked of the allocator: 544 for a full node, whose cache in
 * the kernel has a 576-byte stride).
 *
 * Context: Any; a snapshot unless writers are serialized.  Objects
 * waiting for a grace period are no longer counted.
 * Return: bytes.
 */
size_t ridr_memory(const struct ridr *map);

/* ---- IDA: ids without entries --------------------------------------- */

/* Ids per bitmap chunk of an IDA (a chunk is 16 + RIDR_IDA_BITS / 8 B). */
#define RIDR_IDA_BITS 4096

/**
 * struct ridr_ida - an id allocator without entries (the kernel's IDA).
 * @map: a ridr map of bitmaps: for chunk k of RIDR_IDA_BITS ids, map id
 *       2k holds its bitmap (while some id of it is allocated) and map id
 *       2k + 1 is reserved while all of them are, so ridr's own free-id
 *       search skips full chunks.  Its lock serializes the IDA's writers;
 *       its RCU and allocation settings (ridr_set_flags(&ida->map,
 *       ...)) apply.
 * @count: allocated ids (writer; a snapshot for ridr_ida_count()).
 *
 * Memory: bits, not slots: 0.133 bytes per id where ids are dense (a
 * 528-byte chunk per 4096 ids, plus 1/32 of a 576-byte node for its two
 * map ids); about 570 bytes for a chunk holding a single id.
 */
struct ridr_ida {
	struct ridr map;
	unsigned long count;
};

#ifdef RK_POSITIONAL_INIT
#define RIDR_IDA_INIT { RIDR_INIT, 0 }
#else
#define RIDR_IDA_INIT { .map = RIDR_INIT, .count = 0 }
#endif
#define DEFINE_RIDR_IDA(name) struct ridr_ida name = RIDR_IDA_INIT

/**
 * ridr_ida_init() - Initialise an empty IDA (default RCU).
 * @ida: the IDA.
 *
 * Context: Any; @ida not in use.
 */
void ridr_ida_init(struct ridr_ida *ida);

#if RK_HAVE_FLAVORS
/**
 * ridr_ida_init_flavor() - Initialise an empty IDA with an RCU flavor.
 * @ida: the IDA.
 * @flavor: liburcu flavor of its readers (as ridr_init_flavor()).
 *
 * Context: Any; @ida not in use.
 */
void ridr_ida_init_flavor(struct ridr_ida *ida, const rk_rcu_flavor_t *flavor);
#endif

/**
 * ridr_ida_destroy() - Free every id and all memory of an IDA.
 * @ida: the IDA.
 *
 * Bitmaps and nodes are freed after a grace period (readers in
 * ridr_ida_test() stay safe); the IDA is empty and reusable on return.
 *
 * Context: No concurrent writer (as ridr_destroy()).
 */
void ridr_ida_destroy(struct ridr_ida *ida);

/**
 * ridr_ida_alloc() - Allocate the lowest free id in [@min, @max].
 * @ida: the IDA.
 * @min: lowest acceptable id (inclusive).
 * @max: highest acceptable id (inclusive).
 * @idp: on success, receives the id.
 *
 * Full chunks are skipped through the map's free-id search (O(height)),
 * then the chunk's summary word finds the bit: no scan of full ranges.
 *
 * Ordering: none beyond the IDA itself (no object is published): a
 * ridr_ida_test() that runs after the call returned sees the id.
 * Context: Writer; takes and releases the IDA's lock.  Allocates as
 * ridr_alloc() (without sleeping under the lock; if that fails,
 * RK_GFP_KERNEL outside it, which may sleep in the kernel, or
 * RK_GFP_ATOMIC with RIDR_ATOMIC).
 * Return: 0, -EINVAL (@min > @max, NULL @ida or @idp), -ENOMEM (IDA
 * unchanged) or -ENOSPC if [@min, @max] is full.
 */
int ridr_ida_alloc(struct ridr_ida *ida, unsigned long min, unsigned long max,
		   unsigned long *idp);

/**
 * ridr_ida_alloc_cyclic() - Allocate the next free id after the last one.
 * @ida: the IDA.
 * @min: lowest acceptable id (inclusive).
 * @max: highest acceptable id (inclusive).
 * @idp: on success, receives the id.
 *
 * As ridr_alloc_cyclic(): searches [cursor, @max], then [@min, cursor);
 * the cursor (the map's, ridr_get_cursor(&ida->map)) then moves past the
 * id handed out.
 *
 * Context: as ridr_ida_alloc().
 * Return: 0, -EINVAL, -ENOMEM (IDA and cursor unchanged) or -ENOSPC.
 */
int ridr_ida_alloc_cyclic(struct ridr_ida *ida, unsigned long min,
			  unsigned long max, unsigned long *idp);

/**
 * ridr_ida_free() - Free an allocated id.
 * @ida: the IDA.
 * @id: the id.
 *
 * Never allocates, never fails for an allocated id.  A bitmap left empty
 * is freed after a grace period.
 *
 * Context: Writer; takes and releases the IDA's lock.  Never sleeps.
 * Return: 0, -ENOENT if @id is not allocated (IDA unchanged), -EINVAL.
 */
int ridr_ida_free(struct ridr_ida *ida, unsigned long id);

/**
 * ridr_ida_test() - Whether @id is allocated.
 * @ida: the IDA.
 * @id: the id.
 *
 * A reader: a ridr_find() of the id's bitmap and one load of one word.
 * Concurrent with writers the answer is the id's state at some point
 * during the call.
 *
 * Context: Caller holds the RCU read lock (ridr_read_lock(&ida->map)).
 * Wait-free; stores nothing.
 * Return: true if allocated.
 */
bool ridr_ida_test(const struct ridr_ida *ida, unsigned long id);

/**
 * ridr_ida_count() - Allocated ids.
 * @ida: the IDA.
 *
 * Context: Any; a snapshot unless writers are serialized.
 * Return: the count.
 */
unsigned long ridr_ida_count(const struct ridr_ida *ida);

/**
 * ridr_ida_memory() - Bytes held by an IDA: bitmaps and map objects.
 * @ida: the IDA.
 *
 * Context: Any; a snapshot unless writers are serialized.
 * Return: bytes.
 */
size_t ridr_ida_memory(const struct ridr_ida *ida);

/* ---- generation-checked handles ------------------------------------- */

/* Widths of a handle's generation (the id gets the other bits). */
#define RIDR_HANDLE_GEN_BITS_MIN 1
#define RIDR_HANDLE_GEN_BITS_MAX 32

/**
 * struct ridr_handles - ids handed out as (generation, id) handles.
 * @map: the entries; its lock serializes every writer of the handles.
 *       An id whose generations are spent stays reserved in it (retired).
 * @gens: a ridr map of generation counters: entry k holds the counters
 *        of ids [64k, 64k + 64), 1, 2 or 4 bytes each (by @gen_bits),
 *        allocated on the first allocation of an id of the chunk and kept
 *        until ridr_handles_destroy().
 * @gen_bits: bits of generation in a handle (immutable after init).
 * @count: live handles (writer; a snapshot for ridr_handles_count()).
 * @retired: ids retired because their generation would wrap (writer).
 *
 * A handle is ((u64)gen << (64 - @gen_bits)) | id.  Handles are what a
 * server hands to untrusted clients (sessions, file handles): a stale or
 * forged one finds nothing, even after its id was reused (ABA-proof),
 * because an id's counter moves on at every removal and is never reused:
 * when it would wrap, the id is retired instead.
 *
 * Memory: 1.25 / 2.25 / 4.25 bytes per id (@gen_bits <= 8 / <= 16 /
 * <= 32) for the counters of a chunk in use (80 / 144 / 272 bytes per 64
 * ids, rcu head included), plus about 0.16 B/id for @gens' nodes where ids
 * are dense (a 576-byte leaf per 4096 ids, the nodes above, spares); on
 * top of @map's own cost (9.2 B/id dense).  The counters stay after their
 * ids are freed.
 */
struct ridr_handles {
	struct ridr map;
	struct ridr gens;
	unsigned int gen_bits;
	unsigned long count;
	unsigned long retired;
};

/**
 * ridr_handles_init() - Initialise an empty handle map (default RCU).
 * @hs: the handle map.
 * @gen_bits: generation bits per handle, RIDR_HANDLE_GEN_BITS_MIN to
 *            RIDR_HANDLE_GEN_BITS_MAX; ids get 64 - @gen_bits bits (all
 *            of an unsigned long at most).
 *
 * Context: Any; @hs not in use.
 * Return: 0, or -EINVAL (NULL @hs, @gen_bits out of range; @hs untouched).
 */
int ridr_handles_init(struct ridr_handles *hs, unsigned int gen_bits);

#if RK_HAVE_FLAVORS
/**
 * ridr_handles_init_flavor() - Initialise a handle map with an RCU flavor.
 * @hs: the handle map.
 * @gen_bits: as ridr_handles_init().
 * @flavor: liburcu flavor of its readers (as ridr_init_flavor()).
 *
 * Context: Any; @hs not in use.
 * Return: as ridr_handles_init().
 */
int ridr_handles_init_flavor(struct ridr_handles *hs, unsigned int gen_bits,
			     const rk_rcu_flavor_t *flavor);
#endif

/**
 * ridr_handles_destroy() - Free all memory of a handle map.
 * @hs: the handle map.
 *
 * Counters and nodes are freed after a grace period (readers in
 * ridr_handle_find() stay safe); entries are the caller's.  The map is
 * empty and reusable (same @gen_bits) on return; generations start again
 * from 0, so handles issued before must not be presented to it again.
 *
 * Context: No concurrent writer (as ridr_destroy()).
 */
void ridr_handles_destroy(struct ridr_handles *hs);

/**
 * ridr_handle_alloc() - Allocate the lowest free id for @ptr; its handle.
 * @hs: the handle map.
 * @ptr: entry to publish (not NULL).
 * @hp: on success, receives the handle: the id's current generation and
 *      the id.
 *
 * The id's generation does not change here: it moved on when the id's
 * previous entry was removed (ridr_handle_remove()).
 *
 * Ordering: publishes @ptr with release semantics (as ridr_alloc()).
 * Context: Writer; takes and releases the map's lock.  Allocates as
 * ridr_alloc() (without sleeping under the lock; if that fails, or when
 * the id needs a new chunk of counters, outside it with RK_GFP_KERNEL,
 * which may sleep in the kernel, or RK_GFP_ATOMIC with RIDR_ATOMIC).
 * Return: 0, -EINVAL (NULL @hs, @ptr or @hp), -ENOMEM (map unchanged,
 * *@hp untouched) or -ENOSPC (every id that fits a handle is allocated
 * or retired).
 */
int ridr_handle_alloc(struct ridr_handles *hs, void *ptr, uint64_t *hp);

/**
 * ridr_handle_find() - The entry of a live handle.
 * @hs: the handle map.
 * @h: a handle, from ridr_handle_alloc() or from anyone (untrusted).
 *
 * Two lookups: the id's entry in @hs->map, then (after a read barrier)
 * the id's generation in @hs->gens.  A handle whose generation is not
 * the id's current one (removed, then reused or not), or that was never
 * issued, returns NULL, never another generation's entry.  Concurrent
 * with ridr_handle_remove() of @h: the entry or NULL.
 *
 * Ordering: pairs with the generation store of ridr_handle_remove() and
 * the release of the next ridr_handle_alloc() of the id: an entry
 * returned was published for @h's generation; the reader sees every
 * store to it made before its ridr_handle_alloc().
 * Context: Caller holds the RCU read lock (ridr_read_lock(&hs->map)); the
 * result is valid until the unlock unless a reference is taken.
 * Wait-free; stores nothing.
 * Return: the entry, or NULL.
 */
void *ridr_handle_find(const struct ridr_handles *hs, uint64_t h);

/**
 * ridr_handle_remove() - Remove the entry of @h if @h is live.
 * @hs: the handle map.
 * @h: the handle.
 * @oldp: if not NULL, receives the entry removed.
 *
 * Removes only @h's generation: a stale handle of a reused id leaves the
 * current entry alone.  The id's generation moves on (its handles go
 * stale) and the id is free again; if its generation was the last one
 * (2^gen_bits - 1), the id is retired instead: reserved for ever, so no
 * generation is ever issued twice for an id.  Readers may still find the
 * entry until a grace period has passed: free it after one.
 *
 * Context: Writer; takes and releases the map's lock.  Never sleeps, never
 * fails for lack of memory (as ridr_remove()).
 * Return: 0, -ENOENT (stale or never issued; map unchanged) or -EINVAL
 * (NULL @hs).
 */
int ridr_handle_remove(struct ridr_handles *hs, uint64_t h, void **oldp);

/**
 * ridr_handle_id() - The id a handle names.
 * @hs: the handle map.
 * @h: the handle.
 *
 * Context: Any.
 * Return: the id (possibly beyond any allocated one for a forged @h).
 */
static inline unsigned long ridr_handle_id(const struct ridr_handles *hs,
					   uint64_t h)
{
	return (unsigned long)(h & (~0ULL >> hs->gen_bits));
}

/**
 * ridr_handle_gen() - The generation a handle carries.
 * @hs: the handle map.
 * @h: the handle.
 *
 * Context: Any.
 * Return: the generation.
 */
static inline uint32_t ridr_handle_gen(const struct ridr_handles *hs,
				       uint64_t h)
{
	return (uint32_t)(h >> (64 - hs->gen_bits));
}

/**
 * ridr_handles_count() - Live handles.
 * @hs: the handle map.
 *
 * Context: Any; a snapshot unless writers are serialized.
 * Return: the count.
 */
unsigned long ridr_handles_count(const struct ridr_handles *hs);

/**
 * ridr_handles_retired() - Ids retired because their generations ran out.
 * @hs: the handle map.
 *
 * Context: Any; a snapshot unless writers are serialized.
 * Return: the count.
 */
unsigned long ridr_handles_retired(const struct ridr_handles *hs);

/**
 * ridr_handles_memory() - Bytes held: both maps' objects and the counters.
 * @hs: the handle map.
 *
 * Context: Any; a snapshot unless writers are serialized.
 * Return: bytes.
 */
size_t ridr_handles_memory(const struct ridr_handles *hs);

#ifdef __cplusplus
}
#endif

#endif /* RK_RIDR_H */
