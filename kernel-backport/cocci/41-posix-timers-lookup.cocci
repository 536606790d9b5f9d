// SPDX-License-Identifier: GPL-2.0-only
/// POSIX timer ids: insert and look up in the per-process ridr
/// (signal_struct::posix_timer_ids) instead of the global hash table.
///
/// posix_timer_add() allocates cyclically in [0, INT_MAX] (the ridr's
/// cursor replaces signal_struct::next_posix_timer_id); __lock_timer()
/// looks the id up with ridr_find() under the RCU read lock it already
/// holds.  The table, hash_lock, hash(), __posix_timers_find() and
/// posix_timer_by_id() go away.
//
// Files: kernel/time/posix-timers.c

@@
@@
- #include <linux/hash.h>
+ #include <linux/ridr.h>

@@
@@
- #include <linux/hashtable.h>

@@
declarer name DEFINE_HASHTABLE;
identifier h = posix_timers_hashtable;
@@
- DEFINE_HASHTABLE(h, 9);

@@
declarer name DEFINE_SPINLOCK;
identifier l = hash_lock;
@@
- DEFINE_SPINLOCK(l);

@@
identifier sig, nr;
@@
- static int hash(struct signal_struct *sig, unsigned int nr)
- {
- ...
- }

@@
identifier head, sig, id;
type T;
@@
- static struct k_itimer *__posix_timers_find(struct hlist_head *head,
-					    struct signal_struct *sig,
-					    T id)
- {
- ...
- }

@@
identifier id;
type T;
@@
- static struct k_itimer *posix_timer_by_id(T id)
- {
- ...
- }

@@
identifier timer, sig, head, cnt;
statement S;
expression E, E1, E2, E3;
@@
+/*
+ * Timer ids are per process: signal_struct::posix_timer_ids, a ridr, maps
+ * each id of the process to its k_itimer.
+ *
+ *  - Lookup, __lock_timer(): ridr_find() under rcu_read_lock(), no lock.
+ *    The entry is trusted only once its it_lock is held and its it_signal
+ *    is current->signal.
+ *  - Insertion, posix_timer_add(): ridr_alloc_cyclic() takes the map's own
+ *    spinlock (per process; never nested in another spinlock, never taken
+ *    in interrupt context) and allocates the nodes it needs outside it,
+ *    GFP_KERNEL.
+ *  - Removal, posix_timer_unhash_and_free() / release_posix_timer():
+ *    ridr_remove() under the same spinlock; the timer is freed by call_rcu()
+ *    afterwards, and the nodes the removal empties are freed by ridr after
+ *    a grace period too, so a lookup that found either may finish.
+ *
+ * Memory: each live id pins at most one root-to-leaf path (ids below 2^31:
+ * at most 6 nodes); sparse ids live in small buckets, and an idle process
+ * keeps at most the object it emptied last (freed with the signal_struct).
+ * The number of timers is bounded by RLIMIT_SIGPENDING through the
+ * sigqueue each timer preallocates.
+ */
 static int posix_timer_add(struct k_itimer *timer)
 {
-	struct signal_struct *sig = E;
-	struct hlist_head *head;
-	unsigned int cnt;
 	...
-	for (E1; E2; E3) S
-	return -EAGAIN;
+	struct ridr *ids = &current->signal->posix_timer_ids;
+	unsigned long id;
+
+	/*
+	 * Cyclic: the ridr's cursor moves past each id handed out, so a
+	 * deleted id is not reused before the id space wraps at INT_MAX,
+	 * as with the per-process counter this replaces.  The timer is
+	 * published with it_signal == NULL: __lock_timer() rejects it
+	 * until do_timer_create() has set it_signal.  -ENOSPC (all ids in
+	 * use) and -ENOMEM both become POSIX's EAGAIN, as when
+	 * alloc_posix_timer() fails.
+	 */
+	if (ridr_alloc_cyclic(ids, timer, 0, INT_MAX, &id))
+		return -EAGAIN;
+	return id;
 }

@@
expression id;
@@
- posix_timer_by_id(id)
+ ridr_find(&current->signal->posix_timer_ids, id)
