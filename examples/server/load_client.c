// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * load_client.c - requests/s of handle_server in ridr mode and in
 * global-lock mode, side by side, in one run.
 *
 * For each round and each mode (interleaved, so drift in machine load hits
 * both alike) it starts the server binary on an ephemeral loopback port,
 * creates --ids objects, then runs --threads client connections for
 * --seconds.  Each connection sends --pipeline requests at a time (GET of
 * a random id, or SET with probability --set-pct %) and reads as many
 * replies; every reply must be "OK ...".  It reports the median, min and
 * max requests/s over the rounds and the ridr/lock ratio as a markdown
 * table.  Timing is measured, never asserted; the exit status is non-zero
 * only if a reply was wrong or a server did not exit cleanly.
 *
 * Usage: load_client SERVER [--threads T] [--seconds S] [--rounds R]
 *                    [--ids N] [--pipeline D] [--set-pct P] [--quick]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64
#define MAX_ROUNDS 32

static struct {
	const char *server;
	int threads, rounds, pipeline, set_pct;
	double seconds;
	unsigned long nids;
} opt = { .threads = 4, .rounds = 3, .pipeline = 8, .set_pct = 10,
	  .seconds = 2.0, .nids = 1000 };

static unsigned long *ids;	/* written before the workers start */
static int stop;		/* relaxed: only tells workers to finish */
static int bad;			/* wrong replies (atomic) */

struct server {
	pid_t pid;
	int port;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Start the server on port 0 and read the port it prints. */
static struct server server_start(bool global_lock)
{
	struct server s = { 0 };
	char line[128];
	int pfd[2];
	FILE *f;

	if (pipe(pfd))
		die("pipe");
	s.pid = fork();
	if (s.pid < 0)
		die("fork");
	if (s.pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execl(opt.server, opt.server, "--port", "0",
		      global_lock ? "--global-lock" : (char *)NULL,
		      (char *)NULL);
		perror("exec server");
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	if (!f || !fgets(line, sizeof(line), f) ||
	    sscanf(line, "listening on 127.0.0.1:%d", &s.port) != 1) {
		fprintf(stderr, "load_client: server printed no port\n");
		exit(1);
	}
	fclose(f);
	return s;
}

static bool server_stop(struct server s)
{
	int status;

	kill(s.pid, SIGTERM);
	if (waitpid(s.pid, &status, 0) != s.pid)
		die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "load_client: server exited with status %#x\n",
			status);
		return false;
	}
	return true;
}

static int connect_to(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)port);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		die("connect 127.0.0.1");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die("send");
		p += w;
		n -= (size_t)w;
	}
}

/* Read @n reply lines; count those not starting with "OK".  The first
 * line's text goes to @first (if not NULL). */
struct reader {
	char buf[65536];
	size_t have;
};

static void read_replies(int fd, struct reader *r, int n, char *first,
			 size_t first_size)
{
	while (n > 0) {
		char *nl = memchr(r->buf, '\n', r->have);
		ssize_t got;

		if (nl) {
			size_t len = (size_t)(nl - r->buf);

			if (len < 2 || memcmp(r->buf, "OK", 2))
				__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
			if (first) {
				snprintf(first, first_size, "%.*s", (int)len,
					 r->buf);
				first = NULL;
			}
			r->have -= len + 1;
			memmove(r->buf, nl + 1, r->have);
			n--;
			continue;
		}
		if (r->have == sizeof(r->buf)) {
			fprintf(stderr, "load_client: reply line too long\n");
			exit(1);
		}
		got = recv(fd, r->buf + r->have, sizeof(r->buf) - r->have, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			fprintf(stderr, "load_client: server closed\n");
			exit(1);
		}
		r->have += (size_t)got;
	}
}

struct worker {
	pthread_t tid;
	int fd;
	uint64_t seed;
	uint64_t done;
	struct reader r;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char req[64 * 128];

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		size_t len = 0;
		int i;

		for (i = 0; i < opt.pipeline; i++) {
			unsigned long id = ids[rnd(&w->seed) % opt.nids];
			char *p = req + len;

			if ((int)(rnd(&w->seed) % 100) < opt.set_pct)
				len += (size_t)sprintf(p, "SET %lu v%lu\n", id,
						       (unsigned long)i);
			else
				len += (size_t)sprintf(p, "GET %lu\n", id);
		}
		send_all(w->fd, req, len);
		read_replies(w->fd, &w->r, opt.pipeline, NULL, 0);
		w->done += (uint64_t)opt.pipeline;
	}
	return NULL;
}

