// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cxx_std_consumer.cc - the public headers as C++11, 14, 17, 20 and 23
 * (issue 12): ridr/ridr.h and lockref/lockref.h, and the compat and
 * liburcu headers they include, compile with -Wall -Wextra -pedantic
 * -Werror in every standard (tests/pkg:cxx_std_consumer_test_<std>, one
 * per standard, stamped by rk_cxx_std_tests() in tests/defs.bzl), and the
 * static initializers, the inline readers and the out-of-line API work
 * from C++ against the C libraries.
 */
#include "lockref/lockref.h"
#include "ridr/ridr.h"

#include <cstdio>
#include <cstdlib>

namespace {

int failures;

void check(bool ok, const char *what, int line)
{
	if (!ok) {
		std::fprintf(stderr, "cxx_std_consumer.cc:%d (C++ %ld): "
			     "check failed: %s\n", line, (long)__cplusplus,
			     what);
		failures++;
	}
}
#define CHECK(c) check((c), #c, __LINE__)

/* Static initializers: constant-initialized at namespace scope. */
struct ridr static_map = RIDR_INIT;
DEFINE_RIDR(defined_map);
struct ridr_ida static_ida = RIDR_IDA_INIT;
struct lockref static_ref = LOCKREF_INIT(3);

int values[8];

void test_ridr(struct ridr *map)
{
	unsigned long id = 0, seen = 0, sum = 0;
	void *entry = nullptr;
	void *old = nullptr;
	struct ridr_preload pl = RIDR_PRELOAD_INIT;

	CHECK(ridr_is_empty(map));
	for (int i = 0; i < 4; i++) {
		CHECK(ridr_alloc(map, &values[i], 1, 100, &id) == 0);
		CHECK(id == (unsigned long)i + 1);
	}
	/* Preloaded allocation under the writer lock. */
	CHECK(ridr_preload(&pl, map, 100, RK_GFP_KERNEL) == 0);
	ridr_lock(map);
	CHECK(__ridr_alloc(map, &values[4], 1, 100, &id, &pl) == 0);
	ridr_unlock(map);
	ridr_preload_end(&pl);
	CHECK(id == 5);
	CHECK(ridr_alloc(map, &values[5], 1, 3, &id) == -ENOSPC);
	CHECK(ridr_count(map) == 5);

	ridr_read_lock(map);
	CHECK(ridr_find(map, 3) == &values[2]);
	CHECK(ridr_find(map, 6) == nullptr);
	CHECK(ridr_find(map, 1000000) == nullptr);
	ridr_for_each(map, entry, id) {
		CHECK(entry == &values[id - 1]);
		seen++;
		sum += id;
	}
	ridr_read_unlock(map);
	CHECK(seen == 5 && sum == 15);

	CHECK(ridr_remove(map, 3, &old) == 0 && old == &values[2]);
	CHECK(ridr_remove(map, 3, &old) == -ENOENT);
	ridr_read_lock(map);
	CHECK(ridr_find(map, 3) == nullptr);
	CHECK(ridr_find(map, 4) == &values[3]);
	ridr_read_unlock(map);
	static const unsigned long rest[] = { 1, 2, 4, 5 };
	for (unsigned long i : rest)
		CHECK(ridr_remove(map, i, nullptr) == 0);
	CHECK(ridr_is_empty(map) && ridr_count(map) == 0);
}

void test_ida(struct ridr_ida *ida)
{
	unsigned long id = 0;

	for (unsigned long i = 0; i < 5000; i++) {
		CHECK(ridr_ida_alloc(ida, 0, RIDR_MAX_ID, &id) == 0);
		CHECK(id == i);
	}
	CHECK(ridr_ida_free(ida, 4096) == 0);
	CHECK(ridr_ida_free(ida, 4096) == -ENOENT);
	ridr_read_lock(&ida->map);
	CHECK(ridr_ida_test(ida, 4095));
	CHECK(!ridr_ida_test(ida, 4096));
	CHECK(!ridr_ida_test(ida, 5000));
	ridr_read_unlock(&ida->map);
	CHECK(ridr_ida_alloc(ida, 0, RIDR_MAX_ID, &id) == 0 && id == 4096);
	CHECK(ridr_ida_count(ida) == 5000);
	for (unsigned long i = 0; i < 5000; i++)
		CHECK(ridr_ida_free(ida, i) == 0);
	CHECK(ridr_ida_count(ida) == 0);
}

void test_lockref(struct lockref *ref, int count)
{
	CHECK(ref->count == count);
	lockref_get(ref);
	CHECK(ref->count == count + 1);
	CHECK(lockref_get_not_zero(ref) == 1);
	CHECK(lockref_get_not_dead(ref) == 1);
	CHECK(lockref_put_not_zero(ref) == 1);
	CHECK(lockref_put_return(ref) == count + 1);
	CHECK(lockref_put_or_lock(ref) == 1);
	CHECK(ref->count == count);
	/* Down to one reference: put_or_lock leaves the lock held. */
	while (ref->count > 1)
		CHECK(lockref_put_or_lock(ref) == 1);
	CHECK(lockref_put_not_zero(ref) == 0);
	CHECK(lockref_put_or_lock(ref) == 0);
	lockref_mark_dead(ref);
	lockref_unlock(ref);
	CHECK(__lockref_is_dead(ref));
	CHECK(lockref_get_not_dead(ref) == 0);
	CHECK(lockref_get_not_zero(ref) == 0);
	CHECK(lockref_put_return(ref) == -1);
}

} // namespace

int main()
{
	struct ridr map;
	struct ridr_ida ida;
	struct lockref ref;

	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	test_ridr(&static_map);
	test_ridr(&defined_map);
	ridr_init(&map);
	test_ridr(&map);
	test_ida(&static_ida);
	ridr_ida_init(&ida);
	test_ida(&ida);

	test_lockref(&static_ref, 3);
	lockref_init(&ref, 1);
	test_lockref(&ref, 1);

	ridr_destroy(&static_map);
	ridr_destroy(&defined_map);
	ridr_destroy(&map);
	ridr_ida_destroy(&static_ida);
	ridr_ida_destroy(&ida);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	if (failures) {
		std::fprintf(stderr, "cxx_std_consumer.cc: %d failures\n",
			     failures);
		return 1;
	}
	std::printf("cxx_std_consumer.cc: C++ %ld ok\n", (long)__cplusplus);
	return 0;
}
