// SPDX-License-Identifier: GPL-2.0-only
/// POSIX timers: the per-process ridr replaces the global hash table.
///
/// <linux/sched/signal.h> includes <linux/ridr.h> for the new field
/// signal_struct::posix_timer_ids (which backport.py puts in place of
/// next_posix_timer_id: spatch does not parse struct signal_struct whole);
/// k_itimer::t_hash goes away, so any use left fails to compile.
//
// Files: include/linux/sched/signal.h include/linux/posix-timers.h

@@
@@
 #include <linux/posix-timers.h>
+#include <linux/ridr.h>

@@
@@
struct k_itimer {
	...
-	struct hlist_node t_hash;
	...
};
