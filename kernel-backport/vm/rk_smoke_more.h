/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rk_smoke_more.h - the checks of rk_smoke.c that pin user-visible
 * behaviour at the edges of the two conversions (issue 13 of ridr-kit).
 * Each passes on the unpatched kernel and fails on the behaviour
 * difference it names:
 *
 *  timers: /proc/<pid>/timers lists exactly the live ids; exec deletes
 *  every timer and the next id continues after the old ones (the cursor
 *  survives exec, as next_posix_timer_id did); a thread group exits while
 *  its timers fire; a timer_create() that fails after its id was
 *  allocated (EFAULT on the id pointer, a bad sigevent) leaves no timer
 *  and consumes the id, as before; RLIMIT_SIGPENDING gives EAGAIN; a
 *  CRIU-style restore (create and delete until the wanted id comes up)
 *  reaches its id in exactly id + 1 creates;
 *  ipc: sem_next_id/shm_next_id give exactly the requested id, and an
 *  index in use gives the next free index with the requested sequence;
 *  the sequence number grows when the cyclic index wraps; /proc/sysvipc
 *  files longer than a page list every object; IPC_INFO/SEM_INFO return
 *  the highest index in use, also after the highest was removed; with
 *  ipcmni_extend on the command line, ids use the 24-bit index layout;
 *  memory: where /proc/slabinfo shows ridr_node_cache, its objects come
 *  back to their count before a burst of timers after the process exits
 *  and before an ipc namespace after it is torn down.
 */
#include <sys/resource.h>

/* Run @fn in a child; its exit status 0 means pass. */
static int in_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn());
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Ids listed in /proc/self/timers ("ID: n" lines) into @ids; the count. */
static int proc_timer_ids(int *ids, int max)
{
	FILE *f = fopen("/proc/self/timers", "r");
	char line[256];
	int n = 0, id;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "ID: %d", &id) == 1 && n < max)
			ids[n++] = id;
	fclose(f);
	return n;
}

static int timer_gone(int id)
{
	struct itimerspec cur;

	return k_timer_gettime(id, &cur) && errno == EINVAL;
}

static int child_proc_timers(void)
{
	int a = new_timer(), b = new_timer(), c = new_timer(), ids[8], n;

	if (a < 0 || b < 0 || c < 0 || k_timer_delete(b))
		return 1;
	n = proc_timer_ids(ids, 8);
	/* Newest first in 6.1 and 6.12 alike: compare as a set. */
	if (n != 2 || !((ids[0] == a && ids[1] == c) ||
			(ids[0] == c && ids[1] == a)))
		return 2;
	return 0;
}

/* After exec: the old ids are gone, the next id continues after them. */
static int exec_child_check(int last)
{
	int ids[4];

	if (!timer_gone(0) || !timer_gone(last) || proc_timer_ids(ids, 4) != 0)
		return 1;
	return new_timer() == last + 1 ? 0 : 2;
}

static int child_exec_with_timers(void)
{
	struct itimerspec its = { .it_value = { 0, 1000000 },
				  .it_interval = { 0, 1000000 } };
	char arg[16];
	int k, id = -1;

	for (k = 0; k < 3; k++)
		if ((id = new_timer()) < 0 || k_timer_settime(id, &its))
			return 1;
	snprintf(arg, sizeof(arg), "%d", id);
	execl("/proc/self/exe", "rk_smoke", "--exec-child", arg, (char *)NULL);
	return 3;
}

static volatile sig_atomic_t ticks;

static void on_tick(int sig)
{
	(void)sig;
	ticks++;
}

static void *spin_thread(void *arg)
{
	(void)arg;
	for (;;)
		sched_yield();
	return NULL;
}

/* Three threads, 20 timers signalling every millisecond, exit_group(). */
static int child_group_exit(void)
{
	struct itimerspec its = { .it_value = { 0, 1000000 },
				  .it_interval = { 0, 1000000 } };
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL,
				.sigev_signo = SIGUSR1 };
	pthread_t th[3];
	int k, id;

	signal(SIGUSR1, on_tick);
	for (k = 0; k < 3; k++)
		if (pthread_create(&th[k], NULL, spin_thread, NULL))
			return 1;
	for (k = 0; k < 20; k++) {
		if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &id) ||
		    k_timer_settime(id, &its))
			return 2;
	}
	usleep(50000);
	exit(ticks > 0 ? 0 : 4);	/* exit_group() with armed timers */
}

