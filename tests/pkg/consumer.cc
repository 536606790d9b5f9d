// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * consumer.cc - the public headers from C++: they must compile as C++
 * (extern "C", no C-only constructs in what C++ sees) and link against
 * the C library.  Built out of tree with `c++ consumer.cc $(pkg-config
 * --cflags --libs ridr)` by scripts/pkg_test.sh and in Bazel by
 * tests/pkg:cxx_consumer_test (every sanitizer config).
 */
#include "compat/compat.h"
#include "lockref/lockref.h"
#include "ridr/ridr.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

struct Obj {
	struct lockref ref;
	unsigned long id;
	struct rk_rcu_head rcu;
};

std::atomic<int> freed{0};

void check(bool ok, const char *what, int line)
{
	if (!ok) {
		std::fprintf(stderr, "consumer.cc:%d: check failed: %s\n",
			     line, what);
		std::exit(1);
	}
}
#define CHECK(c) check((c), #c, __LINE__)

extern "C" void obj_free_rcu(struct rk_rcu_head *head)
{
	delete rk_container_of(head, Obj, rcu);
	freed.fetch_add(1, std::memory_order_relaxed);
}

/* The last reference marks the object dead and frees it after a grace
 * period (a concurrent lookup may still hold the pointer). */
void obj_put(Obj *o)
{
	if (lockref_put_or_lock(&o->ref))
		return;
	lockref_mark_dead(&o->ref);
	CHECK(__lockref_is_dead(&o->ref));
	lockref_unlock(&o->ref);
	rk_call_rcu(RK_RCU_DEFAULT_FLAVOR, &o->rcu, obj_free_rcu);
}

} // namespace

int main()
{
	struct ridr map;
	std::vector<unsigned long> ids;
	std::atomic<bool> stop{false};

	rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
	ridr_init(&map);
	for (int i = 0; i < 200; i++) {
		Obj *o = new Obj();
		unsigned long id;

		lockref_init(&o->ref, 1);
		CHECK(ridr_alloc_cyclic(&map, o, 10, 1000, &id) == 0);
		o->id = id;	/* readers check it: set before they run */
		ids.push_back(id);
	}
	CHECK(ids.front() == 10 && ids.back() == 209);

	std::thread reader([&] {
		rk_rcu_register_thread(RK_RCU_DEFAULT_FLAVOR);
		while (!stop.load(std::memory_order_acquire)) {
			for (unsigned long id : ids) {
				rk_rcu_read_lock();
				Obj *o = static_cast<Obj *>(ridr_find(&map, id));
				if (o && !lockref_get_not_dead(&o->ref))
					o = nullptr;
				rk_rcu_read_unlock();
				if (o) {
					CHECK(o->id == id);
					obj_put(o);
				}
			}
		}
		rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	});

	for (unsigned long id : ids) {
		void *old = nullptr;

		CHECK(ridr_remove(&map, id, &old) == 0);
		obj_put(static_cast<Obj *>(old));	/* the map's reference */
	}
	stop.store(true, std::memory_order_release);
	reader.join();
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	CHECK(freed.load() == 200);
	CHECK(ridr_is_empty(&map) && ridr_count(&map) == 0);
	ridr_destroy(&map);
	rk_rcu_barrier(RK_RCU_DEFAULT_FLAVOR);
	rk_rcu_unregister_thread(RK_RCU_DEFAULT_FLAVOR);
	std::printf("consumer.cc: ok\n");
	return 0;
}
