// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * KUnit tests of the ridr id map (lib/ridr.c), in kernel context:
 * kzalloc, call_rcu, spinlock_t, and lockdep and PROVE_RCU when enabled.
 * The API contract case by case, then RCU readers on every other CPU
 * against a writer that allocates, replaces and removes ids.
 *
 * Built in, the suite runs at boot; as a module, on load (or through
 * tools/testing/kunit/kunit.py run 'ridr').
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/ridr.h>
#include <linux/sched.h>
#include <linux/slab.h>

/*
 * What an emptied map may keep (<linux/ridr.h>, "Memory"): its root,
 * one emptied object with the full nodes above it, and its spares.
 */
#define RIDR_IDLE_BOUND \
	((RIDR_MAX_LEVELS + 1 + RIDR_PRELOAD_MAX) * sizeof(struct ridr_node))

/* Entries are never dereferenced by the map: encode the id in them. */
static void *entry_for(unsigned long id)
{
	return (void *)((id << 2) | 2);
}

/* ridr_find() under its own read-side section. */
static void *find_id(struct ridr *map, unsigned long id)
{
	void *entry;

	rcu_read_lock();
	entry = ridr_find(map, id);
	rcu_read_unlock();
	return entry;
}

/* Allocate in [min, max] and check the id handed out. */
static void expect_alloc(struct kunit *test, struct ridr *map, void *entry,
			 unsigned long min, unsigned long max,
			 unsigned long want)
{
	unsigned long id = ~0UL;

	KUNIT_EXPECT_EQ(test, ridr_alloc(map, entry, min, max, &id), 0);
	KUNIT_EXPECT_EQ(test, id, want);
}

static void expect_cyclic(struct kunit *test, struct ridr *map,
			  unsigned long min, unsigned long max,
			  unsigned long want)
{
	unsigned long id = ~0UL;

	KUNIT_EXPECT_EQ(test, ridr_alloc_cyclic(map, NULL, min, max, &id), 0);
	KUNIT_EXPECT_EQ(test, id, want);
}

static void ridr_test_alloc_find_remove(struct kunit *test)
{
	struct ridr map;
	unsigned long id, i;
	void *old = entry_for(99);

	ridr_init(&map);
	KUNIT_EXPECT_TRUE(test, ridr_is_empty(&map));
	expect_alloc(test, &map, entry_for(0), 0, 100, 0);
	expect_alloc(test, &map, entry_for(1), 0, 100, 1);
	expect_alloc(test, &map, entry_for(10), 10, 100, 10);
	KUNIT_EXPECT_EQ(test, ridr_alloc(&map, NULL, 5, 4, &id), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, find_id(&map, 0), entry_for(0));
	KUNIT_EXPECT_PTR_EQ(test, find_id(&map, 10), entry_for(10));
	KUNIT_EXPECT_NULL(test, find_id(&map, 2));
	/* Lowest free id: the gap at 2. */
	expect_alloc(test, &map, entry_for(2), 0, 100, 2);

	/* Reservation: absent to readers, not handed out again. */
	expect_alloc(test, &map, NULL, 3, 3, 3);
	KUNIT_EXPECT_NULL(test, find_id(&map, 3));
	KUNIT_EXPECT_EQ(test, ridr_alloc(&map, NULL, 3, 3, &id), -ENOSPC);
	KUNIT_EXPECT_EQ(test, ridr_replace(&map, entry_for(3), 3, &old), 0);
	KUNIT_EXPECT_NULL(test, old);
	KUNIT_EXPECT_PTR_EQ(test, find_id(&map, 3), entry_for(3));
	KUNIT_EXPECT_EQ(test, ridr_replace(&map, NULL, 50, NULL), -ENOENT);
	KUNIT_EXPECT_EQ(test, ridr_count(&map), 5UL);

	/* Remove everything: the map keeps at most its idle bound. */
	for (i = 0; i <= 10; i++)
		ridr_remove(&map, i, NULL);
	KUNIT_EXPECT_EQ(test, ridr_remove(&map, 4, NULL), -ENOENT);
	KUNIT_EXPECT_TRUE(test, ridr_is_empty(&map));
	KUNIT_EXPECT_EQ(test, ridr_count(&map), 0UL);
	KUNIT_EXPECT_LE(test, ridr_memory(&map), RIDR_IDLE_BOUND);
	ridr_destroy(&map);
}

