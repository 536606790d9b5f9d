// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Userspace analogs of the kernel's historical id-lookup results, old
 * design and ours side by side in one run.  Every variant looks objects
 * up in the same ridr tree, so only the locking around the lookup
 * differs, exactly what changed in the kernel each time.
 *
 *   timers    2011 POSIX timers (16 threads: 78 s -> 3.3 s): T threads,
 *             each owning 16 objects ("timers") in one shared id map,
 *             loop: look up one of its ids, lock the object, read/update
 *             it, unlock (timer_gettime()).
 *               global_spin   2.6.38 lock_timer(): idr_lock around
 *                             idr_find(), object lock taken inside it
 *               ridr          RCU lookup + per-object lock
 *               ridr_lockref  RCU lookup + lockref_get_not_dead/put
 *   psem      2008 SysV semaphores (2.6.22 scaled linearly to 4 cores,
 *             2.6.24 collapsed): pairs of threads pass a token through
 *             their own object, looked up by id on every poll.
 *               global_spin   one global ipc lock (before 2002)
 *               global_rw     2.6.24/25 rw_mutex, read-held per lookup
 *               ridr          RCU lookup + per-object lock (2.6.26+ and us)
 *   pmsg      same pairs, each side sending a message into the other's
 *             queue object (SysV msgsnd/msgrcv ping-pong)
 *   semop     2002 semopbench (64 groups x 16 semaphores: 515 s -> 46.7 s
 *             with per-object locks + RCU): rings of 4 threads, each
 *             waiting on its semaphore and posting the next one's
 *
 * A waiting thread polls (one lookup per poll) and yields after a few
 * failed polls, since these boxes are oversubscribed by design.  Only
 * completed token passes / messages / timer reads count as operations.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmarks/lib/bench.h"
#include "compat/compat.h"
#include "lockref/lockref.h"
#include "ridr/ridr.h"

#define TIMERS_PER_THREAD 16
#define QLEN 4
#define SPINS_BEFORE_YIELD 16

struct obj {
	rk_spinlock_t lock;
	struct lockref ref;
	unsigned long id;
	int sem;		/* psem/semop: token count (under lock) */
	int q[QLEN];		/* pmsg: ring buffer (under lock) */
	unsigned int head, tail;
	uint64_t value;		/* timers: "it_value" (under lock) */
} __attribute__((aligned(64)));

enum work { W_TIMERS, W_PSEM, W_PMSG, W_SEMOP };
enum mode { M_GLOBAL_SPIN, M_GLOBAL_RW, M_RIDR, M_RIDR_LOCKREF };

static enum work work;
static int ring;		/* threads per ring (psem/pmsg 2, semop 4) */
static struct ridr map;
static struct obj *objs;
static unsigned long *ids;	/* ids[i] maps to objs[i] */
static int nobjs;
static rk_spinlock_t glock;
static pthread_rwlock_t grw = PTHREAD_RWLOCK_INITIALIZER;

static void die(const char *what)
{
	fprintf(stderr, "history bench: %s\n", what);
	abort();
}

static void setup(int nthreads)
{
	nobjs = work == W_TIMERS ? nthreads * TIMERS_PER_THREAD : nthreads;
	objs = aligned_alloc(64, sizeof(*objs) * (size_t)nobjs);
	ids = calloc((size_t)nobjs, sizeof(*ids));
	if (!objs || !ids)
		die("out of memory");
	memset(objs, 0, sizeof(*objs) * (size_t)nobjs);
	ridr_init(&map);
	rk_spin_lock_init(&glock);
	for (int i = 0; i < nobjs; i++) {
		rk_spin_lock_init(&objs[i].lock);
		lockref_init(&objs[i].ref, 1);
		/* Cyclic, as ipc and timers allocate. */
		if (ridr_alloc_cyclic(&map, &objs[i], 0, INT_MAX, &ids[i]))
			die("ridr_alloc_cyclic");
		objs[i].id = ids[i];
	}
	/* Each ring starts with the token at its first member. */
	if (work == W_PSEM || work == W_SEMOP)
		for (int i = 0; i < nobjs; i += ring)
			objs[i].sem = 1;
}

static void teardown(void)
{
	ridr_destroy(&map);	/* no reader left: nodes go after a GP */
	free(objs);
	free(ids);
}

/*
 * Look @id up and return the object locked, in the style of @mode.
 * The global-lock modes need no RCU: in those designs writers take the
 * same global lock.
 */
