// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Generation-checked handles, readers under writers: writers allocate
 * handles for fresh objects, remove them and free the objects after a
 * grace period, with few generation bits so ids are reused (and retired)
 * all the time; readers look up random handles from the log of every
 * handle ever issued, most of them stale.  A reader must never get an
 * object of another generation (each object carries the serial number
 * logged with its handle), never a freed object (poisoned before the
 * free; ASan sees the free itself), and must find a handle that stayed
 * live throughout its lookup.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/lib/ridr_fixture.h"

#define WRITERS 2
#define READERS 2
#define OWN 256
#define OPS RK_STRESS(200000L)
#define MAGIC_LIVE 0x11feULL
#define MAGIC_DEAD 0xdeadULL

struct obj {
	uint64_t serial;
	uint64_t magic;
	struct rk_rcu_head rcu;
};

/*
 * One issued handle.  @h and @serial are written once, before the log's
 * length is published with release.  @state: 0 live, 1 being removed
 * (set before the removal), 2 removed.
 */
struct logent {
	uint64_t h;
	uint64_t serial;
	int state;
};

static struct {
	struct ridr_handles hs;
	struct logent log[WRITERS][OPS + OWN];
	long len[WRITERS];
	int stop;
	long found, stale, tested;
	struct rk_start start;
} s;

static int barrier_word;
/* A full barrier as an RMW (TSan does not model C11 fences); see
 * ridr_ida_test.c.
 */
static inline void full_barrier(void)
{
	__atomic_fetch_add(&barrier_word, 0, __ATOMIC_SEQ_CST);
}

static void obj_free_rcu(struct rk_rcu_head *head)
{
	struct obj *o = rk_container_of(head, struct obj, rcu);

	__atomic_store_n(&o->magic, MAGIC_DEAD, __ATOMIC_RELAXED);
	free(o);
}

static void drop(long w, long i)
{
	struct logent *e = &s.log[w][i];
	void *old = NULL;

	__atomic_store_n(&e->state, 1, __ATOMIC_SEQ_CST);
	full_barrier();
	cr_assert_eq(ridr_handle_remove(&s.hs, e->h, &old), 0,
		     "live handle %#llx not removed",
		     (unsigned long long)e->h);
	cr_assert_eq(((struct obj *)old)->serial, e->serial,
		     "removed another generation's object");
	rk_call_rcu(RK_RCU_DEFAULT_FLAVOR, &((struct obj *)old)->rcu,
		    obj_free_rcu);
	__atomic_store_n(&e->state, 2, __ATOMIC_SEQ_CST);
}

static void *writer(void *arg)
{
	long w = (long)(intptr_t)arg;
	long held[OWN];
	struct rk_prng r;

	rk_prng_seed(&r, 1234 + (uint64_t)w);
	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	for (int i = 0; i < OWN; i++)
		held[i] = -1;
	rk_start_wait(&s.start, WRITERS + READERS);
	for (long op = 0; op < OPS; op++) {
		int i = (int)rk_prng_below(&r, OWN);

		if (held[i] >= 0) {
			drop(w, held[i]);
			held[i] = -1;
		} else if (!rk_prng_below(&r, 4) && s.len[w]) {
			/* A removed handle of ours: stale for ever. */
			struct logent *e =
				&s.log[w][rk_prng_below(&r, (uint64_t)s.len[w])];

			if (__atomic_load_n(&e->state, __ATOMIC_SEQ_CST) == 2)
				cr_assert_eq(ridr_handle_remove(&s.hs, e->h,
								NULL),
					     -ENOENT, "stale handle removed");
		} else {
			struct obj *o = malloc(sizeof(*o));
			long n = s.len[w];
			uint64_t h;

			cr_assert(o);
			o->serial = ((uint64_t)w << 48) | (uint64_t)n;
			o->magic = MAGIC_LIVE;
			cr_assert_eq(ridr_handle_alloc(&s.hs, o, &h), 0);
			s.log[w][n].h = h;
			s.log[w][n].serial = o->serial;
			s.log[w][n].state = 0;
			__atomic_store_n(&s.len[w], n + 1, __ATOMIC_RELEASE);
			held[i] = n;
		}
	}
	for (int i = 0; i < OWN; i++)
		if (held[i] >= 0)
			drop(w, held[i]);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	return NULL;
}

