// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ridr benchmarks, side by side with the designs the kernel moved away
 * from and with liburcu's RCU hash table:
 *
 *   lookup N [--writer]  T reader threads look up random live ids in a
 *                        map of N ids, optionally while one writer thread
 *                        allocates and removes ids in a disjoint range.
 *                        Variants: ridr (RCU), spin_flat (global spinlock
 *                        + flat array), rw_flat (global rwlock + flat
 *                        array), lfht (rculfhash, RCU) and flat_nolock
 *                        (plain array, the latency floor, no writer).
 *   churn                T threads each own 64 ids and replace a
 *                        random one per operation (remove + alloc), on a
 *                        map holding 4096 other ids.
 *   scaling              one thread: remove a random live id and allocate
 *                        again, with 64, 4096 and 10^6 live ids.
 *   memory               bytes per live id: dense, cyclic-churned and
 *                        random-sparse sets of 10^3 and 10^6 ids.
 *   icount N K           K finds and K remove+alloc pairs on a map of N
 *                        ids, for callgrind (scripts/bench.sh divides the
 *                        instructions counted inside ridr_find, flat_find
 *                        and ridr_pair by K).
 *   icount-timer K       K POSIX-timer steps on a map of its own, as
 *                        patch 4 of the kernel series makes them: a
 *                        cyclic allocation in [0, INT_MAX] (timer_create),
 *                        a lookup (timer_delete's __lock_timer) and the
 *                        removal, with the cursor started past 2^16 (ids
 *                        of a process that has churned timers for a
 *                        while) and one long-lived id below it; for
 *                        callgrind (scripts/icount.sh counts inside
 *                        timer_create_op, timer_find_op, timer_delete_op).
 *
 * Timing is measured here, never asserted by a test.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <urcu/rculfhash.h>

#include "benchmarks/lib/bench.h"
#include "benchmarks/lib/flatmap.h"
#include "compat/compat.h"
#include "ridr/ridr.h"

#define WRITER_BASE (1UL << 32)	/* hash-table ids of writers */
#define FLAT_CAP (1UL << 21)

/* Read by every reader on every lookup: alone on its cache line, so no
 * benchmark bookkeeping stored by the writer can share it. */
static unsigned long nids __attribute__((aligned(64))) = 4096;
static char nids_pad[56] __attribute__((unused));
static bool with_writer;
static struct ridr map;
static struct flatmap flat;
static struct cds_lfht *ht;
static unsigned long dummy;	/* every ridr/flat entry points here */

static void die(const char *what)
{
	fprintf(stderr, "ridr bench: %s\n", what);
	abort();
}

static inline uint64_t xorshift(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

/* ---- rculfhash ---- */

struct lfht_obj {
	unsigned long id;
	struct cds_lfht_node node;
	struct rk_rcu_head rcu;
};

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

static void lfht_add(unsigned long id)
{
	struct lfht_obj *o = malloc(sizeof(*o));

	if (!o)
		die("out of memory");
	o->id = id;
	cds_lfht_node_init(&o->node);
	rk_rcu_read_lock();
	if (cds_lfht_add_unique(ht, hash_id(id), lfht_match, &id, &o->node) !=
	    &o->node)
		die("lfht: duplicate id");
	rk_rcu_read_unlock();
}

static void lfht_del(unsigned long id)
{
	struct lfht_obj *o;

	rk_rcu_read_lock();
	o = lfht_find(id);
	if (!o || cds_lfht_del(ht, &o->node))
		die("lfht: id not found");
	rk_rcu_read_unlock();
	rk_call_rcu(RK_RCU_DEFAULT_FLAVOR, &o->rcu, lfht_free_rcu);
}

/* A table sized for @n entries from the start (a power of two): growing
 * it later happens in the background and would be measured. */
static struct cds_lfht *lfht_new(unsigned long n)
{
	unsigned long size = 1024;
	struct cds_lfht *t;

	while (size < n)
		size <<= 1;
	t = cds_lfht_new_flavor(size, 1024, 0,
		CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
		RK_RCU_DEFAULT_FLAVOR, NULL);

	if (!t)
		die("cds_lfht_new failed");
	return t;
}

static void lfht_clear(void)
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

/* ---- all structures hold ids 0..n-1 ---- */

static void populate(unsigned long n)
{
	unsigned long id;

	ridr_init(&map);
	if (flatmap_init(&flat, FLAT_CAP))
		die("out of memory");
	ht = lfht_new(n);
	for (unsigned long i = 0; i < n; i++) {
		if (ridr_alloc(&map, &dummy, 0, ULONG_MAX, &id) || id != i)
			die("ridr populate");
		if (__flatmap_alloc(&flat, &dummy) != (long)i)
			die("flat populate");
		lfht_add(i);
	}
}

static void clear_all(void)
{
	ridr_destroy(&map);
	flatmap_destroy(&flat);
	lfht_clear();
}

/* ---- variants ---- */

/* K_HOG: a "writer" that only burns CPU, touching no shared data: the
 * control that separates CPU sharing from data-structure interference. */
enum kind { K_RIDR, K_SPIN, K_RW, K_LFHT, K_NOLOCK, K_HOG };

/* One alloc + one remove on structure @k, on the writer's own ids. */
static void churn_once(enum kind k, unsigned long *own, unsigned long *ctr)
{
	unsigned long id;
	long fid;

	switch (k) {
	case K_RIDR:
		if (ridr_remove(&map, *own, NULL) ||
		    ridr_alloc(&map, &dummy, 0, ULONG_MAX, own))
			die("ridr churn");
		break;
	case K_SPIN:
		rk_spin_lock(&flat.spin);
		__flatmap_remove(&flat, *own);
		fid = __flatmap_alloc(&flat, &dummy);
		rk_spin_unlock(&flat.spin);
		*own = (unsigned long)fid;
		break;
	case K_RW:
		pthread_rwlock_wrlock(&flat.rw);
		__flatmap_remove(&flat, *own);
		fid = __flatmap_alloc(&flat, &dummy);
		pthread_rwlock_unlock(&flat.rw);
		*own = (unsigned long)fid;
		break;
	case K_LFHT:
		lfht_del(*own);
		id = ++*ctr;
		lfht_add(id);
		*own = id;
		break;
	case K_NOLOCK:
		break;
	case K_HOG:	/* burns CPU on the writer's own stack counter */
		for (int i = 0; i < 64; i++)
			*ctr = (*ctr * 6364136223846793005UL) >> 1;
		break;
	}
}

/* First id a churning thread owns in structure @k. */
static unsigned long churn_first(enum kind k, unsigned long *ctr)
{
	unsigned long id = 0;
	long fid;

	switch (k) {
	case K_RIDR:
		if (ridr_alloc(&map, &dummy, 0, ULONG_MAX, &id))
			die("ridr alloc");
		return id;
	case K_SPIN:
		rk_spin_lock(&flat.spin);
		fid = __flatmap_alloc(&flat, &dummy);
		rk_spin_unlock(&flat.spin);
		return (unsigned long)fid;
	case K_RW:
		pthread_rwlock_wrlock(&flat.rw);
		fid = __flatmap_alloc(&flat, &dummy);
		pthread_rwlock_unlock(&flat.rw);
		return (unsigned long)fid;
	case K_LFHT:
		id = ++*ctr;
		lfht_add(id);
		return id;
	default:
		return 0;
	}
}

static void churn_last(enum kind k, unsigned long own)
{
	switch (k) {
	case K_RIDR:
		ridr_remove(&map, own, NULL);
		break;
	case K_SPIN:
		rk_spin_lock(&flat.spin);
		__flatmap_remove(&flat, own);
		rk_spin_unlock(&flat.spin);
		break;
	case K_RW:
		pthread_rwlock_wrlock(&flat.rw);
		__flatmap_remove(&flat, own);
		pthread_rwlock_unlock(&flat.rw);
		break;
	case K_LFHT:
		lfht_del(own);
		break;
	default:
		break;
	}
}

/* The optional writer of the lookup benchmark. */
static pthread_t writer_thread;
static int writer_stop;
static enum kind writer_kind;
static uint64_t writer_ops;	/* written by the writer, read after join */

#define OWN 64
static void *writer_main(void *unused)
{
	unsigned long ctr = WRITER_BASE, own[OWN];
	uint64_t s = 31;
	cpu_set_t set;

	/* Shares the last CPU with a reader, as an oversubscribed box. */
	CPU_ZERO(&set);
	CPU_SET(bench_nproc() - 1, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	/* Like a churning server: 64 ids of its own next to the readers'
	 * (lowest free, so just above them), one replaced per operation. */
	uint64_t ops = 0;	/* local: a shared counter would false-share */

	/* The hog holds the same 64 ridr ids as the ridr writer (same tree
	 * shape for the readers) but never changes them. */
	enum kind ids_kind = writer_kind == K_HOG ? K_RIDR : writer_kind;

	for (int i = 0; i < OWN; i++)
		own[i] = churn_first(ids_kind, &ctr);
	while (!__atomic_load_n(&writer_stop, __ATOMIC_ACQUIRE)) {
		churn_once(writer_kind, &own[xorshift(&s) % OWN], &ctr);
		ops++;
	}
	writer_ops = ops;
	for (int i = 0; i < OWN; i++)
		churn_last(ids_kind, own[i]);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	return NULL;
}

static void writer_start(enum kind k)
{
	if (!with_writer || k == K_NOLOCK)
		return;
	writer_kind = k;
	writer_ops = 0;
	__atomic_store_n(&writer_stop, 0, __ATOMIC_RELEASE);
	if (pthread_create(&writer_thread, NULL, writer_main, NULL))
		die("pthread_create");
}

static void writer_stop_join(void)
{
	if (!with_writer || writer_kind == K_NOLOCK)
		return;
	__atomic_store_n(&writer_stop, 1, __ATOMIC_RELEASE);
	pthread_join(writer_thread, NULL);
	writer_kind = K_NOLOCK;
}

/* Writer remove+alloc pairs during the last measurement (pthread_join
 * ordered its stores before this read). */
static uint64_t writer_pairs(void)
{
	return with_writer ? writer_ops : 0;
}

static void setup_ridr(int n) { (void)n; writer_start(K_RIDR); }
static void setup_spin(int n) { (void)n; writer_start(K_SPIN); }
static void setup_rw(int n) { (void)n; writer_start(K_RW); }
static void setup_lfht(int n) { (void)n; writer_start(K_LFHT); }
static void setup_hog(int n) { (void)n; writer_start(K_HOG); }

/* Reader loop: 64 random lookups per check of the stop flag. */
#define READER(name, BODY)                                                   \
	static uint64_t name(int tid, int nthreads, const int *stop)         \
	{                                                                    \
		uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)(tid + 1);    \
		uint64_t ops = 0;                                            \
		(void)nthreads;                                              \
		rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);               \
		while (!bench_stopped(stop)) {                               \
			for (int i = 0; i < 64; i++) {                       \
				unsigned long id = xorshift(&s) % nids;      \
				BODY                                         \
			}                                                    \
			ops += 64;                                           \
		}                                                            \
		rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);             \
		return ops;                                                  \
	}

