/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench.h - side-by-side throughput harness shared by the benchmarks.
 *
 * A benchmark registers variants (old design, ours, the physical limit)
 * and a list of thread counts.  For each round, each thread count and
 * each variant (interleaved, so drift in machine load hits all variants
 * alike) it runs T pinned threads for a fixed time, each calling the
 * variant's op in a loop and counting operations.  It reports median,
 * min and max ops/s over the rounds, ratios against a baseline variant
 * at each thread count, progress on stderr, a markdown table on stdout
 * and JSON for the plotting script.  Timing is measured, never asserted.
 */
#ifndef RK_BENCH_H
#define RK_BENCH_H

#include <stdbool.h>
#include <stdint.h>

struct bench_variant {
	const char *name;
	const char *desc;
	/* Optional per-point setup/teardown (before/after each run). */
	void (*setup)(int nthreads);
	void (*teardown)(void);
	/* Per-thread loop: run until bench_stopped(stop), return the number
	 * of operations done. */
	uint64_t (*run)(int tid, int nthreads, const int *stop);
	/* Optional: operations done during the measurement by threads the
	 * variant started itself (e.g. a writer), read after teardown. */
	uint64_t (*extra)(void);
};

/* The harness sets *stop (release) when the measurement time is up. */
static inline bool bench_stopped(const int *stop)
{
	return __atomic_load_n(stop, __ATOMIC_RELAXED) != 0;
}

struct bench_config {
	const char *name;	/* benchmark id, e.g. "lockref_fstat2" */
	const char *title;
	const char *mirrors;	/* historical result it reproduces */
	const struct bench_variant *variants;
	int nvariants;
	int baseline;		/* index of the "old design" variant */
	int ours;		/* index of our variant */
	int threads[16];
	int nthreads;
	int rounds;
	double seconds;		/* per measurement */
	const char *json_path;	/* NULL: no JSON */
	const char *extra_name;	/* what variant->extra counts, if any */
};

/* Parses --quick, --rounds N, --seconds S, --threads a,b,c, --json PATH
 * into @cfg (defaults: 1..nproc plus 2*nproc, 5 rounds, 0.5 s). */
void bench_parse_args(struct bench_config *cfg, int argc, char **argv);
/* Runs everything and prints/writes results; returns 0. */
int bench_run(struct bench_config *cfg);

/* Number of online CPUs. */
int bench_nproc(void);

#endif /* RK_BENCH_H */
