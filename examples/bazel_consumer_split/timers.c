// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * timers.c - an LGPL-2.1-or-later program on libridr alone (no lockref):
 * timer ids handed out cyclically, looked up under RCU by a second
 * thread, cancelled by removing the id and freeing after a grace period.
 * Prints "timers: ok" when every check holds.
 */
#include "ridr/ridr.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct timer {
	unsigned long id;
	unsigned long expires;
	struct rk_rcu_head rcu;
};

static struct ridr timers;
static int stop;

static void timer_free_rcu(struct rk_rcu_head *head)
{
	free(rk_container_of(head, struct timer, rcu));
}

/* Reader: the timer is valid only inside the read-side section. */
static void *poller(void *arg __attribute__((unused)))
{
	unsigned long bad = 0;

	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		unsigned long id;
		struct timer *t;

		rk_rcu_read_lock();
		ridr_for_each(&timers, t, id)
			bad += t->id != id || t->expires != id * 10;
		rk_rcu_read_unlock();
	}
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	return (void *)bad;
}

static void cancel(unsigned long id)
{
	void *old;

	if (ridr_remove(&timers, id, &old) == 0)
		rk_call_rcu(RK_RCU_DEFAULT_FLAVOR, &((struct timer *)old)->rcu,
			    timer_free_rcu);
}

int main(void)
{
	unsigned long id, i, n = 0, pending[50];
	struct timer *t;
	pthread_t tid;
	void *bad;

	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	ridr_init(&timers);
	if (pthread_create(&tid, NULL, poller, NULL))
		return 1;
	for (i = 0; i < 5000; i++) {
		t = calloc(1, sizeof(*t));
		/* Reserve the id, fill in the timer, then publish it. */
		if (!t || ridr_alloc_cyclic(&timers, NULL, 1, 1000, &id) < 0)
			return 1;
		t->id = id;
		t->expires = id * 10;
		ridr_replace(&timers, t, id, NULL);	/* release */
		if (i >= 50)
			cancel(pending[i % 50]);	/* the oldest */
		pending[i % 50] = id;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(tid, &bad);
	ridr_for_each(&timers, t, id) {
		n++;
		cancel(id);
	}
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	if (bad || n != 50 || !ridr_is_empty(&timers)) {
		fprintf(stderr, "timers: %lu bad reads, %lu left\n",
			(unsigned long)bad, n);
		return 1;
	}
	ridr_destroy(&timers);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	printf("timers: ok\n");
	return 0;
}