/* timer_create() failing after the id was allocated. */
static int child_create_failures(void)
{
	struct sigevent bad = { .sigev_notify = SIGEV_THREAD_ID,
				.sigev_signo = SIGUSR1 };
	int a = new_timer(), b, ids[4];

	bad._sigev_un._tid = 0x3fffffff;	/* no such thread */
	if (a < 0)
		return 1;
	if (syscall(SYS_timer_create, CLOCK_MONOTONIC, NULL, (void *)8) == 0 ||
	    errno != EFAULT)
		return 2;
	if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &bad, &b) == 0 ||
	    errno != EINVAL)
		return 3;
	b = new_timer();
	/* Both failures consumed an id; neither left a timer behind. */
	if (b != a + 3 || !timer_gone(a + 1) || !timer_gone(a + 2) ||
	    proc_timer_ids(ids, 4) != 2)
		return 4;
	return 0;
}

/* RLIMIT_SIGPENDING bounds live timers: EAGAIN, and room again after. */
static int child_sigpending(void)
{
	struct rlimit rl = { 32, 32 };
	int ids[128], n = 0, err = 0, k;

	/* The count is per user (root's other pending signals count too). */
	if (setrlimit(RLIMIT_SIGPENDING, &rl))
		return 1;
	while (n < 128) {
		if (k_timer_create(&ids[n])) {
			err = errno;
			break;
		}
		n++;
	}
	if (n < 1 || n > 32 || err != EAGAIN)
		return 2;
	for (k = 0; k < n; k++)
		k_timer_delete(ids[k]);
	return new_timer() >= 0 ? 0 : 3;
}

/* CRIU's restore: create and delete until the wanted id comes up. */
static int child_criu_restore(void)
{
	const int want = 1000;
	int id, creates = 0, ids[4];

	do {
		id = new_timer();
		creates++;
		if (id < 0)
			return 1;
		if (id != want && k_timer_delete(id))
			return 2;
	} while (id < want);
	if (id != want || creates != want + 1 || proc_timer_ids(ids, 4) != 1 ||
	    ids[0] != want)
		return 3;
	return 0;
}

static void test_timers_more(void)
{
	char d[64];
	int r;

	check(in_child(child_proc_timers) == 0, "timer_proc_pid_timers", NULL);
	r = in_child(child_exec_with_timers);
	snprintf(d, sizeof(d), "(status %d)", r);
	check(r == 0, "timer_exec_deletes_and_ids_continue", d);
	r = in_child(child_group_exit);
	snprintf(d, sizeof(d), "(status %d)", r);
	check(r == 0, "timer_group_exit_armed", d);
	r = in_child(child_create_failures);
	snprintf(d, sizeof(d), "(status %d)", r);
	check(r == 0, "timer_create_fails_after_id_alloc", d);
	r = in_child(child_sigpending);
	snprintf(d, sizeof(d), "(status %d)", r);
	check(r == 0, "timer_rlimit_sigpending_eagain", d);
	r = in_child(child_criu_restore);
	snprintf(d, sizeof(d), "(status %d)", r);
	check(r == 0, "timer_criu_restore_create_delete", d);
}

/* ---------------------------------------------------------------- */
/* SysV ipc                                                           */

/* Index bits of an ipc id: 15, or 24 with ipcmni_extend. */
static int ipc_shift(void)
{
	char line[1024] = "";
	FILE *f = fopen("/proc/cmdline", "r");

	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
	}
	return strstr(line, "ipcmni_extend") ? 24 : 15;
}

static int read_int(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -2;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -2;
		fclose(f);
	}
	return v;
}

static int write_int(const char *path, int v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", v);
	return write_file(path, buf);
}

static int sem_new(void)
{
	return semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
}

