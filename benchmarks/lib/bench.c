// SPDX-License-Identifier: LGPL-2.1-or-later
#define _GNU_SOURCE
#include "benchmarks/lib/bench.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

int bench_nproc(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--quick] [--rounds N] [--seconds S] "
		"[--threads a,b,c] [--json PATH]\n"
		"  --quick  1 round of 0.05 s per point (smoke test; the "
		"figures mean nothing)\n", prog);
	exit(2);
}

void bench_parse_args(struct bench_config *cfg, int argc, char **argv)
{
	int np = bench_nproc();

	cfg->nthreads = 0;
	for (int t = 1; t <= np && cfg->nthreads < 15; t++)
		cfg->threads[cfg->nthreads++] = t;
	cfg->threads[cfg->nthreads++] = 2 * np;	/* oversubscribed */
	cfg->rounds = 5;
	cfg->seconds = 0.5;
	cfg->json_path = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			cfg->rounds = 1;
			cfg->seconds = 0.05;
		} else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
			cfg->rounds = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			cfg->seconds = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--json") && i + 1 < argc) {
			cfg->json_path = argv[++i];
		} else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
			char *s = argv[++i], *tok, *save = NULL;

			cfg->nthreads = 0;
			for (tok = strtok_r(s, ",", &save);
			     tok && cfg->nthreads < 16;
			     tok = strtok_r(NULL, ",", &save))
				cfg->threads[cfg->nthreads++] = atoi(tok);
		} else {
			usage(argv[0]);
		}
	}
	if (cfg->rounds < 1 || cfg->seconds <= 0 || cfg->nthreads < 1)
		usage(argv[0]);
	for (int i = 0; i < cfg->nthreads; i++)
		if (cfg->threads[i] < 1 || cfg->threads[i] > 256)
			usage(argv[0]);
}

struct worker {
	const struct bench_variant *v;
	int tid;
	int nthreads;
	const int *stop;
	int *ready;
	uint64_t ops;
	pthread_t thread;
};

static void *worker_main(void *p)
{
	struct worker *w = p;
	cpu_set_t set;

	/* Pin thread i to CPU i mod nproc: oversubscribed points stack
	 * threads on CPUs deterministically. */
	CPU_ZERO(&set);
	CPU_SET(w->tid % bench_nproc(), &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	__atomic_add_fetch(w->ready, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(w->ready, __ATOMIC_ACQUIRE) <= w->nthreads)
		sched_yield();	/* main adds one more to start everyone */
	w->ops = w->v->run(w->tid, w->nthreads, w->stop);
	return NULL;
}

static double measure(const struct bench_variant *v, int nthreads,
		      double seconds, double *extra_rate)
{
	struct worker *w = calloc((size_t)nthreads, sizeof(*w));
	int stop = 0;
	int ready = 0;
	struct timespec t0, t1, nap;
	uint64_t total = 0;
	double elapsed;

	if (!w) {
		perror("calloc");
		exit(1);
	}
	if (v->setup)
		v->setup(nthreads);
	for (int i = 0; i < nthreads; i++) {
		w[i] = (struct worker){ .v = v, .tid = i, .nthreads = nthreads,
					.stop = &stop, .ready = &ready };
		if (pthread_create(&w[i].thread, NULL, worker_main, &w[i])) {
			perror("pthread_create");
			exit(1);
		}
	}
	while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) < nthreads)
		sched_yield();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	__atomic_add_fetch(&ready, 1, __ATOMIC_ACQ_REL);
	nap.tv_sec = (time_t)seconds;
	nap.tv_nsec = (long)((seconds - (double)nap.tv_sec) * 1e9);
	nanosleep(&nap, NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < nthreads; i++) {
		pthread_join(w[i].thread, NULL);
		total += w[i].ops;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	elapsed = (double)(t1.tv_sec - t0.tv_sec) +
		  (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (v->teardown)
		v->teardown();
	*extra_rate = v->extra ? (double)v->extra() / elapsed : 0;
	free(w);
	return (double)total / elapsed;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static const char *cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown");
	if (!f)
		return buf;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && c) {
			snprintf(buf, len, "%s", c + 2);
			buf[strcspn(buf, "\n")] = 0;
			break;
		}
	}
	fclose(f);
	return buf;
}