static void ridr_test_sparse_ids_and_iteration(struct kunit *test)
{
	static const unsigned long ids[] = {
		0, 63, 64, 4095, 4096, 1UL << 20, INT_MAX, UINT_MAX,
		ULONG_MAX / 3, ULONG_MAX - 1, ULONG_MAX,
	};
	unsigned long seen[ARRAY_SIZE(ids) + 1], id, next = 65;
	void *entries[ARRAY_SIZE(ids) + 1], *entry, *after65;
	struct ridr map;
	size_t i, n = 0;

	ridr_init(&map);
	for (i = 0; i < ARRAY_SIZE(ids); i++)
		expect_alloc(test, &map, entry_for(ids[i]), ids[i], ids[i],
			     ids[i]);
	/* Walk under RCU, check outside: a failed expectation may sleep. */
	rcu_read_lock();
	ridr_for_each(&map, entry, id) {
		if (n < ARRAY_SIZE(seen)) {
			seen[n] = id;
			entries[n] = entry;
		}
		n++;
	}
	after65 = ridr_get_next(&map, &next);
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, n, ARRAY_SIZE(ids));
	for (i = 0; i < min(n, ARRAY_SIZE(ids)); i++) {
		KUNIT_EXPECT_EQ(test, seen[i], ids[i]);
		KUNIT_EXPECT_PTR_EQ(test, entries[i], entry_for(ids[i]));
	}
	KUNIT_EXPECT_PTR_EQ(test, after65, entry_for(4095));
	KUNIT_EXPECT_EQ(test, next, 4095UL);
	for (i = 0; i < ARRAY_SIZE(ids); i++)
		KUNIT_EXPECT_EQ(test, ridr_remove(&map, ids[i], NULL), 0);
	KUNIT_EXPECT_TRUE(test, ridr_is_empty(&map));
	KUNIT_EXPECT_LE(test, ridr_memory(&map), RIDR_IDLE_BOUND);
	ridr_destroy(&map);
}

static void ridr_test_full_range(struct kunit *test)
{
	struct ridr map;
	unsigned long id, i;

	ridr_init(&map);
	for (i = 0; i < 200; i++)
		expect_alloc(test, &map, entry_for(i), 0, 199, i);
	KUNIT_EXPECT_EQ(test, ridr_alloc(&map, NULL, 0, 199, &id), -ENOSPC);
	KUNIT_EXPECT_EQ(test, ridr_remove(&map, 137, NULL), 0);
	/* One free slot is found again. */
	expect_alloc(test, &map, entry_for(137), 0, 199, 137);
	ridr_destroy(&map);
	KUNIT_EXPECT_TRUE(test, ridr_is_empty(&map));
}

