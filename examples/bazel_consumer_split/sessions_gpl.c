// SPDX-License-Identifier: GPL-2.0-only
/*
 * sessions_gpl.c - a program on libridr and liblockref: it links
 * GPL-2.0-only code (lockref), so it is GPL-2.0-only itself.  Sessions
 * are looked up under RCU and pinned with lockref_get_not_dead(); the
 * last reference frees after a grace period.  Prints "sessions_gpl: ok"
 * when every check holds.
 */
#include "lockref/lockref.h"
#include "ridr/ridr.h"

#include <stdio.h>
#include <stdlib.h>

struct session {
	struct lockref ref;	/* the map's reference + one per user */
	struct rk_rcu_head rcu;
};

static struct ridr sessions;
static int freed;

static void session_free_rcu(struct rk_rcu_head *head)
{
	free(rk_container_of(head, struct session, rcu));
	freed++;	/* callbacks run one at a time */
}

static void session_put(struct session *s)
{
	if (lockref_put_or_lock(&s->ref))
		return;
	lockref_mark_dead(&s->ref);
	lockref_unlock(&s->ref);
	rk_call_rcu(RK_RCU_DEFAULT_FLAVOR, &s->rcu, session_free_rcu);
}

static struct session *session_get(unsigned long id)
{
	struct session *s;

	rk_rcu_read_lock();
	s = ridr_find(&sessions, id);
	if (s && !lockref_get_not_dead(&s->ref))
		s = NULL;
	rk_rcu_read_unlock();
	return s;
}

int main(void)
{
	struct session *s, *pinned;
	unsigned long id, i;
	void *old;

	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	ridr_init(&sessions);
	for (i = 0; i < 10; i++) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return 1;
		lockref_init(&s->ref, 1);
		if (ridr_alloc(&sessions, s, 1, 100, &id) < 0 || id != i + 1)
			return 1;
	}
	pinned = session_get(3);
	if (!pinned || ridr_remove(&sessions, 3, &old) || old != pinned)
		return 1;
	session_put(old);		/* the map's reference */
	if (session_get(3) || pinned->ref.count != 1)
		return 1;		/* gone from the map, still ours */
	session_put(pinned);		/* last: freed after a grace period */
	ridr_for_each(&sessions, s, id) {
		ridr_remove(&sessions, id, NULL);
		session_put(s);
	}
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	if (freed != 10)
		return 1;
	ridr_destroy(&sessions);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	printf("sessions_gpl: ok\n");
	return 0;
}