static void sem_rm(int id)
{
	semctl(id, 0, IPC_RMID, (union semun){ 0 });
}

static int shm_new(void)
{
	return shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
}

static void shm_rm(int id)
{
	shmctl(id, IPC_RMID, NULL);
}

/* kernel.{sem,shm}_next_id: the exact id; an index in use: the next. */
static void test_next_id(const char *kind, int (*make)(void),
			 void (*rm)(int))
{
	char path[64], name[64], d[96];
	int s = ipc_shift(), want = (7 << s) + 30000, a, b;

	snprintf(path, sizeof(path), "/proc/sys/kernel/%s_next_id", kind);
	a = write_int(path, want) == 0 ? make() : -1;
	snprintf(name, sizeof(name), "%s_next_id_exact", kind);
	snprintf(d, sizeof(d), "(asked %d, got %d, next_id now %d)", want, a,
		 read_int(path));
	check(a == want && read_int(path) == -1, name, d);
	/* Same index, another sequence: taken, so the next free index. */
	b = write_int(path, (3 << s) + 30000) == 0 ? make() : -1;
	snprintf(name, sizeof(name), "%s_next_id_index_in_use", kind);
	snprintf(d, sizeof(d), "(asked %d, got %d)", (3 << s) + 30000, b);
	check(b == (3 << s) + 30001, name, d);
	if (a >= 0)
		rm(a);
	if (b >= 0)
		rm(b);
	write_int(path, -1);
}

/* The sequence number grows by one when the cyclic index wraps. */
static void test_seq_wrap(void)
{
	int s = ipc_shift(), prev = sem_new(), id = -1, n, ok = 0;
	char d[96] = "";

	if (s != 15) {
		check(1, "ipc_seq_after_index_wrap", "(skipped: ipcmni_extend)");
		if (prev >= 0)
			sem_rm(prev);
		return;
	}
	for (n = 0; prev >= 0 && n < 40000; n++) {
		sem_rm(prev);
		id = sem_new();
		if (id < 0)
			break;
		if ((id & 0x7fff) <= (prev & 0x7fff)) {
			ok = (id >> 15) == (((prev >> 15) + 1) & 0xffff);
			snprintf(d, sizeof(d), "(after %d: %#x -> %#x)", n, prev,
				 id);
			break;
		}
		prev = id;
	}
	if (id >= 0)
		sem_rm(id);
	check(ok, "ipc_seq_after_index_wrap", d);
}

/* /proc/sysvipc/sem longer than a page: every set listed. */
static void test_sysvipc_long(void)
{
	int ids[150], n, all = 1;
	struct stat st;
	FILE *f;
	size_t len = 0;
	char buf[4096];

	for (n = 0; n < 150; n++)
		if ((ids[n] = sem_new()) < 0)
			break;
	f = fopen("/proc/sysvipc/sem", "r");
	if (f) {
		size_t r;

		while ((r = fread(buf, 1, sizeof(buf), f)) > 0)
			len += r;
		fclose(f);
	}
	for (int k = 0; k < n; k++)
		all &= proc_lists("sem", ids[k]) == 1;
	snprintf(buf, sizeof(buf), "(%d sets, %zu bytes)", n, len);
	check(n == 150 && len > 4096 && all && stat("/proc/sysvipc/sem", &st) == 0,
	      "sysvipc_proc_longer_than_page", buf);
	for (int k = 0; k < n; k++)
		sem_rm(ids[k]);
}

/* IPC_INFO/SEM_INFO return the highest index in use (ipc_get_maxidx()). */
static int sem_maxidx(int cmd)
{
	struct seminfo si;

	return semctl(0, 0, cmd, (union semun){ .buf = (void *)&si });
}

static int idx_of(int id)
{
	return id & ((1 << ipc_shift()) - 1);
}

