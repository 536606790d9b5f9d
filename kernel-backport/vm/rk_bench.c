// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rk_bench.c - benchmarks run inside the bench VM (static, as root), the
 * same binary on the unpatched and on the patched kernel (bench.sh).
 *
 * The kernel-side counterparts of benchmarks/history_bench.c, with real
 * system calls, so the id lookups the ridr-kit series converts are on the
 * hot path:
 *
 *   psem            2008 psem: pairs of threads bounce a token through
 *                   their own SysV semaphore set (2 semaphores: A waits on
 *                   0 and posts 1, B the reverse); semop() looks the set
 *                   up by id every time.  Counts completed waits.
 *   pmsg            2008 pmsg: the same with a SysV message queue per pair
 *                   (message type 1 one way, 2 the other; msgsnd() and
 *                   msgrcv()).  Counts received messages.
 *   timer_gettime   2011 posix-timers storm (16 threads: 78 s on the
 *                   global idr lock, 3.3 s with RCU): every thread owns 16
 *                   armed SIGEV_NONE timers of the same process and calls
 *                   timer_gettime() on them in turn.  Counts calls.
 *   timer_churn     2025 upstream posix-timers harness: every thread of one
 *                   process creates and deletes a timer in a loop.  Counts
 *                   create+delete pairs.
 *   timer_churn_proc  the same with one process per "thread" (per-process
 *                   id maps: nothing shared but the allocator).
 *   dcache_open     open()+close() of the same file by every thread: the
 *                   dentry's lockref (patch 2) is taken and dropped.
 *   timer_many      one process holds 20000 armed SIGEV_NONE timers (the
 *                   scale of Thomas Gleixner's 2025 tests, lore
 *                   20250224095736.145530367@linutronix.de: 6.1's
 *                   512-bucket global hash has ~40-deep chains there);
 *                   every thread calls timer_gettime() and
 *                   timer_settime() on random ones.  Counts calls.
 *   timer_many_proc  every process (one per "thread") holds 5000 armed
 *                   timers and does the same on its own: per-process maps
 *                   against one hash shared by all.  Counts calls.
 *   ipc_churn       every thread creates and removes SysV objects in turn
 *                   (semget/msgget/shmget of IPC_PRIVATE, then IPC_RMID):
 *                   the ids' writer path (ipc_addid(), ipc_rmid()).
 *                   Counts create+remove pairs.
 *   timer_mem_dense  memory, not time: the slab bytes one process's 20000
 *                   live timers hold (ids 0..19999, created in order): the
 *                   growth of the guest's "Slab:" (/proc/meminfo, per-cpu
 *                   counters folded through /proc/sys/vm/stat_refresh)
 *                   divided by the timers.  k_itimer + sigqueue + the id
 *                   map's share: the difference between the two kernels
 *                   is what the series costs or saves per timer.
 *   timer_mem_sparse  the same for 2000 timers each alone in its block of
 *                   64 ids (128000 made, all but ids 0, 64, 128, ...
 *                   deleted: the sparse case that cyclic ids and
 *                   long-lived timers produce), measured once the deleted
 *                   timers' RCU frees have run.  Each kept k_itimer and
 *                   sigqueue then pins a slab page of its own, the same in
 *                   both kernels: the difference is the id map's.
 *
 * Thread i runs on cpu i % ncpus (pairs: A on one vCPU, B on the other),
 * so a placement choice of the scheduler does not change the figure from
 * one boot to the next.  Each point: a short warm-up, then the workload
 * for a fixed time; the operations counted in that time divided by the
 * measured time give one line
 *
 *   RK-BENCH <workload> <threads> <ops_per_sec> <ops> <seconds>
 *
 * (threads = 2 x pairs for psem and pmsg).  The timer_mem_* workloads run
 * once, whatever the thread counts, and print
 *
 *   RK-BENCH <workload> 1 <slab bytes per timer> <timers> <seconds>
 *
 * Errors: "RK-BENCH-ERROR ...",
 * exit 1.  Usage: rk_bench [-s seconds] [-t "1 2 4"] [workload...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rk_timer_syscalls.h"

#define MAX_THREADS 64
#define TIMERS_PER_THREAD 16
#define BENCH_FILE "/tmp/rk_bench_file"
#define MANY_TIMERS 20000
#define PROC_TIMERS 5000

static int errors;

static void fail(const char *what, int err)
{
	printf("RK-BENCH-ERROR %s: %s\n", what, strerror(err));
	fflush(stdout);
	__atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void pin(int i)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET((int)(i % (n > 0 ? n : 1)), &set);
	sched_setaffinity(0, sizeof(set), &set);
}

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

struct msg {
	long type;
	char text[8];
};

/*
 * One run: @stop is set by the main thread when the time is up (and the
 * ipc objects are then removed, which wakes a side still blocked in
 * semop()/msgrcv() with EIDRM/EINVAL).  @ops counts what completed.
 */
struct run {
	int stop;
	int go;
	int ready;
	int ipc[MAX_THREADS / 2];	/* per pair: sem set or queue id */
	uint64_t ops[MAX_THREADS];	/* written by thread i only */
};

struct arg {
	struct run *run;
	int i;
};

static int stopped(struct run *r)
{
	/* Relaxed: only tells the loop to end; the count is read after join. */
	return __atomic_load_n(&r->stop, __ATOMIC_RELAXED);
}

/* Every thread checks in, then waits for the start signal. */
static void start_line(struct run *r)
{
	__atomic_add_fetch(&r->ready, 1, __ATOMIC_ACQ_REL);
	while (!__atomic_load_n(&r->go, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void *psem_thread(void *p)
{
	struct arg *a = p;
	struct run *r = a->run;
	int id = r->ipc[a->i / 2], side = a->i % 2;
	struct sembuf wait = { .sem_num = (unsigned short)side, .sem_op = -1 };
	struct sembuf post = { .sem_num = (unsigned short)!side, .sem_op = 1 };
	uint64_t n = 0;

	pin(a->i);
	start_line(r);
	while (!stopped(r)) {
		if (semop(id, &wait, 1)) {
			if (!stopped(r))
				fail("psem semop wait", errno);
			break;
		}
		n++;
		if (semop(id, &post, 1)) {
			if (!stopped(r))
				fail("psem semop post", errno);
			break;
		}
	}
	r->ops[a->i] = n;
	return NULL;
}

static void *pmsg_thread(void *p)
{
	struct arg *a = p;
	struct run *r = a->run;
	int id = r->ipc[a->i / 2], side = a->i % 2;
	struct msg out = { .type = 2 - side, .text = "ridr" }, in;
	uint64_t n = 0;

	pin(a->i);
	start_line(r);
	while (!stopped(r)) {
		if (msgrcv(id, &in, sizeof(in.text), side + 1, 0) < 0) {
			if (!stopped(r))
				fail("pmsg msgrcv", errno);
			break;
		}
		n++;
		if (msgsnd(id, &out, sizeof(out.text), 0)) {
			if (!stopped(r))
				fail("pmsg msgsnd", errno);
			break;
		}
	}
	r->ops[a->i] = n;
	return NULL;
}

static void *gettime_thread(void *p)
{
	struct arg *a = p;
	struct run *r = a->run;
	struct itimerspec its = { .it_value = { 1000, 0 },
				  .it_interval = { 1000, 0 } }, cur;
	int t[TIMERS_PER_THREAD], k, ok = 1;
	uint64_t n = 0;

	pin(a->i);
	for (k = 0; k < TIMERS_PER_THREAD; k++) {
		if (k_timer_create(&t[k]) || k_timer_settime(t[k], &its)) {
			fail("timer_gettime setup", errno);
			ok = 0;
			t[k] = -1;
		}
	}
	start_line(r);
	for (k = 0; ok && !stopped(r); k = (k + 1) % TIMERS_PER_THREAD) {
		if (k_timer_gettime(t[k], &cur)) {
			fail("timer_gettime", errno);
			break;
		}
		n++;
	}
	for (k = 0; k < TIMERS_PER_THREAD; k++)
		if (t[k] >= 0)
			k_timer_delete(t[k]);
	r->ops[a->i] = n;
	return NULL;
}

static uint64_t churn_loop(struct run *r)
{
	uint64_t n = 0;
	int t;

	while (!stopped(r)) {
		if (k_timer_create(&t)) {
			fail("timer_create", errno);
			break;
		}
		if (k_timer_delete(t)) {
			fail("timer_delete", errno);
			break;
		}
		n++;
	}
	return n;
}

static void *churn_thread(void *p)
{
	struct arg *a = p;

	pin(a->i);
	start_line(a->run);
	a->run->ops[a->i] = churn_loop(a->run);
	return NULL;
}

/* xorshift64: a cheap per-thread random index. */
static unsigned int next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return (unsigned int)(*x >> 11);
}

/*
 * timer_gettime() and timer_settime() (one each per step) on random
 * timers of @ids[@nr], all armed far in the future.
 */
static uint64_t random_timer_loop(struct run *r, const int *ids, int nr,
				  uint64_t seed)
{
	struct itimerspec its = { .it_value = { 1000, 0 },
				  .it_interval = { 1000, 0 } }, cur;
	uint64_t n = 0, x = seed | 1;

	while (!stopped(r)) {
		int id = ids[next_rand(&x) % (unsigned int)nr];

		if (k_timer_gettime(id, &cur) || k_timer_settime(id, &its)) {
			fail("timer_gettime/settime", errno);
			break;
		}
		n += 2;
	}
	return n;
}

/* Create @nr armed timers into @ids; 0, or -1 with the created deleted. */
static int make_timers(int *ids, int nr)
{
	struct itimerspec its = { .it_value = { 1000, 0 },
				  .it_interval = { 1000, 0 } };
	int k;

	for (k = 0; k < nr; k++) {
		if (k_timer_create(&ids[k]) || k_timer_settime(ids[k], &its)) {
			int err = errno;

			while (k-- > 0)
				k_timer_delete(ids[k]);
			errno = err;
			return -1;
		}
	}
	return 0;
}

static void drop_timers(const int *ids, int nr)
{
	int k;

	for (k = 0; k < nr; k++)
		k_timer_delete(ids[k]);
}

/* timer_many: the process's timers, made before the threads start. */
static int many_ids[MANY_TIMERS];

static int many_setup(void)
{
	if (make_timers(many_ids, MANY_TIMERS)) {
		fail("timer_many: 20000 timers", errno);
		return -1;
	}
	return 0;
}

static void many_teardown(void)
{
	drop_timers(many_ids, MANY_TIMERS);
}

static void *many_thread(void *p)
{
	struct arg *a = p;

	pin(a->i);
	start_line(a->run);
	a->run->ops[a->i] = random_timer_loop(a->run, many_ids, MANY_TIMERS,
					      0x9e3779b97f4a7c15ULL * (a->i + 1));
	return NULL;
}

/* timer_many_proc: one forked process; its own timers. */
static uint64_t many_proc_loop(struct run *r, int i)
{
	static int ids[PROC_TIMERS];
	uint64_t n;

	if (make_timers(ids, PROC_TIMERS)) {
		fail("timer_many_proc: 5000 timers", errno);
		start_line(r);
		return 0;
	}
	start_line(r);
	n = random_timer_loop(r, ids, PROC_TIMERS,
			      0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1));
	drop_timers(ids, PROC_TIMERS);
	return n;
}

static uint64_t churn_proc_loop(struct run *r, int i)
{
	(void)i;
	start_line(r);
	return churn_loop(r);
}

/* ipc_churn: a semaphore set, a queue, a segment, created and removed. */
static void *ipc_churn_thread(void *p)
{
	struct arg *a = p;
	struct run *r = a->run;
	uint64_t n = 0;
	int id, k = 0, err;

	pin(a->i);
	start_line(r);
	while (!stopped(r)) {
		switch (k) {
		case 0:
			id = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
			err = id < 0 ||
			      semctl(id, 0, IPC_RMID, (union semun){ 0 });
			break;
		case 1:
			id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
			err = id < 0 || msgctl(id, IPC_RMID, NULL);
			break;
		default:
			id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
			err = id < 0 || shmctl(id, IPC_RMID, NULL);
			break;
		}
		if (err) {
			fail("ipc_churn", errno);
			break;
		}
		k = (k + 1) % 3;
		n++;
	}
	r->ops[a->i] = n;
	return NULL;
}

static void *open_thread(void *p)
{
	struct arg *a = p;
	struct run *r = a->run;
	uint64_t n = 0;
	int fd;

	pin(a->i);
	start_line(r);
	while (!stopped(r)) {
		fd = open(BENCH_FILE, O_RDONLY);
		if (fd < 0 || close(fd)) {
			fail("dcache_open", errno);
			break;
		}
		n++;
	}
	r->ops[a->i] = n;
	return NULL;
}

/*
 * The guest's slab bytes ("Slab:" of /proc/meminfo).  Writing
 * /proc/sys/vm/stat_refresh first folds every cpu's pending counter
 * deltas into the global count, which /proc/meminfo reads: without it a
 * reading may lag by up to a stat threshold per cpu (pages).
 */
static long long slab_bytes(void)
{
	long long kb = -1;
	char line[128];
	FILE *f;
	int fd;

	fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "1\n", 2) != 2)
			fail("write /proc/sys/vm/stat_refresh", errno);
		close(fd);
	}
	f = fopen("/proc/meminfo", "r");
	if (!f) {
		fail("open /proc/meminfo", errno);
		return -1;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Slab: %lld kB", &kb) == 1)
			break;
	fclose(f);
	if (kb < 0)
		fail("no Slab: line in /proc/meminfo", EINVAL);
	return kb * 1024;
}

