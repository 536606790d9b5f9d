// SPDX-License-Identifier: GPL-2.0-only
/// POSIX timer removal: ridr_remove() the id from the owner's
/// signal_struct::posix_timer_ids instead of hlist_del_rcu() under
/// hash_lock.
///
/// The function that unhashes (release_posix_timer() in 6.1,
/// posix_timer_unhash_and_free() in 6.12) gets the owner's signal_struct
/// as a parameter: timer->it_signal cannot tell (never set on
/// timer_create()'s error path, cleared by timer_delete(); 6.1's
/// itimer_delete() leaves it).  The syscalls pass current->signal;
/// itimer_delete() gets it from exit_itimers(tsk), i.e. tsk->signal.
//
// Files: kernel/time/posix-timers.c

@rm@
identifier fn, tmr;
@@
 static void fn(struct k_itimer *tmr, ...)
 {
 <+... hlist_del_rcu(&tmr->t_hash); ...+>
 }

@@
identifier rm.fn, rm.tmr, flags;
@@
+/*
+ * @sig: the owner's signal_struct, passed in because @tmr->it_signal
+ * cannot tell: it is not set yet on timer_create()'s error path and
+ * timer_delete() clears it.  The id leaves the owner's map under the
+ * map's spinlock.  A __lock_timer() that found @tmr before may still lock
+ * it; it then sees it_signal != its signal_struct and lets go.  @tmr is
+ * handed to call_rcu() only after the removal, so it outlives every
+ * lookup that could have found it.
+ */
 static void fn(
+	       struct signal_struct *sig,
 	       struct k_itimer *tmr, ...)
 {
 <...
(
-	unsigned long flags;
-	spin_lock_irqsave(&hash_lock, flags);
-	hlist_del_rcu(&tmr->t_hash);
-	spin_unlock_irqrestore(&hash_lock, flags);
+	void *old = NULL;
+	int err = ridr_remove(&sig->posix_timer_ids, tmr->it_id, &old);
+
+	WARN_ON_ONCE(err || old != tmr);
|
-	spin_lock(&hash_lock);
-	hlist_del_rcu(&tmr->t_hash);
-	spin_unlock(&hash_lock);
+	void *old = NULL;
+	int err = ridr_remove(&sig->posix_timer_ids, tmr->it_id, &old);
+
+	WARN_ON_ONCE(err || old != tmr);
)
 ...>
 }

@@
identifier rm.fn;
expression list es;
@@
 fn(
+	current->signal,
 	es)

@depends on rm@
identifier t;
@@
 static void itimer_delete(
+	    struct signal_struct *sig,
 	    struct k_itimer *t)
 {
 ...
 }

@@
identifier rm.fn;
expression list es;
@@
 static void itimer_delete(...)
 {
 <...
 fn(
-	current->signal
+	sig
 	, es)
 ...>
 }

@@
identifier tsk;
expression E;
@@
 void exit_itimers(struct task_struct *tsk)
 {
 <...
 itimer_delete(
+	tsk->signal,
 	E)
 ...>
 }
