// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ridr_consumer.c - a program that links libridr alone (LGPL-2.1-or-later)
 * and no GPL-2.0-only code: `cc ridr_consumer.c $(pkg-config --cflags
 * --libs ridr)` (scripts/pkg_test.sh), or Bazel's @ridr_kit//ridr
 * (//tests/pkg:ridr_consumer_test, examples/bazel_consumer_split).  The
 * binary is then checked with nm/readelf to contain no lockref object
 * (tests/pkg/check_licence.sh).
 *
 * The lookup pattern without lockref: readers find ids under RCU and use
 * the object only inside the read-side section; the writer removes ids and
 * frees the objects after a grace period (rk_call_rcu).  Exits 0 and
 * prints "ridr_consumer: ok" only if every check holds.
 */
#include "ridr/ridr.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define NOBJ 2000
#define NREADERS 2

struct obj {
	unsigned long id;
	unsigned long value;
	struct rk_rcu_head rcu;
};

static struct ridr map;
static int stop;
static unsigned long freed;
static unsigned long found[NREADERS];	/* relaxed: progress only */

#define CHECK(cond)                                                         \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "ridr_consumer: %s:%d: check failed: %s\n", \
				__FILE__, __LINE__, #cond);                 \
			exit(1);                                            \
		}                                                           \
	} while (0)

static void obj_free_rcu(struct rk_rcu_head *head)
{
	/* After a grace period: no reader still holds the pointer. */
	free(rk_container_of(head, struct obj, rcu));
	__atomic_fetch_add(&freed, 1, __ATOMIC_RELAXED);
}

static void *reader(void *arg)
{
	unsigned long *seen = arg, id = 0;

	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		struct obj *o;

		rk_rcu_read_lock();
		o = ridr_find(&map, id);
		/* Valid until rk_rcu_read_unlock(): the free waits for us. */
		if (o) {
			CHECK(o->id == id && o->value == id * 7);
			__atomic_fetch_add(seen, 1, __ATOMIC_RELAXED);
		}
		rk_rcu_read_unlock();
		id = (id + 1) % NOBJ;
	}
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	return NULL;
}

int main(void)
{
	pthread_t tid[NREADERS];
	unsigned long id, n = 0;
	struct obj *o;
	int i;

	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	ridr_init(&map);
	for (i = 0; i < NOBJ; i++) {
		o = calloc(1, sizeof(*o));
		CHECK(o);
		o->id = (unsigned long)i;
		o->value = o->id * 7;
		/* Exact id: [i, i]; publishes the initialised object. */
		CHECK(ridr_alloc(&map, o, o->id, o->id, &id) == 0);
		CHECK(id == o->id);
	}
	CHECK(ridr_count(&map) == NOBJ);
	for (i = 0; i < NREADERS; i++)
		CHECK(pthread_create(&tid[i], NULL, reader, &found[i]) == 0);
	for (i = 0; i < NREADERS; i++)
		while (__atomic_load_n(&found[i], __ATOMIC_RELAXED) < NOBJ)
			sched_yield();

	/* Remove the multiples of 3 while the readers run. */
	for (id = 0; id < NOBJ; id += 3) {
		void *old;

		CHECK(ridr_remove(&map, id, &old) == 0);
		rk_call_rcu(RK_RCU_DEFAULT_FLAVOR,
			    &((struct obj *)old)->rcu, obj_free_rcu);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NREADERS; i++)
		CHECK(pthread_join(tid[i], NULL) == 0);

	ridr_for_each(&map, o, id) {
		CHECK(id % 3 != 0 && o->id == id);
		n++;
	}
	CHECK(n == NOBJ - (NOBJ + 2) / 3 && ridr_count(&map) == n);
	ridr_for_each(&map, o, id) {
		CHECK(ridr_remove(&map, id, NULL) == 0);
		rk_call_rcu(RK_RCU_DEFAULT_FLAVOR, &o->rcu, obj_free_rcu);
	}
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	CHECK(__atomic_load_n(&freed, __ATOMIC_RELAXED) == NOBJ);
	CHECK(ridr_is_empty(&map));
	ridr_destroy(&map);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	printf("ridr_consumer: ok (%d ids, %d readers)\n", NOBJ, NREADERS);
	return 0;
}
