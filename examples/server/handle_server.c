// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * handle_server.c - a multi-threaded TCP server that hands out integer
 * handles (the way servers hand out sessions, timers or queue ids), built
 * on ridr + lockref.  Walkthrough and measurements: docs/using.md.
 *
 * Protocol: one request per line on 127.0.0.1, one reply line each.
 *
 *   NEW <value>        OK <id>
 *   GET <id>           OK <value>           | ERR NOT_FOUND
 *   SET <id> <value>   OK                   | ERR NOT_FOUND
 *   DEL <id>           OK                   | ERR NOT_FOUND
 *   STATS              OK ids=N created=N deleted=N objects=N conns=N
 *                         requests=N errors=N mode=ridr|lock
 *   QUIT               OK bye, then the server closes the connection
 *
 * A value is 1..VALUE_MAX printable non-space ASCII bytes.  Ids are
 * decimal, 1..max_id (--max-id).  Every malformed request gets one "ERR
 * <reason>" line and the connection stays usable; only a line longer
 * than LINE_MAX (no newline within LINE_MAX bytes) gets "ERR line too
 * long" and the connection is closed, since the rest of that line cannot
 * be told apart from the next request.
 *
 * Threads: one per connection (blocking I/O), capped at --max-conns; the
 * main thread accepts and handles signals.  Why not epoll: a request is
 * a few microseconds of map work and no request blocks on anything but
 * its own socket, so an event loop would buy nothing but code; what this
 * example must show is many threads reading the map concurrently, which
 * thread-per-connection gives directly.  With thousands of mostly idle
 * clients an epoll loop per core would be the better shape; the map code
 * (obj_get/obj_put below) would stay the same.
 *
 * Object lifetime (the pattern of ridr.h and lockref.h):
 *  1. NEW fills in an object with count 1 (the map's reference) and
 *     publishes it with ridr_alloc_cyclic(), which orders the stores
 *     before the id becomes findable (release).  Cyclic ids: a deleted id
 *     is not handed out again until the range wraps, so a stale id held
 *     by a client answers NOT_FOUND instead of naming another client's
 *     object.
 *  2. A request looks the id up with ridr_find() inside an RCU read-side
 *     section and takes a reference with lockref_get_not_dead() before
 *     leaving it; it then uses the object outside RCU and drops the
 *     reference with obj_put().
 *  3. DEL removes the id (no new lookup can find the object), then drops
 *     the map's reference.  Whoever drops the last reference marks the
 *     object dead under its lock and frees it after a grace period:
 *     a lookup that found the pointer just before the removal may still
 *     be about to call lockref_get_not_dead() on it, and fails there
 *     because the object is dead.  Marking it dead at DEL time instead
 *     would strand the references requests still hold.
 *  4. The value is protected by the object's lockref spinlock (as the
 *     kernel's d_lock protects a dentry's name).
 *
 * --global-lock (baseline): the same map and objects, but every map
 * access, lookups included, runs under one global mutex and lookups use
 * no RCU: the design ridr replaces.  Object release is unchanged, so the
 * two modes differ only in how lookups and map updates synchronise.
 */
#define _GNU_SOURCE
#include "lockref/lockref.h"
#include "ridr/ridr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define LINE_MAX_LEN 128	/* request bytes before the newline */
#define VALUE_MAX 64		/* bytes of a value */
#define OUT_BUF 8192		/* replies batched per read */

struct obj {
	struct lockref ref;	/* the map's reference + one per request */
	unsigned int len;	/* value length; lock held */
	char value[VALUE_MAX];	/* lock held */
	struct rk_rcu_head rcu;
};

struct conn {
	int fd;
	pthread_t thread;
	bool done;		/* set by the worker on exit (conns_lock) */
	struct conn *next;	/* conns list (conns_lock) */
};

static struct {
	struct ridr map;
	bool global_lock;	/* baseline mode; fixed before threads start */
	pthread_mutex_t lock;	/* global-lock mode: every map access */
	unsigned long max_id;
	int max_conns;

	/* Counters: relaxed atomics, they order nothing; STATS is a
	 * snapshot (exact when no request is in flight). */
	unsigned long created, deleted, objects, requests, errors;

	pthread_mutex_t conns_lock;	/* the conns list and nconns */
	struct conn *conns;
	int nconns;
} srv = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.conns_lock = PTHREAD_MUTEX_INITIALIZER,
	.max_id = 1UL << 20,
	.max_conns = 128,
};

