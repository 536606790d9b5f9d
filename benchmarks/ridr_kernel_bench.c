// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ridr next to the kernel's own id maps, in one process: Linux 6.1's IDR,
 * XArray and maple tree (built in userspace from Debian's linux-source-6.1
 * tarball through the kernel's tools/testing/radix-tree harness, see
 * benchmarks/lib/kbase.h and third_party/linux_6_1/), liburcu's rculfhash,
 * a lock-free flat array and a spinlocked flat array with a free-id stack
 * (benchmarks/lib/flatmap.h).  Issue 10, part 4.  Every structure stores
 * the same pointer at every id.  One thread throughout; variants are
 * interleaved round by round and each figure is the median of the rounds.
 * Timing is measured here, never asserted by a test.
 *
 *   memory   Bytes for the whole map and per live id, after a grace period
 *            (rcu_barrier): heap bytes from mallinfo2() (what malloc holds,
 *            with its overhead; glibc's per-thread cache off, see
 *            memory_without_tcache()), and the structure's own object bytes
 *            where it can tell (ridr_memory(); for the kernel structures
 *            the harness's slab bytes, object size x live objects; the
 *            flat array: 8 bytes x (largest id + 1), computed, not built).
 *            (a) 2048 random ids in [0, 2^31), inserted at those ids;
 *            (b) 10^5 random 31-bit ids, likewise;
 *            (c) cyclic with 0.1% long-lived: 10^6 cyclic allocations in
 *                [0, INT_MAX]; every 1000th allocated id is long-lived
 *                (never removed), the others form a FIFO window of 1000
 *                short-lived ids (each new one evicts and removes the
 *                oldest); measured at the end (2000 ids live);
 *            (d) dense: ids 0..10^6-1 by lowest-free allocation.
 *            rculfhash takes the same ids (a counter for (c) and (d)).
 *   lookup   ns per lookup of a random live id (a precomputed sequence of
 *            2^16 random picks, the same for every structure), each
 *            lookup in its own RCU read-side section: ridr_find() and
 *            rculfhash inside rk_rcu_read_lock(), idr_find() inside the
 *            harness's rcu_read_lock(), xa_load() and mtree_load() (which
 *            lock themselves).  Dense: ids 0..4095 (and the lock-free
 *            flat array, the floor); sparse: 10^5 random 31-bit ids.
 *   churn    remove+alloc pairs per second, one thread, after a warm-up;
 *            node allocations per pair counted separately (kernel: the
 *            harness's cache counters during the timed runs; ridr: a pass
 *            through compat's allocator hook).
 *            (1) leaf: ids 0..31 live; remove a random one, allocate the
 *                lowest free in [0, INT_MAX] (gets it back);
 *            (2) empty: only id 0; remove 0, allocate lowest free (0);
 *            (3) boundary: ids 0..64; remove 64, allocate lowest (64);
 *            (4) far: only X = 2^30 + 12345; remove X, allocate lowest
 *                free in [X, INT_MAX] (X);
 *            (5) cyclic: one live id (POSIX timers); allocate cyclically
 *                in [0, INT_MAX], then remove the previous id.
 *            The spinlocked flat array covers [base, base + 2^20) (base X
 *            in (4)), reuses ids through its LIFO free-id stack and, in
 *            (5), hands out ids from a cursor, wrapping at 2^20.
 *   icount N K   K finds per structure on ids 0..N-1, for callgrind
 *            (scripts/kbase_icount.sh counts instructions inside
 *            ridr_find, flat_find, idr_find, xa_load, mtree_load and
 *            rcu_pair, an empty read-side section).
 *   icount-churn STRUCT PATTERN K   K churn pairs of one pattern on one
 *            structure (spin_stack, ridr, idr, xarray, maple), for
 *            callgrind (scripts/churn_icount.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <urcu/rculfhash.h>

#include "benchmarks/lib/flatmap.h"
#include "benchmarks/lib/kbase.h"
#include "compat/compat.h"
#include "ridr/ridr.h"

#define FAR_ID ((1UL << 30) + 12345)
#define SEQ_LEN (1UL << 16)
#define FLAT_CHURN_CAP (1UL << 20)

static unsigned long dummy;	/* the pointer every structure stores */

static void die(const char *what)
{
	fprintf(stderr, "ridr_kernel_bench: %s\n", what);
	abort();
}

static inline uint64_t xorshift(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static size_t heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/* ---- rculfhash: ids as keys, one 40-byte object per id ---- */

struct lfht_obj {
	unsigned long id;
	struct cds_lfht_node node;
	struct rk_rcu_head rcu;
};

static struct cds_lfht *ht;

static inline unsigned long hash_id(unsigned long id)
{
	return id * 0x9e3779b97f4a7c15UL;	/* Fibonacci hashing */
}

static int lfht_match(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct lfht_obj, node)->id ==
	       *(const unsigned long *)key;
}

static void lfht_free_rcu(struct rk_rcu_head *h)
{
	free(rk_container_of(h, struct lfht_obj, rcu));
}

/* Caller holds the RCU read lock. */
static inline struct lfht_obj *lfht_find(unsigned long id)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *n;

	cds_lfht_lookup(ht, hash_id(id), lfht_match, &id, &iter);
	n = cds_lfht_iter_get_node(&iter);
	return n ? caa_container_of(n, struct lfht_obj, node) : NULL;
}

static int lfht_insert(unsigned long id)
{
	struct lfht_obj *o = malloc(sizeof(*o));

	if (!o)
		die("out of memory");
	o->id = id;
	cds_lfht_node_init(&o->node);
	rk_rcu_read_lock();
	if (cds_lfht_add_unique(ht, hash_id(id), lfht_match, &id, &o->node) !=
	    &o->node) {
		rk_rcu_read_unlock();
		free(o);
		return -EBUSY;
	}
	rk_rcu_read_unlock();
	return 0;
}

static void lfht_remove(unsigned long id)
{
	struct lfht_obj *o;

	rk_rcu_read_lock();
	o = lfht_find(id);
	if (!o || cds_lfht_del(ht, &o->node))
		die("lfht: id not found");
	rk_rcu_read_unlock();
	rk_call_rcu(RK_RCU_DEFAULT_FLAVOR, &o->rcu, lfht_free_rcu);
}

static void lfht_destroy(void)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *n;

	/* Not cds_lfht_for_each_entry(): it applies container_of to the
	 * final NULL, which UBSan rightly reports. */
	rk_rcu_read_lock();
	for (cds_lfht_first(ht, &iter); (n = cds_lfht_iter_get_node(&iter));
	     cds_lfht_next(ht, &iter)) {
		struct lfht_obj *o = caa_container_of(n, struct lfht_obj, node);

		cds_lfht_del(ht, &o->node);
		rk_call_rcu(RK_RCU_DEFAULT_FLAVOR, &o->rcu, lfht_free_rcu);
	}
	rk_rcu_read_unlock();
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	cds_lfht_destroy(ht, NULL);
	ht = NULL;
}

