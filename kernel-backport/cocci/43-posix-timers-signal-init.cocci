// SPDX-License-Identifier: GPL-2.0-only
/// POSIX timers: initialise signal_struct::posix_timer_ids where the
/// signal_struct is created, check it is empty where it is freed.
///
/// copy_signal(): the signal_struct is zeroed, but ridr_init() gives the
/// map's spinlock its lockdep class; RIDR_ACCOUNT makes the map allocate
/// with __GFP_ACCOUNT, so its objects are charged to the memory cgroup of
/// the task that creates the timer, as the k_itimer is.  (init_signals gets RIDR_INIT from
/// backport.py: spatch does not match its initializer.)
/// free_signal_struct(): exit_itimers() removed every id of the process
/// (do_exit() of the last thread): an id left is a bug, warn.  The map may
/// still hold the object it emptied last (kept for the next timer_create()),
/// so ridr_destroy() always frees what is left (no lock, call_rcu() only,
/// so it is fine from the RCU callback that may drop the last reference).
//
// Files: kernel/fork.c

@@
identifier sig;
@@
(
 INIT_LIST_HEAD(&sig->posix_timers);
+	/* Zeroed already; ridr_init() gives the spinlock its lockdep class. */
+	ridr_init(&sig->posix_timer_ids);
+	/* Charged to the memory cgroup, as the k_itimer is (SLAB_ACCOUNT). */
+	ridr_set_flags(&sig->posix_timer_ids, RIDR_ACCOUNT);
|
 INIT_HLIST_HEAD(&sig->posix_timers);
+	/* Zeroed already; ridr_init() gives the spinlock its lockdep class. */
+	ridr_init(&sig->posix_timer_ids);
+	/* Charged to the memory cgroup, as the k_itimer is (SLAB_ACCOUNT). */
+	ridr_set_flags(&sig->posix_timer_ids, RIDR_ACCOUNT);
)

@@
identifier sig;
@@
 static inline void free_signal_struct(struct signal_struct *sig)
 {
+#ifdef CONFIG_POSIX_TIMERS
+	WARN_ON_ONCE(!ridr_is_empty(&sig->posix_timer_ids));
+	ridr_destroy(&sig->posix_timer_ids);
+#endif
 ...
 }