#define stat_inc(field) __atomic_fetch_add(&srv.field, 1, __ATOMIC_RELAXED)
#define stat_dec(field) __atomic_fetch_sub(&srv.field, 1, __ATOMIC_RELAXED)
#define stat_read(field) __atomic_load_n(&srv.field, __ATOMIC_RELAXED)

/* ------------------------------------------------------------------ */
/* Objects and the map                                                 */

static void obj_free_rcu(struct rk_rcu_head *head)
{
	/* After a grace period (rk_call_rcu): no lookup that found this
	 * object under RCU is still running. */
	free(rk_container_of(head, struct obj, rcu));
	stat_dec(objects);
}

/* Drop one reference.  The last one marks the object dead, under its
 * lock, so a concurrent lockref_get_not_dead() fails (it either sees the
 * lock held and waits for it, or sees the dead count), then frees it
 * after a grace period.  The id was removed before the map's reference
 * was dropped, so nobody can find the object afresh. */
static void obj_put(struct obj *o)
{
	if (lockref_put_or_lock(&o->ref))
		return;
	lockref_mark_dead(&o->ref);
	lockref_unlock(&o->ref);
	rk_call_rcu(RK_RCU_DEFAULT_FLAVOR, &o->rcu, obj_free_rcu);
}

/* Find @id and take a reference; NULL if absent or dying. */
static struct obj *obj_get(unsigned long id)
{
	struct obj *o;

	if (srv.global_lock) {
		/* Baseline: the global mutex serializes this lookup with
		 * every writer, which ridr_find() accepts instead of RCU. */
		pthread_mutex_lock(&srv.lock);
		o = ridr_find(&srv.map, id);
		if (o && !lockref_get_not_dead(&o->ref))
			o = NULL;
		pthread_mutex_unlock(&srv.lock);
		return o;
	}
	/* The RCU section keeps @o's memory valid between ridr_find() and
	 * lockref_get_not_dead(); after that our reference does.  The
	 * object's fields were published by ridr_alloc_cyclic() (release)
	 * and ridr_find() loads the entry with rcu_dereference. */
	rk_rcu_read_lock();
	o = ridr_find(&srv.map, id);
	if (o && !lockref_get_not_dead(&o->ref))
		o = NULL;	/* dying: the id is being deleted */
	rk_rcu_read_unlock();
	return o;
}

/* Create an object holding @val; its id in *@idp. */
static int obj_new(const char *val, unsigned int len, unsigned long *idp)
{
	struct obj *o = calloc(1, sizeof(*o));
	int ret;

	if (!o)
		return -ENOMEM;
	lockref_init(&o->ref, 1);	/* the map's reference */
	memcpy(o->value, val, len);
	o->len = len;
	stat_inc(objects);
	/* ridr_alloc_cyclic() publishes @o with release semantics: a
	 * reader that finds it sees the initialisation above. */
	if (srv.global_lock)
		pthread_mutex_lock(&srv.lock);
	ret = ridr_alloc_cyclic(&srv.map, o, 1, srv.max_id, idp);
	if (srv.global_lock)
		pthread_mutex_unlock(&srv.lock);
	if (ret < 0) {
		free(o);	/* never published */
		stat_dec(objects);
		return ret;
	}
	stat_inc(created);
	return 0;
}