/* ---- the structures, behind one switch ---- */

enum st {
	S_RIDR, S_IDR, S_XA, S_MAPLE,	/* the first four allocate ids */
	S_SPIN,		/* spinlocked flat array + free-id stack */
	S_LFHT,		/* rculfhash */
	S_FLAT,		/* lock-free flat array (lookups only) */
	S_N
};

static const char *const st_name[S_N] = {
	"ridr", "idr", "xarray", "maple", "spin_stack", "rculfhash", "flat"
};

static struct ridr map;
static struct kb_map *kmap;
static struct flatmap flat;
static unsigned long flat_base, flat_cursor;
static bool flat_cyclic;

static enum kb_kind kb_kind_of(enum st s)
{
	return s == S_IDR ? KB_IDR : s == S_XA ? KB_XA : KB_MAPLE;
}

static bool is_kernel(enum st s)
{
	return s == S_IDR || s == S_XA || s == S_MAPLE;
}

/* An empty structure; @n sizes the hash table, @cap the flat arrays. */
static void st_new(enum st s, unsigned long n, unsigned long cap,
		   unsigned long base)
{
	unsigned long size = 1024;

	switch (s) {
	case S_RIDR:
		ridr_init(&map);
		break;
	case S_IDR:
	case S_XA:
	case S_MAPLE:
		kmap = kb_new(kb_kind_of(s));
		if (!kmap)
			die("kb_new");
		break;
	case S_SPIN:
	case S_FLAT:
		if (flatmap_init(&flat, cap))
			die("out of memory");
		flat_base = base;
		flat_cursor = 0;
		flat_cyclic = false;
		break;
	case S_LFHT:
		/* Sized for @n from the start: growing happens in the
		 * background and would be measured. */
		while (size < n)
			size <<= 1;
		ht = cds_lfht_new_flavor(size, 1024, 0,
			CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
			RK_RCU_DEFAULT_FLAVOR, NULL);
		if (!ht)
			die("cds_lfht_new failed");
		break;
	default:
		die("st_new");
	}
}

static void st_destroy(enum st s)
{
	switch (s) {
	case S_RIDR:
		ridr_destroy(&map);
		break;
	case S_IDR:
	case S_XA:
	case S_MAPLE:
		kb_destroy(kmap);
		kmap = NULL;
		break;
	case S_SPIN:
	case S_FLAT:
		flatmap_destroy(&flat);
		break;
	case S_LFHT:
		lfht_destroy();
		break;
	default:
		break;
	}
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
}

/* Lowest free id in [min, max] (the flat array: its free-id stack). */
static inline int st_alloc(enum st s, unsigned long min, unsigned long max,
			   unsigned long *id)
{
	long fid;

	switch (s) {
	case S_RIDR:
		return ridr_alloc(&map, &dummy, min, max, id);
	case S_IDR:
	case S_XA:
	case S_MAPLE:
		return kb_alloc(kmap, &dummy, min, max, id);
	case S_SPIN:
		rk_spin_lock(&flat.spin);
		fid = __flatmap_alloc(&flat, &dummy);
		rk_spin_unlock(&flat.spin);
		if (fid < 0)
			return (int)fid;
		*id = flat_base + (unsigned long)fid;
		return 0;
	default:
		die("st_alloc");
		return -EINVAL;
	}
}

static inline int st_alloc_cyclic(enum st s, unsigned long min,
				  unsigned long max, unsigned long *id)
{
	unsigned long i, mask = flat.cap - 1;

	switch (s) {
	case S_RIDR:
		return ridr_alloc_cyclic(&map, &dummy, min, max, id);
	case S_IDR:
	case S_XA:
	case S_MAPLE:
		return kb_alloc_cyclic(kmap, &dummy, min, max, id);
	case S_SPIN:
		/* A cursor over the array (cap a power of two), one live id
		 * in the benchmark: the scan stops at once. */
		rk_spin_lock(&flat.spin);
		for (i = flat_cursor; flat.slot[i]; i = (i + 1) & mask)
			if (((i + 1) & mask) == flat_cursor)
				die("spin_stack: full");
		flat.slot[i] = &dummy;
		flat_cursor = (i + 1) & mask;
		rk_spin_unlock(&flat.spin);
		*id = flat_base + i;
		return 0;
	default:
		die("st_alloc_cyclic");
		return -EINVAL;
	}
}

static inline void st_remove(enum st s, unsigned long id)
{
	switch (s) {
	case S_RIDR:
		if (ridr_remove(&map, id, NULL))
			die("ridr_remove");
		break;
	case S_IDR:
	case S_XA:
	case S_MAPLE:
		if (kb_remove(kmap, id) != &dummy)
			die("kernel remove: id not found");
		break;
	case S_SPIN:
		rk_spin_lock(&flat.spin);
		if (flat_cyclic)
			flat.slot[id - flat_base] = NULL;
		else
			__flatmap_remove(&flat, id - flat_base);
		rk_spin_unlock(&flat.spin);
		break;
	case S_LFHT:
		lfht_remove(id);
		break;
	default:
		die("st_remove");
	}
}

/* Stores at @id; -EBUSY if it is taken. */
static int st_insert(enum st s, unsigned long id)
{
	unsigned long got;
	int ret;

	switch (s) {
	case S_RIDR:
		ret = ridr_alloc(&map, &dummy, id, id, &got);
		return ret == -ENOSPC ? -EBUSY : ret;
	case S_IDR:
	case S_XA:
	case S_MAPLE:
		return kb_insert(kmap, id, &dummy);
	case S_LFHT:
		return lfht_insert(id);
	case S_FLAT:	/* lookups only: no free-id stack bookkeeping */
		flat.slot[id] = &dummy;
		return 0;
	default:
		die("st_insert");
		return -EINVAL;
	}
}