static inline struct obj *lookup_lock(enum mode mode, unsigned long id)
{
	struct obj *o;

	switch (mode) {
	case M_GLOBAL_SPIN:
		rk_spin_lock(&glock);
		o = ridr_find(&map, id);
		rk_spin_lock(&o->lock);
		rk_spin_unlock(&glock);
		return o;
	case M_GLOBAL_RW:
		pthread_rwlock_rdlock(&grw);
		o = ridr_find(&map, id);
		rk_spin_lock(&o->lock);
		pthread_rwlock_unlock(&grw);
		return o;
	default:
		rk_rcu_read_lock();
		o = ridr_find(&map, id);
		rk_spin_lock(&o->lock);
		rk_rcu_read_unlock();
		return o;
	}
}

static inline void backoff(unsigned int *fails)
{
	if (++*fails > SPINS_BEFORE_YIELD)
		sched_yield();
	else
		rk_cpu_relax();
}

static bool sem_ready(const struct obj *o)
{
	return o->sem > 0;
}

static bool queue_ready(const struct obj *o)
{
	return o->head != o->tail;
}

/* Poll @id (one lookup per poll) until @ready; return it locked, or NULL
 * once the measurement stopped. */
static inline struct obj *wait_locked(enum mode mode, unsigned long id,
				      bool (*ready)(const struct obj *),
				      const int *stop)
{
	unsigned int fails = 0;

	for (;;) {
		struct obj *o = lookup_lock(mode, id);

		if (ready(o))
			return o;
		rk_spin_unlock(&o->lock);
		if (bench_stopped(stop))
			return NULL;
		backoff(&fails);
	}
}

/* timer_gettime(): read (and tick) one of our timers. */
static uint64_t run_timers(enum mode mode, int tid, const int *stop)
{
	unsigned long *own = &ids[tid * TIMERS_PER_THREAD];
	uint64_t ops = 0;
	unsigned int k = 0;

	while (!bench_stopped(stop)) {
		unsigned long id = own[k++ % TIMERS_PER_THREAD];
		struct obj *o;

		if (mode == M_RIDR_LOCKREF) {
			rk_rcu_read_lock();
			o = ridr_find(&map, id);
			if (!lockref_get_not_dead(&o->ref))
				die("timer died");
			rk_rcu_read_unlock();
			__atomic_fetch_add(&o->value, 1, __ATOMIC_RELAXED);
			if (lockref_put_return(&o->ref) < 0 &&
			    !lockref_put_or_lock(&o->ref))
				die("lost the base reference");
		} else {
			o = lookup_lock(mode, id);
			o->value++;
			rk_spin_unlock(&o->lock);
		}
		ops++;
	}
	return ops;
}

/* psem and semop: wait for our semaphore, then post the next one. */
static uint64_t run_ring_sem(enum mode mode, int tid, const int *stop)
{
	int base = tid - tid % ring;
	unsigned long mine = ids[tid];
	unsigned long next = ids[base + (tid - base + 1) % ring];
	uint64_t ops = 0;

	while (!bench_stopped(stop)) {
		struct obj *o = wait_locked(mode, mine, sem_ready, stop);

		if (!o)
			return ops;
		o->sem--;	/* P(mine) */
		rk_spin_unlock(&o->lock);
		o = lookup_lock(mode, next);	/* V(next) */
		o->sem++;
		rk_spin_unlock(&o->lock);
		ops++;
	}
	return ops;
}

/* pmsg: receive from our queue, send into the peer's queue. */
static uint64_t run_pmsg(enum mode mode, int tid, const int *stop)
{
	int base = tid - tid % 2;
	unsigned long mine = ids[tid], peer = ids[base + 1 - (tid - base)];
	uint64_t ops = 0;
	bool starter = tid == base;
	int msg = tid;

	if (starter) {	/* the first message of the pair */
		struct obj *o = lookup_lock(mode, peer);

		o->q[o->tail++ % QLEN] = msg;
		rk_spin_unlock(&o->lock);
	}
	while (!bench_stopped(stop)) {
		struct obj *o = wait_locked(mode, mine, queue_ready, stop);

		if (!o)
			return ops;
		msg = o->q[o->head++ % QLEN];	/* msgrcv */
		rk_spin_unlock(&o->lock);
		o = lookup_lock(mode, peer);	/* msgsnd */
		if (o->tail - o->head >= QLEN)
			die("queue overflow");
		o->q[o->tail++ % QLEN] = msg + 1;
		rk_spin_unlock(&o->lock);
		ops++;
	}
	return ops;
}

static uint64_t run(enum mode mode, int tid, int nthreads, const int *stop)
{
	uint64_t ops;

	if (nthreads % ring)
		die("thread count must be a multiple of the ring size");
	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	switch (work) {
	case W_TIMERS:
		ops = run_timers(mode, tid, stop);
		break;
	case W_PMSG:
		ops = run_pmsg(mode, tid, stop);
		break;
	default:
		ops = run_ring_sem(mode, tid, stop);
		break;
	}
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	return ops;
}