/* Remove @id and drop the map's reference. */
static int obj_del(unsigned long id)
{
	void *old;
	int ret;

	if (srv.global_lock)
		pthread_mutex_lock(&srv.lock);
	ret = ridr_remove(&srv.map, id, &old);
	if (srv.global_lock)
		pthread_mutex_unlock(&srv.lock);
	if (ret < 0)
		return ret;
	/* Two DELs of one id cannot both get here: ridr_remove() succeeds
	 * once, so the map's reference is dropped once. */
	stat_inc(deleted);
	obj_put(old);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Requests                                                            */

struct out {
	char buf[OUT_BUF];
	size_t len;
};

static bool send_all(int fd, const char *p, size_t n)
{
	while (n) {
		/* MSG_NOSIGNAL: a client that went away gives EPIPE, not a
		 * SIGPIPE that would kill the server. */
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

static bool out_flush(int fd, struct out *out)
{
	bool ok = send_all(fd, out->buf, out->len);

	out->len = 0;
	return ok;
}

/* Append one reply line (flushing first if it would not fit). */
static bool __attribute__((format(printf, 3, 4)))
reply(int fd, struct out *out, const char *fmt, ...)
{
	char line[VALUE_MAX + 256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line) - 1)
		n = (int)strlen(line);	/* truncated: never happens */
	line[n++] = '\n';
	if (out->len + (size_t)n > sizeof(out->buf) && !out_flush(fd, out))
		return false;
	memcpy(out->buf + out->len, line, (size_t)n);
	out->len += (size_t)n;
	return true;
}

static bool reply_err(int fd, struct out *out, const char *reason)
{
	stat_inc(errors);
	return reply(fd, out, "ERR %s", reason);
}

/* Split off the next space-separated token; NULL at the end. */
static char *next_token(char **p)
{
	char *s = *p, *e;

	while (*s == ' ')
		s++;
	if (!*s)
		return NULL;
	e = strchr(s, ' ');
	if (e) {
		*e = '\0';
		*p = e + 1;
	} else {
		*p = s + strlen(s);
	}
	return s;
}

/* 0 and the id, or an error reason. */
static const char *parse_id(const char *s, unsigned long *idp)
{
	unsigned long v = 0;
	const char *p;

	if (!s || !*s)
		return "bad id";
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return "bad id";
		if (v > (ULONG_MAX - 9) / 10)
			return "id out of range";	/* overflow */
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v < 1 || v > srv.max_id)
		return "id out of range";
	*idp = v;
	return NULL;
}

static const char *check_value(const char *s)
{
	size_t n = strlen(s);

	if (n == 0)
		return "bad value";
	if (n > VALUE_MAX)
		return "value too long";
	return NULL;	/* printable, no spaces: checked for the line */
}

static void format_stats(char *buf, size_t size)
{
	unsigned long ids;

	/* ridr_count() is a single-copy snapshot (ridr.h). */
	ids = ridr_count(&srv.map);
	pthread_mutex_lock(&srv.conns_lock);
	snprintf(buf, size,
		 "ids=%lu created=%lu deleted=%lu objects=%lu conns=%d requests=%lu errors=%lu mode=%s",
		 ids, stat_read(created), stat_read(deleted),
		 stat_read(objects), srv.nconns, stat_read(requests),
		 stat_read(errors), srv.global_lock ? "lock" : "ridr");
	pthread_mutex_unlock(&srv.conns_lock);
}

/* One request line (NUL-terminated, no newline).  Returns false when
 * the connection must close (QUIT or a send failure). */
static bool handle_line(int fd, struct out *out, char *line, size_t len)
{
	char *p = line, *cmd, *a, *b;
	const char *err;
	unsigned long id;
	struct obj *o;
	size_t i;

	stat_inc(requests);
	/* Printable ASCII and spaces only: binary garbage, NUL bytes and
	 * control characters are rejected before any parsing. */
	for (i = 0; i < len; i++)
		if ((unsigned char)line[i] < 0x20 ||
		    (unsigned char)line[i] > 0x7e)
			return reply_err(fd, out,
					 "bad input (non-printable byte)");

	cmd = next_token(&p);
	if (!cmd)
		return reply_err(fd, out, "empty request");
	a = next_token(&p);
	b = next_token(&p);

	if (!strcmp(cmd, "GET")) {
		char val[VALUE_MAX];
		unsigned int n;

		if (!a || b || next_token(&p))
			return reply_err(fd, out, "usage: GET <id>");
		err = parse_id(a, &id);
		if (err)
			return reply_err(fd, out, err);
		o = obj_get(id);
		if (!o)
			return reply_err(fd, out, "NOT_FOUND");
		lockref_lock(&o->ref);	/* the value's lock */
		n = o->len;
		memcpy(val, o->value, n);
		lockref_unlock(&o->ref);
		obj_put(o);
		return reply(fd, out, "OK %.*s", (int)n, val);
	}
	if (!strcmp(cmd, "SET")) {
		if (!a || !b || next_token(&p))
			return reply_err(fd, out, "usage: SET <id> <value>");
		err = parse_id(a, &id);
		if (!err)
			err = check_value(b);
		if (err)
			return reply_err(fd, out, err);
		o = obj_get(id);
		if (!o)
			return reply_err(fd, out, "NOT_FOUND");
		lockref_lock(&o->ref);
		o->len = (unsigned int)strlen(b);
		memcpy(o->value, b, o->len);
		lockref_unlock(&o->ref);
		obj_put(o);
		return reply(fd, out, "OK");
	}
	if (!strcmp(cmd, "NEW")) {
		int ret;

		if (!a || b)
			return reply_err(fd, out, "usage: NEW <value>");
		err = check_value(a);
		if (err)
			return reply_err(fd, out, err);
		ret = obj_new(a, (unsigned int)strlen(a), &id);
		if (ret == -ENOSPC)
			return reply_err(fd, out, "full");
		if (ret < 0)
			return reply_err(fd, out, "out of memory");
		return reply(fd, out, "OK %lu", id);
	}
	if (!strcmp(cmd, "DEL")) {
		if (!a || b)
			return reply_err(fd, out, "usage: DEL <id>");
		err = parse_id(a, &id);
		if (err)
			return reply_err(fd, out, err);
		if (obj_del(id) < 0)
			return reply_err(fd, out, "NOT_FOUND");
		return reply(fd, out, "OK");
	}
	if (!strcmp(cmd, "STATS")) {
		char buf[256];

		if (a)
			return reply_err(fd, out, "usage: STATS");
		format_stats(buf, sizeof(buf));
		return reply(fd, out, "OK %s", buf);
	}
	if (!strcmp(cmd, "QUIT")) {
		reply(fd, out, "OK bye");
		return false;
	}
	return reply_err(fd, out, "unknown command");
}

/* ------------------------------------------------------------------ */
/* Connections                                                         */

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	char in[LINE_MAX_LEN + 2];	/* a line, its '\n', a NUL */
	struct out *out = malloc(sizeof(*out));
	size_t have = 0;
	bool open = out != NULL;

	/* This thread reads the map under RCU and calls rk_call_rcu()
	 * (obj_put): liburcu requires it registered with the flavor. */
	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	if (out)
		out->len = 0;
	while (open) {
		ssize_t r = recv(c->fd, in + have, LINE_MAX_LEN + 1 - have, 0);
		size_t start = 0, i;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;	/* EOF, error, or shutdown() by the server */
		have += (size_t)r;
		for (i = 0; i < have && open; i++) {
			size_t end = i;

			if (in[i] != '\n')
				continue;
			if (end > start && in[end - 1] == '\r')
				end--;	/* accept CRLF */
			in[end] = '\0';
			open = handle_line(c->fd, out, in + start, end - start);
			start = i + 1;
		}
		memmove(in, in + start, have - start);
		have -= start;
		if (open && have > LINE_MAX_LEN) {
			/* No newline within LINE_MAX_LEN + 1 bytes. */
			reply_err(c->fd, out, "line too long");
			open = false;
		}
		if (!out_flush(c->fd, out))
			break;
	}
	if (out && out->len)
		out_flush(c->fd, out);
	free(out);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	/* Tell the peer we are done, but keep the fd: the main thread
	 * closes it after join, so shutdown() there never hits a reused
	 * descriptor number. */
	shutdown(c->fd, SHUT_RDWR);
	pthread_mutex_lock(&srv.conns_lock);
	c->done = true;
	pthread_mutex_unlock(&srv.conns_lock);
	return NULL;
}

