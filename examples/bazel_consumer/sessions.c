// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * sessions.c - a minimal ridr-kit consumer built by another Bazel
 * workspace: session ids handed out cyclically (a closed id is not reused
 * at once), looked up under RCU with a reference taken by lockref, closed
 * by removing the id and freeing after a grace period when the last
 * reference goes.  Prints "sessions: ok" when every check holds.
 */
#include "lockref/lockref.h"
#include "ridr/ridr.h"

#include <stdio.h>
#include <stdlib.h>

struct session {
	struct lockref ref;	/* the map holds one reference */
	unsigned long id;
	struct rk_rcu_head rcu;
};

static struct ridr sessions;

static void session_free_rcu(struct rk_rcu_head *head)
{
	free(rk_container_of(head, struct session, rcu));
}

/* Drop a reference; the last one frees after a grace period, because a
 * lookup may have found the pointer just before the id was removed. */
static void session_put(struct session *s)
{
	if (lockref_put_or_lock(&s->ref))
		return;
	lockref_mark_dead(&s->ref);
	lockref_unlock(&s->ref);
	rk_call_rcu(RK_RCU_DEFAULT_FLAVOR, &s->rcu, session_free_rcu);
}

/* Lookup pattern: find under RCU, pin with a reference, leave RCU. */
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

static long session_open(void)
{
	struct session *s = calloc(1, sizeof(*s));
	unsigned long id;

	if (!s)
		return -ENOMEM;
	lockref_init(&s->ref, 1);
	/* Reserve the id, fill in the object, then publish it (release):
	 * a reader never sees a half-initialised session. */
	if (ridr_alloc_cyclic(&sessions, NULL, 1, 1000, &id) < 0) {
		free(s);
		return -ENOSPC;
	}
	s->id = id;
	ridr_replace(&sessions, s, id, NULL);
	return (long)id;
}

static int session_close(unsigned long id)
{
	void *old;
	int ret = ridr_remove(&sessions, id, &old);

	if (ret < 0)
		return ret;
	session_put(old);	/* the map's reference */
	return 0;
}

int main(void)
{
	long a, b, c;
	struct session *s;

	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	ridr_init(&sessions);
	a = session_open();
	b = session_open();
	if (a != 1 || b != 2)
		goto fail;
	s = session_get((unsigned long)a);
	if (!s || s->id != 1)
		goto fail;
	if (session_close((unsigned long)a) < 0)
		goto fail;
	/* Still pinned by our reference after the close ... */
	if (s->id != 1 || session_get((unsigned long)a))
		goto fail;
	session_put(s);	/* ... freed after a grace period now. */
	c = session_open();	/* cyclic: 1 is not reused at once */
	if (c != 3 || session_close(1) != -ENOENT)
		goto fail;
	session_close((unsigned long)b);
	session_close((unsigned long)c);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	ridr_destroy(&sessions);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	printf("sessions: ok\n");
	return 0;
fail:
	fprintf(stderr, "sessions: unexpected result (a=%ld b=%ld)\n", a, b);
	return 1;
}
