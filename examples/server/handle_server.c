// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * handle_server.c - a multi-threaded TCP server that hands out integer
 * handles (the way servers hand out sessions, timers or queue ids), built
 * on ridr + lockref and speaking the Redis protocol (RESP2), so that
 * redis-cli and redis-benchmark drive it unmodified.  Walkthrough,
 * protocol table and measurements: docs/using.md.
 *
 * Licence: this file is LGPL-2.1-or-later; the binary links lockref
 * (GPL-2.0-only), so the program as a whole is bound by the GPL-2.0.
 *
 * Commands (case-insensitive), on 127.0.0.1 only:
 *
 *   HNEW value        :id          a new object at the next free id
 *   HGET id           $value       or $-1 (nil) if there is no such id
 *   HSET id value     +OK          or -ERR no such id
 *   HDEL id           :1 / :0      deleted / there was no such id
 *   GET key           $value       or $-1; key is key:<decimal id>
 *   SET key value     +OK          creates the object at that exact id
 *   DEL key [key...]  :n           objects deleted
 *   INFO [section]    $text        the server's counters
 *   PING [msg]        +PONG        or $msg
 *   ECHO msg          $msg         (redis-cli --pipe ends with it)
 *   CONFIG GET param  *2 / *0      save and appendonly only (for
 *                                  redis-benchmark's start-up probe)
 *   QUIT              +OK          then the server closes the connection
 *
 * Keys and ids: "key:000000012345" names id 12345, the form
 * redis-benchmark -r N gives its keys, so GET and SET of its default
 * tests read and write the objects at those ids; HNEW/HGET/HSET/HDEL use
 * the same id space.  Ids are 0..--max-id; HNEW hands out 1..--max-id.
 * A value is 0..VALUE_MAX bytes, binary-safe.
 *
 * Framing: RESP arrays of bulk strings, and inline commands (a line of
 * space-separated words, as Redis accepts from telnet).  A request that
 * is well framed but wrong (unknown command, wrong argument count, bad
 * id, argument longer than ARG_MAX, more than ARGS_MAX arguments) gets
 * one -ERR reply and the connection stays usable: an over-long argument
 * is read and thrown away as it arrives, never stored.  A frame that
 * cannot be parsed (a non-numeric or negative length, an array header
 * where a bulk string header must be, no CRLF after a bulk string, a
 * bulk length above BULK_LIMIT, an array above ARRAY_LIMIT elements, an
 * inline line above INLINE_MAX) gets "-ERR Protocol error: ..." and the
 * connection is closed, as Redis does: after it, the next frame's start
 * cannot be found.  No claimed length is ever allocated: every buffer is
 * fixed-size, per connection.
 *
 * Threads: by default one per connection (blocking I/O), capped at
 * --max-conns; with --epoll N, N workers each wait on their own epoll set
 * for the connections the main thread assigns them round robin, with
 * non-blocking sockets and per-connection backpressure (econn_event()).
 * The main thread accepts and handles signals in both.  Measured
 * (docs/using.md): with many clients and no pipelining a thread per
 * connection spends more CPU per request (a wakeup per request) than the
 * epoll workers, which handle several ready connections per wakeup.
 *
 * Object lifetime (the pattern of ridr.h and lockref.h):
 *  1. HNEW fills in an object with count 1 (the map's reference) and
 *     publishes it with ridr_alloc_cyclic(), which orders the stores
 *     before the id becomes findable (release).  Cyclic ids: a deleted id
 *     is not handed out again until the range wraps, so a stale id held
 *     by a client answers nil instead of naming another client's object.
 *     SET of an absent key publishes the same way at its exact id.
 *  2. A request looks the id up with ridr_find() inside an RCU read-side
 *     section and takes a reference with lockref_get_not_dead() before
 *     leaving it; it then uses the object outside RCU and drops the
 *     reference with obj_put().
 *  3. HDEL removes the id (no new lookup can find the object), then drops
 *     the map's reference.  Whoever drops the last reference marks the
 *     object dead under its lock and frees it after a grace period:
 *     a lookup that found the pointer just before the removal may still
 *     be about to call lockref_get_not_dead() on it, and fails there
 *     because the object is dead.  Marking it dead at HDEL time instead
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
#include <strings.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define VALUE_MAX 64		/* bytes of a value */
#define ARG_MAX VALUE_MAX	/* bytes of any argument kept; longer ones
				 * are read and discarded */
#define ARGS_MAX 8		/* arguments kept; more are counted only */
#define BULK_LIMIT (1L << 20)	/* larger bulk length: protocol error */
#define ARRAY_LIMIT 1024	/* larger array: protocol error */
#define INLINE_MAX 1024		/* longer inline line: protocol error */
#define HDR_MAX 32		/* "*N\r\n" / "$N\r\n" header line bytes */
#define IN_BUF 16384		/* per-connection input buffer */
#define OUT_BUF 16384		/* replies batched per read */
#define SET_TRIES 100		/* SET retries when racing an insert */
#define REPLY_MAX 1024		/* bytes of the longest reply (INFO) */
#define EPOLL_MAX_WORKERS 64
/* To a client over --max-conns, which is then closed (Redis's words). */
#define BUSY_REPLY "-ERR max number of clients reached\r\n"

struct obj {
	struct lockref ref;	/* the map's reference + one per request */
	unsigned int len;	/* value length; lock held */
	char value[VALUE_MAX];	/* lock held */
	struct rk_rcu_head rcu;
};

struct client;

struct conn {
	int fd;
	bool has_thread;	/* thread-per-connection mode */
	pthread_t thread;
	struct client *cl;	/* epoll mode: freed by the worker on close */
	int worker;		/* epoll mode: the worker watching fd */
	uint32_t events;	/* epoll mode: interest set (worker only) */
	bool done;		/* set by the worker on exit (conns_lock) */
	struct conn *next;	/* conns list (conns_lock) */
};

/* --epoll N: N threads, each waiting on its own epoll set for the
 * connections the main thread assigned it (round robin). */
struct worker {
	pthread_t thread;
	int ep;
};

static struct {
	struct ridr map;
	bool global_lock;	/* baseline mode; fixed before threads start */
	pthread_mutex_t lock;	/* global-lock mode: every map access */
	unsigned long max_id;
	int max_conns;
	int nworkers;		/* --epoll N; 0: a thread per connection */
	struct worker *workers;
	int stop_efd;		/* epoll mode: written once at shutdown */
	unsigned int next_worker;	/* main thread only */

	/* Counters: relaxed atomics, they order nothing; INFO is a
	 * snapshot (exact when no request is in flight). */
	unsigned long created, deleted, objects, requests, errors, bytes_in;

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
	 * object's fields were published by ridr_alloc*() (release) and
	 * ridr_find() loads the entry with rcu_dereference. */
	rk_rcu_read_lock();
	o = ridr_find(&srv.map, id);
	if (o && !lockref_get_not_dead(&o->ref))
		o = NULL;	/* dying: the id is being deleted */
	rk_rcu_read_unlock();
	return o;
}

/* Create an object holding @val and publish it at an id in [@min, @max]
 * (cyclically for HNEW, exactly @min == @max for SET); the id in *@idp.
 * Return: 0, -ENOMEM, or -ENOSPC (no free id in the range). */
static int obj_new(const char *val, unsigned int len, unsigned long min,
		   unsigned long max, unsigned long *idp)
{
	struct obj *o = calloc(1, sizeof(*o));
	int ret;

	if (!o)
		return -ENOMEM;
	lockref_init(&o->ref, 1);	/* the map's reference */
	memcpy(o->value, val, len);
	o->len = len;
	stat_inc(objects);
	/* ridr_alloc*() publishes @o with release semantics: a reader
	 * that finds it sees the initialisation above. */
	if (srv.global_lock)
		pthread_mutex_lock(&srv.lock);
	if (min == max)
		ret = ridr_alloc(&srv.map, o, min, max, idp);
	else
		ret = ridr_alloc_cyclic(&srv.map, o, min, max, idp);
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

/* Replace the value of a live object (@o referenced). */
static void obj_set_value(struct obj *o, const char *val, unsigned int len)
{
	lockref_lock(&o->ref);	/* the value's lock */
	memcpy(o->value, val, len);
	o->len = len;
	lockref_unlock(&o->ref);
}

/* SET: the value of @id, creating the object at exactly @id if absent.
 * Return: 0, -ENOMEM, or -EBUSY if inserts and deletes of @id by other
 * clients kept winning the race (SET_TRIES times). */
static int obj_set(unsigned long id, const char *val, unsigned int len)
{
	unsigned long got;
	struct obj *o;
	int i, ret;

	for (i = 0; i < SET_TRIES; i++) {
		o = obj_get(id);
		if (o) {
			obj_set_value(o, val, len);
			obj_put(o);
			return 0;
		}
		ret = obj_new(val, len, id, id, &got);
		if (ret != -ENOSPC)
			return ret;
		/* Another client published @id after our lookup: retry. */
	}
	return -EBUSY;
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
	/* Two deletes of one id cannot both get here: ridr_remove()
	 * succeeds once, so the map's reference is dropped once. */
	stat_inc(deleted);
	obj_put(old);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Replies                                                             */

struct out {
	int fd;
	bool nonblock;		/* epoll: send only what the socket takes */
	bool failed;		/* a send failed: the peer is gone */
	size_t len;
	char buf[OUT_BUF];
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

/* Non-blocking: send what the socket takes now, keep the rest. */
static void out_flush_nb(struct out *out)
{
	size_t off = 0;

	while (off < out->len && !out->failed) {
		ssize_t w = send(out->fd, out->buf + off, out->len - off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (w <= 0)
			out->failed = true;
		else
			off += (size_t)w;
	}
	if (out->failed)
		off = out->len;
	memmove(out->buf, out->buf + off, out->len - off);
	out->len -= off;
}

static void out_flush(struct out *out)
{
	if (out->nonblock) {
		out_flush_nb(out);
		return;
	}
	if (out->len && !out->failed && !send_all(out->fd, out->buf, out->len))
		out->failed = true;
	out->len = 0;
}

static void out_add(struct out *out, const void *p, size_t n)
{
	while (n) {
		size_t k;

		if (out->len == sizeof(out->buf))
			out_flush(out);
		k = sizeof(out->buf) - out->len;
		if (k > n)
			k = n;
		memcpy(out->buf + out->len, p, k);
		out->len += k;
		p = (const char *)p + k;
		n -= k;
	}
}

static void __attribute__((format(printf, 2, 3)))
out_fmt(struct out *out, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;	/* cut: only sanitized names */
	out_add(out, line, (size_t)n);
}

static void reply_err(struct out *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* "-ERR ...\r\n"; the text must hold no CR or LF (callers pass fixed
 * strings or sanitize()d client bytes). */
static void reply_err(struct out *out, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	stat_inc(errors);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	out_fmt(out, "-ERR %s\r\n", msg);
}

static void reply_bulk(struct out *out, const char *p, size_t n)
{
	out_fmt(out, "$%zu\r\n", n);
	out_add(out, p, n);
	out_add(out, "\r\n", 2);
}

static void reply_nil(struct out *out)
{
	out_add(out, "$-1\r\n", 5);
}

/* Client bytes for an error message: printable ASCII except quotes,
 * at most 32 of them. */
static const char *sanitize(char *dst, const char *src, size_t n)
{
	size_t i;

	if (n > 32)
		n = 32;
	for (i = 0; i < n; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f && src[i] != '\'') ?
			 src[i] : '?';
	dst[n] = '\0';
	return dst;
}

/* ------------------------------------------------------------------ */
/* RESP2 parser                                                        */

/*
 * A streaming parser over a fixed buffer.  parse() consumes what it can
 * from in[pos, have) and returns P_CMD when a command is complete (argc,
 * argv), P_MORE when it needs more bytes, P_ERROR for a protocol error
 * (message in perr).  State survives across reads: a bulk string that
 * is too long to keep is skipped chunk by chunk (P_SKIP), so its claimed
 * length never becomes an allocation or a buffer size.
 */
enum pstate { P_START, P_ARRAY, P_BULK_HDR, P_BULK, P_SKIP, P_CRLF };
enum presult { P_CMD, P_MORE, P_ERROR };

struct client {
	struct out out;
	char in[IN_BUF];
	size_t pos, have;	/* unparsed bytes: in[pos, have) */

	enum pstate st;
	long nelem;		/* array elements announced */
	long nread;		/* elements complete */
	long blen;		/* bulk string being read */
	long skip;		/* bulk bytes still to discard */
	bool too_long;		/* an argument was discarded */
	const char *perr;	/* protocol error message */

	int argc;		/* arguments (all, even those not kept) */
	unsigned int alen[ARGS_MAX];
	char argv[ARGS_MAX][ARG_MAX];
};

static void cmd_reset(struct client *c)
{
	c->st = P_START;
	c->nelem = c->nread = 0;
	c->argc = 0;
	c->too_long = false;
}

/* Keep argument @n (or only count it). */
static void arg_keep(struct client *c, const char *p, size_t n)
{
	if (c->argc < ARGS_MAX) {
		if (n > ARG_MAX) {
			c->too_long = true;
			n = 0;
		}
		memcpy(c->argv[c->argc], p, n);
		c->alen[c->argc] = (unsigned int)n;
	}
	c->argc++;
}

/* The header line at in[pos]: "<type><decimal>\r\n".  Returns P_MORE,
 * P_ERROR (@err), or P_CMD with the number in *@vp and pos past it. */
static enum presult parse_header(struct client *c, long limit, long *vp,
				 const char *err)
{
	const char *p = c->in + c->pos + 1, *end = c->in + c->have, *cr;
	long v = 0;

	cr = memchr(p, '\r', (size_t)(end - p));
	if (!cr) {
		if (end - p > HDR_MAX)
			goto bad;
		return P_MORE;
	}
	if (cr - p > HDR_MAX)
		goto bad;
	if (cr + 1 == end)
		return P_MORE;
	if (cr[1] != '\n' || cr == p)
		goto bad;
	/* Negative lengths: Redis ignores "*-1" (null array) but refuses
	 * "$-1" in a request; we refuse both. */
	for (; p < cr; p++) {
		if (*p < '0' || *p > '9')
			goto bad;
		v = v * 10 + (*p - '0');
		if (v > limit)
			goto bad;
	}
	*vp = v;
	c->pos = (size_t)(cr + 2 - c->in);
	return P_CMD;
bad:
	c->perr = err;
	return P_ERROR;
}

/* An inline command: one line of words separated by spaces or tabs. */
static enum presult parse_inline(struct client *c)
{
	char *p = c->in + c->pos, *end = c->in + c->have, *nl, *e;

	nl = memchr(p, '\n', (size_t)(end - p));
	if (!nl || nl - p > INLINE_MAX) {
		if (end - p > INLINE_MAX) {
			c->perr = "too big inline request";
			return P_ERROR;
		}
		return P_MORE;
	}
	c->pos = (size_t)(nl + 1 - c->in);
	e = (nl > p && nl[-1] == '\r') ? nl - 1 : nl;
	while (p < e) {
		char *w;

		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		if (p == e)
			break;
		w = p;
		while (p < e && *p != ' ' && *p != '\t')
			p++;
		arg_keep(c, w, (size_t)(p - w));
	}
	return P_CMD;	/* argc 0 for an empty line: ignored */
}

static enum presult parse(struct client *c)
{
	enum presult r;
	size_t avail;
	long v;

	for (;;) {
		avail = c->have - c->pos;
		switch (c->st) {
		case P_START:
			if (!avail)
				return P_MORE;
			if (c->in[c->pos] != '*')
				return parse_inline(c);
			c->st = P_ARRAY;
			/* fall through */
		case P_ARRAY:
			r = parse_header(c, ARRAY_LIMIT, &v,
					 "invalid multibulk length");
			if (r != P_CMD)
				return r;
			c->nelem = v;
			c->st = P_BULK_HDR;
			break;
		case P_BULK_HDR:
			if (c->nread == c->nelem)
				return P_CMD;	/* "*0": argc 0, ignored */
			if (!avail)
				return P_MORE;
			if (c->in[c->pos] != '$') {
				c->perr = "expected '$'";
				return P_ERROR;
			}
			r = parse_header(c, BULK_LIMIT, &v,
					 "invalid bulk length");
			if (r != P_CMD)
				return r;
			c->blen = v;
			if (v > ARG_MAX) {
				c->skip = v;
				c->st = P_SKIP;
			} else {
				c->st = P_BULK;
			}
			break;
		case P_BULK:
			if (avail < (size_t)c->blen + 2)
				return P_MORE;
			if (c->in[c->pos + (size_t)c->blen] != '\r' ||
			    c->in[c->pos + (size_t)c->blen + 1] != '\n') {
				c->perr = "expected CRLF after bulk string";
				return P_ERROR;
			}
			arg_keep(c, c->in + c->pos, (size_t)c->blen);
			c->pos += (size_t)c->blen + 2;
			c->nread++;
			c->st = P_BULK_HDR;
			break;
		case P_SKIP:
			/* Discard as it arrives: never buffered whole. */
			if ((size_t)c->skip > avail) {
				c->skip -= (long)avail;
				c->pos = c->have;
				return P_MORE;
			}
			c->pos += (size_t)c->skip;
			c->skip = 0;
			c->st = P_CRLF;
			break;
		case P_CRLF:
			if (avail < 2)
				return P_MORE;
			if (c->in[c->pos] != '\r' ||
			    c->in[c->pos + 1] != '\n') {
				c->perr = "expected CRLF after bulk string";
				return P_ERROR;
			}
			c->pos += 2;
			c->too_long = true;
			if (c->argc < ARGS_MAX)
				c->alen[c->argc] = 0;
			c->argc++;
			c->nread++;
			c->st = P_BULK_HDR;
			break;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Commands                                                            */

static bool arg_is(const struct client *c, int i, const char *s)
{
	size_t n = strlen(s);

	return c->alen[i] == n && !strncasecmp(c->argv[i], s, n);
}

/* A decimal id in [0, max_id], from argument @i. */
static bool parse_id(struct client *c, int i, size_t skip, unsigned long *idp)
{
	const char *p = c->argv[i] + skip;
	size_t n = c->alen[i] - skip, k;
	unsigned long v = 0;

	if (c->alen[i] < skip || n == 0 || n > 20)
		goto bad;
	for (k = 0; k < n; k++) {
		if (p[k] < '0' || p[k] > '9')
			goto bad;
		if (v > (ULONG_MAX - 9) / 10)
			goto range;
		v = v * 10 + (unsigned long)(p[k] - '0');
	}
	if (v > srv.max_id)
		goto range;
	*idp = v;
	return true;
bad:
	if (skip)
		reply_err(&c->out, "key must be key:<decimal id>");
	else
		reply_err(&c->out, "invalid id");
	return false;
range:
	reply_err(&c->out, "id out of range (max %lu)", srv.max_id);
	return false;
}

/* key:<digits> -> id */
static bool parse_key(struct client *c, int i, unsigned long *idp)
{
	if (c->alen[i] < 4 || memcmp(c->argv[i], "key:", 4)) {
		reply_err(&c->out, "key must be key:<decimal id>");
		return false;
	}
	return parse_id(c, i, 4, idp);
}

static void format_info(char *buf, size_t size)
{
	unsigned long ids;
	int conns;

	/* ridr_count() is a single-copy snapshot (ridr.h). */
	ids = ridr_count(&srv.map);
	pthread_mutex_lock(&srv.conns_lock);
	conns = srv.nconns;
	pthread_mutex_unlock(&srv.conns_lock);
	snprintf(buf, size,
		 "# handle_server\r\n"
		 "mode:%s\r\n"
		 "ids:%lu\r\n"
		 "created:%lu\r\n"
		 "deleted:%lu\r\n"
		 "objects:%lu\r\n"
		 "conns:%d\r\n"
		 "requests:%lu\r\n"
		 "errors:%lu\r\n"
		 "bytes_in:%lu\r\n"
		 "max_id:%lu\r\n"
		 "io:%s\r\n"
		 "io_threads:%d\r\n",
		 srv.global_lock ? "lock" : "ridr", ids, stat_read(created),
		 stat_read(deleted), stat_read(objects), conns,
		 stat_read(requests), stat_read(errors), stat_read(bytes_in),
		 srv.max_id,
		 srv.nworkers ? "epoll" : "thread-per-connection",
		 srv.nworkers ? srv.nworkers : conns);
}

static void reply_get(struct client *c, unsigned long id)
{
	char val[VALUE_MAX];
	unsigned int n;
	struct obj *o;

	o = obj_get(id);
	if (!o) {
		reply_nil(&c->out);
		return;
	}
	lockref_lock(&o->ref);	/* the value's lock */
	n = o->len;
	memcpy(val, o->value, n);
	lockref_unlock(&o->ref);
	obj_put(o);
	reply_bulk(&c->out, val, n);
}

/* The command in c->argv; false when the connection must close (QUIT). */
static bool execute(struct client *c)
{
	struct out *out = &c->out;
	unsigned long id;
	char name[40];
	struct obj *o;
	int ret, i;

	stat_inc(requests);
	if (c->too_long) {
		reply_err(out, "argument too long (max %d bytes)", ARG_MAX);
		return true;
	}
	sanitize(name, c->argv[0], c->alen[0]);
#define ARITY(ok)                                                            \
	do {                                                                 \
		if (!(ok)) {                                                 \
			reply_err(out,                                       \
				  "wrong number of arguments for '%s' command", \
				  name);                                     \
			return true;                                         \
		}                                                            \
	} while (0)

	if (arg_is(c, 0, "GET")) {
		ARITY(c->argc == 2);
		if (parse_key(c, 1, &id))
			reply_get(c, id);
		return true;
	}
	if (arg_is(c, 0, "SET")) {
		ARITY(c->argc >= 3);
		if (c->argc > 3) {
			reply_err(out, "syntax error (SET takes no options here)");
			return true;
		}
		if (!parse_key(c, 1, &id))
			return true;
		ret = obj_set(id, c->argv[2], c->alen[2]);
		if (ret == -ENOMEM)
			reply_err(out, "out of memory");
		else if (ret < 0)
			reply_err(out, "busy: concurrent SET/DEL of this key, retry");
		else
			out_add(out, "+OK\r\n", 5);
		return true;
	}
	if (arg_is(c, 0, "HGET")) {
		ARITY(c->argc == 2);
		if (parse_id(c, 1, 0, &id))
			reply_get(c, id);
		return true;
	}
	if (arg_is(c, 0, "HSET")) {
		ARITY(c->argc == 3);
		if (!parse_id(c, 1, 0, &id))
			return true;
		o = obj_get(id);
		if (!o) {
			reply_err(out, "no such id");
			return true;
		}
		obj_set_value(o, c->argv[2], c->alen[2]);
		obj_put(o);
		out_add(out, "+OK\r\n", 5);
		return true;
	}
	if (arg_is(c, 0, "HNEW")) {
		ARITY(c->argc == 2);
		ret = obj_new(c->argv[1], c->alen[1], 1, srv.max_id, &id);
		if (ret == -ENOSPC)
			reply_err(out, "id space full");
		else if (ret < 0)
			reply_err(out, "out of memory");
		else
			out_fmt(out, ":%lu\r\n", id);
		return true;
	}
	if (arg_is(c, 0, "HDEL")) {
		ARITY(c->argc == 2);
		if (parse_id(c, 1, 0, &id))
			out_fmt(out, ":%d\r\n", obj_del(id) == 0);
		return true;
	}
	if (arg_is(c, 0, "DEL")) {
		unsigned long ids[ARGS_MAX];
		int n = 0;

		ARITY(c->argc >= 2 && c->argc <= ARGS_MAX);
		/* Every key valid before any is deleted. */
		for (i = 1; i < c->argc; i++)
			if (!parse_key(c, i, &ids[i]))
				return true;
		for (i = 1; i < c->argc; i++)
			n += obj_del(ids[i]) == 0;
		out_fmt(out, ":%d\r\n", n);
		return true;
	}
	if (arg_is(c, 0, "PING")) {
		ARITY(c->argc <= 2);
		if (c->argc == 2)
			reply_bulk(out, c->argv[1], c->alen[1]);
		else
			out_add(out, "+PONG\r\n", 7);
		return true;
	}
	if (arg_is(c, 0, "ECHO")) {
		/* redis-cli --pipe ends its stream with ECHO <marker>. */
		ARITY(c->argc == 2);
		reply_bulk(out, c->argv[1], c->alen[1]);
		return true;
	}
	if (arg_is(c, 0, "INFO")) {
		char buf[512];

		ARITY(c->argc <= 2);	/* any section: the one we have */
		format_info(buf, sizeof(buf));
		reply_bulk(out, buf, strlen(buf));
		return true;
	}
	if (arg_is(c, 0, "CONFIG")) {
		/* redis-benchmark asks for "save" and "appendonly" before
		 * it starts; we persist nothing, and say so. */
		if (c->argc >= 2 && !arg_is(c, 1, "GET")) {
			reply_err(out, "only CONFIG GET is supported");
			return true;
		}
		ARITY(c->argc == 3);
		if (arg_is(c, 2, "save"))
			out_add(out, "*2\r\n$4\r\nsave\r\n$0\r\n\r\n", 20);
		else if (arg_is(c, 2, "appendonly"))
			out_add(out, "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n", 30);
		else
			out_add(out, "*0\r\n", 4);
		return true;
	}
	if (arg_is(c, 0, "QUIT")) {
		ARITY(c->argc == 1);
		out_add(out, "+OK\r\n", 5);
		return false;
	}
	reply_err(out, "unknown command '%s'", name);
	return true;
#undef ARITY
}

enum in_result { IN_MORE, IN_BLOCKED, IN_CLOSE };

/* Parse and run every complete command in the input buffer; replies are
 * batched in c->out.  IN_MORE: needs more input; IN_BLOCKED (epoll mode
 * only): stopped because the output buffer could not take a reply until
 * the client reads; IN_CLOSE: the connection must close. */
static enum in_result client_input(struct client *c)
{
	for (;;) {
		/* A reply never exceeds REPLY_MAX, so in non-blocking mode
		 * out_add() never has to flush a full buffer. */
		if (c->out.nonblock && OUT_BUF - c->out.len < REPLY_MAX)
			return IN_BLOCKED;
		switch (parse(c)) {
		case P_MORE:
			/* Keep the unparsed tail at the start of the buffer. */
			memmove(c->in, c->in + c->pos, c->have - c->pos);
			c->have -= c->pos;
			c->pos = 0;
			/* The parser never waits on a full buffer: headers,
			 * inline lines and kept arguments are far below
			 * IN_BUF, skipped bulk data is consumed as it comes. */
			if (c->have == IN_BUF) {
				stat_inc(requests);
				reply_err(&c->out, "Protocol error: request too large");
				return IN_CLOSE;
			}
			return c->out.failed ? IN_CLOSE : IN_MORE;
		case P_ERROR:
			stat_inc(requests);
			reply_err(&c->out, "Protocol error: %s", c->perr);
			return IN_CLOSE;
		case P_CMD:
			if (c->argc && !execute(c))
				return IN_CLOSE;
			cmd_reset(c);
			break;
		}
	}
}

static struct client *client_new(int fd, bool nonblock)
{
	struct client *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	c->out.fd = fd;
	c->out.nonblock = nonblock;
	c->out.failed = false;
	c->out.len = 0;
	c->pos = c->have = 0;
	cmd_reset(c);
	return c;
}

/* ------------------------------------------------------------------ */
/* Connections                                                         */

static void *conn_main(void *arg)
{
	struct conn *cn = arg;
	struct client *c = client_new(cn->fd, false);
	bool open = c != NULL;

	/* This thread reads the map under RCU and calls rk_call_rcu()
	 * (obj_put): liburcu requires it registered with the flavor. */
	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	while (open) {
		ssize_t r = recv(cn->fd, c->in + c->have, IN_BUF - c->have, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;	/* EOF, error, or shutdown() by the server */
		c->have += (size_t)r;
		__atomic_fetch_add(&srv.bytes_in, (unsigned long)r,
				   __ATOMIC_RELAXED);
		open = client_input(c) == IN_MORE;
		out_flush(&c->out);
		if (c->out.failed)
			break;
	}
	if (c)
		out_flush(&c->out);
	free(c);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	/* Tell the peer we are done, but keep the fd: the main thread
	 * closes it after join, so shutdown() there never hits a reused
	 * descriptor number. */
	shutdown(cn->fd, SHUT_RDWR);
	pthread_mutex_lock(&srv.conns_lock);
	cn->done = true;
	pthread_mutex_unlock(&srv.conns_lock);
	return NULL;
}

/* epoll mode: one readiness event of @cn, on its worker's thread.  Reads
 * once (level-triggered: the next epoll_wait() reports the rest), runs
 * what is complete, sends what the socket takes.  While replies are
 * pending the connection waits for EPOLLOUT only, so a client that
 * pipelines without reading is throttled by its own socket, never by
 * a growing buffer.  False when the connection must close. */
static bool econn_event(struct conn *cn, uint32_t events)
{
	struct client *c = cn->cl;
	enum in_result r = IN_MORE;
	uint32_t want;

	out_flush_nb(&c->out);
	if (c->out.failed)
		return false;
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
		ssize_t n = recv(cn->fd, c->in + c->have, IN_BUF - c->have,
				 MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN &&
			       errno != EWOULDBLOCK && errno != EINTR))
			return false;	/* EOF or error */
		if (n > 0) {
			c->have += (size_t)n;
			__atomic_fetch_add(&srv.bytes_in, (unsigned long)n,
					   __ATOMIC_RELAXED);
		}
	}
	for (;;) {
		r = client_input(c);
		out_flush_nb(&c->out);
		if (r == IN_CLOSE || c->out.failed)
			return false;	/* the last reply: best effort */
		if (r == IN_BLOCKED && c->out.len == 0)
			continue;	/* the socket took it all: go on */
		break;
	}
	want = c->out.len ? EPOLLOUT : EPOLLIN;
	if (want != cn->events) {
		struct epoll_event ev = { .events = want, .data.ptr = cn };

		if (epoll_ctl(srv.workers[cn->worker].ep, EPOLL_CTL_MOD,
			      cn->fd, &ev))
			return false;
		cn->events = want;
	}
	return true;
}

/* epoll mode: stop watching @cn and hand it to reap() (main thread). */
static void econn_close(struct conn *cn)
{
	epoll_ctl(srv.workers[cn->worker].ep, EPOLL_CTL_DEL, cn->fd, NULL);
	shutdown(cn->fd, SHUT_RDWR);
	free(cn->cl);
	cn->cl = NULL;
	/* Last: after this the main thread may free @cn. */
	pthread_mutex_lock(&srv.conns_lock);
	cn->done = true;
	pthread_mutex_unlock(&srv.conns_lock);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct epoll_event ev[64];
	int i, n;

	/* Reads the map under RCU and calls rk_call_rcu() (obj_put).
	 * Blocking in epoll_wait() while registered is fine for the memb
	 * flavor: only read-side sections hold up a grace period. */
	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	for (;;) {
		n = epoll_wait(w->ep, ev, 64, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			perror("epoll_wait");
			break;
		}
		for (i = 0; i < n; i++) {
			struct conn *cn = ev[i].data.ptr;

			if (!cn)
				goto out;	/* srv.stop_efd: shutdown */
			if (!econn_event(cn, ev[i].events))
				econn_close(cn);
		}
	}
out:
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	return NULL;
}

static int workers_start(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	int i;

	srv.stop_efd = eventfd(0, EFD_CLOEXEC);
	srv.workers = calloc((size_t)srv.nworkers, sizeof(*srv.workers));
	if (srv.stop_efd < 0 || !srv.workers)
		return -1;
	for (i = 0; i < srv.nworkers; i++) {
		struct worker *w = &srv.workers[i];

		w->ep = epoll_create1(EPOLL_CLOEXEC);
		if (w->ep < 0 ||
		    epoll_ctl(w->ep, EPOLL_CTL_ADD, srv.stop_efd, &ev) ||
		    pthread_create(&w->thread, NULL, worker_main, w))
			return -1;
	}
	return 0;
}

/* Wake every worker (the eventfd stays readable) and join them. */
static void workers_stop(void)
{
	uint64_t one = 1;
	int i;

	if (write(srv.stop_efd, &one, sizeof(one)) != sizeof(one))
		perror("eventfd write");
	for (i = 0; i < srv.nworkers; i++) {
		pthread_join(srv.workers[i].thread, NULL);
		close(srv.workers[i].ep);
	}
	free(srv.workers);
	close(srv.stop_efd);
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
		if (c->has_thread)
			pthread_join(c->thread, NULL);
		free(c->cl);	/* epoll mode, still open at shutdown */
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
		send_all(fd, BUSY_REPLY, sizeof(BUSY_REPLY) - 1);
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
	if (srv.nworkers) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };

		c->worker = (int)(srv.next_worker++ %
				  (unsigned int)srv.nworkers);
		c->events = EPOLLIN;
		c->cl = client_new(fd, true);
		/* Linked and added under conns_lock, which the worker takes
		 * to set ->done: reap() never frees it before it is added. */
		if (!c->cl || fcntl(fd, F_SETFL, O_NONBLOCK) ||
		    epoll_ctl(srv.workers[c->worker].ep, EPOLL_CTL_ADD, fd,
			      &ev)) {
			pthread_mutex_unlock(&srv.conns_lock);
			close(fd);
			free(c->cl);
			free(c);
			return;
		}
		goto link;
	}
	/* Linked before the thread starts, under the lock the worker takes
	 * to set ->done: reap() never misses a worker. */
	c->has_thread = true;
	if (pthread_create(&c->thread, NULL, conn_main, c)) {
		pthread_mutex_unlock(&srv.conns_lock);
		send_all(fd, BUSY_REPLY, sizeof(BUSY_REPLY) - 1);
		close(fd);
		free(c);
		return;
	}
link:
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

	if (srv.nworkers)
		workers_stop();	/* then no worker touches a connection */
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
		"usage: %s [--port N] [--global-lock] [--epoll N] [--max-conns N] [--max-id N]\n"
		"  --port N       TCP port on 127.0.0.1 (0: any free port; default 0)\n"
		"  --global-lock  baseline: every map access under one mutex\n"
		"  --epoll N      N threads with an epoll set each serve the connections\n"
		"                 (default: one thread per connection)\n"
		"  --max-conns N  connections served at once (default 128)\n"
		"  --max-id N     ids are 0..N, HNEW hands out 1..N (default 1048576)\n",
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
	char stats[512];

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--port"))
			port = parse_ulong(argv[++i], argv[0]);
		else if (!strcmp(argv[i], "--global-lock"))
			srv.global_lock = true;
		else if (!strcmp(argv[i], "--max-conns"))
			srv.max_conns = (int)parse_ulong(argv[++i], argv[0]);
		else if (!strcmp(argv[i], "--max-id"))
			srv.max_id = parse_ulong(argv[++i], argv[0]);
		else if (!strcmp(argv[i], "--epoll"))
			srv.nworkers = (int)parse_ulong(argv[++i], argv[0]);
		else
			usage(argv[0]);
	}
	if (port > 65535 || srv.max_conns < 1 || srv.max_conns > 4096 ||
	    srv.max_id < 1 || srv.nworkers < 0 ||
	    srv.nworkers > EPOLL_MAX_WORKERS)
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
	if (srv.nworkers && workers_start()) {
		perror("handle_server: epoll workers");
		return 1;
	}
	printf("listening on 127.0.0.1:%u mode=%s io=%s\n",
	       ntohs(addr.sin_port), srv.global_lock ? "lock" : "ridr",
	       srv.nworkers ? "epoll" : "threads");
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
	format_info(stats, sizeof(stats));
	for (i = 0; stats[i]; i++)	/* one line for the log */
		if (stats[i] == '\r' || stats[i] == '\n')
			stats[i] = ' ';
	fprintf(stderr, "handle_server: final %s\n", stats);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	close(sfd);
	/* Everything was released: a leftover object is a leak. */
	return stat_read(objects) == 0 ? 0 : 3;
}