/* Join the workers that have finished; with @all, every worker (after
 * shutdown() woke them). */
static void reap(bool all)
{
	struct conn **pp, *c, *dead = NULL;

	pthread_mutex_lock(&srv.conns_lock);
	for (pp = &srv.conns; (c = *pp);) {
		if (c->done || all) {
			*pp = c->next;
			c->next = dead;
			dead = c;
			srv.nconns--;
		} else {
			pp = &c->next;
		}
	}
	pthread_mutex_unlock(&srv.conns_lock);
	while ((c = dead)) {
		dead = c->next;
		pthread_join(c->thread, NULL);
		close(c->fd);
		free(c);
	}
}

static void accept_one(int lfd)
{
	struct conn *c;
	int fd, one = 1;

	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;	/* EAGAIN, ECONNABORTED, EMFILE: try again later */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	pthread_mutex_lock(&srv.conns_lock);
	if (srv.nconns >= srv.max_conns) {
		pthread_mutex_unlock(&srv.conns_lock);
		stat_inc(errors);
		send_all(fd, "ERR busy\n", 9);
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		pthread_mutex_unlock(&srv.conns_lock);
		close(fd);
		return;
	}
	c->fd = fd;
	/* Linked before the thread starts, under the lock the worker takes
	 * to set ->done: reap() never misses a worker. */
	if (pthread_create(&c->thread, NULL, conn_main, c)) {
		pthread_mutex_unlock(&srv.conns_lock);
		send_all(fd, "ERR busy\n", 9);
		close(fd);
		free(c);
		return;
	}
	c->next = srv.conns;
	srv.conns = c;
	srv.nconns++;
	pthread_mutex_unlock(&srv.conns_lock);
}