/* Structure bytes it can tell (SIZE_MAX: it cannot); for the kernel
 * kinds, the live objects of its node cache (of every map: measure one
 * map at a time). */
static size_t st_object_bytes(enum st s)
{
	switch (s) {
	case S_RIDR:
		return ridr_memory(&map);
	case S_IDR:
	case S_XA:
	case S_MAPLE:
		return kb_slab_bytes(kb_kind_of(s));
	default:
		return SIZE_MAX;
	}
}

/* ---- memory ---- */

struct mem_cell {
	double heap, obj;	/* bytes; obj < 0: not known */
};

enum mem_wl { MEM_A, MEM_B, MEM_C, MEM_D, MEM_N };
static const char *const mem_key[MEM_N] = { "a_random2048", "b_random",
	"c_cyclic", "d_dense" };

/* @n distinct random ids in [0, 2^31), in generation order. */
static unsigned long *random_ids(unsigned long n, uint64_t seed)
{
	unsigned long *ids = malloc(n * sizeof(*ids)), hsize = 1;
	unsigned long *set;
	uint64_t s = seed;

	while (hsize < 4 * n)
		hsize <<= 1;
	set = calloc(hsize, sizeof(*set));	/* id + 1; 0 = empty */
	if (!ids || !set)
		die("out of memory");
	for (unsigned long i = 0; i < n;) {
		unsigned long id = xorshift(&s) & 0x7fffffffUL;
		unsigned long h = hash_id(id) >> 20 & (hsize - 1);

		while (set[h] && set[h] != id + 1)
			h = (h + 1) & (hsize - 1);
		if (set[h])
			continue;
		set[h] = id + 1;
		ids[i++] = id;
	}
	free(set);
	return ids;
}

/* Builds workload @w in structure @s and measures it; *@live and
 * *@maxid receive the live count and the largest live id. */
static struct mem_cell mem_build(enum st s, enum mem_wl w, unsigned long n,
				 const unsigned long *ids, unsigned long *live,
				 unsigned long *maxid)
{
	const unsigned long window = 1000, every = 1000;
	struct mem_cell c;
	size_t heap0, obj, obj0;
	unsigned long id, *fifo = NULL, head = 0, count = 0, nlong = 0;

	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	if (w == MEM_C) {
		fifo = malloc(window * sizeof(*fifo));
		if (!fifo)
			die("out of memory");
	}
	kb_settle();	/* for every structure: same harness state */
	heap0 = heap_used();
	obj0 = is_kernel(s) ? kb_slab_bytes(kb_kind_of(s)) : 0;
	st_new(s, w == MEM_C ? 2 * window : n, 0, 0);
	*maxid = 0;
	for (unsigned long k = 0; k < n; k++) {
		switch (w) {
		case MEM_A:
		case MEM_B:
			if (st_insert(s, ids[k]))
				die("memory: insert");
			id = ids[k];
			break;
		case MEM_C:
			/* No wrap below INT_MAX: the k-th allocation is k. */
			if (s == S_LFHT) {
				if (lfht_insert(k))
					die("memory: lfht insert");
				id = k;
			} else if (st_alloc_cyclic(s, 0, INT_MAX, &id) ||
				   id != k) {
				die("memory: cyclic allocation");
			}
			if ((k + 1) % every == 0) {
				nlong++;	/* long-lived: kept */
				break;
			}
			if (count == window) {	/* evict the oldest */
				st_remove(s, fifo[head]);
				fifo[head] = id;
				head = (head + 1) % window;
			} else {
				fifo[count++] = id;
			}
			break;
		case MEM_D:
			if (s == S_LFHT) {
				if (lfht_insert(k))
					die("memory: lfht insert");
				id = k;
			} else if (st_alloc(s, 0, INT_MAX, &id) || id != k) {
				die("memory: dense allocation");
			}
			break;
		default:
			die("memory workload");
		}
		if (id > *maxid)
			*maxid = id;
	}
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	kb_settle();
	c.heap = (double)(heap_used() - heap0);	/* @fifo is older */
	obj = st_object_bytes(s);
	c.obj = obj == SIZE_MAX ? -1 : (double)(obj - obj0);
	*live = w == MEM_C ? count + nlong : n;
	st_destroy(s);
	free(fifo);
	return c;
}

static const enum st mem_st[] = { S_RIDR, S_IDR, S_XA, S_MAPLE, S_LFHT };
#define MEM_NST (sizeof(mem_st) / sizeof(mem_st[0]))

static void fmt_bytes(char *buf, size_t len, double b)
{
	if (b < 0)
		snprintf(buf, len, "-");
	else if (b >= 10 * 1048576.0)
		snprintf(buf, len, "%.1f MiB", b / 1048576.0);
	else if (b >= 10 * 1024.0)
		snprintf(buf, len, "%.1f KiB", b / 1024.0);
	else
		snprintf(buf, len, "%.0f B", b);
}

/*
 * Heap bytes are measured with glibc's per-thread cache off: it keeps up
 * to 7 freed chunks of each size class for the thread that freed them,
 * which mallinfo2() counts as in use, so a structure that frees chunks
 * of more size classes while it is built (copies, retired nodes: freed
 * by the measuring thread since compat's deferred frees, or by liburcu's
 * worker) would be charged for memory it no longer holds, up to some
 * kilobytes, whatever it keeps.  The tunable is read at startup only:
 * the memory command runs itself again with it, for every structure
 * alike.  RK_MEMORY_TCACHE=1 measures with the cache on instead.
 * Whether the cache is off is read from GLIBC_TUNABLES itself, not from
 * a marker, so the tables never claim a setting the process lacks.
 */
#define MEMORY_NO_TCACHE "glibc.malloc.tcache_count=0"
static bool memory_tcache_on;

static void memory_without_tcache(char **argv)
{
	const char *mode = getenv("RK_MEMORY_TCACHE");
	const char *old = getenv("GLIBC_TUNABLES");
	char *tun;

	memory_tcache_on = !old || !strstr(old, MEMORY_NO_TCACHE);
	if (!memory_tcache_on || (mode && strcmp(mode, "0")))
		return;
	if (asprintf(&tun, "%s%s" MEMORY_NO_TCACHE, old ? old : "",
		     old && *old ? ":" : "") < 0)
		die("out of memory");
	if (setenv("GLIBC_TUNABLES", tun, 1))
		die("setenv");
	execv("/proc/self/exe", argv);
	fprintf(stderr, "[kbase_memory] cannot run again without glibc's "
		"thread cache (%s): measuring with it\n", strerror(errno));
	free(tun);
}

