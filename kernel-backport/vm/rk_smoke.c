// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rk_smoke.c - smoke test run inside the test VM (static, as root).
 *
 * Exercises the kernel paths the ridr-kit series touches or will touch:
 *  - SysV sem/msg/shm: create, use, remove, create again (indexes are
 *    allocated cyclically, so the removed id is not handed out again at
 *    once), and the ids listed in /proc/sysvipc/{sem,msg,shm}; SHM_INFO,
 *    kernel.shm_rmid_forced destroying an orphaned segment, and the
 *    teardown of an ipc namespace that still holds objects;
 *  - POSIX timers: ids start at 0 in every process, are per process
 *    (two processes hold the same id independently; a child inherits
 *    none), are not reused right away after timer_delete(), deleted,
 *    negative and unallocated ids give EINVAL, and many timers per
 *    process with create/delete churn from several threads work while
 *    other threads timer_gettime() a live timer;
 *  - lockref (dcache): several threads stat()/open()/close() the same
 *    paths, so d_lockref is taken and dropped concurrently;
 *  - the edges listed in rk_smoke_more.h (timers across exec, exit and
 *    failed creates, RLIMIT_SIGPENDING, CRIU-style restore; ipc next_id,
 *    sequence wrap, long /proc/sysvipc files, max index, ipcmni_extend;
 *    ridr node objects back to baseline where slabinfo shows them).
 *
 * Prints one line "rk_smoke: <check> ok|FAILED ..." per check and
 * "rk_smoke: N passed, N failed"; exits 0 only if nothing failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rk_timer_syscalls.h"

static int passed, failed;

static void check(int ok, const char *what, const char *detail)
{
	if (ok)
		passed++;
	else
		failed++;
	printf("rk_smoke: %s %s%s%s\n", what, ok ? "ok" : "FAILED",
	       detail ? " " : "", detail ? detail : "");
	fflush(stdout);
}

/* Is @id listed in /proc/sysvipc/@kind (second column of each row)? */
static int proc_lists(const char *kind, int id)
{
	char path[64], line[512];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/sysvipc/%s", kind);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		int key, pid;

		if (sscanf(line, "%d %d", &key, &pid) == 2 && pid == id)
			found = 1;
	}
	fclose(f);
	return found;
}

union semun {
	int val;
	struct semid_ds *buf;
	unsigned short *array;
};

static void test_sysv(void)
{
	struct sembuf op = { .sem_num = 0, .sem_op = 1, .sem_flg = 0 };
	struct { long type; char text[16]; } msg = { 1, "ridr" }, in;
	int sem, sem2, q, q2, shm, shm2, n;
	char detail[128];
	char *p;

	sem = semget(IPC_PRIVATE, 4, IPC_CREAT | 0600);
	check(sem >= 0, "sem_create", NULL);
	check(semop(sem, &op, 1) == 0 &&
	      semctl(sem, 0, GETVAL, (union semun){ 0 }) == 1, "sem_use",
	      NULL);
	check(proc_lists("sem", sem) == 1, "sem_proc", NULL);
	check(semctl(sem, 0, IPC_RMID, (union semun){ 0 }) == 0 &&
	      proc_lists("sem", sem) == 0, "sem_remove", NULL);
	sem2 = semget(IPC_PRIVATE, 4, IPC_CREAT | 0600);
	snprintf(detail, sizeof(detail), "(old id %d, new id %d)", sem, sem2);
	/*
	 * Cyclic: the freed slot (low 15 bits) is not reused at once, the
	 * next one is, so the id a stale user holds stays invalid.
	 */
	check(sem2 >= 0 && sem2 != sem && (sem2 & 0x7fff) > (sem & 0x7fff),
	      "sem_id_reuse", detail);
	semctl(sem2, 0, IPC_RMID, (union semun){ 0 });

	q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	check(q >= 0, "msg_create", NULL);
	n = msgsnd(q, &msg, sizeof(msg.text), 0);
	check(n == 0 && msgrcv(q, &in, sizeof(in.text), 1, 0) ==
	      (ssize_t)sizeof(msg.text) && !strcmp(in.text, "ridr"),
	      "msg_use", NULL);
	check(proc_lists("msg", q) == 1, "msg_proc", NULL);
	check(msgctl(q, IPC_RMID, NULL) == 0 && proc_lists("msg", q) == 0,
	      "msg_remove", NULL);
	q2 = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	snprintf(detail, sizeof(detail), "(old id %d, new id %d)", q, q2);
	check(q2 >= 0 && q2 != q && (q2 & 0x7fff) > (q & 0x7fff),
	      "msg_id_reuse", detail);
	msgctl(q2, IPC_RMID, NULL);

	shm = shmget(IPC_PRIVATE, 65536, IPC_CREAT | 0600);
	check(shm >= 0, "shm_create", NULL);
	p = shmat(shm, NULL, 0);
	check(p != (void *)-1 && (strcpy(p + 4096, "ridr"), 1) &&
	      !strcmp(p + 4096, "ridr"), "shm_use", NULL);
	check(proc_lists("shm", shm) == 1, "shm_proc", NULL);
	check(shmctl(shm, IPC_RMID, NULL) == 0 && shmdt(p) == 0 &&
	      proc_lists("shm", shm) == 0, "shm_remove", NULL);
	shm2 = shmget(IPC_PRIVATE, 65536, IPC_CREAT | 0600);
	snprintf(detail, sizeof(detail), "(old id %d, new id %d)", shm, shm2);
	check(shm2 >= 0 && shm2 != shm && (shm2 & 0x7fff) > (shm & 0x7fff),
	      "shm_id_reuse", detail);
	shmctl(shm2, IPC_RMID, NULL);

	/* Many objects at once, removed in a different order. */
	{
		int ids[500], i, ok = 1;

		for (i = 0; i < 500; i++) {
			ids[i] = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
			ok &= ids[i] >= 0;
		}
		for (i = 499; i >= 0; i -= 2)
			ok &= msgctl(ids[i], IPC_RMID, NULL) == 0;
		for (i = 0; i < 500; i += 2)
			ok &= msgctl(ids[i], IPC_RMID, NULL) == 0;
		check(ok, "msg_500_create_remove", NULL);
	}
}