READER(read_ridr, {
	void *p;

	rk_rcu_read_lock();
	p = ridr_find(&map, id);
	rk_rcu_read_unlock();
	if (p != &dummy)
		die("ridr: live id not found");
})

READER(read_spin, {
	if (flatmap_find_spin(&flat, id) != &dummy)
		die("spin_flat: live id not found");
})

READER(read_rw, {
	if (flatmap_find_rw(&flat, id) != &dummy)
		die("rw_flat: live id not found");
})

READER(read_lfht, {
	struct lfht_obj *o;

	rk_rcu_read_lock();
	o = lfht_find(id);
	if (!o || o->id != id)
		die("lfht: live id not found");
	rk_rcu_read_unlock();
})

READER(read_nolock, {
	if (rk_read_once(flat.slot[id]) != &dummy)
		die("flat: live id not found");
})

static const struct bench_variant lookup_variants[] = {
	{ "spin_flat", "global spinlock + flat array", setup_spin,
	  writer_stop_join, read_spin, writer_pairs },
	{ "rw_flat", "global rwlock + flat array", setup_rw, writer_stop_join,
	  read_rw, writer_pairs },
	{ "lfht", "liburcu rculfhash (RCU)", setup_lfht, writer_stop_join,
	  read_lfht, writer_pairs },
	{ "ridr", "ours (RCU radix tree)", setup_ridr, writer_stop_join,
	  read_ridr, writer_pairs },
	/* Without --writer: the latency floor.  With it: the CPU-hog control
	 * (same slot, so the variant count stays 5). */
	{ "flat_nolock", "plain array, no lock (floor)", NULL, NULL,
	  read_nolock, NULL },
};