static int cmd_memory(bool quick, const char *json)
{
	unsigned long n[MEM_N] = { 2048, 100000, 1000000, 1000000 };
	static const char *const desc[MEM_N] = {
		"(a) 2048 random ids in [0, 2^31)",
		"(b) %lu random 31-bit ids",
		"(c) cyclic, 0.1%% long-lived: %lu allocations, window 1000",
		"(d) dense, ids 0..%lu-1",
	};
	struct mem_cell cell[MEM_N][MEM_NST];
	unsigned long live[MEM_N], maxid[MEM_N];
	char label[MEM_N][96];
	FILE *j;

	if (quick) {
		n[MEM_B] = 10000;
		n[MEM_C] = 100000;
		n[MEM_D] = 100000;
	}
	for (int w = 0; w < MEM_N; w++) {
		unsigned long *ids = NULL;

		snprintf(label[w], sizeof(label[w]), desc[w], n[w]);
		if (w == MEM_A || w == MEM_B)
			ids = random_ids(n[w], 99 + (uint64_t)w);
		for (size_t i = 0; i < MEM_NST; i++) {
			fprintf(stderr, "[kbase_memory] %s: %s ...\n", label[w],
				st_name[mem_st[i]]);
			cell[w][i] = mem_build(mem_st[i], (enum mem_wl)w, n[w],
					       ids, &live[w], &maxid[w]);
		}
		free(ids);
	}

	printf("\n### kbase_memory\n\nheap bytes (mallinfo2, incl. malloc's "
	       "overhead; %s) for the whole map, and in parentheses the "
	       "structure's own object bytes (ridr_memory(); kernel: the "
	       "harness's slab objects).  flat array: 8 B x (largest id + 1), "
	       "computed.\n\n| workload | live ids |",
	       memory_tcache_on ?
		       "glibc's per-thread cache on: the freed chunks it keeps "
		       "are counted" :
		       "glibc's per-thread cache off, "
		       "GLIBC_TUNABLES=glibc.malloc.tcache_count=0, so freed "
		       "chunks it would keep are not counted");
	for (size_t i = 0; i < MEM_NST; i++)
		printf(" %s |", st_name[mem_st[i]]);
	printf(" flat array |\n|---|---|");
	for (size_t i = 0; i <= MEM_NST; i++)
		printf("---|");
	printf("\n");
	for (int w = 0; w < MEM_N; w++) {
		char b1[32], b2[32];

		printf("| %s | %lu |", label[w], live[w]);
		for (size_t i = 0; i < MEM_NST; i++) {
			fmt_bytes(b1, sizeof(b1), cell[w][i].heap);
			fmt_bytes(b2, sizeof(b2), cell[w][i].obj);
			if (cell[w][i].obj >= 0)
				printf(" %s (%s) |", b1, b2);
			else
				printf(" %s |", b1);
		}
		fmt_bytes(b1, sizeof(b1), 8.0 * (double)(maxid[w] + 1));
		printf(" %s |\n", b1);
	}
	printf("\nbytes per live id, heap (objects), and ridr / the best of "
	       "IDR, XArray and maple tree (heap)\n\n| workload |");
	for (size_t i = 0; i < MEM_NST; i++)
		printf(" %s |", st_name[mem_st[i]]);
	printf(" flat array | ridr / best kernel |\n|---|");
	for (size_t i = 0; i <= MEM_NST + 1; i++)
		printf("---|");
	printf("\n");
	for (int w = 0; w < MEM_N; w++) {
		double best = -1;

		printf("| %s |", label[w]);
		for (size_t i = 0; i < MEM_NST; i++) {
			double h = cell[w][i].heap / (double)live[w];
			double o = cell[w][i].obj / (double)live[w];

			if (is_kernel(mem_st[i]) && (best < 0 || h < best))
				best = h;
			if (cell[w][i].obj >= 0)
				printf(" %.1f (%.1f) |", h, o);
			else
				printf(" %.1f |", h);
		}
		printf(" %.1f | %.2fx |\n",
		       8.0 * (double)(maxid[w] + 1) / (double)live[w],
		       cell[w][0].heap / (double)live[w] / best);
	}
	if (!json)
		return 0;
	j = fopen(json, "w");
	if (!j)
		die("cannot write json");
	fprintf(j, "{\n  \"benchmark\": \"kbase_memory\",\n  \"title\": "
		   "\"bytes per live id (heap, mallinfo2)\",\n  \"unit\": "
		   "\"bytes per live id\",\n  \"log\": true,\n  \"quick\": %s,\n"
		   "  \"tcache\": %s,\n  \"groups\": [", quick ? "true" : "false",
		memory_tcache_on ? "true" : "false");
	for (int w = 0; w < MEM_N; w++)
		fprintf(j, "%s\"%s\"", w ? ", " : "", mem_key[w]);
	fprintf(j, "],\n  \"series\": [\n");
	for (size_t i = 0; i <= MEM_NST; i++) {
		fprintf(j, "    {\"name\": \"%s\", \"values\": [",
			i < MEM_NST ? st_name[mem_st[i]] : "flat_array");
		for (int w = 0; w < MEM_N; w++)
			fprintf(j, "%s%.3f", w ? ", " : "",
				(i < MEM_NST ? cell[w][i].heap
					     : 8.0 * (double)(maxid[w] + 1)) /
					(double)live[w]);
		fprintf(j, "]}%s\n", i < MEM_NST ? "," : "");
	}
	fprintf(j, "  ],\n  \"rows\": [\n");
	for (int w = 0; w < MEM_N; w++) {
		fprintf(j, "    {\"workload\": \"%s\", \"desc\": \"%s\", "
			   "\"n\": %lu, \"live\": %lu, \"max_id\": %lu, "
			   "\"heap_bytes\": {", mem_key[w], label[w], n[w],
			live[w], maxid[w]);
		for (size_t i = 0; i < MEM_NST; i++)
			fprintf(j, "%s\"%s\": %.0f", i ? ", " : "",
				st_name[mem_st[i]], cell[w][i].heap);
		fprintf(j, "}, \"object_bytes\": {");
		for (size_t i = 0, k = 0; i < MEM_NST; i++)
			if (cell[w][i].obj >= 0)
				fprintf(j, "%s\"%s\": %.0f", k++ ? ", " : "",
					st_name[mem_st[i]], cell[w][i].obj);
		fprintf(j, ", \"flat_array\": %.0f}}%s\n",
			8.0 * (double)(maxid[w] + 1), w + 1 < MEM_N ? "," : "");
	}
	fprintf(j, "  ]\n}\n");
	fclose(j);
	fprintf(stderr, "[kbase_memory] wrote %s\n", json);
	return 0;
}

