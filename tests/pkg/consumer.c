// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * consumer.c - an out-of-tree C program against an installed libridr:
 * built with nothing but `cc consumer.c $(pkg-config --cflags --libs
 * ridr)` (scripts/pkg_test.sh) and with Bazel through @ridr_kit
 * (examples/bazel_consumer).  It runs the documented lifetime pattern:
 * readers look ids up under RCU and pin objects with
 * lockref_get_not_dead(); the writer removes ids and drops the map's
 * reference; whoever drops the last reference marks the object dead and
 * frees it after a grace period.  Exits 0 and prints "consumer: ok"
 * only if every check holds.
 */
#include "lockref/lockref.h"
#include "ridr/ridr.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define NOBJ 1000
#define NREADERS 2

struct obj {
	struct lockref ref;
	unsigned long id;
	unsigned long value;
	struct rk_rcu_head rcu;
};

static struct ridr map;
static int stop;
static unsigned long freed;
/* Lookups that found an object, per reader (relaxed: progress only). */
static unsigned long found[NREADERS];

#define CHECK(cond)                                                         \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "consumer: %s:%d: check failed: %s\n", \
				__FILE__, __LINE__, #cond);                 \
			exit(1);                                            \
		}                                                           \
	} while (0)

static void obj_free_rcu(struct rk_rcu_head *head)
{
	struct obj *o = rk_container_of(head, struct obj, rcu);

	/* Runs on liburcu's call_rcu thread, after a grace period: no
	 * reader can still hold a pointer from ridr_find(). */
	free(o);
	__atomic_fetch_add(&freed, 1, __ATOMIC_RELAXED);
}

/* Drop a reference; the last one marks @o dead and frees it after a grace
 * period: a reader that found @o in the map before its removal may still
 * be about to call lockref_get_not_dead() on it (and will fail: the dead
 * mark is made under the lock, which get_not_dead's slow path takes). */
static void obj_put(struct obj *o)
{
	if (lockref_put_or_lock(&o->ref))
		return;
	lockref_mark_dead(&o->ref);
	lockref_unlock(&o->ref);
	rk_call_rcu(RK_RCU_DEFAULT_FLAVOR, &o->rcu, obj_free_rcu);
}

static void *reader(void *arg)
{
	unsigned long *seen = arg, id = 0;

	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		struct obj *o;

		rk_rcu_read_lock();
		o = ridr_find(&map, id);
		if (o && !lockref_get_not_dead(&o->ref))
			o = NULL;	/* dying: treat as absent */
		rk_rcu_read_unlock();
		if (o) {
			/* Our reference keeps @o alive outside RCU. */
			CHECK(o->id == id && o->value == id * 3);
			obj_put(o);
			__atomic_fetch_add(seen, 1, __ATOMIC_RELAXED);
		}
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
		lockref_init(&o->ref, 1);	/* the map's reference */
		CHECK(ridr_alloc(&map, NULL, 0, NOBJ - 1, &id) == 0);
		CHECK(id == (unsigned long)i);	/* lowest free id first */
		o->id = id;
		o->value = id * 3;
		/* Publishes the initialised object (release). */
		CHECK(ridr_replace(&map, o, id, NULL) == 0);
	}
	CHECK(ridr_count(&map) == NOBJ);
	for (i = 0; i < NREADERS; i++)
		CHECK(pthread_create(&tid[i], NULL, reader, &found[i]) == 0);
	/* Let every reader find each object once before removals start,
	 * so the removals below really race with lookups. */
	for (i = 0; i < NREADERS; i++)
		while (__atomic_load_n(&found[i], __ATOMIC_RELAXED) < NOBJ)
			sched_yield();

	/* Remove every other id while the readers run. */
	for (id = 0; id < NOBJ; id += 2) {
		void *old;

		CHECK(ridr_remove(&map, id, &old) == 0);
		obj_put(old);	/* the map's reference */
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NREADERS; i++)
		CHECK(pthread_join(tid[i], NULL) == 0);

	rk_rcu_read_lock();
	for (id = 0; id < NOBJ; id++)
		CHECK((ridr_find(&map, id) == NULL) == (id % 2 == 0));
	rk_rcu_read_unlock();
	ridr_for_each(&map, o, id) {
		CHECK(id % 2 == 1 && o->id == id);
		n++;
	}
	CHECK(n == NOBJ / 2 && ridr_count(&map) == NOBJ / 2);
	CHECK(ridr_alloc(&map, NULL, 0, 0, &id) == 0 && id == 0);
	CHECK(ridr_remove(&map, 0, NULL) == 0);
	CHECK(ridr_alloc(&map, NULL, 1, 1, &id) == -ENOSPC);

	ridr_for_each(&map, o, id) {
		CHECK(ridr_remove(&map, id, NULL) == 0);
		CHECK(!__lockref_is_dead(&o->ref));	/* no reader left */
		obj_put(o);
	}
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	CHECK(__atomic_load_n(&freed, __ATOMIC_RELAXED) == NOBJ);
	CHECK(ridr_is_empty(&map));
	ridr_destroy(&map);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	printf("consumer: ok (%d ids, %d readers)\n", NOBJ, NREADERS);
	return 0;
}