static const struct bench_variant hog_variant = {
	"ridr_cpu_hog", "ridr readers next to a CPU hog holding the writer's "
	"64 ids (same tree) but never changing them",
	setup_hog, writer_stop_join, read_ridr, NULL
};

/*
 * Churn: each thread owns OWN ids allocated from the shared dense region
 * (lowest free for ridr and the flat map, a counter for the hash), and
 * replaces a random one of them per operation: remove it, allocate a new
 * one.  Leaves stay populated, as in a server with many live objects.
 */
#define CHURNER(name, KIND)                                                  \
	static uint64_t name(int tid, int nthreads, const int *stop)         \
	{                                                                    \
		unsigned long ctr = WRITER_BASE + ((unsigned long)tid << 40); \
		unsigned long own[OWN];                                      \
		uint64_t ops = 0, s = 77 + (uint64_t)tid;                    \
		(void)nthreads;                                              \
		rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);               \
		for (int i = 0; i < OWN; i++)                                \
			own[i] = churn_first(KIND, &ctr);                    \
		while (!bench_stopped(stop)) {                               \
			churn_once(KIND, &own[xorshift(&s) % OWN], &ctr);    \
			ops++;                                               \
		}                                                            \
		for (int i = 0; i < OWN; i++)                                \
			churn_last(KIND, own[i]);                            \
		rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);             \
		return ops;                                                  \
	}