/* ---- lookups ---- */

/* @n lookups of @seq[i] in @s; returns the misses. */
static size_t lookup_loop(enum st s, const unsigned long *seq, size_t n)
{
	size_t miss = 0;

	switch (s) {
	case S_RIDR:
		for (size_t i = 0; i < n; i++) {
			void *p;

			rk_rcu_read_lock();
			p = ridr_find(&map, seq[i]);
			rk_rcu_read_unlock();
			miss += p != &dummy;
		}
		return miss;
	case S_IDR:
	case S_XA:
	case S_MAPLE:
		return kb_find_loop(kmap, seq, n, &dummy);
	case S_LFHT:
		for (size_t i = 0; i < n; i++) {
			struct lfht_obj *o;

			rk_rcu_read_lock();
			o = lfht_find(seq[i]);
			miss += !o || o->id != seq[i];
			rk_rcu_read_unlock();
		}
		return miss;
	case S_FLAT:
		for (size_t i = 0; i < n; i++)
			miss += rk_read_once(flat.slot[seq[i]]) != &dummy;
		return miss;
	default:
		die("lookup_loop");
		return n;
	}
}

/* ns per lookup: whole passes over @seq for at least @seconds. */
static double lookup_ns(enum st s, const unsigned long *seq, double seconds)
{
	double t0 = now(), t;
	size_t done = 0;

	do {
		if (lookup_loop(s, seq, SEQ_LEN))
			die("lookup: a live id was not found");
		done += SEQ_LEN;
		t = now();
	} while (t - t0 < seconds);
	return (t - t0) * 1e9 / (double)done;
}

static const enum st lk_st[] = { S_FLAT, S_RIDR, S_IDR, S_XA, S_MAPLE,
				 S_LFHT };
#define LK_NST (sizeof(lk_st) / sizeof(lk_st[0]))

static int cmd_lookup(bool quick, int rounds, double seconds,
		      const char *json)
{
	const unsigned long dense_n = 4096;
	unsigned long sparse_n = quick ? 10000 : 100000;
	double ns[2][LK_NST], r[2][LK_NST][16];
	unsigned long *seq = malloc(SEQ_LEN * sizeof(*seq));
	FILE *j;

	if (!seq)
		die("out of memory");
	if (rounds > 16)
		rounds = 16;
	for (int w = 0; w < 2; w++) {
		unsigned long n = w ? sparse_n : dense_n;
		unsigned long *ids = w ? random_ids(n, 4242) : NULL;
		uint64_t s = 77;

		for (unsigned long i = 0; i < SEQ_LEN; i++) {
			unsigned long k = xorshift(&s) % n;

			seq[i] = ids ? ids[k] : k;
		}
		/* Each round builds every structure afresh, one at a time. */
		for (int round = 0; round < rounds; round++) {
			for (size_t i = 0; i < LK_NST; i++) {
				enum st st = lk_st[i];

				r[w][i][round] = -1;
				if (st == S_FLAT && w)
					continue;	/* 16 GiB */
				fprintf(stderr, "[kbase_lookup] %s, round %d/%d,"
					" %s ...", w ? "sparse" : "dense",
					round + 1, rounds, st_name[st]);
				st_new(st, n, n, 0);
				for (unsigned long k = 0; k < n; k++)
					if (st_insert(st, ids ? ids[k] : k))
						die("lookup: insert");
				r[w][i][round] = lookup_ns(st, seq, seconds);
				st_destroy(st);
				fprintf(stderr, " %.1f ns\n", r[w][i][round]);
			}
		}
		for (size_t i = 0; i < LK_NST; i++)
			ns[w][i] = r[w][i][0] < 0 ? -1
						  : median(r[w][i], rounds);
		free(ids);
	}
	free(seq);

	printf("\n### kbase_lookup\n\nns per lookup of a random live id, one "
	       "thread, each lookup in its own RCU read-side section (median "
	       "of %d rounds of %.2f s); speedup = the other's ns / ridr's\n\n"
	       "| ids |", rounds, seconds);
	for (size_t i = 0; i < LK_NST; i++)
		printf(" %s (ns) |", st_name[lk_st[i]]);
	printf(" ridr / flat (latency) | ridr vs idr | ridr vs xarray | "
	       "ridr vs maple | ridr vs rculfhash |\n|---|");
	for (size_t i = 0; i < LK_NST + 5; i++)
		printf("---|");
	printf("\n");
	for (int w = 0; w < 2; w++) {
		if (w)
			printf("| sparse: %lu random 31-bit ids |", sparse_n);
		else
			printf("| dense: ids 0..%lu |", dense_n - 1);
		for (size_t i = 0; i < LK_NST; i++)
			if (ns[w][i] < 0)
				printf(" - |");
			else
				printf(" %.1f |", ns[w][i]);
		if (ns[w][0] > 0)
			printf(" %.2fx |", ns[w][1] / ns[w][0]);
		else
			printf(" - |");
		for (size_t i = 2; i < LK_NST; i++)
			printf(" %.2fx faster |", ns[w][i] / ns[w][1]);
		printf("\n");
	}
	if (!json)
		return 0;
	j = fopen(json, "w");
	if (!j)
		die("cannot write json");
	fprintf(j, "{\n  \"benchmark\": \"kbase_lookup\",\n  \"title\": "
		   "\"ns per lookup of a random live id, 1 thread\",\n"
		   "  \"unit\": \"ns per lookup\",\n  \"log\": true,\n"
		   "  \"quick\": %s,\n  \"rounds\": %d,\n  \"seconds\": %g,\n"
		   "  \"groups\": [\"dense_4096\", \"sparse_%lu\"],\n"
		   "  \"series\": [\n", quick ? "true" : "false", rounds,
		seconds, sparse_n);
	for (size_t i = 0; i < LK_NST; i++) {
		fprintf(j, "    {\"name\": \"%s\", \"values\": [",
			st_name[lk_st[i]]);
		for (int w = 0; w < 2; w++) {
			if (ns[w][i] < 0)
				fprintf(j, "%snull", w ? ", " : "");
			else
				fprintf(j, "%s%.3f", w ? ", " : "", ns[w][i]);
		}
		fprintf(j, "]}%s\n", i + 1 < LK_NST ? "," : "");
	}
	fprintf(j, "  ]\n}\n");
	fclose(j);
	fprintf(stderr, "[kbase_lookup] wrote %s\n", json);
	return 0;
}