static void test_maxidx(void)
{
	int id[3] = { sem_new(), sem_new(), sem_new() }, hi = 0, k;
	int m1, m2, i2, second = -1;
	char d[128];

	for (k = 1; k < 3; k++)
		if (idx_of(id[k]) > idx_of(id[hi]))
			hi = k;
	for (k = 0; k < 3; k++)
		if (k != hi && (second < 0 || idx_of(id[k]) > idx_of(id[second])))
			second = k;
	m1 = sem_maxidx(SEM_INFO);
	sem_rm(id[hi]);
	/* ipc_rmid() of the highest index searches the next one down. */
	m2 = sem_maxidx(SEM_INFO);
	i2 = sem_maxidx(IPC_INFO);
	snprintf(d, sizeof(d), "(idx %d %d %d; maxidx %d, then %d/%d)",
		 idx_of(id[0]), idx_of(id[1]), idx_of(id[2]), m1, m2, i2);
	check(id[0] >= 0 && id[1] >= 0 && id[2] >= 0 &&
	      m1 == idx_of(id[hi]) && m2 == idx_of(id[second]) && i2 == m2,
	      "ipc_maxidx_after_removing_highest", d);
	for (k = 0; k < 3; k++)
		if (k != hi && id[k] >= 0)
			sem_rm(id[k]);
}

/* ipcmni_extend: the 24-bit index layout, checked through next_id. */
static void test_ipcmni_extend(void)
{
	int want = (5 << 24) + 70000, id;
	char d[64];

	if (ipc_shift() != 24)
		return;
	id = write_int("/proc/sys/kernel/sem_next_id", want) == 0 ? sem_new() : -1;
	snprintf(d, sizeof(d), "(asked %#x, got %#x)", want, id);
	check(id == want, "ipcmni_extend_id_layout", d);
	if (id >= 0)
		sem_rm(id);
}

static void test_ipc_more(void)
{
	test_next_id("sem", sem_new, sem_rm);
	test_next_id("shm", shm_new, shm_rm);
	test_seq_wrap();
	test_sysvipc_long();
	test_maxidx();
	test_ipcmni_extend();
}

/* ---------------------------------------------------------------- */
/* ridr node objects back to baseline (where slabinfo shows them)     */

/*
 * Objects of ridr_node_cache in use.  kmem_cache_shrink() first (the
 * cache's sysfs "shrink"): it flushes the per-CPU slabs, whose free
 * objects /proc/slabinfo would count as active under SLUB, and drops
 * the cache's objects from KASAN's quarantine, where freed objects
 * otherwise stay allocated for a while.
 */
static long ridr_nodes(void)
{
	FILE *f;
	char line[512], name[64];
	long active = -1, n;

	write_file("/sys/kernel/slab/ridr_node_cache/shrink", "1");
	f = fopen("/proc/slabinfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %ld", name, &n) == 2 &&
		    !strcmp(name, "ridr_node_cache"))
			active = n;
	fclose(f);
	return active;
}

static int child_many_timers(void)
{
	int k;

	for (k = 0; k < 3000; k++)
		if (new_timer() < 0)
			return 1;
	return 0;	/* exit with 3000 live timers */
}

static int child_ipc_ns_objects(void)
{
	int k;

	if (unshare(CLONE_NEWIPC))
		return 1;
	for (k = 0; k < 300; k++)
		if (sem_new() < 0)
			return 2;
	return 0;	/* namespace torn down with 300 sets */
}

/* Nodes are freed after a grace period: wait for the count to settle. */
static int back_to(long base)
{
	for (int k = 0; k < 50; k++) {
		if (ridr_nodes() <= base)
			return 1;
		usleep(100000);
	}
	return 0;
}

static void test_ridr_slab_baseline(void)
{
	long base = ridr_nodes(), peak;
	char d[96];
	int r;

	if (base < 0) {
		printf("rk_smoke: ridr_node_slab_baseline skipped (no "
		       "ridr_node_cache in /proc/slabinfo)\n");
		return;
	}
	r = in_child(child_many_timers);
	peak = ridr_nodes();
	snprintf(d, sizeof(d), "(base %ld, after exit %ld, status %d)", base,
		 peak, r);
	check(r == 0 && back_to(base), "ridr_nodes_back_after_process_exit", d);
	r = in_child(child_ipc_ns_objects);
	snprintf(d, sizeof(d), "(base %ld, after teardown %ld, status %d)",
		 base, ridr_nodes(), r);
	check(r == 0 && back_to(base), "ridr_nodes_back_after_ipc_ns_teardown",
	      d);
}