int bench_run(struct bench_config *cfg)
{
	int nv = cfg->nvariants, nt = cfg->nthreads, nr = cfg->rounds;
	double *res = calloc((size_t)(nv * nt * nr), sizeof(double));
	double *xres = calloc((size_t)(nv * nt * nr), sizeof(double));
	double med[16][16], lo[16][16], hi[16][16], xmed[16][16];
	char model[128];
	struct utsname u;
	FILE *j;

	if (!res || !xres || nv > 16) {
		fprintf(stderr, "bench: bad configuration\n");
		return 1;
	}
#define RES(v, t, r) res[((v) * nt + (t)) * nr + (r)]
	for (int r = 0; r < nr; r++) {
		for (int t = 0; t < nt; t++) {
			for (int v = 0; v < nv; v++) {
				fprintf(stderr, "[%s] round %d/%d, %d threads, "
					"%s ...", cfg->name, r + 1, nr,
					cfg->threads[t], cfg->variants[v].name);
				RES(v, t, r) = measure(&cfg->variants[v],
						       cfg->threads[t],
						       cfg->seconds,
						       &xres[((v) * nt + (t)) * nr + (r)]);
				fprintf(stderr, " %.3g ops/s\n", RES(v, t, r));
			}
		}
	}
	for (int v = 0; v < nv; v++) {
		for (int t = 0; t < nt; t++) {
			double tmp[64], xtmp[64];
			int n = nr < 64 ? nr : 64;

			for (int r = 0; r < n; r++) {
				tmp[r] = RES(v, t, r);
				xtmp[r] = xres[(v * nt + t) * nr + r];
			}
			qsort(tmp, (size_t)n, sizeof(double), cmp_double);
			qsort(xtmp, (size_t)n, sizeof(double), cmp_double);
			med[v][t] = n % 2 ? tmp[n / 2]
					  : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
			xmed[v][t] = n % 2 ? xtmp[n / 2]
					   : (xtmp[n / 2 - 1] + xtmp[n / 2]) / 2;
			lo[v][t] = tmp[0];
			hi[v][t] = tmp[n - 1];
		}
	}

	/* Markdown table: median Mops/s per variant, then ours/baseline. */
	printf("\n### %s\n\n%s\n\nMirrors: %s\n\n| threads |", cfg->name,
	       cfg->title, cfg->mirrors);
	for (int v = 0; v < nv; v++)
		printf(" %s (Mops/s) |", cfg->variants[v].name);
	for (int v = 0; v < nv; v++)
		if (v != cfg->ours)
			printf(" %s / %s |", cfg->variants[cfg->ours].name,
			       cfg->variants[v].name);
	printf("\n|---|");
	for (int v = 0; v < 2 * nv - 1; v++)
		printf("---|");
	printf("\n");
	for (int t = 0; t < nt; t++) {
		printf("| %d |", cfg->threads[t]);
		for (int v = 0; v < nv; v++)
			printf(" %.2f |", med[v][t] / 1e6);
		for (int v = 0; v < nv; v++)
			if (v != cfg->ours && med[v][t] > 0)
				printf(" %.2fx |", med[cfg->ours][t] / med[v][t]);
			else if (v != cfg->ours)
				printf(" - |");
		printf("\n");
	}
	if (cfg->extra_name) {
		printf("\nDuring the same runs, %s (M/s):\n\n| threads |",
		       cfg->extra_name);
		for (int v = 0; v < nv; v++)
			if (cfg->variants[v].extra)
				printf(" %s |", cfg->variants[v].name);
		printf("\n|---|");
		for (int v = 0; v < nv; v++)
			if (cfg->variants[v].extra)
				printf("---|");
		printf("\n");
		for (int t = 0; t < nt; t++) {
			printf("| %d |", cfg->threads[t]);
			for (int v = 0; v < nv; v++)
				if (cfg->variants[v].extra)
					printf(" %.3f |", xmed[v][t] / 1e6);
			printf("\n");
		}
	}
	printf("\n(median of %d rounds of %.2f s; variants interleaved)\n",
	       nr, cfg->seconds);
	fflush(stdout);

	if (cfg->json_path) {
		j = fopen(cfg->json_path, "w");
		if (!j) {
			perror(cfg->json_path);
			free(res);
			return 1;
		}
		uname(&u);
		fprintf(j, "{\n  \"benchmark\": \"%s\",\n  \"title\": \"%s\",\n"
			   "  \"mirrors\": \"%s\",\n  \"machine\": {\"cpu\": "
			   "\"%s\", \"nproc\": %d, \"kernel\": \"%s %s\"},\n"
			   "  \"rounds\": %d,\n  \"seconds\": %g,\n"
			   "  \"baseline\": \"%s\",\n  \"ours\": \"%s\",\n"
			   "  \"threads\": [",
			cfg->name, cfg->title, cfg->mirrors,
			cpu_model(model, sizeof(model)), bench_nproc(),
			u.sysname, u.release, nr, cfg->seconds,
			cfg->variants[cfg->baseline].name,
			cfg->variants[cfg->ours].name);
		for (int t = 0; t < nt; t++)
			fprintf(j, "%s%d", t ? ", " : "", cfg->threads[t]);
		fprintf(j, "],\n  \"variants\": [\n");
		for (int v = 0; v < nv; v++) {
			fprintf(j, "    {\"name\": \"%s\", \"desc\": \"%s\", "
				   "\"median\": [",
				cfg->variants[v].name, cfg->variants[v].desc);
			for (int t = 0; t < nt; t++)
				fprintf(j, "%s%.17g", t ? ", " : "", med[v][t]);
			fprintf(j, "], \"min\": [");
			for (int t = 0; t < nt; t++)
				fprintf(j, "%s%.17g", t ? ", " : "", lo[v][t]);
			fprintf(j, "], \"max\": [");
			for (int t = 0; t < nt; t++)
				fprintf(j, "%s%.17g", t ? ", " : "", hi[v][t]);
			fprintf(j, "]");
			if (cfg->variants[v].extra) {
				fprintf(j, ", \"extra_median\": [");
				for (int t = 0; t < nt; t++)
					fprintf(j, "%s%.17g", t ? ", " : "",
						xmed[v][t]);
				fprintf(j, "]");
			}
			fprintf(j, "}%s\n", v + 1 < nv ? "," : "");
		}
		fprintf(j, "  ],\n  \"ratio_ours_over_baseline\": [");
		for (int t = 0; t < nt; t++) {
			/* A baseline that completed nothing has no ratio. */
			if (med[cfg->baseline][t] > 0)
				fprintf(j, "%s%.17g", t ? ", " : "",
					med[cfg->ours][t] /
					med[cfg->baseline][t]);
			else
				fprintf(j, "%snull", t ? ", " : "");
		}
		fprintf(j, "]");
		if (cfg->extra_name)
			fprintf(j, ",\n  \"extra_name\": \"%s\"", cfg->extra_name);
		fprintf(j, "\n}\n");
		fclose(j);
		fprintf(stderr, "[%s] wrote %s\n", cfg->name, cfg->json_path);
	}
#undef RES
	free(res);
	free(xres);
	return 0;
}
