// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ridr_find_bulk() against the same ids looked up one by one with
 * ridr_find(), one thread, same process, same map, same id sequence.
 *
 * Maps: 10^6 live ids, dense (0..10^6-1, allocated lowest-first) and
 * sparse (random 31-bit ids): both trees are far larger than L2.  Batches
 * of 8, 16 and 32 ids drawn at random from the live ids; each batch in
 * one read-side section for both variants (ridr_read_lock(), then
 * B x ridr_find() or one ridr_find_bulk()).  Rounds interleave the
 * variants and batch sizes, so drift in machine load hits all alike;
 * the median over the rounds is reported, in million ids per second,
 * and the median of the rounds' ratios bulk / one by one (each measured
 * back to back).  Every lookup must find its entry.
 *
 * Progress on stderr, a markdown table on stdout, JSON (--json F, the
 * "groups"/"series" schema of benchmarks/plot.py, which draws the PNG).
 * --quick: 2*10^4 ids, 2 rounds of 0.05 s, passes of 2^14 ids (the smoke
 * test).  Timing is
 * measured here, never asserted by a test.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compat/compat.h"
#include "ridr/ridr.h"

#define MAX_ROUNDS 16
#define NB 3
#define NSHAPE 2

static const unsigned int batch[NB] = { 8, 16, 32 };
static const char *const shape_name[NSHAPE] = { "dense", "sparse31" };
static unsigned long dummy[2];	/* every entry points here */
static volatile unsigned long sink;
static unsigned long seq_len = 1UL << 20;	/* ids per pass */