/*
 * Paths of ipc that look objects up with ids->rwsem held (not under the
 * caller's RCU) or remove them while iterating: SHM_INFO (shm_get_stat),
 * kernel.shm_rmid_forced (shm_destroy_orphaned), and the teardown of an
 * ipc namespace that still holds objects (free_ipcs, *_exit_ns).
 */
static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	return close(fd) == 0 && ok ? 0 : -1;
}

/* In a child: a new ipc namespace, objects left in it at exit. */
static int ipc_ns_child(void)
{
	struct { long type; char text[8]; } msg = { 1, "ns" };
	int i, q, first;

	if (unshare(CLONE_NEWIPC))
		return 10;
	/* A fresh namespace starts at index 0, sequence 0. */
	first = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	if (first != 0)
		return 11;
	if (msgsnd(first, &msg, sizeof(msg.text), 0))
		return 12;
	for (i = 0; i < 64; i++) {
		q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
		if (q < 0 || semget(IPC_PRIVATE, 2, IPC_CREAT | 0600) < 0 ||
		    shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600) < 0)
			return 13;
		if (i % 3 == 0 && msgctl(q, IPC_RMID, NULL))
			return 14;
	}
	return 0;	/* exit: the namespace dies with 150 objects in it */
}

static void test_sysv_locked_paths(void)
{
	struct shm_info si;
	struct shmid_ds ds;
	char detail[128];
	int a, b, max, status = -1;
	pid_t pid;

	a = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	b = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	max = shmctl(0, SHM_INFO, (struct shmid_ds *)&si);
	snprintf(detail, sizeof(detail), "(ids %d %d, max index %d, used %d)",
		 a, b, max, si.used_ids);
	check(a >= 0 && b >= 0 && si.used_ids == 2 && max == (b & 0x7fff),
	      "shm_info", detail);
	shmctl(a, IPC_RMID, NULL);
	shmctl(b, IPC_RMID, NULL);

	/* An orphaned segment goes when shm_rmid_forced is switched on. */
	pid = fork();
	if (pid == 0)
		_exit(shmget(0x5244, 4096, IPC_CREAT | 0600) < 0);
	waitpid(pid, &status, 0);
	a = shmget(0x5244, 0, 0);
	check(status == 0 && a >= 0 && shmctl(a, IPC_STAT, &ds) == 0,
	      "shm_orphan_kept", NULL);
	check(write_file("/proc/sys/kernel/shm_rmid_forced", "1\n") == 0 &&
	      shmctl(a, IPC_STAT, &ds) == -1 && errno == EINVAL,
	      "shm_rmid_forced_destroys_orphan", NULL);
	write_file("/proc/sys/kernel/shm_rmid_forced", "0\n");

	pid = fork();
	if (pid == 0)
		_exit(ipc_ns_child());
	waitpid(pid, &status, 0);
	snprintf(detail, sizeof(detail), "(child status %d)",
		 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "ipc_namespace_teardown_with_objects", detail);
}