/* ---------------------------------------------------------------- */
/* Fault injection (the "debug" boot: FAILSLAB, debugfs): every slab   */
/* allocation of a call fails in turn                                  */

#include <sys/mount.h>

#define FAILSLAB "/sys/kernel/debug/failslab/"
#define FAIL_NTH "/proc/thread-self/fail-nth"

/* Count every slab allocation for fail-nth, GFP_KERNEL ones included
 * (failslab ignores allocations that may sleep by default), quietly (a
 * stack dump per failure would read as a splat on the console).
 */
static int failslab_setup(void)
{
	int r = 0;

	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (access(FAILSLAB "ignore-gfp-wait", W_OK) || access(FAIL_NTH, W_OK))
		return -1;
	r |= write_file(FAILSLAB "ignore-gfp-wait", "N");
	r |= write_file(FAILSLAB "cache-filter", "N");
	r |= write_file(FAILSLAB "verbose", "0");
	return r;
}

/*
 * Run @call with the @n-th slab allocation of this thread failing: 1 if
 * that allocation was made (and failed), 0 if the call made fewer than
 * @n, -1 on error.  fail-nth is written and read back through one fd
 * opened beforehand: an open() in between would itself allocate (a
 * struct file) and be counted.
 */
static int fail_nth_fd = -1;

static int with_nth_failing(int n, int (*call)(void), int *ret, int *err)
{
	char buf[16];
	ssize_t len;

	if (fail_nth_fd < 0)
		fail_nth_fd = open(FAIL_NTH, O_RDWR);
	len = snprintf(buf, sizeof(buf), "%d", n);
	if (fail_nth_fd < 0 || pwrite(fail_nth_fd, buf, len, 0) != len)
		return -1;
	*ret = call();
	*err = errno;
	len = pread(fail_nth_fd, buf, sizeof(buf) - 1, 0);
	if (pwrite(fail_nth_fd, "0", 1, 0) != 1 || len <= 0)
		return -1;
	buf[len] = 0;
	return atoi(buf) == 0;
}

/*
 * Fail allocation 1, 2, ... of @call until it makes fewer: each injected
 * failure must give an error in @errs (0-terminated) or a success (an
 * allocation with a fallback), and @count() must then show no object
 * left over (the call undone, or, on success, @undo removes it).  The
 * number of allocation points goes to *@points.
 */
static int fail_each_allocation(int (*call)(void), void (*undo)(int),
				int (*count)(void), const int *errs,
				int *points)
{
	int n, ret, err, base = count(), injected, k;

	for (n = 1; n < 500; n++) {
		injected = with_nth_failing(n, call, &ret, &err);
		if (injected < 0)
			return 1;
		if (ret >= 0)
			undo(ret);
		if (!injected) {
			*points = n - 1;
			/* Without a failure the call must work. */
			return ret >= 0 ? 0 : 2;
		}
		if (ret < 0) {
			for (k = 0; errs[k] && errs[k] != err; k++)
				;
			if (!errs[k])
				return 1000 + err;
		}
		if (count() != base)
			return 3;
	}
	return 4;
}

static int timer_call(void)
{
	return new_timer();
}

static void timer_undo(int id)
{
	k_timer_delete(id);
}

static int timer_count(void)
{
	int ids[64];

	return proc_timer_ids(ids, 64);
}

