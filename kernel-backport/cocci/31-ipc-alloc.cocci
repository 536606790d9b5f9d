// SPDX-License-Identifier: GPL-2.0-only
/// ipc/util.c: allocate ipc indexes in ids->ipcs_ridr.
///
/// ipc_addid() allocates under the new object's spinlock (and rcu_read_lock),
/// so it cannot sleep there: idr_preload() becomes a ridr_preload() into a
/// struct ridr_preload on its stack, taken before the spinlock, which
/// ipc_idr_alloc() now receives and passes down; what the preload lacks is
/// allocated with GFP_NOWAIT, as with the IDR.  The allocation helpers
/// (ipc/util.h) keep the IDR's conventions: [start, end) with end
/// exclusive, the index or a negative errno.  The cyclic path still
/// reserves the index first (NULL entry: ridr_find() returns NULL for it,
/// like idr_find()) and publishes the object with __ridr_replace(), whose
/// rcu_assign_pointer() orders the initialisation of @new before it.
//
// Files: ipc/util.c

@preload@
identifier ids;
expression gfp;
@@
int ipc_addid(struct ipc_ids *ids, ...)
{
	...
-	idr_preload(gfp);
+	/*
+	 * Nodes for the allocation, taken before new->lock; a failure is
+	 * not an error here: what is missing is allocated with GFP_NOWAIT.
+	 */
+	ridr_preload(&pl, &ids->ipcs_ridr, ipc_mni - 1, gfp);
	...
	ipc_idr_alloc(...
+	, &pl
	)
	...
-	idr_preload_end();
+	ridr_preload_end(&pl);
	...
}

@decl depends on preload@
@@
int ipc_addid(...)
{
+	struct ridr_preload pl = RIDR_PRELOAD_INIT;
	...
}

@signature depends on decl@
identifier ids, new;
@@
 static inline int ipc_idr_alloc(struct ipc_ids *ids,
 	struct kern_ipc_perm *new
+	, struct ridr_preload *pl
 	)
 {
 	...
 }

@alloc depends on signature@
expression E, P, S, N, gfp;
@@
(
- idr_alloc_cyclic(&E->ipcs_idr, P, S, N, gfp)
+ ipc_alloc_idx_cyclic(E, P, S, N, pl)
|
- idr_alloc(&E->ipcs_idr, P, S, N, gfp)
+ ipc_alloc_idx(E, P, S, N, pl)
|
- idr_replace(&E->ipcs_idr, P, S)
+ __ridr_replace(&E->ipcs_ridr, P, S, NULL)
)