CHURNER(churn_ridr, K_RIDR)
CHURNER(churn_spin, K_SPIN)
CHURNER(churn_rw, K_RW)
CHURNER(churn_lfht, K_LFHT)

static const struct bench_variant churn_variants[] = {
	{ "spin_flat", "global spinlock + flat array + free-id stack", NULL,
	  NULL, churn_spin, NULL },
	{ "rw_flat", "global rwlock (write side) + flat array", NULL, NULL,
	  churn_rw, NULL },
	{ "lfht", "rculfhash add/del (ids from a counter)", NULL, NULL,
	  churn_lfht, NULL },
	{ "ridr", "ours: ridr_remove + ridr_alloc", NULL, NULL, churn_ridr, NULL },
};

/* ---- single-threaded scaling and memory ---- */

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

/* ns per (remove random live id, alloc lowest free) pair. */
static double scaling_point(unsigned long live, bool ridr_side, int rounds)
{
	const long pairs = 1000000;
	double best[16];
	uint64_t s = 12345;

	if (rounds > 16)
		rounds = 16;
	populate(live);
	for (int r = 0; r < rounds; r++) {
		double t0 = now();

		for (long i = 0; i < pairs; i++) {
			unsigned long id = xorshift(&s) % live, got;

			if (ridr_side) {
				if (ridr_remove(&map, id, NULL) ||
				    ridr_alloc(&map, &dummy, 0, ULONG_MAX, &got) ||
				    got != id)
					die("scaling: ridr");
			} else {
				rk_spin_lock(&flat.spin);
				__flatmap_remove(&flat, id);
				if (__flatmap_alloc(&flat, &dummy) != (long)id)
					die("scaling: flat");
				rk_spin_unlock(&flat.spin);
			}
		}
		best[r] = (now() - t0) * 1e9 / (double)pairs;
	}
	clear_all();
	qsort(best, (size_t)rounds, sizeof(double), cmp_double);
	return best[rounds / 2];
}