/* ---- churn ---- */

enum pattern { P_LEAF, P_EMPTY, P_BOUNDARY, P_FAR, P_CYCLIC, P_N };
static const char *const pat_name[P_N] = {
	"leaf", "empty", "boundary", "far", "cyclic"
};
static const char *const pat_desc[P_N] = {
	"(1) within a leaf: ids 0..31, remove a random one, alloc lowest",
	"(2) map emptying: id 0 only, remove it, alloc lowest",
	"(3) leaf boundary: ids 0..64, remove 64, alloc lowest",
	"(4) lone far id: X = 2^30+12345 only, remove X, alloc lowest in "
	"[X, INT_MAX]",
	"(5) cyclic, one live id: alloc cyclic in [0, INT_MAX], remove the "
	"previous",
};

static const enum st ch_st[] = { S_SPIN, S_RIDR, S_IDR, S_XA, S_MAPLE };
#define CH_NST (sizeof(ch_st) / sizeof(ch_st[0]))

struct churn_state {
	uint64_t rng;
	unsigned long prev;	/* cyclic: the live id */
};

static void churn_setup(enum st s, enum pattern p, struct churn_state *cs)
{
	unsigned long id, live = p == P_LEAF ? 32 : p == P_BOUNDARY ? 65 : 1;

	st_new(s, 0, FLAT_CHURN_CAP, p == P_FAR ? FAR_ID : 0);
	cs->rng = 0x1234567;
	if (p == P_CYCLIC) {
		flat_cyclic = true;
		if (st_alloc_cyclic(s, 0, INT_MAX, &cs->prev))
			die("churn: first cyclic id");
		return;
	}
	for (unsigned long i = 0; i < live; i++) {
		unsigned long want = p == P_FAR ? FAR_ID : i;

		if (st_alloc(s, p == P_FAR ? FAR_ID : 0, INT_MAX, &id) ||
		    id != want)
			die("churn: setup");
	}
}

/* @pairs remove+alloc pairs of pattern @p. */
static void churn_run(enum st s, enum pattern p, struct churn_state *cs,
		      long pairs)
{
	unsigned long id, want;

	for (long i = 0; i < pairs; i++) {
		switch (p) {
		case P_LEAF:
			want = xorshift(&cs->rng) & 31;
			st_remove(s, want);
			if (st_alloc(s, 0, INT_MAX, &id) || id != want)
				die("churn leaf: not the id just freed");
			break;
		case P_EMPTY:
			st_remove(s, 0);
			if (st_alloc(s, 0, INT_MAX, &id) || id != 0)
				die("churn empty: not id 0");
			break;
		case P_BOUNDARY:
			st_remove(s, 64);
			if (st_alloc(s, 0, INT_MAX, &id) || id != 64)
				die("churn boundary: not id 64");
			break;
		case P_FAR:
			st_remove(s, FAR_ID);
			if (st_alloc(s, FAR_ID, INT_MAX, &id) || id != FAR_ID)
				die("churn far: not X");
			break;
		case P_CYCLIC:
			if (st_alloc_cyclic(s, 0, INT_MAX, &id) ||
			    id == cs->prev)
				die("churn cyclic");
			st_remove(s, cs->prev);
			cs->prev = id;
			break;
		default:
			die("churn pattern");
		}
	}
}

/* Pairs per second: batches of 1024 for at least @seconds. */
static double churn_rate(enum st s, enum pattern p, double seconds,
			 double *allocs_per_pair)
{
	struct churn_state cs;
	unsigned long a0;
	double t0, t;
	long done = 0;

	churn_setup(s, p, &cs);
	churn_run(s, p, &cs, 4096);	/* warm-up: steady state */
	if (is_kernel(s))
		kb_allow_nowait();
	a0 = kb_node_allocs();
	t0 = now();
	do {
		churn_run(s, p, &cs, 1024);
		done += 1024;
		t = now();
	} while (t - t0 < seconds);
	*allocs_per_pair = is_kernel(s) ? (double)(kb_node_allocs() - a0) /
						  (double)done
					: 0;
	st_destroy(s);
	return (double)done / (t - t0);
}

/*
 * icount-churn S P K: K pairs of pattern @p on structure @s after the same
 * setup and warm-up as churn_rate(), the K pairs inside churn_counted(),
 * for callgrind (scripts/churn_icount.sh counts the instructions inside
 * it: the structure's calls and the driver loop, the same loop for every
 * structure).  Instruction counts do not move with the host's load.
 */
__attribute__((noinline)) void churn_counted(enum st s, enum pattern p,
					     struct churn_state *cs,
					     long pairs);
__attribute__((noinline)) void churn_counted(enum st s, enum pattern p,
					     struct churn_state *cs,
					     long pairs)
{
	churn_run(s, p, cs, pairs);
}

static int cmd_icount_churn(const char *sname, const char *pname, long k)
{
	struct churn_state cs;
	int si = -1, pi = -1;

	for (unsigned int i = 0; i < CH_NST; i++)
		if (!strcmp(sname, st_name[ch_st[i]]))
			si = (int)ch_st[i];
	for (int i = 0; i < P_N; i++)
		if (!strcmp(pname, pat_name[i]))
			pi = i;
	if (si < 0 || pi < 0 || k < 1) {
		fprintf(stderr, "icount-churn: unknown structure or pattern\n");
		return 2;
	}
	churn_setup((enum st)si, (enum pattern)pi, &cs);
	churn_run((enum st)si, (enum pattern)pi, &cs, 4096);
	if (is_kernel((enum st)si))
		kb_allow_nowait();
	churn_counted((enum st)si, (enum pattern)pi, &cs, k);
	st_destroy((enum st)si);
	printf("icount-churn: %ld %s pairs on %s done\n", k, pname, sname);
	return 0;
}

/* ridr node allocations per pair, through compat's allocator hook. */
static unsigned long hook_allocs;

static void *count_alloc(size_t size, size_t align, void *ctx)
{
	(void)ctx;
	__atomic_add_fetch(&hook_allocs, 1, __ATOMIC_RELAXED);
	void *p;

	if (posix_memalign(&p, align, size))
		return NULL;
	return p;
}