/*
 * slab_bytes() once the RCU callbacks that free slab objects have run:
 * two readings 500 ms apart agree (at most 15 s).  RCU invokes only a
 * few callbacks per tick once fewer than 10000 are queued (blimit,
 * qhimark), so the frees of 10^5 deleted timers trickle on for seconds
 * after the last timer_delete().
 */
static long long slab_settled(void)
{
	long long now = slab_bytes(), prev;
	int i;

	for (i = 0; i < 30; i++) {
		usleep(500000);
		prev = now;
		now = slab_bytes();
		if (now == prev)
			break;
	}
	return now;
}

#define MEM_DENSE 20000
#define MEM_SPARSE 2000
#define MEM_STRIDE 64

/* The timers of a K_MEM workload, into @ids: their number, or -1. */
static int mem_dense(int *ids)
{
	return make_timers(ids, MEM_DENSE) ? -1 : MEM_DENSE;
}

/*
 * Ids 0, 64, 128, ...: MEM_SPARSE x MEM_STRIDE timers made in order, then
 * all but the first of every MEM_STRIDE deleted.  Made first and deleted
 * after (not made and deleted in turn), so that where each kept timer's
 * k_itimer and sigqueue sit in their slabs does not depend on when RCU
 * freed the others: the slab pages the kept ones pin are the same from
 * one boot to the next.
 */