static uint64_t run_global_spin(int tid, int n, const int *stop)
{
	return run(M_GLOBAL_SPIN, tid, n, stop);
}

static uint64_t run_global_rw(int tid, int n, const int *stop)
{
	return run(M_GLOBAL_RW, tid, n, stop);
}

static uint64_t run_ridr(int tid, int n, const int *stop)
{
	return run(M_RIDR, tid, n, stop);
}

static uint64_t run_ridr_lockref(int tid, int n, const int *stop)
{
	return run(M_RIDR_LOCKREF, tid, n, stop);
}

static const struct bench_variant timer_variants[] = {
	{ "global_spin", "2.6.38: idr_lock around the lookup", setup, teardown,
	  run_global_spin, NULL },
	{ "ridr", "RCU lookup + per-object lock", setup, teardown, run_ridr, NULL },
	{ "ridr_lockref", "RCU lookup + lockref_get_not_dead", setup,
	  teardown, run_ridr_lockref, NULL },
};

static const struct bench_variant ipc_variants[] = {
	{ "global_spin", "one global ipc spinlock", setup, teardown,
	  run_global_spin, NULL },
	{ "global_rw", "2.6.24 rw_mutex read-held per lookup", setup,
	  teardown, run_global_rw, NULL },
	{ "ridr", "RCU lookup + per-object lock", setup, teardown, run_ridr, NULL },
};

static const struct workload {
	const char *cmd, *name, *title, *mirrors;
	enum work work;
	int ring;
	const struct bench_variant *variants;
	int nvariants, ours;
} workloads[] = {
	{ "timers", "timer_gettime_storm",
	  "each thread looks up, locks and reads its own timers (timer "
	  "reads/s)",
	  "2011 posix-timers: 16 threads 78 s -> 3.3 s once lookups went RCU",
	  W_TIMERS, 1, timer_variants, 3, 1 },
	{ "psem", "ipc_psem",
	  "pairs passing a semaphore token, lookup per poll (passes/s)",
	  "2008 SysV ipc: 2.6.22 scaled to 4 cores, 2.6.24's rw_mutex made 4 "
	  "cores 75% slower",
	  W_PSEM, 2, ipc_variants, 3, 2 },
	{ "pmsg", "ipc_pmsg",
	  "pairs exchanging messages through queue objects (messages/s)",
	  "2008 SysV ipc: 2.6.22 scaled to 4 cores, 2.6.24's rw_mutex made 4 "
	  "cores 75% slower",
	  W_PMSG, 2, ipc_variants, 3, 2 },
	{ "semop", "ipc_semopbench",
	  "rings of 4 threads passing a token through semaphores looked up by "
	  "id (passes/s)",
	  "2002 semopbench, 64 groups x 16 semaphores: 515 s -> 46.7 s with "
	  "per-object locks + RCU",
	  W_SEMOP, 4, ipc_variants, 3, 2 },
};

int main(int argc, char **argv)
{
	struct bench_config cfg = { 0 };
	const struct workload *w = NULL;
	int np = bench_nproc(), ret;

	for (size_t i = 0; argc >= 2 && i < sizeof(workloads) /
			   sizeof(workloads[0]); i++)
		if (!strcmp(argv[1], workloads[i].cmd))
			w = &workloads[i];
	if (!w)
		goto usage;
	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	work = w->work;
	ring = w->ring;
	cfg.name = w->name;
	cfg.title = w->title;
	cfg.mirrors = w->mirrors;
	cfg.variants = w->variants;
	cfg.nvariants = w->nvariants;
	cfg.baseline = 0;
	cfg.ours = w->ours;
	bench_parse_args(&cfg, argc - 1, argv + 1);
	/* Ring workloads need whole rings: default to 1, 2 and 4 rings per
	 * CPU pair unless --threads was given. */
	if (work != W_TIMERS) {
		bool given = false;

		for (int i = 2; i < argc; i++)
			given |= !strcmp(argv[i], "--threads");
		if (!given) {
			cfg.nthreads = 0;
			for (int r = ring; r <= 4 * np && cfg.nthreads < 3;
			     r *= 2)
				cfg.threads[cfg.nthreads++] = r;
		}
		for (int i = 0; i < cfg.nthreads; i++)
			if (cfg.threads[i] % ring)
				goto usage;
	}
	ret = bench_run(&cfg);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	return ret;
usage:
	fprintf(stderr, "usage: %s {timers|psem|pmsg|semop} [options]\n"
			"  ring workloads need thread counts that are "
			"multiples of 2 (psem, pmsg) or 4 (semop)\n", argv[0]);
	return 2;
}
