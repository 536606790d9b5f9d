// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_ridr.c: self-test of the ridr id map (lib/ridr.c) inside the
 * kernel, at boot when built in or on module load.  It checks the API
 * contract in kernel context (kzalloc, call_rcu, spinlock_t, lockdep and
 * PROVE_RCU when enabled), then runs RCU readers on every other CPU
 * against a writer that allocates, replaces and removes ids.
 *
 * Prints "test_ridr: all N tests passed" or one line per failure and
 * "test_ridr: N of M tests failed" (the module load then fails).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/ridr.h>
#include <linux/sched.h>
#include <linux/slab.h>

static unsigned int tests_run;
static unsigned int tests_failed;

#define RIDR_CHECK(cond)						\
	do {								\
		tests_run++;						\
		if (!(cond)) {						\
			tests_failed++;					\
			pr_err("%s:%d: check failed: %s\n", __func__,	\
			       __LINE__, #cond);			\
		}							\
	} while (0)

/* What an emptied map may keep (<linux/ridr.h>, "Memory"): its root,
 * one emptied object with the full nodes above it, and its spares. */
#define RIDR_IDLE_BOUND \
	((RIDR_MAX_LEVELS + 1 + RIDR_PRELOAD_MAX) * sizeof(struct ridr_node))

/* Entries are never dereferenced by the map: encode the id in them. */
static void *entry_for(unsigned long id)
{
	return (void *)((id << 2) | 2);
}

static void test_basic(void)
{
	struct ridr map;
	unsigned long id, i;
	void *old;

	ridr_init(&map);
	RIDR_CHECK(ridr_is_empty(&map));
	RIDR_CHECK(!ridr_alloc(&map, entry_for(0), 0, 100, &id) && id == 0);
	RIDR_CHECK(!ridr_alloc(&map, entry_for(1), 0, 100, &id) && id == 1);
	RIDR_CHECK(!ridr_alloc(&map, entry_for(10), 10, 100, &id) && id == 10);
	RIDR_CHECK(ridr_alloc(&map, NULL, 5, 4, &id) == -EINVAL);
	rcu_read_lock();
	RIDR_CHECK(ridr_find(&map, 0) == entry_for(0));
	RIDR_CHECK(ridr_find(&map, 10) == entry_for(10));
	RIDR_CHECK(!ridr_find(&map, 2));
	rcu_read_unlock();
	/* Lowest free id: the gap at 2. */
	RIDR_CHECK(!ridr_alloc(&map, entry_for(2), 0, 100, &id) && id == 2);

	/* Reservation: absent to readers, not handed out again. */
	RIDR_CHECK(!ridr_alloc(&map, NULL, 3, 3, &id) && id == 3);
	rcu_read_lock();
	RIDR_CHECK(!ridr_find(&map, 3));
	rcu_read_unlock();
	RIDR_CHECK(ridr_alloc(&map, NULL, 3, 3, &id) == -ENOSPC);
	RIDR_CHECK(!ridr_replace(&map, entry_for(3), 3, &old) && !old);
	rcu_read_lock();
	RIDR_CHECK(ridr_find(&map, 3) == entry_for(3));
	rcu_read_unlock();
	RIDR_CHECK(ridr_replace(&map, NULL, 50, NULL) == -ENOENT);
	RIDR_CHECK(ridr_count(&map) == 5);

	/* Remove everything: the map keeps at most its idle bound. */
	for (i = 0; i <= 10; i++)
		ridr_remove(&map, i, NULL);
	RIDR_CHECK(ridr_remove(&map, 4, NULL) == -ENOENT);
	RIDR_CHECK(ridr_is_empty(&map) && ridr_count(&map) == 0);
	RIDR_CHECK(ridr_memory(&map) <= RIDR_IDLE_BOUND);
	ridr_destroy(&map);
}

static void test_large_and_iterate(void)
{
	static const unsigned long ids[] = {
		0, 63, 64, 4095, 4096, 1UL << 20, INT_MAX, UINT_MAX,
		ULONG_MAX / 3, ULONG_MAX - 1, ULONG_MAX,
	};
	struct ridr map;
	unsigned long id, n;
	void *entry;
	size_t i;

	ridr_init(&map);
	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		RIDR_CHECK(!ridr_alloc(&map, entry_for(ids[i]), ids[i],
				       ids[i], &id) && id == ids[i]);
	}
	n = 0;
	rcu_read_lock();
	ridr_for_each(&map, entry, id) {
		RIDR_CHECK(n < ARRAY_SIZE(ids) && id == ids[n] &&
			   entry == entry_for(id));
		n++;
	}
	id = 65;
	RIDR_CHECK(ridr_get_next(&map, &id) == entry_for(4095) && id == 4095);
	rcu_read_unlock();
	RIDR_CHECK(n == ARRAY_SIZE(ids));
	for (i = 0; i < ARRAY_SIZE(ids); i++)
		RIDR_CHECK(!ridr_remove(&map, ids[i], NULL));
	RIDR_CHECK(ridr_is_empty(&map) && ridr_memory(&map) <= RIDR_IDLE_BOUND);

	/* Full range: -ENOSPC, then one free slot is found again. */
	for (i = 0; i < 200; i++)
		RIDR_CHECK(!ridr_alloc(&map, entry_for(i), 0, 199, &id));
	RIDR_CHECK(ridr_alloc(&map, NULL, 0, 199, &id) == -ENOSPC);
	RIDR_CHECK(!ridr_remove(&map, 137, NULL));
	RIDR_CHECK(!ridr_alloc(&map, entry_for(137), 0, 199, &id) &&
		   id == 137);
	ridr_destroy(&map);
	RIDR_CHECK(ridr_is_empty(&map));
}