static int cmd_scaling(int argc, char **argv, const char *json)
{
	static const unsigned long sizes[] = { 64, 4096, 1000000 };
	double ns[3][2];
	int rounds = 5;
	FILE *j;

	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--quick"))
			rounds = 1;
	for (int i = 0; i < 3; i++) {
		fprintf(stderr, "[ridr_scaling] %lu live ids ...\n", sizes[i]);
		ns[i][0] = scaling_point(sizes[i], true, rounds);
		ns[i][1] = scaling_point(sizes[i], false, rounds);
	}
	printf("\n### ridr_scaling\n\nremove a random live id + allocate "
	       "the lowest free one (ns per pair, one thread, median of %d)\n\n"
	       "| live ids | ridr (ns) | spin_flat (ns) | ridr vs 64 ids |\n"
	       "|---|---|---|---|\n", rounds);
	for (int i = 0; i < 3; i++)
		printf("| %lu | %.1f | %.1f | %.2fx |\n", sizes[i], ns[i][0],
		       ns[i][1], ns[i][0] / ns[0][0]);
	if (json) {
		j = fopen(json, "w");
		if (!j)
			die("cannot write json");
		fprintf(j, "{\n  \"benchmark\": \"ridr_scaling\",\n"
			   "  \"unit\": \"ns per remove+alloc pair\",\n"
			   "  \"live_ids\": [64, 4096, 1000000],\n"
			   "  \"ridr\": [%.2f, %.2f, %.2f],\n"
			   "  \"spin_flat\": [%.2f, %.2f, %.2f]\n}\n",
			ns[0][0], ns[1][0], ns[2][0], ns[0][1], ns[1][1],
			ns[2][1]);
		fclose(j);
	}
	return 0;
}

static size_t heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

enum idset { DENSE, CYCLIC, SPARSE };
static const char *const idset_name[] = { "dense", "cyclic-churned",
					  "random-sparse" };

/* Build @set with @n live ids in ridr; return node bytes (ridr_memory)
 * and, via *@heap, what malloc handed out for them. */
static size_t ridr_build(enum idset set, unsigned long n, size_t *heap,
			 unsigned long *maxid)
{
	unsigned long *ids = malloc(n * sizeof(*ids)), id;
	uint64_t s = 99;
	size_t before, bytes;

	if (!ids)
		die("out of memory");
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	before = heap_used();
	ridr_init(&map);
	*maxid = 0;
	for (unsigned long i = 0; i < n; i++) {
		int ret;

		if (set == SPARSE) {
			do {
				unsigned long want = xorshift(&s) & 0x7fffffffUL;

				ret = ridr_alloc(&map, &dummy, want, want, &id);
			} while (ret == -ENOSPC);
		} else if (set == CYCLIC) {
			ret = ridr_alloc_cyclic(&map, &dummy, 0, INT_MAX, &id);
		} else {
			ret = ridr_alloc(&map, &dummy, 0, ULONG_MAX, &id);
		}
		if (ret)
			die("memory: alloc");
		ids[i] = id;
	}
	if (set == CYCLIC) {
		/* A long run: 10 n times, free a random live id and take
		 * the next one cyclically, keeping n live. */
		for (unsigned long k = 0; k < 10 * n; k++) {
			unsigned long i = xorshift(&s) % n;

			if (ridr_remove(&map, ids[i], NULL) ||
			    ridr_alloc_cyclic(&map, &dummy, 0, INT_MAX, &ids[i]))
				die("memory: churn");
		}
	}
	for (unsigned long i = 0; i < n; i++)
		if (ids[i] > *maxid)
			*maxid = ids[i];
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	*heap = heap_used() - before;	/* @ids was allocated before */
	free(ids);
	bytes = ridr_memory(&map);
	ridr_destroy(&map);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	return bytes;
}

static size_t lfht_build(unsigned long n)
{
	size_t before;

	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	before = heap_used();
	ht = lfht_new(n);
	for (unsigned long i = 0; i < n; i++)
		lfht_add(i * 7919);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	return heap_used() - before;
}