static void ridr_test_cyclic(struct kunit *test)
{
	struct ridr map;
	unsigned long id, i;

	ridr_init(&map);
	for (i = 0; i < 8; i++)
		expect_cyclic(test, &map, 0, 7, i);
	KUNIT_EXPECT_EQ(test, ridr_alloc_cyclic(&map, NULL, 0, 7, &id),
			-ENOSPC);
	/* Free 2 and 6: the cursor (at 8, past the range) restarts at min. */
	KUNIT_EXPECT_EQ(test, ridr_remove(&map, 6, NULL), 0);
	KUNIT_EXPECT_EQ(test, ridr_remove(&map, 2, NULL), 0);
	expect_cyclic(test, &map, 0, 7, 2);
	expect_cyclic(test, &map, 0, 7, 6);
	/* Recently freed ids are not reused before the range wraps. */
	KUNIT_EXPECT_EQ(test, ridr_remove(&map, 3, NULL), 0);
	KUNIT_EXPECT_EQ(test, ridr_remove(&map, 7, NULL), 0);
	expect_cyclic(test, &map, 0, 7, 7);
	expect_cyclic(test, &map, 0, 7, 3);
	/* ipc's next_id: set the cursor explicitly. */
	ridr_lock(&map);
	__ridr_set_cursor(&map, 100);
	ridr_unlock(&map);
	expect_cyclic(test, &map, 0, 1000, 100);
	KUNIT_EXPECT_EQ(test, ridr_get_cursor(&map), 101UL);
	ridr_destroy(&map);
}

/* A caller that inserts under its own spinlock: preload outside it. */
static void ridr_test_preload_under_spinlock(struct kunit *test)
{
	static DEFINE_SPINLOCK(caller_lock);
	struct ridr_preload pl = RIDR_PRELOAD_INIT;
	struct ridr map;
	unsigned long id = 0;
	int ret;

	ridr_init(&map);
	/* The writers' loads check caller_lock under lockdep. */
	ridr_set_external_lock(&map, &caller_lock);
#ifdef CONFIG_DEBUG_LOCK_ALLOC
	/* The map names caller_lock: held inside, not outside. */
	spin_lock(&caller_lock);
	KUNIT_EXPECT_TRUE(test, lock_is_held(map.external_lock));
	spin_unlock(&caller_lock);
	KUNIT_EXPECT_FALSE(test, lock_is_held(map.external_lock));
#endif
	KUNIT_ASSERT_EQ(test, ridr_preload(&pl, &map, 1UL << 30, GFP_KERNEL),
			0);
	spin_lock(&caller_lock);
	ret = __ridr_alloc(&map, entry_for(1UL << 29), 1UL << 29, 1UL << 30,
			   &id, &pl);
	spin_unlock(&caller_lock);
	ridr_preload_end(&pl);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, id, 1UL << 29);
	spin_lock(&caller_lock);
	KUNIT_EXPECT_EQ(test, __ridr_remove(&map, 1UL << 29, NULL), 0);
	spin_unlock(&caller_lock);
	KUNIT_EXPECT_TRUE(test, ridr_is_empty(&map));
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

static void ridr_test_rcu_readers_and_a_writer(struct kunit *test)
{
	unsigned long deadline, id, rounds = 0;
	unsigned int cpu, readers = 0;
	struct stress *s;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
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
	KUNIT_EXPECT_GT(test, readers, 0U);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->bad), 0);
	KUNIT_EXPECT_TRUE(test, ridr_is_empty(&s->map));
	kunit_info(test, "%u readers, %lu lookups, %lu writer rounds of %d ids\n",
		   readers, (unsigned long)atomic_long_read(&s->lookups),
		   rounds, STRESS_IDS);
	ridr_destroy(&s->map);
	/*
	 * Nodes retired by the map are freed by call_rcu(): wait for them
	 * before the module's text can go away.
	 */
	rcu_barrier();
}

static struct kunit_case ridr_test_cases[] = {
	KUNIT_CASE(ridr_test_alloc_find_remove),
	KUNIT_CASE(ridr_test_sparse_ids_and_iteration),
	KUNIT_CASE(ridr_test_full_range),
	KUNIT_CASE(ridr_test_cyclic),
	KUNIT_CASE(ridr_test_preload_under_spinlock),
	KUNIT_CASE(ridr_test_rcu_readers_and_a_writer),
	{}
};

static struct kunit_suite ridr_test_suite = {
	.name = "ridr",
	.test_cases = ridr_test_cases,
};

kunit_test_suite(ridr_test_suite);

MODULE_DESCRIPTION("KUnit tests of the ridr id map");
MODULE_LICENSE("GPL");