static void test_cyclic(void)
{
	struct ridr map;
	unsigned long id, i;

	ridr_init(&map);
	for (i = 0; i < 10; i++) {
		RIDR_CHECK(!ridr_alloc_cyclic(&map, entry_for(i), 0, 7, &id) ||
			   i >= 8);
		if (i < 8)
			RIDR_CHECK(id == i);
	}
	/* Free 2 and 6: the cursor (at 8, past the range) restarts at min. */
	RIDR_CHECK(!ridr_remove(&map, 6, NULL) && !ridr_remove(&map, 2, NULL));
	RIDR_CHECK(!ridr_alloc_cyclic(&map, NULL, 0, 7, &id) && id == 2);
	RIDR_CHECK(!ridr_alloc_cyclic(&map, NULL, 0, 7, &id) && id == 6);
	/* Recently freed ids are not reused before the range wraps. */
	RIDR_CHECK(!ridr_remove(&map, 3, NULL));
	RIDR_CHECK(!ridr_remove(&map, 7, NULL));
	RIDR_CHECK(!ridr_alloc_cyclic(&map, NULL, 0, 7, &id) && id == 7);
	RIDR_CHECK(!ridr_alloc_cyclic(&map, NULL, 0, 7, &id) && id == 3);
	/* ipc's next_id: set the cursor explicitly. */
	ridr_lock(&map);
	__ridr_set_cursor(&map, 100);
	ridr_unlock(&map);
	RIDR_CHECK(!ridr_alloc_cyclic(&map, NULL, 0, 1000, &id) && id == 100);
	RIDR_CHECK(ridr_get_cursor(&map) == 101);
	ridr_destroy(&map);
}

/* A caller that inserts under its own spinlock: preload outside it. */
static void test_preload_under_spinlock(void)
{
	static DEFINE_SPINLOCK(caller_lock);
	struct ridr_preload pl = RIDR_PRELOAD_INIT;
	struct ridr map;
	unsigned long id;
	int ret;

	ridr_init(&map);
	/* The writers' loads check caller_lock under lockdep. */
	ridr_set_external_lock(&map, &caller_lock);
#ifdef CONFIG_DEBUG_LOCK_ALLOC
	/* The map names caller_lock: held inside, not outside. */
	spin_lock(&caller_lock);
	RIDR_CHECK(lock_is_held(map.external_lock));
	spin_unlock(&caller_lock);
	RIDR_CHECK(!lock_is_held(map.external_lock));
#endif
	RIDR_CHECK(!ridr_preload(&pl, &map, 1UL << 30, GFP_KERNEL));
	spin_lock(&caller_lock);
	ret = __ridr_alloc(&map, entry_for(1UL << 29), 1UL << 29, 1UL << 30,
			   &id, &pl);
	spin_unlock(&caller_lock);
	ridr_preload_end(&pl);
	RIDR_CHECK(!ret && id == 1UL << 29);
	spin_lock(&caller_lock);
	RIDR_CHECK(!__ridr_remove(&map, id, NULL));
	spin_unlock(&caller_lock);
	RIDR_CHECK(ridr_is_empty(&map));
	ridr_destroy(&map);
}