static void count_free(void *p, size_t size, void *ctx)
{
	(void)size;
	(void)ctx;
	free(p);
}

static double ridr_allocs_per_pair(enum pattern p, long pairs)
{
	static const struct rk_allocator counting = { count_alloc, count_free,
						      NULL };
	struct churn_state cs;
	unsigned long a0;

	rk_set_allocator(&counting);
	churn_setup(S_RIDR, p, &cs);
	churn_run(S_RIDR, p, &cs, 4096);
	a0 = __atomic_load_n(&hook_allocs, __ATOMIC_RELAXED);
	churn_run(S_RIDR, p, &cs, pairs);
	a0 = __atomic_load_n(&hook_allocs, __ATOMIC_RELAXED) - a0;
	st_destroy(S_RIDR);	/* with its grace period: all freed */
	rk_set_allocator(NULL);
	return (double)a0 / (double)pairs;
}

static double malloc_pair_ns(long pairs)
{
	double t0 = now();

	for (long i = 0; i < pairs; i++) {
		void *p = malloc(576);

		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
	return (now() - t0) * 1e9 / (double)pairs;
}

static int cmd_churn(bool quick, int rounds, double seconds, const char *json)
{
	double rate[P_N][CH_NST], apr[P_N][CH_NST], r[16], a[16];
	double slab_ns, malloc_ns;
	FILE *j;

	if (rounds > 16)
		rounds = 16;
	for (int p = 0; p < P_N; p++) {
		double rr[CH_NST][16], aa[CH_NST][16];

		for (int round = 0; round < rounds; round++) {
			for (size_t i = 0; i < CH_NST; i++) {
				fprintf(stderr, "[kbase_churn] %s, round %d/%d,"
					" %s ...", pat_name[p], round + 1,
					rounds, st_name[ch_st[i]]);
				rr[i][round] = churn_rate(ch_st[i],
							  (enum pattern)p,
							  seconds,
							  &aa[i][round]);
				fprintf(stderr, " %.3g pairs/s\n",
					rr[i][round]);
			}
		}
		for (size_t i = 0; i < CH_NST; i++) {
			memcpy(r, rr[i], sizeof(r));
			memcpy(a, aa[i], sizeof(a));
			rate[p][i] = median(r, rounds);
			apr[p][i] = median(a, rounds);
		}
		apr[p][1] = ridr_allocs_per_pair((enum pattern)p,
						 quick ? 10000 : 200000);
	}
	slab_ns = kb_slab_pair_ns(quick ? 100000 : 2000000);
	malloc_ns = malloc_pair_ns(quick ? 100000 : 2000000);

	printf("\n### kbase_churn\n\nremove + alloc pairs, one thread "
	       "(Mpairs/s, median of %d rounds of %.2f s); in brackets node "
	       "allocations per pair\n\n| pattern |", rounds, seconds);
	for (size_t i = 0; i < CH_NST; i++)
		printf(" %s |", st_name[ch_st[i]]);
	printf(" ridr / spin_stack | ridr / idr | ridr / xarray | "
	       "ridr / maple |\n|---|");
	for (size_t i = 0; i < CH_NST + 4; i++)
		printf("---|");
	printf("\n");
	for (int p = 0; p < P_N; p++) {
		printf("| %s |", pat_desc[p]);
		for (size_t i = 0; i < CH_NST; i++)
			printf(" %.2f [%.2f] |", rate[p][i] / 1e6, apr[p][i]);
		printf(" %.2fx | %.2fx | %.2fx | %.2fx |\n",
		       rate[p][1] / rate[p][0], rate[p][1] / rate[p][2],
		       rate[p][1] / rate[p][3], rate[p][1] / rate[p][4]);
	}
	printf("\nKernel structures allocate nodes from the harness's "
	       "kmem_cache (a mutex and three atomic counters per "
	       "allocation): %.1f ns per alloc+free of a node, against %.1f "
	       "ns for malloc+free of the same size; ridr and spin_stack use "
	       "malloc.\n", slab_ns, malloc_ns);
	if (!json)
		return 0;
	j = fopen(json, "w");
	if (!j)
		die("cannot write json");
	fprintf(j, "{\n  \"benchmark\": \"kbase_churn\",\n  \"title\": "
		   "\"remove+alloc pairs, 1 thread\",\n  \"unit\": \"million "
		   "pairs per second\",\n  \"log\": true,\n  \"quick\": %s,\n"
		   "  \"rounds\": %d,\n  \"seconds\": %g,\n"
		   "  \"slab_pair_ns\": %.2f,\n  \"malloc_pair_ns\": %.2f,\n"
		   "  \"groups\": [", quick ? "true" : "false", rounds, seconds,
		slab_ns, malloc_ns);
	for (int p = 0; p < P_N; p++)
		fprintf(j, "%s\"%s\"", p ? ", " : "", pat_name[p]);
	fprintf(j, "],\n  \"series\": [\n");
	for (size_t i = 0; i < CH_NST; i++) {
		fprintf(j, "    {\"name\": \"%s\", \"values\": [",
			st_name[ch_st[i]]);
		for (int p = 0; p < P_N; p++)
			fprintf(j, "%s%.4f", p ? ", " : "", rate[p][i] / 1e6);
		fprintf(j, "], \"node_allocs_per_pair\": [");
		for (int p = 0; p < P_N; p++)
			fprintf(j, "%s%.4f", p ? ", " : "", apr[p][i]);
		fprintf(j, "]}%s\n", i + 1 < CH_NST ? "," : "");
	}
	fprintf(j, "  ]\n}\n");
	fclose(j);
	fprintf(stderr, "[kbase_churn] wrote %s\n", json);
	return 0;
}

/* ---- instruction counts (run under callgrind) ---- */

__attribute__((noinline)) void *flat_find(unsigned long id);
__attribute__((noinline)) void *flat_find(unsigned long id)
{
	return id < flat.cap ? rk_read_once(flat.slot[id]) : NULL;
}

/* An empty read-side section: what each lookup above pays around it. */
__attribute__((noinline)) void rcu_pair(void);
__attribute__((noinline)) void rcu_pair(void)
{
	rk_rcu_read_lock();
	rk_rcu_read_unlock();
}

static int cmd_icount(unsigned long n, long k)
{
	static const enum st ks[] = { S_IDR, S_XA, S_MAPLE };
	struct kb_map *km[3];
	uint64_t s = 7;
	long hits = 0;

	ridr_init(&map);
	if (flatmap_init(&flat, n))
		die("out of memory");
	for (int i = 0; i < 3; i++)
		km[i] = kb_new(kb_kind_of(ks[i]));
	for (unsigned long id = 0; id < n; id++) {
		unsigned long got;

		if (ridr_alloc(&map, &dummy, 0, INT_MAX, &got) || got != id)
			die("icount: ridr");
		flat.slot[id] = &dummy;
		for (int i = 0; i < 3; i++)
			if (kb_alloc(km[i], &dummy, 0, INT_MAX, &got) ||
			    got != id)
				die("icount: kernel alloc");
	}
	for (long i = 0; i < k; i++) {
		unsigned long id = xorshift(&s) % n;

		rk_rcu_read_lock();
		hits += ridr_find_noinline(&map, id) == &dummy;
		hits += flat_find(id) == &dummy;
		rk_rcu_read_unlock();
		rcu_pair();
		for (int m = 0; m < 3; m++)
			hits += kb_find(km[m], id) == &dummy;
	}
	if (hits != 5 * k)
		die("icount: lookups failed");
	for (int i = 0; i < 3; i++)
		kb_destroy(km[i]);
	ridr_destroy(&map);
	flatmap_destroy(&flat);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	printf("icount: %ld finds of %lu ids in 5 structures done\n", k, n);
	return 0;
}

/* ---- self-check: the kernel allocators against a reference ---- */

/* Random allocs (lowest free, in random ranges), cyclic allocs and
 * removes on each kernel structure and ridr, compared with a bitmap;
 * exits non-zero on the first difference.  For the smoke test. */
static int cmd_verify(long ops)
{
	static const enum st vs[] = { S_RIDR, S_IDR, S_XA, S_MAPLE };
	const unsigned long span = 4096;

	for (size_t v = 0; v < 4; v++) {
		enum st s = vs[v];
		unsigned char *used = calloc(span, 1);
		unsigned long next = 0;
		uint64_t rng = 5;

		if (!used)
			die("out of memory");
		st_new(s, 0, 0, 0);
		for (long i = 0; i < ops; i++) {
			unsigned long r = xorshift(&rng), id, want;
			unsigned long min = r % span, max = span - 1;
			int ret, op = (int)(r >> 60) % 4;

			if (op == 0 || op == 1) {	/* lowest free */
				for (want = min; want <= max && used[want];)
					want++;
				ret = st_alloc(s, min, max, &id);
				if (want > max ? ret != -ENOSPC
					       : ret || id != want) {
					fprintf(stderr, "verify %s: alloc [%lu, "
						"%lu] gave %d/%lu, want %lu\n",
						st_name[s], min, max, ret, id,
						want);
					return 1;
				}
				if (!ret)
					used[id] = 1;
			} else if (op == 2) {	/* cyclic from the cursor */
				unsigned long c = next;

				for (want = span; c < span; c++)
					if (!used[c]) {
						want = c;
						break;
					}
				for (c = 0; want == span && c < next; c++)
					if (!used[c])
						want = c;
				ret = st_alloc_cyclic(s, 0, span - 1, &id);
				if (want == span ? ret != -ENOSPC
						 : ret || id != want) {
					fprintf(stderr, "verify %s: cyclic from "
						"%lu gave %d/%lu, want %lu\n",
						st_name[s], next, ret, id, want);
					return 1;
				}
				if (!ret) {
					used[id] = 1;
					next = id + 1 == span ? 0 : id + 1;
				}
			} else {	/* remove a random used id */
				id = (r >> 20) % span;
				if (used[id]) {
					st_remove(s, id);
					used[id] = 0;
				}
			}
		}
		for (unsigned long id = 0; id < span; id++) {
			void *p;

			if (s == S_RIDR) {
				rk_rcu_read_lock();
				p = ridr_find(&map, id);
				rk_rcu_read_unlock();
			} else {
				p = kb_find(kmap, id);
			}
			if ((p == &dummy) != used[id]) {
				fprintf(stderr, "verify %s: id %lu %s\n",
					st_name[s], id,
					used[id] ? "lost" : "appeared");
				return 1;
			}
		}
		st_destroy(s);
		free(used);
		fprintf(stderr, "verify %s: %ld operations ok\n", st_name[s],
			ops);
	}
	printf("verify: ok\n");
	return 0;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s memory|lookup|churn [--quick] [--rounds N] "
		"[--seconds S] [--json F]\n"
		"       %s icount N K | icount-churn STRUCT PATTERN K | "
		"verify OPS\n", prog, prog);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *json = NULL;
	bool quick = false;
	int rounds = 5, ret = 2;
	double seconds = 0.2;

	if (argc < 2)
		usage(argv[0]);
	if (!strcmp(argv[1], "memory"))
		memory_without_tcache(argv);
	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	kb_init();
	if (!strcmp(argv[1], "icount")) {
		if (argc != 4 || strtoul(argv[2], NULL, 0) < 1)
			usage(argv[0]);
		ret = cmd_icount(strtoul(argv[2], NULL, 0),
				 strtol(argv[3], NULL, 0));
		goto out;
	}
	if (!strcmp(argv[1], "icount-churn")) {
		if (argc != 5)
			usage(argv[0]);
		ret = cmd_icount_churn(argv[2], argv[3],
				       strtol(argv[4], NULL, 0));
		goto out;
	}
	if (!strcmp(argv[1], "verify")) {
		if (argc != 3)
			usage(argv[0]);
		ret = cmd_verify(strtol(argv[2], NULL, 0));
		goto out;
	}
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			quick = true;
			rounds = 1;
			seconds = 0.02;
		} else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
			rounds = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			seconds = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--json") && i + 1 < argc) {
			json = argv[++i];
		} else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
			i++;	/* bench.sh passes it to all: one thread here */
		} else {
			usage(argv[0]);
		}
	}
	if (rounds < 1 || rounds > 16 || seconds <= 0)
		usage(argv[0]);
	if (!strcmp(argv[1], "memory"))
		ret = cmd_memory(quick, json);
	else if (!strcmp(argv[1], "lookup"))
		ret = cmd_lookup(quick, rounds, seconds, json);
	else if (!strcmp(argv[1], "churn"))
		ret = cmd_churn(quick, rounds, seconds, json);
	else
		usage(argv[0]);
out:
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	return ret;
}