static int cmd_memory(int argc, char **argv, const char *json)
{
	static const unsigned long sizes[] = { 1000, 1000000 };
	int nsizes = 2;
	FILE *j = json ? fopen(json, "w") : NULL;
	bool first = true;

	if (json && !j)
		die("cannot write json");
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--quick"))
			nsizes = 1;	/* 10^3 ids only */
	printf("\n### ridr_memory\n\nbytes per live id.  ridr: node bytes "
	       "(ridr_memory) and heap bytes (malloc, incl. its overhead); "
	       "flat array: 8 bytes per slot up to the largest id; "
	       "rculfhash: heap bytes (node + bucket table, 40-byte "
	       "objects)\n\n| ids | set | ridr nodes | ridr heap | flat "
	       "array | rculfhash |\n|---|---|---|---|---|---|\n");
	if (j)
		fprintf(j, "{\n  \"benchmark\": \"ridr_memory\",\n"
			   "  \"unit\": \"bytes per live id\",\n  \"rows\": [\n");
	for (int si = 0; si < nsizes; si++) {
		unsigned long n = sizes[si];
		size_t lf = lfht_build(n);

		lfht_clear();
		for (int set = DENSE; set <= SPARSE; set++) {
			unsigned long maxid;
			size_t heap, nodes;
			double flat_b;

			fprintf(stderr, "[ridr_memory] %lu ids, %s ...\n", n,
				idset_name[set]);
			nodes = ridr_build(set, n, &heap, &maxid);
			flat_b = (double)(maxid + 1) * 8.0 / (double)n;
			printf("| %lu | %s | %.2f | %.2f | %.2f | %.2f |\n", n,
			       idset_name[set], (double)nodes / (double)n,
			       (double)heap / (double)n, flat_b,
			       (double)lf / (double)n);
			if (j) {
				fprintf(j, "%s    {\"ids\": %lu, \"set\": \"%s\", "
					   "\"ridr_nodes\": %.3f, \"ridr_heap\": "
					   "%.3f, \"flat_array\": %.3f, "
					   "\"rculfhash\": %.3f}",
					first ? "" : ",\n", n, idset_name[set],
					(double)nodes / (double)n,
					(double)heap / (double)n, flat_b,
					(double)lf / (double)n);
				first = false;
			}
		}
	}
	if (j) {
		fprintf(j, "\n  ]\n}\n");
		fclose(j);
	}
	return 0;
}

/* ---- instruction counts (run under callgrind) ---- */

__attribute__((noinline)) void *flat_find(unsigned long id);
__attribute__((noinline)) void *flat_find(unsigned long id)
{
	return id < flat.cap ? rk_read_once(flat.slot[id]) : NULL;
}

/* Remove @id and allocate the lowest free id again (gets @id back). */
__attribute__((noinline)) void ridr_pair(unsigned long id);
__attribute__((noinline)) void ridr_pair(unsigned long id)
{
	unsigned long got;

	if (ridr_remove(&map, id, NULL) ||
	    ridr_alloc(&map, &dummy, 0, ULONG_MAX, &got) || got != id)
		die("icount: pair");
}

/* The three ridr calls of a POSIX timer's life (kernel patch 4). */
static struct ridr tmap;

__attribute__((noinline)) unsigned long timer_create_op(void);
__attribute__((noinline)) unsigned long timer_create_op(void)
{
	unsigned long id;

	if (ridr_alloc_cyclic(&tmap, &dummy, 0, INT_MAX, &id))
		die("icount-timer: alloc");
	return id;
}

__attribute__((noinline)) void *timer_find_op(unsigned long id);
__attribute__((noinline)) void *timer_find_op(unsigned long id)
{
	void *p;

	rk_rcu_read_lock();
	p = ridr_find(&tmap, id);
	rk_rcu_read_unlock();
	return p;
}

__attribute__((noinline)) void timer_delete_op(unsigned long id);
__attribute__((noinline)) void timer_delete_op(unsigned long id)
{
	if (ridr_remove(&tmap, id, NULL))
		die("icount-timer: remove");
}

static int cmd_icount_timer(long k)
{
	unsigned long first, id;

	ridr_init(&tmap);
	ridr_lock(&tmap);
	__ridr_set_cursor(&tmap, 70000);
	ridr_unlock(&tmap);
	first = timer_create_op();	/* the long-lived timer */
	for (long i = 0; i < k; i++) {
		id = timer_create_op();
		if (timer_find_op(id) != &dummy)
			die("icount-timer: find");
		timer_delete_op(id);
	}
	timer_delete_op(first);
	ridr_destroy(&tmap);
	printf("icount-timer: %ld create/find/delete steps done\n", k);
	return 0;
}