/* A new timer's id, or -1. */
static int new_timer(void)
{
	int id;

	return k_timer_create(&id) ? -1 : id;
}

/* In a fresh child: the first timer id, as the exit status. */
static int first_timer_id_in_child(void)
{
	pid_t pid = fork();
	int status;

	if (pid == 0)
		_exit(new_timer() & 0xff);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * Two processes hold a timer with the same id and neither sees the
 * other's: the parent's @parent_id is not inherited by a child, the
 * child's first timer is id 0 while the parent's id 0 is long deleted,
 * and each reads back its own setting.  0 on success.
 */
static int timers_are_per_process(int parent_id)
{
	int go[2], done[2], status, ok = 1;
	struct itimerspec cur;
	pid_t pid;
	char c;

	if (pipe(go) || pipe(done))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct itimerspec its = { .it_value = { 200, 0 } };
		int t;

		/* Not inherited: the parent's id means nothing here. */
		if (k_timer_gettime(parent_id, &cur) != -1 || errno != EINVAL)
			_exit(1);
		t = new_timer();
		if (t != 0 || k_timer_settime(t, &its))
			_exit(2);
		c = 'x';
		if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) != 1)
			_exit(3);
		/* Still ours, with our setting, after the parent looked. */
		if (k_timer_gettime(t, &cur) || cur.it_value.tv_sec <= 100)
			_exit(4);
		_exit(k_timer_delete(t) ? 5 : 0);
	}
	if (pid < 0 || read(go[0], &c, 1) != 1)
		return -1;
	/* The child's id 0 is live; ours was deleted: EINVAL here. */
	ok &= k_timer_gettime(0, &cur) == -1 && errno == EINVAL;
	/* Our own timer is intact, at its own setting (<= 100 s). */
	ok &= k_timer_gettime(parent_id, &cur) == 0 &&
	      cur.it_value.tv_sec <= 100;
	c = 'x';
	if (write(done[1], &c, 1) != 1)
		ok = 0;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
	return ok ? WEXITSTATUS(status) : 10 + WEXITSTATUS(status);
}

#define CHURN_THREADS 4
#define CHURN_ROUNDS 5000
#define GETTIME_THREADS 2

static volatile int churn_running;

/* timer_gettime() on one live timer while other threads churn ids. */
static void *timer_gettime_storm(void *arg)
{
	int id = (int)(long)arg;
	struct itimerspec cur;
	long bad = 0, n = 0;

	while (churn_running || n < 1000) {
		if (k_timer_gettime(id, &cur) || cur.it_value.tv_sec > 100)
			bad++;
		n++;
	}
	return (void *)bad;
}

static void *timer_churn(void *arg)
{
	long bad = 0;
	int i;

	(void)arg;
	for (i = 0; i < CHURN_ROUNDS; i++) {
		struct itimerspec its = { .it_value = { 100, 0 } }, cur;
		int t = new_timer();

		if (t < 0) {
			bad++;
			continue;
		}
		if (k_timer_settime(t, &its) || k_timer_gettime(t, &cur) ||
		    cur.it_value.tv_sec > 100 || k_timer_delete(t))
			bad++;
	}
	return (void *)bad;
}

