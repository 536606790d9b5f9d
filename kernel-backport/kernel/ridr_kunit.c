// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * KUnit tests of the ridr id map (lib/ridr.c), in kernel context:
 * kzalloc, call_rcu, spinlock_t, and lockdep and PROVE_RCU when enabled.
 * The API contract case by case, a randomized differential test against a
 * bitmap model, then RCU readers on every other CPU against a writer that
 * allocates, replaces and removes ids.
 *
 * Built in, the suite runs at boot; as a module, on load (or through
 * tools/testing/kunit/kunit.py run 'ridr').
 */
#include <kunit/test.h>
#include <linux/bitmap.h>
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
 * Randomized differential test against a model, fixed seed: in windows
 * of MODEL_SPAN ids placed where the tree's shape changes (id 0, a leaf
 * and a level boundary, INT_MAX, the 32-bit boundary, ULONG_MAX, and
 * random 31- and 64-bit places), random allocations in random
 * sub-ranges (entries and reservations, lowest-first or cyclic from
 * the map's cursor, with the wrap report), inserts at chosen ids,
 * removals, replacements and lookups, each checked against a bitmap;
 * every MODEL_WALK operations a walk (ridr_for_each) and ridr_count();
 * at the end of a window everything is removed, and the emptied map must
 * be within its idle bound.  The userspace suites run the same kind of
 * test at far larger scale (tests/ridr_random_test.c); this one runs the
 * kernel build of the core under the boot's lockdep, KASAN or KCSAN.
 */
#define MODEL_SPAN 512
#define MODEL_OPS 2500
#define MODEL_WALK 250

struct ridr_model {
	unsigned long base;
	DECLARE_BITMAP(used, MODEL_SPAN);	/* allocated ids */
	DECLARE_BITMAP(reserved, MODEL_SPAN);	/* ... without an entry */
	u8 version[MODEL_SPAN];			/* which entry_v() it holds */
	unsigned long cursor;	/* where the next cyclic search starts */
	bool wrapped;		/* the last cyclic id was ULONG_MAX */
	unsigned long walk[MODEL_SPAN + 1];
};

static u64 model_rand(u64 *state)	/* xorshift64 */
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* The entry of @id in version @v: never NULL (bit 1), never aligned. */
static void *entry_v(unsigned long id, u8 v)
{
	return (void *)(((id << 2) | 2) ^ ((unsigned long)v << 3));
}

/* What the model says ridr_find(@id) returns. */
static void *model_entry(const struct ridr_model *m, unsigned long id)
{
	unsigned long i = id - m->base;

	if (!test_bit(i, m->used) || test_bit(i, m->reserved))
		return NULL;
	return entry_v(id, m->version[i]);
}

/*
 * The model's side of an allocation of @want (a window index): @e, or a
 * reservation if @e is NULL.
 */
static void model_take(struct ridr_model *m, unsigned long want, void *e)
{
	__set_bit(want, m->used);
	if (e)
		__clear_bit(want, m->reserved);
	else
		__set_bit(want, m->reserved);
	m->version[want] = 0;
}

/*
 * A cyclic allocation in [@lo, @hi] (window indexes), checked: the first
 * free id from the cursor (or from @lo if the cursor is outside the
 * range) to @hi, then from @lo; a wrap when that id is below the cursor
 * or the previous cyclic id was ULONG_MAX (ridr_alloc_cyclic_wrap() in
 * include/linux/ridr.h); the cursor then moves just past it.  Half the
 * calls are ridr_alloc_cyclic(), which reports no wrap.
 */
static bool model_cyclic(struct kunit *test, struct ridr *map,
			 struct ridr_model *m, u64 *rs, unsigned int op,
			 unsigned long lo, unsigned long hi)
{
	unsigned long start = m->cursor, want, got = ~0UL;
	bool wrap_call = model_rand(rs) & 1, found;
	void *e;
	int ret, exp;

	if (start < m->base + lo || start > m->base + hi)
		start = m->base + lo;
	want = find_next_zero_bit(m->used, hi + 1, start - m->base);
	found = want <= hi;
	if (!found && start > m->base + lo) {
		want = find_next_zero_bit(m->used, start - m->base, lo);
		found = want < start - m->base;
	}
	exp = !found ? -ENOSPC :
	      wrap_call && (m->base + want < m->cursor || m->wrapped) ? 1 : 0;
	e = (model_rand(rs) % 8) ? entry_v(m->base + want, 0) : NULL;
	ret = wrap_call ?
		ridr_alloc_cyclic_wrap(map, e, m->base + lo, m->base + hi, &got) :
		ridr_alloc_cyclic(map, e, m->base + lo, m->base + hi, &got);
	if (ret != exp || (ret >= 0 && got != m->base + want)) {
		KUNIT_FAIL(test, "op %u: cyclic%s [%lx, %lx] at %lx: %d %lx, model %d %lx",
			   op, wrap_call ? "_wrap" : "", m->base + lo,
			   m->base + hi, m->cursor, ret, got, exp,
			   m->base + want);
		return false;
	}
	if (ret >= 0) {
		model_take(m, want, e);
		m->cursor = got + 1;
		m->wrapped = got == ULONG_MAX;
	}
	return true;
}

/* One random operation, checked; false (after KUNIT_FAIL) on a mismatch. */
static bool model_step(struct kunit *test, struct ridr *map,
		       struct ridr_model *m, u64 *rs, unsigned int op)
{
	unsigned long a = model_rand(rs) % MODEL_SPAN;
	unsigned long b = model_rand(rs) % MODEL_SPAN;
	unsigned long id = m->base + a, got = ~0UL, lo, hi, want;
	void *old = (void *)1, *e;
	int ret, exp;

	switch (model_rand(rs) % 8) {
	case 1:	/* allocate cyclically in [lo, hi] */
		return model_cyclic(test, map, m, rs, op, min(a, b), max(a, b));
	case 0:	/* allocate in [lo, hi]: the lowest free id, or -ENOSPC */
		lo = min(a, b);
		hi = max(a, b);
		want = find_next_zero_bit(m->used, hi + 1, lo);
		e = (model_rand(rs) % 8) ? entry_v(m->base + want, 0) : NULL;
		ret = ridr_alloc(map, e, m->base + lo, m->base + hi, &got);
		exp = want <= hi ? 0 : -ENOSPC;
		if (ret != exp || (!ret && got != m->base + want)) {
			KUNIT_FAIL(test, "op %u: alloc [%lx, %lx]: %d id %lx, model %d id %lx",
				   op, m->base + lo, m->base + hi, ret, got,
				   exp, m->base + want);
			return false;
		}
		if (!ret)
			model_take(m, want, e);
		return true;
	case 2:	/* insert at @id: -EBUSY if taken */
		ret = ridr_insert(map, id, entry_v(id, 1));
		exp = test_bit(a, m->used) ? -EBUSY : 0;
		if (ret != exp) {
			KUNIT_FAIL(test, "op %u: insert %lx: %d, model %d",
				   op, id, ret, exp);
			return false;
		}
		if (!ret) {
			__set_bit(a, m->used);
			__clear_bit(a, m->reserved);
			m->version[a] = 1;
		}
		return true;
	case 3:
	case 4:	/* remove: the old entry (NULL for a reservation) */
		ret = ridr_remove(map, id, &old);
		exp = test_bit(a, m->used) ? 0 : -ENOENT;
		if (ret != exp || (!ret && old != model_entry(m, id))) {
			KUNIT_FAIL(test, "op %u: remove %lx: %d, model %d",
				   op, id, ret, exp);
			return false;
		}
		__clear_bit(a, m->used);
		__clear_bit(a, m->reserved);
		return true;
	case 5:	/* replace: a reservation becomes an entry */
		e = entry_v(id, m->version[a] + 1);
		ret = ridr_replace(map, e, id, &old);
		exp = test_bit(a, m->used) ? 0 : -ENOENT;
		if (ret != exp || (!ret && old != model_entry(m, id))) {
			KUNIT_FAIL(test, "op %u: replace %lx: %d, model %d",
				   op, id, ret, exp);
			return false;
		}
		if (!ret) {
			__clear_bit(a, m->reserved);
			m->version[a]++;
		}
		return true;
	default: /* lookup */
		e = find_id(map, id);
		if (e != model_entry(m, id)) {
			KUNIT_FAIL(test, "op %u: find %lx: %p, model %p",
				   op, id, e, model_entry(m, id));
			return false;
		}
		return true;
	}
}

/* A walk sees exactly the model's entries, in order; the count agrees. */
static bool model_walk(struct kunit *test, struct ridr *map,
		       struct ridr_model *m)
{
	unsigned long id, i, n = 0, k = 0;
	void *entry;

	/* Walk under RCU, check outside: a failed expectation may sleep. */
	rcu_read_lock();
	ridr_for_each(map, entry, id) {
		if (n <= MODEL_SPAN)
			m->walk[n] = entry == model_entry(m, id) ? id : ~0UL;
		n++;
	}
	rcu_read_unlock();
	for (i = 0; i < MODEL_SPAN; i++) {
		if (!test_bit(i, m->used) || test_bit(i, m->reserved))
			continue;
		if (k >= n || m->walk[k] != m->base + i) {
			KUNIT_FAIL(test, "walk: entry %lu is not id %lx",
				   k, m->base + i);
			return false;
		}
		k++;
	}
	if (k != n || ridr_count(map) != bitmap_weight(m->used, MODEL_SPAN)) {
		KUNIT_FAIL(test, "walk: %lu entries, model %lu; count %lu, model %u",
			   n, k, ridr_count(map),
			   bitmap_weight(m->used, MODEL_SPAN));
		return false;
	}
	return true;
}

static void ridr_test_random_against_a_model(struct kunit *test)
{
	const unsigned long last = ULONG_MAX - (MODEL_SPAN - 1);
	unsigned long bases[] = {
		0, 4096 - MODEL_SPAN / 2, INT_MAX - MODEL_SPAN / 2,
		min_t(unsigned long, UINT_MAX - MODEL_SPAN / 2, last), last,
		0, 0,	/* random 31-bit and 64-bit places, below */
	};
	struct ridr_model *m;
	struct ridr map;
	u64 rs = 0x9e3779b97f4a7c15ULL;
	unsigned int w, op;
	unsigned long i;

	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	bases[5] = (unsigned long)model_rand(&rs) % ((1UL << 31) - MODEL_SPAN);
	bases[6] = min_t(unsigned long, (unsigned long)model_rand(&rs), last);
	ridr_init(&map);
	for (w = 0; w < ARRAY_SIZE(bases); w++) {
		m->base = bases[w];
		for (op = 0; op < MODEL_OPS; op++) {
			if (!model_step(test, &map, m, &rs, op))
				goto out;
			if (op % MODEL_WALK == MODEL_WALK - 1 &&
			    !model_walk(test, &map, m))
				goto out;
		}
		for_each_set_bit(i, m->used, MODEL_SPAN)
			KUNIT_EXPECT_EQ(test,
					ridr_remove(&map, m->base + i, NULL), 0);
		bitmap_zero(m->used, MODEL_SPAN);
		bitmap_zero(m->reserved, MODEL_SPAN);
		KUNIT_EXPECT_TRUE(test, ridr_is_empty(&map));
		KUNIT_EXPECT_LE(test, ridr_memory(&map), RIDR_IDLE_BOUND);
	}
out:
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
	KUNIT_CASE(ridr_test_random_against_a_model),
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