/*
 * RCU readers against a writer.  The writer cycles ids through
 * alloc/replace/remove, growing and shrinking the tree; readers must
 * only ever see NULL or the entry encoding the id they asked for, and
 * PROVE_RCU/KASAN (when on) watch the nodes freed under them.
 */
#define STRESS_IDS 2048
#define STRESS_MS 1500

struct stress {
	struct ridr map;
	bool stop;
	atomic_t bad;
	atomic_long_t lookups;
	struct completion done;
	atomic_t running;
};

static int stress_reader(void *arg)
{
	struct stress *s = arg;
	unsigned long id = 0, n = 0;

	while (!READ_ONCE(s->stop)) {
		void *entry;
		unsigned long next;

		rcu_read_lock();
		entry = ridr_find(&s->map, id);
		if (entry && entry != entry_for(id))
			atomic_inc(&s->bad);
		next = id + 1;
		entry = ridr_get_next(&s->map, &next);
		if (entry && (next <= id || entry != entry_for(next)))
			atomic_inc(&s->bad);
		rcu_read_unlock();
		id = (id * 7 + 13) % (STRESS_IDS << 6);
		if (!(++n & 255))
			cond_resched();
	}
	atomic_long_add(n, &s->lookups);
	if (atomic_dec_and_test(&s->running))
		complete(&s->done);
	return 0;
}

static void test_rcu_stress(void)
{
	struct stress *s = kzalloc(sizeof(*s), GFP_KERNEL);
	unsigned long deadline, id, rounds = 0;
	unsigned int cpu, readers = 0;

	if (!s) {
		RIDR_CHECK(s);
		return;
	}
	ridr_init(&s->map);
	init_completion(&s->done);
	atomic_set(&s->running, 1);	/* the writer's own count */
	for_each_online_cpu(cpu) {
		struct task_struct *t;

		if (cpu == raw_smp_processor_id() && num_online_cpus() > 1)
			continue;
		t = kthread_create(stress_reader, s, "ridr_reader/%u", cpu);
		if (IS_ERR(t))
			continue;
		kthread_bind(t, cpu);
		atomic_inc(&s->running);
		readers++;
		wake_up_process(t);
	}
	deadline = jiffies + msecs_to_jiffies(STRESS_MS);
	while (time_before(jiffies, deadline)) {
		unsigned long base = (rounds & 1) ? (STRESS_IDS << 5) : 0;
		unsigned long i;

		for (i = 0; i < STRESS_IDS; i++) {
			if (ridr_alloc(&s->map, NULL, base + i * 16,
				       base + i * 16, &id))
				atomic_inc(&s->bad);
			else if (ridr_replace(&s->map, entry_for(id), id, NULL))
				atomic_inc(&s->bad);
		}
		for (i = 0; i < STRESS_IDS; i++)
			if (ridr_remove(&s->map, base + i * 16, NULL))
				atomic_inc(&s->bad);
		rounds++;
		cond_resched();
	}
	WRITE_ONCE(s->stop, true);
	if (atomic_dec_and_test(&s->running))
		complete(&s->done);
	wait_for_completion(&s->done);
	RIDR_CHECK(readers > 0);
	RIDR_CHECK(atomic_read(&s->bad) == 0);
	RIDR_CHECK(ridr_is_empty(&s->map));
	pr_info("rcu stress: %u readers, %lu lookups, %lu writer rounds of %d ids\n",
		readers, (unsigned long)atomic_long_read(&s->lookups), rounds,
		STRESS_IDS);
	ridr_destroy(&s->map);
	/*
	 * Nodes retired by the map are freed by call_rcu(): wait for them
	 * before the module's text can go away.
	 */
	rcu_barrier();
	kfree(s);
}

static int __init test_ridr_init(void)
{
	test_basic();
	test_large_and_iterate();
	test_cyclic();
	test_preload_under_spinlock();
	test_rcu_stress();
	rcu_barrier();
	if (tests_failed) {
		pr_err("%u of %u tests failed\n", tests_failed, tests_run);
		return -EINVAL;
	}
	pr_info("all %u tests passed\n", tests_run);
	return 0;
}

static void __exit test_ridr_exit(void)
{
}

module_init(test_ridr_init);
module_exit(test_ridr_exit);
MODULE_DESCRIPTION("Self-test of the ridr id map");
MODULE_LICENSE("GPL");