static void test_timers(void)
{
	int many[1000], t;
	pthread_t th[CHURN_THREADS], rd[GETTIME_THREADS];
	struct itimerspec its = { .it_value = { 100, 0 } }, cur;
	char detail[128];
	long bad = 0, rbad = 0;
	int i, ok = 1, a, b;

	a = first_timer_id_in_child();
	b = first_timer_id_in_child();
	snprintf(detail, sizeof(detail), "(first ids %d, %d)", a, b);
	check(a == 0 && b == 0, "timer_ids_start_at_0_per_process", detail);

	for (i = 0; i < 1000; i++) {
		many[i] = new_timer();
		ok &= many[i] >= 0;
	}
	check(ok, "timer_1000_per_process", NULL);
	for (i = 0; i < 1000; i++)
		ok &= k_timer_delete(many[i]) == 0;
	check(ok, "timer_1000_delete", NULL);
	/* Cyclic: the next id is past the ones just freed. */
	t = new_timer();
	snprintf(detail, sizeof(detail), "(last id %d, new id %d)",
		 many[999], t);
	check(t > many[999], "timer_id_not_reused", detail);
	k_timer_delete(t);
	check(k_timer_delete(many[0]) == -1 && errno == EINVAL,
	      "timer_deleted_id_is_invalid", NULL);

	check(k_timer_gettime(-1, &cur) == -1 && errno == EINVAL &&
	      k_timer_delete(INT_MIN) == -1 && errno == EINVAL &&
	      k_timer_delete(INT_MAX) == -1 && errno == EINVAL,
	      "timer_bad_ids_are_invalid", NULL);

	/* A live timer of the parent while a child has its own id 0. */
	t = new_timer();
	k_timer_settime(t, &its);
	i = timers_are_per_process(t);
	snprintf(detail, sizeof(detail), "(status %d)", i);
	check(i == 0, "timer_same_id_in_two_processes", detail);

	churn_running = 1;
	for (i = 0; i < GETTIME_THREADS; i++)
		pthread_create(&rd[i], NULL, timer_gettime_storm,
			       (void *)(long)t);
	for (i = 0; i < CHURN_THREADS; i++)
		pthread_create(&th[i], NULL, timer_churn, NULL);
	for (i = 0; i < CHURN_THREADS; i++) {
		void *r;

		pthread_join(th[i], &r);
		bad += (long)r;
	}
	churn_running = 0;
	for (i = 0; i < GETTIME_THREADS; i++) {
		void *r;

		pthread_join(rd[i], &r);
		rbad += (long)r;
	}
	snprintf(detail, sizeof(detail), "(%d threads x %d, %ld errors)",
		 CHURN_THREADS, CHURN_ROUNDS, bad);
	check(bad == 0, "timer_churn_threads", detail);
	snprintf(detail, sizeof(detail), "(%d threads, %ld errors)",
		 GETTIME_THREADS, rbad);
	check(rbad == 0, "timer_gettime_during_churn", detail);
	check(k_timer_delete(t) == 0, "timer_delete_after_churn", NULL);
}

#define STAT_THREADS 4
#define STAT_ROUNDS 20000

static void *stat_storm(void *arg)
{
	long bad = 0;
	int i;

	(void)arg;
	for (i = 0; i < STAT_ROUNDS; i++) {
		struct stat st;
		int fd;

		if (stat("/proc/self/status", &st) || stat("/bin/busybox", &st))
			bad++;
		fd = open("/etc/rk_smoke_file", O_RDONLY);
		if (fd < 0 || fstat(fd, &st) || close(fd))
			bad++;
	}
	return (void *)bad;
}

static void test_lockref(void)
{
	pthread_t th[STAT_THREADS];
	char detail[128];
	long bad = 0;
	int i, fd;

	fd = open("/etc/rk_smoke_file", O_CREAT | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
	for (i = 0; i < STAT_THREADS; i++)
		pthread_create(&th[i], NULL, stat_storm, NULL);
	for (i = 0; i < STAT_THREADS; i++) {
		void *r;

		pthread_join(th[i], &r);
		bad += (long)r;
	}
	snprintf(detail, sizeof(detail), "(%d threads x %d, %ld errors)",
		 STAT_THREADS, STAT_ROUNDS, bad);
	check(bad == 0, "dcache_lockref_stat_storm", detail);
	check(unlink("/etc/rk_smoke_file") == 0, "dcache_unlink", NULL);
}

#include "rk_smoke_more.h"

int main(int argc, char **argv)
{
	/* The image exec'ed by timer_exec_deletes_and_ids_continue. */
	if (argc == 3 && !strcmp(argv[1], "--exec-child"))
		return exec_child_check(atoi(argv[2]));
	/* Room for 1000 timers whatever the kernel derived the default
	 * from (max_threads: a KASAN kernel's stacks are twice as large,
	 * so its default is half, below 1000 in 512 MB).  The test of the
	 * limit itself sets its own in a child.
	 */
	setrlimit(RLIMIT_SIGPENDING,
		  &(struct rlimit){ RLIM_INFINITY, RLIM_INFINITY });
	kmemleak_clear();
	test_sysv();
	test_sysv_locked_paths();
	test_timers();
	test_timers_more();
	test_ipc_more();
	test_lockref();
	test_ridr_slab_baseline();
	test_failslab();
	test_kmemleak();
	printf("rk_smoke: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