static int cmd_icount(unsigned long n, long k)
{
	uint64_t s = 7;
	long hits = 0;

	populate(n);	/* main() registered this thread */
	rk_rcu_read_lock();
	for (long i = 0; i < k; i++) {
		unsigned long id = xorshift(&s) % n;

		/* The inline lookup, counted as one out-of-line call. */
		hits += ridr_find_noinline(&map, id) == &dummy;
		hits += flat_find(id) == &dummy;
	}
	rk_rcu_read_unlock();
	for (long i = 0; i < k; i++)
		ridr_pair(xorshift(&s) % n);
	clear_all();
	if (hits != 2 * k)
		die("icount: lookups failed");
	printf("icount: %ld finds of %lu ids done\n", k, n);
	return 0;
}

int main(int argc, char **argv)
{
	struct bench_variant variants[5];
	struct bench_config cfg = { 0 };
	const char *json = NULL;
	char name[64], title[160];
	int ret;

	if (argc < 2)
		goto usage;
	for (int i = 2; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--json"))
			json = argv[i + 1];
	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	if (!strcmp(argv[1], "scaling"))
		return cmd_scaling(argc - 2, argv + 2, json);
	if (!strcmp(argv[1], "memory"))
		return cmd_memory(argc - 2, argv + 2, json);
	if (!strcmp(argv[1], "icount") && argc == 4)
		return cmd_icount(strtoul(argv[2], NULL, 0),
				  strtol(argv[3], NULL, 0));
	if (!strcmp(argv[1], "icount-timer") && argc == 3)
		return cmd_icount_timer(strtol(argv[2], NULL, 0));
	if (!strcmp(argv[1], "lookup") && argc >= 3) {
		int skip = 2;

		nids = strtoul(argv[2], NULL, 0);
		if (nids < 1 || nids > FLAT_CAP / 2)
			goto usage;
		if (argc > 3 && !strcmp(argv[3], "--writer")) {
			with_writer = true;
			skip = 3;
		}
		snprintf(name, sizeof(name), "ridr_lookup_%lu%s", nids,
			 with_writer ? "_writer" : "");
		snprintf(title, sizeof(title), "random lookups, %lu live ids%s "
			 "(lookups/s)", nids,
			 with_writer ? ", one writer churning" : "");
		cfg.name = name;
		cfg.title = title;
		cfg.mirrors = "2008 SysV IPC rw_mutex regression (global "
			      "rwlock) and 2011 posix-timers idr_lock "
			      "(global spinlock) vs RCU lookups";
		memcpy(variants, lookup_variants, sizeof(variants));
		if (with_writer) {
			cfg.extra_name = "writer remove+alloc pairs";
			variants[4] = hog_variant;
		}
		cfg.variants = variants;
		cfg.nvariants = 5;
		cfg.baseline = 0;
		cfg.ours = 3;
		bench_parse_args(&cfg, argc - skip, argv + skip);
		populate(nids);
		ret = bench_run(&cfg);
		clear_all();
		return ret;
	}
	if (!strcmp(argv[1], "churn")) {
		cfg.name = "ridr_churn";
		cfg.title = "remove + alloc pairs, 64 ids per thread, 4096 "
			    "other ids live (pairs/s)";
		cfg.mirrors = "create/delete churn (ipc ids, timer ids)";
		cfg.variants = churn_variants;
		cfg.nvariants = 4;
		cfg.baseline = 0;
		cfg.ours = 3;
		nids = 4096;
		bench_parse_args(&cfg, argc - 1, argv + 1);
		populate(nids);
		ret = bench_run(&cfg);
		clear_all();
		return ret;
	}
usage:
	fprintf(stderr, "usage: %s lookup N [--writer] [opts] | churn [opts] | "
			"scaling [--quick] [--json F] | memory [--quick] [--json F] | "
			"icount N K | icount-timer K\n", argv[0]);
	return 2;
}
