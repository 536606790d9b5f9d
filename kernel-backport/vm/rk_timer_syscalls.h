/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rk_timer_syscalls.h - POSIX timer system calls for the in-VM programs
 * (rk_smoke.c, rk_bench.c), raw: they take and return the kernel's int
 * timer ids, not glibc's timer_t encoding.  Each returns 0 or -1 (errno).
 */
#ifndef RK_TIMER_SYSCALLS_H
#define RK_TIMER_SYSCALLS_H

#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* A CLOCK_MONOTONIC timer that signals nothing; its id goes to *@id. */
static inline int k_timer_create(int *id)
{
	struct sigevent sev = { .sigev_notify = SIGEV_NONE };

	return (int)syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, id);
}

static inline int k_timer_settime(int id, const struct itimerspec *its)
{
	return (int)syscall(SYS_timer_settime, id, 0, its, NULL);
}

static inline int k_timer_gettime(int id, struct itimerspec *cur)
{
	return (int)syscall(SYS_timer_gettime, id, cur);
}

static inline int k_timer_delete(int id)
{
	return (int)syscall(SYS_timer_delete, id);
}

#endif
