/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * flatmap.h - the baselines ridr is measured against: a flat array of
 * entries indexed by id with an O(1) free-id stack, behind one global
 * lock, either a spinlock (SysV ipc before 2002, POSIX timers' idr_lock
 * until 2011) or a reader-writer lock (ipc's 2.6.24 rw_mutex).  Plus
 * liburcu's RCU lock-free hash table as the other RCU-readable design.
 */
#ifndef RK_FLATMAP_H
#define RK_FLATMAP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "compat/compat.h"

struct flatmap {
	void **slot;
	unsigned long *free_ids;	/* stack of free ids */
	unsigned long nfree, cap;
	rk_spinlock_t spin;
	pthread_rwlock_t rw;
};

static inline int flatmap_init(struct flatmap *f, unsigned long cap)
{
	f->slot = calloc(cap, sizeof(*f->slot));
	f->free_ids = malloc(cap * sizeof(*f->free_ids));
	if (!f->slot || !f->free_ids)
		return -ENOMEM;
	f->cap = cap;
	f->nfree = cap;
	/* Lowest ids on top of the stack. */
	for (unsigned long i = 0; i < cap; i++)
		f->free_ids[i] = cap - 1 - i;
	rk_spin_lock_init(&f->spin);
	pthread_rwlock_init(&f->rw, NULL);
	return 0;
}

static inline void flatmap_destroy(struct flatmap *f)
{
	pthread_rwlock_destroy(&f->rw);
	free(f->slot);
	free(f->free_ids);
}

/* Callers hold the writer side of the lock. */
static inline long __flatmap_alloc(struct flatmap *f, void *p)
{
	unsigned long id;

	if (!f->nfree)
		return -ENOSPC;
	id = f->free_ids[--f->nfree];
	f->slot[id] = p;
	return (long)id;
}

static inline void __flatmap_remove(struct flatmap *f, unsigned long id)
{
	f->slot[id] = NULL;
	f->free_ids[f->nfree++] = id;
}

static inline void *flatmap_find_spin(struct flatmap *f, unsigned long id)
{
	void *p;

	rk_spin_lock(&f->spin);
	p = id < f->cap ? f->slot[id] : NULL;
	rk_spin_unlock(&f->spin);
	return p;
}

static inline void *flatmap_find_rw(struct flatmap *f, unsigned long id)
{
	void *p;

	pthread_rwlock_rdlock(&f->rw);
	p = id < f->cap ? f->slot[id] : NULL;
	pthread_rwlock_unlock(&f->rw);
	return p;
}

#endif /* RK_FLATMAP_H */