static int mem_sparse(int *ids)
{
	int k, n = MEM_SPARSE * MEM_STRIDE;

	if (make_timers(ids, n))
		return -1;
	for (k = 0; k < n; k++) {
		if (k % MEM_STRIDE == 0) {
			ids[k / MEM_STRIDE] = ids[k];
		} else if (k_timer_delete(ids[k])) {
			fail("timer_mem_sparse: timer_delete", errno);
			break;
		}
	}
	return MEM_SPARSE;
}

/*
 * The slab growth per live timer when a forked process (its own id map,
 * empty at the start, given back at exit) makes the timers of @make;
 * their number in *@nr.  -1 if something failed.
 */
static double mem_point(int (*make)(int *ids), int *nr)
{
	static int ids[MEM_SPARSE * MEM_STRIDE];
	struct { double v; int n; } *out;
	double v;
	pid_t pid;

	out = mmap(NULL, sizeof(*out), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (out == MAP_FAILED) {
		fail("mmap", errno);
		return -1;
	}
	out->v = -1;
	out->n = 0;
	pid = fork();
	if (pid == 0) {
		long long before, after;
		int n;

		pin(0);
		/* What earlier workloads freed through RCU is freed first. */
		before = slab_settled();
		n = make(ids);
		if (n <= 0) {
			fail("timer_mem: timer_create/delete", errno);
			_exit(1);
		}
		/* The deleted timers and replaced id-map objects too. */
		after = slab_settled();
		if (before >= 0 && after >= 0) {
			out->v = (double)(after - before) / n;
			out->n = n;
		}
		drop_timers(ids, n);
		_exit(0);
	}
	if (pid < 0)
		fail("fork", errno);
	else
		waitpid(pid, NULL, 0);
	v = out->v;
	*nr = out->n;
	munmap(out, sizeof(*out));
	return v;
}

enum kind { K_PAIRS_SEM, K_PAIRS_MSG, K_THREADS, K_PROCS, K_MEM };

/*
 * @fn: thread body (K_THREADS, K_PAIRS_*); @proc: body of each forked
 * process (K_PROCS), which calls start_line() itself once set up;
 * @setup/@teardown: before the threads start and after they are joined;
 * @mem: a K_MEM workload's timers (mem_point()).
 */
static const struct workload {
	const char *name;
	enum kind kind;
	void *(*fn)(void *);
	uint64_t (*proc)(struct run *r, int i);
	int (*setup)(void);
	void (*teardown)(void);
	int (*mem)(int *ids);
} workloads[] = {
	{ "psem", K_PAIRS_SEM, psem_thread, NULL, NULL, NULL,
	  NULL },
	{ "pmsg", K_PAIRS_MSG, pmsg_thread, NULL, NULL, NULL,
	  NULL },
	{ "timer_gettime", K_THREADS, gettime_thread, NULL, NULL, NULL,
	  NULL },
	{ "timer_churn", K_THREADS, churn_thread, NULL, NULL, NULL,
	  NULL },
	{ "timer_churn_proc", K_PROCS, NULL, churn_proc_loop, NULL, NULL,
	  NULL },
	{ "dcache_open", K_THREADS, open_thread, NULL, NULL, NULL,
	  NULL },
	{ "timer_many", K_THREADS, many_thread, NULL, many_setup,
	  many_teardown, NULL },
	{ "timer_many_proc", K_PROCS, NULL, many_proc_loop, NULL, NULL,
	  NULL },
	{ "ipc_churn", K_THREADS, ipc_churn_thread, NULL, NULL, NULL,
	  NULL },
	{ "timer_mem_dense", K_MEM, NULL, NULL, NULL, NULL, mem_dense },
	{ "timer_mem_sparse", K_MEM, NULL, NULL, NULL, NULL, mem_sparse },
};

/* Create the ipc objects of @pairs pairs and put the first token in. */
static int ipc_setup(struct run *r, enum kind kind, int pairs)
{
	struct msg first = { .type = 1, .text = "ridr" };
	struct sembuf post = { .sem_num = 0, .sem_op = 1 };
	int p;

	for (p = 0; p < pairs; p++) {
		if (kind == K_PAIRS_SEM) {
			r->ipc[p] = semget(IPC_PRIVATE, 2, IPC_CREAT | 0600);
			if (r->ipc[p] < 0 || semop(r->ipc[p], &post, 1))
				return -1;
		} else {
			r->ipc[p] = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
			if (r->ipc[p] < 0 ||
			    msgsnd(r->ipc[p], &first, sizeof(first.text), 0))
				return -1;
		}
	}
	return 0;
}

static void ipc_remove(struct run *r, enum kind kind, int pairs)
{
	int p;

	for (p = 0; p < pairs; p++) {
		if (kind == K_PAIRS_SEM)
			semctl(r->ipc[p], 0, IPC_RMID, (union semun){ 0 });
		else
			msgctl(r->ipc[p], IPC_RMID, NULL);
	}
}

/*
 * Run @w with @n threads (processes for K_PROCS) for @secs; returns the
 * operations per second, *@ops the count and *@elapsed the measured time.  @r lives in shared memory so
 * that forked children see @stop and report their counts.
 */
static double run_point(const struct workload *w, int n, double secs,
			uint64_t *ops, double *elapsed)
{
	struct run *r;
	pthread_t th[MAX_THREADS];
	struct arg args[MAX_THREADS];
	pid_t pids[MAX_THREADS];
	double t0, t1;
	int i, pairs = n / 2;

	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED) {
		fail("mmap", errno);
		return 0;
	}
	memset(r, 0, sizeof(*r));
	if ((w->kind == K_PAIRS_SEM || w->kind == K_PAIRS_MSG) &&
	    ipc_setup(r, w->kind, pairs)) {
		fail("ipc setup", errno);
		munmap(r, sizeof(*r));
		return 0;
	}
	if (w->setup && w->setup()) {
		munmap(r, sizeof(*r));
		return 0;
	}
	for (i = 0; i < n; i++) {
		args[i] = (struct arg){ .run = r, .i = i };
		if (w->kind == K_PROCS) {
			pids[i] = fork();
			if (pids[i] == 0) {
				pin(i);
				r->ops[i] = w->proc(r, i);
				_exit(0);
			}
			if (pids[i] < 0)
				fail("fork", errno);
		} else if (pthread_create(&th[i], NULL, w->fn, &args[i])) {
			fail("pthread_create", EAGAIN);
		}
	}
	while (__atomic_load_n(&r->ready, __ATOMIC_ACQUIRE) < n && !errors)
		usleep(1000);
	t0 = now();
	__atomic_store_n(&r->go, 1, __ATOMIC_RELEASE);
	usleep((useconds_t)(secs * 1e6));
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
	t1 = now();
	/* Wake a side blocked on its partner, which has stopped. */
	if (w->kind == K_PAIRS_SEM || w->kind == K_PAIRS_MSG)
		ipc_remove(r, w->kind, pairs);
	for (i = 0; i < n; i++) {
		if (w->kind == K_PROCS)
			waitpid(pids[i], NULL, 0);
		else
			pthread_join(th[i], NULL);
	}
	if (w->teardown)
		w->teardown();
	*ops = 0;
	*elapsed = t1 - t0;
	for (i = 0; i < n; i++)
		*ops += r->ops[i];
	munmap(r, sizeof(*r));
	return (double)*ops / (t1 - t0);
}