/* One measurement: requests/s of one server mode. */
static double measure(bool global_lock)
{
	struct server s = server_start(global_lock);
	static struct worker w[MAX_THREADS];
	struct reader *r = &w[0].r;
	double t0, t1;
	uint64_t total = 0;
	unsigned long i;
	char line[128];
	int t, fd;

	/* Create the objects over one connection, one request at a time. */
	fd = connect_to(s.port);
	r->have = 0;
	for (i = 0; i < opt.nids; i++) {
		char req[64];
		int n = snprintf(req, sizeof(req), "NEW value%lu\n", i);

		send_all(fd, req, (size_t)n);
		read_replies(fd, r, 1, line, sizeof(line));
		if (sscanf(line, "OK %lu", &ids[i]) != 1) {
			fprintf(stderr, "load_client: NEW answered '%s'\n", line);
			exit(1);
		}
	}
	close(fd);

	__atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
	for (t = 0; t < opt.threads; t++) {
		w[t].fd = connect_to(s.port);
		w[t].seed = 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1);
		w[t].done = 0;
		w[t].r.have = 0;
	}
	t0 = now();
	/* pthread_create orders ids[] and w[t] before each worker. */
	for (t = 0; t < opt.threads; t++)
		if (pthread_create(&w[t].tid, NULL, worker_main, &w[t]))
			die("pthread_create");
	usleep((useconds_t)(opt.seconds * 1e6));
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (t = 0; t < opt.threads; t++) {
		pthread_join(w[t].tid, NULL);	/* orders w[t].done */
		total += w[t].done;
		close(w[t].fd);
	}
	t1 = now();
	if (!server_stop(s))
		__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
	return (double)total / (t1 - t0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: load_client SERVER [--threads T] [--seconds S] [--rounds R]\n"
		"                   [--ids N] [--pipeline D] [--set-pct P] [--quick]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double res[2][MAX_ROUNDS], med[2];
	const char *names[2] = { "ridr (RCU lookups)", "global lock" };
	int i, m, k;

	if (argc < 2 || argv[1][0] == '-')
		usage();
	opt.server = argv[1];
	for (i = 2; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--quick")) {
			opt.threads = 2;
			opt.seconds = 0.3;
			opt.rounds = 1;
			opt.nids = 100;
			continue;
		}
		if (!v)
			usage();
		if (!strcmp(argv[i], "--threads"))
			opt.threads = atoi(v);
		else if (!strcmp(argv[i], "--seconds"))
			opt.seconds = atof(v);
		else if (!strcmp(argv[i], "--rounds"))
			opt.rounds = atoi(v);
		else if (!strcmp(argv[i], "--ids"))
			opt.nids = strtoul(v, NULL, 10);
		else if (!strcmp(argv[i], "--pipeline"))
			opt.pipeline = atoi(v);
		else if (!strcmp(argv[i], "--set-pct"))
			opt.set_pct = atoi(v);
		else
			usage();
		i++;
	}
	if (opt.threads < 1 || opt.threads > MAX_THREADS || opt.rounds < 1 ||
	    opt.rounds > MAX_ROUNDS || opt.pipeline < 1 || opt.pipeline > 64 ||
	    opt.nids < 1 || opt.nids > 1000000 || opt.seconds <= 0 ||
	    opt.set_pct < 0 || opt.set_pct > 100)
		usage();
	ids = calloc(opt.nids, sizeof(*ids));
	if (!ids)
		die("calloc");

	for (k = 0; k < opt.rounds; k++) {
		for (m = 0; m < 2; m++) {
			res[m][k] = measure(m == 1);
			fprintf(stderr, "round %d/%d %-18s %12.0f req/s\n", k + 1,
				opt.rounds, names[m], res[m][k]);
		}
	}
	printf("handle_server load: %d connections, pipeline %d, %lu ids, "
	       "%d%% SET / %d%% GET, %.1f s x %d rounds\n\n",
	       opt.threads, opt.pipeline, opt.nids, opt.set_pct,
	       100 - opt.set_pct, opt.seconds, opt.rounds);
	printf("| mode | req/s (median) | min | max |\n|---|---|---|---|\n");
	for (m = 0; m < 2; m++) {
		qsort(res[m], (size_t)opt.rounds, sizeof(double), cmp_double);
		med[m] = res[m][opt.rounds / 2];
		printf("| %s | %.0f | %.0f | %.0f |\n", names[m], med[m],
		       res[m][0], res[m][opt.rounds - 1]);
	}
	printf("\nridr / global lock: %.2fx\n", med[0] / med[1]);
	free(ids);
	if (__atomic_load_n(&bad, __ATOMIC_RELAXED)) {
		fprintf(stderr, "load_client: %d wrong replies or unclean exits\n",
			bad);
		return 1;
	}
	return 0;
}