static void die(const char *what)
{
	fprintf(stderr, "ridr_bulk bench: %s\n", what);
	exit(1);
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
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Fill @map with @n ids of @shape; the live ids go to @live. */
static void populate(struct ridr *map, int shape, unsigned long n,
		     unsigned long *live)
{
	uint64_t s = 4242;

	for (unsigned long i = 0; i < n; i++) {
		unsigned long id;
		int ret;

		if (shape == 0) {
			ret = ridr_alloc(map, dummy, 0, ULONG_MAX, &id);
		} else {
			do {
				id = xorshift(&s) & 0x7fffffffUL;
				ret = ridr_insert(map, id, dummy);
			} while (ret == -EBUSY);
		}
		if (ret)
			die("populate: insert failed");
		live[i] = id;
	}
}

/* One by one: B x ridr_find() per read-side section. */
static unsigned long run_find(const struct ridr *map, const unsigned long *seq,
			      unsigned int b)
{
	unsigned long hits = 0;

	for (unsigned long k = 0; k + b <= seq_len; k += b) {
		ridr_read_lock(map);
		for (unsigned int i = 0; i < b; i++)
			hits += ridr_find(map, seq[k + i]) == dummy;
		ridr_read_unlock(map);
	}
	return hits;
}

/* In bulk: one ridr_find_bulk() of B ids per read-side section. */
static unsigned long run_bulk(const struct ridr *map, const unsigned long *seq,
			      unsigned int b)
{
	void *out[32];
	unsigned long hits = 0;

	for (unsigned long k = 0; k + b <= seq_len; k += b) {
		int got;

		ridr_read_lock(map);
		got = ridr_find_bulk(map, seq + k, b, out);
		ridr_read_unlock(map);
		hits += got > 0 ? (unsigned long)got : 0;
	}
	return hits;
}

/* Million ids per second over whole passes of the sequence. */
static double measure(const struct ridr *map, const unsigned long *seq,
		      unsigned int b, bool bulk, double seconds)
{
	unsigned long done = 0, want = seq_len / b * b;
	double t0 = now(), t;

	do {
		unsigned long hits = bulk ? run_bulk(map, seq, b) :
					    run_find(map, seq, b);

		if (hits != want)
			die("a live id was not found");
		done += hits;
		t = now();
	} while (t - t0 < seconds);
	sink = done;
	return (double)done / (t - t0) / 1e6;
}

int main(int argc, char **argv)
{
	static double r[NSHAPE][NB][2][MAX_ROUNDS];
	double med[NSHAPE][NB][2], ratio[NSHAPE][NB], q[MAX_ROUNDS];
	size_t bytes[NSHAPE];
	unsigned long n = 1000000;
	int rounds = 5;
	double seconds = 0.5;
	bool quick = false;
	const char *json = NULL;
	long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
	unsigned long *live, *seq;
	FILE *j;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			quick = true;
			n = 20000;
			rounds = 2;
			seconds = 0.05;
			seq_len = 1UL << 14;
		} else if (!strcmp(argv[i], "--json") && i + 1 < argc) {
			json = argv[++i];
		} else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
			rounds = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			seconds = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
			i++;	/* from scripts/bench.sh: 1 thread here */
		} else {
			fprintf(stderr, "usage: %s [--quick] [--rounds R] "
					"[--seconds S] [--json F]\n", argv[0]);
			return 2;
		}
	}
	if (rounds < 1 || rounds > MAX_ROUNDS || !(seconds > 0))
		die("--rounds 1..16, --seconds > 0");
	live = malloc(n * sizeof(*live));
	seq = malloc(seq_len * sizeof(*seq));
	if (!live || !seq)
		die("out of memory");
	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	for (int sh = 0; sh < NSHAPE; sh++) {
		struct ridr map;
		uint64_t s = 77;

		ridr_init(&map);
		fprintf(stderr, "[ridr_bulk] %s: %lu ids ...\n",
			shape_name[sh], n);
		populate(&map, sh, n, live);
		bytes[sh] = ridr_memory(&map);
		for (unsigned long i = 0; i < seq_len; i++)
			seq[i] = live[xorshift(&s) % n];
		for (int round = 0; round < rounds; round++) {
			for (int b = 0; b < NB; b++) {
				for (int v = 0; v < 2; v++)
					r[sh][b][v][round] = measure(
						&map, seq, batch[b], v,
						seconds);
				fprintf(stderr, "[ridr_bulk] %s, round %d/%d, "
					"batch %u: %.1f vs %.1f M ids/s\n",
					shape_name[sh], round + 1, rounds,
					batch[b], r[sh][b][0][round],
					r[sh][b][1][round]);
			}
		}
		for (int b = 0; b < NB; b++) {
			/* Ratios within a round: back to back, so the load
			 * of the machine changes least between the two.
			 */
			for (int round = 0; round < rounds; round++)
				q[round] = r[sh][b][1][round] /
					   r[sh][b][0][round];
			ratio[sh][b] = median(q, rounds);
			for (int v = 0; v < 2; v++)
				med[sh][b][v] = median(r[sh][b][v], rounds);
		}
		ridr_destroy(&map);
		rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	}
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	free(live);
	free(seq);

	printf("\n### ridr_bulk\n\nmillion lookups of random live ids per "
	       "second, one thread, one read-side section per batch (median "
	       "of %d rounds of %.2f s); %lu ids; L2 %ld KiB; tree %zu KiB "
	       "dense, %zu KiB sparse\n\n| map | batch | ridr_find one by "
	       "one | ridr_find_bulk | bulk / one by one (median of the "
	       "rounds' ratios) |\n"
	       "|---|---|---|---|---|\n", rounds, seconds, n, l2 / 1024,
	       bytes[0] / 1024, bytes[1] / 1024);
	for (int sh = 0; sh < NSHAPE; sh++)
		for (int b = 0; b < NB; b++)
			printf("| %s | %u | %.1f | %.1f | %.2fx |\n",
			       shape_name[sh], batch[b], med[sh][b][0],
			       med[sh][b][1], ratio[sh][b]);
	if (!json)
		return 0;
	j = fopen(json, "w");
	if (!j)
		die("cannot write json");
	fprintf(j, "{\n  \"benchmark\": \"ridr_bulk\",\n  \"title\": "
		   "\"random live ids, %lu-id maps, 1 thread (map and "
		   "batch size)\",\n"
		   "  \"unit\": \"million ids / s\",\n  \"log\": true,\n"
		   "  \"quick\": %s,\n"
		   "  \"rounds\": %d,\n  \"seconds\": %g,\n  \"ids\": %lu,\n"
		   "  \"l2_bytes\": %ld,\n  \"tree_bytes\": [%zu, %zu],\n"
		   "  \"groups\": [", n, quick ? "true" : "false", rounds,
		seconds, n, l2, bytes[0], bytes[1]);
	for (int sh = 0; sh < NSHAPE; sh++)
		for (int b = 0; b < NB; b++)
			fprintf(j, "%s\"%s %u\"", sh || b ? ", " : "",
				sh ? "sparse" : "dense", batch[b]);
	fprintf(j, "],\n  \"series\": [\n");
	for (int v = 0; v < 2; v++) {
		fprintf(j, "    {\"name\": \"%s\", \"values\": [",
			v ? "ridr_find_bulk" : "ridr_find one by one");
		for (int sh = 0; sh < NSHAPE; sh++)
			for (int b = 0; b < NB; b++)
				fprintf(j, "%s%.3f", sh || b ? ", " : "",
					med[sh][b][v]);
		fprintf(j, "]}%s\n", v ? "" : ",");
	}
	fprintf(j, "  ],\n  \"ratio_bulk_over_find\": [");
	for (int sh = 0; sh < NSHAPE; sh++)
		for (int b = 0; b < NB; b++)
			fprintf(j, "%s%.3f", sh || b ? ", " : "",
				ratio[sh][b]);
	fprintf(j, "]\n}\n");
	fclose(j);
	fprintf(stderr, "[ridr_bulk] wrote %s\n", json);
	return 0;
}