int main(int argc, char **argv)
{
	double secs = 1.0, rate, elapsed;
	char threads[128] = "1 2 4", *tok, *save;
	uint64_t ops;
	size_t w;
	int opt, fd, n, any;

	while ((opt = getopt(argc, argv, "s:t:")) != -1) {
		switch (opt) {
		case 's':
			secs = atof(optarg);
			break;
		case 't':
			snprintf(threads, sizeof(threads), "%s", optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-s seconds] [-t \"1 2 4\"] "
				"[workload...]\n", argv[0]);
			return 2;
		}
	}
	/*
	 * timer_many holds 20000 timers, each with a preallocated sigqueue
	 * that counts against RLIMIT_SIGPENDING (about 1900 in a 512 MB
	 * guest): lift it (root).
	 */
	{
		struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

		if (setrlimit(RLIMIT_SIGPENDING, &rl) &&
		    (getrlimit(RLIMIT_SIGPENDING, &rl) ||
		     rl.rlim_cur < 2 * MANY_TIMERS))
			fail("setrlimit RLIMIT_SIGPENDING", errno);
	}
	fd = open(BENCH_FILE, O_CREAT | O_WRONLY, 0644);
	if (fd < 0 || close(fd)) {
		fail("create " BENCH_FILE, errno);
		return 1;
	}
	printf("RK-BENCH-CONFIG seconds=%g threads=%s cpus=%ld\n", secs,
	       threads, sysconf(_SC_NPROCESSORS_ONLN));
	for (w = 0; w < sizeof(workloads) / sizeof(workloads[0]); w++) {
		const struct workload *wl = &workloads[w];
		char list[128];
		int i;

		any = optind >= argc;
		for (i = optind; i < argc; i++)
			any |= !strcmp(argv[i], wl->name);
		if (!any)
			continue;
		if (wl->kind == K_MEM) {
			double t0 = now(), v;

			/* No warm-up: the slabs it left would be counted
			 * as free room.
			 */
			v = mem_point(wl->mem, &n);
			if (v < 0)
				continue;
			printf("RK-BENCH %s 1 %.1f %d %.3f\n", wl->name, v, n,
			       now() - t0);
			fflush(stdout);
			continue;
		}
		snprintf(list, sizeof(list), "%s", threads);
		for (tok = strtok_r(list, " ,", &save); tok;
		     tok = strtok_r(NULL, " ,", &save)) {
			n = atoi(tok);
			/* Ping-pong: n pairs, 2n threads. */
			if (wl->kind == K_PAIRS_SEM || wl->kind == K_PAIRS_MSG)
				n *= 2;
			if (n < 1 || n > MAX_THREADS)
				continue;
			/* Warm-up (translation cache, slabs), not reported. */
			run_point(wl, n, secs / 5, &ops, &elapsed);
			rate = run_point(wl, n, secs, &ops, &elapsed);
			printf("RK-BENCH %s %d %.0f %llu %.3f\n", wl->name, n,
			       rate, (unsigned long long)ops, elapsed);
			fflush(stdout);
		}
	}
	unlink(BENCH_FILE);
	return errors ? 1 : 0;
}
