// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Memory of a per-process POSIX-timer id map (kernel patch 4): bytes of
 * ridr objects per live timer, as ridr_memory() counts them (the kernel
 * build has the same object sizes on 64-bit), for
 *
 *   created   n timers created one after another (ids 0..n-1, cyclic);
 *   churned   n live timers after 100 n cyclic create/delete pairs of a
 *             random live one (ids spread over a window past the start);
 *   restored  n timers at random ids in [0, INT_MAX] (a CRIU restore,
 *             the sparse worst case);
 *   thinned   64 n timers created one after another, then all but ids
 *             0, 64, 128, ... deleted (long-lived timers among many
 *             short-lived ones; the in-VM timer_mem_sparse workload of
 *             kernel-backport/bench.sh measures the same pattern);
 *
 * for n = 1 .. 20000.  Prints a markdown table and, with --json F,
 * writes it as JSON.  Sizes, not timing: deterministic for a seed.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/compat.h"
#include "ridr/ridr.h"

static int dummy;

static unsigned long xorshift(unsigned long *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717UL;
}

static void die(const char *what)
{
	fprintf(stderr, "ridr_timer_memory_bench: %s\n", what);
	exit(1);
}

#define THIN 64

/* Bytes per live timer for @pattern with @n timers. */
static double per_timer(int pattern, unsigned long n)
{
	unsigned long made = pattern == 3 ? THIN * n : n;
	unsigned long *ids = malloc(made * sizeof(*ids)), s = 42, id;
	struct ridr m;
	double b;

	if (!ids)
		die("out of memory");
	ridr_init(&m);
	for (unsigned long i = 0; i < made; i++) {
		if (pattern == 2) {
			do {
				id = xorshift(&s) % INT_MAX;
			} while (ridr_alloc(&m, &dummy, id, id, &ids[i]));
		} else if (ridr_alloc_cyclic(&m, &dummy, 0, INT_MAX, &ids[i])) {
			die("alloc");
		}
	}
	if (pattern == 1) {
		for (unsigned long k = 0; k < 100 * n; k++) {
			unsigned long i = xorshift(&s) % n;

			if (ridr_remove(&m, ids[i], NULL) ||
			    ridr_alloc_cyclic(&m, &dummy, 0, INT_MAX, &ids[i]))
				die("churn");
		}
	}
	for (unsigned long i = 0; pattern == 3 && i < made; i++)
		if (i % THIN && ridr_remove(&m, ids[i], NULL))
			die("thin");
	b = (double)ridr_memory(&m) / (double)n;
	ridr_destroy(&m);
	free(ids);
	return b;
}

int main(int argc, char **argv)
{
	static const unsigned long ns[] = { 1, 2, 4, 16, 64, 256, 2048,
					    20000 };
	static const char *const name[] = { "created", "churned",
					    "restored", "thinned" };
	const char *json = NULL;
	FILE *j = NULL;

	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--json"))
			json = argv[i + 1];
	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	if (json && !(j = fopen(json, "w")))
		die("cannot write json");
	printf("\n### ridr_timer_memory\n\nbytes of ridr objects per live "
	       "timer in a per-process map (ridr_memory() / n)\n\n| timers |");
	for (int p = 0; p < 4; p++)
		printf(" %s |", name[p]);
	printf("\n|---|---|---|---|---|\n");
	if (j)
		fprintf(j, "{\n  \"benchmark\": \"ridr_timer_memory\",\n"
			   "  \"unit\": \"bytes per live timer\",\n  \"rows\": [");
	for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
		double v[4];

		fprintf(stderr, "[ridr_timer_memory] %lu timers ...\n", ns[k]);
		for (int p = 0; p < 4; p++)
			v[p] = per_timer(p, ns[k]);
		printf("| %lu | %.1f | %.1f | %.1f | %.1f |\n", ns[k], v[0], v[1],
		       v[2], v[3]);
		if (j)
			fprintf(j, "%s\n    {\"timers\": %lu, \"created\": %.2f, "
				   "\"churned\": %.2f, \"restored\": %.2f, "
				   "\"thinned\": %.2f}",
				k ? "," : "", ns[k], v[0], v[1], v[2], v[3]);
	}
	if (j) {
		fprintf(j, "\n  ]\n}\n");
		fclose(j);
	}
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	return 0;
}