/* Close every connection, join the workers, release every object. */
static void shutdown_all(void)
{
	unsigned long id;
	struct conn *c;
	struct obj *o;

	pthread_mutex_lock(&srv.conns_lock);
	for (c = srv.conns; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR);	/* wakes the worker's recv() */
	pthread_mutex_unlock(&srv.conns_lock);
	reap(true);

	/* Only this thread is left: it is the map's sole writer and
	 * reader, so iterating while removing is allowed (ridr.h). */
	ridr_for_each(&srv.map, o, id) {
		ridr_remove(&srv.map, id, NULL);
		obj_put(o);
	}
	/* Wait for every obj_free_rcu(), then free the map's nodes. */
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	ridr_destroy(&srv.map);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [--port N] [--global-lock] [--max-conns N] [--max-id N]\n"
		"  --port N       TCP port on 127.0.0.1 (0: any free port; default 0)\n"
		"  --global-lock  baseline: every map access under one mutex\n"
		"  --max-conns N  connections served at once (default 128)\n"
		"  --max-id N     ids are 1..N (default 1048576)\n",
		argv0);
	exit(2);
}

static unsigned long parse_ulong(const char *s, const char *argv0)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s ? s : "", &end, 10);
	if (!s || !*s || *end || errno || *s == '-')
		usage(argv0);
	return v;
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t alen = sizeof(addr);
	unsigned long port = 0;
	struct pollfd pfd[2];
	sigset_t sigs;
	int lfd, sfd, one = 1, i;
	char stats[256];

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--port"))
			port = parse_ulong(argv[++i], argv[0]);
		else if (!strcmp(argv[i], "--global-lock"))
			srv.global_lock = true;
		else if (!strcmp(argv[i], "--max-conns"))
			srv.max_conns = (int)parse_ulong(argv[++i], argv[0]);
		else if (!strcmp(argv[i], "--max-id"))
			srv.max_id = parse_ulong(argv[++i], argv[0]);
		else
			usage(argv[0]);
	}
	if (port > 65535 || srv.max_conns < 1 || srv.max_conns > 4096 ||
	    srv.max_id < 1)
		usage(argv[0]);

	/* SIGINT/SIGTERM are blocked in every thread (workers inherit the
	 * mask) and read through a signalfd by the main loop only. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sfd < 0) {
		perror("signalfd");
		return 1;
	}

	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	ridr_init(&srv.map);

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);	/* loopback only */
	addr.sin_port = htons((uint16_t)port);
	if (lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(lfd, 128) ||
	    getsockname(lfd, (struct sockaddr *)&addr, &alen)) {
		perror("handle_server: listen on 127.0.0.1");
		return 1;
	}
	printf("listening on 127.0.0.1:%u mode=%s\n", ntohs(addr.sin_port),
	       srv.global_lock ? "lock" : "ridr");
	fflush(stdout);

	pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	for (;;) {
		struct signalfd_siginfo si;

		/* Wake at least once a second to join finished workers. */
		if (poll(pfd, 2, 1000) < 0 && errno != EINTR) {
			perror("poll");
			break;
		}
		if (pfd[1].revents & POLLIN) {
			if (read(sfd, &si, sizeof(si)) == sizeof(si))
				fprintf(stderr,
					"handle_server: signal %u, shutting down\n",
					si.ssi_signo);
			break;
		}
		if (pfd[0].revents & POLLIN)
			accept_one(lfd);
		reap(false);
	}
	close(lfd);
	shutdown_all();
	format_stats(stats, sizeof(stats));
	fprintf(stderr, "handle_server: final %s\n", stats);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	close(sfd);
	/* Everything was released: a leftover object is a leak. */
	return stat_read(objects) == 0 ? 0 : 3;
}