/* One row per object in /proc/sysvipc/@kind (after the header). */
static int sysvipc_rows(const char *kind)
{
	char path[64], line[512];
	FILE *f;
	int n = -1;

	snprintf(path, sizeof(path), "/proc/sysvipc/%s", kind);
	f = fopen(path, "r");
	if (!f)
		return -2;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

static int sem_call(void) { return sem_new(); }
static int msg_call(void) { return msgget(IPC_PRIVATE, IPC_CREAT | 0600); }
static int shm_call(void) { return shm_new(); }
static void msg_rm(int id) { msgctl(id, IPC_RMID, NULL); }
static int sem_rows(void) { return sysvipc_rows("sem"); }
static int msg_rows(void) { return sysvipc_rows("msg"); }
static int shm_rows(void) { return sysvipc_rows("shm"); }

static int points[4];

/* A fresh process (empty id map): the first timer needs ridr memory. */
static int child_timer_fail_nth(void)
{
	static const int errs[] = { EAGAIN, 0 };
	int r = fail_each_allocation(timer_call, timer_undo, timer_count, errs,
				     &points[0]);

	/* And a timer after all that gets an id and is listed. */
	if (!r && (new_timer() < 0 || timer_count() != 1))
		r = 5;
	printf("rk_smoke: timer_create: %d slab allocations%s%s\n", points[0],
	       r > 1000 ? ", unexpected error " : "",
	       r > 1000 ? strerror(r - 1000) : "");
	fflush(stdout);	/* in_child() ends with _exit() */
	return r;
}

/* A fresh ipc namespace (empty maps): the first object of each kind. */
static int child_ipc_fail_nth(void)
{
	/* Where shmget() cannot get the segment's inode, shmem (and
	 * ramfs, tinyconfig's shmem) answers ENOSPC, and a struct file
	 * that cannot be had is ENFILE: the kernel's own errors, unpatched
	 * as patched.
	 */
	static const int sysv_errs[] = { ENOMEM, 0 };
	static const int shm_errs[] = { ENOMEM, ENOSPC, ENFILE, 0 };
	static const int *const errs[3] = { sysv_errs, sysv_errs, shm_errs };
	static int (*const call[3])(void) = { sem_call, msg_call, shm_call };
	static void (*const undo[3])(int) = { sem_rm, msg_rm, shm_rm };
	static int (*const count[3])(void) = { sem_rows, msg_rows, shm_rows };
	static const char *const name[3] = { "semget", "msgget", "shmget" };
	int k, r;

	if (unshare(CLONE_NEWIPC))
		return 1;
	for (k = 0; k < 3; k++) {
		r = fail_each_allocation(call[k], undo[k], count[k], errs[k],
					 &points[k + 1]);
		printf("rk_smoke: %s: %d slab allocations%s%s\n", name[k],
		       points[k + 1], r > 1000 ? ", unexpected error " : "",
		       r > 1000 ? strerror(r - 1000) : "");
		fflush(stdout);
		if (r)
			return 10 * (k + 1) + (r > 1000 ? 9 : r);
	}
	return 0;
}

static void test_failslab(void)
{
	char d[64];
	int r;

	if (failslab_setup()) {
		printf("rk_smoke: fail_nth skipped (no failslab or fail-nth)\n");
		return;
	}
	r = in_child(child_timer_fail_nth);
	snprintf(d, sizeof(d), "(status %d)", r);
	check(r == 0, "fail_nth_timer_create_eagain_nothing_left", d);
	r = in_child(child_ipc_fail_nth);
	snprintf(d, sizeof(d), "(status %d)", r);
	check(r == 0, "fail_nth_sem_msg_shm_get_enomem_nothing_left", d);
}

/* kmemleak: nothing unreferenced after the whole run (objects must be
 * older than 5 s to be reported: wait, then scan). */
static void test_kmemleak(void)
{
	char buf[512] = "";
	FILE *f;
	size_t n = 0;

	if (access("/sys/kernel/debug/kmemleak", W_OK)) {
		printf("rk_smoke: kmemleak skipped (no kmemleak)\n");
		return;
	}
	sleep(6);
	write_file("/sys/kernel/debug/kmemleak", "scan");
	write_file("/sys/kernel/debug/kmemleak", "scan");
	f = fopen("/sys/kernel/debug/kmemleak", "r");
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n] = 0;
		fclose(f);
	}
	check(f && n == 0, "kmemleak_nothing_unreferenced", n ? buf : NULL);
}

/* At start: forget what boot itself left for kmemleak to report. */
static void kmemleak_clear(void)
{
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (!access("/sys/kernel/debug/kmemleak", W_OK))
		write_file("/sys/kernel/debug/kmemleak", "clear");
}
