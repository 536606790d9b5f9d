// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One thread, one get + put pair per iteration, no contention: the cost
 * lockref's fast path adds over the spinlock + int it replaces (issue 12).
 *
 *   spinlock_int      lock, ++, unlock, lock, --, unlock
 *   lockref           lockref_get_not_dead + lockref_put_return, falling
 *                     back to lockref_put_or_lock (dput()'s shape)
 *   lockref_get_put   lockref_get + lockref_put_or_lock
 *   empty             the loop alone (subtracted from the others)
 *
 * Usage: lockref_pair_bench [VARIANT N]
 * Without arguments: every variant, N = 10^8, nanoseconds per pair in
 * this process's CPU time (CLOCK_PROCESS_CPUTIME_ID: less sensitive to a
 * loaded machine than wall clock), loop overhead subtracted.  With one
 * VARIANT and N it only runs that loop (each is a separate noinline
 * function bench_VARIANT, for callgrind --toggle-collect;
 * scripts/lockref_icount.sh counts instructions per pair that way).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compat/compat.h"
#include "lockref/lockref.h"

static struct lockref ref __attribute__((aligned(64)));
static struct {
	rk_spinlock_t lock;
	int count;
} locked __attribute__((aligned(64)));

/* Keeps the compiler from merging or hoisting iterations. */
#define BARRIER() __asm__ __volatile__("" ::: "memory")

__attribute__((noinline)) void bench_empty(long n);
__attribute__((noinline)) void bench_spinlock_int(long n);
__attribute__((noinline)) void bench_lockref(long n);
__attribute__((noinline)) void bench_lockref_get_put(long n);

void bench_empty(long n)
{
	for (long i = 0; i < n; i++)
		BARRIER();
}

void bench_spinlock_int(long n)
{
	for (long i = 0; i < n; i++) {
		rk_spin_lock(&locked.lock);
		locked.count++;
		rk_spin_unlock(&locked.lock);
		rk_spin_lock(&locked.lock);
		locked.count--;
		rk_spin_unlock(&locked.lock);
		BARRIER();
	}
}

void bench_lockref(long n)
{
	for (long i = 0; i < n; i++) {
		lockref_get_not_dead(&ref);
		if (lockref_put_return(&ref) < 0 && !lockref_put_or_lock(&ref))
			abort();	/* never: the base reference remains */
		BARRIER();
	}
}

void bench_lockref_get_put(long n)
{
	for (long i = 0; i < n; i++) {
		lockref_get(&ref);
		if (!lockref_put_or_lock(&ref))
			abort();
		BARRIER();
	}
}

static const struct {
	const char *name;
	void (*fn)(long n);
} variants[] = {
	{ "empty", bench_empty },
	{ "spinlock_int", bench_spinlock_int },
	{ "lockref", bench_lockref },
	{ "lockref_get_put", bench_lockref_get_put },
};
#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void check(void)
{
	if (ref.count != 1 || locked.count != 1) {
		fprintf(stderr, "lockref_pair_bench: count mismatch (%d %d)\n",
			ref.count, locked.count);
		abort();
	}
}

int main(int argc, char **argv)
{
	double ns[NVARIANTS][3];
	long n = 100000000;

	lockref_init(&ref, 1);
	rk_spin_lock_init(&locked.lock);
	locked.count = 1;
	if (argc == 3) {
		for (size_t v = 0; v < NVARIANTS; v++) {
			if (!strcmp(argv[1], variants[v].name)) {
				variants[v].fn(atol(argv[2]));
				check();
				return 0;
			}
		}
	}
	if (argc != 1) {
		fprintf(stderr, "usage: %s [empty|spinlock_int|lockref|"
			"lockref_get_put N]\n", argv[0]);
		return 2;
	}
	/* Three rounds, variants interleaved; the median of each. */
	for (int r = 0; r < 3; r++) {
		for (size_t v = 0; v < NVARIANTS; v++) {
			double t0 = cpu_ns();

			variants[v].fn(n);
			ns[v][r] = (cpu_ns() - t0) / (double)n;
		}
	}
	check();
	for (size_t v = 0; v < NVARIANTS; v++) {
		double *x = ns[v], t;

		/* sort 3 */
		if (x[0] > x[1]) { t = x[0]; x[0] = x[1]; x[1] = t; }
		if (x[1] > x[2]) { t = x[1]; x[1] = x[2]; x[2] = t; }
		if (x[0] > x[1]) { t = x[0]; x[0] = x[1]; x[1] = t; }
	}
	printf("| variant | ns/pair (CPU time, median of 3, loop subtracted) "
	       "| spinlock_int / variant |\n|---|---|---|\n");
	for (size_t v = 1; v < NVARIANTS; v++) {
		double d = ns[v][1] - ns[0][1];

		printf("| %s | %.2f | %.2fx |\n", variants[v].name, d,
		       (ns[1][1] - ns[0][1]) / d);
	}
	return 0;
}