static void *reader(void *arg)
{
	long found = 0, stale = 0, tested = 0;
	struct rk_prng r;

	rk_prng_seed(&r, 99 + (uint64_t)(intptr_t)arg);
	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	rk_start_wait(&s.start, WRITERS + READERS);
	while (!__atomic_load_n(&s.stop, __ATOMIC_ACQUIRE)) {
		int w = (int)rk_prng_below(&r, WRITERS);
		long len = __atomic_load_n(&s.len[w], __ATOMIC_ACQUIRE);
		struct logent *e;
		struct obj *o;
		int s1, s2;

		if (!len)
			continue;
		/* Mostly recent handles: the ids now being reused. */
		e = &s.log[w][rk_prng_below(&r, 2) ?
			      len - 1 - (long)rk_prng_below(&r, len < 64 ?
							    (uint64_t)len : 64) :
			      (long)rk_prng_below(&r, (uint64_t)len)];
		s1 = __atomic_load_n(&e->state, __ATOMIC_SEQ_CST);
		full_barrier();
		ridr_read_lock(&s.hs.map);
		o = ridr_handle_find(&s.hs, e->h);
		if (o) {
			cr_assert_eq(__atomic_load_n(&o->magic,
						     __ATOMIC_RELAXED),
				     MAGIC_LIVE, "handle %#llx found a freed "
				     "object", (unsigned long long)e->h);
			cr_assert_eq(o->serial, e->serial, "handle %#llx "
				     "(generation %u) found the object of "
				     "another generation",
				     (unsigned long long)e->h,
				     ridr_handle_gen(&s.hs, e->h));
			found++;
		}
		ridr_read_unlock(&s.hs.map);
		full_barrier();
		s2 = __atomic_load_n(&e->state, __ATOMIC_SEQ_CST);
		if (s1 == 0 && s2 == 0)
			cr_assert(o, "live handle %#llx not found",
				  (unsigned long long)e->h);
		if (s1 == 2)
			cr_assert_null(o, "removed handle %#llx found",
				       (unsigned long long)e->h);
		stale += s1 == 2;
		tested++;
	}
	__atomic_add_fetch(&s.found, found, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s.stale, stale, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s.tested, tested, __ATOMIC_RELAXED);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	return NULL;
}

static void run(unsigned int gen_bits)
{
	pthread_t w[WRITERS], rd[READERS];

	memset(&s, 0, sizeof(s));
	cr_assert_eq(ridr_handles_init(&s.hs, gen_bits), 0);
	for (long i = 0; i < READERS; i++)
		pthread_create(&rd[i], NULL, reader, (void *)(intptr_t)i);
	for (long i = 0; i < WRITERS; i++)
		pthread_create(&w[i], NULL, writer, (void *)(intptr_t)i);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(w[i], NULL);
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < READERS; i++)
		pthread_join(rd[i], NULL);
	cr_expect_eq(ridr_handles_count(&s.hs), 0);
	fprintf(stderr, "gen_bits %u: %ld handles issued, %lu ids retired; "
		"%ld lookups, %ld found, %ld of removed handles\n", gen_bits,
		s.len[0] + s.len[1], ridr_handles_retired(&s.hs), s.tested,
		s.found, s.stale);
	cr_expect_gt(s.tested, 0);
	cr_expect_gt(s.stale, 0);
	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	ridr_handles_destroy(&s.hs);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
}

Test(ridr_handle_stress, readers_never_see_another_generation, .timeout = 600)
{
	rk_counting_alloc_install(&fx_alloc);
	run(3);
	run(12);
	cr_expect_eq(rk_counting_alloc_live_objects(&fx_alloc), 0,
		     "handle map objects still allocated after rcu_barrier");
	rk_counting_alloc_remove(&fx_alloc);
}
